/**
 * summary.md: for pull requests and chat. Headline, findings, one table per scenario, warnings.
 * Table cells are escaped for Markdown (pipes, newlines) and HTML (`<`, `>`, `&`), since most
 * Markdown renderers pass inline HTML through.
 */
import { disruptionMarkdown, disruptionScenarios } from './disruptions';
import { cellText, columnHeading } from './pooler-matrix';
import { describeRunDatabase } from '../suite/database';
import { fmtConnect, fmtDuration, fmtNumber, fmtPrediction, fmtSpread } from './format';
import {
  poolersText,
  type FindingRow,
  type FindingState,
  type ReportModel,
  type ScenarioLookup,
} from './shape';
import {
  DECISION_HEADER,
  DECISION_LEGEND,
  decisionAnswer,
  decisionCells,
  decisionNotes,
  noDecisionText,
} from './decision-text';
import type { DecisionTable } from './decision';
import { ownScenarios, sessionSections, sessionSectionsMd } from './render-session';
import { settingsMarkdown } from './settings';
import { labHeadline } from './lab-compare';

export { mdTable, mdText } from './md';
import { mdTable, mdText } from './md';

/** ✓/✗ worded so a predicted failure that happened never reads as "good". */
export const STATE_MD: Readonly<Record<FindingState, string>> = {
  reproduced: '✓ as the experiment predicts',
  'held-so-far': '… as predicted so far (partial run)',
  contradicted: '✗ contrary to it',
  informational: '– nothing predicted (informational)',
};

/** The decision tables: what summary.md and compare open with. */
export function decisionMarkdown(tables: readonly DecisionTable[], headingLevel = 3): string[] {
  const out: string[] = [];
  const h = '#'.repeat(headingLevel);
  for (const t of tables) {
    out.push(`${h} ${mdText(t.scenario)} — ${mdText(t.workload)}`);
    out.push('');
    out.push(`**${mdText(decisionAnswer(t))}**`, '');
    out.push(
      mdTable(
        DECISION_HEADER,
        t.rows.map((r) => decisionCells(t, r)),
      ),
    );
    out.push('');
    for (const note of decisionNotes(t)) out.push(`${mdText(note)}  `);
    out.push('');
  }
  return out;
}

/** `E2 (quick-e2)`: published claim (with its source), measured, verdict. */
function findingLines(f: FindingRow): string[] {
  return [
    f.experiment ?? '–',
    f.scenario,
    `${f.finding ?? '–'}${f.claims.length > 0 ? ` Reported: ${f.claims.join('; ')}.` : ''}${f.source ? ` Source: ${f.source}` : ' Source: not cited in the catalog.'}`,
    f.measured.length > 0
      ? f.measured.join('; ')
      : `${f.held + f.broke + f.informational} verdicts: ${f.held} as predicted, ${f.broke} contrary, ${f.informational} not judged`,
    STATE_MD[f.state],
  ];
}

export function renderMarkdown(model: ReportModel, lookup: ScenarioLookup): string {
  const out: string[] = headlineLines(model);
  out.push('## Decision table');
  out.push('');
  out.push(mdText(DECISION_LEGEND));
  out.push('');
  if (model.decisions.length === 0) out.push(noDecisionText(model.run.steps.length), '');
  out.push(...decisionMarkdown(model.decisions));
  const byState = (['reproduced', 'held-so-far', 'contradicted'] as const)
    .map((state) => ({ state, rows: model.findings.filter((f) => f.state === state) }))
    .filter((x) => x.rows.length > 0)
    .map(
      (x) =>
        `${STATE_MD[x.state]}: ${x.rows.map((f) => `${f.experiment ?? '–'} (${mdText(f.scenario)})`).join(', ')}`,
    );
  if (byState.length > 0) {
    out.push(`**Findings**: ${byState.join(' · ')}`);
    out.push('');
  }
  if (model.warnings.length > 0) {
    out.push('## Warnings');
    out.push('');
    for (const w of model.warnings) out.push(`- ⚠ ${mdText(w.message)}`);
    out.push('');
  }
  out.push('## Findings: published, then measured');
  out.push('');
  out.push(
    'The published column is what the source reported, not a measurement of this run; the measured column is this run. ' +
      '✓ means the run behaved as the experiment predicts — for a predicted refusal or error, that it failed; ✗ that it did not.',
  );
  out.push('');
  out.push(
    mdTable(
      ['experiment', 'scenario', 'published (claim and source)', 'measured in this run', 'verdict'],
      model.findings.map(findingLines),
    ),
  );
  out.push('');
  // The session-state matrix and the added-latency table (render-session.ts), the disruptions
  // (disruptions.ts), then the other scenarios.
  out.push(...settingsMarkdown(model.run));
  const sessionMd = sessionSectionsMd(sessionSections(model.run, lookup));
  if (sessionMd !== '') out.push(sessionMd, '');
  const disrupted = new Set(disruptionScenarios(model.run.steps));
  out.push(...disruptionMarkdown(model.run.steps, (s) => lookup(s)?.title ?? null));
  const own = ownScenarios(model.run, lookup);
  for (const scenario of [...new Set(model.cells.map((c) => c.key.scenario))].filter(
    (s) => !own(s) && !disrupted.has(s),
  ))
    out.push(...scenarioLines(model, scenario, lookup));
  out.push(`Full report: report.html (charts, error matrix, metrics over time).`);
  out.push('');
  return out.join('\n');
}

