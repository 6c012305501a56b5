/**
 * The committed table against the Price List's answer for the same region, line by line: what
 * `npx tsx scripts/cost-table.ts --prices` prints to regenerate lib/cost/price-table.ts from the same
 * code path the commands price with (lib/cost/pricelist/table.ts).
 */
import type { PriceTable } from '../price-table';

/** Every priced leaf of a table, as `path → USD`. */
function leaves(t: PriceTable): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (prefix: string, v: unknown): void => {
    if (v === null || typeof v !== 'object') return;
    const rec = v as Record<string, unknown>;
    for (const [k, x] of Object.entries(rec)) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (
        (k === 'usd' || k === 'usdPerHour' || k === 'usdPerHourMultiAz' || k === 'computeMultiplier') &&
        typeof x === 'number'
      )
        out.set(path, x);
      else walk(path, x);
    }
  };
  walk('', t);
  return out;
}

/** One line per price that differs, is new or is missing: `path: committed X → Price List Y`. */
export function comparePriceTables(committed: PriceTable, fetched: PriceTable): string[] {
  const a = leaves(committed);
  const b = leaves(fetched);
  const out: string[] = [];
  for (const [path, x] of a) {
    const y = b.get(path);
    if (y === undefined) out.push(`${path}: committed ${x} → not in the Price List answer`);
    else if (Math.abs(x - y) > 1e-9) out.push(`${path}: committed ${x} → Price List ${y}`);
  }
  for (const [path, y] of b) if (!a.has(path)) out.push(`${path}: not committed → Price List ${y}`);
  return out;
}
