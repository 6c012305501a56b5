/**
 * One pgbench step (lib/engine/run-suite.ts, phase 2b–2c): pre-check, data load, pgbench under
 * the step timeout and the run's aborts, and its output parsed, classified and judged into the
 * step's record.
 */
import {
  buildPgbenchArgv,
  buildPgbenchEnv,
  buildPgbenchInitArgv,
  redactArgv,
  scriptFilesFor,
} from '../suite/argv';
import { poolerDriver } from '../poolers/registry';
import type { PlannedStep } from '../suite/expand';
import { fallbackDescriptor } from '../suite/targets';
import { parsePgbench } from '../suite/parser';
import {
  DEFAULT_SERVER_STOP_POLICY,
  describeServerStop,
  serverStopCause,
  serverStopMessageIn,
  type ServerStopPolicy,
} from '../suite/server-stop';
import {
  RESULT_SCHEMA_VERSION,
  stepFileName,
  type StepMeasurement,
  type StepRecord,
  type StepStatus,
} from '../suite/types';
import { CPU_SATURATION_PERCENT, detectSaturation, judgeStep } from '../suite/verdict';
import { withHungError, type HungCheck } from './hung';
import { summarizeStepLogs } from './step-logs';
import type { InfrastructureWatch, MetricsSampler, PgbenchOutcome, Target } from './ports';
import type { ProgressEvent, RunSuiteOptions } from './run-options';
import { InfrastructureDown, Interrupted } from './run-phases';

/** pgbench -i can take a while at large scales; it is not a measured step. */
const INIT_TIMEOUT_SEC = 1800;

export function findTarget(targets: readonly Target[], step: PlannedStep): Target {
  const t = targets.find((x) => x.ref.name === step.target.name);
  if (!t) throw new Error(`step ${step.stepId}: no target ${step.target.name} in this run`);
  return t;
}

/**
 * What we know before running. Clients above what a direct target accepts is an expected refusal:
 * the step still runs so the refusal is measured (the verdict judges it).
 */
export async function precheck(step: PlannedStep, target: Target): Promise<string | null> {
  if (step.descriptor.capabilities.pooled) {
    const pool = await target.poolSize();
    if (pool !== null && step.params.clients > pool)
      return `${step.params.clients} clients on a pool of ${pool}: clients queue in the pooler`;
    return null;
  }
  const max = await target.maxConnections();
  if (step.params.clients > max)
    return `${step.params.clients} clients > max_connections ${max}: refusal expected, measured anyway`;
  return null;
}

export async function initData(
  opts: RunSuiteOptions,
  scale: number,
  step: PlannedStep,
  emit: (ev: ProgressEvent) => void,
): Promise<void> {
  // Load data through the server itself, not a pool: pgbench -i runs DDL and COPY.
  const target =
    opts.targets.find((t) => !(t.descriptor ?? fallbackDescriptor(t.ref)).capabilities.pooled) ??
    findTarget(opts.targets, step);
  emit({ type: 'init-data', scale, target: target.ref.name });
  const conn = target.connection();
  const dir = await opts.executor.workDir(`init-scale-${scale}`);
  try {
    const out = await opts.executor.run({
      argv: ['pgbench', ...buildPgbenchInitArgv(scale, step.initFlags, conn)],
      env: buildPgbenchEnv(conn),
      timeoutMs: INIT_TIMEOUT_SEC * 1000,
      logDir: dir,
      signal: opts.signal,
    });
    if (out.aborted) throw new Interrupted();
    if (out.timedOut || out.exitCode !== 0) {
      const why = out.timedOut ? `timed out after ${INIT_TIMEOUT_SEC} s` : `exit ${out.exitCode}`;
      const failed = `pgbench -i -s ${scale} on ${target.ref.name} failed (${why}): ${lastLines(out.stderr)}`;
      // The server stopped under the data load: the infrastructure, not this run's input.
      const stopLine = out.stderr.split('\n').find((l) => serverStopMessageIn(l) !== null);
      if (stopLine !== undefined) throw new InfrastructureDown(`${failed}; ${describeServerStop(stopLine)}`);
      throw new Error(failed);
    }
  } finally {
    await opts.executor.removeWorkDir?.(dir);
  }
}

