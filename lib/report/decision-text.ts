/**
 * The decision table's cells as text, shared by summary.md, report.html and compare: one wording, so
 * the three never disagree. Unknown is "?" or said in words, never 0.
 */
import type { DecisionRow, DecisionTable, Pinning } from './decision';
import { cellWords } from './decision';
import { breaks, outcomeWords, SESSION_SUITE_HINT, type RowSessionFeature } from './decision-session';
import { uniqueInOrder } from './cells';
import { fmtNumber, fmtPercent, fmtSpread, fmtUsd } from './format';

export const DECISION_HEADER = [
  'target',
  'tps (median; best / worst of n)',
  'p50 / p95 / p99 ms',
  'added over direct p50 / p95 ms',
  'errors',
  'DB connections peak (before)',
  'pinning',
  'pooler CPU',
  '$/h',
  '$ per M tx',
  'production $/month ($ per M tx)',
  'session features (outcome, on)',
] as const;

export const DECISION_LEGEND =
  'One table per scenario (workloads are never averaged together), one row per target. Figures are the mean, over the cells every ' +
  'target measured with a tps ("compared at"), of each cell\'s median over repetitions (best / worst: the repetitions\' spread, n the fewest ' +
  'repetitions); "added over direct" is the target\'s latency minus direct\'s in the same cells. Errors: failed and hung client-attempts ÷ ' +
  'all attempts (transactions + those) over every cell all targets ran, naming the cells that hung (stopped by the harness, with what the ' +
  'database showed) or were refused. DB connections: client backends seen on the database during the steps (before: held when a step ' +
  "began — another pool's leftovers show here). Pinning: RDS Proxy session pinning, counted only over CloudWatch periods that lie wholly " +
  'inside a step. $/h: what the target adds to the bill; $ per M tx = $/h ÷ (tps × 3600) × 10⁶. Production: what choosing the target ' +
  'costs per 30-day month in production on top of the database (RDS Proxy on the writer and readers; a self-hosted pooler as an HA pair ' +
  "behind an NLB, its host type the lab's or the smallest whose vCPUs cover the measured pooler CPU, or with --app-hosts N on each of N " +
  "application hosts, the row's note saying which), and per M tx at the measured tps. " +
  'Session features: each session feature ' +
  "the scenario's script uses (and -M prepared), with the target's outcome from the session-state matrix — works / lost / leaks / " +
  'errors, · pins where the target pins — and the product and version it is for: "measured" in this run\'s session-state steps, else ' +
  '"expected, not measured" from what the product entry predicts for that kind, version and settings (`proxylab local --suite session` ' +
  "or `proxylab run --suite session` measures it). † = figures over the row's own cells (not compared). ? = unknown. Rules: docs/report.md.";

export function pinningText(p: Pinning): string {
  switch (p.kind) {
    case 'not-applicable':
      return 'n/a';
    case 'not-attributable':
      return `not attributable: ${p.reason}`;
    case 'measured':
      return `max ${fmtNumber(p.max, 0)} (whole periods in ${p.steps} of ${p.of} steps)`;
  }
}

export function errorsText(r: DecisionRow): string {
  // A hang is never a small percentage: how many attempts it left unfinished, first.
  if ((r.hungAttempts ?? 0) > 0) {
    const of = r.attempts == null ? '?' : fmtNumber(r.attempts, 0);
    return `HUNG: ${fmtNumber(r.hungAttempts ?? 0, 0)} of ${of} client-attempts unfinished — ${r.errorText ?? ''}`;
  }
  if (r.errorRate === null) return r.errorText ? `? — ${r.errorText}` : '?';
  if (r.errorRate === 0 && r.errorText === null) return 'none';
  return `${fmtPercent(r.errorRate)}${r.errorText ? ` — ${r.errorText}` : ''}`;
}

export function connectionsText(r: DecisionRow): string {
  if (!r.connectionsRecorded) return 'not recorded';
  return `${r.connectionsPeak === null ? '?' : fmtNumber(r.connectionsPeak, 0)} (${r.connectionsBefore === null ? '?' : fmtNumber(r.connectionsBefore, 0)})`;
}

function latencyText(r: DecisionRow): string {
  return [r.latencyP50Ms, r.latencyP95Ms, r.latencyP99Ms].map((v) => fmtNumber(v)).join(' / ');
}

