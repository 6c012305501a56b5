/**
 * The report's sections for what a pooler breaks and what it costs per statement (issue 24): the
 * session-state matrix (feature × target, coloured by outcome, the expectation, its reason and
 * sources on hover) and the added-latency table, in report.html, summary.md, `compare` and the
 * closing lines of `proxylab local`. Their own module, so the pages only place them.
 */
import type { LoadedRun } from './load';
import { fmtVerdict } from './format';
import { html, joinHtml, SafeHtml } from './html';
import {
  compareLatency,
  fmtAdded,
  fmtLatencySpread,
  latencyTable,
  type LatencyCompareRow,
  type LatencyTable,
} from './latency';
import { mdTable, mdText } from './md';
import {
  sessionCellHover,
  sessionCellText,
  sessionMatrix,
  type SessionCell,
  type SessionMatrix,
} from './session-matrix';
import type { ScenarioLookup } from './shape';
import { describeSessionExpectation } from '../suite/session-state';

/** Styles of these sections (report.html's one <style> includes them). */
export const SESSION_CSS = `
table.session-matrix td{min-width:120px;text-align:center}table.session-matrix th.feature{text-align:left;font-weight:600}
.so-works{background:#e6f4ea;color:#137333}.so-lost{background:#fef7e0;color:#7a4f01}.so-leaks{background:#fce8e6;color:#a50e0e;font-weight:600}
.so-errors{background:#f3e8fd;color:#6a1b9a;font-weight:600}.so-not-available,.so-not-measured{background:#f3f3f3;color:#666}
.pin{display:inline-block;margin-left:4px;padding:0 5px;border:1px solid currentColor;border-radius:8px;font-size:11px}
.legend span{display:inline-block;padding:0 7px;margin-right:6px;border-radius:8px}
`;

export interface SessionSections {
  readonly matrix: SessionMatrix | null;
  readonly latency: LatencyTable;
}

/** Which scenarios are of an experiment: the plan's record of each step, else the catalog's. */
function scenariosOf(
  run: LoadedRun,
  lookup: ScenarioLookup,
  experiment: string,
): (scenario: string) => boolean {
  const planned = new Map((run.plan?.steps ?? []).map((s) => [s.scenario, s.experiment as string] as const));
  return (scenario) => (planned.get(scenario) ?? lookup(scenario)?.experiment ?? null) === experiment;
}

export function sessionSections(run: LoadedRun, lookup: ScenarioLookup): SessionSections {
  return { matrix: sessionMatrix(run), latency: latencyTable(run, scenariosOf(run, lookup, 'LATENCY')) };
}

/** Scenarios these sections draw themselves (the generic per-scenario sections leave them out). */
export function ownScenarios(run: LoadedRun, lookup: ScenarioLookup): (scenario: string) => boolean {
  const session = scenariosOf(run, lookup, 'SESSION');
  return (s) => session(s);
}

// ---------------------------------------------------------------------------------------------
// HTML

function verdictSpan(held: boolean | null): SafeHtml {
  const cls = held === true ? 'verdict-held' : held === false ? 'verdict-broke' : '';
  return html`<span class="${cls}">${fmtVerdict(held)}</span>`;
}

function matrixCellHtml(c: SessionCell | null): SafeHtml {
  if (c === null) return html`<td class="so-not-measured">–</td>`;
  const pin =
    c.pins === null
      ? ''
      : html`<span class="pin" title="${c.pins.detail}">${c.pins.pinned === true ? 'pins' : c.pins.pinned === false ? 'no pin' : 'pin ?'}</span>`;
  const text =
    c.state === 'errors' && c.sqlstate !== null ? `errors ${c.sqlstate}` : c.state.replace('-', ' ');
  return html`<td class="so-${c.state}" title="${sessionCellHover(c)}" data-feature="${c.feature}" data-target="${c.target}" data-outcome="${c.state}" data-held="${String(c.held)}">${verdictSpan(c.held)} ${text}${pin}</td>`;
}

