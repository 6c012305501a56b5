/**
 * `estimateCost(lab)`: what a lab costs per hour while it exists, with a line per billable part,
 * from the dated price table only (no AWS call, no guess: an instance type the table does not
 * have is an error naming it).
 *
 * Compute prices are on-demand list prices. Usage-priced parts (storage, I/O) are lines with the
 * assumption written next to them. A serverless cluster has a range (min–max ACU); every line and
 * total carries `usdPerHourMin`/`usdPerHourMax` (equal for fixed-price parts).
 */
import { failsOver, withMovingWriter } from './moving-writer';
import type { AuroraDatabaseConfig, LabConfig } from '../config/types';
import { UsageError } from '../core/errors';
import { poolerDriver } from '../poolers/registry';
import { DEFAULT_PRICE_REGION, PRICE_TABLES, SOURCES } from './price-table';
import type { InstancePrice, PriceTable, RdsInstancePrice, SourceId } from './price-table';
import { unpricedRegionMessage } from './price-check';
import { labDeploymentShape } from './shape';
import type { DeploymentShape } from './shape';

/** The smallest running Aurora Serverless v2 capacity (below it, only a paused instance: 0). */
const SERVERLESS_MIN_RUNNING_ACU = 0.5;

/** Hours in the "8-hour day" total. */
export const HOURS_PER_DAY = 8;
/** Hours in the "30-day month left running" total. */
export const HOURS_PER_MONTH = 720;

/**
 * What the estimate says of spot runners. No Spot price is assumed: it moves with supply and demand
 * per zone and type, and a lab without a MaxPrice pays "the current Spot price", never more than
 * on-demand (EC2 API SpotMarketOptions.MaxPrice: "If you do not specify this parameter, you will pay
 * the current Spot price"; its default ceiling is the on-demand price).
 */
export const SPOT_CEILING_NOTE =
  'priced at the on-demand rate as a ceiling; the Spot price actually billed is usually well below it (it varies by zone and hour, so no Spot price is assumed)';

export type CostCategory = 'database' | 'proxy' | 'pooler' | 'runner' | 'network' | 'storage' | 'other';

export interface CostLine {
  readonly category: CostCategory;
  /** What is billed, e.g. `Aurora writer db.t4g.medium`. */
  readonly part: string;
  /** How many units bill per hour at the low and high end (equal unless serverless). */
  readonly quantityMin: number;
  readonly quantityMax: number;
  /** The unit of `quantity` and `unitPriceUsd`, e.g. `instance-hour`, `vCPU-hour`. */
  readonly unit: string;
  readonly unitPriceUsd: number;
  readonly usdPerHourMin: number;
  readonly usdPerHourMax: number;
  /** `price-table`: a list price × a count the lab fixes; `assumption`: usage we assumed (see note). */
  readonly basis: 'price-table' | 'assumption';
  /** The arithmetic and any assumption, in words. */
  readonly note: string;
  readonly source: SourceId;
  /**
   * Present (true) when the line's unit price has no AWS source (its source's `unsourced` says what
   * is missing): the figure is a third party's, shown but marked (`†` in the printed table).
   */
  readonly unsourced?: true;
  /**
   * The lab resource the line bills, where it is one a run measures or not (`proxylab plan` warns
   * about a billed one none of its steps touch): `reader:<n>` (an Aurora reader, 1-based),
   * `proxy:<name>`, `pooler:<name>`. Absent on shared lines (writer, runners, network, storage).
   */
  readonly resource?: string;
}

export interface CostTotals {
  readonly perHourUsdMin: number;
  readonly perHourUsdMax: number;
  /** 8 hours. */
  readonly perDayUsdMin: number;
  readonly perDayUsdMax: number;
  /** 30 days × 24 h = 720 hours, left running. */
  readonly perMonthUsdMin: number;
  readonly perMonthUsdMax: number;
}

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

