/**
 * The run store's files as zod schemas: manifest.json, plan.json, steps/*.json, metrics/*.json.
 * Pure data definitions, so every layer (engine, local and cloud sinks, fleet merge, status, fetch,
 * report, compare) validates with the same ones. The shared types of lib/suite/types.ts are proved
 * equal to them, both ways, at compile time (SameShape below). `parseRunFile` turns a mismatch into an error naming the
 * file, the field and what was expected.
 */
import { z } from 'zod';
import { RunFileError, UsageError } from '../core/errors';
import { JsonInputError, JsonSyntaxError, parseJsonText } from '../core/json-text';
import type { PlannedStep } from '../suite/expand';
import { RUN_DATABASE_ENGINES } from '../suite/engines';
import { ERROR_CLASSES } from '../suite/error-class';
import type { RunPlan } from '../suite/plan';
import { INIT_FLAGS } from '../suite/scenario';
import {
  PLACEMENTS,
  POOL_MODES,
  POOL_RESIZES,
  POOLERS,
  PREPARED_SWITCHES,
  ROLLING_RESTARTS,
  SESSION_CLEANUPS,
  SELF_HOSTED_POOLERS,
  TARGET_KIND_NAMES,
  type TargetDescriptor,
} from '../suite/targets';
import type { MetricsFile, RunManifest, StepRecord } from '../suite/types';
import { plannedProbeSchema, probeResultSchema } from './probe-schemas';
import type { StepWindow } from './sink';

const num = z.number();
const nullableNum = z.number().nullable();
const protocol = z.enum(['simple', 'extended', 'prepared']);
const errorClass = z.enum(ERROR_CLASSES);

const measurement = z.object({
  pgbenchVersion: z.string().nullable(),
  serverVersion: z.string().nullable(),
  transactionType: z.string().nullable(),
  protocol: protocol.nullable(),
  clients: nullableNum,
  threads: nullableNum,
  durationSec: nullableNum,
  transactionsProcessed: nullableNum,
  transactionsExpected: nullableNum,
  failedTransactions: nullableNum,
  tps: nullableNum,
  tpsMode: z.enum(['excluding-connections', 'including-connections']).nullable(),
  latencyAvgMs: nullableNum,
  latencyStddevMs: nullableNum,
  initialConnectionMs: nullableNum,
  avgConnectionMs: nullableNum,
  scheduleLagAvgMs: nullableNum,
  abortedClients: num,
  abortedWhileConnecting: num,
  complete: z.boolean(),
  exitCode: nullableNum,
  errors: z.array(z.object({ class: errorClass, count: num, sample: z.string() })),
  latencyP50Ms: nullableNum,
  latencyP95Ms: nullableNum,
  latencyP99Ms: nullableNum,
  series: z
    .array(
      z.object({
        t: num,
        transactions: num,
        latencyAvgMs: nullableNum,
        latencyMaxMs: nullableNum,
        lagAvgMs: nullableNum,
        skipped: nullableNum,
      }),
    )
    .nullable(),
});

// Every kind the registry knows (lib/suite/targets.ts): a new kind is not spelled again here.
const targetKind = z.enum(TARGET_KIND_NAMES);
const targetRef = z.object({ kind: targetKind, name: z.string() });
const preparedMode = z.enum(['off', 'on']);
const stepParams = z.object({
  clients: num,
  jobs: num,
  protocol,
  connect: z.enum(['persistent', 'per-transaction']),
  script: z.string(),
  durationSec: nullableNum,
  transactionsPerClient: nullableNum,
  rate: nullableNum,
  scale: num,
  poolPercent: nullableNum,
  repetition: num,
  preparedStatements: preparedMode.nullable().optional(),
});
const environment = z.object({
  // Optional: runs recorded before issue 13 have none (read as unknown).
  database: z
    .object({
      engine: z.enum(RUN_DATABASE_ENGINES),
      instanceClass: z.string().nullable(),
    })
    .nullable()
    .optional(),
  maxConnections: nullableNum,
  serverVersion: z.string().nullable(),
  pgbenchVersion: z.string().nullable(),
  poolerVersion: z.string().nullable(),
  cpus: nullableNum,
  maxPreparedStatements: nullableNum.optional(),
  zones: z
    .array(z.object({ component: z.string(), zone: z.string().nullable() }))
    .nullable()
    .optional(),
  targetPrices: z
    .array(z.object({ target: z.string(), usdPerHour: nullableNum, basis: z.string() }))
    .nullable()
    .optional(),
});

