/**
 * The run store's files as zod schemas: manifest.json, plan.json, steps/*.json, metrics/*.json.
 * Pure data definitions, so every layer (engine, local and cloud sinks, fleet merge, status, fetch,
 * report, compare) validates with the same ones. The shared types of lib/suite/types.ts are proved
 * equal to them, both ways, at compile time (SameShape below). `parseRunFile` turns a mismatch into an error naming the
 * file, the field and what was expected. Every figure is bounded to what a measurement can give
 * (./figures.ts): a negative tps or latency, or `1.7e308` tps, is refused, not drawn.
 *
 * plan.json comes in two forms (planSchema reads both into the same RunPlan): schemaVersion 1 holds
 * each script file's text in every step that runs it; schemaVersion 2 (./plan-file.ts writes it when
 * a plan has script files) holds each text once, in `scripts` by its SHA-256, and the steps name it.
 */
import { createHash } from 'node:crypto';
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
import {
  count,
  cpuPercent,
  exitCode,
  fraction,
  metricValue,
  ms,
  percent,
  positiveCount,
  sec,
  timestamp,
  tps,
  usdPerHour,
} from './figures';
import { plannedProbeSchema, probeResultSchema } from './probe-schemas';
import type { StepWindow } from './sink';

const protocol = z.enum(['simple', 'extended', 'prepared']);
const errorClass = z.enum(ERROR_CLASSES);

const measurement = z.object({
  pgbenchVersion: z.string().nullable(),
  serverVersion: z.string().nullable(),
  transactionType: z.string().nullable(),
  protocol: protocol.nullable(),
  clients: count.nullable(),
  threads: count.nullable(),
  durationSec: sec.nullable(),
  transactionsProcessed: count.nullable(),
  transactionsExpected: count.nullable(),
  failedTransactions: count.nullable(),
  tps: tps.nullable(),
  tpsMode: z.enum(['excluding-connections', 'including-connections']).nullable(),
  latencyAvgMs: ms.nullable(),
  latencyStddevMs: ms.nullable(),
  initialConnectionMs: ms.nullable(),
  avgConnectionMs: ms.nullable(),
  scheduleLagAvgMs: ms.nullable(),
  abortedClients: count,
  abortedWhileConnecting: count,
  complete: z.boolean(),
  exitCode: exitCode.nullable(),
  errors: z.array(z.object({ class: errorClass, count, sample: z.string() })),
  latencyP50Ms: ms.nullable(),
  latencyP95Ms: ms.nullable(),
  latencyP99Ms: ms.nullable(),
  series: z
    .array(
      z.object({
        // Interval start, epoch seconds (pgbench's aggregate log).
        t: count,
        transactions: count,
        latencyAvgMs: ms.nullable(),
        latencyMaxMs: ms.nullable(),
        lagAvgMs: ms.nullable(),
        skipped: count.nullable(),
      }),
    )
    .nullable(),
});

// Every kind the registry knows (lib/suite/targets.ts): a new kind is not spelled again here.
const targetKind = z.enum(TARGET_KIND_NAMES);
const targetRef = z.object({ kind: targetKind, name: z.string() });
const preparedMode = z.enum(['off', 'on']);
const stepParams = z.object({
  clients: count,
  jobs: count,
  protocol,
  connect: z.enum(['persistent', 'per-transaction']),
  script: z.string(),
  durationSec: sec.nullable(),
  transactionsPerClient: count.nullable(),
  rate: tps.nullable(),
  scale: positiveCount,
  poolPercent: percent.nullable(),
  repetition: positiveCount,
  preparedStatements: preparedMode.nullable().optional(),
});
/** USD per month: an hour's ceiling times a 30-day month. */
const usdPerMonth = z
  .number()
  .min(0, { message: 'expected US dollars per month ≥ 0' })
  .max(1_000_000_000, { message: 'expected less than $1,000,000,000 per month' });