/** Usage assumptions for the storage and I/O lines. */
export interface UsageAssumptions {
  /** Aurora cluster volume, GB. @default 10 (pgbench -s 50 is ≈ 0.75 GB; room for several scales) */
  readonly auroraStorageGb: number;
  /**
   * Aurora I/O requests per hour, millions, averaged over the hours the lab exists.
   * @default 0.2 (≈ 55 I/O per second: bursts of several thousand per second during write-heavy
   * runs such as TPC-B, near zero while idle or on cached read-only runs)
   */
  readonly auroraIoMillionsPerHour: number;
  /**
   * CPU utilization of the instance a suite loads (the writer), percent of every vCPU, while a suite
   * runs: what a burstable (db.t3/db.t4g) class in Unlimited mode bills surplus credits on.
   * @default 100 — pgbench runs closed-loop (each client sends its next transaction as soon as the
   * last one returns) and every scenario runs at least 5 clients (smoke), most of them tens to
   * hundreds (up to 1.5 × max_connections), against 2 vCPUs: the database CPU is the bottleneck.
   */
  readonly suiteCpuPercent: number;
  /**
   * Data through the VPC interface endpoints (a lab without internet egress), GB per hour.
   * @default 0.05 — SSM agent polling, secrets, the collector invocation, RDS and CloudFormation
   * API calls are kilobytes; results, packages and the runner bundle go through the free S3
   * gateway endpoint instead
   */
  readonly endpointGbPerHour: number;
}

export const DEFAULT_USAGE: UsageAssumptions = {
  auroraStorageGb: 10,
  auroraIoMillionsPerHour: 0.2,
  suiteCpuPercent: 100,
  endpointGbPerHour: 0.05,
};

export interface EstimateOptions {
  /** Price region; @default the lab's `region`, else us-east-1. */
  readonly region?: string;
  /** How to label `region` in the table. @default 'flag' when `region` is given */
  readonly regionFrom?: CostEstimate['regionFrom'];
  /** @default DEFAULT_USAGE */
  readonly usage?: Partial<UsageAssumptions>;
  /** What the stack deploys besides the lab's own counts. @default labDeploymentShape(lab) */
  readonly shape?: DeploymentShape;
}

/** The price table for `region`, or a UsageError naming the regions the repository has prices for. */
export function priceTableFor(region: string): PriceTable {
  const table = PRICE_TABLES[region];
  if (!table) {
    throw new UsageError(`region ${region} ${unpricedRegionMessage(region)}`, { code: 'unpriced-region' });
  }
  return table;
}

/** A price from one of the table's instance maps, or a UsageError naming the type and the known ones. */
function instancePrice<P extends InstancePrice>(
  table: PriceTable,
  known: Readonly<Record<string, P>>,
  what: string,
  type: string,
): P {
  const p = known[type];
  if (!p) {
    throw new UsageError(
      `unknown ${what} ${type}: no ${table.region} price in lib/cost/price-table.ts ` +
        `(known: ${Object.keys(known).join(', ')}); add it with its source rather than guess`,
    );
  }
  return p;
}

/** The Aurora class price, or a UsageError naming the class and the region's known classes. */
export function auroraInstancePrice(table: PriceTable, instanceClass: string): InstancePrice {
  return instancePrice(table, table.auroraInstances, 'Aurora instance class', instanceClass);
}

/** The RDS for PostgreSQL class price, or a UsageError naming the class and the region's known classes. */
export function rdsPostgresInstancePrice(table: PriceTable, instanceClass: string): RdsInstancePrice {
  const p = table.rdsPostgresInstances[instanceClass];
  if (!p)
    instancePrice(table, table.rdsPostgresInstances, 'RDS for PostgreSQL instance class', instanceClass);
  return p as RdsInstancePrice;
}

/** The EC2 instance type price, or a UsageError naming the type and the region's known types. */
export function ec2InstancePrice(
  table: PriceTable,
  instanceType: string,
  what = 'runner instance type',
): InstancePrice {
  return instancePrice(table, table.ec2Instances, what, instanceType);
}

