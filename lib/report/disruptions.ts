/**
 * The disruption lab in the report (issue 22), in its own module so the pgbench sections and the
 * decision table stay apart: per disruption scenario, one line per target × mode saying what a
 * client lived through, the downtime table over the repetitions, the probe's floor and jitter, and a
 * timeline per repetition — seconds from T0 on x, one lane per target × mode, the latency of every
 * successful write (log scale), failed attempts marked by error class, the disruption's events as
 * vertical markers. Plus the same rows for summary.md and for `compare` across runs.
 *
 * Reads step records only (their `probe` result); renders with echarts to static SVG like the rest
 * of the report (./charts.ts).
 */
import type { EChartsOption, LineSeriesOption, ScatterSeriesOption } from 'echarts';
import type { DisruptionResult } from '../suite/disruption';
import type { BackgroundLoadResult } from '../suite/disruption-load';
import {
  downtimeRows,
  formatSpreadSec,
  livedThrough,
  loadSummaryText,
  type DowntimeRow,
  type FigureSpread,
} from '../suite/disruption-summary';
import type { StepRecord } from '../suite/types';
import { PALETTE, renderSvg, type ChartWarn } from './charts';
import { fmtVerdict } from './format';
import { html, joinHtml, SafeHtml, trustedSvg } from './html';
import { mdTable, mdText } from './md';

type DisruptionStep = StepRecord & { readonly probe: DisruptionResult };

function isDisruption(r: StepRecord): r is DisruptionStep {
  return r.probe?.kind === 'disruption';
}

/** Scenarios of the run whose steps are disruptions (the report draws them here, not as pgbench cells). */
export function disruptionScenarios(steps: readonly StepRecord[]): string[] {
  return [...new Set(steps.filter(isDisruption).map((r) => r.scenario))];
}

/** One colour per error class, stable across charts (Okabe–Ito, from the end of the palette). */
const CLASS_COLORS: Readonly<Record<string, string>> = {
  'server-stopped': '#D55E00',
  'connection-failed': '#CC79A7',
  'backend-died': '#E69F00',
  timeout: '#000000',
  'client-timeout': '#0072B2',
  // still waiting when the window ended (lib/suite/disruption-figures.ts OPEN_AT_END)
  open: '#009E73',
  'read-only': '#56B4E9',
  'too-many-connections': '#F0E442',
  other: '#999999',
};

function modeLabel(mode: string): string {
  return mode === 'per-transaction' ? 'per write' : 'persistent';
}

/** The lanes of one repetition's timeline, in plan order. */
function lanesOf(group: readonly DisruptionStep[]): Array<{ label: string; step: DisruptionStep }> {
  return group.map((step) => ({ label: `${step.target.name} · ${modeLabel(step.params.connect)}`, step }));
}

const LANE_HEIGHT = 64;

/** One pgbench lane per target of the group with a background load (each of its steps carries the same). */
export function loadLanesOf(
  group: readonly DisruptionStep[],
): Array<{ label: string; load: BackgroundLoadResult }> {
  const out = new Map<string, { label: string; load: BackgroundLoadResult }>();
  for (const step of group) {
    const load = step.probe.load;
    if (load === undefined || out.has(step.target.name)) continue;
    const aborted = load.abortedClients ? `, ${load.abortedClients} aborted` : '';
    out.set(step.target.name, { label: `${step.target.name} · pgbench tps${aborted}`, load });
  }
  return [...out.values()];
}

/** Lanes of a repetition's timeline: the probes' and, under them, the load's. */
export function timelineLaneCount(group: readonly DisruptionStep[]): number {
  return group.length + loadLanesOf(group).length;
}

/**
 * The load lanes' grids, axes and series, after `offset` probe lanes: tps per second (a line broken
 * where pgbench printed no second, so a gap is never drawn as 0), on the probes' x.
 */
