/**
 * Which metrics the collector reads, with which statistic, unit and dimensions. Data only: the
 * planner (plan.ts) turns these tables into API requests.
 *
 * Sources: EXPERIMENTS.md (facts), the RDS user guide's "Monitoring RDS Proxy metrics with Amazon
 * CloudWatch" table and instance-level metric table, and the Aurora instance-metric reference.
 */
import type { DatabaseEngine } from '../suite/engines';

export const RDS_NAMESPACE = 'AWS/RDS';

/**
 * How a CloudWatch value aggregates over a period. `gauge-per-node`: a level each proxy node reports
 * once a minute (ClientConnections...); `Sum` over a 60-second period adds the nodes together, and
 * over a longer period it would also add the minutes, so the fetcher divides by period/60.
 */
export type CloudWatchAggregation = 'level' | 'event-count' | 'gauge-per-node';

/** What every catalog entry carries: the series name the collector writes, its title and unit. */
export interface MetricDef {
  readonly name: string;
  /** Chart title in the report (the report never spells metric names or titles itself). */
  readonly title: string;
  readonly unit: string | null;
}

export interface CloudWatchMetricDef extends MetricDef {
  readonly stats: readonly string[];
  /** CloudWatch unit name; GetMetricData does not return units, so the table records them. */
  readonly unit: string;
  readonly aggregation: CloudWatchAggregation;
  /** Read only for burstable (db.t*) instance classes. */
  readonly burstableOnly?: boolean;
}

// Instance metrics both engines publish under dimension `DBInstanceIdentifier` (one object each, so
// a name has one title and unit whichever engine list it sits in).
const CPU_UTILIZATION: CloudWatchMetricDef = {
  name: 'CPUUtilization',
  title: 'CPU utilization',
  stats: ['Average', 'Maximum'],
  unit: 'Percent',
  aggregation: 'level',
};
const DATABASE_CONNECTIONS: CloudWatchMetricDef = {
  name: 'DatabaseConnections',
  title: 'Database connections',
  stats: ['Average', 'Maximum'],
  unit: 'Count',
  aggregation: 'level',
};
// E4: the story was FreeableMemory falling to nothing; the minimum shows the trough.
const FREEABLE_MEMORY: CloudWatchMetricDef = {
  name: 'FreeableMemory',
  title: 'Freeable memory',
  stats: ['Average', 'Minimum'],
  unit: 'Bytes',
  aggregation: 'level',
};
const READ_IOPS: CloudWatchMetricDef = {
  name: 'ReadIOPS',
  title: 'Read IOPS',
  stats: ['Average'],
  unit: 'Count/Second',
  aggregation: 'level',
};
const WRITE_IOPS: CloudWatchMetricDef = {
  name: 'WriteIOPS',
  title: 'Write IOPS',
  stats: ['Average'],
  unit: 'Count/Second',
  aggregation: 'level',
};
const CPU_CREDIT_BALANCE: CloudWatchMetricDef = {
  name: 'CPUCreditBalance',
  title: 'CPU credit balance',
  stats: ['Average'],
  unit: 'Count',
  aggregation: 'level',
  burstableOnly: true,
};
/*
 * Burstable classes run in Unlimited mode on RDS and Aurora (RDS pricing: "T4g and T3 DB instances
 * run in Unlimited mode, which means that you will be charged if your average CPU utilization over
 * a rolling 24-hour period exceeds the baseline"): when CPUCreditBalance is zero the instance keeps
 * bursting on surplus credits (CPUSurplusCreditBalance), and those not paid down by earned credits
 * are billed (CPUSurplusCreditsCharged). Both are AWS/RDS instance-level metrics by
 * DBInstanceIdentifier on db.t* classes (rds-metrics.html#rds-cw-metrics-instance; CloudWatch
 * readings of Aurora db.t4g instances show them for Aurora too), in credits = vCPU-minutes
 * (CloudWatch unit Count), published every 5 minutes. The charged count per period adds up to the
 * run's charge (Sum); the surplus balance is a level whose peak matters (Maximum).
 */
const CPU_SURPLUS_CREDIT_BALANCE: CloudWatchMetricDef = {
  name: 'CPUSurplusCreditBalance',
  title: 'CPU surplus credit balance (Unlimited mode)',
  stats: ['Maximum'],
  unit: 'Count',
  aggregation: 'level',
  burstableOnly: true,
};
const CPU_SURPLUS_CREDITS_CHARGED: CloudWatchMetricDef = {
  name: 'CPUSurplusCreditsCharged',
  title: 'CPU surplus credits charged (Unlimited mode)',
  stats: ['Sum'],
  unit: 'Count',
  aggregation: 'event-count',
  burstableOnly: true,
};

