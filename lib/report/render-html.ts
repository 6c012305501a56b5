/**
 * report.html: one self-contained page. No scripts, no external fonts, images or links that
 * fetch; a Content-Security-Policy of `default-src 'none'` makes sure of it even if a string
 * slipped through. Charts are static SVG rendered by echarts at build time and inlined; every
 * piece of text goes through the escaping `html` template.
 */
import { describeRunDatabase } from '../suite/database';
import type { Cell } from './cells';
import { type ChartWarn, churnOption, latencyOption, metricOption, renderSvg, tpsOption } from './charts';
import {
  fmtConnect,
  fmtDuration,
  fmtNumber,
  fmtPrediction,
  fmtSetting,
  fmtSpread,
  fmtVerdict,
} from './format';
import {
  DECISION_HEADER,
  DECISION_LEGEND,
  decisionAnswer,
  decisionCells,
  decisionNotes,
  noDecisionText,
} from './decision-text';
import { disruptionScenarios, disruptionSectionsHtml } from './disruptions';
import { html, joinHtml, SafeHtml, trustedSvg } from './html';
import { columnTitle, noTpsOutcome, type PoolerMatrix } from './pooler-matrix';
import { poolersText } from './shape';
import { ownScenarios, SESSION_CSS, sessionSections, sessionSectionsHtml } from './render-session';
import { settingsHtml } from './settings';
import { labHeadline } from './lab-compare';
import type {
  ChurnRow,
  ErrorMatrix,
  FindingRow,
  FindingState,
  MatrixCell,
  MetricPanel,
  ReportModel,
  ReportWarning,
  ScenarioLookup,
  ScenarioPanel,
} from './shape';

const CSS = `
:root{--fg:#1d1d1f;--muted:#666;--line:#ddd;--ok:#e6f4ea;--okfg:#137333;--bad:#fce8e6;--badfg:#a50e0e;--warn:#fef7e0;--warnfg:#7a4f01;--info:#eef3fb}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);margin:0 auto;padding:16px 24px 48px;max-width:1240px}
h1{font-size:22px;margin:8px 0 2px}h2{font-size:18px;margin:32px 0 6px;border-bottom:1px solid var(--line);padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
.sub{color:var(--muted);margin:0 0 12px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}th,td{border:1px solid var(--line);padding:3px 7px;text-align:left;vertical-align:top}th{background:#f6f6f6}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0}.kv dt{color:var(--muted)}.kv dd{margin:0}
.badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;font-weight:600}
.s-reproduced,.s-completed,.m-ok{background:var(--ok);color:var(--okfg)}
.s-contradicted,.s-failed,.m-errors,.m-hung,.m-timeout{background:var(--bad);color:var(--badfg)}
.s-held-so-far,.s-running,.s-interrupted{background:var(--warn);color:var(--warnfg)}
.s-informational,.m-not-available{background:var(--info)}
.warnings{background:var(--warn);border:1px solid #f1d48a;border-radius:6px;padding:8px 14px 8px 30px;margin:10px 0}
.warnings li{margin:3px 0}
.charts{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
figure.chart{margin:0;border:1px solid var(--line);border-radius:6px;padding:4px;background:#fff}
figure.chart svg{display:block;max-width:100%;height:auto}
figcaption{font-size:12px;color:var(--muted);padding:2px 6px}
.nodata{border:1px dashed #bbb;border-radius:6px;padding:10px 14px;color:var(--muted);width:570px;max-width:100%;background:#fafafa}.nodata ul{margin:4px 0 0;padding-left:18px}
.matrix td{min-width:86px}.matrix .cls{white-space:nowrap}
details summary{cursor:pointer;color:var(--muted)}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre-wrap;word-break:break-word}
.verdict-held{color:var(--okfg);font-weight:700}.verdict-broke{color:var(--badfg);font-weight:700}
footer{margin-top:40px;color:var(--muted);font-size:12px}
`;

/** A constant of this module, no input in it: inserted as is (escaping would break its quotes). */
const STYLE = new SafeHtml(CSS + SESSION_CSS);

/** ✓/✗ in words, so a predicted failure that happened never reads as "good". */
const STATE_WORDS: Readonly<Record<FindingState, string>> = {
  reproduced: '✓ as the experiment predicts',
  'held-so-far': '… as predicted so far (partial run)',
  contradicted: '✗ contrary to it',
  informational: '– nothing predicted (informational)',
};

