/**
 * The production bill of each option a lab compares (issue 41): what running each target's pooling
 * in production costs per 30-day month, on top of the database every option shares, and per million
 * transactions at a measured rate.
 *
 * - RDS Proxy: per vCPU-hour of the instances behind it — the lab's writer and every reader — with
 *   AWS's minimum (2 vCPUs); on Aurora Serverless v2, per ACU-hour of the writer's and readers'
 *   maximum capacity (the upper bound), minimum 8 ACUs.
 * - A self-hosted pooler (PgBouncer, PgDoorman) as a highly available pair: two hosts of the lab's
 *   pooler type in two zones (the runners' type for a pooler on the runners), each with its root
 *   volume, behind a Network Load Balancer (its hour; LCUs are traffic and not included). Without
 *   an NLB price the pair's total is unknown (null), never a total without it.
 * - Or, with `--app-hosts N`, the pooler on each of N application hosts: no host and no NLB of its
 *   own ($0 added), N pools each holding server connections, the pooler sharing each host's CPU.
 */
import { dbInstanceCount } from '../config/database';
import { UsageError } from '../core/errors';
import type { LabConfig } from '../config/types';
import { poolerDriver } from '../poolers/registry';
import { HOURS_PER_MONTH } from './estimate';
import type { HostChoice, TargetProduction } from '../suite/types';
import type { PriceTable } from './price-table';
import { LAB_DEPLOYMENT_SHAPE } from './shape';

export interface ProductionLine {
  readonly part: string;
  /** USD per 30-day month; null when a price is missing (`note` says which). */
  readonly usdPerMonth: number | null;
  readonly note: string;
}

export interface ProductionOption {
  /** The lab target(s) the option stands for, e.g. `RDS Proxy half`, `PgBouncer bouncer (HA pair)`. */
  readonly option: string;
  /** The lab proxy's or pooler's name (its targets' instance). */
  readonly instance: string;
  /** A self-hosted pooler whose host type the lab does not give (on the runners): priced on the runners' type. */
  readonly hostTypeFromLab: boolean;
  readonly lines: readonly ProductionLine[];
  /** Added to the database per month; null when a line is unknown. */
  readonly usdPerMonth: number | null;
}

export interface ProductionBill {
  readonly region: string;
  readonly pricesAsOf: string;
  /** The database, the same for every option (writer and readers, instance hours only). */
  readonly databaseUsdPerMonth: number | null;
  readonly options: readonly ProductionOption[];
}

export interface ProductionOptions {
  /** Price the self-hosted poolers on this many application hosts instead of as an HA pair. */
  readonly appHosts?: number;
}

/**
 * `--app-hosts N` (`cost`, `local`, `run`): a whole number ≥ 1, else a usage error naming the flag
 * and the value. One parser, so the three commands accept and refuse the same values.
 */
export function appHostsFlag(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`--app-hosts must be a whole number of application hosts ≥ 1, got "${text}"`);
  return n;
}

const month = (usdPerHour: number): number => Math.round(usdPerHour * HOURS_PER_MONTH * 100) / 100;

function total(lines: readonly ProductionLine[]): number | null {
  if (lines.some((l) => l.usdPerMonth === null)) return null;
  return Math.round(lines.reduce((s, l) => s + (l.usdPerMonth ?? 0), 0) * 100) / 100;
}

/** The database's instance-hours per month (null for a class the table lacks). */
function databaseMonth(lab: LabConfig, t: PriceTable): number | null {
  const db = lab.database;
  if (db.engine === 'postgres') {
    const p = t.rdsPostgresInstances[db.instanceClass];
    return p ? month(db.multiAz ? p.usdPerHourMultiAz : p.usdPerHour) : null;
  }
  const n = dbInstanceCount(db);
  if (db.capacity.kind === 'serverless')
    return month(n * db.capacity.maxCapacityAcu * t.auroraServerlessPerAcuHour.usd);
  const p = t.auroraInstances[db.capacity.instanceClass];
  return p ? month(n * p.usdPerHour) : null;
}

