/**
 * The session-state probe runner on a cloud runner (lib/exec/session-probe.ts sessionProbeRunner):
 * the lab's writer is the database itself (setup and NOTIFY as the lab's master user, which may
 * create roles); a lab pooler (PgBouncer, PgDoorman) is narrowed to one server connection per
 * process for the step (PoolerPoolControl.narrowToOne) and reset before each feature; an RDS Proxy
 * cannot be narrowed — MaxConnectionsPercent is at least 1 % of max_connections and the proxy keeps
 * idle connections (MaxIdleConnectionsPercent) — so whether B shares A's server connection is
 * observed from the server process ids, not forced, and a proxy's pins are read afterwards from
 * DatabaseConnectionsCurrentlySessionPinned (dimension ProxyName = the DBProxyName the collector
 * reads), each feature holding its state for one whole metric period.
 *
 * A fleet: the probe's two clients are one runner's; the fleet merge carries no probe results yet,
 * so a run with several runners records session-state steps as not available.
 */
import { cloudSessionStateUnavailable } from '../config/cloud-probes';
import type { ProbeRunner, Target } from '../engine/ports';
import { sessionProbeRunner } from '../exec/session-probe';
import { PINNED_METRIC } from '../suite/session-state';
import { sessionHandling, targetInstance } from '../suite/targets';
import type { TargetRef } from '../suite/types';

export interface CloudSessionProbeOptions {
  readonly targets: readonly Target[];
  readonly runnerCount: number;
  /** Lab proxy name → DBProxyName (the CloudWatch ProxyName dimension). */
  readonly proxyNames: Readonly<Record<string, string>>;
  /** A lab pooler narrowed to one server connection (null: not one this runner changes). */
  readonly narrow: (target: TargetRef) => Promise<{ sharing: string; restore: () => Promise<void> } | null>;
  /** Clears a pool's server connections between features. */
  readonly reset: (target: TargetRef) => Promise<void>;
  /** Test-only (RunnerArgs.pinPeriodMs): the pin period in ms; null: the catalog's. */
  readonly pinPeriodMs: number | null;
}

export function cloudSessionProbeRunner(o: CloudSessionProbeOptions): ProbeRunner<'session-state'> {
  const writer = o.targets.find((t) => !(t.descriptor?.capabilities.pooled ?? false));
  return sessionProbeRunner({
    // No direct target would leave setup and NOTIFY nowhere to go: unavailable() says so first.
    admin: writer?.connection() ?? { host: '', port: 0, user: '', dbname: '' },
    unavailable: () =>
      cloudSessionStateUnavailable(o.runnerCount) ??
      (writer === undefined ? 'session-state probes need the writer (direct) as a target of the run' : null),
    pinPeriodSec: o.pinPeriodMs === null ? null : o.pinPeriodMs / 1000,
    pinMetric: (step) => {
      if (!sessionHandling(step.descriptor).pinsSessions) return null;
      const dbProxyName = o.proxyNames[targetInstance(step.target)];
      return dbProxyName === undefined
        ? null
        : { metric: PINNED_METRIC, dimensions: { ProxyName: dbProxyName } };
    },
    share: async (step) => {
      const c = step.descriptor.capabilities;
      if (!c.pooled) return { sharing: 'none needed: each client is its own session on the server' };
      const narrowed = await o.narrow(step.target);
      if (narrowed)
        return {
          sharing: narrowed.sharing,
          beforeEach: () => o.reset(step.target),
          restore: narrowed.restore,
        };
      return {
        sharing: sessionHandling(step.descriptor).pinsSessions
          ? 'RDS Proxy: not narrowed (MaxConnectionsPercent is at least 1 % of max_connections): whether B shares A’s server connection is observed from server process ids, not forced'
          : 'not narrowed (this runner does not change that pooler): sharing observed from server process ids',
      };
    },
  });
}
