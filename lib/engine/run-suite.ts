/**
 * The suite engine: runs planned steps through ports and records each result the moment it exists.
 * It knows nothing of AWS or of local processes (lib/local and lib/runner provide the ports).
 *
 * Per step: pre-check → pool percent (sweeps) → pool reset → pgbench under the step timeout →
 * parse (+ aggregate logs) → judge → saturation → write the step (record + raw files) → manifest.
 * After a scenario's last step its comparisons are judged. A run directory that already holds
 * steps of the same run id is resumed: finished steps are skipped, not repeated.
 *
 * Failures: a step pgbench could not even be started for (target down, pool control failing) is
 * NOT recorded, so a resume retries it; the run ends `failed` with the error in the manifest. An
 * abort (Ctrl-C) kills the running pgbench, records nothing for that step and ends `interrupted`.
 * Either way every finished step is already on disk. When the infrastructure under test dies during
 * a step (the InfrastructureWatch port aborts pgbench, or pgbench itself is killed), or stops under
 * it (pgbench's clients got a shutdown, restart or crash message: the `server-stopped` class of
 * lib/suite/server-stop.ts, unless the scenario measures server stops), the step is recorded as
 * `infrastructure-error` (never judged, not finished: a resume measures it again) and the run ends
 * `failed` with the cause at once. Both worlds get this: it needs nothing but pgbench's output.
 */
import { FileWriteError } from '../core/atomic-write';
import { InfrastructureError, UsageError } from '../core/errors';
import {
  buildPgbenchArgv,
  buildPgbenchEnv,
  buildPgbenchInitArgv,
  redactArgv,
  scriptFilesFor,
} from '../suite/argv';
import { poolerDriver } from '../poolers/registry';
import type { Suite } from '../suite/catalog';
import type { PlannedStep } from '../suite/expand';
import { fallbackDescriptor } from '../suite/targets';
import { probeStepSec } from '../suite/probes';
import { parsePgbench } from '../suite/parser';
import {
  DEFAULT_SERVER_STOP_POLICY,
  describeServerStop,
  serverStopCause,
  serverStopMessageIn,
  socketGoneIn,
  SERVER_STOPPED,
  type ServerStopPolicy,
} from '../suite/server-stop';
import {
  RESULT_SCHEMA_VERSION,
  stepFileName,
  type ErrorSummary,
  type MetricSeries,
  type RunEnvironment,
  type RunManifest,
  type RunStatus,
  type ScenarioVerdict,
  type StepMeasurement,
  type StepRecord,
  type StepStatus,
} from '../suite/types';
import {
  CPU_SATURATION_PERCENT,
  detectSaturation,
  judgeScenario,
  judgeStep,
  runExitCode,
  verdictTotals,
} from '../suite/verdict';
import { finishedSteps } from './plan-or-resume';
import { probeGroupMembers, probeRecord, probeRunnerFor, probeUnavailable } from './probe-steps';
import { summarizeStepLogs } from './step-logs';
import type {
  Clock,
  InfrastructureWatch,
  MetricsSampler,
  PgbenchExecutor,
  PgbenchOutcome,
  PoolControl,
  ProbeRunners,
  ProbeStepOutcome,
  ResultSink,
  ServerConnectionsProbe,
  StepWindow,
  Target,
} from './ports';

export type ProgressEvent =
  | {
      readonly type: 'run-start';
      readonly runId: string;
      readonly total: number;
      readonly alreadyDone: number;
      readonly resumed: boolean;
    }
  | { readonly type: 'init-data'; readonly scale: number; readonly target: string }
  | { readonly type: 'step-skip'; readonly index: number; readonly total: number; readonly step: PlannedStep }
  | {
      readonly type: 'step-start';
      readonly index: number;
      readonly total: number;
      readonly step: PlannedStep;
      readonly elapsedSec: number;
      /** Estimated seconds left including this step; null before anything is known. */
      readonly etaSec: number | null;
      readonly note: string | null;
    }
  | {
      readonly type: 'step-end';
      readonly index: number;
      readonly total: number;
      readonly step: PlannedStep;
      readonly record: StepRecord;
      readonly elapsedSec: number;
      readonly etaSec: number | null;
    }
  | {
      /** What a probe step's runner does (the disruption it issues), while its group runs. */
      readonly type: 'probe-log';
      readonly step: PlannedStep;
      readonly line: string;
    }
  | {
      readonly type: 'scenario-end';
      readonly scenario: string;
      readonly verdicts: readonly ScenarioVerdict[];
    }
  | {
      readonly type: 'run-end';
      readonly status: RunStatus;
      readonly elapsedSec: number;
      readonly error: string | null;
    };