/** A target's production option (lib/suite/types.ts TargetProduction); the run request carries it too. */
export const targetProduction = z.object({
  pricedAs: z.string(),
  usdPerMonth: usdPerMonth.nullable(),
  usdPerHour: usdPerHour.nullable(),
  basis: z.string(),
  hourlyIsProduction: z.boolean(),
  hostChoices: z
    .array(
      z.object({
        type: z.string(),
        vcpus: z.number().int().min(1).max(100_000),
        usdPerMonth: usdPerMonth.nullable(),
        usdPerHour: usdPerHour.nullable(),
        basis: z.string(),
      }),
    )
    .max(1000)
    .nullable(),
  targetUtilisation: z.number().gt(0).max(1),
  poolerProcesses: z.number().int().min(1).max(1000),
  /** The pooler priced on N application hosts (`--app-hosts N`, a whole number ≥ 1 as the flag takes it); absent in older runs. */
  appHosts: z
    .number()
    .int({ message: 'expected a whole number of application hosts ≥ 1' })
    .min(1, { message: 'expected a whole number of application hosts ≥ 1' })
    .max(Number.MAX_SAFE_INTEGER)
    .nullable()
    .optional(),
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
  maxConnections: count.nullable(),
  serverVersion: z.string().nullable(),
  pgbenchVersion: z.string().nullable(),
  poolerVersion: z.string().nullable(),
  cpus: count.nullable(),
  maxPreparedStatements: count.nullable().optional(),
  zones: z
    .array(z.object({ component: z.string(), zone: z.string().nullable() }))
    .nullable()
    .optional(),
  targetPrices: z
    .array(
      z.object({
        target: z.string(),
        usdPerHour: usdPerHour.nullable(),
        basis: z.string(),
        production: targetProduction.nullable().optional(),
      }),
    )
    .nullable()
    .optional(),
});

/** One second of pg_stat_activity / pg_locks (lib/suite/db-activity.ts); null figures: that sample failed. */
const dbActivitySample = z.object({
  at: timestamp,
  ok: z.boolean(),
  clients: count.nullable(),
  benchClients: count.nullable(),
  active: count.nullable(),
  idle: count.nullable(),
  idleInTransaction: count.nullable(),
  waits: z.array(z.object({ type: z.string(), event: z.string(), count })).nullable(),
  locksWaiting: count.nullable(),
  locksHeld: count.nullable(),
  oldestXactSec: sec.nullable(),
  oldestQuerySec: sec.nullable(),
  blocker: z
    .object({
      pid: count,
      state: z.string().nullable(),
      backendType: z.string().nullable(),
      applicationName: z.string().nullable(),
      stateSec: sec.nullable(),
      xactSec: sec.nullable(),
      blocking: count,
    })
    .nullable(),
});

const databaseActivity = z.object({ intervalMs: positiveCount, samples: z.array(dbActivitySample) });

export const stepRecordSchema = z.object({
  schemaVersion: z.literal(1),
  runId: z.string(),
  stepId: z.string(),
  scenario: z.string(),
  target: targetRef,
  params: stepParams,
  startedAt: timestamp,
  endedAt: timestamp,
  status: z.enum(['completed', 'timeout', 'hung', 'not-available', 'infrastructure-error']),
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
        clients: count,
        jobs: count,
        result: measurement.nullable(),
        cpuMaxPercent: cpuPercent.nullable(),
      }),
    )
    .optional(),
  serverConnections: z
    .object({ before: count.nullable(), peak: count.nullable(), after: count.nullable() })
    .nullable()
    .optional(),
  // Probe steps only (lib/suite/probes.ts); absent in pgbench steps and in files before probes existed.
  probe: probeResultSchema.nullable().optional(),
  // Absent in files written before the database sampler existed (issue 40).
  databaseActivity: databaseActivity.nullable().optional(),
  note: z.string().optional(),
});

