/**
 * Query plan (pure, no I/O): which CloudWatch GetMetricData queries and which Performance
 * Insights GetResourceMetrics requests to make for one lab and one time window, at which period.
 *
 * Period rule (documented in docs/collector.md):
 * - CloudWatch: the period is a multiple of the finest resolution CloudWatch still keeps for the
 *   window's start (60 s for data up to 15 days old, 300 s up to 63 days, 3600 s beyond), and the
 *   smallest such multiple that gives each series at most `maxPointsPerSeries` (1440) points. Runs
 *   up to a day long therefore get 1-minute points. A call returns at most 100 800 points; the
 *   fetcher follows NextToken for the rest.
 * - Performance Insights: the smallest of {60, 300, 3600, 86400} s (1 s only when asked for via
 *   `minPiPeriodSec: 1`) that gives each series at most `maxPointsPerSeries` points.
 * The query window is the requested window widened to whole periods (start rounded down, end
 * rounded up, on epoch multiples of the period), as CloudWatch recommends.
 */
import { UsageError } from '../core/errors';
import type { DatabaseEngine } from '../suite/engines';
import {
  instanceMetricsFor,
  isBurstableInstanceClass,
  piMetricsFor,
  PROXY_METRICS,
  RDS_NAMESPACE,
  type CloudWatchAggregation,
  type CloudWatchMetricDef,
  type PiMetricDef,
} from './catalog';

/** What the lab deployed, as the collector needs it. */
export interface LabResources {
  readonly clusterId: string;
  readonly instanceIds: readonly string[];
  /** Performance Insights resource ids (DbiResourceId, `db-…`), one per instance with PI on. */
  readonly piResourceIds: readonly string[];
  readonly proxies: readonly string[];
  /** Instance class per instance id; CPUCreditBalance is read only for burstable (db.t*) ones. */
  readonly instanceClasses?: Readonly<Record<string, string>>;
  /**
   * Which instance metrics exist (catalog `instanceMetricsFor`): Aurora publishes CommitLatency,
   * BufferCacheHitRatio…, RDS for PostgreSQL FreeStorageSpace, DiskQueueDepth, disk latencies; and
   * which Performance Insights counters (catalog `piMetricsFor`): each engine's documented list.
   * @default 'aurora-postgresql' (events written before RDS for PostgreSQL labs existed)
   */
  readonly engine?: DatabaseEngine;
}

/** ISO-8601 timestamps. */
export interface TimeWindow {
  readonly start: string;
  readonly end: string;
}

export interface PlanOptions {
  /** Used to pick the CloudWatch retention tier. @default new Date() */
  readonly now?: Date;
  /** @default 1440 */
  readonly maxPointsPerSeries?: number;
  /** Smallest PI period considered; 1 enables per-second PI data. @default 60 */
  readonly minPiPeriodSec?: 1 | 60 | 300 | 3600 | 86400;
  /** Performance Insights counters to read per instance. @default piMetricsFor(resources.engine) */
  readonly piMetrics?: readonly PiMetricDef[];
}

export const CLOUDWATCH_MAX_QUERIES_PER_CALL = 500;
const PI_MAX_QUERIES_PER_CALL = 15;
const PI_PERIODS_SEC = [1, 60, 300, 3600, 86400] as const;
const DEFAULT_MAX_POINTS_PER_SERIES = 1440;

const DAY_SEC = 86_400;

export interface CloudWatchQuerySpec {
  /** GetMetricData query id (`^[a-z][a-zA-Z0-9_]*$`), unique within the plan. */
  readonly id: string;
  readonly namespace: string;
  readonly metricName: string;
  readonly stat: string;
  readonly unit: string;
  readonly dimensions: Readonly<Record<string, string>>;
  readonly aggregation: CloudWatchAggregation;
}

export interface QueryWindow {
  readonly start: Date;
  readonly end: Date;
}

export interface CloudWatchPlan {
  readonly window: QueryWindow;
  readonly periodSec: number;
  readonly queries: readonly CloudWatchQuerySpec[];
}

export interface PiQuerySpec {
  /** What goes in `MetricQueries[].Metric`: `db.load.avg`. */
  readonly metric: string;
  /** Counter name (`db.load`) and aggregate (`avg`): the series' name and stat. */
  readonly name: string;
  readonly stat: string;
  readonly unit: string | null;
}

export interface PiRequestSpec {
  /** DbiResourceId. */
  readonly identifier: string;
  /** At most PI_MAX_QUERIES_PER_CALL. */
  readonly queries: readonly PiQuerySpec[];
}

export interface PiPlan {
  readonly window: QueryWindow;
  readonly periodSec: number;
  readonly requests: readonly PiRequestSpec[];
}

