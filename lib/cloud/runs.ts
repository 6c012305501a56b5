/**
 * Runs in the results bucket, seen from the operator's laptop: progress (steps done / total,
 * ETA) from the manifest and the step listing, the list of runs, and `fetch` — S3 → a local
 * `runs/<runId>/` with the same layout `proxylab local` writes.
 */
import * as path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { InfrastructureError, UsageError } from '../core/errors';
import { formatDuration } from '../core/format';
import type { RunManifest } from '../suite/types';
import { getText, listKeys, runPrefix } from './s3-sink';
import { writeFileAtomic } from '../core/atomic-write';
import { isStepRecordPath, RUN_PATHS } from '../suite/run-paths';
import {
  manifestSchema,
  metricsFileSchema,
  parseRunFile,
  planSchema,
  stepRecordSchema,
} from '../suite/schemas';

export interface RunProgress {
  readonly runId: string;
  readonly suite: string | null;
  readonly status: RunManifest['status'] | 'not-started';
  readonly stepsTotal: number | null;
  readonly stepsDone: number;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  readonly elapsedSec: number | null;
  /** Linear estimate from the pace so far; null until a step finished or when done. */
  readonly etaSec: number | null;
  readonly error: string | null;
}

export async function readManifest(s3: S3Client, bucket: string, runId: string): Promise<RunManifest | null> {
  const key = `${runPrefix(runId)}${RUN_PATHS.manifest}`;
  const text = await getText(s3, bucket, key);
  return text === null ? null : parseRunFile(manifestSchema, `s3://${bucket}/${key}`, text);
}

/** Step JSON files directly under `steps/` (merged records; fleet parts live elsewhere). */
export async function countStepFiles(s3: S3Client, bucket: string, runId: string): Promise<number> {
  const prefix = `${runPrefix(runId)}steps/`;
  return (await listKeys(s3, bucket, prefix)).filter(
    (k) => k.endsWith('.json') && !k.slice(prefix.length).includes('/'),
  ).length;
}

export function computeProgress(
  runId: string,
  manifest: RunManifest | null,
  stepsDone: number,
  now: Date,
): RunProgress {
  if (!manifest) {
    return {
      runId,
      suite: null,
      status: 'not-started',
      stepsTotal: null,
      stepsDone,
      startedAt: null,
      endedAt: null,
      elapsedSec: null,
      etaSec: null,
      error: null,
    };
  }
  const total = manifest.stepIds.length;
  const start = Date.parse(manifest.startedAt);
  const end = manifest.endedAt ? Date.parse(manifest.endedAt) : now.getTime();
  const elapsedSec = Number.isNaN(start) ? null : Math.max(0, Math.round((end - start) / 1000));
  const remaining = Math.max(0, total - stepsDone);
  const etaSec =
    manifest.status !== 'running' || elapsedSec === null || stepsDone === 0 || remaining === 0
      ? null
      : Math.round((elapsedSec / stepsDone) * remaining);
  return {
    runId,
    suite: manifest.suite,
    status: manifest.status,
    stepsTotal: total,
    stepsDone: Math.min(stepsDone, total),
    startedAt: manifest.startedAt,
    endedAt: manifest.endedAt,
    elapsedSec,
    etaSec,
    error: manifest.error ?? null,
  };
}

export async function readProgress(
  s3: S3Client,
  bucket: string,
  runId: string,
  now: Date = new Date(),
): Promise<RunProgress> {
  const [manifest, done] = await Promise.all([
    readManifest(s3, bucket, runId),
    countStepFiles(s3, bucket, runId),
  ]);
  return computeProgress(runId, manifest, done, now);
}

export function formatProgress(p: RunProgress): string {
  if (p.status === 'not-started') return `${p.runId}: no manifest yet (runners starting?)`;
  const eta = p.etaSec === null ? '' : `, ETA ${formatDuration(p.etaSec)}`;
  const err = p.error ? ` — ${p.error}` : '';
  return `${p.runId} [${p.suite}] ${p.status}: ${p.stepsDone}/${p.stepsTotal ?? '?'} steps, elapsed ${formatDuration(p.elapsedSec)}${eta}${err}`;
}

/** Run ids in the bucket (`runs/<runId>/`), newest manifest first where known. */
export async function listRuns(s3: S3Client, bucket: string): Promise<string[]> {
  const ids: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: 'runs/', Delimiter: '/', ContinuationToken: token }),
    );
    for (const p of page.CommonPrefixes ?? []) {
      const id = p.Prefix?.slice('runs/'.length).replace(/\/$/, '');
      if (id) ids.push(id);
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return ids.sort().reverse();
}

export interface FetchResult {
  readonly runDir: string;
  readonly files: number;
  readonly bytes: number;
}

/**
 * Download `runs/<runId>/` into `<outDir>/<runId>/`. Fleet coordination objects (`fleet/`) are
 * skipped: the merged step records already carry the parts. Keys that would escape the run
 * directory are refused.
 */
export async function fetchRun(
  s3: S3Client,
  bucket: string,
  runId: string,
  outDir: string,
  options: { includeFleet?: boolean } = {},
): Promise<FetchResult> {
  const prefix = runPrefix(runId);
  const keys = await listKeys(s3, bucket, prefix);
  if (keys.length === 0)
    throw new UsageError(`run ${runId}: nothing under s3://${bucket}/${prefix} (see proxylab status)`);
  const runDir = path.resolve(outDir, runId);
  let bytes = 0;
  let files = 0;
  for (const key of keys) {
    const rel = key.slice(prefix.length);
    if (rel === '' || rel.endsWith('/')) continue;
    if (!options.includeFleet && rel.startsWith('fleet/')) continue;
    // Writer locks (lib/cloud/run-lock.ts) belong to the bucket's live runners, not to a copy.
    if (rel.startsWith('locks/') || rel === RUN_PATHS.lock) continue;
    const dest = path.resolve(runDir, rel);
    if (!dest.startsWith(runDir + path.sep))
      throw new InfrastructureError(`refusing key ${key}: it escapes ${runDir}`);
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    if (!res.Body) continue;
    const body = await res.Body.transformToByteArray();
    validateFetched(rel, `s3://${bucket}/${key}`, body);
    writeFileAtomic(dest, body);
    bytes += body.byteLength;
    files++;
  }
  return { runDir, files, bytes };
}

/** A run file that does not fit its schema is refused on fetch, naming the object and the field. */
function validateFetched(rel: string, where: string, body: Uint8Array): void {
  const text = (): string => Buffer.from(body).toString('utf8');
  if (rel === RUN_PATHS.manifest) parseRunFile(manifestSchema, where, text());
  else if (rel === RUN_PATHS.plan) parseRunFile(planSchema, where, text());
  else if (isStepRecordPath(rel)) parseRunFile(stepRecordSchema, where, text());
  else if (
    rel.startsWith(`${RUN_PATHS.metricsDir}/`) &&
    rel.endsWith('.json') &&
    rel !== RUN_PATHS.stepWindows
  )
    parseRunFile(metricsFileSchema, where, text());
}
