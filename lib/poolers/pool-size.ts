/**
 * How a pooler's share of max_connections becomes pool sizes (pure arithmetic, any product): the
 * lab's `poolPercent` is the share in total, split across processes and deployments.
 */

/**
 * Server connections the pooler may open in total: `poolPercent` % of max_connections, rounded to
 * the nearest integer (as RDS Proxy's MaxConnectionsPercent is a share of max_connections), at
 * least 1.
 */
export function totalPoolSize(poolPercent: number, maxConnections: number): number {
  return Math.max(1, Math.round((poolPercent / 100) * maxConnections));
}

/**
 * `default_pool_size` of each process: the total split evenly, rounded DOWN so the processes
 * together never open more than the pooler's share (90 % of 1200 over 4 processes: 1080 → 270
 * each; 10 over 3: 3 each, 9 in all), but at least 1 per process (then N processes may open N
 * connections when the share is smaller than N).
 */
export function processPoolSize(
  poolPercent: number,
  maxConnections: number,
  processes: number,
  /** PgBouncer deployments splitting the share (poolerDeployments: the runners, for on-runners). */
  sharedBy = 1,
): number {
  return Math.max(1, Math.floor(totalPoolSize(poolPercent, maxConnections) / (processes * sharedBy)));
}