/** What every phase of the estimate reads: the lab, the region's prices, the usage assumptions and the stack's shape. */
export interface CostInputs {
  readonly lab: LabConfig;
  readonly table: PriceTable;
  readonly usage: UsageAssumptions;
  readonly shape: DeploymentShape;
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
    table: priceTableFor(region),
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

/** Database instances: one line per instance, and the surplus CPU credits of a burstable class. */
export function databaseLines({ lab, table, usage }: CostInputs): CostLine[] {
  const db = lab.database;
  if (db.engine === 'aurora-postgresql') return auroraInstanceLines(lab, db, table, usage);
  const p = rdsPostgresInstancePrice(table, db.instanceClass);
  const hourly = db.multiAz ? p.usdPerHourMultiAz : p.usdPerHour;
  const lines = [
    fixed(
      'database',
      `RDS for PostgreSQL ${db.instanceClass} ${db.multiAz ? 'Multi-AZ' : 'single-AZ'}`,
      1,
      'instance-hour',
      hourly,
      p.source,
      db.multiAz
        ? `1 × $${hourly}/h on-demand Multi-AZ (primary + standby; ${p.vcpus} vCPU, ${p.memoryGiB} GiB each)`
        : `1 × $${hourly}/h on-demand (${p.vcpus} vCPU, ${p.memoryGiB} GiB)`,
    ),
  ];
  const credits = burstableCreditsLine(
    `RDS for PostgreSQL ${db.instanceClass}`,
    db.instanceClass,
    p,
    table.rdsCpuCreditPerVcpuHour,
    usage.suiteCpuPercent,
  );
  if (credits) lines.push(credits);
  return lines;
}

/**
 * RDS Proxy, one line per proxy: it bills the vCPUs (provisioned) or ACUs (serverless) of the
 * instances it targets, at least rdsProxyMinVcpus / rdsProxyMinAcus.
 */
export function proxyLines({ lab, table }: CostInputs): CostLine[] {
  const db = lab.database;
  if (db.engine === 'aurora-postgresql') return auroraProxyLines(lab, db, table);
  // A Multi-AZ standby is not a proxy target (it takes over the primary's endpoint on failover)
  // and is not counted.
  const p = rdsPostgresInstancePrice(table, db.instanceClass);
  return lab.proxies.map((proxy) => {
    const billed = Math.max(table.rdsProxyMinVcpus, p.vcpus);
    const price = table.rdsProxyPerVcpuHour;
    return withResource(
      fixed(
        'proxy',
        `RDS Proxy ${proxy.name}`,
        billed,
        'vCPU-hour',
        price.usd,
        price.source,
        `1 instance × ${p.vcpus} vCPU (minimum ${table.rdsProxyMinVcpus}) × $${price.usd}/vCPU-hour`,
      ),
      `proxy:${proxy.name}`,
    );
  });
}

/** The runners (on-demand price, the ceiling for spot) and their root volumes. */
export function runnerLines({ lab, table, shape }: CostInputs): CostLine[] {
  const runner = ec2InstancePrice(table, lab.runners.instanceType);
  const ebsGb = shape.runnerRootVolumeGb * lab.runners.count;
  return [
    fixed(
      'runner',
      `Runners ${lab.runners.count} × ${lab.runners.instanceType}${lab.runners.spot ? ' (spot: on-demand as ceiling)' : ''}`,
      lab.runners.count,
      'instance-hour',
      runner.usdPerHour,
      runner.source,
      `${lab.runners.count} × $${runner.usdPerHour}/h on-demand Linux (${runner.vcpus} vCPU each)` +
        (lab.runners.spot ? `; ${SPOT_CEILING_NOTE}` : ''),
    ),
    ebsGp3Line(`Runner EBS gp3 ${lab.runners.count} × ${shape.runnerRootVolumeGb} GB`, ebsGb, table),
  ];
}

/** `gb` of EC2 root volumes (gp3), billed per GB-month, as a per-hour line. */
function ebsGp3Line(part: string, gb: number, table: PriceTable): CostLine {
  const price = table.ebsGp3PerGbMonth;
  return fixed(
    'storage',
    part,
    gb / HOURS_PER_MONTH,
    'GB-month',
    price.usd,
    price.source,
    `${gb} GB × $${price.usd}/GB-month ÷ ${HOURS_PER_MONTH} h`,
  );
}

/** The lab's poolers on a host of their own (each bills like a runner). */
function poolerHosts(lab: LabConfig): LabConfig['poolers'] {
  return lab.poolers.filter((p) => p.placement === 'dedicated');
}

/**
 * Self-hosted poolers: a dedicated host bills like a runner (EC2 + root volume here, its public
 * IPv4 in networkLines); one on the runners adds nothing but competes for their CPU.
 */
export function poolerLines({ lab, table, shape }: CostInputs): CostLine[] {
  const lines = lab.poolers.map((pooler) => poolerHostLine(pooler, lab, table));
  const hosts = poolerHosts(lab);
  if (hosts.length > 0) {
    const gb = shape.poolerHostRootVolumeGb * hosts.length;
    lines.push(
      ebsGp3Line(`Pooler host EBS gp3 ${hosts.length} × ${shape.poolerHostRootVolumeGb} GB`, gb, table),
    );
  }
  return lines;
}

/** One pooler's compute: its dedicated host's instance-hour, or $0 on the runners. */
export function poolerHostLine(
  pooler: LabConfig['poolers'][number],
  lab: LabConfig,
  table: PriceTable,
): CostLine {
  const driver = poolerDriver(pooler.kind);
  if (pooler.placement === 'dedicated' && pooler.instanceType !== null) {
    const p = ec2InstancePrice(table, pooler.instanceType, 'pooler host instance type');
    return withResource(
      fixed(
        'pooler',
        `${driver.displayName} host ${pooler.name} ${pooler.instanceType}`,
        1,
        'instance-hour',
        p.usdPerHour,
        p.source,
        `1 × $${p.usdPerHour}/h on-demand Linux (${p.vcpus} vCPU; ${pooler.processes} ${driver.costLabel}${pooler.processes === 1 ? '' : 'es'})`,
      ),
      `pooler:${pooler.name}`,
    );
  }
  return fixed(
    'pooler',
    `${driver.displayName} ${pooler.name} on the runners`,
    lab.runners.count,
    'runner (shared)',
    0,
    ec2InstancePrice(table, lab.runners.instanceType).source,
    'no extra cost: it runs on the runners (billed above) and shares their CPU with pgbench',
  );
}

/** VPC interface endpoints, NAT gateways and public IPv4 addresses (NAT, runners, pooler hosts). */
export function networkLines({ lab, table, shape, usage }: CostInputs): CostLine[] {
  const lines: CostLine[] = [];
  if (shape.interfaceEndpoints.length > 0) {
    const n = shape.interfaceEndpoints.length * shape.availabilityZones;
    const price = table.interfaceEndpointPerAzHour;
    const zones =
      lab.network.mode === 'existing'
        ? `${shape.availabilityZones} zones (one per subnet of network.subnetIds, at most)`
        : `${shape.availabilityZones} AZs`;
    lines.push(
      fixed(
        'network',
        `VPC interface endpoints ${shape.interfaceEndpoints.length} × ${shape.availabilityZones} zones (${shape.interfaceEndpoints.join(', ')})`,
        n,
        'endpoint-AZ-hour',
        price.usd,
        price.source,
        `${shape.interfaceEndpoints.length} endpoints × ${zones} × $${price.usd}/h; a partial hour bills as a full one`,
      ),
    );
    const gb = table.interfaceEndpointPerGb;
    lines.push(
      assumed(
        'network',
        `VPC interface endpoint data ${usage.endpointGbPerHour} GB/h (assumed)`,
        usage.endpointGbPerHour,
        'GB',
        gb.usd,
        gb.source,
        `assumed ${usage.endpointGbPerHour} GB per hour × $${gb.usd}/GB (API calls and SSM polling are kilobytes; S3 traffic takes the free gateway endpoint)`,
      ),
    );
  }
  if (shape.natGateways > 0) {
    const price = table.natGatewayPerHour;
    lines.push(
      fixed(
        'network',
        `NAT gateway × ${shape.natGateways}`,
        shape.natGateways,
        'gateway-hour',
        price.usd,
        price.source,
        `${shape.natGateways} × $${price.usd}/h; data processed ($${table.natGatewayPerGb.usd}/GB) not included`,
      ),
    );
  }
  const poolerIps = shape.poolerHostsHavePublicIpv4 ? poolerHosts(lab).length : 0;
  const publicIps = shape.natGateways + (shape.runnersHavePublicIpv4 ? lab.runners.count : 0) + poolerIps;
  if (publicIps > 0) {
    const price = table.publicIpv4PerHour;
    const why = [
      shape.natGateways > 0 ? `${shape.natGateways} NAT gateway EIP(s)` : '',
      shape.runnersHavePublicIpv4 ? `${lab.runners.count} runner(s)` : '',
      poolerIps > 0 ? `${poolerIps} pooler host(s)` : '',
    ]
      .filter((s) => s !== '')
      .join(' + ');
    lines.push(
      fixed(
        'network',
        `Public IPv4 × ${publicIps}`,
        publicIps,
        'address-hour',
        price.usd,
        price.source,
        `${why} × $${price.usd}/h`,
      ),
    );
  }
  return lines;
}

/** Database storage: RDS provisioned storage, or Aurora's volume and I/O (stated assumptions). */
export function databaseStorageLines({ lab, table, usage }: CostInputs): CostLine[] {
  const db = lab.database;
  if (db.engine === 'postgres') {
    const gp3 = table.rdsGp3PerGbMonth;
    const factor = db.multiAz ? table.rdsMultiAzStorageFactor : 1;
    const gbMonth = (db.allocatedStorageGb * factor) / HOURS_PER_MONTH;
    return [
      fixed(
        'storage',
        `RDS ${db.storageType} storage ${db.allocatedStorageGb} GB${db.multiAz ? ' × 2 (primary + standby)' : ''}`,
        gbMonth,
        'GB-month',
        gp3.usd,
        gp3.source,
        `${db.allocatedStorageGb} GB${db.multiAz ? ` × ${factor}` : ''} × $${gp3.usd}/GB-month ÷ ${HOURS_PER_MONTH} h (provisioned, billed whether used or not)`,
      ),
    ];
  }
  const iopt = db.storageType === 'io-optimized' ? table.auroraIoOptimized : null;
  if (iopt) {
    const st = iopt.storagePerGbMonth;
    return [
      assumed(
        'storage',
        `Aurora I/O-Optimized storage ${usage.auroraStorageGb} GB (assumed)`,
        usage.auroraStorageGb / HOURS_PER_MONTH,
        'GB-month',
        st.usd,
        st.source,
        `assumed ${usage.auroraStorageGb} GB × $${st.usd}/GB-month ÷ ${HOURS_PER_MONTH} h; I/O requests are not billed (I/O-Optimized)`,
      ),
    ];
  }
  const st = table.auroraStoragePerGbMonth;
  const io = table.auroraIoPerMillionRequests;
  return [
    assumed(
      'storage',
      `Aurora storage ${usage.auroraStorageGb} GB (assumed)`,
      usage.auroraStorageGb / HOURS_PER_MONTH,
      'GB-month',
      st.usd,
      st.source,
      `assumed ${usage.auroraStorageGb} GB × $${st.usd}/GB-month ÷ ${HOURS_PER_MONTH} h`,
    ),
    assumed(
      'storage',
      `Aurora I/O ${usage.auroraIoMillionsPerHour} M requests/h (assumed)`,
      usage.auroraIoMillionsPerHour,
      'million requests',
      io.usd,
      io.source,
      `assumed ${usage.auroraIoMillionsPerHour} million I/O requests per hour × $${io.usd}/million (Aurora Standard); ` +
        'a sustained write-heavy suite (TPC-B) can issue many times more and the bill follows it: ' +
        'pass --io-millions-per-hour, or set aurora.storageType "io-optimized" (no I/O charge)',
    ),
  ];
}

/** Secrets Manager: the stack's secrets, and the pooler admin secret when the lab has poolers. */
export function secretLines({ lab, table, shape }: CostInputs): CostLine[] {
  const sec = table.secretPerMonth;
  const secrets = shape.secrets + (lab.poolers.length > 0 ? shape.poolerSecrets : 0);
  return [
    fixed(
      'other',
      `Secrets Manager × ${secrets}`,
      secrets / HOURS_PER_MONTH,
      'secret-month',
      sec.usd,
      sec.source,
      `${secrets} secret(s) × $${sec.usd}/month ÷ ${HOURS_PER_MONTH} h`,
    ),
  ];
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
  ];
}

