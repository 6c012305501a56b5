/**
 * Collector Lambda: wiring only. Reads RESULTS_BUCKET, builds the SDK clients once per container,
 * validates the event and hands it to lib/collector (the same code `proxylab collect` runs).
 */
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { PIClient } from '@aws-sdk/client-pi';
import { S3Client } from '@aws-sdk/client-s3';
import { UsageError } from '../../lib/cli/errors';
import { collectMetrics, parseCollectEvent, type CollectSummary } from '../../lib/collector';
import { S3MetricsWriter } from '../../lib/collector/writer';

const cloudwatch = new CloudWatchClient({});
const pi = new PIClient({});
const s3 = new S3Client({});

export async function handler(event: unknown): Promise<CollectSummary> {
  const request = parseCollectEvent(event);
  const bucket = request.bucket ?? process.env.RESULTS_BUCKET;
  if (!bucket) {
    throw new UsageError('bucket: the event has no bucket and the function has no RESULTS_BUCKET environment variable');
  }
  const usePi = request.skipPi !== true && request.cluster.piResourceIds.length > 0;
  return collectMetrics(request, { cloudwatch, pi: usePi ? pi : null, writer: new S3MetricsWriter(s3, bucket) });
}
