/**
 * ResultSink on S3: `s3://<bucket>/runs/<runId>/…`, the same layout the filesystem sink writes
 * (see lib/suite/types.ts). Each step's JSON and raw files are written as soon as the engine hands
 * them over, so a runner that dies loses nothing already measured. `completedStepIds` lists
 * `steps/*.json` (ListObjectsV2, paginated) so a re-run of the same run id resumes.
 */
import {
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { RawStepFiles, ResultSink } from '../engine/ports';
import type { RunPlan } from '../suite/plan';
import { RUN_PATHS } from '../suite/run-paths';
import { manifestSchema, parseRunFile, planSchema, stepRecordSchema } from '../suite/schemas';
import {
  RESULT_SCHEMA_VERSION,
  stepFileName,
  type MetricSeries,
  type MetricsFile,
  type RunManifest,
  type StepRecord,
} from '../suite/types';

/** `runs/<runId>/` — every key of a run starts with it. */
export function runPrefix(runId: string): string {
  return `runs/${runId}/`;
}

function stepKeys(
  runId: string,
  stepId: string,
): { json: string; stdout: string; stderr: string; log: string } {
  const base = `${runPrefix(runId)}steps/${stepFileName(stepId)}`;
  return { json: `${base}.json`, stdout: `${base}.stdout`, stderr: `${base}.stderr`, log: `${base}.log` };
}

/** List every key under a prefix (follows continuation tokens). */
export async function listKeys(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const obj of page.Contents ?? []) if (obj.Key) keys.push(obj.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

/** Read an object as text; null when it does not exist. */
export async function getText(s3: S3Client, bucket: string, key: string): Promise<string | null> {
  try {
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    if (!res.Body) return null;
    return await res.Body.transformToString('utf-8');
  } catch (err) {
    if (
      err instanceof NoSuchKey ||
      (err instanceof Error && (err.name === 'NoSuchKey' || err.name === 'NotFound'))
    )
      return null;
    throw err;
  }
}

export async function putText(
  s3: S3Client,
  bucket: string,
  key: string,
  body: string,
  contentType: string,
): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }));
}

export async function putJson(s3: S3Client, bucket: string, key: string, value: unknown): Promise<void> {
  await putText(s3, bucket, key, JSON.stringify(value, null, 2) + '\n', 'application/json');
}

/** Applied to every body before it is written (the runner passes a password scrubber). */
export type Scrub = (text: string) => string;

export class S3ResultSink implements ResultSink {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly runId: string,
    private readonly scrub: Scrub = (t) => t,
  ) {}

  private put(key: string, body: string, contentType: string): Promise<void> {
    return putText(this.s3, this.bucket, key, this.scrub(body), contentType);
  }

  private putJson(key: string, value: unknown): Promise<void> {
    return this.put(key, JSON.stringify(value, null, 2) + '\n', 'application/json');
  }

  get location(): string {
    return `s3://${this.bucket}/${runPrefix(this.runId)}`;
  }

  async writeManifest(manifest: RunManifest): Promise<void> {
    await this.putJson(`${runPrefix(this.runId)}manifest.json`, manifest);
  }

  async readManifest(): Promise<RunManifest | null> {
    const key = `${runPrefix(this.runId)}${RUN_PATHS.manifest}`;
    const text = await getText(this.s3, this.bucket, key);
    return text === null ? null : parseRunFile(manifestSchema, `s3://${this.bucket}/${key}`, text);
  }

  async writePlan(plan: RunPlan): Promise<void> {
    await this.putJson(`${runPrefix(this.runId)}${RUN_PATHS.plan}`, plan);
  }

  /** plan.json, validated; null when the run has none yet (or is of an older release). */
  async readPlan(): Promise<RunPlan | null> {
    const key = `${runPrefix(this.runId)}${RUN_PATHS.plan}`;
    const text = await getText(this.s3, this.bucket, key);
    return text === null ? null : parseRunFile(planSchema, `s3://${this.bucket}/${key}`, text);
  }

  /** Raw files first, the step JSON last: a listed step JSON means its raw files are there too. */
  async writeStep(record: StepRecord, raw: RawStepFiles): Promise<void> {
    const keys = stepKeys(this.runId, record.stepId);
    const prefix = runPrefix(this.runId);
    const key = (rel: string | null | undefined, fallback: string): string => (rel ? prefix + rel : fallback);
    await this.put(key(record.files?.stdout, keys.stdout), raw.stdout, 'text/plain; charset=utf-8');
    await this.put(key(record.files?.stderr, keys.stderr), raw.stderr, 'text/plain; charset=utf-8');
    if (raw.log !== null)
      await this.put(key(record.files?.log, keys.log), raw.log, 'text/plain; charset=utf-8');
    await this.putJson(keys.json, record);
  }

  async readStep(stepId: string): Promise<StepRecord | null> {
    const key = stepKeys(this.runId, stepId).json;
    const text = await getText(this.s3, this.bucket, key);
    return text === null ? null : parseRunFile(stepRecordSchema, `s3://${this.bucket}/${key}`, text);
  }

  /**
   * Step ids with a step JSON under `steps/`. File names are `stepFileName(stepId)` (lossy), so
   * ids come from the manifest's plan when it maps the file, else from the JSON itself.
   */
  async completedStepIds(): Promise<Set<string>> {
    const stepsPrefix = `${runPrefix(this.runId)}steps/`;
    const jsonKeys = (await listKeys(this.s3, this.bucket, stepsPrefix)).filter(
      (k) => k.endsWith('.json') && !k.slice(stepsPrefix.length).includes('/'),
    );
    if (jsonKeys.length === 0) return new Set();
    const manifest = await this.readManifest();
    const byFile = new Map<string, string>();
    for (const id of manifest?.stepIds ?? []) byFile.set(`${stepsPrefix}${stepFileName(id)}.json`, id);
    const done = new Set<string>();
    for (const key of jsonKeys) {
      const planned = byFile.get(key);
      if (planned !== undefined) {
        done.add(planned);
        continue;
      }
      const text = await getText(this.s3, this.bucket, key);
      if (text === null) continue;
      done.add(parseRunFile(stepRecordSchema, `s3://${this.bucket}/${key}`, text).stepId);
    }
    return done;
  }

  /** Every step record of the run (for scenario comparisons on resume). */
  async readSteps(): Promise<StepRecord[]> {
    const stepsPrefix = `${runPrefix(this.runId)}steps/`;
    const keys = (await listKeys(this.s3, this.bucket, stepsPrefix)).filter(
      (k) => k.endsWith('.json') && !k.slice(stepsPrefix.length).includes('/'),
    );
    const records: StepRecord[] = [];
    for (const key of keys) {
      const text = await getText(this.s3, this.bucket, key);
      if (text !== null) records.push(parseRunFile(stepRecordSchema, `s3://${this.bucket}/${key}`, text));
    }
    return records;
  }

  async writeMetrics(
    name: string,
    runId: string,
    window: { start: string; end: string },
    series: MetricSeries[],
  ): Promise<void> {
    const file: MetricsFile = {
      schemaVersion: RESULT_SCHEMA_VERSION,
      runId,
      window,
      collectedAt: new Date().toISOString(),
      series,
    };
    await this.putJson(`${runPrefix(this.runId)}metrics/${name}.json`, file);
  }
}