function loadLaneParts(
  lanes: ReadonlyArray<{ label: string; load: BackgroundLoadResult }>,
  offset: number,
  top: number,
  x: { min: number; max: number; lastLane: number },
): Pick<EChartsOption, 'grid' | 'xAxis' | 'yAxis' | 'graphic'> & { series: LineSeriesOption[] } {
  const at = (i: number): number => top + (offset + i) * LANE_HEIGHT;
  return {
    grid: lanes.map((_, i) => ({ left: 190, right: 24, top: at(i), height: LANE_HEIGHT - 16 })),
    xAxis: lanes.map((_, i) => ({
      type: 'value' as const,
      gridIndex: offset + i,
      min: x.min,
      max: x.max,
      axisLabel: { show: offset + i === x.lastLane },
      ...(offset + i === x.lastLane
        ? { name: 'seconds from T0', nameLocation: 'middle' as const, nameGap: 24 }
        : {}),
      splitLine: { show: false },
    })),
    yAxis: lanes.map((_, i) => ({
      type: 'value' as const,
      gridIndex: offset + i,
      min: 0,
      axisLabel: { fontSize: 9, formatter: (v: number) => `${v} tps` },
      splitNumber: 2,
    })),
    graphic: lanes.map((lane, i) => ({
      type: 'text' as const,
      left: 8,
      top: at(i) + (LANE_HEIGHT - 16) / 2 - 7,
      style: { text: lane.label, fontSize: 11, fill: '#333', fontFamily: 'sans-serif' },
    })),
    series: lanes.map((lane, i) => {
      const data: Array<[number, number] | [number, null]> = [];
      let prev: number | null = null;
      for (const [ms, tps] of lane.load.series) {
        // a second pgbench did not print (waiting clients, a restart of pgbench): a break, not a 0
        if (prev !== null && ms - prev > 1500) data.push([(prev + ms) / 2000, null]);
        data.push(tps === null ? [ms / 1000, null] : [ms / 1000, tps]);
        prev = ms;
      }
      return {
        type: 'line' as const,
        name: 'pgbench tps (background load)',
        xAxisIndex: offset + i,
        yAxisIndex: offset + i,
        showSymbol: true,
        symbolSize: 3,
        connectNulls: false,
        itemStyle: { color: PALETTE[1] },
        lineStyle: { color: PALETTE[1], width: 1.5 },
        data,
      };
    }),
  };
}

/** The echarts option of one repetition's timeline (pure). */
export function timelineOption(group: readonly DisruptionStep[], title: string): EChartsOption {
  const lanes = lanesOf(group);
  const loadLanes = loadLanesOf(group);
  const lastLane = lanes.length + loadLanes.length - 1;
  const all = lanes.flatMap((l) => l.step.probe.attempts);
  const xs = [
    ...all.map((a) => a[0] / 1000),
    ...loadLanes.flatMap((l) => l.load.series.map((p) => p[0] / 1000)),
  ];
  const minX = Math.floor(Math.min(0, ...xs));
  const maxX = Math.ceil(Math.max(1, ...xs));
  const lat = all.map((a) => a[1]).filter((v): v is number => v !== null && v > 0);
  const yMax = Math.pow(10, Math.ceil(Math.log10(Math.max(10, ...lat))));
  const yMin = Math.pow(10, Math.floor(Math.log10(Math.max(0.1, Math.min(yMax / 100, ...lat)))));
  const events = group[0]?.probe.events ?? [];
  const classes = [...new Set(all.map((a) => a[2]).filter((c) => c !== 'ok'))];
  const top = 40;
  const series: ScatterSeriesOption[] = [];
  lanes.forEach((lane, i) => {
    const attempts = lane.step.probe.attempts;
    series.push({
      type: 'scatter',
      name: 'successful write (latency)',
      xAxisIndex: i,
      yAxisIndex: i,
      symbolSize: 4,
      itemStyle: { color: PALETTE[0] },
      data: attempts
        .filter((a) => a[2] === 'ok' && a[1] !== null)
        .map((a) => [a[0] / 1000, Math.max(yMin, a[1] as number)]),
      markLine: {
        symbol: 'none',
        silent: true,
        lineStyle: { color: '#666', type: 'dashed', width: 1 },
        // Named in the caption: labels of events milliseconds apart would overlap.
        label: { show: false },
        data: events.map((e) => ({ name: e.name, xAxis: e.atMs / 1000 })),
      },
    });
    for (const cls of classes)
      series.push({
        type: 'scatter',
        name: cls,
        xAxisIndex: i,
        yAxisIndex: i,
        symbol: 'triangle',
        symbolSize: 7,
        itemStyle: { color: CLASS_COLORS[cls] ?? '#999999' },
        // A failed attempt at the latency it failed after (no answer: the top of the lane).
        data: attempts
          .filter((a) => a[2] === cls)
          .map((a) => [a[0] / 1000, Math.min(yMax, Math.max(yMin, a[1] ?? yMax))]),
      });
  });
  const load = loadLaneParts(loadLanes, lanes.length, top, { min: minX, max: maxX, lastLane });
  const arr = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  return {
    title: { text: title, left: 'center', textStyle: { fontSize: 13, fontFamily: 'sans-serif' } },
    textStyle: { fontFamily: 'sans-serif', color: '#333' },
    legend: {
      bottom: 0,
      data: [
        'successful write (latency)',
        ...classes,
        ...(loadLanes.length > 0 ? ['pgbench tps (background load)'] : []),
      ],
    },
    grid: [
      ...lanes.map((_, i) => ({
        left: 190,
        right: 24,
        top: top + i * LANE_HEIGHT,
        height: LANE_HEIGHT - 16,
      })),
      ...arr(load.grid),
    ],
    xAxis: [
      ...lanes.map((_, i) => ({
        type: 'value' as const,
        gridIndex: i,
        min: minX,
        max: maxX,
        axisLabel: { show: i === lastLane },
        ...(i === lastLane ? { name: 'seconds from T0', nameLocation: 'middle' as const, nameGap: 24 } : {}),
        splitLine: { show: false },
      })),
      ...arr(load.xAxis),
    ],
    // Lane names as free text at fixed places: an axis name makes ECharts move its grid to fit it.
    graphic: [
      ...lanes.map((lane, i) => ({
        type: 'text' as const,
        left: 8,
        top: top + i * LANE_HEIGHT + (LANE_HEIGHT - 16) / 2 - 7,
        style: { text: lane.label, fontSize: 11, fill: '#333', fontFamily: 'sans-serif' },
      })),
      ...arr(load.graphic),
    ],
    yAxis: [
      ...lanes.map((_, i) => ({
        type: 'log' as const,
        gridIndex: i,
        min: yMin,
        max: yMax,
        axisLabel: { fontSize: 9, formatter: (v: number) => `${v} ms` },
        splitNumber: 2,
      })),
      ...arr(load.yAxis),
    ],
    series: [...series, ...load.series],
  };
}

