/**
 * Where the collector's metrics files go: the results bucket (`s3://<bucket>/runs/<runId>/metrics/…`)
 * or a local run directory (`<runDir>/metrics/…`), through lib/results' blob stores and run paths —
 * the same store, path and JSON form every other writer of a run uses.
 *
 * Not through RunStore.writeMetricsFile (which also checks the file against its zod schema): the
 * full zod would add about 400 KiB to the collector Lambda's bundle (its budget is in
 * test/integration/collector-bundle.test.ts). The check it skips is made at compile time instead:
 * MetricsFile and metricsFileSchema are proved the same shape (lib/results/schemas.ts SameShape).
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { JSON_CONTENT_TYPE, runFileText, type BlobStore } from '../results/blob-store';
import { FileSystemBlobStore } from '../results/fs-blob-store';
import { metricsPath } from '../results/run-paths';
import { runBlobs } from '../results/s3-blob-store';
import type { MetricsFile } from '../suite/types';

export interface RunWriter {
  /** Write `metrics/<name>.json` of the run; returns where it went. */
  writeMetricsFile(name: string, file: MetricsFile): Promise<string>;
}

class BlobRunWriter implements RunWriter {
  constructor(private readonly blobs: BlobStore) {}

  async writeMetricsFile(name: string, file: MetricsFile): Promise<string> {
    const key = metricsPath(name);
    await this.blobs.write(key, runFileText(file), JSON_CONTENT_TYPE);
    return this.blobs.where(key);
  }
}

/** The run `runId` in the results bucket. */
export class S3RunWriter extends BlobRunWriter {
  constructor(s3: S3Client, bucket: string, runId: string) {
    super(runBlobs(s3, bucket, runId));
  }
}

/** A local run directory. */
export class LocalRunWriter extends BlobRunWriter {
  /** @param runDir the run directory itself (`runs/<runId>`), resolved by the caller. */
  constructor(runDir: string) {
    super(new FileSystemBlobStore(runDir));
  }
}
