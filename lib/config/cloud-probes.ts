/**
 * Why a cloud run cannot measure a probe step, whatever its target (pure): the reasons the runner's
 * probe runners record a step `not-available` with (lib/runner/disruptions.ts,
 * lib/runner/session-probe-runner.ts), asked before a run too — by the plan `proxylab plan`,
 * `validate` and `run --dry-run` show (lib/cost/run-plan.ts) — so the plan says what the runners
 * will do, in their words. What depends on the run's live targets (a session-state run without a
 * direct target) stays with the runner.
 */
import type { ProbeSpec } from '../suite/probes';
import { cloudDisruptionUnavailable, labDatabaseShape, type CloudDisruptionRun } from './disruptions';
import type { LabConfig } from './types';
import { POOLER_CONTROL_PORT } from '../poolers/endpoint';

/** What decides whether a cloud run can measure a probe step: the lab's database and the run's runners. */
export type CloudProbeRun = CloudDisruptionRun;

/**
 * Why a cloud run of `runnerCount` runners cannot measure session-state steps, or null: the
 * probe's two clients are one runner's, and the fleet merge carries no probe result.
 */
export function cloudSessionStateUnavailable(runnerCount: number): string | null {
  return runnerCount > 1
    ? `session-state probes run on a single runner (this run has ${runnerCount}): the fleet merge carries no probe result`
    : null;
}

/** Why a cloud run cannot measure a step of `spec`, or null when its kind can run here. */
export function cloudProbeUnavailable(spec: ProbeSpec, run: CloudProbeRun): string | null {
  switch (spec.kind) {
    case 'disruption':
      return cloudDisruptionUnavailable(spec.disruption.action, run);
    case 'session-state':
      return cloudSessionStateUnavailable(run.runnerCount);
  }
}

/** The run a lab file describes: its database (by role), its runners and its poolers (deployed by this kit: with the control channel). */
export function labProbeRun(lab: Pick<LabConfig, 'database' | 'runners' | 'poolers'>): CloudProbeRun {
  return {
    database: labDatabaseShape(lab.database),
    runnerCount: lab.runners.count,
    poolers: lab.poolers.map((p) => ({ name: p.name, controlPort: POOLER_CONTROL_PORT })),
  };
}
