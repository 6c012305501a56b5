/**
 * The run store on S3: a BlobStore over `s3://<bucket>/runs/<runId>/` (the same layout the local
 * run directory has, lib/results/run-paths.ts) and the ResultSink the runner writes through — the
 * shared run store (lib/results/run-store.ts), so each step's JSON and raw files are written as soon
 * as the engine hands them over and every read is schema-checked.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { RunStore, type Scrub } from '../results/run-store';
import { runKeyPrefix } from '../results/run-paths';
import { runBlobs } from '../results/s3-blob-store';

// The S3 store itself lives with the run store (lib/results/s3-blob-store.ts); named here too for the cloud sides.
export { getText, listKeys, putText, runBlobs, S3BlobStore } from '../results/s3-blob-store';
export type { Scrub } from '../results/run-store';

export class S3ResultSink extends RunStore {
  constructor(
    s3: S3Client,
    readonly bucket: string,
    readonly runId: string,
    scrub: Scrub = (t) => t,
  ) {
    super(runBlobs(s3, bucket, runId), scrub);
  }

  get location(): string {
    return `s3://${this.bucket}/${runKeyPrefix(this.runId)}`;
  }
}