/**
 * Aurora instance metrics, dimension `DBInstanceIdentifier`. CommitThroughput, CommitLatency,
 * Deadlocks, BufferCacheHitRatio and ConnectionAttempts are in the Aurora metric reference
 * ("Instance-level metrics for Amazon Aurora"); the RDS reference lists none of them for RDS for
 * PostgreSQL (ConnectionAttempts "applies to: MySQL" there), so they are Aurora's only.
 */
export const AURORA_INSTANCE_METRICS: readonly CloudWatchMetricDef[] = [
  CPU_UTILIZATION,
  DATABASE_CONNECTIONS,
  FREEABLE_MEMORY,
  {
    name: 'CommitThroughput',
    title: 'Commit throughput',
    stats: ['Average'],
    unit: 'Count/Second',
    aggregation: 'level',
  },
  {
    name: 'CommitLatency',
    title: 'Commit latency',
    stats: ['Average'],
    unit: 'Milliseconds',
    aggregation: 'level',
  },
  { name: 'Deadlocks', title: 'Deadlocks', stats: ['Average'], unit: 'Count/Second', aggregation: 'level' },
  {
    name: 'BufferCacheHitRatio',
    title: 'Buffer cache hit ratio',
    stats: ['Average'],
    unit: 'Percent',
    aggregation: 'level',
  },
  {
    name: 'ConnectionAttempts',
    title: 'Connection attempts',
    stats: ['Sum'],
    unit: 'Count',
    aggregation: 'event-count',
  },
  READ_IOPS,
  WRITE_IOPS,
  CPU_CREDIT_BALANCE,
  CPU_SURPLUS_CREDIT_BALANCE,
  CPU_SURPLUS_CREDITS_CHARGED,
];

/**
 * RDS for PostgreSQL instance metrics, dimension `DBInstanceIdentifier`: the RDS user guide's
 * "Amazon CloudWatch instance-level metrics for Amazon RDS" table
 * (https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/rds-metrics.html#rds-cw-metrics-instance),
 * every one below marked "applies to: All" there, with the units it gives (ReadLatency and
 * WriteLatency in Seconds, not milliseconds; FreeStorageSpace and FreeableMemory in Bytes;
 * DiskQueueDepth a Count; CPUCreditBalance and the surplus-credit pair only on burstable db.t*
 * classes). An RDS instance has
 * its own EBS volume, hence FreeStorageSpace/DiskQueueDepth/latencies, which Aurora's shared
 * cluster volume does not publish per instance.
 */
export const RDS_POSTGRES_INSTANCE_METRICS: readonly CloudWatchMetricDef[] = [
  CPU_UTILIZATION,
  DATABASE_CONNECTIONS,
  FREEABLE_MEMORY,
  // The minimum is what matters: an instance out of storage stops accepting writes.
  {
    name: 'FreeStorageSpace',
    title: 'Free storage space',
    stats: ['Minimum'],
    unit: 'Bytes',
    aggregation: 'level',
  },
  {
    name: 'ReadLatency',
    title: 'Disk read latency',
    stats: ['Average', 'Maximum'],
    unit: 'Seconds',
    aggregation: 'level',
  },
  {
    name: 'WriteLatency',
    title: 'Disk write latency',
    stats: ['Average', 'Maximum'],
    unit: 'Seconds',
    aggregation: 'level',
  },
  READ_IOPS,
  WRITE_IOPS,
  {
    name: 'DiskQueueDepth',
    title: 'Disk queue depth',
    stats: ['Average', 'Maximum'],
    unit: 'Count',
    aggregation: 'level',
  },
  CPU_CREDIT_BALANCE,
  CPU_SURPLUS_CREDIT_BALANCE,
  CPU_SURPLUS_CREDITS_CHARGED,
];

/** The instance metric list for an engine (Aurora when a caller does not say: older events). */
export function instanceMetricsFor(engine: DatabaseEngine): readonly CloudWatchMetricDef[] {
  return engine === 'postgres' ? RDS_POSTGRES_INSTANCE_METRICS : AURORA_INSTANCE_METRICS;
}

/**
 * RDS Proxy metrics, dimension set 1 (`ProxyName` alone). The current RDS user guide lists set 1
 * for every metric below, including the target-level ones (DatabaseConnections,
 * DatabaseConnectionsCurrentlySessionPinned, MaxDatabaseConnectionsAllowed...), which older
 * revisions listed only under `ProxyName, TargetGroup, Target`. A lab proxy has exactly one target
 * group (`default`) and one writer target, so set 1 is the same total without naming the target.
 * Counts and levels: `Sum` (the proxy runs on several nodes, each reporting); latencies: `Average`.
 */
