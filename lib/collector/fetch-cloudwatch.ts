/**
 * Run a CloudWatch plan: batches of at most 500 queries per GetMetricData call, NextToken followed,
 * throttling retried. A failed call marks only its own batch's series as errors; a query CloudWatch
 * answers with InternalError/Forbidden is an error with CloudWatch's message; a query with no
 * datapoints is `no-data`.
 */
import {
  GetMetricDataCommand,
  type CloudWatchClient,
  type MetricDataQuery,
  type MetricDataResult,
} from '@aws-sdk/client-cloudwatch';
import type { MetricSeries } from '../suite/types';
import {
  CLOUDWATCH_MAX_QUERIES_PER_CALL,
  chunk,
  type CloudWatchPlan,
  type CloudWatchQuerySpec,
} from './plan';
import { describeError, withRetry, type RetryOptions } from './retry';

export interface FetchOptions {
  readonly retry?: RetryOptions;
}

export interface FetchResult {
  readonly series: MetricSeries[];
  /** API calls made, retries included. */
  readonly calls: number;
}

interface Accumulated {
  readonly points: Map<number, number>;
  readonly errors: string[];
}

export async function fetchCloudWatch(
  client: CloudWatchClient,
  plan: CloudWatchPlan,
  options: FetchOptions = {},
): Promise<FetchResult> {
  const series: MetricSeries[] = [];
  let calls = 0;
  for (const batch of chunk(plan.queries, CLOUDWATCH_MAX_QUERIES_PER_CALL)) {
    const acc = new Map<string, Accumulated>(batch.map((q) => [q.id, { points: new Map(), errors: [] }]));
    const metricDataQueries = batch.map((q) => toMetricDataQuery(q, plan.periodSec));
    let nextToken: string | undefined;
    let pages = 0;
    let callError: string | null = null;
    do {
      try {
        const token = nextToken;
        const out = await withRetry(() => {
          calls++;
          return client.send(
            new GetMetricDataCommand({
              MetricDataQueries: metricDataQueries,
              StartTime: plan.window.start,
              EndTime: plan.window.end,
              ScanBy: 'TimestampAscending',
              NextToken: token,
            }),
          );
        }, options.retry);
        pages++;
        for (const result of out.MetricDataResults ?? []) mergeResult(acc, result);
        nextToken = out.NextToken || undefined;
      } catch (err) {
        callError = `GetMetricData failed${pages > 0 ? ` after ${pages} page(s)` : ''}: ${describeError(err)}`;
        nextToken = undefined;
      }
    } while (nextToken);
    for (const q of batch) {
      const a = acc.get(q.id);
      if (a) series.push(toSeries(q, a, plan.periodSec, callError));
    }
  }
  return { series, calls };
}

function toMetricDataQuery(q: CloudWatchQuerySpec, periodSec: number): MetricDataQuery {
  return {
    Id: q.id,
    MetricStat: {
      Metric: {
        Namespace: q.namespace,
        MetricName: q.metricName,
        Dimensions: Object.entries(q.dimensions).map(([Name, Value]) => ({ Name, Value })),
      },
      Period: periodSec,
      Stat: q.stat,
    },
    ReturnData: true,
  };
}

function mergeResult(acc: Map<string, Accumulated>, result: MetricDataResult): void {
  if (!result.Id) return;
  const a = acc.get(result.Id);
  if (!a) return;
  const timestamps = result.Timestamps ?? [];
  const values = result.Values ?? [];
  for (const [i, stamp] of timestamps.entries()) {
    const t = stamp.getTime();
    const v = values[i];
    if (v !== undefined && !Number.isNaN(t) && Number.isFinite(v)) a.points.set(t, v);
  }
  if (result.StatusCode === 'InternalError' || result.StatusCode === 'Forbidden') {
    const detail = (result.Messages ?? [])
      .map((m) => [m.Code, m.Value].filter(Boolean).join(': '))
      .join('; ');
    a.errors.push(`CloudWatch status ${result.StatusCode}${detail ? `: ${detail}` : ''}`);
  }
}

function toSeries(
  q: CloudWatchQuerySpec,
  a: Accumulated,
  periodSec: number,
  callError: string | null,
): MetricSeries {
  // gauge-per-node: each proxy node reports once a minute, so Sum over a longer period also adds
  // the minutes; dividing by the minutes gives the per-minute node total, averaged.
  const minutesPerPeriod = periodSec / 60;
  const rescale = q.aggregation === 'gauge-per-node' && minutesPerPeriod > 1;
  const points = [...a.points.entries()]
    .sort(([t1], [t2]) => t1 - t2)
    .map(([t, v]) => [new Date(t).toISOString(), rescale ? v / minutesPerPeriod : v] as const);
  const base = {
    source: 'cloudwatch' as const,
    name: q.metricName,
    stat: rescale ? `${q.stat}PerMinute` : q.stat,
    unit: q.unit,
    dimensions: q.dimensions,
    points,
  };
  const errors = callError ? [callError, ...a.errors] : a.errors;
  if (errors.length > 0) return { ...base, status: 'error', reason: errors.join('; ') };
  if (points.length === 0)
    return { ...base, status: 'no-data', reason: 'CloudWatch returned no datapoints in the window' };
  return { ...base, status: 'ok' };
}
