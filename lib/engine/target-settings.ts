/** The pool settings each step asks of its target (lib/engine/run-suite.ts, phase 2). */
import type { PlannedStep } from '../suite/expand';
import type { PoolControl, Target } from './ports';

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
