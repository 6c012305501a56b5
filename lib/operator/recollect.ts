/**
 * `proxylab collect --lab FILE --run-id ID`: collect a finished cloud run's metrics again (the
 * first collection ran before RDS had published the run's last minutes, or failed). The window
 * comes from the run's manifest in S3, the lab's resources from the stack outputs — the same
 * event runner 0 sends the collector Lambda.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { UsageError } from '../core/errors';
import type { CollectEvent } from '../collector/event';
import type { LabConfig } from '../config/types';
import { buildCollectEvent, collectorWindow } from '../aws/collector-invoke';
import { runnerArgsFromOutputs } from './operator';
import type { LabOutputs } from './outputs';
import { readManifest } from './runs';

export async function eventForFinishedRun(
  s3: S3Client,
  outputs: LabOutputs,
  lab: LabConfig,
  runId: string,
): Promise<CollectEvent> {
  const manifest = await readManifest(s3, outputs.resultsBucketName, runId);
  if (manifest === null) {
    throw new UsageError(
      `no run ${runId} in s3://${outputs.resultsBucketName}/runs/ (no manifest.json): check the run id (proxylab status)`,
    );
  }
  if (manifest.endedAt === null || manifest.status === 'running') {
    throw new UsageError(
      `run ${runId} has not ended yet (status ${manifest.status}); collect it when it has`,
    );
  }
  const args = runnerArgsFromOutputs(outputs, lab, {
    runId,
    suite: manifest.suite,
    region: null,
    startAt: '',
  });
  if (!args.collector) throw new UsageError('the stack outputs name no collector');
  const window = collectorWindow(new Date(manifest.startedAt), new Date(manifest.endedAt));
  return buildCollectEvent(args.collector, runId, window, outputs.resultsBucketName);
}