export interface HtmlOptions {
  readonly lookup: ScenarioLookup;
  readonly generatedAt: Date;
}

function verdictMark(held: boolean | null): SafeHtml {
  const cls = held === true ? 'verdict-held' : held === false ? 'verdict-broke' : '';
  return html`<span class="${cls}">${fmtVerdict(held)}</span>`;
}

function headline(model: ReportModel): SafeHtml {
  const m = model.run.manifest;
  const env = m.environment;
  const envText = [
    env.serverVersion !== null ? `PostgreSQL ${env.serverVersion}` : null,
    env.pgbenchVersion !== null ? `pgbench ${env.pgbenchVersion}` : null,
    poolersText(model.run),
    env.maxConnections !== null ? `max_connections ${env.maxConnections}` : null,
    env.cpus !== null ? `${env.cpus} CPUs` : null,
  ]
    .filter((x): x is string => x !== null)
    .join(' · ');
  const settings = Object.entries(m.settings).map(([k, v]) => html`<dt>${k}</dt><dd>${fmtSetting(v)}</dd>`);
  return html`<section id="headline">
<dl class="kv">
<dt>run</dt><dd>${m.runId}</dd>
<dt>suite</dt><dd>${m.suite}</dd>
<dt>mode</dt><dd>${m.mode === 'local' ? 'local stand-in (PostgreSQL and its poolers on one machine)' : 'cloud lab (AWS)'}</dd>
<dt>database</dt><dd id="database">${describeRunDatabase(env.database) ?? 'unknown (the run does not name its database)'}</dd>
<dt>status</dt><dd><span class="badge s-${m.status}">${m.status}</span> ${m.stepsCompleted} of ${m.stepIds.length} steps</dd>
<dt>started</dt><dd>${m.startedAt}</dd>
<dt>ended</dt><dd>${m.endedAt ?? 'not ended'} (${fmtDuration(m.startedAt, m.endedAt)})</dd>
<dt>environment</dt><dd>${envText || 'unknown'}</dd>
${model.run.lab ? html`<dt>lab file</dt><dd id="lab-file">${labHeadline(model.run.lab)}</dd>` : ''}
</dl>
<details open><summary>${m.mode === 'local' ? 'local settings' : 'lab'} (${Object.keys(m.settings).length})</summary><dl class="kv">${settings}</dl></details>
</section>`;
}

function warningsSection(warnings: readonly ReportWarning[]): SafeHtml {
  if (warnings.length === 0) return html``;
  return html`<ul class="warnings" id="warnings">${warnings.map(
    (w) =>
      html`<li data-warning="${w.id}">${w.message}${
        w.stepIds.length > 0
          ? html` <details><summary>${w.stepIds.length} step(s)</summary><code>${w.stepIds.join('\n')}</code></details>`
          : ''
      }</li>`,
  )}</ul>`;
}

/** One line under the title: which experiments this run reproduced, held so far or contradicted. */
function findingsLine(findings: readonly FindingRow[]): SafeHtml {
  const states: readonly FindingState[] = ['reproduced', 'held-so-far', 'contradicted'];
  const parts = states
    .map((state) => {
      const rows = findings.filter((f) => f.state === state);
      return rows.length === 0
        ? null
        : html`<span class="badge s-${state}">${STATE_WORDS[state]}</span> ${rows.map((f) => `${f.experiment ?? '–'} (${f.scenario})`).join(', ')}`;
    })
    .filter((p): p is SafeHtml => p !== null);
  return parts.length === 0
    ? html``
    : html`<p class="findings-line" id="findings-line">${joinHtml(parts, ' · ')}</p>`;
}

