/**
 * Schemas of the probe kinds (lib/suite/probes.ts): each kind's spec (plan.json, a planned step's
 * `probe.spec`) and result (a step record's `probe`), joined into unions discriminated by `kind`.
 * Proved equal to the types both ways at compile time, as the other run-file schemas are
 * (./schemas.ts SameShape). Adding a kind = its two schemas here and one member in each union.
 * Figures are bounded as every run file's are (./figures.ts).
 */
import { z } from 'zod';
import {
  DISRUPTION_ACTIONS,
  SHUTDOWN_MODES,
  type DisruptionProbe,
  type DisruptionResult,
} from '../suite/disruption';
import type { PlannedProbe, ProbeResult, ProbeSpec } from '../suite/probes';
import { BUILTIN_SCRIPTS } from '../suite/script-spec';
import { LOAD_END_STATES } from '../suite/disruption-load';
import {
  SESSION_FEATURES,
  SESSION_OUTCOMES,
  SESSION_SOURCES,
  type SessionSource,
  type SessionStateProbe,
  type SessionStateResult,
} from '../suite/session-state-kind';
import { ERROR_CLASSES } from '../suite/error-class';
import {
  count,
  ELAPSED_MS_MAX,
  exitCode,
  ms,
  offsetMs,
  positiveCount,
  sec,
  timestamp,
  tps,
  TPS_MAX,
} from './figures';
import type { Holds, SameShape } from './same-shape';

/** Writes missing against the warm-up rate (negative: more than it): no more than TPS_MAX for a year. */
const WRITES_MAX = TPS_MAX * (ELAPSED_MS_MAX / 1000);
const dipWrites = z
  .number()
  .min(-WRITES_MAX, { message: `expected at least -${WRITES_MAX} writes` })
  .max(WRITES_MAX, { message: `expected at most ${WRITES_MAX} writes` });

const disruption = z.object({
  action: z.enum(DISRUPTION_ACTIONS),
  shutdown: z.enum(SHUTDOWN_MODES).nullable(),
  switchoverTimeoutSec: sec.optional(),
});

const clientTimeouts = z.object({ connectTimeoutMs: ms, statementTimeoutMs: ms });

/** DisruptionProbe.load: the background load, its script resolved (lib/suite/disruption-load.ts). */
export const backgroundLoadSchema = z.object({
  scenario: z.string(),
  script: z.object({
    parts: z.array(
      z.union([
        z.object({ builtin: z.enum(BUILTIN_SCRIPTS), weight: count.optional() }),
        z.object({ file: z.object({ name: z.string(), sql: z.string() }), weight: count.optional() }),
      ]),
    ),
  }),
  scale: positiveCount,
  clients: positiveCount,
  jobs: positiveCount,
});

/** DisruptionResult.load: one target's pgbench through the group. */
const backgroundLoadResult = z.object({
  scenario: z.string(),
  script: z.string(),
  clients: positiveCount,
  jobs: positiveCount,
  endState: z.enum(LOAD_END_STATES),
  note: z.string().nullable(),
  exitCode: exitCode.nullable(),
  starts: count,
  // [ms from T0 at the second's end, tps, average latency ms, failed transactions]
  series: z.array(z.tuple([offsetMs, tps.nullable(), ms.nullable(), count.nullable()])),
  tps: z.object({
    before: tps.nullable(),
    during: tps.nullable(),
    after: tps.nullable(),
    min: tps.nullable(),
  }),
  gapMs: ms.nullable(),
  failedTransactions: count.nullable(),
  abortedClients: count.nullable(),
  errors: z.array(z.object({ class: z.enum(ERROR_CLASSES), count, sample: z.string() })),
});

/**
 * A plan written before the client timeouts were settings has `attemptTimeoutMs` instead: one limit
 * on the connect and on the whole attempt, read as both timeouts (what that probe ran with).
 */
export const disruptionProbeSchema = z
  .object({
    kind: z.literal('disruption'),
    disruption,
    intervalMs: ms,
    warmupSec: sec,
    recoverySec: sec,
    clientTimeouts: clientTimeouts.optional(),
    attemptTimeoutMs: ms.optional(),
    load: backgroundLoadSchema.optional(),
  })
  .refine((p) => p.clientTimeouts !== undefined || p.attemptTimeoutMs !== undefined, {
    message: 'expected clientTimeouts (or attemptTimeoutMs, in a plan written before it)',
    path: ['clientTimeouts'],
  })
  .transform(({ attemptTimeoutMs, clientTimeouts: t, ...p }) => ({
    ...p,
    clientTimeouts: t ?? {
      connectTimeoutMs: attemptTimeoutMs as number,
      statementTimeoutMs: attemptTimeoutMs as number,
    },
  }));

