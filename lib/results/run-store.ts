/**
 * The run store: every file of a run (manifest, plan, steps with their raw output, metrics, step
 * windows) written and read once, for both worlds, through a BlobStore (the local run directory or
 * `s3://<bucket>/runs/<runId>/`). Paths come from lib/results/run-paths.ts; every read is checked
 * against lib/results/schemas.ts, so a malformed manifest, plan or step file is a RunFileError naming
 * the file and the field (resume must not guess), and so is a step file that is not a step of the run
 * (run-consistency.ts: its stepId another file's, or not in the plan). plan.json is written by
 * plan-file.ts (each script text once, by its SHA-256) and read in either of its forms.
 *
 * A step's raw files are written before its JSON, so a listed step JSON always means a finished
 * step with its raw output beside it. `scrub` is applied to every body before it is written (the
 * cloud runner passes its password scrubber).
 */
import { UsageError } from '../core/errors';
import type { RunPlan } from '../suite/plan';
import { isStepRecordPath, metricsPath, RUN_PATHS, stepPaths, unsafeRunKey } from './run-paths';
import { planFileOf } from './plan-file';
import { labRecordSchema, type LabRecord } from './lab-record';
import { checkPlanIdentity, checkStepFile, stepFileContext, type StepFileContext } from './run-consistency';
import {
  manifestSchema,
  metricsFileSchema,
  parseRunFile,
  planSchema,
  stepRecordSchema,
  stepWindowsFileSchema,
} from './schemas';
import {
  RESULT_SCHEMA_VERSION,
  type MetricSeries,
  type MetricsFile,
  type RunManifest,
  type StepRecord,
} from '../suite/types';
import { JSON_CONTENT_TYPE, runFileText, type BlobStore } from './blob-store';
import type { RawStepFiles, ResultSink, StepReadContext, StepWindow } from './sink';

export type Scrub = (text: string) => string;

const NO_CONTEXT: StepFileContext = { runId: null, stepIds: null };

const TEXT_TYPE = 'text/plain; charset=utf-8';

export class RunStore implements ResultSink {
  constructor(
    readonly blobs: BlobStore,
    private readonly scrub: Scrub = (t) => t,
  ) {}

  private put(key: string, body: string, contentType: string): Promise<void> {
    return this.blobs.write(key, this.scrub(body), contentType);
  }

  /** Write any JSON document of the run (scrubbed like every other file). */
  putJson(key: string, value: unknown): Promise<void> {
    return this.put(key, runFileText(value), JSON_CONTENT_TYPE);
  }

  writeManifest(manifest: RunManifest): Promise<void> {
    return this.putJson(RUN_PATHS.manifest, manifest);
  }

  async readManifest(): Promise<RunManifest | null> {
    const text = await this.blobs.read(RUN_PATHS.manifest);
    return text === null ? null : parseRunFile(manifestSchema, this.blobs.where(RUN_PATHS.manifest), text);
  }

  /** plan.json, each script file's text stored once (lib/results/plan-file.ts). */
  writePlan(plan: RunPlan): Promise<void> {
    return this.putJson(RUN_PATHS.plan, planFileOf(plan));
  }

  /** plan.json, validated; null for a run without one (yet, or of an older release). */
  async readPlan(): Promise<RunPlan | null> {
    const text = await this.blobs.read(RUN_PATHS.plan);
    return text === null ? null : parseRunFile(planSchema, this.blobs.where(RUN_PATHS.plan), text);
  }

  /** lab.json: the lab file the run was started with (lib/results/lab-record.ts), before plan.json. */
  writeLabRecord(record: LabRecord): Promise<void> {
    return this.putJson(RUN_PATHS.lab, record);
  }

  /** lab.json, validated; null for a run without one (no lab, or of an earlier release). */
  async readLabRecord(): Promise<LabRecord | null> {
    const text = await this.blobs.read(RUN_PATHS.lab);
    return text === null ? null : parseRunFile(labRecordSchema, this.blobs.where(RUN_PATHS.lab), text);
  }

  /** Raw files first, the step JSON last: a listed step JSON means its raw files are there too. */
  async writeStep(record: StepRecord, raw: RawStepFiles): Promise<void> {
    const paths = stepPaths(record.stepId);
    await this.put(record.files.stdout, raw.stdout, TEXT_TYPE);
    await this.put(record.files.stderr, raw.stderr, TEXT_TYPE);
    if (raw.log !== null) await this.put(record.files.log ?? paths.log, raw.log, TEXT_TYPE);
    await this.putJson(paths.json, record);
  }

  async readStep(stepId: string): Promise<StepRecord | null> {
    const key = stepPaths(stepId).json;
    const text = await this.blobs.read(key);
    if (text === null) return null;
    const where = this.blobs.where(key);
    return checkStepFile(key, where, parseRunFile(stepRecordSchema, where, text), NO_CONTEXT);
  }

