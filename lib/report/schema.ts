/**
 * Runtime checks for what the report reads from a run directory (lib/suite/types.ts). Unknown
 * extra fields are dropped; a record that does not fit is reported by `loadRun` with the path of
 * the first offending field instead of being half-read.
 */
import { z } from 'zod';
import type { MetricsFile, RunManifest, StepRecord } from '../suite/types';

const num = z.number();
const nullableNum = z.number().nullable();
const protocol = z.enum(['simple', 'extended', 'prepared']);
const errorClass = z.enum([
  'too-many-connections',
  'prepared-statement-exists',
  'prepared-statement-missing',
  'portal-missing',
  'backend-died',
  'connection-failed',
  'auth-failed',
  'transaction-aborted',
  'timeout',
  'other',
]);

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

const targetRef = z.object({
  kind: z.enum(['direct', 'rds-proxy', 'pgbouncer-transaction', 'pgbouncer-session']),
  name: z.string(),
});

export const stepRecordSchema = z.object({
  schemaVersion: z.literal(1),
  runId: z.string(),
  stepId: z.string(),
  scenario: z.string(),
  target: targetRef,
  params: z.object({
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
  }),
  startedAt: z.string(),
  endedAt: z.string(),
  status: z.enum(['completed', 'timeout']),
  result: measurement.nullable(),
  verdict: z.object({ expected: z.string(), observed: z.string(), held: z.boolean().nullable() }),
  loadGeneratorSaturated: z.boolean(),
  saturationReason: z.string().nullable(),
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
  environment: z.object({
    maxConnections: nullableNum,
    serverVersion: z.string().nullable(),
    pgbenchVersion: z.string().nullable(),
    poolerVersion: z.string().nullable(),
    cpus: nullableNum,
  }),
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
  series: z.array(
    z.object({
      source: z.enum(['cloudwatch', 'pi', 'pgbouncer', 'pg_stat_database', 'runner']),
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

// Compile-time proof that the schemas produce the shared types.
type Assignable<T, U extends T> = U;
export type _StepCheck = Assignable<StepRecord, z.infer<typeof stepRecordSchema>>;
export type _ManifestCheck = Assignable<RunManifest, z.infer<typeof manifestSchema>>;
export type _MetricsCheck = Assignable<MetricsFile, z.infer<typeof metricsFileSchema>>;

/** "params.clients: expected number, received string" — the first problem, for a warning line. */
export function describeZodError(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
}
