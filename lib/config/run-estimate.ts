/**
 * How long a run of planned steps takes on a lab (pure): what `proxylab plan` shows and `proxylab
 * run` checks against the lab's expiry (lib/operator/run-window.ts). Step seconds come from the
 * plan itself (`expandSuite` against the lab's targets, `labTargetCapacities`), so a target the
 * runners measure cannot be missing from the estimate.
 */
import type { PlannedStep } from '../suite/expand';
import { initPlan } from '../suite/expand';
import { probeStepSec } from '../suite/probes';

/** Per step: pool changes, pauses, writing records. */
export const STEP_OVERHEAD_SEC = 15;
/** Per pgbench init (`pgbench -i` at a scale the plan needs): loading data. */
export const INIT_SEC = 120;
/**
 * How long after a run's end its metrics are worth collecting: RDS and RDS Proxy publish each
 * 1-minute CloudWatch datapoint a few minutes after its period (and PI its counters about as
 * late). Runner 0 waits this long before it invokes the collector (lib/aws/collector-invoke.ts).
 */
export const METRICS_SETTLE_SEC = 5 * 60;
/** Slack on top of the estimate before a lab's expiry (runners starting, a slow step). */
export const EXPIRY_MARGIN_SEC = 15 * 60;

/**
 * Seconds of load the engine plans for a step (as run-suite's ETA does): a probe step as its kind
 * says, else -T, or 10 s for a -t step.
 */
export function plannedSec(step: PlannedStep): number {
  const probe = step.probe ? probeStepSec(step.probe.spec, step.descriptor) : null;
  return probe ?? step.params.durationSec ?? Math.min(step.timeoutSec, 10);
}

/**
 * What a run spends its time on, in the order it runs: each pgbench step alone, each probe group
 * once — its steps run together (one disruption under every target of a repetition; the engine's
 * measureProbeGroup) — and nothing for a step planned not available (recorded at once, nothing run).
 */
export interface RunUnit {
  readonly steps: readonly PlannedStep[];
  /** Seconds of load: the longest of its steps (a group's steps share one window). */
  readonly sec: number;
}

export function runUnits(steps: readonly PlannedStep[]): RunUnit[] {
  const units: Array<{ steps: PlannedStep[]; sec: number }> = [];
  const byGroup = new Map<string, { steps: PlannedStep[]; sec: number }>();
  for (const s of steps) {
    if (s.unavailable !== null) continue;
    const group = s.probe?.group;
    const unit = group === undefined ? undefined : byGroup.get(group);
    if (unit) {
      unit.steps.push(s);
      unit.sec = Math.max(unit.sec, plannedSec(s));
      continue;
    }
    const fresh = { steps: [s], sec: plannedSec(s) };
    units.push(fresh);
    if (group !== undefined) byGroup.set(group, fresh);
  }
  return units;
}

export interface RunDurationEstimate {
  /** Load and per-step overhead of every step that runs, a probe group's once. */
  readonly stepsSec: number;
  /** Steps measured together with an earlier step of their probe group: counted with it. */
  readonly together: number;
  /** Steps planned not available: recorded as such, nothing run, no time. */
  readonly notAvailable: number;
  /** Data loads (one per distinct scale and init flags of the pgbench steps that run). */
  readonly initCount: number;
  readonly initSec: number;
  /** The wait for the metrics to settle before they are collected. */
  readonly settleSec: number;
  /** All of it: the run's wall clock through the end of the metrics collection. */
  readonly totalSec: number;
}

/**
 * The estimated wall clock of `steps` on a cloud lab, through the metrics collection: each unit
 * (`runUnits`) with its overhead, and a data load for each scale the pgbench steps that run need
 * (a probe step loads no pgbench data).
 */
export function estimateRunSec(steps: readonly PlannedStep[]): RunDurationEstimate {
  const units = runUnits(steps);
  const stepsSec = units.reduce((sum, u) => sum + u.sec + STEP_OVERHEAD_SEC, 0);
  const runs = units.flatMap((u) => u.steps);
  const initCount = initPlan(runs.filter((s) => !s.probe)).length;
  const initSec = initCount * INIT_SEC;
  return {
    stepsSec,
    together: runs.length - units.length,
    notAvailable: steps.filter((s) => s.unavailable !== null).length,
    initCount,
    initSec,
    settleSec: METRICS_SETTLE_SEC,
    totalSec: stepsSec + initSec + METRICS_SETTLE_SEC,
  };
}
