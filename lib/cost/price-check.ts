/**
 * What `proxylab cost` and `proxylab deploy` will refuse, found while validating: a region without
 * prices (`pricesFor`, lib/cost/pricelist/prices-for.ts: the Price List, its cache, or us-east-1's
 * committed table), an Aurora class,
 * runner type or dedicated pooler host type with no price in the region's table (an unknown instance type is an error, not a
 * guess), a pooler of a single-threaded product (its driver's capability; PgBouncer) with more
 * processes than its host has vCPUs, and a host with less memory than its pooler's build from
 * source needs (its driver's `host.buildMemory`; PgDoorman) — vCPUs and memory known only
 * from the price table. `proxylab validate` reports these beside the schema's problems, so a lab
 * that validates is a lab that deploys. `cdk synth` does not apply it (CDK users may price a type
 * themselves).
 */
import { AURORA_POSTGRES_INSTANCE_CLASSES } from '../config/instance-classes';
import { DEFAULTS } from '../config/defaults';
import { RDS_POSTGRES_INSTANCE_CLASSES } from '../config/rds-postgres';
import { EC2_INSTANCE_TYPE_PATTERN, REGION_PATTERN } from '../config/schema';
import type { LabProblem } from '../config/types';
import { asRecord, formatValue, suggestKey } from '../config/validate';
import type { PoolerDriver } from '../poolers/driver';
import { POOLER_DRIVERS } from '../poolers/registry';
import { DEFAULT_PRICE_REGION, PRICE_TABLES_COMMITTED, type PriceTable } from './price-table';

/**
 * Problems for instance types the price table lacks, read from a parsed (not necessarily valid)
 * lab file. Values the schema already rejects are left to the schema's own message. `resolved`: the
 * prices the command resolved for the lab's region (`preparePrices`); without it (or for another
 * region), the committed table of the region.
 */
export function unpricedProblems(raw: unknown, resolved?: PriceTable | null): LabProblem[] {
  const lab = asRecord(raw);
  if (!lab) return [];
  const tableOf = (region: string): PriceTable | undefined =>
    resolved && resolved.region === region ? resolved : PRICE_TABLES_COMMITTED[region];
  // A region without prices (the command resolved none: `preparePrices`): `cost` cannot price the
  // lab and `deploy` refuses to deploy into it, so the lab is refused here, naming the region and
  // why (its instance types cannot be checked against prices that do not exist).
  if (typeof lab.region === 'string' && REGION_PATTERN.test(lab.region) && !tableOf(lab.region)) {
    return [unpricedRegionProblem(lab.region)];
  }
  const region = typeof lab.region === 'string' && tableOf(lab.region) ? lab.region : DEFAULT_PRICE_REGION;
  const table = tableOf(region);
  // Only reachable if lib/cost/price-table.ts drops its default region: a programming error.
  if (!table) throw new Error(`lib/cost/price-table.ts has no prices for ${region}`);
  const out: LabProblem[] = [];
  const check = (
    path: string,
    value: unknown,
    known: Readonly<Record<string, unknown>>,
    shapeOk: (v: string) => boolean,
  ): void => {
    if (typeof value !== 'string' || !shapeOk(value) || known[value]) return;
    const priced = Object.keys(known);
    const hint = suggestKey(value, priced);
    out.push({
      path,
      value,
      message:
        `has no ${region} price (prices as of ${table.asOf}), so \`proxylab cost\` and \`proxylab deploy\` refuse it; ` +
        `priced: ${priced.join(', ')}; got ${formatValue(value)}${hint ? `; did you mean "${hint}"?` : ''} ` +
        '(a type the region does not sell, or one the kit does not ask the Price List for: the types of lib/cost/price-table.ts)',
    });
  };
  const aurora = asRecord(lab.aurora);
  if (aurora)
    check('aurora.instanceClass', aurora.instanceClass, table.auroraInstances, (v) =>
      AURORA_POSTGRES_INSTANCE_CLASSES.includes(v),
    );
  const postgres = asRecord(lab.postgres);
  if (postgres)
    check(
      'postgres.instanceClass',
      postgres.instanceClass ?? DEFAULTS.postgres.instanceClass,
      table.rdsPostgresInstances,
      (v) => RDS_POSTGRES_INSTANCE_CLASSES.includes(v),
    );
  const runners = asRecord(lab.runners);
  if (runners)
    check('runners.instanceType', runners.instanceType, table.ec2Instances, (v) =>
      EC2_INSTANCE_TYPE_PATTERN.test(v),
    );
  const poolers = Array.isArray(lab.poolers) ? (lab.poolers as unknown[]) : [];
  poolers.forEach((p: unknown, i: number) => {
    const pooler = asRecord(p);
    if (!pooler) return;
    const dedicated = pooler.placement === 'dedicated';
    if (!dedicated && pooler.placement !== 'on-runners') return;
    // On the runners, the pooler shares the runner's cores with pgbench (by design).
    const type = dedicated ? pooler.instanceType : (runners?.instanceType ?? DEFAULTS.runners.instanceType);
    if (dedicated)
      check(`poolers[${i}].instanceType`, type, table.ec2Instances, (v) => EC2_INSTANCE_TYPE_PATTERN.test(v));
    // A single-threaded product's process saturates one core: more processes than vCPUs only adds
    // contention. The capability is the driver's, for the lab's version (or the default release).
    if (typeof type !== 'string') return;
    const driver =
      typeof pooler.kind === 'string'
        ? (POOLER_DRIVERS as Record<string, PoolerDriver>)[pooler.kind]
        : undefined;
    if (driver === undefined) return; // the schema names an unknown kind
    const version = typeof pooler.version === 'string' ? pooler.version : driver.defaultVersion;
    const small = buildMemoryProblem(driver, version, type, dedicated, i, table);
    if (small) out.push(small);
    if (!driver.capabilities(version).singleThreaded) return;
    const vcpus = table.ec2Instances[type]?.vcpus;
    const processes = pooler.processes;
    if (
      vcpus !== undefined &&
      typeof processes === 'number' &&
      Number.isInteger(processes) &&
      processes > vcpus
    ) {
      out.push({
        path: `poolers[${i}].processes`,
        value: processes,
        message: `must be at most the vCPUs of ${dedicated ? type : `the runners' ${type}`} (${vcpus}): each ${driver.displayName} process uses one core; got ${formatValue(processes)}`,
      });
    }
  });
  return out;
}

