/**
 * Collect CloudWatch and Performance Insights metrics for one run window and write them as
 * MetricsFile JSON beside the run's results. Plan (pure) → fetch → write.
 */
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { PIClient } from '@aws-sdk/client-pi';
import type { CollectEvent } from './event';

export interface MetricsWriter {
  /** Write one JSON document at `key` (relative to the results root); returns where it went. */
  writeJson(key: string, body: unknown): Promise<string>;
}

export interface CollectDeps {
  readonly cloudwatch: CloudWatchClient;
  /** null: Performance Insights is not read. */
  readonly pi: PIClient | null;
  readonly writer: MetricsWriter;
  readonly now?: () => Date;
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface CollectSummary {
  readonly runId: string;
  readonly window: { readonly start: string; readonly end: string };
  readonly written: readonly string[];
  readonly cloudwatch: StatusCounts;
  readonly pi: StatusCounts | null;
}

export interface StatusCounts {
  readonly ok: number;
  readonly noData: number;
  readonly error: number;
}

export async function collectMetrics(event: CollectEvent, deps: CollectDeps): Promise<CollectSummary> {
  void deps;
  throw new Error(`collectMetrics not implemented yet (run ${event.runId})`);
}