export interface RunSuiteOptions {
  readonly runId: string;
  readonly suite: Suite;
  readonly steps: readonly PlannedStep[];
  readonly targets: readonly Target[];
  readonly executor: PgbenchExecutor;
  readonly pool: PoolControl;
  readonly sink: ResultSink;
  readonly sampler?: MetricsSampler;
  readonly clock: Clock;
  readonly progress?: (ev: ProgressEvent) => void;
  readonly signal?: AbortSignal;
  readonly mode: RunManifest['mode'];
  readonly environment: RunEnvironment;
  /** Settings for the manifest. Never credentials. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** Name of the metrics file the sampler's series go to (`metrics/<name>.json`). @default 'local' */
  readonly metricsName?: string;
  /** Run `pgbench -i` when a scenario's scale differs from the data loaded. @default true */
  readonly initData?: boolean;
  /** Seconds added to each step's planned duration for the ETA. @default 1 */
  readonly stepOverheadSec?: number;
  /** Aborts the running step when a server dies (local stack); the step is then an infrastructure error. */
  readonly infrastructure?: InfrastructureWatch;
  /** The command that resumes this run (`proxylab local --run-id … `), named when a file write fails. */
  readonly resumeCommand?: string;
  /**
   * Watches the connections held on the database around each measured step; its figures go into
   * the step's `serverConnections`. Absent: not recorded (the field is left out).
   */
  readonly serverConnections?: ServerConnectionsProbe;
  /**
   * Runners of probe steps by kind (lib/suite/probes.ts); a probe step whose kind has none is
   * recorded `not-available` with the reason.
   */
  readonly probes?: ProbeRunners;
}

export interface RunSuiteResult {
  readonly manifest: RunManifest;
  /** Every step record of the run, in plan order (including those of an earlier, resumed part). */
  readonly records: readonly StepRecord[];
  readonly scenarioVerdicts: readonly ScenarioVerdict[];
  /** true when the run completed and no step or comparison verdict is `held: false`. */
  readonly allHeld: boolean;
}

/**
 * A run directory that already holds a manifest is resumed only by the same run: same id, suite
 * and mode. Anything else is the user's mistake (a reused --run-id or output directory), so a
 * UsageError (exit 2), thrown before anything is written. Adapters check their own plan settings
 * (max_connections, runner count) before calling the engine.
 */
function checkResumable(previous: RunManifest, opts: RunSuiteOptions): void {
  const problems: string[] = [];
  if (previous.runId !== opts.runId) problems.push(`the run directory holds run ${previous.runId}`);
  if (previous.suite !== opts.suite.name)
    problems.push(`it ran suite ${previous.suite}, not ${opts.suite.name}`);
  if (previous.mode !== opts.mode) problems.push(`it is a ${previous.mode} run, not ${opts.mode}`);
  if (problems.length > 0)
    throw new UsageError(`cannot resume run ${opts.runId}: ${problems.join('; ')}; use a new run id`);
}

/** Thrown inside the loop when the signal aborted; never escapes runSuite. */
class Interrupted extends Error {}

/** The infrastructure under test died: the run ends `failed` with this cause. Never escapes runSuite. */
class InfrastructureDown extends Error {
  constructor(cause: string) {
    super(`infrastructure failure: ${cause}`);
  }
}

/** pgbench -i can take a while at large scales; it is not a measured step. */
const INIT_TIMEOUT_SEC = 1800;

export async function runSuite(opts: RunSuiteOptions): Promise<RunSuiteResult> {
  const started = opts.clock.now();
  assertUniqueIds(opts.steps.map((s) => s.stepId));
  const opened = await openRun(opts, started);
  const run = new SuiteRun(opts, started, opened);
  run.emit({
    type: 'run-start',
    runId: opts.runId,
    total: opts.steps.length,
    alreadyDone: opened.first.stepsCompleted,
    resumed: opened.previous !== null,
  });
  let end: RunEnd = { status: 'completed', error: null };
  if (opts.sampler) await opts.sampler.start();
  try {
    for (const [i, step] of opts.steps.entries()) {
      // Recorded already, with the probe group an earlier step of this loop measured.
      if (!run.measuredInGroup(step)) {
        const action = stepAction(step, run.done, opts);
        if (action === 'skip') run.skip(i, step);
        else if (action === 'unavailable') await run.recordUnavailable(i, step);
        else if (step.probe) await run.measureProbeGroup(i, step);
        else await run.measure(i, step);
      }
      await run.endScenarioAfter(i, step);
    }
  } catch (e) {
    end = runEndOf(e, opts);
  } finally {
    end = await settleRun(opts, opts.sampler, (series) => run.flushMetrics(series), end);
  }
  return run.finish(end);
}