function matrixHtml(m: SessionMatrix): SafeHtml {
  return html`<section id="session-state"><h2>Session state: what each target keeps, loses, leaks or refuses</h2>
<p class="sub">Two clients on one pool (narrowed so they share a server connection where the target allows): A sets the state, B looks for it and sets its own, A looks for its own again. <strong>works</strong>: A keeps it, B never sees it · <strong>lost</strong>: A's later transaction does not find it · <strong>leaks</strong>: B sees A's state (or A's action reaches B's) · <strong>errors</strong>: a statement fails (SQLSTATE) · <strong>pins</strong> (RDS Proxy): the proxy kept the client on its server connection (CloudWatch ${'DatabaseConnectionsCurrentlySessionPinned'}). ✓/✗: the expectation of the sources held or broke. Hover a cell for the expectation, why, the sources and what happened.</p>
<p class="legend"><span class="so-works">works</span><span class="so-lost">lost</span><span class="so-leaks">leaks</span><span class="so-errors">errors</span><span class="so-not-available">not available / not measured</span> — ${m.totals.held} held, ${m.totals.broke} broke, ${m.totals.informational} not judged</p>
<table class="session-matrix" id="session-matrix"><thead><tr><th>feature</th>${m.columns.map(
    (c) =>
      html`<th data-target="${c.target}">${c.target}${c.what === c.target ? '' : html`<br><span class="sub">${c.what}</span>`}</th>`,
  )}</tr></thead><tbody>${m.rows.map(
    (r) =>
      html`<tr data-feature="${r.feature}"><th class="feature" title="${r.what}">${r.label}</th>${r.cells.map(matrixCellHtml)}</tr>`,
  )}</tbody></table>
<details><summary>sources (${m.sources.length})</summary><ol>${m.sources.map(
    (s) => html`<li data-source="${s.id}"><a href="${s.url}">${s.title}</a></li>`,
  )}</ol></details></section>`;
}

function latencyHtml(t: LatencyTable): SafeHtml {
  if (t.rows.length === 0) return html``;
  return html`<section id="added-latency"><h2>Added latency per statement vs direct</h2>
<p class="sub">SELECT 1 from one client; each target's p50 and p99 minus direct's, repetition by repetition (a repetition runs direct and every target back to back); median and range of those differences. From pgbench's per-transaction logs.</p>
${t.zones && t.zones.length > 0 ? html`<p class="sub" id="zones">Zones: ${t.zones.map((z) => `${z.component} ${z.zone ?? '?'}`).join(' · ')}${t.zoneNote ? html` — <strong>${t.zoneNote}</strong>` : ''}</p>` : ''}
<table class="latency" id="latency-table"><thead><tr><th>mode</th><th>protocol</th><th>target</th><th>direct p50</th><th>p50</th><th>added p50</th><th>direct p99</th><th>p99</th><th>added p99</th></tr></thead><tbody>${t.rows.map(
    (r) =>
      html`<tr data-target="${r.target}" data-protocol="${r.protocol}" data-scenario="${r.scenario}"${r.troubled ? html` class="m-errors"` : ''}><td>${r.mode}</td><td>${r.protocol}</td><td>${r.target}<br><span class="sub">${r.what}</span></td><td class="num">${fmtLatencySpread(r.directP50Ms)}</td><td class="num">${fmtLatencySpread(r.p50Ms)}</td><td class="num"><strong>${fmtAdded(r.addedP50Ms)}</strong></td><td class="num">${fmtLatencySpread(r.directP99Ms)}</td><td class="num">${fmtLatencySpread(r.p99Ms)}</td><td class="num"><strong>${fmtAdded(r.addedP99Ms)}</strong></td></tr>`,
  )}</tbody></table></section>`;
}

/** Both sections for report.html (empty when the run has neither). */
export function sessionSectionsHtml(s: SessionSections): SafeHtml {
  return joinHtml([s.matrix ? matrixHtml(s.matrix) : html``, latencyHtml(s.latency)]);
}