function findingsSection(findings: readonly FindingRow[]): SafeHtml {
  if (findings.length === 0)
    return html`<section id="findings"><h2>Findings</h2><p>No steps recorded yet.</p></section>`;
  return html`<section id="findings"><h2>Findings: published, then measured</h2>
<p class="sub">The published column is what the source reported — a claim, not a measurement of this run; the measured column is this run. ✓ means the run behaved as the experiment predicts (for a predicted refusal or error: that it failed); ✗ that it did not.</p>
<table><thead><tr><th>experiment</th><th>scenario</th><th>published (claim and source)</th><th>measured in this run</th><th>verdict</th><th>verdicts as predicted / contrary / not judged</th></tr></thead><tbody>
${findings.map(
  (
    f,
  ) => html`<tr><td>${f.experiment ?? '–'}</td><td><a href="#${anchor(f.scenario)}">${f.scenario}</a></td><td data-published="${f.scenario}"><span class="badge">${f.experiment === null ? "the lab's own" : 'published'}</span> ${f.finding ?? '–'}${
    f.claims.length > 0 ? html`<div class="sub">Reported: ${f.claims.join('; ')}</div>` : ''
  }<div class="sub">${f.source ? `Source: ${f.source}` : 'Source: not cited in the catalog'}</div></td>
<td data-measured="${f.scenario}"><span class="badge">measured</span> ${f.measured.length > 0 ? f.measured.join('; ') : 'see the scenario below'}</td>
<td><span class="badge s-${f.state}">${STATE_WORDS[f.state]}</span>${
    f.brokenExamples.length > 0
      ? html`<details><summary>what went contrary</summary><code>${f.brokenExamples.join('\n')}</code></details>`
      : ''
  }</td><td class="num">${f.held} / ${f.broke} / ${f.informational}</td></tr>`,
)}
</tbody></table></section>`;
}

/** The decision tables, first on the page. */
function decisionSection(model: ReportModel): SafeHtml {
  const tables = model.decisions.map(
    (t) => html`<h3>${t.scenario} <span class="sub">${t.workload}</span></h3>
<p class="answer"><strong>${decisionAnswer(t)}</strong></p>
<table class="decision"><thead><tr>${DECISION_HEADER.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>${t.rows.map(
      (r, row) =>
        // no target name in an attribute: names come from the run directory (hostile text stays element content)
        html`<tr data-row="${row}">${decisionCells(t, r).map((c, i) => (i === 0 ? html`<th>${c}</th>` : html`<td>${c}</td>`))}</tr>`,
    )}</tbody></table>${decisionNotes(t).map((n) => html`<p class="sub">${n}</p>`)}`,
  );
  return html`<section id="decision"><h2>Decision table</h2><p class="sub">${DECISION_LEGEND}</p>${
    tables.length > 0 ? tables : html`<p>${noDecisionText(model.run.steps.length)}</p>`
  }</section>`;
}

/** An id-safe anchor for a scenario name (the visible text stays escaped, not mangled). */
function anchor(scenario: string): string {
  return `scenario-${scenario.replace(/[^A-Za-z0-9_-]+/g, '_')}`;
}

function chart(kind: string, svg: string, caption: string): SafeHtml {
  return html`<figure class="chart" data-chart="${kind}">${trustedSvg(svg)}<figcaption>${caption}</figcaption></figure>`;
}

function panelCharts(panel: ScenarioPanel, warn: ChartWarn): SafeHtml {
  const anyTps = panel.tps.some((l) => l.points.some((p) => p?.value));
  const anyLatency =
    panel.latencyP95Ms.some((l) => l.points.some((p) => p?.value)) ||
    panel.latencyP50Ms.some((l) => l.points.some((p) => p?.value));
  const noValue = panel.tps.flatMap((l) =>
    l.points.flatMap((p) => (p !== null && p.value === null ? [`${l.label} at ${p.clients} clients`] : [])),
  );
  const size = { width: 560, height: 330 };
  const gaps =
    noValue.length > 0
      ? html`<p class="sub">No tps (refused or failed, see the error matrix): ${noValue.join('; ')}</p>`
      : '';
  if (!panel.drawable)
    return html`<p class="sub" data-chart="single-point">${panel.modes}: one client count (${panel.clients.join(', ')}), so no chart over client counts — every target would be a single point; the tables give the figures.</p>${gaps}`;
  return html`<h3>${panel.modes}</h3><div class="charts">
${anyTps ? chart('tps', renderSvg(tpsOption(panel, `TPS vs clients — ${panel.scenario}`), size, warn), `median tps, one series per target${panel.repeated ? '; band: worst to best repetition' : ''}; ▲ the cell had errors or aborted clients`) : html`<div class="nodata" data-chart="tps">TPS: no data (no step of this scenario reported a tps)</div>`}
${anyLatency ? chart('latency', renderSvg(latencyOption(panel, `Latency vs clients — ${panel.scenario}`), size, warn), 'p95 solid, p50 dashed (from pgbench per-transaction logs)') : html`<div class="nodata" data-chart="latency">Latency: no data (no logs with latencies)</div>`}
</div>${gaps}`;
}