/** What the loop does with a step: skip one an earlier part finished, record one this target cannot run, or run it. */
export type StepAction = 'skip' | 'unavailable' | 'run';

/**
 * Phase 2a, before each step: stop the run (throws) when it was aborted or the infrastructure
 * under test died since the last step; else what to do with this step.
 */
export function stepAction(
  step: PlannedStep,
  done: ReadonlySet<string>,
  opts: Pick<RunSuiteOptions, 'signal' | 'infrastructure'>,
): StepAction {
  if (opts.signal?.aborted) throw new Interrupted();
  const down = opts.infrastructure?.failure() ?? null;
  if (down !== null) throw new InfrastructureDown(down);
  if (done.has(step.stepId)) return 'skip';
  // Planned but not runnable on this target's version: recorded as such, never judged.
  if (step.unavailable !== null) return 'unavailable';
  return 'run';
}

/**
 * Phase 2d, after the sink stored a step: an `infrastructure-error` record is kept on disk for
 * diagnosis (raw output, the cause in its note) but is not finished, and ends the run `failed`
 * (throws). Any other status is a finished step.
 */
export function checkMeasured(stored: StepRecord): void {
  if (stored.status === 'infrastructure-error')
    throw new InfrastructureDown(`step ${stored.stepId} was not measured: ${stored.note ?? 'unknown cause'}`);
}

/** The state of one run between its phases: the manifest as last written, finished steps, ETA, loaded data. */
class SuiteRun {
  readonly emit: (ev: ProgressEvent) => void;
  readonly done: Set<string>;
  private readonly records: Map<string, StepRecord>;
  private manifest: RunManifest;
  private readonly stepIds: readonly string[];
  private readonly windows: StepWindow[] = [];
  private readonly eta: EtaEstimator;
  private readonly scenarioVerdicts: ScenarioVerdict[] = [];
  /** Scale and init flags of the data loaded now (`4 --foreign-keys --unlogged-tables`). */
  private loadedData: string | null = null;
  private readonly targetSettings: TargetSettings;

  constructor(
    private readonly opts: RunSuiteOptions,
    private readonly started: Date,
    opened: OpenedRun,
  ) {
    this.emit = opts.progress ?? (() => undefined);
    this.done = opened.done;
    this.records = opened.records;
    this.manifest = opened.first;
    this.stepIds = opts.steps.map((s) => s.stepId);
    this.eta = new EtaEstimator(opts.steps, opts.stepOverheadSec ?? 1);
    this.targetSettings = new TargetSettings(opts.pool);
  }

  private elapsedSec(): number {
    return (this.opts.clock.now().getTime() - this.started.getTime()) / 1000;
  }

  private completedCount(): number {
    return this.stepIds.filter((id) => this.done.has(id)).length;
  }

  async flushMetrics(series: MetricSeries[] | null): Promise<void> {
    if (!series) return;
    const { sink, runId, clock } = this.opts;
    const window = { start: this.started.toISOString(), end: clock.now().toISOString() };
    await sink.writeMetrics(this.opts.metricsName ?? 'local', runId, window, series);
    if (sink.writeStepWindows && this.windows.length > 0) await sink.writeStepWindows(runId, this.windows);
  }

  /** A finished step counts: kept for the scenario comparisons, and the manifest's progress moves on. */
  private async markDone(stepId: string, record: StepRecord): Promise<void> {
    this.records.set(stepId, record);
    this.done.add(stepId);
    this.manifest = { ...this.manifest, stepsCompleted: this.completedCount() };
    await this.opts.sink.writeManifest(this.manifest);
  }

  private stepEnd(i: number, step: PlannedStep, record: StepRecord, etaSec: number | null): void {
    const total = this.opts.steps.length;
    this.emit({ type: 'step-end', index: i + 1, total, step, record, elapsedSec: this.elapsedSec(), etaSec });
  }

  skip(i: number, step: PlannedStep): void {
    this.eta.skip(step);
    this.emit({ type: 'step-skip', index: i + 1, total: this.opts.steps.length, step });
  }

  async recordUnavailable(i: number, step: PlannedStep, reason?: string): Promise<void> {
    const record = unavailableRecord(
      this.opts,
      reason === undefined ? step : { ...step, unavailable: reason },
    );
    await this.opts.sink.writeStep(record, { stdout: '', stderr: '', log: null });
    this.eta.skip(step);
    await this.markDone(step.stepId, record);
    this.stepEnd(i, step, record, this.eta.remainingSec(i + 1));
  }

