/**
 * `proxylab compare A B`: the same cells (scenario × target × clients × protocol × connect ×
 * script × pool %) side by side, the tps ratio B/A per cell, and a marker where the difference is
 * larger than the spread between repetitions. Without repetitions the spread is unknown and the
 * comparison says so instead of guessing. Cells present in only one run are listed. First, what
 * differs between the two runs' lab files (./lab-compare.ts), or that a run kept none.
 */
import { mkdirSync } from 'node:fs';
import { writeFileAtomic } from '../core/atomic-write';
import { forTerminal } from '../core/terminal-text';
import { join, resolve } from 'node:path';
import type { EChartsOption } from 'echarts';
import { type Cell, type CellKey, groupCells, type Spread, uniqueInOrder } from './cells';
import { PALETTE, renderSvg } from './charts';
import { fmtConnect, fmtNumber, fmtSpread, fmtUsd, fmtVerdict } from './format';
import { decisionTables, type DecisionRow, type DecisionTable } from './decision';
import { connectionsText, errorsText, sessionFeaturesText } from './decision-text';
import { compareDowntime, compareDowntimeHtml, compareDowntimeMarkdown } from './disruptions';
import { html, SafeHtml, trustedSvg } from './html';
import { type LoadedRun, loadRun } from './load';
import { mdTable, mdText } from './render-md';
import { isPartial } from './shape';
import { compareLabs, labComparisonHtml, labComparisonMarkdown, type LabComparison } from './lab-compare';
import { catalogLookup } from './catalog-lookup';
import {
  compareSessions,
  ownScenarios,
  sessionComparisonHtml,
  sessionComparisonMd,
  sessionSections,
  type SessionComparison,
} from './render-session';

export type CompareMarker = 'beyond-spread' | 'within-spread' | 'no-repetitions' | 'not-comparable';

export interface CompareCell {
  readonly id: string;
  readonly key: CellKey;
  readonly a: Spread | null;
  readonly b: Spread | null;
  /** median B / median A; null when either is unknown or A is 0. */
  readonly ratio: number | null;
  readonly marker: CompareMarker;
  /** Why the marker is what it is, in words. */
  readonly note: string;
  readonly verdictA: boolean | null;
  readonly verdictB: boolean | null;
}

/** One target of a scenario both runs measured: its decision-table row in A and in B. */
export interface DecisionPair {
  readonly scenario: string;
  readonly label: string;
  readonly a: DecisionRow | null;
  readonly b: DecisionRow | null;
  /** median tps B / A; null when either is unknown. */
  readonly ratio: number | null;
}

export interface ComparisonModel {
  readonly a: LoadedRun;
  readonly b: LoadedRun;
  /** The two runs' lab files (lab.json): each named, and what differs field by field. */
  readonly lab: LabComparison;
  /** The decision tables of both runs, row by row (scenarios either run has). */
  readonly decisions: readonly DecisionPair[];
  /**
   * Files of either run that could not be read and are left out (the comparison is partial), then
   * what the chart library could not draw. Shown in compare.md and compare.html.
   */
  readonly warnings: readonly string[];
  readonly matched: readonly CompareCell[];
  readonly onlyA: readonly Cell[];
  readonly onlyB: readonly Cell[];
  /** The session-state cells and the added latency of both runs (render-session.ts). */
  readonly session: SessionComparison;
}

/** Width of the repetitions' range (best − worst), or null with fewer than two repetitions. */
function spreadWidth(s: Spread): number | null {
  return s.n >= 2 ? Math.abs(s.best - s.worst) : null;
}