function churnSection(rows: readonly ChurnRow[], warn: ChartWarn): SafeHtml {
  if (rows.length === 0) return html``;
  const drawable = rows.some((r) => r.persistent || r.perTransaction);
  const table = html`<table><thead><tr><th>target</th><th>clients</th><th>protocol</th><th>tps reusing connections</th><th>tps with -C</th><th>cost of churn</th></tr></thead><tbody>${rows.map(
    (r) =>
      html`<tr><td>${r.label}</td><td class="num">${r.clients}</td><td>${r.protocol}</td><td class="num">${r.persistent ? fmtSpread(r.persistent) : 'not run'}</td><td class="num">${fmtSpread(r.perTransaction)}</td><td class="num">${r.churnCost !== null ? `${fmtNumber(r.churnCost, 1)} ×` : '?'}</td></tr>`,
  )}</tbody></table>`;
  return html`<h3>Connection churn: with and without -C</h3>${
    drawable
      ? html`<div class="charts">${chart('churn', renderSvg(churnOption(rows, 'tps reusing connections vs -C'), { width: 560, height: 330 }, warn), 'median tps; a missing bar was not run or gave no tps')}</div>`
      : ''
  }${table}`;
}

function matrixCell(cell: MatrixCell | null): SafeHtml {
  if (!cell) return html`<td class="m-none">not in plan</td>`;
  const hover = [
    `expected: ${cell.expected}`,
    `observed: ${cell.observed}`,
    ...cell.errors.map((e) => `${e.class} ×${e.count}: ${e.sample}`),
    cell.repetitions > 1 ? `${cell.repetitions} repetitions` : '',
  ]
    .filter((x) => x !== '')
    .join('\n');
  const label =
    cell.state === 'ok'
      ? 'ok'
      : cell.state === 'errors'
        ? cell.errors.length === 0
          ? `${cell.abortedClients} aborted`
          : ''
        : cell.state;
  return html`<td class="m-${cell.state}" title="${hover}" data-state="${cell.state}">${verdictMark(cell.verdictHeld)} ${label}${cell.errors.map(
    (e) => html`<div class="cls">${e.class} ×${e.count}</div>`,
  )}${
    cell.errors.length > 0
      ? html`<details><summary>sample</summary><code>${cell.errors.map((e) => `${e.class}: ${e.sample}`).join('\n')}</code></details>`
      : ''
  }</td>`;
}

function matrixSection(matrix: ErrorMatrix): SafeHtml {
  return html`<h3>Error matrix</h3><p class="sub">✓: as the experiment predicts (for a predicted refusal or error, it happened); ✗: contrary to it; hover a cell for the expectation, what happened and one sample line per error class.</p>
<table class="matrix" data-matrix="${matrix.scenario}"><thead><tr><th>target</th>${matrix.columns.map(
    (c) => html`<th>${c.clients} clients<br>${c.protocol}<br>${fmtConnect(c.connect)}</th>`,
  )}</tr></thead><tbody>${matrix.rows.map((r) => html`<tr><th>${r.label}</th>${r.cells.map(matrixCell)}</tr>`)}</tbody></table>`;
}