  /** Phase 2b: settings, pre-check and data the step needs, then the start announced and the pool reset. */
  private async prepare(i: number, step: PlannedStep): Promise<{ target: Target; note: string | null }> {
    const { opts } = this;
    const target = findTarget(opts.targets, step);
    // The other targets' pools give their server connections back before this one is measured.
    await opts.pool.isolate?.(target.ref);
    // Resize first (sweeps), so the pre-check reads the pool this step really runs against.
    await this.targetSettings.apply(step, target);
    const note = await precheck(step, target);
    const dataKey = [step.params.scale, ...[...step.initFlags].sort()].join(' ');
    if ((opts.initData ?? true) && this.loadedData !== dataKey) {
      await initData(opts, step.params.scale, step, this.emit);
      this.loadedData = dataKey;
    }
    const total = opts.steps.length;
    const etaSec = this.eta.remainingSec(i);
    this.emit({ type: 'step-start', index: i + 1, total, step, elapsedSec: this.elapsedSec(), etaSec, note });
    await opts.pool.reset(target.ref);
    return { target, note };
  }

  /** Phase 2c: the step measured, stored, and (unless the infrastructure failed under it) finished. */
  async measure(i: number, step: PlannedStep): Promise<void> {
    const { opts } = this;
    const { target, note } = await this.prepare(i, step);
    const watch = await opts.serverConnections?.watch();
    const stepStart = opts.clock.now();
    opts.sampler?.markStep(step.stepId, 'start');
    const measured = await runStep(opts, step, target, note).finally(() => watch?.stop());
    opts.sampler?.markStep(step.stepId, 'end');
    const held = watch ? { serverConnections: await watch.stop() } : {};
    const record = await withPoolerSaturation(
      { ...measured.record, ...held },
      opts.sampler,
      stepStart.toISOString(),
    );
    this.windows.push({
      stepId: step.stepId,
      scenario: step.scenario,
      target: step.target.name,
      start: stepStart.toISOString(),
      end: record.endedAt,
    });
    // What the sink stored (a fleet leader: merged from every runner, then judged) is what counts.
    const stored = (await opts.sink.writeStep(record, measured.raw)) ?? record;
    if (stored.status === 'infrastructure-error') this.stepEnd(i, step, stored, this.eta.remainingSec(i));
    checkMeasured(stored);
    this.eta.finish(step, (opts.clock.now().getTime() - stepStart.getTime()) / 1000);
    await this.markDone(step.stepId, stored);
    await this.flushMetrics(opts.sampler?.snapshot?.() ?? null);
    this.stepEnd(i, step, record, this.eta.remainingSec(i + 1));
  }

  /** Steps a probe group measured together with an earlier step of this loop. */
  private readonly together = new Set<string>();

  measuredInGroup(step: PlannedStep): boolean {
    return this.together.has(step.stepId);
  }