/** `15.18` → 15; null when unknown. */
function majorOf(version: string | null): number | null {
  const m = version === null ? null : /^(\d+)/.exec(version);
  return m ? Number(m[1]) : null;
}

/** pgbench's output of one step and how it was run (argv with the throwaway work dir it ran in). */
interface ExecutedStep {
  readonly outcome: PgbenchOutcome;
  readonly argv: readonly string[];
  readonly dir: string;
  readonly startedAt: string;
}

/** Phase 2c (i): pgbench for the step, in its own work dir, under the step timeout and both aborts. */
async function executeStep(
  opts: RunSuiteOptions,
  step: PlannedStep,
  target: Target,
  hung: AbortSignal | undefined,
): Promise<ExecutedStep> {
  const conn = target.connection();
  const dir = await opts.executor.workDir(stepFileName(step.stepId));
  const startedAt = opts.clock.now().toISOString();
  try {
    const argv = [
      'pgbench',
      ...buildPgbenchArgv(step, conn, {
        logPrefix: `${dir}/pgbench_log`,
        scriptDir: dir,
        pgbenchMajor: majorOf(opts.environment.pgbenchVersion),
      }),
    ];
    const outcome = await opts.executor.run({
      argv,
      env: buildPgbenchEnv(conn),
      timeoutMs: step.timeoutSec * 1000,
      logDir: dir,
      files: scriptFilesFor(step).map((f) => ({ path: `${dir}/${f.name}`, content: f.content })),
      signal: stepSignal(opts.signal, opts.infrastructure?.signal, hung),
    });
    return { outcome, argv, dir, startedAt };
  } finally {
    await opts.executor.removeWorkDir?.(dir);
  }
}

/**
 * A step's status: a server that died (`infraFailure`) or stopped (`stopped`) under it makes it an
 * infrastructure error, even when pgbench also ran into the step timeout; else stopped by the harness
 * (the step timeout, or hung on locks: ./hung.ts) is `hung`, else completed.
 */
export function stepStatusOf(
  infraFailure: string | null,
  stopped: string | null,
  timedOut: boolean,
): StepStatus {
  if (infraFailure !== null || stopped !== null) return 'infrastructure-error';
  return timedOut ? 'hung' : 'completed';
}

export async function runStep(
  opts: RunSuiteOptions,
  step: PlannedStep,
  target: Target,
  precheckNote: string | null,
  hung?: HungCheck,
): Promise<{ record: StepRecord; raw: { stdout: string; stderr: string; log: string | null } }> {
  const ran = await executeStep(opts, step, target, hung?.signal);
  if (opts.signal?.aborted) throw new Interrupted();
  // Stopped by the hung check: a harness stop like the step timeout, not an interruption.
  const stoppedHung = hung?.reason != null && ran.outcome.aborted === true;
  const executed = stoppedHung
    ? { ...ran, outcome: { ...ran.outcome, aborted: false, timedOut: true } }
    : ran;
  const { outcome } = executed;
  const infraFailure = await settledInfrastructureFailure(outcome, opts.infrastructure);
  if (outcome.aborted && infraFailure === null) throw new Interrupted();
  const endedAt = opts.clock.now().toISOString();
  const logs = summarizeStepLogs(outcome.logFiles, {
    samplingRate: step.logSamplingRate,
    throttled: step.params.rate !== null,
  });
  const stoppedAfter = stoppedHung
    ? `(hung: ${hung?.reason ?? ''})`
    : `(hung: still running at the step timeout of ${step.timeoutSec} s)`;
  const record = stepRecordOf(opts, step, executed, {
    endedAt,
    infraFailure,
    precheckNote,
    logs,
    stoppedAfter,
  });
  return { record, raw: { stdout: outcome.stdout, stderr: outcome.stderr, log: logs.mergedLog } };
}