export const stepRecordSchema = z.object({
  schemaVersion: z.literal(1),
  runId: z.string(),
  stepId: z.string(),
  scenario: z.string(),
  target: targetRef,
  params: stepParams,
  startedAt: z.string(),
  endedAt: z.string(),
  status: z.enum(['completed', 'timeout', 'not-available', 'infrastructure-error']),
  result: measurement.nullable(),
  verdict: z.object({ expected: z.string(), observed: z.string(), held: z.boolean().nullable() }),
  loadGeneratorSaturated: z.boolean(),
  saturationReason: z.string().nullable(),
  poolerSaturated: z.boolean().nullable().optional(),
  command: z.array(z.string()),
  files: z.object({ stdout: z.string(), stderr: z.string(), log: z.string().nullable() }),
  parts: z
    .array(
      z.object({
        runnerId: z.string(),
        clients: num,
        jobs: num,
        result: measurement.nullable(),
        cpuMaxPercent: nullableNum,
      }),
    )
    .optional(),
  serverConnections: z
    .object({ before: nullableNum, peak: nullableNum, after: nullableNum })
    .nullable()
    .optional(),
  // Probe steps only (lib/suite/probes.ts); absent in pgbench steps and in files before probes existed.
  probe: probeResultSchema.nullable().optional(),
  note: z.string().optional(),
});

export const manifestSchema = z.object({
  schemaVersion: z.literal(1),
  runId: z.string(),
  suite: z.string(),
  mode: z.enum(['local', 'cloud']),
  settings: z.record(z.string(), z.unknown()),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  status: z.enum(['running', 'completed', 'failed', 'interrupted']),
  environment,
  stepIds: z.array(z.string()),
  stepsCompleted: num,
  scenarioVerdicts: z
    .array(
      z.object({
        scenario: z.string(),
        expected: z.string(),
        observed: z.string(),
        held: z.boolean().nullable(),
      }),
    )
    .optional(),
  error: z.string().optional(),
});

export const metricsFileSchema = z.object({
  schemaVersion: z.literal(1),
  runId: z.string(),
  window: z.object({ start: z.string(), end: z.string() }),
  collectedAt: z.string(),
  // CloudWatch/PI files only (lib/collector); absent in local metrics and in files before it existed.
  completeness: z
    .object({
      complete: z.boolean(),
      lastPointAt: z.string().nullable(),
      windowEnd: z.string(),
      periodSec: num,
    })
    .optional(),
  series: z.array(
    z.object({
      source: z.enum(['cloudwatch', 'pi', ...SELF_HOSTED_POOLERS, 'pg_stat_database', 'runner']),
      name: z.string(),
      stat: z.string(),
      unit: z.string().nullable(),
      dimensions: z.record(z.string(), z.string()),
      points: z.array(z.tuple([z.string(), z.number()])),
      status: z.enum(['ok', 'no-data', 'error']),
      reason: z.string().optional(),
    }),
  ),
});

/** metrics/steps.json: when each step ran (lib/results/sink.ts StepWindow), for plotting metrics. */
export const stepWindowSchema = z.object({
  stepId: z.string(),
  scenario: z.string(),
  target: z.string(),
  start: z.string(),
  end: z.string(),
});
export const stepWindowsFileSchema = z.object({
  schemaVersion: z.literal(1),
  runId: z.string(),
  steps: z.array(stepWindowSchema),
});

export const targetDescriptorSchema = z.object({
  kind: targetKind,
  name: z.string(),
  pooler: z.enum(POOLERS),
  poolMode: z.enum(POOL_MODES).nullable(),
  placement: z.enum(PLACEMENTS),
  version: z.string().nullable(),
  settings: z.object({
    maxPreparedStatements: nullableNum,
    processes: z.number().int().positive().optional(),
    workerThreads: z.number().int().positive().optional(),
  }),
  capabilities: z.object({
    pooled: z.boolean(),
    multiplexes: z.boolean(),
    carriesPreparedStatements: z.enum(['yes', 'no', 'measured']),
    resizablePool: z.enum(POOL_RESIZES).nullable(),
    fixedPoolReason: z.string().optional(),
    preparedStatementsSwitch: z
      .object({ how: z.enum(PREPARED_SWITCHES), available: z.boolean(), reason: z.string().nullable() })
      .nullable(),
    // Absent in plans written before the disruption lab.
    rollingRestart: z.enum(ROLLING_RESTARTS).nullable().optional(),
    // Optional: plans written before the session-state probes (issue 24) have none.
    session: z
      .object({
        resetsOnRelease: z.boolean(),
        trackedParameters: z.array(z.string()),
        pinsSessions: z.boolean(),
        // Optional: plans written before PgDoorman have none.
        cleansOnRelease: z.array(z.enum(SESSION_CLEANUPS)).optional(),
      })
      .optional(),
  }),
});

const experimentId = z.enum(['E1', 'E2', 'E3', 'E4', 'E5', 'E6', 'SESSION', 'LATENCY', 'DISRUPT']);

const scriptPart = z.union([
  z.object({ builtin: z.enum(['tpcb-like', 'simple-update', 'select-only']), weight: num.optional() }),
  z.object({ file: z.object({ name: z.string(), sql: z.string() }), weight: num.optional() }),
]);

