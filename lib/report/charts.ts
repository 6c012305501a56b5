/**
 * Charts: echarts option builders (pure) and server-side rendering to static SVG (echarts' SSR
 * mode, no DOM). Each chart gets its own echarts instance, disposed after rendering; echarts
 * numbers instances (zr0, zr1, …) so ids inside inlined SVGs do not collide.
 */
// The package's CommonJS entry (dist/echarts.js, the full build): its ESM subpaths
// (echarts/core…) cannot be require()d from CommonJS on Node 20 or under jest.
import * as echarts from 'echarts';
import type { BarSeriesOption, EChartsOption, LineSeriesOption } from 'echarts';
import type { Spread } from './cells';
import {
  type ChartLine,
  type ChartPoint,
  chartWindows,
  type ChurnRow,
  type MetricPanel,
  type ScenarioPanel,
  type ChartStep,
} from './shape';

/** Colour-blind-friendly palette (Okabe–Ito), one colour per line, stable within a chart. */
export const PALETTE = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#D55E00',
  '#CC79A7',
  '#56B4E9',
  '#999999',
  '#F0E442',
] as const;

export interface ChartSize {
  readonly width: number;
  readonly height: number;
}

/** Receives what the chart library said about a chart's data, as one sentence for a report warning. */
export type ChartWarn = (message: string) => void;

function titleOf(option: EChartsOption): string | null {
  const title = Array.isArray(option.title) ? option.title[0] : option.title;
  return title && typeof title.text === 'string' ? title.text : null;
}

/**
 * The chart as static SVG. ECharts reports data it cannot draw (a tps of 1.7e308 gives an
 * "Invalid setExtent call … Infinity") with console.warn / console.error; while this chart renders,
 * those `[ECharts]` lines go to `warn` (the report lists them as warnings) instead of stderr. Other
 * console output passes through. Without `warn` they reach the console as before.
 */
export function renderSvg(option: EChartsOption, size: ChartSize, warn?: ChartWarn): string {
  const chart = echarts.init(null, null, {
    renderer: 'svg',
    ssr: true,
    width: size.width,
    height: size.height,
  });
  const original = { warn: console.warn, error: console.error };
  const said: string[] = [];
  const capture =
    (pass: (...args: unknown[]) => void) =>
    (...args: unknown[]): void => {
      const text = args.map(String).join(' ');
      if (warn && text.startsWith('[ECharts]')) said.push(text.replace(/^\[ECharts\]\s*/, ''));
      else pass(...args);
    };
  console.warn = capture(original.warn);
  console.error = capture(original.error);
  try {
    chart.setOption({ animation: false, ...option });
    return chart.renderToSVGString();
  } finally {
    console.warn = original.warn;
    console.error = original.error;
    chart.dispose();
    if (warn && said.length > 0) {
      const title = titleOf(option);
      warn(
        `chart ${title !== null ? `"${title}"` : 'without a title'} could not draw some of the run's data as given ` +
          `(the chart library said: ${[...new Set(said)].join('; ')}); a value beyond what a chart can draw ` +
          `(such as 1.7e308) is in the data — the tables show the figures`,
      );
    }
  }
}

function colorAt(i: number): string {
  return PALETTE[i % PALETTE.length] ?? PALETTE[0];
}

