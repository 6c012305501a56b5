/**
 * The one rule every command prices by: `pricesFor(region, {cache, client})` gives a region's prices
 * with their date, or the one-line reason there are none. In order:
 *  1. the cache for today (`~/.cache/proxylab/prices/<region>/<date>.json`, ./cache.ts);
 *  2. the AWS Price List (./table.ts), written to the cache when read;
 *  3. the newest older cache for the region (its date is shown);
 *  4. us-east-1 only: the committed table (lib/cost/price-table.ts), dated as it is.
 * Nothing else: no region is priced from another's prices. A hostile Price List answer is never
 * priced from; it is named in the reason (or beside the fallback that was used).
 * `validate`, `plan`, `cost`, `deploy`, `run` and `local --price-region` all call it
 * (scripts/commands/*, via `preparePrices`), so they accept the same regions and refuse the others
 * in the same words; each passes the table it got down to what prices (`EstimateOptions.table`).
 */
import { REGION_PATTERN } from '../../config/schema';
import { formatValue } from '../../config/validate';
import { PRICE_TABLES_COMMITTED, type PriceTable } from '../price-table';
import { cachedDates, readCachedTable, writeCachedTable } from './cache';
import type { PriceListClient } from './client';
import { isoDate, fetchPriceTable } from './table';

/** Where the prices came from. */
export type PricesFrom = 'cache' | 'price-list' | 'older-cache' | 'committed';

export type Prices =
  | {
      readonly ok: true;
      readonly region: string;
      readonly table: PriceTable;
      /** The date of the prices (ISO). */
      readonly asOf: string;
      readonly from: PricesFrom;
      /** Why a fresher source was not used, when it was not (one line), else null. */
      readonly note: string | null;
    }
  | { readonly ok: false; readonly region: string; readonly reason: string };

export interface PricesForOptions {
  /** The cache root (./cache.ts `defaultPriceCacheDir()`), or null for none. */
  readonly cache: string | null;
  /** The Price List client, or null to stay offline. */
  readonly client: PriceListClient | null;
  /** @default new Date() */
  readonly now?: Date;
}

/** Commercial AWS regions: the pattern without GovCloud, ISO and China (their prices are not USD list prices). */
export function isCommercialRegion(region: string): boolean {
  return REGION_PATTERN.test(region) && !/-(gov|iso[a-z]*)-/.test(region) && !region.startsWith('cn-');
}

/** Why the Price List gave nothing, in a few words (the SDK's error names the missing credentials). */
function failureText(err: unknown): string {
  const e = err as { name?: string; message?: string };
  const msg = (e.message ?? String(err)).split('\n')[0] ?? '';
  if (e.name === 'CredentialsProviderError' || /credential/i.test(msg)) return `no AWS credentials (${msg})`;
  return `${e.name && e.name !== 'Error' ? `${e.name}: ` : ''}${msg}`;
}

/** A region's prices with their date, or the one reason there are none (never throws for a missing price). */
export async function pricesFor(region: string, opts: PricesForOptions): Promise<Prices> {
  if (!isCommercialRegion(region))
    return {
      ok: false,
      region,
      reason: `region ${formatValue(region)} is not a commercial AWS region (e.g. eu-west-1); GovCloud, ISO and China regions are not priced`,
    };
  const today = isoDate(opts.now ?? new Date());
  const tried: string[] = [];
  if (opts.cache !== null) {
    try {
      const hit = readCachedTable(opts.cache, region, today);
      if (hit) return { ok: true, region, table: hit, asOf: hit.asOf, from: 'cache', note: null };
    } catch (e) {
      tried.push((e as Error).message);
    }
  }
  if (opts.client !== null) {
    try {
      const table = await fetchPriceTable(region, opts.client, opts.now ?? new Date());
      let note: string | null = null;
      if (opts.cache !== null) {
        try {
          writeCachedTable(opts.cache, table);
        } catch (e) {
          note = `not cached: ${(e as Error).message}`;
        }
      }
      return { ok: true, region, table, asOf: table.asOf, from: 'price-list', note };
    } catch (e) {
      tried.push(`the AWS Price List could not be read: ${failureText(e)}`);
    }
  } else tried.push('the AWS Price List was not asked (offline)');
  const older = opts.cache !== null ? olderCache(opts.cache, region, today, tried) : null;
  if (older)
    return { ok: true, region, table: older, asOf: older.asOf, from: 'older-cache', note: tried.join('; ') };
  if (opts.cache !== null) tried.push(`no cached prices under ${opts.cache}/${region}`);
  const committed = PRICE_TABLES_COMMITTED[region];
  if (committed)
    return {
      ok: true,
      region,
      table: committed,
      asOf: committed.asOf,
      from: 'committed',
      note: tried.join('; '),
    };
  return {
    ok: false,
    region,
    reason:
      `no prices for region ${region}: ${tried.join('; ')}; the committed table covers only ` +
      `${Object.keys(PRICE_TABLES_COMMITTED).join(', ')} (give AWS credentials allowed pricing:GetProducts, ` +
      'as `proxylab iam-policy` prints, and run again to read and cache them)',
  };
}

/** The newest readable cache of `region` before `today`, or null (an unreadable one is named in `tried`). */
function olderCache(root: string, region: string, today: string, tried: string[]): PriceTable | null {
  for (const date of cachedDates(root, region).filter((d) => d < today)) {
    try {
      const t = readCachedTable(root, region, date);
      if (t) return t;
    } catch (e) {
      tried.push((e as Error).message);
    }
  }
  return null;
}

/** "eu-west-1 prices as of 2026-11-28 (AWS Price List, cached)": where a price is shown, its date. */
export function pricesLine(p: Extract<Prices, { ok: true }>): string {
  const from: Record<PricesFrom, string> = {
    cache: 'AWS Price List, cached today',
    'price-list': 'AWS Price List, read now',
    'older-cache': 'AWS Price List, an older cache',
    committed: 'the committed table lib/cost/price-table.ts',
  };
  return `${p.region} prices as of ${p.asOf} (${from[p.from]})${p.note ? `; ${p.note}` : ''}`;
}