  /**
   * A probe step and the rest of its group (lib/suite/probes.ts), in one execution of the kind's
   * runner: each step that this run cannot measure is recorded `not-available` with the reason;
   * the others are prepared (settings, pool reset), run together, and each recorded, judged and
   * finished as a pgbench step is. An infrastructure failure under the group ends the run after
   * every step of it is stored.
   */
  async measureProbeGroup(i: number, step: PlannedStep): Promise<void> {
    const { opts } = this;
    const members = probeGroupMembers(opts.steps, i, this.done);
    for (const m of members.slice(1)) this.together.add(m.stepId);
    const runner = probeRunnerFor(opts.probes, step);
    const measured: PlannedStep[] = [];
    for (const m of members) {
      const why = probeUnavailable(runner, m);
      if (why === null) measured.push(m);
      else await this.recordUnavailable(opts.steps.indexOf(m), m, why);
    }
    const [first] = measured;
    if (runner === null || first === undefined || !first.probe) return;
    const targets = new Map<string, Target>();
    for (const m of measured) {
      const target = findTarget(opts.targets, m);
      await this.targetSettings.apply(m, target);
      targets.set(target.ref.name, target);
    }
    for (const t of targets.values()) await opts.pool.reset(t.ref);
    const total = opts.steps.length;
    const note =
      measured.length > 1 ? `${measured.length} steps measured together (${first.probe.group})` : null;
    const index = opts.steps.indexOf(first);
    this.emit({
      type: 'step-start',
      index: index + 1,
      total,
      step: first,
      elapsedSec: this.elapsedSec(),
      etaSec: this.eta.remainingSec(index),
      note,
    });
    const groupStart = opts.clock.now();
    for (const m of measured) opts.sampler?.markStep(m.stepId, 'start');
    const deadline = AbortSignal.timeout(Math.max(...measured.map((m) => m.timeoutSec)) * 1000);
    const signal = AbortSignal.any([
      deadline,
      ...[opts.signal, opts.infrastructure?.signal].filter((s): s is AbortSignal => s !== undefined),
    ]);
    const outcomes = await runner.run({
      runId: opts.runId,
      steps: measured,
      spec: first.probe.spec,
      targets,
      clock: opts.clock,
      signal,
      ...(opts.infrastructure ? { infrastructure: opts.infrastructure } : {}),
      log: (line) => this.emit({ type: 'probe-log', step: first, line }),
    });
    for (const m of measured) opts.sampler?.markStep(m.stepId, 'end');
    if (opts.signal?.aborted) throw new Interrupted();
    const infraFailure = opts.infrastructure?.failure() ?? null;
    const byId = new Map(outcomes.map((o) => [o.stepId, o]));
    const stored: StepRecord[] = [];
    for (const m of measured) {
      const outcome: ProbeStepOutcome = byId.get(m.stepId) ?? missingOutcome(m, groupStart, opts.clock.now());
      const record = probeRecord(opts.runId, m, outcome, infraFailure);
      this.windows.push({
        stepId: m.stepId,
        scenario: m.scenario,
        target: m.target.name,
        start: record.startedAt,
        end: record.endedAt,
      });
      const kept =
        (await opts.sink.writeStep(record, { stdout: outcome.transcript, stderr: '', log: null })) ?? record;
      stored.push(kept);
      const at = opts.steps.indexOf(m);
      if (kept.status === 'infrastructure-error') {
        this.stepEnd(at, m, kept, this.eta.remainingSec(at));
        continue;
      }
      if (m === first) this.eta.finish(m, (opts.clock.now().getTime() - groupStart.getTime()) / 1000);
      else this.eta.skip(m);
      await this.markDone(m.stepId, kept);
      this.stepEnd(at, m, kept, this.eta.remainingSec(at + 1));
    }
    await this.flushMetrics(opts.sampler?.snapshot?.() ?? null);
    for (const kept of stored) checkMeasured(kept);
  }

  /** After a scenario's last step: its comparisons judged and written with the manifest. */
  async endScenarioAfter(i: number, step: PlannedStep): Promise<void> {
    const { steps, suite, sink } = this.opts;
    const next = steps[i + 1];
    if (next && next.scenario === step.scenario) return;
    const verdicts = scenarioComparisons(suite, step.scenario, steps, this.records);
    this.scenarioVerdicts.push(...verdicts);
    if (verdicts.length > 0) {
      this.manifest = { ...this.manifest, scenarioVerdicts: this.scenarioVerdicts };
      await sink.writeManifest(this.manifest);
    }
    this.emit({ type: 'scenario-end', scenario: step.scenario, verdicts });
  }

  /** Phase 5: the final manifest written and the run's result. */
  async finish({ status, error }: RunEnd): Promise<RunSuiteResult> {
    const { scenarioVerdicts } = this;
    const manifest: RunManifest = {
      ...this.manifest,
      status,
      endedAt: this.opts.clock.now().toISOString(),
      stepsCompleted: this.completedCount(),
      ...(scenarioVerdicts.length > 0 ? { scenarioVerdicts } : {}),
      ...(error !== null ? { error } : {}),
    };
    this.manifest = manifest;
    await writeFinalManifest(this.opts, manifest);
    this.emit({ type: 'run-end', status, elapsedSec: this.elapsedSec(), error });
    const ordered = this.stepIds
      .map((id) => this.records.get(id))
      .filter((r): r is StepRecord => r !== undefined);
    const allHeld = runExitCode(status === 'completed', verdictTotals(ordered, scenarioVerdicts)) === 0;
    return { manifest, records: ordered, scenarioVerdicts, allHeld };
  }
}

/** What a run starts from: the previous part's manifest (checked), its finished steps, the first manifest (written). */
interface OpenedRun {
  readonly previous: RunManifest | null;
  readonly done: Set<string>;
  readonly records: Map<string, StepRecord>;
  readonly first: RunManifest;
}

/**
 * Phase 1: open the run — refuse a run directory of another run, read what an earlier part finished
 * (each stored step file once: its id is done, its record feeds the comparisons) and write the
 * manifest `running`.
 */