export const PROXY_METRICS: readonly CloudWatchMetricDef[] = [
  {
    name: 'ClientConnections',
    title: 'Client connections (proxy)',
    stats: ['Sum'],
    unit: 'Count',
    aggregation: 'gauge-per-node',
  },
  {
    name: 'DatabaseConnections',
    title: 'Database connections',
    stats: ['Sum'],
    unit: 'Count',
    aggregation: 'gauge-per-node',
  },
  {
    name: 'DatabaseConnectionsCurrentlySessionPinned',
    title: 'Session-pinned connections (proxy)',
    stats: ['Sum'],
    unit: 'Count',
    aggregation: 'gauge-per-node',
  },
  {
    name: 'DatabaseConnectionsCurrentlyBorrowed',
    title: 'Borrowed connections (proxy)',
    stats: ['Sum'],
    unit: 'Count',
    aggregation: 'gauge-per-node',
  },
  {
    name: 'DatabaseConnectionsBorrowLatency',
    title: 'Borrow latency (proxy)',
    stats: ['Average'],
    unit: 'Microseconds',
    aggregation: 'level',
  },
  {
    name: 'MaxDatabaseConnectionsAllowed',
    title: 'Max database connections allowed (proxy)',
    stats: ['Sum'],
    unit: 'Count',
    aggregation: 'gauge-per-node',
  },
  {
    name: 'QueryRequests',
    title: 'Query requests (proxy)',
    stats: ['Sum'],
    unit: 'Count',
    aggregation: 'event-count',
  },
  {
    name: 'QueryDatabaseResponseLatency',
    title: 'Database response latency (proxy)',
    stats: ['Average'],
    unit: 'Microseconds',
    aggregation: 'level',
  },
  {
    name: 'ClientConnectionsReceived',
    title: 'Client connections received (proxy)',
    stats: ['Sum'],
    unit: 'Count',
    aggregation: 'event-count',
  },
  {
    name: 'DatabaseConnectionsSetupFailed',
    title: 'Failed connection setups (proxy)',
    stats: ['Sum'],
    unit: 'Count',
    aggregation: 'event-count',
  },
];

export interface PiMetricDef extends MetricDef {
  /** Counter name without the aggregate suffix (`db.load`, `db.User.numbackends`). */
  readonly name: string;
  /** PI aggregate suffix appended to the name in `MetricQueries[].Metric`. */
  readonly stat: 'avg' | 'sum' | 'min' | 'max';
  readonly unit: string | null;
}

// Performance Insights counters, queried as `<name>.<stat>`. PI reports counter metrics such as
// xact_commit as rates; its API returns no unit, so units are recorded only where the counter's
// meaning fixes them. The two engines document different counter lists (the "Performance Insights
// counter metrics" page of each user guide), and PI rejects a name the instance does not have, so
// each engine asks only for names its own list gives, spelled as it spells them:
// - Aurora PostgreSQL: https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/USER_PerfInsights_Counters.html#USER_PerfInsights_Counters.Aurora_PostgreSQL
// - RDS for PostgreSQL: https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/USER_PerfInsights_Counters.html#USER_PerfInsights_Counters.PostgreSQL
// test/fixtures/aws-docs/pi-counters.json holds both lists (with the retrieval date) and
// test/unit/collector-pi-counters.test.ts fails on a name the engine's list does not have.
// `db.load` is the DB load metric itself (PI API reference, GetResourceMetrics), on both.
const PI_DB_LOAD: PiMetricDef = {
  name: 'db.load',
  title: 'Database load (PI)',
  stat: 'avg',
  unit: 'Sessions',
};
const PI_XACT_COMMIT: PiMetricDef = {
  name: 'db.Transactions.xact_commit',
  title: 'Commits (PI xact_commit)',
  stat: 'avg',
  unit: null,
};
const PI_NUMBACKENDS: PiMetricDef = {
  name: 'db.User.numbackends',
  title: 'Backends (PI numbackends)',
  stat: 'avg',
  unit: 'Count',
};

/**
 * Aurora PostgreSQL: also total_auth_attempts (E3's connection churn) and queries_started, which
 * the Aurora list spells `db.SQL.Queries`. Neither is in the RDS for PostgreSQL list.
 */
