/**
 * Runs in the results bucket, seen from the operator's laptop: progress (steps done / total,
 * ETA) from the manifest and the step listing, the list of runs, and `fetch` — S3 → a local
 * `runs/<runId>/` with the same layout `proxylab local` writes.
 */
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { UsageError } from '../core/errors';
import { formatDuration } from '../core/format';
import { forTerminalLine } from '../core/terminal-text';
import type { BlobStore } from '../results/blob-store';
import { copyRun, RunStore, type CopyResult } from '../results/run-store';
import { RUN_PATHS } from '../results/run-paths';
import type { RunManifest } from '../suite/types';
import { isRunId } from '../aws/runner-args';
import { runBlobs } from '../aws/s3-sink';
import {
  describeInterruption,
  openInterruptions,
  readInterruptions,
  type InterruptionRecord,
} from '../aws/spot';

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
  /**
   * Runners whose interruption (spot notice or signal) no runner has resumed from yet
   * (lib/aws/spot.ts); empty once the run was resumed in every interrupted slot.
   */
  readonly interruptions: readonly InterruptionRecord[];
  /** Files left out because they could not be read (`<file>: <why>`): the status is PARTIAL. */
  readonly skipped?: readonly string[];
}

export async function readManifest(s3: S3Client, bucket: string, runId: string): Promise<RunManifest | null> {
  return new RunStore(runBlobs(s3, bucket, runId)).readManifest();
}

/** Step JSON files directly under `steps/` (merged records; fleet parts live elsewhere). */
export async function countStepFiles(s3: S3Client, bucket: string, runId: string): Promise<number> {
  return (await new RunStore(runBlobs(s3, bucket, runId)).stepRecordKeys()).length;
}

export function computeProgress(
  runId: string,
  manifest: RunManifest | null,
  stepsDone: number,
  now: Date,
  interruptions: readonly InterruptionRecord[] = [],
): RunProgress {
  const open = openInterruptions(interruptions);
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
      interruptions: open,
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
    interruptions: open,
  };
}

export async function readProgress(
  s3: S3Client,
  bucket: string,
  runId: string,
  now: Date = new Date(),
): Promise<RunProgress> {
  // Partially bad runs (docs/report.md): an unreadable interruption record is skipped and named;
  // an unreadable manifest makes the run unreadable (readListing names the file).
  const skipped: string[] = [];
  const [manifest, done, interruptions] = await Promise.all([
    readManifest(s3, bucket, runId),
    countStepFiles(s3, bucket, runId),
    readInterruptions(runBlobs(s3, bucket, runId), skipped),
  ]);
  return { ...computeProgress(runId, manifest, done, now, interruptions), skipped };
}

/**
 * One line per run. Every string in it comes from the bucket (run id, suite, status, error), so
 * each is shown with control characters made visible: an escape sequence in a manifest must not
 * clear the operator's screen or retitle the window.
 */
export function formatProgress(p: RunProgress): string {
  const id = forTerminalLine(p.runId);
  if (p.status === 'not-started') return `${id}: no manifest yet (runners starting?)`;
  const eta = p.etaSec === null ? '' : `, ETA ${formatDuration(p.etaSec)}`;
  const err = p.error ? ` — ${forTerminalLine(p.error)}` : '';
  const skipped = (p.skipped ?? []).map((s) => `\n  PARTIAL status: skipped ${forTerminalLine(s)}`).join('');
  const line = `${id} [${forTerminalLine(String(p.suite))}] ${forTerminalLine(String(p.status))}: ${p.stepsDone}/${p.stepsTotal ?? '?'} steps, elapsed ${formatDuration(p.elapsedSec)}${eta}${err}${skipped}`;
  if (p.interruptions.length === 0) return line;
  const notes = p.interruptions.map((r) => `\n  ${forTerminalLine(describeInterruption(r))}`).join('');
  return `${line}${notes}\n  finished steps are kept; resume with the same run id: proxylab run --lab FILE --suite ${forTerminalLine(String(p.suite))} --run-id ${id}`;
}

/** One row of `proxylab status` without a run id: the run's progress, or why it cannot be read. */
export type RunListing =
  | { readonly runId: string; readonly progress: RunProgress; readonly unreadable: null }
  | { readonly runId: string; readonly progress: null; readonly unreadable: string };