/** Aurora instances: one line per instance (writer, readers); CPU credits of a burstable writer. */
function auroraInstanceLines(
  lab: LabConfig,
  db: AuroraDatabaseConfig,
  table: PriceTable,
  usage: UsageAssumptions,
): CostLine[] {
  const roles = ['writer', ...Array.from({ length: db.readers }, (_, i) => `reader ${i + 1}`)];
  const cap = db.capacity;
  const iopt = db.storageType === 'io-optimized' ? table.auroraIoOptimized : null;
  if (cap.kind === 'provisioned') {
    const standard = auroraInstancePrice(table, cap.instanceClass);
    const hourly = iopt ? roundNoise(standard.usdPerHour * iopt.computeMultiplier) : standard.usdPerHour;
    const p = { ...standard, usdPerHour: hourly };
    const lines = roles.map((role, i) =>
      withResource(
        fixed(
          'database',
          `Aurora ${role} ${cap.instanceClass}${iopt ? ' (I/O-Optimized)' : ''}`,
          1,
          'instance-hour',
          hourly,
          iopt ? iopt.source : standard.source,
          iopt
            ? `1 × $${standard.usdPerHour}/h Aurora Standard × ${iopt.computeMultiplier} (I/O-Optimized) = $${hourly}/h on-demand (${p.vcpus} vCPU, ${p.memoryGiB} GiB)`
            : `1 × $${hourly}/h on-demand (${p.vcpus} vCPU, ${p.memoryGiB} GiB)`,
        ),
        i === 0 ? undefined : `reader:${i}`,
      ),
    );
    // The suites load the writer; readers stay near idle, under their baseline.
    const credits = burstableCreditsLine(
      `Aurora writer ${cap.instanceClass}`,
      cap.instanceClass,
      p,
      iopt ? iopt.cpuCreditPerVcpuHour : table.auroraCpuCreditPerVcpuHour,
      usage.suiteCpuPercent,
    );
    if (credits) lines.push(failsOver(lab, db) ? withMovingWriter(credits, roles) : credits);
    return lines;
  }
  const acu = iopt ? iopt.serverlessPerAcuHour : table.auroraServerlessPerAcuHour;
  // minCapacity 0 is auto-pause. Assumed not to happen behind an RDS Proxy (listed as incompatible
  // with scale-to-zero in aws/agent-toolkit-for-aws's Aurora serverless notes): low end 0.5 ACU.
  const low =
    cap.minCapacityAcu === 0 && lab.proxies.length > 0 ? SERVERLESS_MIN_RUNNING_ACU : cap.minCapacityAcu;
  const why =
    low !== cap.minCapacityAcu
      ? ` (minCapacity 0 = auto-pause, assumed not to happen behind an RDS Proxy: ${low} ACU)`
      : '';
  return roles.map((role, i) =>
    withResource(
      range(
        'database',
        `Aurora ${role} serverless v2`,
        low,
        cap.maxCapacityAcu,
        'ACU-hour',
        acu.usd,
        acu.source,
        `${low}–${cap.maxCapacityAcu} ACU × $${acu.usd}/ACU-hour; bills the capacity in use, between min and max${why}`,
      ),
      i === 0 ? undefined : `reader:${i}`,
    ),
  );
}

