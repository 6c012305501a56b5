/**
 * The phases of a run around its steps (lib/engine/run-suite.ts): open or resume the run directory,
 * decide what the loop does with each step, and end the run (how it ended, settings restored,
 * metrics and the final manifest written).
 */
import { FileWriteError } from '../core/atomic-write';
import { InfrastructureError, UsageError } from '../core/errors';
import type { PlannedStep } from '../suite/expand';
import { serverStopMessageIn, socketGoneIn, SERVER_STOPPED } from '../suite/server-stop';
import {
  RESULT_SCHEMA_VERSION,
  stepFileName,
  type MetricSeries,
  type RunManifest,
  type RunStatus,
  type StepRecord,
} from '../suite/types';
import { finishedSteps } from './plan-or-resume';
import type { MetricsSampler } from './ports';
import type { RunSuiteOptions } from './run-options';

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
export class Interrupted extends Error {}

/** The infrastructure under test died: the run ends `failed` with this cause. Never escapes runSuite. */
export class InfrastructureDown extends Error {
  constructor(cause: string) {
    super(`infrastructure failure: ${cause}`);
  }
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

/** What a run starts from: the previous part's manifest (checked), its finished steps, the first manifest (written). */
export interface OpenedRun {
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

export interface RunEnd {
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
export async function settleRun(
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
export async function writeFinalManifest(opts: RunSuiteOptions, manifest: RunManifest): Promise<void> {
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

export function assertUniqueIds(ids: readonly string[]): void {
  const files = new Map<string, string>();
  for (const id of ids) {
    const f = stepFileName(id);
    const other = files.get(f);
    if (other !== undefined) throw new Error(`step ids ${other} and ${id} map to the same file ${f}`);
    files.set(f, id);
  }
}