// ---------------------------------------------------------------------------------------------
// Markdown (summary.md, compare.md, the closing lines of proxylab local)

export function sessionMatrixMd(m: SessionMatrix): string {
  const out = [
    '## Session state (feature × target)',
    '',
    `works: A keeps its state, B never sees it · lost: A's later transaction does not find it · leaks: B sees A's state · errors: a statement fails (SQLSTATE) · pins: RDS Proxy kept the client on its server connection. ✓/✗: the sources' expectation held / broke (${m.totals.held} held, ${m.totals.broke} broke, ${m.totals.informational} not judged).`,
    '',
    mdTable(
      ['feature', ...m.columns.map((c) => (c.what === c.target ? c.target : `${c.target} (${c.what})`))],
      m.rows.map((r) => [
        r.label,
        ...r.cells.map((c) => (c === null ? '–' : `${fmtVerdict(c.held)} ${sessionCellText(c)}`)),
      ]),
    ),
  ];
  const broke = m.rows
    .flatMap((r) => r.cells)
    .filter((c): c is SessionCell => c !== null && c.held === false);
  if (broke.length > 0) {
    out.push('', '**Broke:**', '');
    for (const c of broke)
      out.push(
        `- ${mdText(c.feature)} on ${mdText(c.target)}: expected ${mdText(describeSessionExpectation(c.expected))} (${mdText(c.expected.why)}); observed ${mdText(c.observed)}`,
      );
  }
  out.push('', `Sources: ${m.sources.map((s) => `[${s.title}](${s.url})`).join(' · ')}`);
  return out.join('\n');
}

export function latencyMd(t: LatencyTable): string {
  if (t.rows.length === 0) return '';
  const out = [
    '## Added latency per statement vs direct',
    '',
    "SELECT 1, one client; each target's p50/p99 minus direct's, repetition by repetition: median (range, n).",
    '',
  ];
  if (t.zones && t.zones.length > 0)
    out.push(
      `Zones: ${mdText(t.zones.map((z) => `${z.component} ${z.zone ?? '?'}`).join(' · '))}${t.zoneNote ? ` — ${mdText(t.zoneNote)}` : ''}`,
      '',
    );
  out.push(
    mdTable(
      ['mode', 'protocol', 'target', 'direct p50', 'p50', 'added p50', 'direct p99', 'p99', 'added p99'],
      t.rows.map((r) => [
        r.mode,
        r.protocol,
        `${r.target}${r.troubled ? ' (some repetitions failed)' : ''}`,
        fmtLatencySpread(r.directP50Ms),
        fmtLatencySpread(r.p50Ms),
        fmtAdded(r.addedP50Ms),
        fmtLatencySpread(r.directP99Ms),
        fmtLatencySpread(r.p99Ms),
        fmtAdded(r.addedP99Ms),
      ]),
    ),
  );
  return out.join('\n');
}

/** Both sections for summary.md and the closing lines of a local run ('' when the run has neither). */
export function sessionSectionsMd(s: SessionSections): string {
  return [s.matrix ? sessionMatrixMd(s.matrix) : '', latencyMd(s.latency)]
    .filter((x) => x !== '')
    .join('\n\n');
}

// ---------------------------------------------------------------------------------------------
// compare

export interface SessionComparison {
  /** Cells in both runs: feature, target, outcome A → B. */
  readonly cells: ReadonlyArray<{
    readonly feature: string;
    readonly target: string;
    readonly a: string;
    readonly b: string;
    readonly changed: boolean;
  }>;
  readonly latency: readonly LatencyCompareRow[];
}

export function compareSessions(a: SessionSections, b: SessionSections): SessionComparison {
  const cells: Array<SessionComparison['cells'][number]> = [];
  if (a.matrix && b.matrix) {
    const inB = new Map(
      b.matrix.rows.flatMap((r) =>
        r.cells
          .filter((c): c is SessionCell => c !== null)
          .map((c) => [`${c.feature} ${c.target}`, c] as const),
      ),
    );
    for (const r of a.matrix.rows)
      for (const ca of r.cells) {
        if (ca === null) continue;
        const cb = inB.get(`${ca.feature} ${ca.target}`);
        if (!cb) continue;
        const ta = sessionCellText(ca);
        const tb = sessionCellText(cb);
        cells.push({ feature: r.label, target: ca.target, a: ta, b: tb, changed: ta !== tb });
      }
  }
  return { cells, latency: compareLatency(a.latency, b.latency) };
}

