/**
 * ResultSink on the local filesystem: the run directory layout of lib/suite/types.ts. Every file is
 * written atomically (temp file in the same directory, then rename), and a step's raw files land
 * before its JSON, so a step JSON on disk always means a finished step with its raw output beside it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RawStepFiles, ResultSink, StepWindow } from '../engine/ports';
import {
  RESULT_SCHEMA_VERSION,
  stepFileName,
  type MetricSeries,
  type MetricsFile,
  type RunManifest,
  type StepRecord,
} from '../suite/types';

function writeFileAtomic(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

function readJson(file: string): unknown {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export class FileSystemSink implements ResultSink {
  constructor(readonly runDir: string) {}

  /** Paths relative to the run directory, as StepRecord.files records them. */
  static stepFiles(stepId: string, hasLog: boolean): StepRecord['files'] {
    const base = `steps/${stepFileName(stepId)}`;
    return { stdout: `${base}.stdout`, stderr: `${base}.stderr`, log: hasLog ? `${base}.log` : null };
  }

  writeManifest(manifest: RunManifest): Promise<void> {
    return settle(() => {
      writeFileAtomic(path.join(this.runDir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    });
  }

  readManifest(): Promise<RunManifest | null> {
    return settle(() => {
      const file = path.join(this.runDir, 'manifest.json');
      if (!fs.existsSync(file)) return null;
      const data = readJson(file);
      if (!isObject(data) || data.schemaVersion !== RESULT_SCHEMA_VERSION || typeof data.runId !== 'string') {
        throw new Error(`${file} is not a proxylab run manifest (schemaVersion ${RESULT_SCHEMA_VERSION})`);
      }
      return data as unknown as RunManifest;
    });
  }

  writeStep(record: StepRecord, raw: RawStepFiles): Promise<void> {
    return settle(() => {
      const dir = this.runDir;
      writeFileAtomic(path.join(dir, record.files.stdout), raw.stdout);
      writeFileAtomic(path.join(dir, record.files.stderr), raw.stderr);
      if (record.files.log !== null && raw.log !== null)
        writeFileAtomic(path.join(dir, record.files.log), raw.log);
      writeFileAtomic(
        path.join(dir, 'steps', `${stepFileName(record.stepId)}.json`),
        JSON.stringify(record, null, 2) + '\n',
      );
    });
  }

  completedStepIds(): Promise<Set<string>> {
    return settle(() => {
      const dir = path.join(this.runDir, 'steps');
      const ids = new Set<string>();
      if (!fs.existsSync(dir)) return ids;
      for (const name of fs.readdirSync(dir)) {
        if (!name.endsWith('.json') || name.startsWith('.')) continue;
        try {
          const data = readJson(path.join(dir, name));
          if (isObject(data) && typeof data.stepId === 'string') ids.add(data.stepId);
        } catch {
          /* a torn file cannot exist (atomic writes); an unreadable one is not a finished step */
        }
      }
      return ids;
    });
  }

  readSteps(): Promise<StepRecord[]> {
    return settle(() => {
      const dir = path.join(this.runDir, 'steps');
      if (!fs.existsSync(dir)) return [];
      return fs
        .readdirSync(dir)
        .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
        .map((n) => readJson(path.join(dir, n)) as StepRecord);
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
          const old = readJson(file) as MetricsFile;
          if (old.runId === runId && Array.isArray(old.series)) {
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
      writeFileAtomic(file, JSON.stringify(data, null, 2) + '\n');
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
      writeFileAtomic(
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

/**
 * Run synchronous file work behind the sink's promise-returning interface (the cloud sink does
 * network I/O): a throw becomes a rejection, exactly as it did from an async method.
 */
function settle<T>(work: () => T): Promise<T> {
  return new Promise((resolve) => resolve(work()));
}
