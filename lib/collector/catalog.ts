/**
 * Which metrics the collector reads, with which statistic, unit and dimensions. Data only: the
 * planner (plan.ts) turns these tables into API requests.
 *
 * Sources: EXPERIMENTS.md (facts), the RDS user guide's "Monitoring RDS Proxy metrics with Amazon
 * CloudWatch" table and the Aurora instance-metric reference.
 */

export const RDS_NAMESPACE = 'AWS/RDS';

/**
 * How a CloudWatch value aggregates over a period. `gauge-per-node`: a level each proxy node reports
 * once a minute (ClientConnections...); `Sum` over a 60-second period adds the nodes together, and
 * over a longer period it would also add the minutes, so the fetcher divides by period/60.
 */
export type CloudWatchAggregation = 'level' | 'event-count' | 'gauge-per-node';

export interface CloudWatchMetricDef {
  readonly name: string;
  readonly stats: readonly string[];
  /** CloudWatch unit name; GetMetricData does not return units, so the table records them. */
  readonly unit: string;
  readonly aggregation: CloudWatchAggregation;
  /** Read only for burstable (db.t*) instance classes. */
  readonly burstableOnly?: boolean;
}

/** Aurora instance metrics, dimension `DBInstanceIdentifier`. */
export const AURORA_INSTANCE_METRICS: readonly CloudWatchMetricDef[] = [
  { name: 'CPUUtilization', stats: ['Average', 'Maximum'], unit: 'Percent', aggregation: 'level' },
  { name: 'DatabaseConnections', stats: ['Average', 'Maximum'], unit: 'Count', aggregation: 'level' },
  // E4: the story was FreeableMemory falling to nothing; the minimum shows the trough.
  { name: 'FreeableMemory', stats: ['Average', 'Minimum'], unit: 'Bytes', aggregation: 'level' },
  { name: 'CommitThroughput', stats: ['Average'], unit: 'Count/Second', aggregation: 'level' },
  { name: 'CommitLatency', stats: ['Average'], unit: 'Milliseconds', aggregation: 'level' },
  { name: 'Deadlocks', stats: ['Average'], unit: 'Count/Second', aggregation: 'level' },
  { name: 'BufferCacheHitRatio', stats: ['Average'], unit: 'Percent', aggregation: 'level' },
  { name: 'ConnectionAttempts', stats: ['Sum'], unit: 'Count', aggregation: 'event-count' },
  { name: 'ReadIOPS', stats: ['Average'], unit: 'Count/Second', aggregation: 'level' },
  { name: 'WriteIOPS', stats: ['Average'], unit: 'Count/Second', aggregation: 'level' },
  { name: 'CPUCreditBalance', stats: ['Average'], unit: 'Count', aggregation: 'level', burstableOnly: true },
];

/**
 * RDS Proxy metrics, dimension set 1 (`ProxyName` alone). The current RDS user guide lists set 1
 * for every metric below, including the target-level ones (DatabaseConnections,
 * DatabaseConnectionsCurrentlySessionPinned, MaxDatabaseConnectionsAllowed...), which older
 * revisions listed only under `ProxyName, TargetGroup, Target`. A lab proxy has exactly one target
 * group (`default`) and one writer target, so set 1 is the same total without naming the target.
 * Counts and levels: `Sum` (the proxy runs on several nodes, each reporting); latencies: `Average`.
 */
export const PROXY_METRICS: readonly CloudWatchMetricDef[] = [
  { name: 'ClientConnections', stats: ['Sum'], unit: 'Count', aggregation: 'gauge-per-node' },
  { name: 'DatabaseConnections', stats: ['Sum'], unit: 'Count', aggregation: 'gauge-per-node' },
  {
    name: 'DatabaseConnectionsCurrentlySessionPinned',
    stats: ['Sum'],
    unit: 'Count',
    aggregation: 'gauge-per-node',
  },
  {
    name: 'DatabaseConnectionsCurrentlyBorrowed',
    stats: ['Sum'],
    unit: 'Count',
    aggregation: 'gauge-per-node',
  },
  {
    name: 'DatabaseConnectionsBorrowLatency',
    stats: ['Average'],
    unit: 'Microseconds',
    aggregation: 'level',
  },
  { name: 'MaxDatabaseConnectionsAllowed', stats: ['Sum'], unit: 'Count', aggregation: 'gauge-per-node' },
  { name: 'QueryRequests', stats: ['Sum'], unit: 'Count', aggregation: 'event-count' },
  { name: 'QueryDatabaseResponseLatency', stats: ['Average'], unit: 'Microseconds', aggregation: 'level' },
  { name: 'ClientConnectionsReceived', stats: ['Sum'], unit: 'Count', aggregation: 'event-count' },
  { name: 'DatabaseConnectionsSetupFailed', stats: ['Sum'], unit: 'Count', aggregation: 'event-count' },
];

export interface PiMetricDef {
  /** Counter name without the aggregate suffix (`db.load`, `db.User.numbackends`). */
  readonly name: string;
  /** PI aggregate suffix appended to the name in `MetricQueries[].Metric`. */
  readonly stat: 'avg' | 'sum' | 'min' | 'max';
  readonly unit: string | null;
}

/**
 * Performance Insights counters (PostgreSQL), queried as `<name>.<stat>`. PI reports counter
 * metrics such as xact_commit as rates; its API returns no unit, so units are recorded only where
 * the counter's meaning fixes them.
 */
export const PI_METRICS: readonly PiMetricDef[] = [
  { name: 'db.load', stat: 'avg', unit: 'Sessions' },
  { name: 'db.Transactions.xact_commit', stat: 'avg', unit: null },
  { name: 'db.User.numbackends', stat: 'avg', unit: 'Count' },
  { name: 'db.User.total_auth_attempts', stat: 'avg', unit: null },
  { name: 'db.SQL.queries', stat: 'avg', unit: null },
];

/** Aurora burstable classes are the T families (`db.t3.medium`, `db.t4g.large`). */
export function isBurstableInstanceClass(instanceClass: string): boolean {
  return /^db\.t\d/i.test(instanceClass);
}