/** The background load through each target of a scenario, one line per target (from its first row). */
export function loadLines(rows: readonly DowntimeRow[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const r of rows)
    if (r.load !== null && !seen.has(r.target.name)) {
      seen.add(r.target.name);
      out.push(`background load through ${r.target.name}: ${loadSummaryText(r.load)}`);
    }
  return out;
}

/** The repetitions of one scenario, each its steps in plan order. */
function repetitions(steps: readonly StepRecord[], scenario: string): DisruptionStep[][] {
  const byRep = new Map<number, DisruptionStep[]>();
  for (const r of steps)
    if (isDisruption(r) && r.scenario === scenario && r.status === 'completed') {
      const list = byRep.get(r.params.repetition) ?? [];
      list.push(r);
      byRep.set(r.params.repetition, list);
    }
  return [...byRep.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => v);
}

function stallText(s: FigureSpread | null): string {
  return s === null ? '?' : s.max === 0 ? 'none' : formatSpreadSec(s);
}

function verdicts(r: DowntimeRow): string {
  return [
    r.held > 0 ? `${r.held} held` : '',
    r.broke > 0 ? `${r.broke} broke` : '',
    r.informational > 0 ? `${r.informational} info` : '',
  ]
    .filter((x) => x !== '')
    .join(', ');
}

/** The downtime table's cells of a row (HTML and Markdown share them). */
function rowCells(r: DowntimeRow): string[] {
  return [
    r.target.name,
    modeLabel(r.mode),
    String(r.repetitions),
    `${r.withErrors}/${r.repetitions}`,
    formatSpreadSec(r.timeToFirstErrorMs),
    formatSpreadSec(r.errorWindowMs, r.withErrors > 0 ? 'not over in the window' : '–'),
    stallText(r.stallWindowMs),
    r.clientTimeoutSettings.join('; ') || 'not recorded',
    r.clientTimeouts === null ? '?' : String(r.clientTimeouts),
    r.notOver === 0 ? 'yes' : `not in ${r.notOver} of ${r.repetitions}`,
    r.maxLatencyMs === null ? '?' : `${Math.round(r.maxLatencyMs.max)}`,
    formatSpreadSec(r.recoveryMs, 'not within the window'),
    r.errorClasses.map((c) => `${c.label} ×${c.count}`).join(', ') || '–',
    r.lost === null ? 'not checked' : `${r.lost} of ${r.acknowledged}`,
    r.unknown === 0
      ? '0'
      : `${r.unknown} (${r.unknownCommitted} committed, ${r.unknown - r.unknownCommitted} not)`,
    String(r.readOnlyRefusals),
    String(r.reconnects),
    verdicts(r),
  ];
}

const HEADER = [
  'target',
  'clients',
  'reps',
  'with errors',
  'first error',
  'error window',
  'stall window',
  'client timeouts',
  'client gave up',
  'over in the window',
  'max ms',
  'recovery',
  'errors by class',
  'acknowledged lost',
  'unknown (resolved)',
  '25006',
  'reconnects',
  'verdicts',
];

