/**
 * A region's `PriceTable` from the AWS Price List (./queries.ts, ./client.ts): the same shape as
 * the committed us-east-1 table (lib/cost/price-table.ts), every price citing `aws-price-list-api`
 * and the table dated the day it was read. A unit line the region does not sell, or sells at more
 * than one price for one filter (an ambiguity the kit will not resolve by guessing), is a
 * PriceListError naming the line; an instance class or type the region does not sell is absent
 * from its map, and `validate`/`cost`/`deploy` name it as for any unpriced type.
 */
import type { InstancePrice, PriceTable, RdsInstancePrice, UnitPrice } from '../price-table';
import { BASELINE, DEFAULT_PRICE_REGION, PRICE_TABLES_COMMITTED } from '../price-table';
import { fetchProducts, type PriceListClient } from './client';
import { PriceListError, type PricedProduct } from './parse';
import { instanceQueries, isIoOptimized, unitLines, type UnitLine } from './queries';

const SOURCE = 'aws-price-list-api' as const;

/** The classes and types the kit knows: those of the committed table. */
export function knownTypes(): { aurora: string[]; rdsPostgres: string[]; ec2: string[] } {
  const t = PRICE_TABLES_COMMITTED[DEFAULT_PRICE_REGION];
  if (!t) throw new Error(`lib/cost/price-table.ts has no ${DEFAULT_PRICE_REGION} table`);
  return {
    aurora: Object.keys(t.auroraInstances),
    rdsPostgres: Object.keys(t.rdsPostgresInstances),
    ec2: Object.keys(t.ec2Instances),
  };
}

/** The one price of a unit line, or a PriceListError naming it. */
function unitPrice(
  name: string,
  region: string,
  line: UnitLine,
  products: readonly PricedProduct[],
): UnitPrice {
  const hits = products.filter(line.pick);
  if (hits.length === 0)
    throw new PriceListError(
      `${name}: the Price List has no ${line.query.serviceCode} product for it in ${region}`,
    );
  const wrong = hits.find((p) => !line.unit.test(p.unit));
  if (wrong)
    throw new PriceListError(
      `${name}: SKU ${wrong.sku} is priced per ${JSON.stringify(wrong.unit)}, not per ${String(line.unit)}; refused`,
    );
  const prices = [...new Set(hits.map((p) => p.usd))];
  if (prices.length > 1)
    throw new PriceListError(
      `${name}: ${hits.length} products in ${region} at different prices (${hits.map((p) => `${p.sku} $${p.usd}`).join(', ')}); refused rather than guessed`,
    );
  return { usd: (prices[0] as number) * (line.scale ?? 1), source: SOURCE };
}

