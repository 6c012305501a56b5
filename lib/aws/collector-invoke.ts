/**
 * Invoke the metrics collector Lambda for a run window (runner 0 at the end of a run, or the CLI).
 * The event is the collector's own schema (lib/collector/event.ts); a function error comes back
 * as an InfrastructureError with the function's message.
 */
import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { InfrastructureError } from '../core/errors';
import { parseCollectEvent, type CollectEvent } from '../collector/event';
import type { CollectorSpec } from './runner-args';
import { METRICS_SETTLE_SEC } from '../config/run-estimate';

/**
 * How long after a run's end its metrics are worth collecting (lib/config/run-estimate.ts, which the
 * run's duration estimate counts too). Collected earlier, the last minutes of the run are missing
 * (see windowCompleteness); `proxylab collect --lab FILE --run-id ID` collects again.
 */
export const METRICS_SETTLE_MS = METRICS_SETTLE_SEC * 1000;

/** Milliseconds still to wait, at `now`, before collecting a window that ended at `end`. */
export function settleWaitMs(end: Date, now: Date, settleMs: number = METRICS_SETTLE_MS): number {
  return Math.max(0, end.getTime() + settleMs - now.getTime());
}

/** Sources the collector's summary says were incomplete (`cloudwatch`, `pi`); [] when unknown. */
export function incompleteSources(summary: unknown): string[] {
  if (!summary || typeof summary !== 'object') return [];
  const out: string[] = [];
  for (const source of ['cloudwatch', 'pi'] as const) {
    const s = (summary as Record<string, unknown>)[source];
    const c = s && typeof s === 'object' ? (s as Record<string, unknown>).completeness : undefined;
    if (c && typeof c === 'object' && (c as Record<string, unknown>).complete === false) out.push(source);
  }
  return out;
}

export function buildCollectEvent(
  spec: CollectorSpec,
  runId: string,
  window: { start: string; end: string },
  bucket: string,
): CollectEvent {
  return parseCollectEvent({
    runId,
    window,
    cluster: {
      clusterId: spec.clusterId,
      instanceIds: [...spec.instanceIds],
      piResourceIds: [...spec.piResourceIds],
      ...(spec.instanceClasses ? { instanceClasses: { ...spec.instanceClasses } } : {}),
      ...(spec.engine ? { engine: spec.engine } : {}),
    },
    proxies: [...spec.proxies],
    bucket,
  });
}

/**
 * CloudWatch wants a window of at least one period and data a few minutes old; a window shorter
 * than a minute is widened to one minute around its middle.
 */
export function collectorWindow(start: Date, end: Date): { start: string; end: string } {
  const minMs = 60_000;
  if (end.getTime() - start.getTime() >= minMs) return { start: start.toISOString(), end: end.toISOString() };
  const mid = (start.getTime() + end.getTime()) / 2;
  return { start: new Date(mid - minMs / 2).toISOString(), end: new Date(mid + minMs / 2).toISOString() };
}

export async function invokeCollector(
  lambda: LambdaClient,
  functionName: string,
  event: CollectEvent,
): Promise<unknown> {
  const res = await lambda.send(
    new InvokeCommand({
      FunctionName: functionName,
      InvocationType: 'RequestResponse',
      Payload: new TextEncoder().encode(JSON.stringify(event)),
    }),
  );
  const text = res.Payload ? new TextDecoder().decode(res.Payload) : '';
  if (res.FunctionError) {
    let message = text;
    try {
      const parsed = JSON.parse(text) as { errorMessage?: unknown };
      if (typeof parsed.errorMessage === 'string') message = parsed.errorMessage;
    } catch {
      /* keep the raw payload */
    }
    throw new InfrastructureError(`collector ${functionName} failed (${res.FunctionError}): ${message}`);
  }
  try {
    return text === '' ? null : (JSON.parse(text) as unknown);
  } catch {
    return text;
  }
}
