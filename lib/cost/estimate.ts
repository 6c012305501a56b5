/**
 * `estimateCost(lab, { table })`: what a lab costs per hour while it exists, with a line per billable
 * part, from the dated price table the command resolved (`EstimateOptions.table`) only (no AWS
 * call, no guess: an instance type the table does not have is an error naming it).
 *
 * Compute prices are on-demand list prices. Usage-priced parts (storage, I/O) are lines with the
 * assumption written next to them. A serverless cluster has a range (min–max ACU); every line and
 * total carries `usdPerHourMin`/`usdPerHourMax` (equal for fixed-price parts).
 *
 * This file runs the phases in order and says what the estimate rests on; a line and the totals are
 * ./cost-line.ts, the phases ./database-lines.ts, ./proxy-lines.ts, ./compute-lines.ts and
 * ./network-lines.ts, the instance prices ./instance-prices.ts.
 */
import type { LabConfig } from '../config/types';
import { DEFAULT_PRICE_REGION, SOURCES } from './price-table';
import type { PriceTable, SourceId } from './price-table';
import { labDeploymentShape } from './shape';
import type { DeploymentShape } from './shape';
import { HOURS_PER_DAY, HOURS_PER_MONTH, totalsOf, type CostLine, type CostTotals } from './cost-line';
import { DEFAULT_USAGE, type CostInputs, type UsageAssumptions } from './inputs';
import { priceTableFor } from './instance-prices';
import { CPU_CREDITS_PART, databaseLines, databaseStorageLines } from './database-lines';
import { proxyLines } from './proxy-lines';
import { poolerHosts, poolerLines, runnerLines, SPOT_CEILING_NOTE } from './compute-lines';
import { networkLines, secretLines } from './network-lines';
import { labReplacesDatabase } from '../config/disruptions';
import { REPLACED_DATABASE_NOT_INCLUDED } from './replaced-database';

export {
  HOURS_PER_DAY,
  HOURS_PER_MONTH,
  type CostCategory,
  type CostLine,
  type CostTotals,
} from './cost-line';
export { DEFAULT_USAGE, type CostInputs, type UsageAssumptions } from './inputs';
export {
  auroraInstancePrice,
  ec2InstancePrice,
  priceTableFor,
  rdsPostgresInstancePrice,
} from './instance-prices';
export { databaseLines, databaseStorageLines } from './database-lines';
export { proxyLines } from './proxy-lines';
export { poolerHostLine, poolerLines, runnerLines, SPOT_CEILING_NOTE } from './compute-lines';
export { networkLines, secretLines } from './network-lines';

export interface CostEstimate {
  readonly lab: string;
  readonly region: string;
  /** Where the region came from. */
  /** Where the price region came from: `--region`, the region being deployed to, the lab's hint, or the default. */
  readonly regionFrom: 'flag' | 'deploy' | 'lab' | 'default';
  readonly priceTableAsOf: string;
  readonly currency: 'USD';
  /** The lab's `budget.maxHourlyUsd` (null when it sets none), for `checkBudget`. */
  readonly labBudgetMaxHourlyUsd: number | null;
  readonly lines: readonly CostLine[];
  readonly totals: CostTotals;
  /** Usage assumptions the estimate rests on, in words. */
  readonly assumptions: readonly string[];
  /** Billable things left out because they depend on usage we cannot know, in words. */
  readonly notIncluded: readonly string[];
  /** Every source a line cites, with its date. */
  readonly sources: ReadonlyArray<{
    readonly id: SourceId;
    readonly title: string;
    readonly url: string | null;
    readonly readOn: string;
    /** What no AWS source gives (PriceSource.unsourced). */
    readonly unsourced?: string;
  }>;
}

export interface EstimateOptions {
  /** Price region; @default the lab's `region`, else us-east-1. */
  readonly region?: string;
  /** How to label `region` in the table. @default 'flag' when `region` is given */
  readonly regionFrom?: CostEstimate['regionFrom'];
  /** @default DEFAULT_USAGE */
  readonly usage?: Partial<UsageAssumptions>;
  /** What the stack deploys besides the lab's own counts. @default labDeploymentShape(lab) */
  readonly shape?: DeploymentShape;
  /**
   * The region's prices as the command resolved them (`preparePrices`: the Price List, its cache or
   * the committed table). A table of another region is not used. @default the committed table of
   * the region, else a UsageError saying why the region has no prices
   */
  readonly table?: PriceTable | null;
}

/**
 * The estimate, one phase per billable resource, in this order: database instances, RDS Proxy,
 * runners, self-hosted poolers, network, database storage, secrets. Each phase is a function of
 * `CostInputs` alone (exported, and tested alone in test/unit/cost-phases.test.ts).
 */
