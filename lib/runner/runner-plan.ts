/**
 * Phases 4 and 5 of the cloud runner (./runner.ts): one plan per run, stored with it (runner 0
 * writes it, the others wait for it, a resume checks it), and the fleet's agreed start.
 */
import { InfrastructureError, UsageError } from '../core/errors';
import type { Target } from '../engine/ports';
import { planOrResume } from '../engine/plan-or-resume';
import type { Suite } from '../suite/catalog';
import { expandSuite, type PlannedStep, type TargetCapacity } from '../suite/expand';
import type { RunEnvironment, RunManifest } from '../suite/types';
import { buildPlan, type RunPlan } from '../suite/plan';
import { planScenarios } from '../suite/coverage';
import type { RunnerArgs } from '../aws/runner-args';
import type { S3ResultSink } from '../aws/s3-sink';
import { checkPlanIdentity } from '../results/run-consistency';
import { RUN_PATHS } from '../results/run-paths';
import type { Logger } from '../aws/secrets';
import type { RunnerDeps } from './runner-deps';

export function checkResumable(prev: RunManifest, args: RunnerArgs): void {
  const problems: string[] = [];
  if (prev.mode !== 'cloud') problems.push(`it is a ${prev.mode} run`);
  if (prev.suite !== args.suite) problems.push(`it ran suite ${prev.suite}, not ${args.suite}`);
  const prevCount = prev.settings.runnerCount;
  if (typeof prevCount === 'number' && prevCount !== args.runnerCount)
    problems.push(`it ran on ${prevCount} runners, not ${args.runnerCount}`);
  if (problems.length > 0)
    throw new UsageError(`cannot resume run ${args.runId}: ${problems.join('; ')}; use a new run id`);
}

/**
 * Runners other than 0 run the plan runner 0 stored; wait for it as long as for a step barrier.
 * Called once the first read found none (so the wait is logged only when there is one).
 */
async function waitForPlan(
  sink: S3ResultSink,
  args: RunnerArgs,
  deps: RunnerDeps,
  log: Logger,
  me: string,
): Promise<RunPlan> {
  const deadline = deps.clock.now().getTime() + args.barrierTimeoutSec * 1000;
  log.info(`${me}: waiting for runner 0 to store the plan (plan.json)`);
  for (;;) {
    if (deps.signal?.aborted) throw new InfrastructureError(`${me}: interrupted while waiting for the plan`);
    if (deps.clock.now().getTime() > deadline)
      throw new InfrastructureError(
        `${me}: runner 0 did not store plan.json within ${args.barrierTimeoutSec} s (s3://${args.bucket}/runs/${args.runId}/plan.json)`,
      );
    await deps.clock.sleep(deps.pollMs ?? 2000);
    const plan = await sink.readPlan();
    if (plan) return plan;
  }
}

/**
 * Phase 4: one plan per run, stored with it: runner 0 expands the suite and writes plan.json; the
 * other runners execute their share of that stored plan (they wait for it), and a resume runs it again.
 */
export async function planCloudRun(
  args: RunnerArgs,
  deps: RunnerDeps,
  suite: Suite,
  s3Sink: S3ResultSink,
  targets: readonly Target[],
  capacities: readonly TargetCapacity[],
  environment: RunEnvironment,
  log: Logger,
  me: string,
): Promise<readonly PlannedStep[]> {
  let stored = await s3Sink.readPlan();
  if (!stored && args.runnerIndex > 0) stored = await waitForPlan(s3Sink, args, deps, log, me);
  const noSteps = (): UsageError =>
    new UsageError(
      `suite ${suite.name} has no step for this lab's targets (${targets.map((t) => t.ref.name).join(', ')})`,
    );
  const { steps } = await planOrResume(s3Sink, {
    stored,
    check: (plan) => {
      // The plan of this run (its id, suite and mode; the engine checks manifest.json the same way).
      checkPlanIdentity(
        plan,
        { runId: args.runId, suite: suite.name, mode: 'cloud' },
        'the run request',
        s3Sink.blobs.where(RUN_PATHS.plan),
      );
      if (plan.runnerCount !== args.runnerCount)
        throw new UsageError(
          `run ${args.runId}: its plan is for ${plan.runnerCount} runner(s), not ${args.runnerCount}; use a new run id`,
        );
      if (plan.steps.length === 0) throw noSteps();
    },
    fresh: () => {
      const expanded = expandSuite(suite, capacities);
      if (expanded.length === 0) throw noSteps();
      return buildPlan({
        runId: args.runId,
        suite: suite.name,
        mode: 'cloud',
        createdAt: deps.clock.now().toISOString(),
        environment,
        targets: targets.flatMap((t) => (t.descriptor ? [t.descriptor] : [])),
        steps: expanded,
        runnerCount: args.runnerCount,
        // Per scenario: what it re-runs and why any target is left out (nothing skipped silently).
        scenarios: planScenarios(suite, capacities, expanded),
      });
    },
    write: args.runnerIndex === 0,
  });
  return steps;
}

/** Phase 5: a fleet starts together, at the start time the operator agreed with every runner. */
export async function waitForAgreedStart(
  args: RunnerArgs,
  deps: RunnerDeps,
  log: Logger,
  me: string,
): Promise<void> {
  if (!args.startAt) return;
  const waitMs = Date.parse(args.startAt) - deps.clock.now().getTime();
  if (waitMs > 0) {
    log.info(`${me}: waiting ${Math.round(waitMs / 1000)} s for the agreed start ${args.startAt}`);
    await deps.clock.sleep(waitMs);
  }
}
