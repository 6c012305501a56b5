/**
 * Where the collector's metrics files go: the results bucket (`s3://<bucket>/runs/<runId>/metrics/…`)
 * or a local run directory (`<runDir>/metrics/…`). Both go through the run store (lib/results), so
 * the path (run-paths.ts metricsPath), the store and the schema a file is checked against are the
 * ones every other reader and writer of a run uses.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { FileSystemBlobStore } from '../results/fs-blob-store';
import { RunStore } from '../results/run-store';
import { runBlobs } from '../results/s3-blob-store';
import type { MetricsFile } from '../suite/types';

export interface RunWriter {
  /** Write `metrics/<name>.json` of the run (checked against its schema first); returns where it went. */
  writeMetricsFile(name: string, file: MetricsFile): Promise<string>;
}

class StoreRunWriter implements RunWriter {
  constructor(private readonly store: RunStore) {}

  writeMetricsFile(name: string, file: MetricsFile): Promise<string> {
    return this.store.writeMetricsFile(name, file);
  }
}

/** The run `runId` in the results bucket. */
export class S3RunWriter extends StoreRunWriter {
  constructor(s3: S3Client, bucket: string, runId: string) {
    super(new RunStore(runBlobs(s3, bucket, runId)));
  }
}

/** A local run directory. */
export class LocalRunWriter extends StoreRunWriter {
  /** @param runDir the run directory itself (`runs/<runId>`), resolved by the caller. */
  constructor(runDir: string) {
    super(new RunStore(new FileSystemBlobStore(runDir)));
  }
}
