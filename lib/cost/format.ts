/**
 * Text rendering of a CostEstimate: what `proxylab cost` prints and `proxylab deploy` shows first.
 */
import type { CostEstimate, CostLine } from './estimate';
import { HOURS_PER_DAY, HOURS_PER_MONTH } from './estimate';

/** `0.073` → `$0.0730`; a range → `$0.0600–0.9600`. */
export function formatUsdRange(lo: number, hi: number, decimals: number): string {
  const f = (x: number) => x.toFixed(decimals);
  return lo === hi ? `$${f(lo)}` : `$${f(lo)}–${f(hi)}`;
}

function quantityText(l: CostLine): string {
  const q = (x: number) => (Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(4))));
  return l.quantityMin === l.quantityMax ? q(l.quantityMin) : `${q(l.quantityMin)}–${q(l.quantityMax)}`;
}

function pad(s: string, width: number, right = false): string {
  return right ? s.padStart(width) : s.padEnd(width);
}

function totalLines(rows: ReadonlyArray<readonly [string, string, string]>): string[] {
  const w = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value, tail]) => `${label.padEnd(w)} ${value}${tail}`);
}

/** A table with a line per billable part and totals per hour, 8-hour day and 30-day month. */
export function formatCostTable(estimate: CostEstimate): string {
  const rows = estimate.lines.map((l) => [
    l.part + (l.basis === 'assumption' ? ' *' : '') + (l.unsourced ? ' †' : ''),
    `${quantityText(l)} ${l.unit}`,
    `$${l.unitPriceUsd}`,
    formatUsdRange(l.usdPerHourMin, l.usdPerHourMax, 4),
  ]);
  const header = ['part', 'quantity per hour', 'unit price', '$/hour'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => pad(c, widths[i] ?? 0, i >= 2))
      .join('  ')
      .trimEnd();
  const t = estimate.totals;
  const out: string[] = [];
  out.push(
    `Cost estimate for lab "${estimate.lab}" in ${estimate.region} (region from ${REGION_FROM[estimate.regionFrom]}; ` +
      `on-demand ${estimate.currency} prices as of ${estimate.priceTableAsOf})`,
    '',
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    ...totalLines([
      ['Total per hour:', formatUsdRange(t.perHourUsdMin, t.perHourUsdMax, 4), ''],
      [`Total per ${HOURS_PER_DAY}-hour day:`, formatUsdRange(t.perDayUsdMin, t.perDayUsdMax, 2), ''],
      [
        `Total per 30-day month (${HOURS_PER_MONTH} h):`,
        formatUsdRange(t.perMonthUsdMin, t.perMonthUsdMax, 2),
        '  if left running',
      ],
    ]),
    '',
    // The footnote explains `*`: only when some line carries it (an RDS for PostgreSQL lab has none).
    ...(estimate.lines.some((l) => l.basis === 'assumption') ? ['* usage assumed, see below.'] : []),
    // `†`: a unit price no AWS source gives (PriceSource.unsourced), shown rather than left out.
    ...(estimate.lines.some((l) => l.unsourced)
      ? ["† unit price not from an AWS source (a third party's figure; see its source below)."]
      : []),
    'Assumptions:',
    ...estimate.assumptions.map((a) => `  - ${a}`),
    'Not included:',
    ...estimate.notIncluded.map((a) => `  - ${a}`),
    'Sources:',
    ...estimate.sources.map(
      (s) =>
        `  - [${s.id}]${s.unsourced !== undefined ? ` † UNSOURCED: ${s.unsourced}.` : ''} ${s.title}${s.url ? ` <${s.url}>` : ''} (read ${s.readOn})`,
    ),
  );
  return out.join('\n') + '\n';
}

const REGION_FROM: Record<CostEstimate['regionFrom'], string> = {
  flag: '--region',
  deploy: 'the deploy environment (AWS_REGION / profile)',
  lab: "the lab's region",
  default: 'the default; pass --region to price another',
};
