/**
 * `--price-region` for local runs (issue 41): a local run's targets priced at a cloud region's
 * prices, so its decision table can show $ per hour and $ per million transactions at the
 * throughput measured on this machine, marked "local throughput, cloud prices".
 *
 * - `direct` adds nothing (the database is billed whichever target is measured);
 * - a self-hosted pooler target (PgBouncer, PgDoorman) is priced as its production HA pair: two
 *   hosts of `hostType` in two zones with their root volumes behind an NLB (lib/cost/production.ts),
 *   per hour; unknown (null) when a part has no price.
 *
 * Not hooked yet: `proxylab local` (scripts/commands/local.ts) would take `--price-region R`, call
 * `preparePrices(R)` (lib/cost/pricelist/command.ts) and put `localTargetPrices(...)` in the run
 * environment's `targetPrices` (lib/local/stack.ts sets it to null today).
 */
import type { TargetPrice } from '../suite/types';
import { HOURS_PER_MONTH } from './estimate';
import type { PriceTable } from './price-table';
import { haPairLines, productionTotal } from './production';

/** A local target: its name and the pooler product behind it (null for `direct`). */
export interface LocalTarget {
  readonly name: string;
  readonly product: string | null;
}

export const LOCAL_PRICES_MARK = 'local throughput, cloud prices';

/** Each local target's USD per hour at `table`'s prices, marked as local throughput at cloud prices. */
export function localTargetPrices(
  targets: readonly LocalTarget[],
  table: PriceTable,
  hostType: string,
): TargetPrice[] {
  const where = `${LOCAL_PRICES_MARK} (${table.region} as of ${table.asOf})`;
  return targets.map((t): TargetPrice => {
    if (t.product === null)
      return {
        target: t.name,
        usdPerHour: 0,
        basis: `${where}: the database itself, billed whichever target is measured`,
      };
    const lines = haPairLines(table, hostType);
    const month = productionTotal(lines);
    return {
      target: t.name,
      usdPerHour: month === null ? null : Math.round((month / HOURS_PER_MONTH) * 1e6) / 1e6,
      basis: `${where}: ${t.product} as an HA pair — ${lines.map((l) => `${l.part} ${l.note}`).join('; ')}`,
    };
  });
}
