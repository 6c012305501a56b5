/**
 * What a command calls to price a region: `commandPrices(region)` is `pricesFor` with the
 * operator's cache root and a Price List client when AWS credentials are configured (env keys, a
 * profile, web identity, or ~/.aws files) — never the SDK's instance-metadata probe on a laptop
 * without any. `PROXYLAB_PRICES=offline` keeps every command off the Price List (cache and the
 * committed table only). Loaded lazily by the commands (scripts/commands/lazy.ts `pricesModule`).
 */
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { PricingClient } from '@aws-sdk/client-pricing';
import { awsPriceListClient } from './aws-client';
import { defaultPriceCacheDir } from './cache';
import type { PriceListClient } from './client';
import { noteUnpricedRegion } from '../price-check';
import { PRICE_TABLES_COMMITTED } from '../price-table';
import { pricesFor, type Prices } from './prices-for';
export { pricesLine } from './prices-for';

export const PRICES_ENV = 'PROXYLAB_PRICES';

/** A regular file with something in it (`/dev/null` as the credentials file configures nothing). */
function nonEmptyFile(file: string): boolean {
  try {
    const st = statSync(file);
    return st.isFile() && st.size > 0;
  } catch {
    return false;
  }
}

/**
 * Why no Price List client is made for `region`, or null when one is. A region with a committed
 * table (us-east-1) is priced from it (or today's cache) unless `PROXYLAB_PRICES=live`: that table is
 * the Price List's answer as `scripts/cost-table.ts --prices` regenerates it, and a command that has
 * an answer does not call AWS for it.
 */
export function noClientReason(
  region: string,
  env: NodeJS.ProcessEnv = process.env,
  home: string = homedir(),
): string | null {
  if (env[PRICES_ENV] === 'offline') return `${PRICES_ENV}=offline`;
  if (PRICE_TABLES_COMMITTED[region] && env[PRICES_ENV] !== 'live')
    return `${region} has the committed table (${PRICES_ENV}=live reads the Price List instead)`;
  const configured =
    Boolean(env.AWS_ACCESS_KEY_ID) ||
    Boolean(env.AWS_PROFILE) ||
    Boolean(env.AWS_WEB_IDENTITY_TOKEN_FILE) ||
    Boolean(env.AWS_CONTAINER_CREDENTIALS_FULL_URI || env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI) ||
    nonEmptyFile(env.AWS_SHARED_CREDENTIALS_FILE ?? join(home, '.aws', 'credentials')) ||
    nonEmptyFile(env.AWS_CONFIG_FILE ?? join(home, '.aws', 'config'));
  return configured
    ? null
    : 'no AWS credentials configured (no AWS_ACCESS_KEY_ID, AWS_PROFILE or ~/.aws files)';
}

export interface CommandPricesOptions {
  readonly profile?: string;
  /** A client to use instead of a new PricingClient (tests: a mocked one). */
  readonly sdk?: PricingClient;
  readonly env?: NodeJS.ProcessEnv;
  readonly now?: Date;
}

/** The region's prices for a command, as every command gets them. */
export async function commandPrices(region: string, opts: CommandPricesOptions = {}): Promise<Prices> {
  const env = opts.env ?? process.env;
  const why = opts.sdk ? null : noClientReason(region, env);
  const client: PriceListClient | null =
    why === null ? awsPriceListClient(region, opts.sdk, opts.profile) : null;
  const prices = await pricesFor(region, {
    cache: defaultPriceCacheDir(env),
    client,
    ...(opts.now ? { now: opts.now } : {}),
  });
  if (why === null) return prices;
  // The reason says why the Price List was not asked, not just that it was not.
  const said = (text: string): string =>
    text.replace('the AWS Price List was not asked (offline)', `the AWS Price List was not asked: ${why}`);
  if (!prices.ok) return { ...prices, reason: said(prices.reason) };
  // The committed table of its own region is no fallback: nothing to say beside it.
  if (prices.from === 'committed' && PRICE_TABLES_COMMITTED[region]) return { ...prices, note: null };
  return prices.note === null ? prices : { ...prices, note: said(prices.note) };
}

/**
 * `commandPrices`, and a region without prices noted with its reason, so that the checks given no
 * table for it (`validate`'s `unpricedProblems`, `estimateCost`, the deploy guard) refuse it in
 * `pricesFor`'s words. Returns the prices either way: the caller passes `prices.table` down.
 */
export async function preparePrices(region: string, opts: CommandPricesOptions = {}): Promise<Prices> {
  const prices = await commandPrices(region, opts);
  if (!prices.ok) noteUnpricedRegion(region, prices.reason);
  return prices;
}