function addedText(r: DecisionRow, hasDirect: boolean, comparable: boolean): string {
  if (r.addedP50Ms === null && r.addedP95Ms === null) {
    if (!hasDirect) return 'no direct baseline';
    if (!comparable) return 'not comparable';
    return r.isDirect ? 'baseline' : '?';
  }
  const signed = (v: number | null): string => (v === null ? '?' : `${v >= 0 ? '+' : ''}${fmtNumber(v)}`);
  return `${signed(r.addedP50Ms)} / ${signed(r.addedP95Ms)}`;
}

function cpuText(r: DecisionRow): string {
  if (r.poolerCpuPercent !== null) return `${fmtNumber(r.poolerCpuPercent, 0)} % of one core`;
  return r.poolerCpuNote ?? '?';
}

function priceText(r: DecisionRow): string {
  return r.usdPerHour === null ? r.priceNote : fmtUsd(r.usdPerHour);
}

/** `$123.16 ($0.0475)`: the production bill per month and per million transactions; – when not priced. */
function productionText(r: DecisionRow): string {
  const p = r.production;
  if (p === null || p === undefined) return '–';
  if (p.usdPerMonth === null) return '?';
  return `${fmtUsd(p.usdPerMonth)} (${p.usdPerMillionTransactions === null ? '?' : fmtUsd(p.usdPerMillionTransactions)})`;
}

/** `leaks`, `is lost`, `fails`, `is lost or leaks`: what a feature does through the target. */
function outcomeVerb(f: RowSessionFeature): string {
  const verb = { works: 'works', lost: 'is lost', leaks: 'leaks', errors: 'fails' } as const;
  return f.outcomes.map((o) => verb[o]).join(' or ');
}

/** Where a feature's outcome comes from, in words. */
function sourceWords(f: RowSessionFeature): string {
  return f.source === 'measured'
    ? `${f.version}, measured in step ${f.stepId ?? '?'}`
    : `${f.version}; expected, not measured: ${SESSION_SUITE_HINT} measures it`;
}

/** A row's session breakage, for the answer: what would fix it, or that the target does not suit the script. */
function sessionNeeds(r: DecisionRow): string[] {
  const broken = (r.sessionFeatures ?? []).filter(breaks);
  const remedies = broken.filter((f) => f.remedy !== null);
  const unsuitable = broken.filter((f) => f.remedy === null);
  return [
    ...remedies.map((f) => `${f.remedy as string} (${f.use} ${outcomeVerb(f)}; ${sourceWords(f)})`),
    ...(unsuitable.length > 0
      ? [
          `not suitable: ${unsuitable.map((f) => `${f.use} ${outcomeVerb(f)} through ${f.through}`).join('; ')} (${uniqueSources(unsuitable)})`,
        ]
      : []),
  ];
}

function uniqueSources(fs: readonly RowSessionFeature[]): string {
  return [...new Set(fs.map(sourceWords))].join('; ');
}

/** What ran badly by pgbench's and the harness's account (hung, refused, errors), in words; null: clean. */
function runTrouble(r: DecisionRow): string | null {
  const text = r.errorText ?? '';
  if ((r.hungAttempts ?? 0) > 0) return `hung (${text})`;
  if (/^refused|; refused/.test(text)) return `refused connections (${text})`;
  if (r.errorRate === null) return `errors unknown${text ? ` (${text})` : ''}`;
  if (r.errorRate > 0 || r.errorText !== null) return `errors (${text})`;
  return null;
}

/** What a row that did not run the workload cleanly would need, in words. */
function needs(r: DecisionRow): string {
  if (r.notMeasured !== null) return `not measured (${r.notMeasured})`;
  return [...sessionNeeds(r), ...[runTrouble(r)].filter((t): t is string => t !== null)].join(' — ');
}

/** Ran without errors, hangs, refusals or session breakage (a measured or expected lost / leaks / errors). */
function clean(r: DecisionRow): boolean {
  return r.notMeasured === null && runTrouble(r) === null && !(r.sessionFeatures ?? []).some(breaks);
}

/** `20 and 60 clients` — the counts compared at (the script too when the table varies it). */
function countsWords(table: DecisionTable): string {
  const varying = { script: new Set(table.shared.map((k) => k.script)).size > 1 };
  const list = table.comparable.map((k) => cellWords(k, varying));
  return list.length <= 1 ? (list[0] ?? '') : `${list.slice(0, -1).join(', ')} and ${list.at(-1) ?? ''}`;
}