/** pgbench's summary with the latency percentiles and series of its logs; a harness stop counted per client. */
function measurementOf(
  outcome: PgbenchOutcome,
  logs: ReturnType<typeof summarizeStepLogs>,
  clients: number,
  stoppedAfter: string,
): StepMeasurement {
  const parsed = parsePgbench({
    stdout: outcome.stdout,
    stderr: outcome.stderr,
    exitCode: outcome.exitCode,
    timedOut: outcome.timedOut,
  });
  const result: StepMeasurement = {
    ...parsed,
    latencyP50Ms: logs.latencyP50Ms,
    latencyP95Ms: logs.latencyP95Ms,
    latencyP99Ms: logs.latencyP99Ms,
    series: logs.series,
  };
  return outcome.timedOut ? withHungError(result, clients, stoppedAfter) : result;
}

/** Phase 2c (ii): pgbench's output parsed, classified and judged into the step's record. */
function stepRecordOf(
  opts: RunSuiteOptions,
  step: PlannedStep,
  { outcome, argv, dir, startedAt }: ExecutedStep,
  found: {
    endedAt: string;
    infraFailure: string | null;
    precheckNote: string | null;
    logs: ReturnType<typeof summarizeStepLogs>;
    stoppedAfter: string;
  },
): StepRecord {
  const { infraFailure, logs } = found;
  let result = measurementOf(outcome, logs, step.params.clients, found.stoppedAfter);
  // The server or pooler stopped under the step (shutdown, restart, crash): not a measurement,
  // unless stopping servers is what this scenario measures.
  const stopped = serverStopCause(result, serverStopPolicy(opts, step));
  const status = stepStatusOf(infraFailure, stopped, outcome.timedOut);
  // The script path lives in the step's throwaway work dir: say <workdir>, as `command` does.
  if (result.transactionType !== null)
    result = { ...result, transactionType: result.transactionType.split(dir).join('<workdir>') };
  const saturation = detectSaturation(step, result, outcome.cpuMaxPercent ?? null);
  const notes = [
    status === 'hung' ? found.stoppedAfter.replace(/^\((.*)\)$/, '$1') : null,
    infraFailure,
    stopped,
    found.precheckNote,
    outcome.cpuMaxPercent != null ? `pgbench CPU max ${outcome.cpuMaxPercent} %` : null,
  ].filter((n): n is string => n !== null);
  const file = `steps/${stepFileName(step.stepId)}`;
  return {
    ...recordHead(opts, step),
    startedAt,
    endedAt: found.endedAt,
    status,
    result,
    verdict: judgeStep(step, status, result),
    loadGeneratorSaturated: saturation.saturated,
    saturationReason: saturation.reason,
    poolerSaturated: null,
    command: redactArgv(argv).map((a) => a.split(dir).join('<workdir>')),
    files: {
      stdout: `${file}.stdout`,
      stderr: `${file}.stderr`,
      log: logs.mergedLog !== null ? `${file}.log` : null,
    },
    ...(notes.length > 0 ? { note: notes.join('; ') } : {}),
  };
}

/** The scenario's answer to a server stopping under its steps (catalog `serverStops`). */
function serverStopPolicy(opts: RunSuiteOptions, step: PlannedStep): ServerStopPolicy {
  return (
    opts.suite.scenarios.find((s) => s.name === step.scenario)?.serverStops ?? DEFAULT_SERVER_STOP_POLICY
  );
}

/**
 * poolerSaturated from the sampler's pooler CPU over the step (null when no measured pooler serves
 * the target); a saturated pooler is named in the note beside the load generator's.
 */
