/**
 * The report's metrics over time: the panels the run's mode always shows, their series, and the
 * step (or scenario) windows shaded on them (./shape.ts).
 */
import type { MetricSeries, RunDatabase, StepRecord } from '../suite/types';
import {
  CLOUD_REPORT_METRICS,
  LOCAL_REPORT_METRICS,
  metricDef,
  RDS_POSTGRES_REPORT_METRICS,
} from '../collector/catalog';
import { uniqueInOrder } from './cells';
import type { LoadedMetrics } from './load';

// ---------------------------------------------------------------- metrics over time

/** A panel the report always shows ("no data" when absent): a catalog metric name and its title. */
export interface MetricWanted {
  readonly name: string;
  readonly title: string;
  readonly unit: string | null;
}

function wantedFromCatalog(names: readonly string[]): MetricWanted[] {
  return names.map((name) => {
    const def = metricDef(name);
    if (!def) throw new Error(`report metric ${name} is not in the collector catalog`);
    return { name, title: def.title, unit: def.unit };
  });
}

/** The metrics the published experiments turned on, in the order the report shows them. */
export const CLOUD_METRICS: readonly MetricWanted[] = wantedFromCatalog(CLOUD_REPORT_METRICS);
export const LOCAL_METRICS: readonly MetricWanted[] = wantedFromCatalog(LOCAL_REPORT_METRICS);
/** Cloud runs on RDS for PostgreSQL (environment.database.engine `postgres`). */
export const RDS_POSTGRES_METRICS: readonly MetricWanted[] = wantedFromCatalog(RDS_POSTGRES_REPORT_METRICS);

export interface TimeLine {
  readonly label: string;
  /** [epoch ms, value] in time order. */
  readonly points: ReadonlyArray<readonly [number, number]>;
}

export interface MissingSeries {
  readonly label: string;
  /** no-data / error: as the collector recorded it; not-collected: no such series in any file. */
  readonly status: 'no-data' | 'error' | 'not-collected';
  readonly reason: string;
}

export interface MetricPanel {
  readonly title: string;
  readonly unit: string | null;
  readonly lines: readonly TimeLine[];
  readonly missing: readonly MissingSeries[];
}

/**
 * A measured step as a metric chart draws it: its number in the run and its span in epoch ms. Not
 * the stored step window (lib/results/sink.ts StepWindow, ISO times in metrics/steps.json): this
 * one is derived from the step records when the report is built.
 */
export interface ChartStep {
  /** 1-based position in the run, the number drawn on the chart. */
  readonly index: number;
  readonly stepId: string;
  readonly scenario: string;
  readonly startMs: number;
  readonly endMs: number;
}

/** A shaded band on a metric chart: one step, or (in long runs) a run of consecutive steps of one scenario. */
export interface ChartWindow {
  readonly label: string;
  readonly startMs: number;
  readonly endMs: number;
}

/** Above this many steps, metric charts shade scenarios instead of steps (keeps charts legible and small). */
export const MAX_STEP_WINDOWS = 60;

export function chartWindows(windows: readonly ChartStep[]): ChartWindow[] {
  if (windows.length <= MAX_STEP_WINDOWS)
    return windows.map((w) => ({ label: String(w.index), startMs: w.startMs, endMs: w.endMs }));
  const merged: Array<{ label: string; startMs: number; endMs: number }> = [];
  for (const w of windows) {
    const last = merged[merged.length - 1];
    if (last && last.label === w.scenario) last.endMs = Math.max(last.endMs, w.endMs);
    else merged.push({ label: w.scenario, startMs: w.startMs, endMs: w.endMs });
  }
  return merged;
}

const MIB = 1024 * 1024;

function seriesLabel(s: MetricSeries): string {
  const dims = Object.values(s.dimensions).filter((v) => v !== '');
  const stat = s.stat === 'value' ? '' : s.stat;
  return [dims.length > 0 ? dims.join(' / ') : s.source, stat].filter((x) => x !== '').join(' · ');
}

export function chartSteps(steps: readonly StepRecord[]): ChartStep[] {
  const windows: ChartStep[] = [];
  steps.forEach((s, i) => {
    const startMs = Date.parse(s.startedAt);
    const endMs = Date.parse(s.endedAt);
    if (Number.isFinite(startMs) && Number.isFinite(endMs))
      windows.push({ index: i + 1, stepId: s.stepId, scenario: s.scenario, startMs, endMs });
  });
  return windows;
}

/**
 * Panels for the wanted metrics (always listed, "no data" when absent), then one per other
 * metric name the collector wrote. A series with status no-data/error is never drawn: it is
 * listed with its reason, so an empty metric never reads as zero.
 */
export function metricPanels(
  mode: 'local' | 'cloud',
  metrics: readonly LoadedMetrics[],
  /** The run's database engine (environment.database); unknown runs get the Aurora-era list. */
  engine: RunDatabase['engine'] | null = null,
): MetricPanel[] {
  const all = metrics.flatMap((m) => m.file.series);
  const wanted =
    mode === 'local' ? LOCAL_METRICS : engine === 'postgres' ? RDS_POSTGRES_METRICS : CLOUD_METRICS;
  const used = new Set<MetricSeries>();
  const panelFor = (title: string, series: readonly MetricSeries[]): MetricPanel => {
    const lines: TimeLine[] = [];
    const missing: MissingSeries[] = [];
    for (const s of series) {
      used.add(s);
      const label = series.length > 1 || s.name === title ? seriesLabel(s) : `${s.name} · ${seriesLabel(s)}`;
      // Bytes read better as MiB (FreeableMemory is billions of bytes).
      const scale = s.unit === 'Bytes' ? 1 / MIB : 1;
      const points = s.points
        .map(([t, v]) => [Date.parse(t), v * scale] as const)
        .filter(([t, v]) => Number.isFinite(t) && Number.isFinite(v));
      if (s.status === 'ok' && points.length > 0) lines.push({ label, points });
      else
        missing.push({
          label,
          status: s.status === 'error' ? 'error' : 'no-data',
          reason: s.reason ?? (s.status === 'ok' ? 'no points in the window' : s.status),
        });
    }
    const unit = series.find((s) => s.unit !== null)?.unit ?? metricDef(series[0]?.name ?? '')?.unit ?? null;
    return { title, unit: unit === 'Bytes' ? 'MiB' : unit, lines, missing };
  };
  const panels: MetricPanel[] = [];
  for (const w of wanted) {
    const series = all.filter((s) => s.name === w.name);
    if (series.length === 0) {
      panels.push({
        title: w.title,
        unit: w.unit,
        lines: [],
        missing: [
          {
            label: w.title,
            status: 'not-collected',
            reason:
              metrics.length === 0 ? 'no metrics files in this run' : 'not in the metrics files of this run',
          },
        ],
      });
    } else {
      panels.push(panelFor(w.title, series));
    }
  }
  const rest = all.filter((s) => !used.has(s));
  for (const name of uniqueInOrder(rest.map((s) => s.name))) {
    panels.push(
      panelFor(
        metricDef(name)?.title ?? name,
        rest.filter((s) => s.name === name),
      ),
    );
  }
  return panels;
}