  /**
   * Step ids already recorded. A step file that does not fit its schema, or is not the step it is
   * named after, is an error (never skipped).
   */
  async completedStepIds(): Promise<Set<string>> {
    return new Set((await this.readSteps()).map((r) => r.stepId));
  }

  /** Keys of the step records (`steps/<x>.json`; fleet parts and dot-files are not). */
  async stepRecordKeys(): Promise<string[]> {
    return (await this.blobs.list(`${RUN_PATHS.stepsDir}/`)).filter(isStepRecordPath);
  }

  /**
   * Every step record of the run, validated (for resume: the final table and scenario comparisons).
   * Each must be the step its file is named after and, when `run` says so, of that run id and among
   * the plan's steps; one that is not is a RunFileError naming the file (resume must not guess).
   */
  async readSteps(run: StepReadContext = {}): Promise<StepRecord[]> {
    const context: StepFileContext = {
      runId: run.runId ?? null,
      stepIds: run.stepIds === undefined ? null : new Set(run.stepIds),
    };
    const records: StepRecord[] = [];
    for (const key of await this.stepRecordKeys()) {
      const text = await this.blobs.read(key);
      if (text === null) continue;
      const where = this.blobs.where(key);
      records.push(checkStepFile(key, where, parseRunFile(stepRecordSchema, where, text), context));
    }
    return records;
  }

  /**
   * Write metrics/<name>.json. Samples already there for the same run (an earlier flush, or the
   * first part of a resumed run) are kept: series are merged by identity, points by time.
   */
  async writeMetrics(
    name: string,
    runId: string,
    window: { start: string; end: string },
    series: MetricSeries[],
  ): Promise<void> {
    const key = metricsPath(name);
    let merged = series;
    let start = window.start;
    let end = window.end;
    const text = await this.blobs.read(key);
    if (text !== null) {
      try {
        const old: MetricsFile = parseRunFile(metricsFileSchema, this.blobs.where(key), text);
        if (old.runId === runId) {
          merged = mergeSeries(old.series, series);
          if (old.window.start < start) start = old.window.start;
          if (old.window.end > end) end = old.window.end;
        }
      } catch {
        /* unreadable: replace it */
      }
    }
    const data: MetricsFile = {
      schemaVersion: RESULT_SCHEMA_VERSION,
      runId,
      window: { start, end },
      collectedAt: new Date().toISOString(),
      series: merged,
    };
    await this.putJson(key, data);
  }

  /** metrics/steps.json: when each step ran (merged by step id with what is already there). */
  async writeStepWindows(runId: string, windows: readonly StepWindow[]): Promise<void> {
    const byId = new Map<string, StepWindow>();
    const text = await this.blobs.read(RUN_PATHS.stepWindows);
    if (text !== null) {
      try {
        const old = parseRunFile(stepWindowsFileSchema, this.blobs.where(RUN_PATHS.stepWindows), text);
        if (old.runId === runId) for (const w of old.steps) byId.set(w.stepId, w);
      } catch {
        /* unreadable: replace it */
      }
    }
    for (const w of windows) byId.set(w.stepId, w);
    const steps = [...byId.values()].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    await this.putJson(RUN_PATHS.stepWindows, { schemaVersion: RESULT_SCHEMA_VERSION, runId, steps });
  }
}

/**
 * A run file that does not fit its schema is an error naming the file and the field: manifest,
 * plan, lab, step records and metrics series files are checked; raw output and step windows pass. A step
 * record must be the step its key is named after and, with `context`, of that run and plan.
 */
export function validateRunFile(
  key: string,
  where: string,
  text: string,
  context: StepFileContext = NO_CONTEXT,
): void {
  if (key === RUN_PATHS.manifest) parseRunFile(manifestSchema, where, text);
  else if (key === RUN_PATHS.plan) parseRunFile(planSchema, where, text);
  else if (key === RUN_PATHS.lab) parseRunFile(labRecordSchema, where, text);
  else if (isStepRecordPath(key))
    checkStepFile(key, where, parseRunFile(stepRecordSchema, where, text), context);
  else if (
    key.startsWith(`${RUN_PATHS.metricsDir}/`) &&
    key.endsWith('.json') &&
    key !== RUN_PATHS.stepWindows
  )
    parseRunFile(metricsFileSchema, where, text);
}

export interface CopyResult {
  readonly files: number;
  readonly bytes: number;
  /**
   * Keys not copied, with the reason: they would land outside the run directory, or they could not
   * be read or do not fit their schema (the copy is then partial).
   */
  readonly skipped: ReadonlyArray<{ readonly key: string; readonly reason: string }>;
  /**
   * manifest.json or plan.json among the skipped: without them the copy is not a run, and `fetch`
   * fails with exit 2 (docs/report.md, "partially bad runs").
   */
  readonly identityUnreadable: readonly string[];
}

