/** Where a run's results go: the filesystem locally, S3 in the cloud (the engine writes through it). */
import type { RunPlan } from '../suite/plan';
import type { MetricSeries, RunManifest, StepRecord } from '../suite/types';

/** When a step ran, for plotting metrics against steps (local: metrics/steps.json). */
export interface StepWindow {
  readonly stepId: string;
  readonly scenario: string;
  readonly target: string;
  readonly start: string;
  readonly end: string;
}

export interface RawStepFiles {
  readonly stdout: string;
  readonly stderr: string;
  readonly log: string | null;
}

/** What the step files read for a resume must belong to (ResultSink.readSteps). */
export interface StepReadContext {
  /** The run's id: a step file of another run is refused. */
  readonly runId?: string;
  /** The plan's step ids: a step file of a step the plan lacks is refused. */
  readonly stepIds?: readonly string[];
}

/** Where results go: the filesystem locally, S3 in the cloud. Writes happen as soon as data exists. */
export interface ResultSink {
  /** plan.json: the expanded suite, written once before the first step (lib/suite/plan.ts). */
  writePlan?(plan: RunPlan): Promise<void>;
  readPlan?(): Promise<RunPlan | null>;
  writeManifest(manifest: RunManifest): Promise<void>;
  readManifest(): Promise<RunManifest | null>;
  /**
   * Returns the record as stored when the sink stores another one (a fleet's leader stores the
   * record merged from every runner's part, judged on the merged measurement): the engine judges
   * scenario comparisons on what is stored, so the manifest is written right the first time.
   */
  writeStep(record: StepRecord, raw: RawStepFiles): Promise<StepRecord | void>;
  /** Step ids already recorded (for resume). */
  completedStepIds(): Promise<Set<string>>;
  /**
   * Step records already written (for resume: the final table and scenario comparisons); their ids
   * are completedStepIds(), so a caller that reads these need not ask for both. A step file that is
   * not the step it is named after, or (with `run`) of another run or not in the plan, is refused
   * (a RunFileError naming it: resume must not guess).
   */
  readSteps?(run?: StepReadContext): Promise<StepRecord[]>;
  writeMetrics(
    name: string,
    runId: string,
    window: { start: string; end: string },
    series: MetricSeries[],
  ): Promise<void>;
  /** Record step windows (optional: a StepRecord's startedAt/endedAt say the same). */
  writeStepWindows?(runId: string, windows: readonly StepWindow[]): Promise<void>;
}