/** The title line and the run's one-paragraph description (mode, database, status, versions). */
function headlineLines(model: ReportModel): string[] {
  const m = model.run.manifest;
  const env = m.environment;
  return [
    `# proxylab ${mdText(m.suite)} — run ${mdText(m.runId)}`,
    '',
    `${m.mode === 'local' ? 'Local stand-in (PostgreSQL and its poolers on one machine)' : 'Cloud lab (AWS)'}, ` +
      `database ${mdText(describeRunDatabase(env.database) ?? 'unknown')}, ` +
      `status **${m.status}** (${m.stepsCompleted}/${m.stepIds.length} steps), started ${mdText(m.startedAt)}, ${fmtDuration(m.startedAt, m.endedAt)}. ` +
      mdText(
        [
          env.serverVersion !== null ? `PostgreSQL ${env.serverVersion}` : null,
          poolersText(model.run),
          env.maxConnections !== null ? `max_connections ${env.maxConnections}` : null,
          env.cpus !== null ? `${env.cpus} CPUs` : null,
        ]
          .filter((x): x is string => x !== null)
          .join(', '),
      ) +
      (model.run.lab ? ` ${mdText(`${labHeadline(model.run.lab)}.`)}` : ''),
    '',
  ];
}

/** One throughput scenario's section: its table, pooler matrices, scenario verdicts and churn lines. */
function scenarioLines(model: ReportModel, scenario: string, lookup: ScenarioLookup): string[] {
  const out: string[] = [];
  const info = lookup(scenario);
  out.push(`## ${mdText(scenario)}${info?.title ? ` — ${mdText(info.title)}` : ''}`);
  out.push('');
  const cells = model.cells.filter((c) => c.key.scenario === scenario);
  out.push(
    mdTable(
      ['target', 'clients', 'protocol', 'connect', 'tps', 'p95 ms', 'errors', 'verdict'],
      cells.map((c) => [
        c.key.target.name +
          (c.key.poolPercent !== null && cells.some((o) => o.key.poolPercent !== c.key.poolPercent)
            ? ` @ ${c.key.poolPercent}%`
            : '') +
          psSuffix(c.key.preparedStatements),
        String(c.key.clients),
        c.key.protocol,
        fmtConnect(c.key.connect),
        fmtSpread(c.tps, 1),
        fmtSpread(c.latencyP95Ms),
        c.errors.length > 0
          ? c.errors.map((e) => `${e.class} ×${e.count}`).join(', ')
          : c.abortedClients > 0
            ? `${c.abortedClients} aborted`
            : c.statuses.some((s) => s !== 'completed')
              ? c.statuses.filter((s) => s !== 'completed').join(', ')
              : '–',
        fmtPrediction(c.verdictHeld, c.steps[0]?.verdict.expected ?? '?'),
      ]),
    ),
  );
  for (const pm of model.poolerMatrices.filter((x) => x.scenario === scenario)) {
    out.push('');
    out.push(
      `**Pooler matrix** (${mdText(pm.variant)}): tps · p95 · the pooler's CPU (busiest process, % of one core: a PgBouncer process tops out at 100 %, PgDoorman's at 100 × its worker threads) · saturation`,
    );
    out.push('');
    out.push(
      mdTable(
        ['clients', ...pm.columns.map(columnHeading)],
        pm.rows.map((r) => [String(r.clients), ...r.cells.map(cellText)]),
      ),
    );
  }
  const comparisons = (model.run.manifest.scenarioVerdicts ?? []).filter((v) => v.scenario === scenario);
  if (comparisons.length > 0) {
    out.push('');
    for (const v of comparisons)
      out.push(`- ${mdText(fmtPrediction(v.held, v.expected))} — measured: ${mdText(v.observed)}`);
  }
  const churn = model.churn.filter((r) => r.scenario === scenario && r.churnCost !== null);
  if (churn.length > 0) {
    out.push('');
    for (const r of churn) {
      out.push(
        `- churn: ${mdText(r.label)} at ${r.clients} clients runs ${fmtNumber(r.churnCost, 1)} × slower with -C`,
      );
    }
  }
  out.push('');
  return out;
}

/** ` (max_prepared_statements 0 | on)` for cells of a prepared-statement sweep. */
function psSuffix(mode: 'off' | 'on' | null): string {
  return mode === null ? '' : ` (max_prepared_statements ${mode === 'on' ? 'on' : '0'})`;
}