/** Aurora's RDS Proxy lines: per vCPU-hour (provisioned) or ACU-hour (serverless) of every instance behind it. */
function auroraProxyLines(lab: LabConfig, db: AuroraDatabaseConfig, table: PriceTable): CostLine[] {
  const instances = 1 + db.readers;
  const cap = db.capacity;
  return lab.proxies.map((proxy) =>
    withResource(auroraProxyLine(proxy.name, instances, cap, table), `proxy:${proxy.name}`),
  );
}

/** One RDS Proxy's line: it bills the vCPUs (provisioned) or ACUs (serverless) of every instance behind it. */
function auroraProxyLine(
  name: string,
  instances: number,
  cap: AuroraDatabaseConfig['capacity'],
  table: PriceTable,
): CostLine {
  const part = `RDS Proxy ${name}`;
  if (cap.kind === 'provisioned') {
    const p = auroraInstancePrice(table, cap.instanceClass);
    const vcpus = p.vcpus * instances;
    const billed = Math.max(table.rdsProxyMinVcpus, vcpus);
    const price = table.rdsProxyPerVcpuHour;
    return fixed(
      'proxy',
      part,
      billed,
      'vCPU-hour',
      price.usd,
      price.source,
      `${instances} instance(s) × ${p.vcpus} vCPU = ${vcpus} vCPU (minimum ${table.rdsProxyMinVcpus}) × $${price.usd}/vCPU-hour`,
    );
  }
  const price = table.rdsProxyPerAcuHour;
  const lo = Math.max(table.rdsProxyMinAcus, cap.minCapacityAcu * instances);
  const hi = Math.max(table.rdsProxyMinAcus, cap.maxCapacityAcu * instances);
  return range(
    'proxy',
    part,
    lo,
    hi,
    'ACU-hour',
    price.usd,
    price.source,
    `${instances} instance(s) × ${cap.minCapacityAcu}–${cap.maxCapacityAcu} ACU (minimum ${table.rdsProxyMinAcus} ACU) × $${price.usd}/ACU-hour`,
  );
}