/**
 * A host too small to build the pooler it installs (the driver's `host.buildMemory`, by the
 * type's memory in the price table): a dedicated host at `poolers[i].instanceType`, the runners
 * (every runner builds an `on-runners` pooler) at `runners.instanceType`. Null when the product needs
 * no minimum or the type has no price (that is its own problem).
 */
function buildMemoryProblem(
  driver: PoolerDriver,
  version: string,
  type: string,
  dedicated: boolean,
  i: number,
  table: PriceTable,
): LabProblem | null {
  const build = driver.host.buildMemory;
  const memory = table.ec2Instances[type]?.memoryGiB;
  if (build === undefined || memory === undefined || memory >= build.minGiB) return null;
  const min = build.minGiB;
  const family = type.split('.')[0] ?? '';
  const bigger = Object.entries(table.ec2Instances)
    .filter(([t, p]) => t.startsWith(`${family}.`) && p.memoryGiB >= min)
    .sort(([, a], [, b]) => a.memoryGiB - b.memoryGiB)[0]?.[0];
  const where = dedicated
    ? `poolers[${i}] (its pooler host)`
    : `each runner (poolers[${i}] runs on the runners)`;
  return {
    path: dedicated ? `poolers[${i}].instanceType` : 'runners.instanceType',
    value: type,
    message:
      `must have at least ${min} GiB of memory: ${driver.displayName} ${version} is built from source on ${where}, ` +
      `${build.what}, and ${type} has ${memory} GiB` +
      `${bigger ? `; ${bigger} (${table.ec2Instances[bigger]?.memoryGiB ?? '?'} GiB) is the smallest ${family} with enough` : ''}; got ${formatValue(type)}`,
  };
}

/** The problem `validate` reports for a lab whose `region` has no prices (the same words `cost` and `deploy` use). */
export function unpricedRegionProblem(region: string): LabProblem {
  return { path: 'region', value: region, message: unpricedRegionMessage(region) };
}

/** Why each region a command could not price has no prices (`pricesFor`'s reason), by region. */
const unpricedReasons = new Map<string, string>();

/** Records `pricesFor`'s reason for `region` (lib/cost/pricelist/command.ts `preparePrices`). */
export function noteUnpricedRegion(region: string, reason: string): void {
  unpricedReasons.set(region, reason);
}

/**
 * Why a region cannot be priced, and what to do: one sentence shared by `validate`, `plan`, `cost`,
 * `deploy` and `run`, so they refuse in the same words (`pricesFor`'s reason in it).
 */
export function unpricedRegionMessage(region: string): string {
  const reason =
    unpricedReasons.get(region) ??
    `no prices were read for it (the AWS Price List, its cache, or for ${Object.keys(PRICE_TABLES_COMMITTED).join(', ')} the committed table)`;
  return (
    `cannot be priced, so \`proxylab cost\` cannot price the lab and \`proxylab deploy\` refuses to deploy into it ` +
    `without --force (a guess from another region's prices would be wrong): ${reason}; got ${formatValue(region)}`
  );
}

/** The region a parsed (not necessarily valid) lab file names, else the default; null when it names an invalid one. */
export function labRegionOf(raw: unknown): string | null {
  const region = asRecord(raw)?.region;
  if (region === undefined) return DEFAULT_PRICE_REGION;
  return typeof region === 'string' && REGION_PATTERN.test(region) ? region : null;
}