export const plannedStepSchema = z.object({
  stepId: z.string(),
  scenario: z.string(),
  // null: a lab's own scenario (plans of older releases always name one of E1–E5)
  experiment: experimentId.nullable(),
  target: targetRef,
  descriptor: targetDescriptorSchema,
  unavailable: z.string().nullable(),
  params: stepParams,
  expectation: z.object({
    outcome: z.enum(['succeeds', 'refused', 'errors', 'any']),
    errorClasses: z.array(errorClass),
    published: z.string().nullable(),
    note: z.string().nullable(),
  }),
  script: z.object({ parts: z.array(scriptPart) }),
  initFlags: z.array(z.enum(INIT_FLAGS)),
  timeoutSec: num,
  logSamplingRate: nullableNum,
  maxConnections: num,
  poolSize: nullableNum,
  maxConnectionsBand: z.enum(['below', 'near', 'above']),
  // Probe steps only; absent in plans written before probes existed.
  probe: plannedProbeSchema.nullable().optional(),
});

/** One runner's part of a step (cloud fleets); a single runner has one share with every client. */
export const runnerShareSchema = z.object({
  runnerIndex: num,
  clients: num,
  jobs: num,
  rate: nullableNum,
});

export const planSchema = z.object({
  schemaVersion: z.literal(1),
  runId: z.string(),
  suite: z.string(),
  mode: z.enum(['local', 'cloud']),
  createdAt: z.string(),
  /** What was probed before the first step (no secrets). */
  environment,
  targets: z.array(targetDescriptorSchema),
  runnerCount: num,
  steps: z.array(plannedStepSchema.extend({ shares: z.array(runnerShareSchema) })),
  scenarios: z
    .array(
      z.object({
        name: z.string(),
        experiment: experimentId.nullable(),
        title: z.string(),
        finding: z.string(),
        source: z
          .object({
            title: z.string(),
            publisher: z.string().nullable(),
            date: z.string().nullable(),
            url: z.string().nullable(),
            note: z.string().optional(),
          })
          .nullable(),
        targets: z.array(z.object({ target: z.string(), steps: num, skipped: z.string().nullable() })),
      }),
    )
    .optional(),
});

/**
 * Compile-time proof, both ways, that each schema and the shared type it stands for describe the
 * same values: a member added to an enum of the result types (`Pooler`, `ExperimentId`,
 * `TargetKind`, `ErrorClass`, `StepStatus` …) without its schema member, or a schema member the
 * type lacks, or a required field on one side only, fails `tsc --noEmit` here — before a stored
 * plan or step of that kind is refused on load. `readonly` is not a difference (the types are
 * read-only, zod infers mutable). test/unit/result-schemas-types.test.ts shows the check fails.
 */
export type { DeepReadonly, Holds, SameShape } from './same-shape';
import type { Holds, SameShape } from './same-shape';
export type _StepCheck = Holds<SameShape<StepRecord, z.infer<typeof stepRecordSchema>>>;
export type _ManifestCheck = Holds<SameShape<RunManifest, z.infer<typeof manifestSchema>>>;
export type _MetricsCheck = Holds<SameShape<MetricsFile, z.infer<typeof metricsFileSchema>>>;
export type _DescriptorCheck = Holds<SameShape<TargetDescriptor, z.infer<typeof targetDescriptorSchema>>>;
export type _PlannedStepCheck = Holds<SameShape<PlannedStep, z.infer<typeof plannedStepSchema>>>;
export type _PlanCheck = Holds<SameShape<RunPlan, z.infer<typeof planSchema>>>;
export type _StepWindowCheck = Holds<SameShape<StepWindow, z.infer<typeof stepWindowSchema>>>;

/**
 * Parse a run file's JSON text against its schema; a mismatch is a RunFileError naming the file,
 * the field and what was expected (`steps/x.json: params.clients: expected number, received string`).
 * The text is checked by lib/core/json-text.ts first: a byte order mark is accepted, a syntax error
 * is named by line and column, nesting deeper than JSON_MAX_DEPTH is refused.
 */
export function parseRunFile<S extends z.ZodType>(schema: S, file: string, text: string): z.infer<S> {
  let raw: unknown;
  try {
    // Grammar, depth and number range checked without recursion; no message quotes the text.
    raw = parseJsonText(text, { source: file });
  } catch (err) {
    if (err instanceof JsonSyntaxError)
      throw new RunFileError(
        file,
        null,
        `not valid JSON: ${err.detail} (line ${err.line}, column ${err.column})`,
      );
    if (err instanceof JsonInputError)
      throw new RunFileError(file, err.jsonPath, `${err.jsonPath}: ${err.detail}`);
    if (err instanceof UsageError) throw new RunFileError(file, null, err.message);
    throw err;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const field = first ? first.path.map(String).join('.') || '(root)' : '(root)';
    throw new RunFileError(file, field, describeZodError(parsed.error));
  }
  return parsed.data;
}

/** "params.clients: expected number, received string" — the first problem, for a warning line. */
export function describeZodError(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
}