export async function openRun(opts: RunSuiteOptions, started: Date): Promise<OpenedRun> {
  const { sink } = opts;
  const stepIds = opts.steps.map((s) => s.stepId);
  const previous = await sink.readManifest();
  if (previous) checkResumable(previous, opts);
  // Only this run's step files, of steps of its plan: another is refused, naming it (never skipped,
  // never counted as done).
  const storedSteps = (await sink.readSteps?.({ runId: opts.runId, stepIds })) ?? null;
  const { done, records } =
    storedSteps === null
      ? { done: await sink.completedStepIds(), records: new Map<string, StepRecord>() }
      : finishedSteps(storedSteps, stepIds);
  const first: RunManifest = {
    schemaVersion: RESULT_SCHEMA_VERSION,
    runId: opts.runId,
    suite: opts.suite.name,
    mode: opts.mode,
    settings: opts.settings,
    startedAt: previous?.startedAt ?? started.toISOString(),
    endedAt: null,
    status: 'running',
    environment: opts.environment,
    stepIds,
    stepsCompleted: stepIds.filter((id) => done.has(id)).length,
  };
  await sink.writeManifest(first);
  return { previous, done, records, first };
}

/**
 * Phase 2, per step: the pool size (sweeps) and max_prepared_statements each step asks of its
 * target, applied only when they differ from what that target has now (tracked per target: two
 * proxies in one sweep each need their own resize). Every step of a target that can switch prepared
 * statements runs with its descriptor's value, so a step after a `ps-off` cell does not inherit 0.
 */
export class TargetSettings {
  private readonly poolPercent = new Map<string, number>();
  private readonly prepared = new Map<string, number>();

  constructor(private readonly pool: PoolControl) {}

  async apply(step: PlannedStep, target: Target): Promise<void> {
    const percent = step.params.poolPercent;
    if (
      percent !== null &&
      step.descriptor.capabilities.resizablePool !== null &&
      this.poolPercent.get(target.ref.name) !== percent
    ) {
      await this.pool.setPoolPercent(target.ref, percent);
      this.poolPercent.set(target.ref.name, percent);
    }
    const mps = step.descriptor.settings.maxPreparedStatements;
    if (
      step.descriptor.capabilities.preparedStatementsSwitch?.available === true &&
      mps !== null &&
      this.prepared.get(target.ref.name) !== mps
    ) {
      if (!this.pool.setMaxPreparedStatements)
        throw new Error(`step ${step.stepId}: this run's pool control cannot set max_prepared_statements`);
      await this.pool.setMaxPreparedStatements(target.ref, mps);
      this.prepared.set(target.ref.name, mps);
    }
  }
}

interface RunEnd {
  readonly status: RunStatus;
  readonly error: string | null;
}

/**
 * Phase 3: how a run that threw ends. An abort is `interrupted`; anything else `failed`, with the
 * cause named: a server that died or stopped under a pool reset or pre-check is the cause, and a
 * failed write says how to resume.
 */
export function runEndOf(
  e: unknown,
  opts: Pick<RunSuiteOptions, 'signal' | 'infrastructure' | 'resumeCommand'>,
): RunEnd {
  if (e instanceof Interrupted || opts.signal?.aborted)
    return {
      status: 'interrupted',
      error: 'interrupted before the run finished; resume with the same run id',
    };
  let error = e instanceof Error ? e.message : String(e);
  // A pool reset or pre-check that failed because a server died: the death is the cause.
  const down = opts.infrastructure?.failure() ?? null;
  if (down !== null && !(e instanceof InfrastructureDown))
    error = `infrastructure failure: ${down} (${error})`;
  // A pool reset or pre-check refused because the server or pooler is shutting down.
  else if (!(e instanceof InfrastructureDown) && serverStopMessageIn(error) !== null)
    error = `infrastructure failure (${SERVER_STOPPED}): ${error}`;
  else if (!(e instanceof InfrastructureDown) && socketGoneIn(error) !== null)
    error = `infrastructure failure (${SERVER_STOPPED}): ${socketGoneIn(error) ?? ''}: ${error}`;
  if (e instanceof FileWriteError && opts.resumeCommand)
    error += `; finished steps are kept: free space (or fix the directory) and resume with ${opts.resumeCommand}`;
  return { status: 'failed', error };
}

/**
 * Phase 4, whatever happened: the pool settings restored and the sampler's last metrics written. A
 * failure here fails a run that had completed; it never hides an earlier cause.
 */
