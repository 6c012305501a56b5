/**
 * ResultSink on the local filesystem: the run directory layout of lib/suite/run-paths.ts. Every file
 * is written atomically (temp file in the same directory, then rename), and a step's raw files land
 * before its JSON, so a step JSON on disk always means a finished step with its raw output beside it.
 * Every read is checked against lib/suite/schemas.ts: a malformed manifest, plan or step file is a
 * RunFileError naming the file and the field (resume must not guess).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RawStepFiles, ResultSink, StepWindow } from '../engine/ports';
import type { RunPlan } from '../suite/plan';
import { isStepRecordPath, RUN_PATHS, stepPaths } from '../suite/run-paths';
import {
  manifestSchema,
  metricsFileSchema,
  parseRunFile,
  planSchema,
  stepRecordSchema,
} from '../suite/schemas';
import {
  RESULT_SCHEMA_VERSION,
  stepFileName,
  type MetricSeries,
  type MetricsFile,
  type RunManifest,
  type StepRecord,
} from '../suite/types';

// Shared with the cloud adapter (fetch), so it lives in lib/core.
export { writeFileAtomic } from '../core/atomic-write';
import { writeFileAtomic as writeAtomic, type WriteFileFn } from '../core/atomic-write';

function readJson(file: string): unknown {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export class FileSystemSink implements ResultSink {
  /** @param write writes a temporary file (tests inject a failing one to simulate a full disk). */
  constructor(
    readonly runDir: string,
    private readonly write?: WriteFileFn,
  ) {}

  /** Every file of the run goes through here: temp file + rename, symlink-safe (lib/core/atomic-write). */
  private writeFileAtomic(file: string, content: string): void {
    writeAtomic(file, content, this.write);
  }

  /** Paths relative to the run directory, as StepRecord.files records them. */
  static stepFiles(stepId: string, hasLog: boolean): StepRecord['files'] {
    const base = `steps/${stepFileName(stepId)}`;
    return { stdout: `${base}.stdout`, stderr: `${base}.stderr`, log: hasLog ? `${base}.log` : null };
  }

  writeManifest(manifest: RunManifest): Promise<void> {
    return settle(() => {
      this.writeFileAtomic(
        path.join(this.runDir, RUN_PATHS.manifest),
        JSON.stringify(manifest, null, 2) + '\n',
      );
    });
  }

  readManifest(): Promise<RunManifest | null> {
    return settle(() => {
      const file = path.join(this.runDir, RUN_PATHS.manifest);
      if (!fs.existsSync(file)) return null;
      return parseRunFile(manifestSchema, file, fs.readFileSync(file, 'utf8'));
    });
  }

  writePlan(plan: RunPlan): Promise<void> {
    return settle(() => {
      this.writeFileAtomic(path.join(this.runDir, RUN_PATHS.plan), JSON.stringify(plan, null, 2) + '\n');
    });
  }

  /** plan.json, validated; null for a run without one (older releases). */
  readPlan(): Promise<RunPlan | null> {
    return settle(() => {
      const file = path.join(this.runDir, RUN_PATHS.plan);
      if (!fs.existsSync(file)) return null;
      return parseRunFile(planSchema, file, fs.readFileSync(file, 'utf8'));
    });
  }

  writeStep(record: StepRecord, raw: RawStepFiles): Promise<void> {
    return settle(() => {
      const dir = this.runDir;
      this.writeFileAtomic(path.join(dir, record.files.stdout), raw.stdout);
      this.writeFileAtomic(path.join(dir, record.files.stderr), raw.stderr);
      if (record.files.log !== null && raw.log !== null)
        this.writeFileAtomic(path.join(dir, record.files.log), raw.log);
      this.writeFileAtomic(
        path.join(dir, stepPaths(record.stepId).json),
        JSON.stringify(record, null, 2) + '\n',
      );
    });
  }

  /** Step ids already recorded. A step file that does not fit its schema is an error (never skipped). */
  async completedStepIds(): Promise<Set<string>> {
    return new Set((await this.readSteps()).map((r) => r.stepId));
  }

  readSteps(): Promise<StepRecord[]> {
    return settle(() => {
      const dir = path.join(this.runDir, RUN_PATHS.stepsDir);
      if (!fs.existsSync(dir)) return [];
      return fs
        .readdirSync(dir)
        .filter((n) => isStepRecordPath(`${RUN_PATHS.stepsDir}/${n}`))
        .sort()
        .map((n) => {
          const file = path.join(dir, n);
          return parseRunFile(stepRecordSchema, file, fs.readFileSync(file, 'utf8'));
        });
    });
  }

  /**
   * Write metrics/<name>.json. Samples already in the file for the same run (an earlier flush, or
   * the first part of a resumed run) are kept: series are merged by identity, points by time.
   */
  writeMetrics(
    name: string,
    runId: string,
    window: { start: string; end: string },
    series: MetricSeries[],
  ): Promise<void> {
    return settle(() => {
      const file = path.join(this.runDir, 'metrics', `${name}.json`);
      let merged = series;
      let start = window.start;
      let end = window.end;
      if (fs.existsSync(file)) {
        try {
          const old: MetricsFile = parseRunFile(metricsFileSchema, file, fs.readFileSync(file, 'utf8'));
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
      this.writeFileAtomic(file, JSON.stringify(data, null, 2) + '\n');
    });
  }

  /** metrics/steps.json: when each step ran (merged by step id with what is already there). */
  writeStepWindows(runId: string, windows: readonly StepWindow[]): Promise<void> {
    return settle(() => {
      const file = path.join(this.runDir, 'metrics', 'steps.json');
      const byId = new Map<string, StepWindow>();
      if (fs.existsSync(file)) {
        try {
          const old = readJson(file);
          if (isObject(old) && old.runId === runId && Array.isArray(old.steps)) {
            for (const w of old.steps as StepWindow[]) byId.set(w.stepId, w);
          }
        } catch {
          /* unreadable: replace it */
        }
      }
      for (const w of windows) byId.set(w.stepId, w);
      const steps = [...byId.values()].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
      this.writeFileAtomic(
        file,
        JSON.stringify({ schemaVersion: RESULT_SCHEMA_VERSION, runId, steps }, null, 2) + '\n',
      );
    });
  }
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

/** Synchronous file work as a promise: a throw becomes a rejection, as the async ResultSink expects. */
function settle<T>(work: () => T): Promise<T> {
  return new Promise((resolve) => resolve(work()));
}
