/**
 * One plan per run (pure): the suite expanded once, with each step's target descriptor,
 * parameters, expectation and per-runner shares, and the environment probed before the first step.
 * Stored as `plan.json` in the run directory (lib/results/run-paths.ts; written by
 * lib/results/plan-file.ts, each script file's text once) and validated by its schema
 * (lib/results/schemas.ts). No secrets: descriptors, endpoints' names and settings only.
 *
 * `report` / `compare` of a run use the plan stored with it; a run without plan.json (written by an
 * older release) is labelled from today's catalog with `fallbackDescriptor`, and the report says so.
 */
import type { PlanScenario } from './coverage';
import type { PlannedStep } from './expand';
import type { TargetDescriptor } from './targets';
import type { RunEnvironment, RunManifest } from './types';
import { RESULT_SCHEMA_VERSION } from './types';

/** A planned step with each runner's part of it. */
export interface PlanStep extends PlannedStep {
  readonly shares: readonly RunnerShare[];
}

/** plan.json (schema: lib/results/schemas.ts planSchema). */
export interface RunPlan {
  readonly schemaVersion: typeof RESULT_SCHEMA_VERSION;
  readonly runId: string;
  readonly suite: string;
  readonly mode: RunManifest['mode'];
  readonly createdAt: string;
  /** What was probed before the first step (no secrets). */
  readonly environment: RunEnvironment;
  readonly targets: readonly TargetDescriptor[];
  readonly runnerCount: number;
  readonly steps: readonly PlanStep[];
  /**
   * Each scenario of the suite: what it re-runs, the source of that finding, and every target of
   * the run with its steps or why it has none — so a report can name a lab's own scenario and
   * nothing is skipped silently. Absent in plans written before it existed.
   */
  readonly scenarios?: readonly PlanScenario[];
}

/** What a runner does of a step. */
export interface RunnerShare {
  readonly runnerIndex: number;
  /** 0 when the step has fewer clients than there are runners: this runner sits the step out. */
  readonly clients: number;
  readonly jobs: number;
  /** pgbench --rate share (transactions per second), null when the step is not rate-limited. */
  readonly rate: number | null;
}

/** The load parameters of a step that get divided. */
export interface SplittableStep {
  readonly clients: number;
  readonly jobs: number;
  readonly rate?: number | null;
}

/** Divide `total` into `parts` integers that differ by at most one; the first ones get the remainder. */
export function divideEvenly(total: number, parts: number): number[] {
  if (!Number.isInteger(total) || total < 0)
    throw new RangeError(`total must be a non-negative integer, got ${total}`);
  if (!Number.isInteger(parts) || parts < 1)
    throw new RangeError(`parts must be a positive integer, got ${parts}`);
  const base = Math.floor(total / parts);
  const remainder = total % parts;
  return Array.from({ length: parts }, (_, i) => base + (i < remainder ? 1 : 0));
}

/**
 * Split a step's clients, jobs and rate across `runnerCount` runners.
 * Clients differ by at most one between runners; no runner gets 0 clients unless the step has
 * fewer clients than runners. Jobs are divided the same way, at least 1 and at most the runner's
 * clients (pgbench refuses more threads than clients). Rate is divided in proportion to clients.
 */
export function splitStep(step: SplittableStep, runnerCount: number): RunnerShare[] {
  if (!Number.isInteger(step.clients) || step.clients < 1) {
    throw new RangeError(`step clients must be a positive integer, got ${step.clients}`);
  }
  if (!Number.isInteger(step.jobs) || step.jobs < 1)
    throw new RangeError(`step jobs must be a positive integer, got ${step.jobs}`);
  const clients = divideEvenly(step.clients, runnerCount);
  const jobs = divideEvenly(step.jobs, runnerCount);
  const rate = step.rate ?? null;
  return clients.map((c, i) => ({
    runnerIndex: i,
    clients: c,
    jobs: c === 0 ? 0 : Math.min(c, Math.max(1, jobs[i] ?? 1)),
    rate: rate === null || c === 0 ? null : (rate * c) / step.clients,
  }));
}

/** A plan's header as given (schemaVersion is filled in), its steps before the split. */
export interface BuildPlanInput extends Omit<RunPlan, 'schemaVersion' | 'runnerCount' | 'steps'> {
  readonly steps: readonly PlannedStep[];
  /** @default 1 */
  readonly runnerCount?: number;
}

export function buildPlan(input: BuildPlanInput): RunPlan {
  const runnerCount = input.runnerCount ?? 1;
  return {
    schemaVersion: RESULT_SCHEMA_VERSION,
    runId: input.runId,
    suite: input.suite,
    mode: input.mode,
    createdAt: input.createdAt,
    environment: input.environment,
    targets: [...input.targets],
    runnerCount,
    ...(input.scenarios !== undefined ? { scenarios: [...input.scenarios] } : {}),
    steps: input.steps.map((s) => ({
      ...s,
      shares: splitStep({ clients: s.params.clients, jobs: s.params.jobs, rate: s.params.rate }, runnerCount),
    })),
  };
}

/** The planned steps of a stored plan, in order (what the engine runs). */
export function plannedSteps(plan: RunPlan): PlannedStep[] {
  return plan.steps.map(({ shares: _shares, ...step }) => step);
}