async function settleRun(
  opts: RunSuiteOptions,
  sampler: MetricsSampler | undefined,
  flushMetrics: (series: MetricSeries[] | null) => Promise<void>,
  end: RunEnd,
): Promise<RunEnd> {
  let { status, error } = end;
  try {
    await opts.pool.restore();
  } catch (e) {
    if (status === 'completed') {
      status = 'failed';
      error = `restoring pool settings failed: ${(e as Error).message}`;
    }
  }
  if (sampler) {
    try {
      const series = await sampler.stop();
      await flushMetrics(series);
    } catch (e) {
      if (status === 'completed') {
        status = 'failed';
        error = `writing metrics failed: ${(e as Error).message}`;
      }
    }
  }
  return { status, error };
}

/** Phase 5: the final manifest. The disk full (or gone): it stays as last written, and the error says how to go on. */
async function writeFinalManifest(opts: RunSuiteOptions, manifest: RunManifest): Promise<void> {
  try {
    await opts.sink.writeManifest(manifest);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    const resume = opts.resumeCommand ? `; resume with ${opts.resumeCommand}` : '';
    throw new InfrastructureError(
      `run ${opts.runId} ${manifest.status}${manifest.error !== undefined ? ` (${manifest.error})` : ''}, and its manifest could not be updated: ${why}${resume}`,
      { code: 'file-write-failed', cause: e },
    );
  }
}

function assertUniqueIds(ids: readonly string[]): void {
  const files = new Map<string, string>();
  for (const id of ids) {
    const f = stepFileName(id);
    const other = files.get(f);
    if (other !== undefined) throw new Error(`step ids ${other} and ${id} map to the same file ${f}`);
    files.set(f, id);
  }
}

function findTarget(targets: readonly Target[], step: PlannedStep): Target {
  const t = targets.find((x) => x.ref.name === step.target.name);
  if (!t) throw new Error(`step ${step.stepId}: no target ${step.target.name} in this run`);
  return t;
}

/**
 * What we know before running. Clients above what a direct target accepts is an expected refusal:
 * the step still runs so the refusal is measured (the verdict judges it).
 */
async function precheck(step: PlannedStep, target: Target): Promise<string | null> {
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

async function initData(
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
async function executeStep(opts: RunSuiteOptions, step: PlannedStep, target: Target): Promise<ExecutedStep> {
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
      signal: stepSignal(opts.signal, opts.infrastructure?.signal),
    });
    return { outcome, argv, dir, startedAt };
  } finally {
    await opts.executor.removeWorkDir?.(dir);
  }
}

/**
 * A step's status: a server that died (`infraFailure`) or stopped (`stopped`) under it makes it an
 * infrastructure error, even when pgbench also ran into the step timeout; else a timeout, else completed.
 */
export function stepStatusOf(
  infraFailure: string | null,
  stopped: string | null,
  timedOut: boolean,
): StepStatus {
  if (infraFailure !== null || stopped !== null) return 'infrastructure-error';
  return timedOut ? 'timeout' : 'completed';
}

async function runStep(
  opts: RunSuiteOptions,
  step: PlannedStep,
  target: Target,
  precheckNote: string | null,
): Promise<{ record: StepRecord; raw: { stdout: string; stderr: string; log: string | null } }> {
  const executed = await executeStep(opts, step, target);
  const { outcome } = executed;
  if (opts.signal?.aborted) throw new Interrupted();
  const infraFailure = await settledInfrastructureFailure(outcome, opts.infrastructure);
  if (outcome.aborted && infraFailure === null) throw new Interrupted();
  const endedAt = opts.clock.now().toISOString();
  const logs = summarizeStepLogs(outcome.logFiles, {
    samplingRate: step.logSamplingRate,
    throttled: step.params.rate !== null,
  });
  const record = stepRecordOf(opts, step, executed, { endedAt, infraFailure, precheckNote, logs });
  return { record, raw: { stdout: outcome.stdout, stderr: outcome.stderr, log: logs.mergedLog } };
}

