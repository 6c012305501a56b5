/**
 * The one small storage interface a run directory sits behind: the local filesystem
 * (lib/local/fs-blobs.ts) and an S3 prefix (lib/cloud/s3-sink.ts) implement it, and the run store
 * (run-store.ts) — every file a run has, validated where read — is written once on top of it.
 *
 * Keys are relative to the store's root (the run directory, or `runs/<runId>/` in the bucket) and
 * use `/` as separator; lib/suite/run-paths.ts names them.
 */
export interface BlobStore {
  /** Where a key lives, for messages (`/abs/runs/r1/plan.json`, `s3://bucket/runs/r1/plan.json`). */
  where(key: string): string;
  /** The text of a key; null when it does not exist. */
  read(key: string): Promise<string | null>;
  /**
   * Write a key atomically: a reader sees the old content or the new, never half (a rename on the
   * filesystem; a single PutObject on S3).
   */
  write(key: string, body: string, contentType?: string): Promise<void>;
  /** Every key under a prefix (`steps/`, or '' for all), relative to the root, sorted. */
  list(prefix: string): Promise<string[]>;
  exists(key: string): Promise<boolean>;
}