function latencyChange(r: LatencyCompareRow): string {
  if (r.p50Change === null) return '?';
  const mark =
    r.beyondSpread === true ? ' ⚠ beyond spread' : r.beyondSpread === false ? ' within spread' : '';
  return `${fmtAdded({ best: r.p50Change, median: r.p50Change, worst: r.p50Change, n: 1 })}${mark}`;
}

export function sessionComparisonMd(c: SessionComparison): string {
  const out: string[] = [];
  if (c.cells.length > 0) {
    const changed = c.cells.filter((x) => x.changed);
    out.push(
      '## Session state A → B',
      '',
      `${c.cells.length} cells (feature × target) in both runs, ${changed.length} changed${changed.length > 0 ? ':' : '.'}`,
      '',
    );
    if (changed.length > 0)
      out.push(
        mdTable(
          ['feature', 'target', 'A', 'B'],
          changed.map((x) => [x.feature, x.target, x.a, x.b]),
        ),
        '',
      );
  }
  if (c.latency.length > 0)
    out.push(
      '## Added latency A → B',
      '',
      mdTable(
        [
          'scenario · protocol · target',
          'added p50 A',
          'added p50 B',
          'change',
          'added p99 A',
          'added p99 B',
        ],
        c.latency.map((r) => [
          r.key,
          fmtAdded(r.a.addedP50Ms),
          fmtAdded(r.b.addedP50Ms),
          latencyChange(r),
          fmtAdded(r.a.addedP99Ms),
          fmtAdded(r.b.addedP99Ms),
        ]),
      ),
      '',
    );
  return out.join('\n');
}

export function sessionComparisonHtml(c: SessionComparison): SafeHtml {
  return joinHtml([
    c.cells.length === 0
      ? html``
      : html`<section id="session-state-compare"><h2>Session state A → B</h2><p>${c.cells.length} cells (feature × target) in both runs, ${c.cells.filter((x) => x.changed).length} changed; unchanged cells under the table.</p><table><thead><tr><th>feature</th><th>target</th><th>A</th><th>B</th></tr></thead><tbody>${c.cells
          .filter((x) => x.changed)
          .map(
            (x) =>
              html`<tr class="beyond-spread" data-feature="${x.feature}" data-target="${x.target}"><td>${x.feature}</td><td>${x.target}</td><td>${x.a}</td><td>${x.b}</td></tr>`,
          )}</tbody></table><details><summary>unchanged (${c.cells.filter((x) => !x.changed).length})</summary><ul>${c.cells
          .filter((x) => !x.changed)
          .map((x) => html`<li>${x.feature} · ${x.target}: ${x.a}</li>`)}</ul></details></section>`,
    c.latency.length === 0
      ? html``
      : html`<section id="added-latency-compare"><h2>Added latency A → B</h2><table><thead><tr><th>scenario · protocol · target</th><th>added p50 A</th><th>added p50 B</th><th>change</th><th>added p99 A</th><th>added p99 B</th></tr></thead><tbody>${c.latency.map(
          (r) =>
            html`<tr${r.beyondSpread === true ? html` class="beyond-spread"` : ''}><td>${r.key}</td><td class="num">${fmtAdded(r.a.addedP50Ms)}</td><td class="num">${fmtAdded(r.b.addedP50Ms)}</td><td class="num">${latencyChange(r)}</td><td class="num">${fmtAdded(r.a.addedP99Ms)}</td><td class="num">${fmtAdded(r.b.addedP99Ms)}</td></tr>`,
        )}</tbody></table></section>`,
  ]);
}
