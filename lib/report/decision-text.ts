/**
 * The decision table's cells as text, shared by summary.md, report.html and compare: one wording, so
 * the three never disagree. Unknown is "?" or said in words, never 0.
 */
import type { DecisionRow, DecisionTable, Pinning } from './decision';
import { cellWords } from './decision';
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
  "behind an NLB, its host type the lab's or the smallest whose vCPUs cover the measured pooler CPU), and per M tx at the measured tps. " +
  '? = unknown. Rules: docs/report.md.';

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

/** What a row that did not run the workload cleanly would need, in words. */
function needs(r: DecisionRow): string {
  const text = r.errorText ?? '';
  if (r.notMeasured !== null) return `not measured (${r.notMeasured})`;
  if ((r.hungAttempts ?? 0) > 0 && /Lock\/advisory/.test(text) && r.multiplexes === true)
    return `not suitable: session advisory locks leak through a transaction pool (${text})`;
  if ((r.hungAttempts ?? 0) > 0) return `hung (${text})`;
  if (/^refused|; refused/.test(text)) return `refused connections (${text})`;
  return r.errorRate === null ? `errors unknown${text ? ` (${text})` : ''}` : `errors (${text})`;
}

/**
 * One answer line above a scenario's table (issue 40, item 4, the part that needs no session matrix):
 * the targets that ran the workload without errors, hangs or refusals; the cheapest of them per
 * million transactions, or "unpriced"; and for each other target what stopped it.
 */
export function decisionAnswer(table: DecisionTable): string {
  const clean = table.rows.filter(
    (r) => r.notMeasured === null && r.errorRate === 0 && r.errorText === null && (r.hungAttempts ?? 0) === 0,
  );
  const others = table.rows.filter((r) => !clean.includes(r));
  const priced = clean.filter((r) => r.usdPerMillionTransactions !== null);
  const cheapest = priced.sort(
    (a, b) => (a.usdPerMillionTransactions as number) - (b.usdPerMillionTransactions as number),
  )[0];
  const parts = [
    clean.length > 0
      ? `Ran without errors or hangs: ${clean.map((r) => r.label).join(', ')}; cheapest per million transactions: ${
          cheapest ? `${cheapest.label} (${fmtUsd(cheapest.usdPerMillionTransactions)})` : 'unpriced'
        }.`
      : 'No target ran this workload without errors or hangs.',
    ...others.map((r) => `${r.label}: ${needs(r)}.`),
  ];
  return `Answer: ${parts.join(' ')}`;
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
    ];
  const hasDirect = table.rows.some((x) => x.notMeasured === null && x.isDirect);
  return [
    r.label,
    fmtSpread(r.tps, 1) + (table.comparableFigures ? '' : ' †'),
    latencyText(r),
    addedText(r, hasDirect, table.comparableFigures),
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
  ];
}

/** The lines under a table: where the rows were compared, what was left out, what † means. */
export function decisionNotes(table: DecisionTable): string[] {
  const varying = { script: new Set(table.shared.map((k) => k.script)).size > 1 };
  const list = (keys: DecisionTable['shared']): string => keys.map((k) => cellWords(k, varying)).join(', ');
  const notes: string[] = [];
  notes.push(
    table.comparableFigures
      ? `Compared at ${list(table.comparable)}.`
      : table.shared.length === 0
        ? 'No cell was measured by every target: nothing here compares them.'
        : `† Not comparable: no cell every target ran has a tps for each of them (${list(table.shared)}); each row's figures are over its own cells with a tps.`,
  );
  const skipped = table.shared.filter(
    (k) => !table.comparable.some((c) => JSON.stringify(c) === JSON.stringify(k)),
  );
  if (table.comparableFigures && skipped.length > 0)
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