export function compareCell(
  a: Spread | null,
  b: Spread | null,
): { ratio: number | null; marker: CompareMarker; note: string } {
  if (!a || !b) {
    return {
      ratio: null,
      marker: 'not-comparable',
      note: `no tps in ${!a && !b ? 'either run' : !a ? 'A' : 'B'}`,
    };
  }
  const ratio = a.median !== 0 ? b.median / a.median : null;
  const wa = spreadWidth(a);
  const wb = spreadWidth(b);
  if (wa === null || wb === null) {
    return {
      ratio,
      marker: 'no-repetitions',
      note: `no repetitions in ${wa === null && wb === null ? 'either run' : wa === null ? 'A' : 'B'}: spread unknown, difference not judged`,
    };
  }
  const diff = Math.abs(b.median - a.median);
  const spread = Math.max(wa, wb);
  return diff > spread
    ? {
        ratio,
        marker: 'beyond-spread',
        note: `difference ${fmtNumber(diff)} tps exceeds the spread between repetitions (${fmtNumber(spread)})`,
      }
    : {
        ratio,
        marker: 'within-spread',
        note: `difference ${fmtNumber(diff)} tps within the spread between repetitions (${fmtNumber(spread)})`,
      };
}

export function compareRuns(a: LoadedRun, b: LoadedRun): ComparisonModel {
  // Probe steps have no tps: the session-state matrix is compared cell by cell, the disruptions by
  // their downtime rows (./disruptions.ts), below.
  const lookup = catalogLookup();
  const ownA = ownScenarios(a, lookup);
  const ownB = ownScenarios(b, lookup);
  const cellsA = groupCells(a.steps.filter((s) => !ownA(s.scenario) && s.probe?.kind !== 'disruption'));
  const cellsB = groupCells(b.steps.filter((s) => !ownB(s.scenario) && s.probe?.kind !== 'disruption'));
  const byIdB = new Map(cellsB.map((c) => [c.id, c] as const));
  const idsA = new Set(cellsA.map((c) => c.id));
  const matched: CompareCell[] = [];
  for (const ca of cellsA) {
    const cb = byIdB.get(ca.id);
    if (!cb) continue;
    matched.push({
      id: ca.id,
      key: ca.key,
      a: ca.tps,
      b: cb.tps,
      ...compareCell(ca.tps, cb.tps),
      verdictA: ca.verdictHeld,
      verdictB: cb.verdictHeld,
    });
  }
  const skipped = (label: string, run: LoadedRun): string[] =>
    run.problems.length === 0
      ? []
      : [
          `PARTIAL comparison: ${run.problems.length} file(s) of run ${label} could not be read and are left out: ${run.problems.join('; ')}`,
        ];
  return {
    a,
    b,
    lab: compareLabs(a, b),
    decisions: decisionPairs(decisionTables(a, cellsA), decisionTables(b, cellsB)),
    warnings: [...skipped('A', a), ...skipped('B', b)],
    matched,
    onlyA: cellsA.filter((c) => !byIdB.has(c.id)),
    onlyB: cellsB.filter((c) => !idsA.has(c.id)),
    session: compareSessions(sessionSections(a, lookup), sessionSections(b, lookup)),
  };
}

/** Rows of the same scenario and label side by side, A's order first, then rows only B has. */
export function decisionPairs(a: readonly DecisionTable[], b: readonly DecisionTable[]): DecisionPair[] {
  const out: DecisionPair[] = [];
  const scenarios = uniqueInOrder([...a.map((t) => t.scenario), ...b.map((t) => t.scenario)]);
  for (const scenario of scenarios) {
    const ra = a.find((t) => t.scenario === scenario)?.rows ?? [];
    const rb = b.find((t) => t.scenario === scenario)?.rows ?? [];
    for (const label of uniqueInOrder([...ra.map((r) => r.label), ...rb.map((r) => r.label)])) {
      const x = ra.find((r) => r.label === label) ?? null;
      const y = rb.find((r) => r.label === label) ?? null;
      const ratio = x?.tps && y?.tps && x.tps.median !== 0 ? y.tps.median / x.tps.median : null;
      out.push({ scenario, label, a: x, b: y, ratio });
    }
  }
  return out;
}

const DECISION_COMPARE_HEADER = [
  'scenario',
  'target',
  'tps A',
  'tps B',
  'B/A',
  'p95 ms A → B',
  'errors A → B',
  'DB connections peak A → B',
  '$ per M tx A → B',
  'session features A → B',
] as const;