export function planCloudWatchQueries(
  resources: LabResources,
  window: TimeWindow,
  options: PlanOptions = {},
): CloudWatchPlan {
  const { startMs, endMs } = parseWindow(window);
  const periodSec = chooseCloudWatchPeriodSec(startMs, endMs, options);
  const queries: CloudWatchQuerySpec[] = [];
  const add = (def: CloudWatchMetricDef, dimensions: Record<string, string>): void => {
    for (const stat of def.stats) {
      queries.push({
        id: queryId(queries.length, def.name, stat),
        namespace: RDS_NAMESPACE,
        metricName: def.name,
        stat,
        unit: def.unit,
        dimensions,
        aggregation: def.aggregation,
      });
    }
  };
  for (const instanceId of unique(resources.instanceIds)) {
    const instanceClass = resources.instanceClasses?.[instanceId];
    const burstable = instanceClass !== undefined && isBurstableInstanceClass(instanceClass);
    for (const def of instanceMetricsFor(resources.engine ?? 'aurora-postgresql')) {
      if (def.burstableOnly && !burstable) continue;
      add(def, { DBInstanceIdentifier: instanceId });
    }
  }
  for (const proxyName of unique(resources.proxies)) {
    for (const def of PROXY_METRICS) add(def, { ProxyName: proxyName });
  }
  return { window: alignWindow(startMs, endMs, periodSec), periodSec, queries };
}

export function planPiRequests(
  resources: LabResources,
  window: TimeWindow,
  options: PlanOptions = {},
): PiPlan {
  const { startMs, endMs } = parseWindow(window);
  const periodSec = choosePiPeriodSec(startMs, endMs, options);
  const defs = options.piMetrics ?? piMetricsFor(resources.engine ?? 'aurora-postgresql');
  const perInstance: PiQuerySpec[] = defs.map((def) => ({
    metric: `${def.name}.${def.stat}`,
    name: def.name,
    stat: def.stat,
    unit: def.unit,
  }));
  const requests: PiRequestSpec[] = [];
  for (const identifier of unique(resources.piResourceIds)) {
    for (const queries of chunk(perInstance, PI_MAX_QUERIES_PER_CALL)) requests.push({ identifier, queries });
  }
  return { window: alignWindow(startMs, endMs, periodSec), periodSec, requests };
}

/** See the period rule at the top of this file. */
export function chooseCloudWatchPeriodSec(startMs: number, endMs: number, options: PlanOptions = {}): number {
  const nowMs = (options.now ?? new Date()).getTime();
  const maxPoints = options.maxPointsPerSeries ?? DEFAULT_MAX_POINTS_PER_SERIES;
  const ageSec = Math.max(0, (nowMs - startMs) / 1000);
  const floorSec = ageSec <= 15 * DAY_SEC ? 60 : ageSec <= 63 * DAY_SEC ? 300 : 3600;
  const windowSec = (endMs - startMs) / 1000;
  const multiples = Math.max(1, Math.ceil(windowSec / (floorSec * maxPoints)));
  return floorSec * multiples;
}

/** See the period rule at the top of this file. */
export function choosePiPeriodSec(startMs: number, endMs: number, options: PlanOptions = {}): number {
  const maxPoints = options.maxPointsPerSeries ?? DEFAULT_MAX_POINTS_PER_SERIES;
  const minPeriod = options.minPiPeriodSec ?? 60;
  const windowSec = (endMs - startMs) / 1000;
  for (const period of PI_PERIODS_SEC) {
    if (period < minPeriod) continue;
    if (Math.ceil(windowSec / period) <= maxPoints) return period;
  }
  return Math.max(...PI_PERIODS_SEC);
}

/** Split into consecutive groups of at most `size`. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function queryId(index: number, metricName: string, stat: string): string {
  const slug = `${metricName}_${stat}`.toLowerCase().replace(/[^a-z0-9_]+/g, '_');
  return `q${index}_${slug}`;
}

function alignWindow(startMs: number, endMs: number, periodSec: number): QueryWindow {
  const periodMs = periodSec * 1000;
  return {
    start: new Date(Math.floor(startMs / periodMs) * periodMs),
    end: new Date(Math.ceil(endMs / periodMs) * periodMs),
  };
}

function parseWindow(window: TimeWindow): { startMs: number; endMs: number } {
  const startMs = Date.parse(window.start);
  const endMs = Date.parse(window.end);
  if (Number.isNaN(startMs))
    throw new UsageError(`window.start: not an ISO-8601 timestamp: ${JSON.stringify(window.start)}`);
  if (Number.isNaN(endMs))
    throw new UsageError(`window.end: not an ISO-8601 timestamp: ${JSON.stringify(window.end)}`);
  if (endMs <= startMs)
    throw new UsageError(`window.end (${window.end}) must be after window.start (${window.start})`);
  return { startMs, endMs };
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
