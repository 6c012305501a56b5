/**
 * The one small storage interface a run directory sits behind: the local filesystem
 * (lib/results/fs-blob-store.ts) and an S3 prefix (lib/aws/s3-sink.ts) implement it, and the run store
 * (run-store.ts) — every file a run has, validated where read — is written once on top of it.
 *
 * Keys are relative to the store's root (the run directory, or `runs/<runId>/` in the bucket) and
 * use `/` as separator; lib/results/run-paths.ts names them.
 */
import type { ReadKind } from '../core/read';
import { isStepRecordPath, RUN_PATHS } from './run-paths';

/**
 * The size limit (lib/core/read.ts READ_LIMITS) a key of a run is read with, by both stores: step
 * records, metrics series, other JSON (manifest, plan, interruptions, fleet parts), raw output.
 */
export function readKindOf(key: string): ReadKind {
  if (isStepRecordPath(key)) return 'stepRecord';
  if (key.startsWith(`${RUN_PATHS.metricsDir}/`)) return 'metrics';
  if (key.endsWith('.json')) return 'runFile';
  return 'capture';
}

export const JSON_CONTENT_TYPE = 'application/json';

/** How every JSON file of a run is written: two-space indented, one newline at the end. */
export function runFileText(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

export interface BlobStore {
  /** Where a key lives, for messages (`/abs/runs/r1/plan.json`, `s3://bucket/runs/r1/plan.json`). */
  where(key: string): string;
  /**
   * The text of a key; null when it does not exist. Bounded by `readKindOf(key)`'s size limit; the
   * filesystem store also refuses links and special files (lib/core/read.ts readFileIn).
   */
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