function withAlpha(hex: string, alpha: number): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${alpha})`;
}

const TEXT = { fontFamily: 'sans-serif', color: '#333' };

const TROUBLED_SYMBOL = 'triangle';

/** Title, text, a legend at the bottom and the grid, for the per-scenario charts (`gridBottom`: room for legend and labels). */
function frame(title: string, gridBottom: number): EChartsOption {
  return {
    title: { text: title, left: 'center', textStyle: { ...TEXT, fontSize: 13 } },
    textStyle: TEXT,
    legend: { bottom: 0, textStyle: TEXT },
    grid: { left: 64, right: 20, top: 52, bottom: gridBottom },
  };
}

/** The x axis of a scenario panel: one category per client count. */
function clientsAxis(panel: ScenarioPanel): EChartsOption['xAxis'] {
  return {
    type: 'category',
    data: panel.clients.map(String),
    name: 'clients',
    nameLocation: 'middle',
    nameGap: 26,
  };
}

function medianData(line: ChartLine, pick: (s: Spread) => number): LineSeriesOption['data'] {
  return line.points.map((p) =>
    p && p.value
      ? {
          value: pick(p.value),
          symbol: p.troubled ? TROUBLED_SYMBOL : 'circle',
          symbolSize: p.troubled ? 11 : 6,
        }
      : null,
  );
}

/**
 * TPS vs clients: the median per target; where repetitions exist, a band from worst to best
 * (stacked: an invisible `worst` line plus a filled `best − worst` on top). Points from cells with
 * errors are triangles. Cells with no tps are gaps, not zeros.
 */
export function tpsOption(panel: ScenarioPanel, title: string): EChartsOption {
  const series: Array<LineSeriesOption> = [];
  panel.tps.forEach((line, i) => {
    const color = colorAt(line.colorIndex);
    series.push({
      name: line.label,
      type: 'line',
      data: medianData(line, (s) => s.median),
      connectNulls: false,
      color,
      lineStyle: { width: 2 },
      z: 3,
    });
    const banded = line.points.some((p) => (p?.value?.n ?? 0) > 1);
    if (banded) {
      // Band between adjacent points, plus a tick at best and at worst so a lone point shows its range too.
      const stack = `band-${i}`;
      const repeated = (p: ChartPoint | null): Spread | null => (p?.value && p.value.n > 1 ? p.value : null);
      series.push({
        name: `${line.label} worst`,
        type: 'line',
        stack,
        data: line.points.map((p) => repeated(p)?.worst ?? null),
        lineStyle: { opacity: 0 },
        symbol: 'none',
        silent: true,
        z: 1,
      });
      series.push({
        name: `${line.label} best`,
        type: 'line',
        stack,
        data: line.points.map((p) => {
          const r = repeated(p);
          return r ? r.best - r.worst : null;
        }),
        lineStyle: { opacity: 0 },
        areaStyle: { color: withAlpha(color, 0.22) },
        symbol: 'none',
        silent: true,
        z: 1,
      });
      for (const end of ['best', 'worst'] as const) {
        series.push({
          name: `${line.label} ${end} tick`,
          type: 'line',
          data: line.points.map((p) => repeated(p)?.[end] ?? null),
          lineStyle: { opacity: 0 },
          symbol: 'rect',
          symbolSize: [14, 2],
          itemStyle: { color },
          silent: true,
          z: 2,
        });
      }
    }
  });
  return {
    ...frame(title, 64),
    legend: { data: panel.tps.map((l) => l.label), bottom: 0, textStyle: TEXT },
    xAxis: clientsAxis(panel),
    yAxis: { type: 'value', name: 'tps', min: 0 },
    series,
  };
}

/** Latency vs clients: p95 solid, p50 dashed, one colour per target. */
export function latencyOption(panel: ScenarioPanel, title: string): EChartsOption {
  const series: LineSeriesOption[] = [];
  panel.latencyP95Ms.forEach((line) => {
    series.push({
      name: `${line.label} p95`,
      type: 'line',
      data: medianData(line, (s) => s.median),
      color: colorAt(line.colorIndex),
      lineStyle: { width: 2 },
    });
  });
  panel.latencyP50Ms.forEach((line) => {
    series.push({
      name: `${line.label} p50`,
      type: 'line',
      data: medianData(line, (s) => s.median),
      color: colorAt(line.colorIndex),
      lineStyle: { width: 1.5, type: 'dashed' },
    });
  });
  return {
    ...frame(title, 84),
    xAxis: clientsAxis(panel),
    yAxis: { type: 'value', name: 'latency ms', min: 0 },
    series,
  };
}

function churnCategory(row: ChurnRow): string {
  return `${row.label} · ${row.clients}c · ${row.protocol}`;
}

/** Grouped bars: median tps reusing connections vs a new connection per transaction (-C). */
export function churnOption(rows: readonly ChurnRow[], title: string): EChartsOption {
  const bar = (name: string, color: string, pick: (r: ChurnRow) => Spread | null): BarSeriesOption => ({
    name,
    type: 'bar',
    color,
    data: rows.map((r) => pick(r)?.median ?? null),
  });
  return {
    ...frame(title, 90),
    xAxis: {
      type: 'category',
      data: rows.map(churnCategory),
      axisLabel: { interval: 0, rotate: rows.length > 3 ? 20 : 0, fontSize: 10 },
    },
    yAxis: { type: 'value', name: 'tps', min: 0 },
    series: [
      bar('reusing connections', PALETTE[0], (r) => r.persistent),
      bar('new connection per transaction (-C)', PALETTE[3], (r) => r.perTransaction),
    ],
  };
}

/**
 * A metric over time; steps shaded alternately and numbered (the number is the step's position).
 * Long runs (more than MAX_STEP_WINDOWS steps) shade scenarios instead. Lines are downsampled to
 * the chart's resolution (LTTB), so hour-long runs stay small.
 */
export function metricOption(panel: MetricPanel, steps: readonly ChartStep[]): EChartsOption {
  const windows = chartWindows(steps);
  const series: LineSeriesOption[] = panel.lines.map((line, i) => ({
    name: line.label,
    type: 'line',
    color: colorAt(i),
    showSymbol: line.points.length < 3,
    sampling: 'lttb',
    data: line.points.map(([t, v]) => [t, v]),
    lineStyle: { width: 1.5 },
  }));
  const times = [
    ...panel.lines.flatMap((l) => l.points.map(([t]) => t)),
    ...windows.flatMap((w) => [w.startMs, w.endMs]),
  ];
  const range =
    times.length > 0
      ? { min: Math.min(...times), max: Math.max(...times) }
      : { min: undefined, max: undefined };
  const first = series[0];
  if (first && windows.length > 0) {
    first.markArea = {
      silent: true,
      label: { show: windows.length <= 40, position: 'insideTop', fontSize: 9, color: '#666' },
      data: windows.map((w, i) => [
        {
          name: w.label,
          xAxis: w.startMs,
          itemStyle: { color: i % 2 === 1 ? 'rgba(0,0,0,0.07)' : 'rgba(0,0,0,0.03)' },
        },
        { xAxis: w.endMs },
      ]),
    };
    first.markLine = {
      silent: true,
      symbol: 'none',
      label: { show: false },
      lineStyle: { color: '#bbb', type: 'dotted', width: 1 },
      data: windows.map((w) => ({ xAxis: w.startMs })),
    };
  }
  return {
    title: { text: panel.title, left: 'center', textStyle: { ...TEXT, fontSize: 13 } },
    textStyle: TEXT,
    legend: { bottom: 0, type: 'plain', textStyle: { ...TEXT, fontSize: 10 } },
    grid: { left: 70, right: 20, top: 48, bottom: 60 },
    // The axis spans the data and every step, so a step with no samples still shows where it ran.
    xAxis: { type: 'time', min: range.min, max: range.max, axisLabel: { fontSize: 10, hideOverlap: true } },
    yAxis: { type: 'value', name: panel.unit ?? '', min: 0 },
    series,
  };
}