/** `line` marked as billing `resource` (CostLine.resource); unchanged when there is none. */
function withResource(line: CostLine, resource: string | undefined): CostLine {
  return resource === undefined ? line : { ...line, resource };
}

/** What the CPU-credit line's part contains (`… CPU credits (Unlimited mode)`). */
const CPU_CREDITS_PART = 'CPU credits (Unlimited mode)';

/**
 * The surplus-CPU-credit line of a burstable (db.t3/db.t4g) instance, null for other classes.
 *
 * RDS and Aurora run these classes in Unlimited mode and offer no other (RDS pricing: "T4g and T3
 * DB instances run in Unlimited mode, which means that you will be charged if your average CPU
 * utilization over a rolling 24-hour period exceeds the baseline of the instance"). Above its
 * baseline (baselineCpuPercent per vCPU) the instance spends credits it has earned, then surplus
 * credits; under sustained load the surplus is billed per vCPU-hour: vCPUs × (CPU − baseline) per
 * hour. From $0 (idle, or under the baseline on a 24-hour average) to that figure at the suite's
 * CPU (UsageAssumptions.suiteCpuPercent). A db.t* class without a baseline in the price table is
 * refused by name rather than costed as if it had no credits.
 */
function burstableCreditsLine(
  what: string,
  instanceClass: string,
  p: InstancePrice,
  credit: { usd: number; source: SourceId },
  cpuPercent: number,
): CostLine | null {
  if (p.baselineCpuPercent === undefined) {
    if (/^db\.t\d/i.test(instanceClass)) {
      throw new UsageError(
        `burstable class ${instanceClass} has no baselineCpuPercent in lib/cost/price-table.ts; ` +
          'add it (EC2 credit table) rather than leave its Unlimited-mode CPU credits out',
      );
    }
    return null;
  }
  const baseline = p.baselineCpuPercent;
  const surplusVcpus = (p.vcpus * Math.max(0, cpuPercent - baseline)) / 100;
  const line = range(
    'database',
    `${what} ${CPU_CREDITS_PART}`,
    0,
    roundNoise(surplusVcpus),
    'vCPU-hour',
    credit.usd,
    credit.source,
    `assumed sustained load at ${cpuPercent} % CPU while a suite runs: ${p.vcpus} vCPU × (${cpuPercent} − ${baseline} % baseline) = ` +
      `${roundNoise(surplusVcpus)} surplus vCPU-hours per hour × $${credit.usd}/vCPU-hour; $0 when idle or under the baseline on a 24-hour average`,
  );
  return { ...line, basis: 'assumption' };
}