/** manifest.json and plan.json of a run being copied, as read (text) and checked (value); null when absent or refused. */
interface CopiedIdentity {
  readonly manifest: RunManifest | null;
  readonly plan: RunPlan | null;
  /** The text of each of the two that was read and fits its schema (and plan.json its manifest). */
  readonly texts: ReadonlyMap<string, string>;
}

/**
 * manifest.json and plan.json of the source, each read once and checked (plan.json against the
 * manifest: same run, suite, mode and steps); a file that fails is null, with its reason in `skipped`.
 */
async function readIdentity(
  from: BlobStore,
  keys: readonly string[],
  skipped: Array<{ key: string; reason: string }>,
): Promise<CopiedIdentity> {
  const texts = new Map<string, string>();
  const attempt = async <T>(key: string, read: (text: string, where: string) => T): Promise<T | null> => {
    if (!keys.includes(key)) return null;
    try {
      const text = await from.read(key);
      if (text === null) return null;
      const value = read(text, from.where(key));
      texts.set(key, text);
      return value;
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      skipped.push({ key: from.where(key), reason: err.message });
      return null;
    }
  };
  const manifest = await attempt(RUN_PATHS.manifest, (text, where) =>
    parseRunFile(manifestSchema, where, text),
  );
  const plan = await attempt(RUN_PATHS.plan, (text, where) => {
    const read = parseRunFile(planSchema, where, text);
    return manifest === null ? read : checkPlanIdentity(read, manifest, 'manifest.json', where);
  });
  return { manifest, plan, texts };
}

/**
 * Copy a run from one store to another (`proxylab fetch`: S3 → the local run directory), every
 * file validated before it is written. `skip` leaves keys out (the fleet's coordination objects).
 * The policy for partially bad runs, the same as the report's: a file that cannot be read or does
 * not fit its schema is skipped and named (never written), the rest is copied. manifest.json and
 * plan.json are read first, so that each step file is checked against them (its run, its plan).
 */
export async function copyRun(
  from: BlobStore,
  to: BlobStore,
  options: { readonly skip?: (key: string) => boolean } = {},
): Promise<CopyResult> {
  let files = 0;
  let bytes = 0;
  const skipped: Array<{ key: string; reason: string }> = [];
  const keys = await from.list('');
  const identity = await readIdentity(from, keys, skipped);
  const identityUnreadable = skipped.map((s) => s.key);
  const context = stepFileContext(identity.manifest, identity.plan);
  for (const key of keys) {
    if (key === '' || key.endsWith('/') || options.skip?.(key)) continue;
    if (key === RUN_PATHS.manifest || key === RUN_PATHS.plan) {
      const text = identity.texts.get(key);
      if (text === undefined) continue; // refused above (named in `skipped`), or gone
      await to.write(key, text);
      bytes += Buffer.byteLength(text, 'utf8');
      files++;
      continue;
    }
    const unsafe = unsafeRunKey(key);
    if (unsafe !== null) {
      skipped.push({ key: from.where(key), reason: unsafe });
      continue;
    }
    let text: string | null;
    try {
      text = await from.read(key);
      if (text === null) continue;
      validateRunFile(key, from.where(key), text, context);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      skipped.push({ key: from.where(key), reason: err.message });
      continue;
    }
    await to.write(key, text);
    bytes += Buffer.byteLength(text, 'utf8');
    files++;
  }
  return { files, bytes, skipped, identityUnreadable };
}

function seriesKey(s: MetricSeries): string {
  const dims = Object.keys(s.dimensions)
    .sort()
    .map((k) => `${k}=${s.dimensions[k]}`)
    .join(',');
  return `${s.source}|${s.name}|${s.stat}|${dims}`;
}

/** Merge two series lists: same identity → points united (later sample wins for the same time). */
export function mergeSeries(a: readonly MetricSeries[], b: readonly MetricSeries[]): MetricSeries[] {
  const out = new Map<string, MetricSeries>();
  for (const s of [...a, ...b]) {
    const key = seriesKey(s);
    const prev = out.get(key);
    if (!prev) {
      out.set(key, s);
      continue;
    }
    const points = new Map<string, number>();
    for (const [t, v] of [...prev.points, ...s.points]) points.set(t, v);
    const sorted = [...points.entries()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    const status =
      sorted.length > 0 ? 'ok' : prev.status === 'error' || s.status === 'error' ? 'error' : 'no-data';
    const reason = status === 'ok' ? undefined : (s.reason ?? prev.reason);
    out.set(key, { ...s, points: sorted, status, ...(reason !== undefined ? { reason } : {}) });
  }
  return [...out.values()];
}
