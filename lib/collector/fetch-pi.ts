/**
 * Run a Performance Insights plan: one GetResourceMetrics call per request (at most 15 metric
 * queries, one instance), NextToken followed, throttling retried. PI rejects a whole call when one
 * metric name is invalid (InvalidArgumentException); the fetcher then asks for each metric alone so
 * a bad name costs only its own series.
 */
import {
  GetResourceMetricsCommand,
  type GetResourceMetricsResponse,
  type PIClient,
} from '@aws-sdk/client-pi';
import type { MetricSeries } from '../suite/types';
import type { FetchOptions, FetchResult } from './fetch-cloudwatch';
import type { PiPlan, PiQuerySpec, PiRequestSpec } from './plan';
import { describeError, withRetry } from './retry';

export async function fetchPi(
  client: PIClient,
  plan: PiPlan,
  options: FetchOptions = {},
): Promise<FetchResult> {
  const series: MetricSeries[] = [];
  let calls = 0;
  const countCall = (): void => {
    calls++;
  };
  for (const request of plan.requests) {
    const outcome = await fetchRequest(client, plan, request, options, countCall);
    if (outcome.kind === 'ok') {
      for (const q of request.queries)
        series.push(toSeries(request.identifier, q, outcome.points.get(q.metric), null));
      continue;
    }
    if (outcome.invalidArgument && request.queries.length > 1) {
      for (const q of request.queries) {
        const single = await fetchRequest(
          client,
          plan,
          { identifier: request.identifier, queries: [q] },
          options,
          countCall,
        );
        series.push(
          toSeries(
            request.identifier,
            q,
            single.kind === 'ok' ? single.points.get(q.metric) : undefined,
            single.kind === 'error' ? single.reason : null,
          ),
        );
      }
      continue;
    }
    for (const q of request.queries) series.push(toSeries(request.identifier, q, undefined, outcome.reason));
  }
  return { series, calls };
}

type RequestOutcome =
  | { readonly kind: 'ok'; readonly points: Map<string, Map<number, number>> }
  | { readonly kind: 'error'; readonly reason: string; readonly invalidArgument: boolean };

async function fetchRequest(
  client: PIClient,
  plan: PiPlan,
  request: PiRequestSpec,
  options: FetchOptions,
  countCall: () => void,
): Promise<RequestOutcome> {
  const points = new Map<string, Map<number, number>>(request.queries.map((q) => [q.metric, new Map()]));
  let nextToken: string | undefined;
  let pages = 0;
  do {
    const token = nextToken;
    let out: GetResourceMetricsResponse;
    try {
      out = await withRetry(() => {
        countCall();
        return client.send(
          new GetResourceMetricsCommand({
            ServiceType: 'RDS',
            Identifier: request.identifier,
            MetricQueries: request.queries.map((q) => ({ Metric: q.metric })),
            StartTime: plan.window.start,
            EndTime: plan.window.end,
            PeriodInSeconds: plan.periodSec,
            // Stamp each datapoint with its period's start, as CloudWatch does; the API default is
            // END_TIME, which would put every PI point one period after the CloudWatch point and
            // the step window it belongs to (PI API reference, GetResourceMetrics PeriodAlignment).
            PeriodAlignment: 'START_TIME',
            NextToken: token,
          }),
        );
      }, options.retry);
    } catch (err) {
      const name = err instanceof Error ? err.name : '';
      return {
        kind: 'error',
        reason: `GetResourceMetrics failed${pages > 0 ? ` after ${pages} page(s)` : ''}: ${describeError(err)}`,
        invalidArgument: name === 'InvalidArgumentException',
      };
    }
    pages++;
    for (const item of out.MetricList ?? []) {
      const metric = item.Key?.Metric;
      // Only ungrouped series: a GroupBy answer carries Key.Dimensions and is not requested here.
      if (!metric || (item.Key?.Dimensions && Object.keys(item.Key.Dimensions).length > 0)) continue;
      const target = points.get(metric);
      if (!target) continue;
      for (const dp of item.DataPoints ?? []) {
        const t = dp.Timestamp?.getTime();
        const v = dp.Value;
        // PI leaves Value out where it has no sample for the period: unknown, not zero.
        if (t !== undefined && !Number.isNaN(t) && typeof v === 'number' && Number.isFinite(v))
          target.set(t, v);
      }
    }
    nextToken = out.NextToken || undefined;
  } while (nextToken);
  return { kind: 'ok', points };
}

function toSeries(
  identifier: string,
  q: PiQuerySpec,
  raw: Map<number, number> | undefined,
  error: string | null,
): MetricSeries {
  const points = [...(raw ?? new Map<number, number>()).entries()]
    .sort(([t1], [t2]) => t1 - t2)
    .map(([t, v]) => [new Date(t).toISOString(), v] as const);
  const base = {
    source: 'pi' as const,
    name: q.name,
    stat: q.stat,
    unit: q.unit,
    dimensions: { DbiResourceId: identifier },
    points,
  };
  if (error) return { ...base, status: 'error', reason: error };
  if (points.length === 0)
    return {
      ...base,
      status: 'no-data',
      reason: 'Performance Insights returned no datapoints in the window',
    };
  return { ...base, status: 'ok' };
}