function decisionPairCells(p: DecisionPair): string[] {
  const side = (r: DecisionRow | null, f: (r: DecisionRow) => string): string =>
    r === null ? 'not in this run' : r.notMeasured !== null ? 'not measured' : f(r);
  return [
    p.scenario,
    p.label,
    side(p.a, (r) => fmtSpread(r.tps, 1)),
    side(p.b, (r) => fmtSpread(r.tps, 1)),
    p.ratio !== null ? `${fmtNumber(p.ratio, 2)} ×` : '?',
    `${side(p.a, (r) => fmtNumber(r.latencyP95Ms))} → ${side(p.b, (r) => fmtNumber(r.latencyP95Ms))}`,
    `${side(p.a, errorsText)} → ${side(p.b, errorsText)}`,
    `${side(p.a, connectionsText)} → ${side(p.b, connectionsText)}`,
    `${side(p.a, (r) => fmtUsd(r.usdPerMillionTransactions))} → ${side(p.b, (r) => fmtUsd(r.usdPerMillionTransactions))}`,
    `${side(p.a, sessionFeaturesText)} → ${side(p.b, sessionFeaturesText)}`,
  ];
}

const MARKER_TEXT: Readonly<Record<CompareMarker, string>> = {
  'beyond-spread': '⚠ beyond spread',
  'within-spread': 'within spread',
  'no-repetitions': 'no repetitions',
  'not-comparable': 'not comparable',
};

function cellLabel(k: CellKey): string {
  return `${k.target.name} · ${k.clients}c · ${k.protocol} · ${fmtConnect(k.connect)}${k.poolPercent !== null ? ` · pool ${k.poolPercent}%` : ''}`;
}

function runLine(run: LoadedRun): string {
  const m = run.manifest;
  return `${m.runId} (${m.mode}, suite ${m.suite}, ${m.status}, started ${m.startedAt}${isPartial(run) ? ', partial' : ''})`;
}

function onlyRows(cells: readonly Cell[]): string[][] {
  return cells.map((c) => [c.key.scenario, cellLabel(c.key), fmtSpread(c.tps, 1)]);
}

function renderCompareMarkdown(model: ComparisonModel, warnings: readonly string[]): string {
  const out: string[] = [];
  out.push(`# proxylab compare`);
  out.push('');
  out.push(`- A: ${mdText(runLine(model.a))}`);
  out.push(`- B: ${mdText(runLine(model.b))}`);
  out.push('');
  for (const w of warnings) out.push(`> ⚠ ${mdText(w)}`, '');
  out.push(...labComparisonMarkdown(model.lab));
  out.push('## Decision table, A beside B');
  out.push('');
  out.push(
    "Each run's decision-table row per target (the rules of `proxylab report`, docs/report.md): tps over the cells every target of that run measured with a tps; B/A of the medians.",
  );
  out.push('');
  out.push(
    model.decisions.length > 0
      ? mdTable(DECISION_COMPARE_HEADER, model.decisions.map(decisionPairCells))
      : 'No measured step in either run.',
  );
  out.push('');
  out.push('## Cell by cell');
  out.push('');
  const beyond = model.matched.filter((c) => c.marker === 'beyond-spread').length;
  const noReps = model.matched.filter((c) => c.marker === 'no-repetitions').length;
  out.push(
    `${model.matched.length} cells in both runs; ${beyond} differ by more than the spread between repetitions; ` +
      `${noReps} have no repetitions (spread unknown, not judged); ${model.onlyA.length} only in A, ${model.onlyB.length} only in B.`,
  );
  out.push('');
  for (const scenario of uniqueInOrder(model.matched.map((c) => c.key.scenario))) {
    out.push(`## ${mdText(scenario)}`);
    out.push('');
    out.push(
      mdTable(
        ['cell', 'tps A', 'tps B', 'B/A', 'marker', 'verdict A → B'],
        model.matched
          .filter((c) => c.key.scenario === scenario)
          .map((c) => [
            cellLabel(c.key),
            fmtSpread(c.a, 1),
            fmtSpread(c.b, 1),
            c.ratio !== null ? `${fmtNumber(c.ratio, 2)} ×` : '?',
            `${MARKER_TEXT[c.marker]}${c.marker === 'not-comparable' ? ` (${c.note})` : ''}`,
            `${fmtVerdict(c.verdictA)} → ${fmtVerdict(c.verdictB)}`,
          ]),
      ),
    );
    out.push('');
  }
  out.push(...compareDowntimeMarkdown(compareDowntime(model.a.steps, model.b.steps)));
  const session = sessionComparisonMd(model.session);
  if (session !== '') out.push(session);
  if (model.onlyA.length > 0) {
    out.push('## Only in A');
    out.push('');
    out.push(mdTable(['scenario', 'cell', 'tps'], onlyRows(model.onlyA)));
    out.push('');
  }
  if (model.onlyB.length > 0) {
    out.push('## Only in B');
    out.push('');
    out.push(mdTable(['scenario', 'cell', 'tps'], onlyRows(model.onlyB)));
    out.push('');
  }
  return out.join('\n');
}