/** Where the rows were compared, for the answer: all at some counts, some of them, or none. */
function comparedWords(table: DecisionTable): string {
  const measured = table.rows.filter((r) => r.notMeasured === null);
  if (table.comparableFigures) return `compared at ${countsWords(table)}`;
  const compared = measured.filter((r) => r.compared);
  if (compared.length === 0) return 'no two targets had a tps at the same client count: not compared';
  const out = measured.filter((r) => !r.compared).map((r) => r.label);
  return `compared at ${countsWords(table)}, the counts every target that could run it ran with a tps (${compared.map((r) => r.label).join(', ')}; not ${out.join(', ')})`;
}

/** The team's counts a local stand-in cannot serve directly, when there are such counts. */
function standInWords(table: DecisionTable): string | null {
  const max = table.localMaxConnections;
  if (max === null) return null;
  const over = [...new Set(table.shared.filter((k) => k.clients > max).map((k) => k.clients))];
  return `${over.map((c) => fmtNumber(c, 0)).join(', ')} clients exceed what the local stand-in serves directly (max_connections ${fmtNumber(max, 0)}).`;
}

/** The load generator saturated in some row: more runners (or a bigger one) for that many clients. */
function capacityWords(table: DecisionTable): string | null {
  const hot = table.rows.filter((r) => r.saturated !== null);
  if (hot.length === 0) return null;
  const top = hot.reduce((a, b) => ((b.saturated?.clients ?? 0) > (a.saturated?.clients ?? 0) ? b : a));
  const clients = fmtNumber(top.saturated?.clients ?? null, 0);
  const runners = table.runnerCount;
  const more =
    runners === null
      ? `more load-generator capacity for ${clients} clients`
      : `more than ${runners} runner${runners === 1 ? '' : 's'}${table.cpus !== null ? ` of ${table.cpus} cores` : ''} for ${clients} clients`;
  return `The load generator saturated (${top.saturated?.reason ?? '?'}; ${hot.map((r) => r.label).join(', ')}): their tps measured the client; ${more}.`;
}

/**
 * One answer line above a scenario's table (issue 40, item 4): the targets that ran the workload
 * without errors, hangs, refusals or session breakage; the cheapest of those compared per million
 * transactions at the observed rate and p99, or "unpriced"; for each other target what it would need
 * (a release or setting its product entry names, or "not suitable" with the session feature and where
 * its outcome comes from, and what the run showed); where the rows were compared; and, when they
 * apply, the counts a local stand-in cannot serve and the load generator's saturation.
 */
export function decisionAnswer(table: DecisionTable): string {
  const ok = table.rows.filter(clean);
  const others = table.rows.filter((r) => !clean(r));
  const priced = ok.filter((r) => r.compared && r.usdPerMillionTransactions !== null);
  const cheapest = [...priced].sort(
    (a, b) => (a.usdPerMillionTransactions as number) - (b.usdPerMillionTransactions as number),
  )[0];
  const p99 = (r: DecisionRow): string =>
    r.latencyP99Ms === null ? 'p99 ?' : `p99 ${fmtNumber(r.latencyP99Ms)} ms`;
  const parts = [
    standInWords(table),
    ok.length > 0
      ? `Ran without errors, hangs or session breakage: ${ok.map((r) => r.label).join(', ')}; cheapest per million transactions: ${
          cheapest
            ? `${cheapest.label} (${fmtUsd(cheapest.usdPerMillionTransactions)} at ${fmtNumber(cheapest.tps?.median ?? null, 1)} tps, ${p99(cheapest)})`
            : 'unpriced'
        }; ${comparedWords(table)}.`
      : `No target ran this workload without errors, hangs or session breakage; ${comparedWords(table)}.`,
    ...others.map((r) => `${r.label}: ${needs(r)}.`),
    capacityWords(table),
  ];
  return `Answer: ${parts.filter((p): p is string => p !== null).join(' ')}`;
}

/** One feature in the table's cell: `session advisory lock (line 1): leaks — PgBouncer 1.25.2, expected`. */
function featureText(f: RowSessionFeature): string {
  const from = f.source === 'measured' ? 'measured' : `expected, not measured (${SESSION_SUITE_HINT})`;
  return `${f.use}: ${outcomeWords(f)} — ${f.version}, ${from}`;
}