/** RDS Proxy on the lab's writer and readers. */
function proxyOption(lab: LabConfig, t: PriceTable, name: string): ProductionOption {
  const db = lab.database;
  const n = dbInstanceCount(db);
  let line: ProductionLine;
  if (db.engine === 'aurora-postgresql' && db.capacity.kind === 'serverless') {
    const acus = Math.max(n * db.capacity.maxCapacityAcu, t.rdsProxyMinAcus);
    line = {
      part: `RDS Proxy ${name}`,
      usdPerMonth: month(acus * t.rdsProxyPerAcuHour.usd),
      note: `${acus} ACU (writer + ${n - 1} reader(s) at max capacity, minimum ${t.rdsProxyMinAcus}) × $${t.rdsProxyPerAcuHour.usd}/ACU-h`,
    };
  } else {
    const cls =
      db.engine === 'postgres'
        ? db.instanceClass
        : db.capacity.kind === 'provisioned'
          ? db.capacity.instanceClass
          : '';
    const spec = (db.engine === 'postgres' ? t.rdsPostgresInstances : t.auroraInstances)[cls];
    const vcpus = spec ? Math.max(n * spec.vcpus, t.rdsProxyMinVcpus) : null;
    line = {
      part: `RDS Proxy ${name}`,
      usdPerMonth: vcpus === null ? null : month(vcpus * t.rdsProxyPerVcpuHour.usd),
      note:
        vcpus === null
          ? `${cls}: no ${t.region} price, so its vCPUs are unknown`
          : `${vcpus} vCPU (${n} × ${cls}, minimum ${t.rdsProxyMinVcpus}) × $${t.rdsProxyPerVcpuHour.usd}/vCPU-h`,
    };
  }
  return {
    option: `RDS Proxy ${name}`,
    instance: name,
    hostTypeFromLab: true,
    lines: [line],
    usdPerMonth: total([line]),
  };
}

/** A pooler's HA pair of `type` hosts in two zones with their root volumes, behind an NLB. */
export function haPairLines(t: PriceTable, type: string): ProductionLine[] {
  const host = t.ec2Instances[type];
  const gb = LAB_DEPLOYMENT_SHAPE.poolerHostRootVolumeGb;
  return [
    {
      part: `2 × ${type} in two zones`,
      usdPerMonth: host ? month(2 * host.usdPerHour) : null,
      note: host ? `$${host.usdPerHour}/h each` : `${type}: no ${t.region} price`,
    },
    {
      part: `2 × ${gb} GB gp3 root volumes`,
      usdPerMonth: Math.round(2 * gb * t.ebsGp3PerGbMonth.usd * 100) / 100,
      note: `$${t.ebsGp3PerGbMonth.usd}/GB-month`,
    },
    {
      part: 'Network Load Balancer',
      usdPerMonth: t.nlbPerHour ? month(t.nlbPerHour.usd) : null,
      note: t.nlbPerHour
        ? `$${t.nlbPerHour.usd}/h (LCUs, i.e. traffic, not included)`
        : `no NLB price in the ${t.region} prices as of ${t.asOf}`,
    },
  ];
}

/**
 * A pooler (`product`, its display name) on each of `appHosts` application hosts: no host and no load
 * balancer of its own ($0 added), `appHosts` pools each holding server connections, the pooler
 * sharing each host's CPU. The `cost` bill's option and a run's recorded one (`--app-hosts N`).
 */
export function appHostLines(product: string, appHosts: number): ProductionLine[] {
  return [
    {
      part: `${product} on ${appHosts} application host(s)`,
      usdPerMonth: 0,
      note: `adds no host or load balancer of its own; shares each application host's CPU; ${appHosts} pools, each holding its own server connections`,
    },
  ];
}

/** The total of `lines`, or null when one is unknown. */
export function productionTotal(lines: readonly ProductionLine[]): number | null {
  return total(lines);
}

/** A self-hosted pooler: an HA pair behind an NLB, or on each application host. */
function poolerOption(
  lab: LabConfig,
  t: PriceTable,
  pooler: LabConfig['poolers'][number],
  appHosts: number | undefined,
): ProductionOption {
  const product = poolerDriver(pooler.kind).displayName;
  if (appHosts !== undefined) {
    const lines = appHostLines(product, appHosts);
    return {
      option: `${product} ${pooler.name} (per app host)`,
      instance: pooler.name,
      hostTypeFromLab: true,
      lines,
      usdPerMonth: total(lines),
    };
  }
  const fromLab = pooler.placement === 'dedicated' && pooler.instanceType !== null;
  const type = fromLab && pooler.instanceType ? pooler.instanceType : lab.runners.instanceType;
  const lines = haPairLines(t, type);
  return {
    option: `${product} ${pooler.name} (HA pair)`,
    instance: pooler.name,
    hostTypeFromLab: fromLab,
    lines,
    usdPerMonth: total(lines),
  };
}