export async function withPoolerSaturation(
  record: StepRecord,
  sampler: MetricsSampler | undefined,
  start: string,
): Promise<StepRecord> {
  if (!sampler?.poolerSaturation || record.status !== 'completed')
    return { ...record, poolerSaturated: null };
  const {
    saturated,
    percent,
    product,
    cores = 1,
  } = await sampler.poolerSaturation(record.target, start, record.endedAt);
  if (percent === null) return { ...record, poolerSaturated: saturated };
  const who = product ? poolerDriver(product).displayName : 'pooler';
  const of = cores === 1 ? 'one core' : `its ${cores} cores (worker threads)`;
  const line = `busiest ${who} process averaged ${percent} % of ${of}${saturated ? ` (≥ ${CPU_SATURATION_PERCENT} %: the pooler was CPU-bound)` : ''}`;
  return { ...record, poolerSaturated: saturated, note: record.note ? `${record.note}; ${line}` : line };
}

/** The run's abort, the infrastructure watch's and the hung check's, as one signal for pgbench. */
function stepSignal(...signals: ReadonlyArray<AbortSignal | undefined>): AbortSignal | undefined {
  const given = signals.filter((s): s is AbortSignal => s !== undefined);
  return given.length > 1 ? AbortSignal.any(given) : given[0];
}

/**
 * Why a step's pgbench result is not a measurement, or null when it is: a server of the stack died
 * (the watch saw it, during or right after the step), or pgbench itself was killed by a signal the
 * harness did not send (the load generator died: no exit code, not our timeout, not our abort).
 */
/**
 * infrastructureFailure, and for a pgbench that ended with an error the watch's active look
 * (`confirm`): the server's death reaches pgbench's clients (and ends pgbench) through the network
 * and can be observed before the server's own exit is (a loaded 2-core CI machine recorded a step
 * as completed with "other ×5, 5 aborted" for a PostgreSQL killed mid-step, and failed the run only
 * at the next step). A clean pgbench exit costs nothing.
 */
async function settledInfrastructureFailure(
  outcome: PgbenchOutcome,
  watch: InfrastructureWatch | undefined,
): Promise<string | null> {
  const failure = infrastructureFailure(outcome, watch);
  if (failure !== null || watch?.confirm === undefined || outcome.exitCode === 0 || outcome.timedOut)
    return failure;
  return watch.confirm();
}

function infrastructureFailure(
  outcome: PgbenchOutcome,
  watch: InfrastructureWatch | undefined,
): string | null {
  const down = watch?.failure() ?? null;
  if (down !== null) return down;
  if (!outcome.timedOut && !outcome.aborted && outcome.exitCode === null)
    return `pgbench (the load generator) was killed${outcome.signal ? ` by ${outcome.signal}` : ''} before it finished`;
  return null;
}

/** The fields every step record opens with: which run, step, scenario, target and parameters. */
function recordHead(
  opts: RunSuiteOptions,
  step: PlannedStep,
): Pick<StepRecord, 'schemaVersion' | 'runId' | 'stepId' | 'scenario' | 'target' | 'params'> {
  return {
    schemaVersion: RESULT_SCHEMA_VERSION,
    runId: opts.runId,
    stepId: step.stepId,
    scenario: step.scenario,
    target: step.target,
    params: step.params,
  };
}

/** The record of a planned cell this target cannot run (its reason in the verdict and note). */
export function unavailableRecord(opts: RunSuiteOptions, step: PlannedStep): StepRecord {
  const at = opts.clock.now().toISOString();
  const base = `steps/${stepFileName(step.stepId)}`;
  return {
    ...recordHead(opts, step),
    startedAt: at,
    endedAt: at,
    status: 'not-available',
    result: null,
    verdict: judgeStep(step, 'not-available', null),
    loadGeneratorSaturated: false,
    saturationReason: null,
    poolerSaturated: null,
    command: [],
    files: { stdout: `${base}.stdout`, stderr: `${base}.stderr`, log: null },
    note: step.unavailable ?? 'not available on this target',
  };
}

function lastLines(text: string, n = 3): string {
  return text.trim().split('\n').slice(-n).join(' | ');
}
