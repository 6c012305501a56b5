/**
 * One plan per run, for `proxylab local` and the cloud runners alike: a run that already has a
 * plan.json runs that plan again (checked against this run first — same PgBouncer, same runner
 * count), and a new run expands its suite once into a plan and stores it before the first step. And
 * what a resume finds already done: the step records kept, with the ones the infrastructure failed
 * in (never measured) set apart so they run again.
 *
 * Every plan a run is about to execute, stored or fresh, is refused when a script of it runs shell
 * commands (`\shell`, `\setshell`; lib/suite/pgbench-script.ts): the last line of defence behind
 * lab validation and the run request's schema, for a plan.json found in a run directory or bucket.
 */
import { UsageError } from '../core/errors';
import type { PlannedStep } from '../suite/expand';
import { firstShellScriptProblem } from '../suite/pgbench-script';
import { plannedSteps, type RunPlan } from '../suite/plan';
import type { StepRecord } from '../suite/types';
import type { ResultSink } from './ports';

export interface ResolvedPlan {
  readonly plan: RunPlan;
  readonly steps: PlannedStep[];
  /** The plan was made now (and written when asked); false when the run's stored plan is resumed. */
  readonly isNew: boolean;
}

export interface PlanOrResumeOptions {
  /** The run's stored plan (read by the caller, who may have waited for it); null for a new run. */
  readonly stored: RunPlan | null;
  /** Refuses (throws a UsageError) a stored plan this run cannot resume. */
  readonly check: (stored: RunPlan) => void;
  /** The plan of a new run: the suite expanded against the targets as they are. */
  readonly fresh: () => RunPlan;
  /** Store a new plan as plan.json now (a fleet's runner 0; a local run). */
  readonly write: boolean;
}

/** The run's plan and steps: the stored one checked, else a new one (stored when `write`). */
export async function planOrResume(
  sink: Pick<ResultSink, 'writePlan'>,
  o: PlanOrResumeOptions,
): Promise<ResolvedPlan> {
  if (o.stored) {
    o.check(o.stored);
    const steps = plannedSteps(o.stored);
    refuseShellScripts(steps, 'the stored plan (plan.json) of this run');
    return { plan: o.stored, steps, isNew: false };
  }
  const plan = o.fresh();
  refuseShellScripts(plannedSteps(plan), 'the plan of this run');
  if (o.write) {
    if (!sink.writePlan) throw new Error('this result sink cannot store plan.json');
    await sink.writePlan(plan);
  }
  return { plan, steps: plannedSteps(plan), isNew: true };
}

/** Throws a UsageError (`shell-script-refused`) when a step's script runs shell commands. */
function refuseShellScripts(steps: readonly PlannedStep[], what: string): void {
  const problem = firstShellScriptProblem(
    steps.flatMap((s) => s.script.parts.flatMap((p) => ('file' in p ? [p.file] : []))),
  );
  if (problem !== null)
    throw new UsageError(`${what}: ${problem}; nothing was run`, { code: 'shell-script-refused' });
}

/** What a run holds of its steps, for resume. */
export interface FinishedSteps {
  /** Ids of the steps measured (or recorded as not available): a resume skips them. */
  readonly done: Set<string>;
  /** Their records, by step id, for the steps of `stepIds` (the scenario comparisons use them). */
  readonly records: Map<string, StepRecord>;
}

/**
 * The finished steps among stored records. A step the infrastructure failed in was never measured:
 * it is not done, and a resume measures it again.
 */
export function finishedSteps(stored: readonly StepRecord[], stepIds: readonly string[]): FinishedSteps {
  const wanted = new Set(stepIds);
  const done = new Set<string>();
  const records = new Map<string, StepRecord>();
  for (const r of stored) {
    if (r.status === 'infrastructure-error') continue;
    done.add(r.stepId);
    if (wanted.has(r.stepId)) records.set(r.stepId, r);
  }
  return { done, records };
}