function ratioOption(cells: readonly CompareCell[], scenario: string): EChartsOption {
  const shown = cells.filter((c) => c.ratio !== null);
  return {
    title: {
      text: `B / A tps — ${scenario}`,
      left: 'center',
      textStyle: { fontSize: 13, fontFamily: 'sans-serif' },
    },
    grid: { left: 260, right: 30, top: 36, bottom: 30 },
    xAxis: { type: 'value', name: 'B/A', min: 0 },
    yAxis: {
      type: 'category',
      inverse: true,
      data: shown.map((c) => cellLabel(c.key)),
      axisLabel: { fontSize: 10 },
    },
    series: [
      {
        type: 'bar',
        data: shown.map((c) => ({
          value: c.ratio,
          itemStyle: {
            color:
              c.marker === 'beyond-spread'
                ? PALETTE[3]
                : c.marker === 'within-spread'
                  ? PALETTE[2]
                  : PALETTE[6],
          },
        })),
        markLine: {
          silent: true,
          symbol: 'none',
          data: [{ xAxis: 1 }],
          lineStyle: { color: '#333', type: 'dashed' },
          label: { show: false },
        },
      },
    ],
  };
}

const COMPARE_CSS = new SafeHtml(
  'body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;padding:16px 24px;max-width:1200px;color:#1d1d1f}' +
    'table{border-collapse:collapse;font-size:13px;margin:6px 0 14px}th,td{border:1px solid #ddd;padding:3px 7px;text-align:left}th{background:#f6f6f6}' +
    'td.num{text-align:right;font-variant-numeric:tabular-nums}.beyond-spread{background:#fce8e6}.no-repetitions,.not-comparable{color:#666}' +
    'figure{margin:0}svg{max-width:100%;height:auto}figcaption{font-size:12px;color:#666}',
);

