/**
 * What a valid lab may still get wrong, said before anything is deployed: `validate`, `deploy` and
 * `run` print these; none of them refuses a lab. Each warning has a stable id (tests match the id,
 * people read the message), the path it is about and the reason.
 *
 * Pool shares over 100 % of max_connections are a warning, not an error (issue 25 item 5): the
 * targets are measured one at a time, and before a target's steps the others' server connections
 * are released (PgBouncer pools are reset before every step; an RDS Proxy not being measured gets
 * MaxIdleConnectionsPercent 0 until its next step — lib/runner/proxy-pool.ts), so pools that could
 * not all be full at once do not meet. What a pool still holds is recorded per step
 * (serverConnections before/peak/after), so interference is visible rather than assumed away.
 * Refusing would also refuse the published E5 setup (an RDS Proxy at 100 % beside PgBouncers at 90 %,
 * labs/e5-big-server.json) and the defaults of a lab with one proxy and one pooler (100 % + 90 %).
 */
import type { LabConfig } from './types';

export type LabWarningId = 'pool-shares-over-100';

export interface LabWarning {
  readonly id: LabWarningId;
  /** The lab-file path it is about (`proxies`, `poolers[0].poolPercent`, …). */
  readonly path: string;
  readonly message: string;
}

/** One share of max_connections a lab's pools may take: where it is set and how much. */
interface PoolShare {
  readonly path: string;
  readonly name: string;
  readonly percent: number;
}

/** Every pool's share of max_connections, in lab order: proxies, then poolers. */
export function poolShares(lab: Pick<LabConfig, 'proxies' | 'poolers'>): PoolShare[] {
  return [
    ...lab.proxies.map((p, i) => ({
      path: `proxies[${i}].maxConnectionsPercent`,
      name: `RDS Proxy ${p.name}`,
      percent: p.maxConnectionsPercent,
    })),
    ...lab.poolers.map((p, i) => ({
      path: `poolers[${i}].poolPercent`,
      name: `pooler ${p.name}`,
      percent: p.poolPercent,
    })),
  ];
}

export function labWarnings(lab: LabConfig): LabWarning[] {
  const out: LabWarning[] = [];
  const shares = poolShares(lab);
  const total = shares.reduce((sum, s) => sum + s.percent, 0);
  if (shares.length > 1 && total > 100) {
    out.push({
      id: 'pool-shares-over-100',
      path: shares.map((s) => s.path).join(' + '),
      message:
        `the pools may open ${shares.map((s) => `${s.percent} % (${s.name})`).join(' + ')} = ${total} % of max_connections together. ` +
        'Allowed, because targets are measured one at a time and the others are drained before each target’s steps ' +
        '(PgBouncer pools reset, an idle RDS Proxy set to MaxIdleConnectionsPercent 0); but a pool that still holds ' +
        'server connections takes slots the measured target may need: each step records the connections held on the ' +
        'database (serverConnections before/peak/after) so it shows. Keep the shares at 100 % or less to rule it out.',
    });
  }
  return out;
}