export const AURORA_PI_METRICS: readonly PiMetricDef[] = [
  PI_DB_LOAD,
  PI_XACT_COMMIT,
  PI_NUMBACKENDS,
  { name: 'db.User.total_auth_attempts', title: 'Authentication attempts', stat: 'avg', unit: null },
  { name: 'db.SQL.Queries', title: 'Queries started (PI)', stat: 'avg', unit: null },
];

/** RDS for PostgreSQL: the counters its list shares with Aurora's that the report reads. */
export const RDS_POSTGRES_PI_METRICS: readonly PiMetricDef[] = [PI_DB_LOAD, PI_XACT_COMMIT, PI_NUMBACKENDS];

/** The Performance Insights counters to read for an engine. */
export function piMetricsFor(engine: DatabaseEngine): readonly PiMetricDef[] {
  return engine === 'postgres' ? RDS_POSTGRES_PI_METRICS : AURORA_PI_METRICS;
}

/** Burstable classes (Aurora and RDS for PostgreSQL) are the T families (`db.t3.medium`, `db.t4g.large`). */
export function isBurstableInstanceClass(instanceClass: string): boolean {
  return /^db\.t\d/i.test(instanceClass);
}

/**
 * Series the local sampler (lib/local/sampler.ts) writes from PgBouncer's admin console,
 * pg_stat_database and the machine's /proc/stat; the runners write `cpu_percent` the same way.
 * Units as the sampler records them.
 */
const SAMPLER_METRICS: readonly MetricDef[] = [
  { name: 'cl_waiting', title: 'Clients waiting for a server connection (cl_waiting)', unit: 'count' },
  { name: 'cl_active', title: 'Active clients (cl_active)', unit: 'count' },
  { name: 'sv_active', title: 'Server connections in use (sv_active)', unit: 'count' },
  { name: 'maxwait', title: 'Longest wait (maxwait)', unit: 'ms' },
  { name: 'total_wait_time_us', title: 'Wait time', unit: 'us/s' },
  { name: 'numbackends', title: 'Backends (pg_stat_database numbackends)', unit: 'count' },
  { name: 'xact_commit', title: 'Commits per second (pg_stat_database xact_commit)', unit: 'count/s' },
  { name: 'total_xact_count', title: 'Transactions per second through PgBouncer', unit: 'count/s' },
  { name: 'cpu_percent', title: 'Load generator CPU', unit: 'percent' },
  { name: 'process_cpu_percent', title: 'PgBouncer CPU per process (% of one core)', unit: 'percent' },
];

/** The metrics the published experiments turned on, in the order the report shows them (AWS runs). */
export const CLOUD_REPORT_METRICS: readonly string[] = [
  'DatabaseConnections',
  'ClientConnections',
  'DatabaseConnectionsCurrentlySessionPinned',
  'DatabaseConnectionsBorrowLatency',
  'CPUUtilization',
  'FreeableMemory',
  'CommitThroughput',
  'db.User.total_auth_attempts',
  'cpu_percent',
];

/**
 * The same for runs on RDS for PostgreSQL: it publishes no CommitThroughput (an Aurora metric);
 * the CPU credit balance is what runs out first on the small burstable classes such labs use. Its
 * Performance Insights list has no total_auth_attempts, so that panel is left out rather than
 * shown as never collected.
 */
export const RDS_POSTGRES_REPORT_METRICS: readonly string[] = CLOUD_REPORT_METRICS.flatMap((name) =>
  name === 'CommitThroughput' ? ['CPUCreditBalance'] : name === 'db.User.total_auth_attempts' ? [] : [name],
);

/** The same for local runs (PgBouncer + PostgreSQL on this machine). */
export const LOCAL_REPORT_METRICS: readonly string[] = [
  'cl_waiting',
  'cl_active',
  'sv_active',
  'maxwait',
  'total_wait_time_us',
  'numbackends',
  'xact_commit',
  'total_xact_count',
  'cpu_percent',
];

const ALL_METRICS: readonly MetricDef[] = [
  ...AURORA_INSTANCE_METRICS,
  ...RDS_POSTGRES_INSTANCE_METRICS.filter((d) => !AURORA_INSTANCE_METRICS.includes(d)),
  ...PROXY_METRICS,
  ...AURORA_PI_METRICS,
  ...RDS_POSTGRES_PI_METRICS.filter((d) => !AURORA_PI_METRICS.includes(d)),
  ...SAMPLER_METRICS,
];

/** The catalog entry for a series name (Aurora and proxy `DatabaseConnections` share one title). */
export function metricDef(name: string): MetricDef | undefined {
  return ALL_METRICS.find((d) => d.name === name);
}

/** Every catalog entry, for consistency tests. */
export function allMetricDefs(): readonly MetricDef[] {
  return ALL_METRICS;
}
