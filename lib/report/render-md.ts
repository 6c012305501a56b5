/**
 * summary.md: for pull requests and chat. Headline, findings, one table per scenario, warnings.
 * Table cells are escaped for Markdown (pipes, newlines) and HTML (`<`, `>`, `&`), since most
 * Markdown renderers pass inline HTML through.
 */
import { cellText, columnHeading } from './pooler-matrix';
import { describeRunDatabase } from '../suite/database';
import { fmtConnect, fmtDuration, fmtNumber, fmtSpread, fmtVerdict } from './format';
import { poolersText, type FindingState, type ReportModel, type ScenarioLookup } from './shape';

export function mdText(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/`/g, '\\`')
    .replace(/\r?\n/g, ' ');
}

export function mdTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]): string => `| ${cells.map(mdText).join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}

const STATE_MD: Readonly<Record<FindingState, string>> = {
  reproduced: '✓ reproduced',
  'held-so-far': '… held so far (partial run)',
  contradicted: '✗ contradicted',
  informational: '– informational',
};

export function renderMarkdown(model: ReportModel, lookup: ScenarioLookup): string {
  const m = model.run.manifest;
  const env = m.environment;
  const out: string[] = [];
  out.push(`# proxylab ${mdText(m.suite)} — run ${mdText(m.runId)}`);
  out.push('');
  out.push(
    `${m.mode === 'local' ? 'Local stand-in (PostgreSQL and its poolers on one machine)' : 'Cloud lab (AWS)'}, ` +
      `database ${mdText(describeRunDatabase(env.database) ?? 'unknown')}, ` +
      `status **${m.status}** (${m.stepsCompleted}/${m.stepIds.length} steps), started ${m.startedAt}, ${fmtDuration(m.startedAt, m.endedAt)}. ` +
      mdText(
        [
          env.serverVersion !== null ? `PostgreSQL ${env.serverVersion}` : null,
          poolersText(model.run),
          env.maxConnections !== null ? `max_connections ${env.maxConnections}` : null,
          env.cpus !== null ? `${env.cpus} CPUs` : null,
        ]
          .filter((x): x is string => x !== null)
          .join(', '),
      ),
  );
  out.push('');
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
  out.push('## Published findings');
  out.push('');
  out.push(
    mdTable(
      ['experiment', 'scenario', 'finding', 'this run', 'held / broke / info'],
      model.findings.map((f) => [
        f.experiment ?? '–',
        f.scenario,
        f.finding ?? '–',
        STATE_MD[f.state],
        `${f.held} / ${f.broke} / ${f.informational}`,
      ]),
    ),
  );
  out.push('');
  for (const scenario of [...new Set(model.cells.map((c) => c.key.scenario))]) {
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
          `${fmtVerdict(c.verdictHeld)} ${c.steps[0]?.verdict.expected ?? ''}`,
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
    const comparisons = (m.scenarioVerdicts ?? []).filter((v) => v.scenario === scenario);
    if (comparisons.length > 0) {
      out.push('');
      for (const v of comparisons)
        out.push(`- ${fmtVerdict(v.held)} ${mdText(v.expected)} — ${mdText(v.observed)}`);
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
  }
  out.push(`Full report: report.html (charts, error matrix, metrics over time).`);
  out.push('');
  return out.join('\n');
}

/** ` (max_prepared_statements 0 | on)` for cells of a prepared-statement sweep. */
function psSuffix(mode: 'off' | 'on' | null): string {
  return mode === null ? '' : ` (max_prepared_statements ${mode === 'on' ? 'on' : '0'})`;
}