/**
 * Progress of one run for a listing: a manifest that is not JSON or lacks fields is reported as
 * unreadable (one row) instead of ending the whole listing.
 */
export async function readListing(
  s3: S3Client,
  bucket: string,
  runId: string,
  now: Date = new Date(),
): Promise<RunListing> {
  try {
    return { runId, progress: await readProgress(s3, bucket, runId, now), unreadable: null };
  } catch (err) {
    // The manifest is checked against its schema where it is read (lib/results/schemas.ts); the
    // message names the file (`s3://…/manifest.json: …`).
    if (err instanceof UsageError) return { runId, progress: null, unreadable: err.message };
    throw err;
  }
}

export function formatListing(row: RunListing): string {
  return row.progress !== null
    ? formatProgress(row.progress)
    : `${forTerminalLine(row.runId)}: unreadable — ${forTerminalLine(row.unreadable)}`;
}

/** `fn` over `items` with at most `limit` calls in flight; results in input order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

/** Requests in flight while listing runs: fast against S3, gentle on a laptop's connection pool. */
export const LIST_CONCURRENCY = 16;

/** Run ids in the bucket (`runs/<runId>/`), newest manifest first where known. */
/** The runs of a bucket, newest first, and the prefixes under `runs/` that are not run ids. */
export interface RunList {
  readonly ids: string[];
  /** `runs/<x>/` prefixes whose `<x>` is no run id (`..`, `..%2f..%2fx`): not listed as runs. */
  readonly ignored: string[];
}

export async function listRuns(s3: S3Client, bucket: string): Promise<RunList> {
  const ids: string[] = [];
  const ignored: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: 'runs/', Delimiter: '/', ContinuationToken: token }),
    );
    for (const p of page.CommonPrefixes ?? []) {
      const id = p.Prefix?.slice('runs/'.length).replace(/\/$/, '');
      if (id === undefined || id === '') continue;
      // Only a run id names a run (what `proxylab run` writes and `status RUNID` / `fetch` accept).
      if (isRunId(id)) ids.push(id);
      else ignored.push(id);
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return { ids: ids.sort().reverse(), ignored };
}

/** The note `status` prints for ignored prefixes (at most 3 named, shown as data), or null. */
export function formatIgnoredPrefixes(ignored: readonly string[]): string | null {
  if (ignored.length === 0) return null;
  const named = ignored.slice(0, 3).map((p) => JSON.stringify(forTerminalLine(p)));
  const more = ignored.length > 3 ? ` and ${ignored.length - 3} more` : '';
  return `note: ${ignored.length} prefix(es) under runs/ are not run ids and are not listed: ${named.join(', ')}${more}`;
}

/** What `proxylab fetch` copied and skipped: copyRun's result (lib/results/run-store.ts). */
export type FetchResult = CopyResult;

/**
 * Copy `runs/<runId>/` into `dest` (the local run directory, lib/results/fs-blob-store.ts) through the run
 * store: each manifest, plan, step and metrics file is validated before it is written. Fleet
 * coordination objects (`fleet/`) are skipped: the merged step records already carry the parts. A
 * key that would escape the run directory (`..` segments, an absolute path) is skipped and
 * reported; the rest is fetched.
 */
export async function fetchRun(
  s3: S3Client,
  bucket: string,
  runId: string,
  dest: BlobStore,
  options: { includeFleet?: boolean } = {},
): Promise<FetchResult> {
  const from = runBlobs(s3, bucket, runId);
  const res = await copyRun(from, dest, {
    // Writer locks (lib/runner/run-lock.ts) belong to the bucket's live runners, not to a copy.
    skip: (key) =>
      (!options.includeFleet && key.startsWith(`${RUN_PATHS.fleetDir}/`)) ||
      key.startsWith('locks/') ||
      key === RUN_PATHS.lock,
  });
  // Listed again only when nothing was copied, to tell "no such run" from "only skipped keys".
  if (res.files === 0 && res.skipped.length === 0 && (await from.list('')).length === 0)
    throw new UsageError(`run ${runId}: nothing under ${from.where('')} (see proxylab status)`);
  return res;
}