/** The page, and what the chart library could not draw (lib/report/charts.ts). */
export function renderCompareHtml(model: ComparisonModel): {
  readonly page: string;
  readonly chartWarnings: string[];
} {
  const scenarios = uniqueInOrder(model.matched.map((c) => c.key.scenario));
  const chartWarnings: string[] = [];
  const warn = (message: string): void => {
    if (!chartWarnings.includes(message)) chartWarnings.push(message);
  };
  const sections = scenarios.map((scenario) => {
    const cells = model.matched.filter((c) => c.key.scenario === scenario);
    const drawable = cells.some((c) => c.ratio !== null);
    return html`<section data-scenario="${scenario}"><h2>${scenario}</h2>${
      drawable
        ? html`<figure class="chart" data-chart="ratio">${trustedSvg(renderSvg(ratioOption(cells, scenario), { width: 720, height: 80 + 28 * cells.length }, warn))}<figcaption>orange: beyond the spread between repetitions; green: within it; grey: no repetitions, not judged. Cells without a ratio are only in the table.</figcaption></figure>`
        : ''
    }<table><thead><tr><th>cell</th><th>tps A</th><th>tps B</th><th>B/A</th><th>marker</th><th>verdict A → B</th></tr></thead><tbody>${cells.map(
      (c) =>
        html`<tr class="${c.marker}"><td>${cellLabel(c.key)}</td><td class="num">${fmtSpread(c.a, 1)}</td><td class="num">${fmtSpread(c.b, 1)}</td><td class="num">${
          c.ratio !== null ? `${fmtNumber(c.ratio, 2)} ×` : '?'
        }</td><td title="${c.note}">${MARKER_TEXT[c.marker]}</td><td>${fmtVerdict(c.verdictA)} → ${fmtVerdict(c.verdictB)}</td></tr>`,
    )}</tbody></table></section>`;
  });
  const warnings = [...model.warnings, ...chartWarnings];
  const onlyTable = (title: string, cells: readonly Cell[]): SafeHtml =>
    cells.length === 0
      ? html``
      : html`<h2>${title}</h2><table><thead><tr><th>scenario</th><th>cell</th><th>tps</th></tr></thead><tbody>${cells.map(
          (c) =>
            html`<tr><td>${c.key.scenario}</td><td>${cellLabel(c.key)}</td><td class="num">${fmtSpread(c.tps, 1)}</td></tr>`,
        )}</tbody></table>`;
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>proxylab compare · ${model.a.manifest.runId} vs ${model.b.manifest.runId}</title><style>${COMPARE_CSS}</style></head><body>
<h1>proxylab compare</h1>
<ul><li>A: ${runLine(model.a)}</li><li>B: ${runLine(model.b)}</li></ul>
${warnings.length > 0 ? html`<ul class="warnings" id="warnings">${warnings.map((w) => html`<li>${w}</li>`)}</ul>` : ''}
${labComparisonHtml(model.lab)}
<section id="decision"><h2>Decision table, A beside B</h2><p>Each run's decision-table row per target (the rules of <code>proxylab report</code>): tps over the cells every target of that run measured with a tps; B/A of the medians.</p>${
    model.decisions.length > 0
      ? html`<table class="decision"><thead><tr>${DECISION_COMPARE_HEADER.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>${model.decisions.map(
          (p) => html`<tr>${decisionPairCells(p).map((c) => html`<td>${c}</td>`)}</tr>`,
        )}</tbody></table>`
      : html`<p>No measured step in either run.</p>`
  }</section>
<h2>Cell by cell</h2>
<p>Ratio is median tps B / median tps A. ⚠ marks a difference larger than the spread (best − worst) between repetitions; without repetitions the spread is unknown and the difference is not judged.</p>
${sections}
${compareDowntimeHtml(compareDowntime(model.a.steps, model.b.steps))}
${sessionComparisonHtml(model.session)}
${onlyTable('Only in A', model.onlyA)}
${onlyTable('Only in B', model.onlyB)}
</body></html>
`;
  return { page: page.value, chartWarnings };
}

export interface ComparisonResult {
  readonly htmlPath: string;
  readonly mdPath: string;
  readonly markdown: string;
  readonly model: ComparisonModel;
  /** Skipped files of either run, then what the chart library could not draw. */
  readonly warnings: readonly string[];
}

/** Compare two run directories; writes compare.html and compare.md into outDir (default: B's directory). */
export function writeComparison(
  dirA: string,
  dirB: string,
  opts: { readonly outDir?: string } = {},
): ComparisonResult {
  const model = compareRuns(loadRun(dirA), loadRun(dirB));
  const { page, chartWarnings } = renderCompareHtml(model);
  const warnings = [...model.warnings, ...chartWarnings];
  // Data fields are not terminal commands: control characters (ESC, OSC, C0/C1) shown as \xNN.
  const markdown = forTerminal(renderCompareMarkdown(model, warnings));
  const outDir = resolve(opts.outDir ?? model.b.dir);
  mkdirSync(outDir, { recursive: true });
  const htmlPath = join(outDir, 'compare.html');
  const mdPath = join(outDir, 'compare.md');
  // Atomic and symlink-safe (lib/core/atomic-write): a planted link's target is never written.
  writeFileAtomic(htmlPath, page);
  writeFileAtomic(mdPath, markdown);
  return { htmlPath, mdPath, markdown, model, warnings };
}