function poolerMatrixSection(pm: PoolerMatrix): SafeHtml {
  return html`<h3>Pooler matrix <span class="sub">${pm.variant}</span></h3><p class="sub">Each pooler and placement side by side per client count: tps, p95 latency, the pooler's CPU (busiest process, mean over the step, % of one core: a PgBouncer process tops out at 100 %, PgDoorman's at 100 × its worker threads; RDS Proxy publishes none) and whether the pooler was saturated. ? = unknown.</p>
<table class="pooler-matrix" data-pooler-matrix="${pm.scenario}"><thead><tr><th>clients</th>${pm.columns.map(
    (c) =>
      html`<th data-target="${c.targetName}">${columnTitle(c).name}${
        columnTitle(c).what === c.targetName ? '' : html`<br><span class="sub">${columnTitle(c).what}</span>`
      }</th>`,
  )}</tr></thead><tbody>${pm.rows.map(
    (r) =>
      html`<tr><th class="num">${r.clients}</th>${r.cells.map((cell) =>
        cell === null
          ? html`<td class="m-none">–</td>`
          : noTpsOutcome(cell) !== null
            ? html`<td data-outcome="no-tps">${noTpsOutcome(cell) ?? ''}</td>`
            : html`<td class="num${cell.poolerSaturated === true ? ' m-errors' : ''}" data-saturated="${String(cell.poolerSaturated)}"><div>${fmtSpread(cell.tps, 1)} tps</div><div>p95 ${fmtSpread(cell.latencyP95Ms)} ms</div><div>pooler CPU ${cell.poolerCpuPercent === null ? '?' : `${fmtNumber(cell.poolerCpuPercent, 0)} %`}</div>${
                cell.poolerSaturated === true
                  ? html`<div>⚠ pooler saturated</div>`
                  : cell.poolerSaturated === false
                    ? html`<div>not saturated</div>`
                    : ''
              }</td>`,
      )}</tr>`,
  )}</tbody></table>`;
}

function resultsTable(cells: readonly Cell[]): SafeHtml {
  return html`<details><summary>all results (${cells.length} cells)</summary><table><thead><tr><th>target</th><th>clients</th><th>protocol</th><th>connect</th><th>pool %</th><th>script</th><th>tps</th><th>p50 ms</th><th>p95 ms</th><th>errors</th><th>verdict</th></tr></thead><tbody>${cells.map(
    (c) =>
      html`<tr><td>${c.key.target.name}${c.key.preparedStatements === null ? '' : ` (max_prepared_statements ${c.key.preparedStatements === 'on' ? 'on' : '0'})`}</td><td class="num">${c.key.clients}</td><td>${c.key.protocol}</td><td>${fmtConnect(c.key.connect)}</td><td class="num">${c.key.poolPercent ?? '–'}</td><td>${c.key.script}</td><td class="num">${fmtSpread(c.tps)}</td><td class="num">${fmtSpread(c.latencyP50Ms)}</td><td class="num">${fmtSpread(c.latencyP95Ms)}</td><td>${
        c.errors.length > 0
          ? c.errors.map((e) => `${e.class} ×${e.count}`).join(', ')
          : c.abortedClients > 0
            ? `${c.abortedClients} aborted`
            : '–'
      }</td><td>${verdictMark(c.verdictHeld)} ${c.steps.map((s) => s.verdict.observed).join(' | ')}</td></tr>`,
  )}</tbody></table></details>`;
}

function scenarioSection(
  model: ReportModel,
  scenario: string,
  lookup: ScenarioLookup,
  warn: ChartWarn,
): SafeHtml {
  const info = lookup(scenario);
  const cells = model.cells.filter((c) => c.key.scenario === scenario);
  const panels = model.panels.filter((p) => p.scenario === scenario);
  const churn = model.churn.filter((r) => r.scenario === scenario);
  const matrix = model.matrices.find((m) => m.scenario === scenario);
  const comparisons = (model.run.manifest.scenarioVerdicts ?? []).filter((v) => v.scenario === scenario);
  return html`<section class="scenario" id="${anchor(scenario)}" data-scenario="${scenario}">
<h2>${scenario}${info?.title ? html` — ${info.title}` : ''}</h2>
${info?.finding ? html`<p class="sub"><span class="badge">published</span> ${info.experiment ?? ''}: ${info.finding}${info.source ? ` (${info.source})` : ''}</p>` : ''}
${panels.map((p) => panelCharts(p, warn))}
${churnSection(churn, warn)}
${matrix ? matrixSection(matrix) : ''}
${model.poolerMatrices.filter((pm) => pm.scenario === scenario).map(poolerMatrixSection)}
${
  comparisons.length > 0
    ? html`<h3>Comparisons</h3><ul>${comparisons.map((v) => html`<li>${fmtPrediction(v.held, v.expected)} — measured: ${v.observed}</li>`)}</ul>`
    : ''
}
${resultsTable(cells)}
</section>`;
}