export const manifestSchema = z.object({
  schemaVersion: z.literal(1),
  runId: z.string(),
  suite: z.string(),
  mode: z.enum(['local', 'cloud']),
  settings: z.record(z.string(), z.unknown()),
  startedAt: timestamp,
  endedAt: timestamp.nullable(),
  status: z.enum(['running', 'completed', 'failed', 'interrupted']),
  environment,
  stepIds: z.array(z.string()),
  stepsCompleted: count,
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
  window: z.object({ start: timestamp, end: timestamp }),
  collectedAt: timestamp,
  // CloudWatch/PI files only (lib/collector); absent in local metrics and in files before it existed.
  completeness: z
    .object({
      complete: z.boolean(),
      lastPointAt: timestamp.nullable(),
      windowEnd: timestamp,
      periodSec: positiveCount,
    })
    .optional(),
  series: z.array(
    z.object({
      source: z.enum(['cloudwatch', 'pi', ...SELF_HOSTED_POOLERS, 'pg_stat_database', 'runner']),
      name: z.string(),
      stat: z.string(),
      unit: z.string().nullable(),
      dimensions: z.record(z.string(), z.string()),
      // A value in the series' own unit (connections, %, bytes, ms …), bounded (figures.ts metricValue).
      points: z.array(z.tuple([timestamp, metricValue])),
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
  start: timestamp,
  end: timestamp,
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
    maxPreparedStatements: count.nullable(),
    processes: positiveCount.optional(),
    workerThreads: positiveCount.optional(),
    // every catalogued setting as the target ran it (lib/products/settings.ts effectiveSettings)
    effective: z
      .record(
        z.string().max(64),
        z.object({
          value: z
            .union([z.number(), z.boolean(), z.string().max(1000), z.array(z.string().max(63)).max(50)])
            .nullable(),
          source: z.enum(['lab', 'default', 'proxylab']),
        }),
      )
      .optional(),
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

const builtinScriptPart = z.object({
  builtin: z.enum(['tpcb-like', 'simple-update', 'select-only']),
  weight: positiveCount.optional(),
});
const scriptPart = z.union([
  builtinScriptPart,
  z.object({ file: z.object({ name: z.string(), sql: z.string() }), weight: positiveCount.optional() }),
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
  timeoutSec: sec,
  logSamplingRate: fraction.nullable(),
  maxConnections: count,
  poolSize: count.nullable(),
  maxConnectionsBand: z.enum(['below', 'near', 'above']),
  // Probe steps only; absent in plans written before probes existed.
  probe: plannedProbeSchema.nullable().optional(),
});

/** One runner's part of a step (cloud fleets); a single runner has one share with every client. */
export const runnerShareSchema = z.object({
  runnerIndex: count,
  clients: count,
  jobs: count,
  rate: tps.nullable(),
});

/** A SHA-256 in lowercase hex: how plan.json of schemaVersion 2 names a script's text, and lab.json its lab. */
export const sha256Hex = z
  .string()
  .regex(/^[0-9a-f]{64}$/, { message: 'expected a SHA-256 in hex (64 characters 0-9, a-f)' });

/** The plan's header: everything but its steps (the same in both forms of plan.json). */
const planHeader = {
  runId: z.string(),
  suite: z.string(),
  mode: z.enum(['local', 'cloud']),
  createdAt: timestamp,
  /** What was probed before the first step (no secrets). */
  environment,
  targets: z.array(targetDescriptorSchema),
  runnerCount: positiveCount,
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
        targets: z.array(z.object({ target: z.string(), steps: count, skipped: z.string().nullable() })),
      }),
    )
    .optional(),
};

/**
 * The plan as the engine runs it (RunPlan, lib/suite/plan.ts): every script file's text in each
 * step that runs it. plan.json of schemaVersion 1 is stored this way (every plan of a release
 * before scripts were stored once, and every plan without script files since).
 */
export const expandedPlanSchema = z.object({
  schemaVersion: z.literal(1),
  ...planHeader,
  steps: z.array(plannedStepSchema.extend({ shares: z.array(runnerShareSchema) })),
});

/** plan.json's schemaVersion when each script text is stored once, by its SHA-256 (lib/results/plan-file.ts). */
export const PLAN_SCRIPTS_BY_HASH = 2 as const;

/**
 * plan.json of schemaVersion 2: each script file's text once, in `scripts` by its SHA-256, and each
 * step's file part naming it (`{ "file": { "name": "x.sql", "sha256": "…" } }`). A 60 KiB script run
 * by 1,100 steps is 60 KiB of the file, not 181 MiB. Every name must be in `scripts`, and every text
 * must have the SHA-256 it is stored under.
 */
export const planFileV2Schema = z
  .object({
    schemaVersion: z.literal(PLAN_SCRIPTS_BY_HASH),
    ...planHeader,
    scripts: z.record(sha256Hex, z.string()),
    steps: z.array(
      plannedStepSchema.extend({
        script: z.object({
          parts: z.array(
            z.union([
              builtinScriptPart,
              z.object({
                file: z.object({ name: z.string(), sha256: sha256Hex }),
                weight: positiveCount.optional(),
              }),
            ]),
          ),
        }),
        shares: z.array(runnerShareSchema),
      }),
    ),
  })
  .superRefine((plan, ctx) => {
    for (const [hash, sql] of Object.entries(plan.scripts))
      if (createHash('sha256').update(sql, 'utf8').digest('hex') !== hash)
        ctx.addIssue({
          code: 'custom',
          path: ['scripts', hash],
          message: 'the script text does not match the SHA-256 it is stored under',
        });
    for (const [i, step] of plan.steps.entries())
      for (const [j, part] of step.script.parts.entries())
        if ('file' in part && !Object.hasOwn(plan.scripts, part.file.sha256))
          ctx.addIssue({
            code: 'custom',
            path: ['steps', i, 'script', 'parts', j, 'file', 'sha256'],
            message: 'names a script that is not in `scripts`',
          });
  });

type ExpandedPlan = z.infer<typeof expandedPlanSchema>;

/** A plan.json of either form as the engine runs it: schemaVersion 2's script names replaced by their text. */
function expandPlanFile(plan: ExpandedPlan | z.infer<typeof planFileV2Schema>): ExpandedPlan {
  if (plan.schemaVersion === 1) return plan;
  const { scripts, steps, schemaVersion: _stored, ...header } = plan;
  return {
    schemaVersion: 1,
    ...header,
    steps: steps.map((step) => ({
      ...step,
      script: {
        parts: step.script.parts.map((part) =>
          'file' in part
            ? { ...part, file: { name: part.file.name, sql: scripts[part.file.sha256] as string } }
            : part,
        ),
      },
    })),
  };
}

/** plan.json, of either form (schemaVersion 1 or 2), read as the plan the engine runs (RunPlan). */
export const planSchema = z
  .discriminatedUnion('schemaVersion', [expandedPlanSchema, planFileV2Schema])
  .transform(expandPlanFile);

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
export type _PlanCheck = Holds<SameShape<RunPlan, z.infer<typeof expandedPlanSchema>>>;
export type _PlanReadCheck = Holds<SameShape<RunPlan, z.infer<typeof planSchema>>>;
export type _StepWindowCheck = Holds<SameShape<StepWindow, z.infer<typeof stepWindowSchema>>>;

/**
 * Parse a run file's JSON text against its schema; a mismatch is a RunFileError naming the file,
 * the field and what was expected (`steps/x.json: params.clients: expected number, received string`).
 * The text is checked by lib/core/json-text.ts first: a byte order mark is accepted, a syntax error
 * is named by line and column, nesting deeper than JSON_MAX_DEPTH and a key given twice in one object
 * are refused.
 */
export function parseRunFile<S extends z.ZodType>(schema: S, file: string, text: string): z.infer<S> {
  let raw: unknown;
  try {
    // Grammar, depth, number range and duplicate keys checked without recursion; no message quotes
    // the text. A duplicate key is refused: JSON.parse would keep the last one, so `"tps": 154.6,
    // "tps": 999999` would read as 999,999 tps and `"held": true, "held": false` flip a verdict.
    raw = parseJsonText(text, { source: file, rejectDuplicateKeys: true });
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
