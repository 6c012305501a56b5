/**
 * What the files of one run must say about each other, checked wherever they are read: a step file
 * holds the step it is named after (`steps/<stepFileName(stepId)>.json`), of this run, planned by
 * this run's plan; plan.json and manifest.json name the same run, suite, mode and steps. A schema
 * checks one file alone; these check that the files are one run's. An edited `stepId` would
 * otherwise make a resume re-measure one step and skip another that was never measured, and a
 * report print one measurement twice (issue 38).
 *
 * Each check returns the field and the problem (null when the files agree); the readers decide what
 * a problem is: the tolerant reader (run-reader.ts) leaves the step file out with a warning (the
 * report says PARTIAL) and refuses a plan that contradicts its manifest; the strict one (run-store.ts,
 * resume) stops with the error naming the file.
 */
import { RunFileError } from '../core/errors';
import type { RunPlan } from '../suite/plan';
import type { RunManifest, StepRecord } from '../suite/types';
import { stepPaths } from './run-paths';

export interface RunFileProblem {
  /** The field the problem is in (`stepId`, `runId`, `suite` …). */
  readonly field: string;
  /** In words, starting with the field (`stepId: …`). */
  readonly problem: string;
}

/** What a step file of the run is checked against; a field left null is not checked. */
export interface StepFileContext {
  /** The run's id (manifest.json's); null: not known to the reader. */
  readonly runId: string | null;
  /** The steps of the run's plan; null: the run has no plan.json (a release before it). */
  readonly stepIds: ReadonlySet<string> | null;
}

/** The context of a run as its manifest and plan give it. */
export function stepFileContext(
  manifest: Pick<RunManifest, 'runId'> | null,
  plan: Pick<RunPlan, 'steps'> | null,
): StepFileContext {
  return {
    runId: manifest?.runId ?? null,
    stepIds: plan === null ? null : new Set(plan.steps.map((s) => s.stepId)),
  };
}

/**
 * Why the step record read from `key` (`steps/x.json`, relative to the run) is not a step of this
 * run: its stepId is another file's, its runId another run's, or its step is not in the plan.
 */
export function stepFileProblem(
  key: string,
  record: Pick<StepRecord, 'stepId' | 'runId'>,
  context: StepFileContext,
): RunFileProblem | null {
  const own = stepPaths(record.stepId).json;
  if (key !== own)
    return {
      field: 'stepId',
      problem: `stepId: ${JSON.stringify(record.stepId)} is the step of ${own}, not of this file (a step file is named after its step id)`,
    };
  if (context.runId !== null && record.runId !== context.runId)
    return {
      field: 'runId',
      problem: `runId: ${JSON.stringify(record.runId)} is another run's; this run is ${JSON.stringify(context.runId)}`,
    };
  if (context.stepIds !== null && !context.stepIds.has(record.stepId))
    return {
      field: 'stepId',
      problem: `stepId: ${JSON.stringify(record.stepId)} is not a step of this run's plan (plan.json)`,
    };
  return null;
}

/** The step record of `key`, or a RunFileError naming `where` when it is not a step of this run. */
export function checkStepFile<R extends Pick<StepRecord, 'stepId' | 'runId'>>(
  key: string,
  where: string,
  record: R,
  context: StepFileContext,
): R {
  const p = stepFileProblem(key, record, context);
  if (p !== null) throw new RunFileError(where, p.field, p.problem);
  return record;
}

/** What a plan must share with the run it belongs to: from manifest.json, or from the run being resumed. */
export interface RunIdentity {
  readonly runId: string;
  readonly suite: string;
  readonly mode: RunManifest['mode'];
  /** The steps in the manifest's order; absent: not compared (the run's own arguments list none). */
  readonly stepIds?: readonly string[];
}

/** Why plan.json is not the plan of `run` (null when it is). */
export function planIdentityProblem(
  plan: Pick<RunPlan, 'runId' | 'suite' | 'mode' | 'steps'>,
  run: RunIdentity,
  runSource: string,
): RunFileProblem | null {
  const differs = (field: 'runId' | 'suite' | 'mode'): RunFileProblem | null =>
    plan[field] === run[field]
      ? null
      : {
          field,
          problem: `${field}: ${JSON.stringify(plan[field])}, but ${runSource} says ${JSON.stringify(run[field])}`,
        };
  const first = differs('runId') ?? differs('suite') ?? differs('mode');
  if (first !== null || run.stepIds === undefined) return first;
  const planned = plan.steps.map((s) => s.stepId);
  const at = planned.findIndex((id, i) => id !== run.stepIds?.[i]);
  if (at < 0 && planned.length === run.stepIds.length) return null;
  const index = at < 0 ? planned.length : at;
  return {
    field: `steps.${index}.stepId`,
    problem:
      `steps: the plan's ${planned.length} steps are not the ${run.stepIds.length} ${runSource} lists ` +
      `(step ${index + 1}: ${JSON.stringify(planned[index] ?? null)} in the plan, ${JSON.stringify(run.stepIds[index] ?? null)} in ${runSource})`,
  };
}

/** The plan, or a RunFileError naming `where` (plan.json) when it is not the plan of `run`. */
export function checkPlanIdentity<P extends Pick<RunPlan, 'runId' | 'suite' | 'mode' | 'steps'>>(
  plan: P,
  run: RunIdentity,
  runSource: string,
  where: string,
): P {
  const p = planIdentityProblem(plan, run, runSource);
  if (p !== null) throw new RunFileError(where, p.field, p.problem);
  return plan;
}