/** Strips float noise (0.30000000000000004) without losing cents on a month of hours. */
function roundNoise(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}

/** A line whose quantity the lab fixes (low = high). */
function fixed(
  category: CostCategory,
  part: string,
  quantity: number,
  unit: string,
  unitPriceUsd: number,
  source: SourceId,
  note: string,
): CostLine {
  return range(category, part, quantity, quantity, unit, unitPriceUsd, source, note);
}

/** A line whose quantity lies between `lo` and `hi` (serverless capacity, CPU credits). */
function range(
  category: CostCategory,
  part: string,
  lo: number,
  hi: number,
  unit: string,
  unitPriceUsd: number,
  source: SourceId,
  note: string,
): CostLine {
  return {
    category,
    part,
    quantityMin: lo,
    quantityMax: hi,
    unit,
    unitPriceUsd,
    usdPerHourMin: roundNoise(lo * unitPriceUsd),
    usdPerHourMax: roundNoise(hi * unitPriceUsd),
    basis: 'price-table',
    note,
    source,
    ...(SOURCES[source].unsourced !== undefined ? { unsourced: true as const } : {}),
  };
}

/** A fixed line whose quantity is the lab's assumption, not a price-table fact. */
function assumed(...args: Parameters<typeof fixed>): CostLine {
  return { ...fixed(...args), basis: 'assumption' };
}

function totalsOf(lines: readonly CostLine[]): CostTotals {
  const lo = lines.reduce((s, l) => s + l.usdPerHourMin, 0);
  const hi = lines.reduce((s, l) => s + l.usdPerHourMax, 0);
  return {
    perHourUsdMin: roundNoise(lo),
    perHourUsdMax: roundNoise(hi),
    perDayUsdMin: roundNoise(lo * HOURS_PER_DAY),
    perDayUsdMax: roundNoise(hi * HOURS_PER_DAY),
    perMonthUsdMin: roundNoise(lo * HOURS_PER_MONTH),
    perMonthUsdMax: roundNoise(hi * HOURS_PER_MONTH),
  };
}