/** The production bill of each of the lab's options, at `table`'s prices. */
export function productionBill(
  lab: LabConfig,
  table: PriceTable,
  opts: ProductionOptions = {},
): ProductionBill {
  return {
    region: table.region,
    pricesAsOf: table.asOf,
    databaseUsdPerMonth: databaseMonth(lab, table),
    options: [
      ...lab.proxies.map((p) => proxyOption(lab, table, p.name)),
      ...lab.poolers.map((p) => poolerOption(lab, table, p, opts.appHosts)),
    ],
  };
}

/**
 * The share of a production pooler host's vCPUs the pooler may use when the report picks the host
 * type from the CPU the run measured: 70 %. The rest is headroom for bursts above a step's mean,
 * the kernel's network work, and the pair's failover: each host of an HA pair is sized to carry
 * the whole measured load alone, as the survivor must.
 */
export const POOLER_HOST_TARGET_UTILISATION = 0.7;

/**
 * The HA pair priced on every type of `type`'s family the table has, fewest vCPUs first (the same
 * family rule as `validate`'s "smallest <family> with enough" memory hint, lib/cost/price-check.ts):
 * the report takes the smallest whose vCPUs cover the measured pooler CPU.
 */
export function hostChoices(t: PriceTable, type: string): HostChoice[] {
  const family = type.split('.')[0] ?? '';
  return Object.entries(t.ec2Instances)
    .filter(([name]) => name.startsWith(`${family}.`))
    .sort(([, a], [, b]) => a.vcpus - b.vcpus || a.usdPerHour - b.usdPerHour)
    .map(([name, spec]): HostChoice => {
      const lines = haPairLines(t, name);
      const usdPerMonth = total(lines);
      return {
        type: name,
        vcpus: spec.vcpus,
        usdPerMonth,
        usdPerHour: perHour(usdPerMonth),
        basis: linesText(lines),
      };
    });
}

const perHour = (usdPerMonth: number | null): number | null =>
  usdPerMonth === null ? null : Math.round((usdPerMonth / HOURS_PER_MONTH) * 1e6) / 1e6;

/** `2 × c7g.large in two zones $0.0725/h each; …`: what an option's lines price, in words. */
export function linesText(lines: readonly ProductionLine[]): string {
  return lines.map((l) => `${l.part} ${l.note}`).join('; ');
}

/**
 * An option of the bill as a run records it for its target (lib/suite/types.ts TargetProduction):
 * `hostChoices` when the host type is the report's to pick (`chooseHost`), else null.
 */
export function targetProduction(
  option: Pick<ProductionOption, 'lines' | 'usdPerMonth'>,
  extra: {
    readonly pricedAs: string;
    readonly hostChoices: readonly HostChoice[] | null;
    readonly poolerProcesses: number;
    readonly hourlyIsProduction: boolean;
    /** The pooler priced on this many application hosts (`--app-hosts N`); absent: not so. */
    readonly appHosts?: number;
  },
): TargetProduction {
  return {
    pricedAs: extra.pricedAs,
    usdPerMonth: option.usdPerMonth,
    usdPerHour: perHour(option.usdPerMonth),
    basis: linesText(option.lines),
    hourlyIsProduction: extra.hourlyIsProduction,
    hostChoices: extra.hostChoices,
    targetUtilisation: POOLER_HOST_TARGET_UTILISATION,
    poolerProcesses: extra.poolerProcesses,
    appHosts: extra.appHosts ?? null,
  };
}

/** USD per million transactions of `usdPerMonth` at `tps` sustained; null when either is unknown or tps ≤ 0. */
export function usdPerMillionTransactions(usdPerMonth: number | null, tps: number | null): number | null {
  if (usdPerMonth === null || tps === null || !(tps > 0)) return null;
  return usdPerMonth / ((tps * 3600 * HOURS_PER_MONTH) / 1e6);
}

const money = (x: number | null): string => (x === null ? 'unknown' : `$${x.toFixed(2)}`);

/** The bill as the `cost` command prints it. */
export function formatProductionBill(b: ProductionBill): string {
  const out = [
    '',
    `Production, per ${HOURS_PER_MONTH}-hour month (${b.region} on-demand prices as of ${b.pricesAsOf}):`,
    `  database (every option): ${money(b.databaseUsdPerMonth)}`,
  ];
  if (b.options.length === 0) out.push('  (the lab has no RDS Proxy and no self-hosted pooler)');
  for (const o of b.options) {
    out.push(`  ${o.option}: ${money(o.usdPerMonth)} on top of the database`);
    for (const l of o.lines) out.push(`    ${l.part}: ${money(l.usdPerMonth)} — ${l.note}`);
  }
  return out.join('\n') + '\n';
}
