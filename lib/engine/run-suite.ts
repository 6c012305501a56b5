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
 *
 * The loop and the run's state are here; the phases around it in run-phases.ts (open, resume, end),
 * one pgbench step in pgbench-step.ts, pool settings in target-settings.ts, the ETA in eta.ts, and
 * the options and progress events in run-options.ts.
 */
import type { PlannedStep } from '../suite/expand';
import { fallbackDescriptor } from '../suite/targets';
import type { Suite } from '../suite/catalog';
import type { MetricSeries, RunManifest, ScenarioVerdict, StepRecord } from '../suite/types';
import { judgeScenario, runExitCode, verdictTotals } from '../suite/verdict';
import { EtaEstimator } from './eta';
import { HungCheck, withDatabaseActivity } from './hung';
import {
  findTarget,
  initData,
  precheck,
  runStep,
  unavailableRecord,
  withPoolerSaturation,
} from './pgbench-step';
import { probeGroupMembers, probeRecord, probeRunnerFor, probeUnavailable } from './probe-steps';
import type { ProbeStepOutcome, StepWindow, Target } from './ports';
import type { ProgressEvent, RunSuiteOptions, RunSuiteResult } from './run-options';
import {
  assertUniqueIds,
  checkMeasured,
  Interrupted,
  openRun,
  runEndOf,
  settleRun,
  stepAction,
  writeFinalManifest,
  type OpenedRun,
  type RunEnd,
} from './run-phases';
import { TargetSettings } from './target-settings';

export type { ProgressEvent, RunSuiteOptions, RunSuiteResult } from './run-options';
export { checkMeasured, openRun, runEndOf, stepAction, type StepAction } from './run-phases';
export { stepStatusOf } from './pgbench-step';
export { TargetSettings } from './target-settings';

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
    const hung = new HungCheck(step, opts.clock, opts.clock.now());
    const watch = await opts.serverConnections?.watch({ onSample: hung.onSample });
    const stepStart = opts.clock.now();
    opts.sampler?.markStep(step.stepId, 'start');
    const measured = await runStep(opts, step, target, note, hung).finally(() => watch?.stop());
    opts.sampler?.markStep(step.stepId, 'end');
    const held = watch ? { serverConnections: await watch.stop() } : {};
    const record = await withPoolerSaturation(
      withDatabaseActivity({ ...measured.record, ...held }, watch?.activity?.()),
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
