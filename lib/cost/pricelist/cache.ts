/**
 * The disk cache of Price List tables: one file per region and date,
 * `~/.cache/proxylab/prices/<region>/<YYYY-MM-DD>.json` (`PROXYLAB_PRICE_CACHE` moves the root).
 * Written atomically (lib/core/atomic-write.ts), read through lib/core/read.ts (no link followed,
 * bounded size), and checked on the way in: a cached file that is not a table of positive USD
 * prices for its region is refused by name, never priced from.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../../core/atomic-write';
import { listDirIn, readJsonIn } from '../../core/read';
import type { PriceTable } from '../price-table';
import { PriceListError } from './parse';

export const PRICE_CACHE_ENV = 'PROXYLAB_PRICE_CACHE';

/** The cache root: `$PROXYLAB_PRICE_CACHE`, else `~/.cache/proxylab/prices`. */
export function defaultPriceCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env[PRICE_CACHE_ENV] || join(homedir(), '.cache', 'proxylab', 'prices');
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const usd = z.number().finite().positive();
const Unit = z.object({ usd, source: z.literal('aws-price-list-api') });
const Instance = z.object({
  usdPerHour: usd,
  vcpus: z.number().int().positive(),
  memoryGiB: usd,
  baselineCpuPercent: z.number().positive().max(100).optional(),
  source: z.literal('aws-price-list-api'),
});
const Table = z.object({
  region: z.string(),
  asOf: z.string().regex(ISO_DATE),
  currency: z.literal('USD'),
  auroraInstances: z.record(z.string(), Instance),
  auroraServerlessPerAcuHour: Unit,
  auroraStoragePerGbMonth: Unit,
  auroraIoPerMillionRequests: Unit,
  auroraIoOptimized: z.object({
    computeMultiplier: usd,
    storagePerGbMonth: Unit,
    serverlessPerAcuHour: Unit,
    cpuCreditPerVcpuHour: Unit,
    source: z.literal('aws-price-list-api'),
  }),
  rdsPostgresInstances: z.record(z.string(), Instance.extend({ usdPerHourMultiAz: usd })),
  rdsGp3PerGbMonth: Unit,
  rdsMultiAzStorageFactor: usd,
  rdsCpuCreditPerVcpuHour: Unit,
  auroraCpuCreditPerVcpuHour: Unit,
  rdsProxyPerVcpuHour: Unit,
  rdsProxyMinVcpus: usd,
  rdsProxyPerAcuHour: Unit,
  rdsProxyMinAcus: usd,
  ec2Instances: z.record(z.string(), Instance),
  ebsGp3PerGbMonth: Unit,
  interfaceEndpointPerAzHour: Unit,
  interfaceEndpointPerGb: Unit,
  natGatewayPerHour: Unit,
  natGatewayPerGb: Unit,
  publicIpv4PerHour: Unit,
  secretPerMonth: Unit,
  nlbPerHour: Unit.optional(),
});

/** The cache file of `region` on `date`, relative to the root. */
function relFile(region: string, date: string): string {
  return join(region, `${date}.json`);
}

/** Writes `table` under `root` (its region and asOf name the file). */
export function writeCachedTable(root: string, table: PriceTable): string {
  const file = join(root, relFile(table.region, table.asOf));
  writeFileAtomic(file, JSON.stringify(table, null, 2) + '\n');
  return file;
}

/** The table cached for `region` on `date`, null when there is none; PriceListError when the file is not one. */
export function readCachedTable(root: string, region: string, date: string): PriceTable | null {
  const rel = relFile(region, date);
  const json = readJsonIn(root, rel, 'lab');
  if (json === null) return null;
  const parsed = Table.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PriceListError(
      `cached prices ${join(root, rel)}: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'not a price table'} (delete the file to read the Price List again)`,
    );
  }
  if (parsed.data.region !== region || parsed.data.asOf !== date)
    throw new PriceListError(
      `cached prices ${join(root, rel)}: says region ${parsed.data.region} as of ${parsed.data.asOf}, not ${region} as of ${date} (delete the file)`,
    );
  return parsed.data;
}

/** The dates cached for `region`, newest first. */
export function cachedDates(root: string, region: string): string[] {
  const entries = listDirIn(root, region) ?? [];
  return entries
    .filter((e) => e.type === 'file' && /^\d{4}-\d{2}-\d{2}\.json$/.test(e.name))
    .map((e) => e.name.slice(0, 10))
    .sort()
    .reverse();
}