/** The probe's floor and jitter per target, from the first repetition that measured them. */
function floorRows(steps: readonly DisruptionStep[]): string[][] {
  const seen = new Map<string, DisruptionStep>();
  for (const s of steps) if (!seen.has(s.target.name)) seen.set(s.target.name, s);
  const n = (v: number | null): string => (v === null ? '?' : String(Math.round(v * 100) / 100));
  return [...seen.values()].map((s) => {
    const f = s.probe.floor;
    return [
      s.target.name,
      n(f.selectP50Ms),
      n(f.selectP99Ms),
      n(f.pgbenchSelectP50Ms),
      n(f.jitterP50Ms),
      n(f.jitterP99Ms),
      n(f.jitterMaxMs),
    ];
  });
}
const FLOOR_HEADER = [
  'target',
  'probe SELECT 1 p50 ms',
  'p99 ms',
  'pgbench SELECT 1 p50 ms',
  'interval jitter p50 ms',
  'p99 ms',
  'max ms',
];

function table(header: readonly string[], rows: readonly (readonly string[])[]): SafeHtml {
  return html`<table><thead><tr>${header.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>${rows.map(
    (r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`,
  )}</tbody></table>`;
}

/** One section per disruption scenario. `title`: the catalog's title of a scenario, when known. */
export function disruptionSectionsHtml(
  steps: readonly StepRecord[],
  title: (scenario: string) => { title: string | null; finding: string | null },
  warn: ChartWarn,
): SafeHtml {
  const scenarios = disruptionScenarios(steps);
  if (scenarios.length === 0) return html``;
  return joinHtml(
    scenarios.map((scenario) => {
      const mine = steps.filter((r) => r.scenario === scenario);
      const rows = downtimeRows(mine);
      const reps = repetitions(steps, scenario);
      const info = title(scenario);
      const notMeasured = mine.filter((r) => r.status !== 'completed');
      const broke = mine.filter((r) => r.verdict.held === false);
      // The first repetition's timeline (each chart holds every attempt: one per repetition would
      // triple the page); the downtime table covers every repetition.
      const charts = reps.slice(0, 1).map((group) => {
        const rep = group[0]?.params.repetition ?? 1;
        const svg = renderSvg(
          timelineOption(group, `${scenario}, repetition ${rep}: every attempt, seconds from T0`),
          { width: 960, height: 70 + LANE_HEIGHT * timelineLaneCount(group) + 30 },
          warn,
        );
        const events = (group[0]?.probe.events ?? []).map(
          (e) => `${(e.atMs / 1000).toFixed(2)} s ${e.name}${e.detail ? ` (${e.detail})` : ''}`,
        );
        const figure = html`<figure class="chart" data-chart="timeline" data-repetition="${rep}">${trustedSvg(svg)}<figcaption>dots: successful writes at their latency (log scale), at the second they started; triangles: failed attempts by error class (no answer: top of the lane; client-timeout: the client gave up; open: still waiting when the window ended); ${loadLanesOf(group).length > 0 ? "lines under the probes' lanes: the background load's transactions per second through each target (pgbench's own second, placed from its clock; a break: a second pgbench printed nothing); " : ''}dashed lines: the disruption's events${group[0]?.probe.t0 ? `, T0 ${group[0].probe.t0}` : ''}: ${events.join('; ') || 'none'}${group[0]?.probe.timelineNote ? ` (${group[0].probe.timelineNote})` : ''}</figcaption></figure>`;
        return figure;
      });
      return html`<section class="scenario disruption" id="disruption-${scenario.replace(/[^A-Za-z0-9_-]+/g, '_')}" data-scenario="${scenario}">
<h2>${scenario}${info.title ? html` — ${info.title}` : ''}</h2>
${info.finding ? html`<p class="sub">DISRUPT: ${info.finding}</p>` : ''}
<ul class="lived" data-lived="${scenario}">${rows.map((r) => html`<li>${livedThrough(r)}</li>`)}${loadLines(rows).map((l) => html`<li class="load">${l}</li>`)}</ul>
<h3>Downtime, over ${String(reps.length)} repetition(s)</h3>
${table(HEADER, rows.map(rowCells))}
<p class="sub">Windows: median of the repetitions (range when they differ). error window: first error (the server's or the pooler's) → first success after the last one; stall window: successes slower than 10 × the warm-up p99 (a write that waits and then succeeds is a stall, never an error); client timeouts: the probe clients' own connect and statement timeouts, a scenario setting; client gave up: attempts that outlived them (<code>client-timeout</code>, not in the error window); over in the window: writing again after the last error and client timeout, no write still waiting (stalled) at the window's end; recovery: T0 → the rolling 1 s p99 back within 1.2 × the warm-up p99; unknown: sent without an answer, resolved from the ledger afterwards (docs/disruptions.md).</p>
${broke.length > 0 ? html`<ul class="warnings">${broke.map((r) => html`<li>${fmtVerdict(false)} ${r.stepId}: expected ${r.verdict.expected} — ${r.verdict.observed}</li>`)}</ul>` : ''}
${notMeasured.length > 0 ? html`<ul class="warnings">${notMeasured.map((r) => html`<li>${r.stepId}: ${r.status} — ${r.note ?? ''}</li>`)}</ul>` : ''}
<div class="charts">${charts}</div>
<details><summary>the probe's own floor and interval jitter</summary>${table(FLOOR_HEADER, floorRows(reps.flat()))}</details>
</section>`;
    }),
  );
}

