/**
 * Collector Lambda: wiring only. Reads RESULTS_BUCKET, builds the SDK clients once per container,
 * validates the event and hands it to lib/collector (the same code `proxylab collect` runs).
 *
 * Event: { runId, window: {start, end}, cluster: {clusterId, instanceIds, piResourceIds,
 * instanceClasses?, engine?}, proxies: [names], bucket?, skipPi? } — see lib/collector/event.ts.
 */
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { PIClient } from '@aws-sdk/client-pi';
import { S3Client } from '@aws-sdk/client-s3';
import { UsageError } from '../../lib/core/errors';
import {
  collectMetrics,
  parseCollectEvent,
  S3RunWriter,
  wantsPi,
  type CollectSummary,
} from '../../lib/collector';

const cloudwatch = new CloudWatchClient({});
const pi = new PIClient({});
const s3 = new S3Client({});

export async function handler(event: unknown): Promise<CollectSummary> {
  const request = parseCollectEvent(event);
  const bucket = request.bucket ?? process.env.RESULTS_BUCKET;
  if (!bucket) {
    throw new UsageError(
      'bucket: the event names no bucket and the function has no RESULTS_BUCKET environment variable',
    );
  }
  return collectMetrics(request, {
    cloudwatch,
    pi: wantsPi(request) ? pi : null,
    writer: new S3RunWriter(s3, bucket, request.runId),
  });
}