export const disruptionResultSchema = z.object({
  kind: z.literal('disruption'),
  disruption,
  mode: z.enum(['persistent', 'per-transaction']),
  clients: count,
  intervalMs: ms,
  // optional: runs written before the client timeouts were settings do not record them
  clientTimeouts: clientTimeouts.optional(),
  t0: timestamp.nullable(),
  events: z.array(
    z.object({
      atMs: offsetMs,
      name: z.string(),
      source: z.enum(['local', 'api', 'rds-events', 'writer-poll', 'pooler-agent']),
      detail: z.string().nullable(),
    }),
  ),
  // optional: runs written before the runner re-read RDS events have none
  timelineNote: z.string().optional(),
  warmup: z.object({
    attempts: count,
    p50Ms: ms.nullable(),
    p99Ms: ms.nullable(),
    successPerSec: tps.nullable(),
  }),
  floor: z.object({
    selectP50Ms: ms.nullable(),
    selectP99Ms: ms.nullable(),
    pgbenchSelectP50Ms: ms.nullable(),
    jitterP50Ms: ms.nullable(),
    jitterP99Ms: ms.nullable(),
    jitterMaxMs: ms.nullable(),
  }),
  figures: z.object({
    // From T0: an error that came before it is negative.
    timeToFirstErrorMs: offsetMs.nullable(),
    errorWindowMs: ms.nullable(),
    stallThresholdMs: ms.nullable(),
    stallWindowMs: ms.nullable(),
    maxLatencyMs: ms.nullable(),
    recoveryMs: offsetMs.nullable(),
    throughputDip: dipWrites.nullable(),
    recovered: z.boolean(),
    reconnects: count,
    readOnlyRefusals: count,
    // optional: runs written before `client-timeout` was its own class (their figures are unknown)
    clientTimeouts: count.optional(),
    openAtEnd: count.optional(),
    windowClosed: z.boolean().optional(),
  }),
  errors: z.array(
    z.object({
      class: z.enum(ERROR_CLASSES),
      sqlstate: z.string().nullable(),
      code: z.string().nullable(),
      count,
      sample: z.string(),
    }),
  ),
  writes: z.object({
    acknowledged: count,
    failed: count,
    unknown: count,
    unknownCommitted: count,
    unknownNotCommitted: count,
    acknowledgedMissing: count.nullable(),
    duplicates: count.nullable(),
    reconciled: z.boolean(),
  }),
  servers: z.array(z.string()),
  // [ms from T0 at its start, latency ms, outcome, server]
  attempts: z.array(z.tuple([offsetMs, ms.nullable(), z.string(), z.string().nullable()])),
  // optional: a scenario without background load (and every run written before it) has none
  load: backgroundLoadResult.optional(),
});

export const sessionStateProbeSchema = z.object({
  kind: z.literal('session-state'),
  features: z.array(z.enum(SESSION_FEATURES)),
  pinPeriodSec: sec,
  // optional: the catalog's session scenarios take the default (SESSION_CLIENT_TIMEOUTS)
  clientTimeouts: clientTimeouts.optional(),
});

const sessionOutcome = z.enum(SESSION_OUTCOMES);
const checkRole = z.enum(['own', 'other', 'victim', 'scope']);
const sessionSource = z.enum(Object.keys(SESSION_SOURCES) as [SessionSource, ...SessionSource[]]);

export const sessionStateResultSchema = z.object({
  kind: z.literal('session-state'),
  order: z.enum(['interleaved', 'sequential']),
  sharing: z.string(),
  // optional: runs written before the client timeouts were settings do not record them
  clientTimeouts: clientTimeouts.optional(),
  features: z.array(
    z.object({
      feature: z.enum(SESSION_FEATURES),
      shared: z.boolean().nullable(),
      expected: z.object({
        outcomes: z.array(sessionOutcome),
        sqlstates: z.array(z.string()),
        pins: z.boolean().nullable(),
        why: z.string(),
        sources: z.array(sessionSource),
      }),
      outcome: sessionOutcome,
      lost: z.boolean(),
      leaked: z.boolean(),
      error: z
        .object({
          client: z.string(),
          kind: z.string(),
          sqlstate: z.string().nullable(),
          message: z.string(),
        })
        .nullable(),
      steps: z.array(
        z.object({
          client: z.string(),
          kind: z.string(),
          role: checkRole.nullable(),
          sql: z.string(),
          backendPid: count.nullable(),
          value: z.string().nullable(),
          present: z.boolean().nullable(),
          sqlstate: z.string().nullable(),
          error: z.string().nullable(),
          ms,
        }),
      ),
      pinWatch: z
        .object({
          metric: z.string(),
          dimensions: z.record(z.string(), z.string()),
          periodSec: sec,
          start: timestamp,
          end: timestamp,
        })
        .nullable(),
    }),
  ),
});

/** Scenario.probe / PlannedProbe.spec, by kind. */
export const probeSpecSchema = z.discriminatedUnion('kind', [disruptionProbeSchema, sessionStateProbeSchema]);
/** StepRecord.probe, by kind. */
export const probeResultSchema = z.discriminatedUnion('kind', [
  disruptionResultSchema,
  sessionStateResultSchema,
]);
export const plannedProbeSchema = z.object({ group: z.string(), spec: probeSpecSchema });

export type _DisruptionProbeCheck = Holds<SameShape<DisruptionProbe, z.infer<typeof disruptionProbeSchema>>>;
export type _DisruptionResultCheck = Holds<
  SameShape<DisruptionResult, z.infer<typeof disruptionResultSchema>>
>;
export type _SessionStateProbeCheck = Holds<
  SameShape<SessionStateProbe, z.infer<typeof sessionStateProbeSchema>>
>;
export type _SessionStateResultCheck = Holds<
  SameShape<SessionStateResult, z.infer<typeof sessionStateResultSchema>>
>;
export type _ProbeSpecCheck = Holds<SameShape<ProbeSpec, z.infer<typeof probeSpecSchema>>>;
export type _ProbeResultCheck = Holds<SameShape<ProbeResult, z.infer<typeof probeResultSchema>>>;
export type _PlannedProbeCheck = Holds<SameShape<PlannedProbe, z.infer<typeof plannedProbeSchema>>>;