/** "4 GiB" → 4; anything else null. */
function gib(text: string | undefined): number | null {
  const m = /^([\d.]+)\s*GiB$/i.exec(text?.trim() ?? '');
  const n = m ? Number(m[1]) : NaN;
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** Instance prices by `instanceType`, one price per type (several: refused). */
function instances(what: string, products: readonly PricedProduct[]): Record<string, InstancePrice> {
  const out: Record<string, InstancePrice> = {};
  for (const p of products) {
    const type = p.attributes.instanceType;
    if (!type) throw new PriceListError(`${what}: SKU ${p.sku} has no instanceType`);
    if (!/^Hrs?$/i.test(p.unit))
      throw new PriceListError(`${what} ${type}: SKU ${p.sku} is priced per ${p.unit}, not per hour`);
    const vcpus = Number(p.attributes.vcpu);
    const memoryGiB = gib(p.attributes.memory);
    if (!Number.isInteger(vcpus) || vcpus <= 0 || memoryGiB === null)
      throw new PriceListError(
        `${what} ${type}: SKU ${p.sku} has vcpu ${JSON.stringify(p.attributes.vcpu)} and memory ${JSON.stringify(p.attributes.memory)}, not a count and "N GiB"`,
      );
    const prior = out[type];
    if (prior && prior.usdPerHour !== p.usd)
      throw new PriceListError(
        `${what} ${type}: two prices ($${prior.usdPerHour}, $${p.usd}); refused rather than guessed`,
      );
    const size = type.split('.').pop() as keyof typeof BASELINE;
    const burstable = /^(db\.)?t[34]g?\./.test(type) && BASELINE[size] !== undefined;
    out[type] = {
      usdPerHour: p.usd,
      vcpus,
      memoryGiB,
      ...(burstable ? { baselineCpuPercent: BASELINE[size] } : {}),
      source: SOURCE,
    };
  }
  return out;
}

/** RDS for PostgreSQL: single-AZ and Multi-AZ of each class (a class with only one of them is left out). */
function rdsPostgres(products: readonly PricedProduct[]): Record<string, RdsInstancePrice> {
  const single = instances(
    'RDS for PostgreSQL',
    products.filter((p) => p.attributes.deploymentOption === 'Single-AZ'),
  );
  const multi = instances(
    'RDS for PostgreSQL Multi-AZ',
    products.filter((p) => p.attributes.deploymentOption === 'Multi-AZ'),
  );
  const out: Record<string, RdsInstancePrice> = {};
  for (const [type, s] of Object.entries(single)) {
    const m = multi[type];
    if (m) out[type] = { ...s, usdPerHourMultiAz: m.usdPerHour };
  }
  return out;
}

/** I/O-Optimized instances bill a multiple of Standard's: the largest ratio seen (never an underestimate). */
function computeMultiplier(
  standard: Record<string, InstancePrice>,
  io: Record<string, InstancePrice>,
): number {
  const ratios = Object.entries(io).flatMap(([t, p]) =>
    standard[t] ? [p.usdPerHour / standard[t].usdPerHour] : [],
  );
  if (ratios.length === 0)
    throw new PriceListError(
      'auroraIoOptimized.computeMultiplier: no class priced both as Aurora Standard and I/O-Optimized',
    );
  return Math.round(Math.max(...ratios) * 1000) / 1000;
}

/** The ISO date (UTC) of `now`. */
export function isoDate(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/**
 * `region`'s table from the Price List, dated `now`. Queries that share a filter set are asked once.
 * Throws PriceListError (a hostile or incomplete answer) or the client's error (no credentials…).
 */
export async function fetchPriceTable(
  region: string,
  client: PriceListClient,
  now: Date,
): Promise<PriceTable> {
  const lines = unitLines(region);
  const answers = new Map<string, Promise<PricedProduct[]>>();
  const ask = (q: UnitLine['query']): Promise<PricedProduct[]> => {
    const key = JSON.stringify(q);
    let a = answers.get(key);
    if (!a) {
      a = fetchProducts(client, q);
      answers.set(key, a);
    }
    return a;
  };
  const unit: Record<string, UnitPrice> = {};
  for (const [name, line] of Object.entries(lines))
    unit[name] = unitPrice(name, region, line, await ask(line.query));
  const q = instanceQueries(region, knownTypes());
  const auroraAll = await ask(q.aurora);
  const auroraStd = instances(
    'Aurora',
    auroraAll.filter((p) => !isIoOptimized(p)),
  );
  const auroraIo = instances('Aurora I/O-Optimized', auroraAll.filter(isIoOptimized));
  const u = (k: string): UnitPrice => unit[k] as UnitPrice;
  const committed = PRICE_TABLES_COMMITTED[DEFAULT_PRICE_REGION];
  return {
    region,
    asOf: isoDate(now),
    currency: 'USD',
    auroraInstances: auroraStd,
    auroraServerlessPerAcuHour: u('auroraServerlessPerAcuHour'),
    auroraStoragePerGbMonth: u('auroraStoragePerGbMonth'),
    auroraIoPerMillionRequests: u('auroraIoPerMillionRequests'),
    auroraIoOptimized: {
      computeMultiplier: computeMultiplier(auroraStd, auroraIo),
      storagePerGbMonth: u('auroraIoOptimized.storagePerGbMonth'),
      serverlessPerAcuHour: u('auroraIoOptimized.serverlessPerAcuHour'),
      cpuCreditPerVcpuHour: u('auroraIoOptimized.cpuCreditPerVcpuHour'),
      source: SOURCE,
    },
    rdsPostgresInstances: rdsPostgres(await ask(q.rdsPostgres)),
    rdsGp3PerGbMonth: u('rdsGp3PerGbMonth'),
    // Multi-AZ bills primary and standby storage (RDS user guide, USER_OnDemandDBInstances.html).
    rdsMultiAzStorageFactor: committed?.rdsMultiAzStorageFactor ?? 2,
    rdsCpuCreditPerVcpuHour: u('rdsCpuCreditPerVcpuHour'),
    auroraCpuCreditPerVcpuHour: u('auroraCpuCreditPerVcpuHour'),
    rdsProxyPerVcpuHour: u('rdsProxyPerVcpuHour'),
    // The minimums are AWS's rule, not a regional price (RDS Proxy pricing page; committed table).
    rdsProxyMinVcpus: committed?.rdsProxyMinVcpus ?? 2,
    rdsProxyPerAcuHour: u('rdsProxyPerAcuHour'),
    rdsProxyMinAcus: committed?.rdsProxyMinAcus ?? 8,
    ec2Instances: instances('EC2', await ask(q.ec2)),
    ebsGp3PerGbMonth: u('ebsGp3PerGbMonth'),
    interfaceEndpointPerAzHour: u('interfaceEndpointPerAzHour'),
    interfaceEndpointPerGb: u('interfaceEndpointPerGb'),
    natGatewayPerHour: u('natGatewayPerHour'),
    natGatewayPerGb: u('natGatewayPerGb'),
    publicIpv4PerHour: u('publicIpv4PerHour'),
    secretPerMonth: u('secretPerMonth'),
    nlbPerHour: u('nlbPerHour'),
  };
}
