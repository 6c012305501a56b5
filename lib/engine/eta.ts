/** The run's ETA (lib/engine/run-suite.ts): planned step durations corrected by the measured ones. */
import type { PlannedStep } from '../suite/expand';
import { probeStepSec } from '../suite/probes';

/** ETA from planned durations, corrected by how long finished steps really took. */
export class EtaEstimator {
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