/** pgbench's summary with the latency percentiles and series of its logs; a harness kill counted as a timeout. */
function measurementOf(
  outcome: PgbenchOutcome,
  logs: ReturnType<typeof summarizeStepLogs>,
  timeoutSec: number,
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
  return outcome.timedOut ? withTimeoutError(result, timeoutSec) : result;
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
  },
): StepRecord {
  const { infraFailure, logs } = found;
  let result = measurementOf(outcome, logs, step.timeoutSec);
  // The server or pooler stopped under the step (shutdown, restart, crash): not a measurement,
  // unless stopping servers is what this scenario measures.
  const stopped = serverStopCause(result, serverStopPolicy(opts, step));
  const status = stepStatusOf(infraFailure, stopped, outcome.timedOut);
  // The script path lives in the step's throwaway work dir: say <workdir>, as `command` does.
  if (result.transactionType !== null)
    result = { ...result, transactionType: result.transactionType.split(dir).join('<workdir>') };
  const saturation = detectSaturation(step, result, outcome.cpuMaxPercent ?? null);
  const notes = [
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
async function withPoolerSaturation(
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

/** The run's abort and the infrastructure watch's, as one signal for pgbench. */
function stepSignal(run: AbortSignal | undefined, infra: AbortSignal | undefined): AbortSignal | undefined {
  if (run && infra) return AbortSignal.any([run, infra]);
  return run ?? infra;
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
function unavailableRecord(opts: RunSuiteOptions, step: PlannedStep): StepRecord {
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

/** A step the probe runner returned nothing for: not a measurement (a resume measures it again). */
function missingOutcome(step: PlannedStep, start: Date, end: Date): ProbeStepOutcome {
  return {
    stepId: step.stepId,
    status: 'infrastructure-error',
    result: null,
    startedAt: start.toISOString(),
    endedAt: end.toISOString(),
    transcript: '',
    note: `the ${step.probe?.spec.kind ?? ''} probe runner returned no outcome for this step`,
  };
}

/** A harness kill is an error class of its own (the parser may already have added it). */
function withTimeoutError(m: StepMeasurement, timeoutSec: number): StepMeasurement {
  if (m.errors.some((e) => e.class === 'timeout')) return m;
  const timeout: ErrorSummary = {
    class: 'timeout',
    count: 1,
    sample: `killed by the harness after ${timeoutSec} s`,
  };
  return { ...m, complete: false, errors: [...m.errors, timeout] };
}

function lastLines(text: string, n = 3): string {
  return text.trim().split('\n').slice(-n).join(' | ');
}

function scenarioComparisons(
  suite: Suite,
  scenarioName: string,
  steps: readonly PlannedStep[],
  records: ReadonlyMap<string, StepRecord>,
): ScenarioVerdict[] {
  const scenario = suite.scenarios.find((s) => s.name === scenarioName);
  if (!scenario) return [];
  const recs = steps
    .filter((s) => s.scenario === scenarioName)
    .map((s) => records.get(s.stepId))
    .filter((r): r is StepRecord => r !== undefined);
  const byId = new Map(steps.map((s) => [s.stepId, s.descriptor]));
  return judgeScenario(scenario, recs, (r) => byId.get(r.stepId) ?? fallbackDescriptor(r.target)).map(
    (v) => ({
      scenario: scenarioName,
      ...v,
    }),
  );
}

/** ETA from planned durations, corrected by how long finished steps really took. */
class EtaEstimator {
  private plannedDone = 0;
  private actualDone = 0;
  private readonly planned: number[];

  constructor(
    private readonly steps: readonly PlannedStep[],
    overheadSec: number,
  ) {
    // A probe group runs its steps together: its time is counted once, on its first step.
    this.planned = steps.map((s, i) =>
      s.probe && steps[i - 1]?.probe?.group === s.probe.group ? 0 : plannedSec(s) + overheadSec,
    );
  }

  skip(step: PlannedStep): void {
    this.planned[this.indexOf(step)] = 0;
  }

  finish(step: PlannedStep, actualSec: number): void {
    const i = this.indexOf(step);
    const planned = this.planned[i] ?? 0;
    // A step that ended early (refused, every client aborted) says nothing about how long the
    // others take: only steps that ran at least half their plan correct the estimate.
    if (actualSec >= planned / 2) {
      this.plannedDone += planned;
      this.actualDone += actualSec;
    }
    this.planned[i] = 0;
  }

  /** Position of a step of this run; a step from elsewhere is a programming error, not a skip. */
  private indexOf(step: PlannedStep): number {
    const i = this.steps.indexOf(step);
    if (i < 0) throw new Error(`EtaEstimator: step ${step.stepId} is not one of this run's steps`);
    return i;
  }

  /** Seconds left for steps from index `from` on. */
  remainingSec(from: number): number | null {
    const left = this.planned.slice(from).reduce((a, b) => a + b, 0);
    const factor = this.plannedDone > 0 ? this.actualDone / this.plannedDone : 1;
    return Math.round(left * factor);
  }
}

/** Planned seconds of a step: its duration, or an estimate for -t runs. */
function plannedSec(step: PlannedStep): number {
  const probe = step.probe ? probeStepSec(step.probe.spec, step.descriptor) : null;
  if (probe !== null) return probe;
  if (step.params.durationSec !== null) return step.params.durationSec;
  return Math.min(step.timeoutSec, 10);
}