export function estimateCost(lab: LabConfig, opts: EstimateOptions = {}): CostEstimate {
  const region = opts.region ?? lab.region ?? DEFAULT_PRICE_REGION;
  const regionFrom: CostEstimate['regionFrom'] = opts.region
    ? (opts.regionFrom ?? 'flag')
    : lab.region
      ? 'lab'
      : 'default';
  const inputs: CostInputs = {
    lab,
    table: priceTableFor(region, opts.table),
    usage: { ...DEFAULT_USAGE, ...opts.usage },
    shape: opts.shape ?? labDeploymentShape(lab),
  };
  const lines = [
    ...databaseLines(inputs),
    ...proxyLines(inputs),
    ...runnerLines(inputs),
    ...poolerLines(inputs),
    ...networkLines(inputs),
    ...databaseStorageLines(inputs),
    ...secretLines(inputs),
  ];
  const cited = [...new Set(lines.map((l) => l.source))].sort();
  return {
    lab: lab.name,
    region,
    regionFrom,
    priceTableAsOf: inputs.table.asOf,
    currency: 'USD',
    labBudgetMaxHourlyUsd: lab.budget?.maxHourlyUsd ?? null,
    lines,
    totals: totalsOf(lines),
    assumptions: assumptionsOf(inputs, region, lines),
    notIncluded: notIncludedOf(lab),
    sources: cited.map((id) => SOURCES[id]),
  };
}

/** The assumptions the estimate's `lines` rest on, in words. */
function assumptionsOf(
  { lab, table, usage, shape }: CostInputs,
  region: string,
  lines: readonly CostLine[],
): string[] {
  const db = lab.database;
  return [
    `on-demand list prices for ${region} as of ${table.asOf}; no Savings Plans, Reserved Instances or free tier`,
    db.engine === 'postgres'
      ? `RDS for PostgreSQL ${db.storageType} storage as provisioned (${db.allocatedStorageGb} GB), baseline IOPS included; no extra IOPS or throughput`
      : db.storageType === 'io-optimized'
        ? `Aurora I/O-Optimized: storage ${usage.auroraStorageGb} GB, no I/O charge; instances at ${table.auroraIoOptimized.computeMultiplier} × the Aurora Standard rate`
        : `Aurora Standard (not I/O-Optimized): storage ${usage.auroraStorageGb} GB, I/O ${usage.auroraIoMillionsPerHour} million requests per hour (a write-heavy suite can exceed it; aurora.storageType "io-optimized" removes the I/O charge)`,
    `runner root volumes ${shape.runnerRootVolumeGb} GB gp3 each` +
      (poolerHosts(lab).length > 0
        ? `; pooler host root volumes ${shape.poolerHostRootVolumeGb} GB gp3 each`
        : ''),
    `a day is ${HOURS_PER_DAY} hours; a month left running is 30 days = ${HOURS_PER_MONTH} hours`,
    db.engine === 'aurora-postgresql' && db.capacity.kind === 'serverless'
      ? 'serverless v2 bills the ACUs in use: the low figure is every instance at minCapacity, the high one at maxCapacity'
      : 'provisioned instances bill every hour they exist, busy or idle',
    ...(lab.runners.spot ? [`spot runners: ${SPOT_CEILING_NOTE}`] : []),
    ...(lines.some((l) => l.part.endsWith(CPU_CREDITS_PART))
      ? [
          `burstable database class in Unlimited mode: CPU credits from $0 (idle, or under the baseline on a 24-hour average) ` +
            `up to sustained suite load at ${usage.suiteCpuPercent} % CPU every hour`,
        ]
      : []),
  ];
}

/** Billable things the estimate leaves out, in words. */
function notIncludedOf(lab: LabConfig): string[] {
  const n = lab.network;
  return [
    'data transfer (inter-AZ, internet, NAT data processed)',
    ...(n.mode === 'existing'
      ? [
          n.egress === 'internet'
            ? `the existing VPC's own route to the internet (${n.vpcId}: its NAT or transit gateway is the network team's)`
            : n.endpoints === 'existing'
              ? `the network team's VPC endpoints (${n.vpcId}: endpoints "existing")`
              : `anything else in the existing VPC ${n.vpcId} (its route tables and other endpoints are the network team's)`,
        ]
      : []),
    'CloudWatch Logs ingestion and storage (VPC flow logs, Lambda logs, PostgreSQL logs)',
    'CloudWatch GetMetricData and Performance Insights API calls (per metric requested), Lambda invocations',
    'S3 storage and requests for results (small: JSON and logs)',
    lab.database.engine === 'postgres'
      ? 'backup storage beyond the free amount equal to the provisioned storage'
      : 'backup storage beyond the free amount equal to the cluster volume',
    ...(labReplacesDatabase(lab) ? [REPLACED_DATABASE_NOT_INCLUDED] : []),
  ];
}
