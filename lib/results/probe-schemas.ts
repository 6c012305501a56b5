/**
 * Schemas of the probe kinds (lib/suite/probes.ts): each kind's spec (plan.json, a planned step's
 * `probe.spec`) and result (a step record's `probe`), joined into unions discriminated by `kind`.
 * Proved equal to the types both ways at compile time, as the other run-file schemas are
 * (./schemas.ts SameShape). Adding a kind = its two schemas here and one member in each union.
 */
import { z } from 'zod';
import {
  DISRUPTION_ACTIONS,
  SHUTDOWN_MODES,
  type DisruptionProbe,
  type DisruptionResult,
} from '../suite/disruption';
import type { PlannedProbe, ProbeResult, ProbeSpec } from '../suite/probes';
import {
  SESSION_FEATURES,
  SESSION_OUTCOMES,
  SESSION_SOURCES,
  type SessionSource,
  type SessionStateProbe,
  type SessionStateResult,
} from '../suite/session-state-kind';
import { ERROR_CLASSES } from '../suite/error-class';
import type { Holds, SameShape } from './same-shape';

const num = z.number();
const nullableNum = z.number().nullable();

const disruption = z.object({
  action: z.enum(DISRUPTION_ACTIONS),
  shutdown: z.enum(SHUTDOWN_MODES).nullable(),
});

export const disruptionProbeSchema = z.object({
  kind: z.literal('disruption'),
  disruption,
  intervalMs: num,
  warmupSec: num,
  recoverySec: num,
  attemptTimeoutMs: num,
});

export const disruptionResultSchema = z.object({
  kind: z.literal('disruption'),
  disruption,
  mode: z.enum(['persistent', 'per-transaction']),
  clients: num,
  intervalMs: num,
  t0: z.string().nullable(),
  events: z.array(
    z.object({
      atMs: num,
      name: z.string(),
      source: z.enum(['local', 'api', 'rds-events', 'writer-poll']),
      detail: z.string().nullable(),
    }),
  ),
  warmup: z.object({ attempts: num, p50Ms: nullableNum, p99Ms: nullableNum, successPerSec: nullableNum }),
  floor: z.object({
    selectP50Ms: nullableNum,
    selectP99Ms: nullableNum,
    pgbenchSelectP50Ms: nullableNum,
    jitterP50Ms: nullableNum,
    jitterP99Ms: nullableNum,
    jitterMaxMs: nullableNum,
  }),
  figures: z.object({
    timeToFirstErrorMs: nullableNum,
    errorWindowMs: nullableNum,
    stallThresholdMs: nullableNum,
    stallWindowMs: nullableNum,
    maxLatencyMs: nullableNum,
    recoveryMs: nullableNum,
    throughputDip: nullableNum,
    recovered: z.boolean(),
    reconnects: num,
    readOnlyRefusals: num,
  }),
  errors: z.array(
    z.object({
      class: z.enum(ERROR_CLASSES),
      sqlstate: z.string().nullable(),
      code: z.string().nullable(),
      count: num,
      sample: z.string(),
    }),
  ),
  writes: z.object({
    acknowledged: num,
    failed: num,
    unknown: num,
    unknownCommitted: num,
    unknownNotCommitted: num,
    acknowledgedMissing: nullableNum,
    duplicates: nullableNum,
    reconciled: z.boolean(),
  }),
  servers: z.array(z.string()),
  attempts: z.array(z.tuple([num, nullableNum, z.string(), z.string().nullable()])),
});

export const sessionStateProbeSchema = z.object({
  kind: z.literal('session-state'),
  features: z.array(z.enum(SESSION_FEATURES)),
  pinPeriodSec: num,
});

const sessionOutcome = z.enum(SESSION_OUTCOMES);
const checkRole = z.enum(['own', 'other', 'victim', 'scope']);
const sessionSource = z.enum(Object.keys(SESSION_SOURCES) as [SessionSource, ...SessionSource[]]);

export const sessionStateResultSchema = z.object({
  kind: z.literal('session-state'),
  order: z.enum(['interleaved', 'sequential']),
  sharing: z.string(),
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
          backendPid: nullableNum,
          value: z.string().nullable(),
          present: z.boolean().nullable(),
          sqlstate: z.string().nullable(),
          error: z.string().nullable(),
          ms: num,
        }),
      ),
      pinWatch: z
        .object({
          metric: z.string(),
          dimensions: z.record(z.string(), z.string()),
          periodSec: num,
          start: z.string(),
          end: z.string(),
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