/** The session features cell: every feature the script uses with its outcome on this target. */
export function sessionFeaturesText(r: DecisionRow): string {
  if (r.sessionFeatures === null) return 'script not recorded (no plan.json)';
  if (r.sessionFeatures.length === 0) return 'none used';
  return r.sessionFeatures.map(featureText).join('; ');
}

/** The row's cells, in DECISION_HEADER order. */
export function decisionCells(table: DecisionTable, r: DecisionRow): string[] {
  if (r.notMeasured !== null)
    return [
      r.label,
      `not measured: ${r.notMeasured}`,
      '',
      '',
      '',
      '',
      '',
      '',
      priceText(r),
      '',
      productionText(r),
      sessionFeaturesText(r),
    ];
  const hasDirect = table.rows.some((x) => x.notMeasured === null && x.isDirect);
  return [
    r.label,
    fmtSpread(r.tps, 1) + (r.compared ? '' : ' †'),
    latencyText(r),
    addedText(r, hasDirect, r.compared),
    errorsText(r),
    connectionsText(r),
    pinningText(r.pinning),
    cpuText(r),
    priceText(r),
    r.usdPerMillionTransactions === null
      ? r.usdPerHour === null
        ? '–'
        : '?'
      : fmtUsd(r.usdPerMillionTransactions),
    productionText(r),
    sessionFeaturesText(r),
  ];
}

/** What the decision section says when it has no table: nothing measured yet, or only probe steps. */
export function noDecisionText(measuredSteps: number): string {
  return measuredSteps === 0
    ? 'No step was measured yet.'
    : 'No pgbench step: this run measured only probes (disruptions, the session-state matrix), in their own sections below.';
}

/** The lines under a table: where the rows were compared, what was left out, what † means. */
export function decisionNotes(table: DecisionTable): string[] {
  const varying = { script: new Set(table.shared.map((k) => k.script)).size > 1 };
  const list = (keys: DecisionTable['shared']): string => keys.map((k) => cellWords(k, varying)).join(', ');
  const notes: string[] = [];
  const measured = table.rows.filter((r) => r.notMeasured === null);
  const compared = measured.filter((r) => r.compared).map((r) => r.label);
  const apart = measured.filter((r) => !r.compared).map((r) => r.label);
  notes.push(
    table.comparableFigures
      ? `Compared at ${list(table.comparable)}.`
      : table.shared.length === 0
        ? 'No cell was measured by every target: nothing here compares them.'
        : compared.length > 0
          ? `Compared at ${list(table.comparable)} among ${compared.join(', ')}: the cells each of them ran with a tps. † ${apart.join(', ')}: not compared (no tps in all of those cells); figures over its own shared cells with a tps.`
          : `† Not comparable: no cell every target ran has a tps for each of them (${list(table.shared)}); each row's figures are over its own cells with a tps.`,
  );
  const skipped = table.shared.filter(
    (k) => !table.comparable.some((c) => JSON.stringify(c) === JSON.stringify(k)),
  );
  if (table.comparable.length > 0 && skipped.length > 0)
    notes.push(`Errors only (some target had no tps there): ${list(skipped)}.`);
  if (table.leftOut.length > 0)
    notes.push(`Left out (not run on every target): ${table.leftOut.join('; ')}.`);
  if (table.rows.length === 1) notes.push('One target only: nothing to compare it with in this scenario.');
  notes.push(...productionNotes(table));
  return notes;
}

/** Where the production figures come from: the prices and their date, then each row's option in words. */
function productionNotes(table: DecisionTable): string[] {
  const priced = table.rows.filter((r) => r.production !== null && r.production !== undefined);
  return uniqueInOrder(priced.map((r) => r.production?.pricedAs ?? '')).map((pricedAs) => {
    const rows = priced.filter((r) => r.production?.pricedAs === pricedAs);
    const hourly = rows.some((r) => r.production?.hourlyIsProduction)
      ? ' $/h and $ per M tx are the production option per hour.'
      : '';
    return `Production at ${pricedAs}, per 30-day month on top of the database:${hourly} ${rows
      .map((r) => `${r.label} — ${r.production?.basis ?? ''}`)
      .join('; ')}.`;
  });
}
