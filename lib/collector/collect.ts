/**
 * Collect CloudWatch and Performance Insights metrics for one run window and write them as
 * MetricsFile JSON beside the run's results: plan (pure) → fetch → write. The Lambda handler and
 * `proxylab collect` both call `collectMetrics`.
 */
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { PIClient } from '@aws-sdk/client-pi';
import {
  RESULT_SCHEMA_VERSION,
  type MetricSeries,
  type MetricsFile,
  type WindowCompleteness,
} from '../suite/types';
import type { CollectEvent } from './event';
import { fetchCloudWatch, type FetchResult } from './fetch-cloudwatch';
import { fetchPi } from './fetch-pi';
import { planCloudWatchQueries, planPiRequests, type LabResources, type PlanOptions } from './plan';
import type { RetryOptions } from './retry';
import type { RunWriter } from './writer';

export interface CollectDeps {
  readonly cloudwatch: CloudWatchClient;
  /** null: Performance Insights is not read and pi.json is not written. */
  readonly pi: PIClient | null;
  readonly writer: RunWriter;
  /** @default () => new Date() */
  readonly now?: () => Date;
  readonly retry?: RetryOptions;
  readonly plan?: Omit<PlanOptions, 'now'>;
}

export interface StatusCounts {
  readonly ok: number;
  readonly noData: number;
  readonly error: number;
}

export interface SourceSummary {
  readonly periodSec: number;
  readonly series: StatusCounts;
  readonly calls: number;
  readonly written: string;
  /** Whether the source had published the whole window (re-collect later when not). */
  readonly completeness: WindowCompleteness;
}

export interface CollectSummary {
  readonly runId: string;
  readonly window: { readonly start: string; readonly end: string };
  readonly cloudwatch: SourceSummary;
  /** null when PI was not read. */
  readonly pi: SourceSummary | null;
  /** Where the files went (s3:// URIs or local paths). */
  readonly written: readonly string[];
}

export function resourcesFromEvent(event: CollectEvent): LabResources {
  return {
    clusterId: event.cluster.clusterId,
    instanceIds: event.cluster.instanceIds,
    piResourceIds: event.cluster.piResourceIds,
    proxies: event.proxies,
    instanceClasses: event.cluster.instanceClasses,
    engine: event.cluster.engine ?? 'aurora-postgresql',
  };
}

export async function collectMetrics(event: CollectEvent, deps: CollectDeps): Promise<CollectSummary> {
  const now = deps.now ?? (() => new Date());
  const resources = resourcesFromEvent(event);
  const planOptions: PlanOptions = { ...deps.plan, now: now() };
  const window = { start: event.window.start, end: event.window.end };

  /** Judges a fetched source's completeness, writes its metrics file and sums it up. */
  const writeSource = async (
    name: string,
    periodSec: number,
    fetched: FetchResult,
  ): Promise<SourceSummary> => {
    const completeness = windowCompleteness(fetched.series, window.end, periodSec);
    const written = await deps.writer.writeMetricsFile(
      name,
      metricsFile(event.runId, window, now(), fetched.series, completeness),
    );
    return { periodSec, series: countStatuses(fetched.series), calls: fetched.calls, written, completeness };
  };

  const cwPlan = planCloudWatchQueries(resources, window, planOptions);
  const cw = await fetchCloudWatch(deps.cloudwatch, cwPlan, { retry: deps.retry });
  const cloudwatch = await writeSource('cloudwatch', cwPlan.periodSec, cw);

  let pi: SourceSummary | null = null;
  if (deps.pi) {
    const piPlan = planPiRequests(resources, window, planOptions);
    const fetched = await fetchPi(deps.pi, piPlan, { retry: deps.retry });
    pi = await writeSource('pi', piPlan.periodSec, fetched);
  }
  return {
    runId: event.runId,
    window,
    cloudwatch,
    pi,
    written: pi ? [cloudwatch.written, pi.written] : [cloudwatch.written],
  };
}

export function metricsFile(
  runId: string,
  window: { start: string; end: string },
  collectedAt: Date,
  series: MetricSeries[],
  completeness?: WindowCompleteness,
): MetricsFile {
  return {
    schemaVersion: RESULT_SCHEMA_VERSION,
    runId,
    window,
    collectedAt: collectedAt.toISOString(),
    series,
    ...(completeness ? { completeness } : {}),
  };
}

/**
 * Did the source cover the window to its end? Datapoints are stamped with their period's start
 * (CloudWatch always; PI with PeriodAlignment START_TIME), so the window is complete when the
 * latest one, plus a period, reaches the window end.
 */
export function windowCompleteness(
  series: readonly MetricSeries[],
  windowEnd: string,
  periodSec: number,
): WindowCompleteness {
  let last: number | null = null;
  for (const s of series) {
    for (const [t] of s.points) {
      const ms = Date.parse(t);
      if (!Number.isNaN(ms) && (last === null || ms > last)) last = ms;
    }
  }
  return {
    complete: last !== null && last + periodSec * 1000 >= Date.parse(windowEnd),
    lastPointAt: last === null ? null : new Date(last).toISOString(),
    windowEnd,
    periodSec,
  };
}

function countStatuses(series: readonly MetricSeries[]): StatusCounts {
  return {
    ok: series.filter((s) => s.status === 'ok').length,
    noData: series.filter((s) => s.status === 'no-data').length,
    error: series.filter((s) => s.status === 'error').length,
  };
}