function metricPanelHtml(panel: MetricPanel, model: ReportModel, warn: ChartWarn): SafeHtml {
  const missing = panel.missing.map(
    (m) =>
      html`<li>${m.label}: ${m.status === 'not-collected' ? 'not collected' : 'no data'} (${m.reason})</li>`,
  );
  if (panel.lines.length === 0) {
    return html`<div class="nodata" data-chart="metric-nodata" data-metric="${panel.title}"><strong>${panel.title}</strong>: no data<ul>${missing}</ul></div>`;
  }
  return html`<figure class="chart" data-chart="metric" data-metric="${panel.title}">${trustedSvg(
    renderSvg(metricOption(panel, model.windows), { width: 560, height: 250 }, warn),
  )}${missing.length > 0 ? html`<figcaption><ul>${missing}</ul></figcaption>` : ''}</figure>`;
}

function metricsSection(model: ReportModel, warn: ChartWarn): SafeHtml {
  const files = model.run.metrics.map((m) => `metrics/${m.name}.json`);
  return html`<section id="metrics"><h2>Metrics over time</h2>
<p class="sub">${files.length > 0 ? `From ${files.join(', ')}.` : 'This run has no metrics files.'} Shaded bands are steps, numbered in run order; a series the collector could not read is listed as "no data", never drawn as zero.</p>
<details><summary>step numbers</summary><table><thead><tr><th>#</th><th>step</th><th>start</th><th>end</th></tr></thead><tbody>${model.windows.map(
    (w) =>
      html`<tr><td class="num">${w.index}</td><td>${w.stepId}</td><td>${new Date(w.startMs).toISOString()}</td><td>${new Date(w.endMs).toISOString()}</td></tr>`,
  )}</tbody></table></details>
<div class="charts">${model.metricPanels.map((p) => metricPanelHtml(p, model, warn))}</div></section>`;
}

/**
 * The page, and what the chart library said about data it could not draw (`chart-data` warnings,
 * also listed on the page): the caller adds them to summary.md and the CLI's warnings.
 */
export function renderReportHtml(
  model: ReportModel,
  opts: HtmlOptions,
): { readonly page: string; readonly chartWarnings: readonly ReportWarning[] } {
  const m = model.run.manifest;
  // The session-state matrix and the added-latency table (render-session.ts) and the disruptions
  // (./disruptions.ts: no pgbench cells to draw) have sections of their own.
  const own = ownScenarios(model.run, opts.lookup);
  const disrupted = new Set(disruptionScenarios(model.run.steps));
  const scenarios = [...new Set(model.cells.map((c) => c.key.scenario))].filter(
    (s) => !own(s) && !disrupted.has(s),
  );
  const sessionHtml = sessionSectionsHtml(sessionSections(model.run, opts.lookup));
  const chartWarnings: ReportWarning[] = [];
  const warn: ChartWarn = (message) => {
    if (!chartWarnings.some((w) => w.message === message))
      chartWarnings.push({ id: 'chart-data', message, stepIds: [] });
  };
  // Charts first: what they warn about joins the warnings at the top of the page.
  const scenarioHtml = joinHtml([
    ...scenarios.map((s) => scenarioSection(model, s, opts.lookup, warn)),
    disruptionSectionsHtml(
      model.run.steps,
      (s) => ({ title: opts.lookup(s)?.title ?? null, finding: opts.lookup(s)?.finding ?? null }),
      warn,
    ),
  ]);
  const metricsHtml = metricsSection(model, warn);
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>proxylab report · ${m.suite} · ${m.runId}</title>
<style>${STYLE}</style></head>
<body>
<header><h1>proxylab report: suite ${m.suite}, run ${m.runId}</h1>
<p class="sub">${m.mode} run started ${m.startedAt}; generated ${opts.generatedAt.toISOString()} from the run directory alone.</p></header>
${decisionSection(model)}
${findingsLine(model.findings)}
${warningsSection([...model.warnings, ...chartWarnings])}
${headline(model)}
${findingsSection(model.findings)}
${settingsHtml(model.run)}
${sessionHtml}
${scenarioHtml}
${metricsHtml}
<footer>proxylab · result schema v${m.schemaVersion} · charts rendered to static SVG with Apache ECharts; this page loads nothing from the network.</footer>
</body></html>
`;
  return { page: page.value, chartWarnings };
}

export function renderHtml(model: ReportModel, opts: HtmlOptions): string {
  return renderReportHtml(model, opts).page;
}
