/**
 * Will a run end before its lab expires? (issue 14 item 6). `proxylab run` estimates the suite's
 * duration from the lab file alone (before any AWS call), reads when the expiry schedule fires,
 * and refuses a run whose estimated end — plus the wait for the metrics to settle and a margin —
 * is past it, unless told to extend the lab (`--extend`), by exactly the hours missing.
 */
import { UsageError } from '../core/errors';
import type { LabConfig } from '../config/types';
import { getSuite } from '../suite/catalog';
import { expandSuite, initPlan, type PlannedStep, type TargetCapacity } from '../suite/expand';
import { poolerDeployments } from '../poolers/endpoint';
import { labTargets } from '../config/targets';
import { processPoolSize } from '../poolers/pool-size';
import { METRICS_SETTLE_MS } from '../aws/collector-invoke';
import { probeStepSec } from '../suite/probes';

/**
 * max_connections assumed when the lab leaves Aurora's default: about the default of a
 * db.t4g.medium (LEAST(DBInstanceClassMemory/9531392, 5000) with 4 GiB). Only the number of steps
 * depends on it, through client counts relative to max_connections.
 */
export const ASSUMED_MAX_CONNECTIONS = 400;
/** Per step: pool changes, pauses, writing records. Per pgbench init: loading data. */
export const STEP_OVERHEAD_SEC = 15;
export const INIT_SEC = 120;
/** Slack on top of the estimate (runners starting, a slow step). */
export const EXPIRY_MARGIN_SEC = 15 * 60;

/** Seconds of load the engine plans for a step (as run-suite's ETA does; a probe step as its kind says). */
function plannedSec(step: PlannedStep): number {
  const probe = step.probe ? probeStepSec(step.probe.spec, step.descriptor) : null;
  return probe ?? step.params.durationSec ?? Math.min(step.timeoutSec, 10);
}

/**
 * The targets the runners will measure on `lab`, with the capacities expansion needs: the writer,
 * every proxy and every pooler × pool mode, sized as the runner sizes them (runner.ts, with
 * PoolerTarget.poolSize). A target left out here is time the estimate does not count.
 */
export function labTargetCapacities(lab: LabConfig, maxConnections: number): TargetCapacity[] {
  return labTargets(lab).map((t): TargetCapacity => {
    switch (t.role) {
      case 'writer':
        return { ref: t.ref, maxConnections, poolSize: null };
      case 'proxy':
        return {
          ref: t.ref,
          maxConnections,
          poolSize: Math.floor((maxConnections * t.proxy.maxConnectionsPercent) / 100),
        };
      case 'pooler': {
        const p = t.pooler;
        const sharedBy = poolerDeployments(p.placement, lab.runners.count);
        const poolSize =
          processPoolSize(p.poolPercent, maxConnections, p.processes, sharedBy) * p.processes * sharedBy;
        return { ref: t.ref, maxConnections, poolSize };
      }
    }
  });
}

/** Estimated wall-clock seconds of `suiteName` on `lab`, through the end of the metrics collection. */
export function estimateSuiteSec(suiteName: string, lab: LabConfig): number {
  const maxConnections = lab.database.maxConnections ?? ASSUMED_MAX_CONNECTIONS;
  const steps = expandSuite(getSuite(suiteName), labTargetCapacities(lab, maxConnections));
  const load = steps.reduce((sum, s) => sum + plannedSec(s) + STEP_OVERHEAD_SEC, 0);
  return load + initPlan(steps).length * INIT_SEC + METRICS_SETTLE_MS / 1000;
}

export type ExpiryDecision =
  | { readonly kind: 'fits'; readonly estimatedEnd: Date }
  | { readonly kind: 'no-expiry' }
  | { readonly kind: 'extend'; readonly estimatedEnd: Date; readonly hours: number };

/**
 * The decision for a run starting at `now`: fits, extend by `hours` (when allowed), or a
 * UsageError that names the estimate, the expiry and the two ways out.
 */
export function decideRunExpiry(input: {
  readonly now: Date;
  readonly estimatedSec: number;
  readonly expiresAt: Date | null;
  readonly allowExtend: boolean;
  readonly suite: string;
  readonly labFile: string;
}): ExpiryDecision {
  if (input.expiresAt === null) return { kind: 'no-expiry' };
  const estimatedEnd = new Date(input.now.getTime() + (input.estimatedSec + EXPIRY_MARGIN_SEC) * 1000);
  if (estimatedEnd.getTime() <= input.expiresAt.getTime()) return { kind: 'fits', estimatedEnd };
  const hours = Math.ceil((estimatedEnd.getTime() - input.expiresAt.getTime()) / 3_600_000);
  if (input.allowExtend) return { kind: 'extend', estimatedEnd, hours };
  throw new UsageError(
    `suite ${input.suite} takes about ${Math.ceil(input.estimatedSec / 60)} min (with the metrics collection and a ` +
      `${EXPIRY_MARGIN_SEC / 60}-min margin it would end at ${iso(estimatedEnd)}), but the lab expires at ` +
      `${iso(input.expiresAt)} and its results would go with it. Extend first ` +
      `(npx proxylab extend --lab ${input.labFile} --hours ${hours}) or run with --extend`,
  );
}

function iso(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