/** summary.md's lines for the disruption scenarios. */
export function disruptionMarkdown(
  steps: readonly StepRecord[],
  title: (scenario: string) => string | null,
): string[] {
  const out: string[] = [];
  if (disruptionScenarios(steps).length > 0)
    out.push(
      'The change-board table of these disruptions (per target × client mode, with the settings and versions): downtime.md and downtime.csv beside this file.',
      '',
    );
  for (const scenario of disruptionScenarios(steps)) {
    const rows = downtimeRows(steps.filter((r) => r.scenario === scenario));
    const t = title(scenario);
    out.push(`## ${mdText(scenario)}${t ? ` — ${mdText(t)}` : ''}`, '');
    for (const r of rows) out.push(`- ${mdText(livedThrough(r))}`);
    for (const l of loadLines(rows)) out.push(`- ${mdText(l)}`);
    out.push('', mdTable(HEADER, rows.map(rowCells)), '');
  }
  return out;
}

/** A downtime row of run A beside run B (`compare`): the median windows and the ledger. */
export interface DowntimeComparison {
  readonly key: string;
  readonly a: DowntimeRow | null;
  readonly b: DowntimeRow | null;
}

export function compareDowntime(a: readonly StepRecord[], b: readonly StepRecord[]): DowntimeComparison[] {
  const key = (r: DowntimeRow): string => `${r.scenario} · ${r.target.name} · ${modeLabel(r.mode)}`;
  const ra = new Map(downtimeRows(a).map((r) => [key(r), r]));
  const rb = new Map(downtimeRows(b).map((r) => [key(r), r]));
  return [...new Set([...ra.keys(), ...rb.keys()])].map((k) => ({
    key: k,
    a: ra.get(k) ?? null,
    b: rb.get(k) ?? null,
  }));
}

const COMPARE_HEADER = [
  'scenario · target · clients',
  'error window A',
  'error window B',
  'stall A',
  'stall B',
  'client gave up A',
  'client gave up B',
  'lost A',
  'lost B',
];

function compareCells(c: DowntimeComparison): string[] {
  const win = (r: DowntimeRow | null): string =>
    r === null ? 'not in this run' : formatSpreadSec(r.errorWindowMs, r.withErrors > 0 ? 'not over' : '–');
  const stall = (r: DowntimeRow | null): string => (r === null ? '–' : stallText(r.stallWindowMs));
  const lost = (r: DowntimeRow | null): string =>
    r === null ? '–' : r.lost === null ? 'not checked' : String(r.lost);
  const gaveUp = (r: DowntimeRow | null): string =>
    r === null ? '–' : r.clientTimeouts === null ? '?' : String(r.clientTimeouts);
  return [c.key, win(c.a), win(c.b), stall(c.a), stall(c.b), gaveUp(c.a), gaveUp(c.b), lost(c.a), lost(c.b)];
}

export function compareDowntimeMarkdown(rows: readonly DowntimeComparison[]): string[] {
  if (rows.length === 0) return [];
  return ['## Disruptions: downtime A vs B', '', mdTable(COMPARE_HEADER, rows.map(compareCells)), ''];
}

export function compareDowntimeHtml(rows: readonly DowntimeComparison[]): SafeHtml {
  if (rows.length === 0) return html``;
  return html`<section id="disruptions"><h2>Disruptions: downtime A vs B</h2>${table(COMPARE_HEADER, rows.map(compareCells))}<p>Median of each run's repetitions (range when they differ).</p></section>`;
}
