/**
 * The committed, dated us-east-1 price table: the offline fallback of the prices `proxylab` reads
 * from the AWS Price List (lib/cost/pricelist/: `pricesFor(region, …)` — the Price List, cached per
 * region and date under ~/.cache/proxylab/prices, else an older cache, else this table for
 * us-east-1). Every other commercial region is priced from the Price List or its cache only: a
 * guess from another region's prices would be a wrong number with a confident face, so a region
 * without prices is refused by `validate`, `plan`, `cost`, `deploy` and `run` in the same words.
 *
 * Every price names its source; `SOURCES` says what each source is and when it was read. When you
 * update a price, update its source date too, and run `npx tsx scripts/cost-table.ts --write` to
 * regenerate the README's "What it costs" table (test/integration/readme-cost.test.ts checks it).
 */

/** Where a price came from. */
export interface PriceSource {
  readonly id: SourceId;
  /** What the source is, in a few words. */
  readonly title: string;
  /** Public address, when there is one. */
  readonly url: string | null;
  /** When the price was read (ISO date). */
  readonly readOn: string;
  /**
   * Set when no AWS page, API or statement gives the figure: what is missing, in words. Every cost
   * line priced from such a source carries `unsourced: true` (`proxylab cost --json`), and the
   * printed table marks it `†` (lib/cost/format.ts). Never a figure invented to fill the gap.
   */
  readonly unsourced?: string;
}

export type SourceId =
  | 'experiments-2026'
  | 'aws-agent-toolkit-2026-03'
  | 'aws-pricing-pages-2026'
  | 'ec2-price-list-2026-09'
  | 'rds-postgres-2026'
  | 'rds-cpu-credits-2026'
  | 'aurora-cpu-credits-2024'
  | 'ec2-public-tables-2026-10'
  | 'aurora-io-optimized-2025'
  | 'aws-privatelink-2026'
  | 'aws-price-list-api'
  | 'nlb-public-2026';

export const SOURCES: Readonly<Record<SourceId, PriceSource>> = {
  'aws-price-list-api': {
    id: 'aws-price-list-api',
    title:
      'the AWS Price List Query API (GetProducts, on-demand terms), read by `proxylab` for the region and cached ' +
      "per region and date under ~/.cache/proxylab/prices (lib/cost/pricelist/); the date is the price table's asOf",
    url: 'https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_pricing_GetProducts.html',
    readOn: 'on the date the prices are as of',
  },
  'experiments-2026': {
    id: 'experiments-2026',
    title:
      'the team\'s experiment notes, "Rough us-east-1 on-demand prices (2026)" (not shipped in this repository), ' +
      'checked against the AWS Aurora, RDS Proxy, EC2 and VPC pricing pages',
    url: 'https://aws.amazon.com/rds/aurora/pricing/',
    readOn: '2026-11-21',
  },
  'aws-agent-toolkit-2026-03': {
    id: 'aws-agent-toolkit-2026-03',
    title:
      'aws/agent-toolkit-for-aws acu_calculator.py static us-east-1 Aurora on-demand table (last updated 2026-03-28); ' +
      'Aurora PostgreSQL and Aurora MySQL share these on-demand rates in us-east-1 (t4g.medium $0.073 and r6g.large $0.260 ' +
      'agree with the experiments-2026 figures)',
    url: 'https://github.com/aws/agent-toolkit-for-aws (skills/specialized-skills/database-skills/amazon-aurora-mysql/scripts/acu_calculator.py)',
    readOn: '2026-11-21',
  },
  'aws-pricing-pages-2026': {
    id: 'aws-pricing-pages-2026',
    title:
      'AWS pricing pages (RDS Proxy, VPC PrivateLink, EBS, Secrets Manager), us-east-1 on-demand; RDS Proxy on Aurora ' +
      'Serverless v2 bills per ACU-hour with an 8-ACU minimum (confirmed by blog.serverworks.co.jp, June 2024)',
    url: 'https://aws.amazon.com/rds/proxy/pricing/',
    readOn: '2026-11-21',
  },
  'rds-postgres-2026': {
    id: 'rds-postgres-2026',
    title:
      'RDS for PostgreSQL us-east-1 on-demand: db.t4g micro/small/medium single-AZ and Multi-AZ per hour from ' +
      'infratally.com "AWS RDS pricing explained (2026)" (Multi-AZ exactly twice single-AZ); gp3 storage $0.115/GB-month ' +
      'from usage.ai "RDS pricing calculator" (June 2026, citing aws.amazon.com/rds/pricing); Multi-AZ storage billed ' +
      'for primary and standby (AWS RDS user guide, "On-Demand DB instances", USER_OnDemandDBInstances.html)',
    url: 'https://aws.amazon.com/rds/postgresql/pricing/',
    readOn: '2026-11-21',
  },
  'rds-cpu-credits-2026': {
    id: 'rds-cpu-credits-2026',
    title:
      'Amazon RDS pricing, "T4g and T3 CPU Credits": "T4g and T3 DB instances run in Unlimited mode, which means that ' +
      'you will be charged if your average CPU utilization over a rolling 24-hour period exceeds the baseline of the ' +
      'instance. CPU Credits are charged at $0.075 per vCPU-Hour. The CPU Credit pricing is the same for all T3 instance ' +
      'sizes across all regions and is not covered by Reserved Instances" (as quoted from aws.amazon.com/rds/pricing in ' +
      'public notes, 2026; the RDS instance-types page works its t3.small example at 7.5 cents/vCPU-hour). RDS has no ' +
      'credit-mode setting: CreateDBInstance/ModifyDBInstance take none. Baselines per vCPU (t3/t4g micro 10 %, small ' +
      'and medium 20 %, large 30 %) are the EC2 User Guide credit table (burstable-credits-baseline-concepts)',
    url: 'https://aws.amazon.com/rds/pricing/',
    readOn: '2026-11-25',
  },
  // Not AWS's word: searched again on 2026-11-28 (the Aurora pricing page, the Aurora User Guide's
  // "DB instance billing for Aurora", AWS re:Post) and no AWS page, API or statement giving an
  // Aurora CPU-credit rate was found — the Aurora pricing page as stored shows no credit rate, and
  // "DB instance billing for Aurora" lists no credit component. RDS's $0.075/vCPU-hour IS AWS's
  // (rds-cpu-credits-2026) but is RDS's, not Aurora's. The figures below are a third party's quote,
  // kept (an estimate without the credits would read $0 under sustained load) and marked unsourced.
  'aurora-cpu-credits-2024': {
    id: 'aurora-cpu-credits-2024',
    title:
      'Aurora T4g and T3 CPU credits in Unlimited mode, $0.09 per vCPU-hour for Aurora Standard ($0.12 for ' +
      'I/O-Optimized), as written in a public cost note that cites no page (gist thom-vend/c710e4fb…, February ' +
      '2024). Baselines per vCPU as for RDS (EC2 credit table: medium 20 %, large 30 %)',
    url: 'https://gist.github.com/thom-vend/c710e4fb173b4bea91bc12204c25ee86',
    readOn: '2026-11-28',
    unsourced:
      "no AWS page, API or statement found gives Aurora's CPU-credit rate (RDS's $0.075/vCPU-hour is AWS's own, " +
      "but RDS's)",
  },
  'ec2-public-tables-2026-10': {
    id: 'ec2-public-tables-2026-10',
    title:
      'SECOND-HAND: EC2 Linux on-demand us-east-1 as pinned in several independent public cost tables on GitHub ' +
      '(one states "AWS Price List API, read 2026-10-05"); they agree on every figure used here (c7i.large $0.08925, ' +
      'c6i.large $0.085, c6g.large $0.068, m7g.large $0.0816, m7i.large $0.1008, c8g.large $0.07976, c7g.12xlarge ' +
      '$1.74; sizes scale linearly within a family). Not read from aws.amazon.com itself',
    url: null,
    readOn: '2026-11-26',
  },
  'aurora-io-optimized-2025': {
    id: 'aurora-io-optimized-2025',
    title:
      'Aurora I/O-Optimized, us-east-1: instances 1.30 × the Aurora Standard rate (aws/agent-toolkit-for-aws ' +
      'io-optimized-pricing.md "Compute multiplier 1.30× (30% premium)"; nOps "instance cost times 1.3"), storage ' +
      '$0.225/GB-month and Serverless v2 $0.16/ACU-hour, no I/O charge (AWS Price List API as transcribed in a public ' +
      'pricing note dated 2025-10-28, SKUs 5YXZF9S373QUR5VW and KG668U3YXJQ6YH9Y). Second-hand: not read from ' +
      'aws.amazon.com itself',
    url: 'https://aws.amazon.com/rds/aurora/pricing/',
    readOn: '2026-11-26',
  },
  'aws-privatelink-2026': {
    id: 'aws-privatelink-2026',
    title:
      'AWS PrivateLink pricing, interface endpoints: "billed for each hour that your VPC endpoint remains provisioned in ' +
      'each Availability Zone … Each partial VPC endpoint-hour consumed is billed as a full hour"; data processed ' +
      '$0.01 per GB for the first 1 PB a month in the Region (tiered below that). us-east-1 endpoint-hour $0.01 per ' +
      'endpoint per zone, as also quoted by awsnegotiations.com "AWS PrivateLink Cost Analysis" (May 2026). Gateway ' +
      'endpoints (S3) are free',
    url: 'https://aws.amazon.com/privatelink/pricing/',
    readOn: '2026-11-26',
  },
  'nlb-public-2026': {
    id: 'nlb-public-2026',
    title:
      'SECOND-HAND: Network Load Balancer us-east-1, $0.0225 per NLB-hour plus $0.006 per NLCU-hour, as two ' +
      'independent public cost write-ups state it (clustercost.com "AWS Network Load Balancer Pricing (US-East-1 ' +
      '2025 Guide)"; awsnegotiations.com "Elastic Load Balancer Cost", 2026). Not read from aws.amazon.com itself; ' +
      'the Price List (AWSELB, productFamily "Load Balancer-Network") replaces it when read',
    url: 'https://aws.amazon.com/elasticloadbalancing/pricing/',
    readOn: '2026-11-28',
  },
  'ec2-price-list-2026-09': {
    id: 'ec2-price-list-2026-09',
    title:
      'EC2 Linux on-demand us-east-1 from the AWS Price List API (queried 2026-09-16), as pinned in public ' +
      'cost tables on GitHub; several independent tables agree (c7g sizes scale linearly from c7g.large $0.0725)',
    url: null,
    readOn: '2026-11-21',
  },
};

/** An RDS for PostgreSQL instance class: single-AZ and Multi-AZ (primary + standby) per hour. */
export interface RdsInstancePrice extends InstancePrice {
  readonly usdPerHourMultiAz: number;
}

/** An hourly-priced instance class (Aurora DB instance or EC2 runner). */
export interface InstancePrice {
  readonly usdPerHour: number;
  readonly vcpus: number;
  readonly memoryGiB: number;
  /**
   * Burstable (db.t3/db.t4g) classes only: the baseline CPU utilization per vCPU, percent. RDS and
   * Aurora run them in Unlimited mode; sustained CPU above it is billed as surplus credits.
   */
  readonly baselineCpuPercent?: number;
  readonly source: SourceId;
}

export interface UnitPrice {
  readonly usd: number;
  readonly source: SourceId;
}

export interface PriceTable {
  readonly region: string;
  /** The date the table as a whole was last checked (ISO). */
  readonly asOf: string;
  readonly currency: 'USD';
  /** Aurora PostgreSQL (Aurora Standard storage configuration), on-demand, per instance-hour. */
  readonly auroraInstances: Readonly<Record<string, InstancePrice>>;
  /** Aurora Serverless v2 (Aurora Standard), per ACU-hour. */
  readonly auroraServerlessPerAcuHour: UnitPrice;
  /** Aurora Standard storage, per GB-month. */
  readonly auroraStoragePerGbMonth: UnitPrice;
  /** Aurora Standard I/O, per million requests. */
  readonly auroraIoPerMillionRequests: UnitPrice;
  /**
   * Aurora I/O-Optimized (`aurora.storageType: "io-optimized"`): instances bill `computeMultiplier` ×
   * the Standard rate, storage and Serverless v2 ACUs their own rates, and I/O nothing.
   */
  readonly auroraIoOptimized: {
    readonly computeMultiplier: number;
    readonly storagePerGbMonth: UnitPrice;
    readonly serverlessPerAcuHour: UnitPrice;
    readonly cpuCreditPerVcpuHour: UnitPrice;
    readonly source: SourceId;
  };
  /**
   * RDS for PostgreSQL, on-demand, per instance-hour. Classes without a sourced price are absent
   * (db.t3.micro and the m/r families: no dated source found yet); `cost` refuses them by name.
   */
  readonly rdsPostgresInstances: Readonly<Record<string, RdsInstancePrice>>;
  /** RDS gp3 storage, single-AZ, per GB-month (3000 IOPS / 125 MiB/s baseline included). */
  readonly rdsGp3PerGbMonth: UnitPrice;
  /** Multi-AZ bills the provisioned storage for primary and standby: this many times the single-AZ rate. */
  readonly rdsMultiAzStorageFactor: number;
  /** RDS for PostgreSQL db.t3/db.t4g (Unlimited mode): surplus CPU credits, per vCPU-hour above the baseline. */
  readonly rdsCpuCreditPerVcpuHour: UnitPrice;
  /**
   * Aurora Standard db.t3/db.t4g (Unlimited mode): surplus CPU credits, per vCPU-hour above the
   * baseline. us-east-1's is unsourced (SOURCES['aurora-cpu-credits-2024'].unsourced).
   */
  readonly auroraCpuCreditPerVcpuHour: UnitPrice;
  /** RDS Proxy on provisioned instances: per vCPU-hour of the instances behind it. */
  readonly rdsProxyPerVcpuHour: UnitPrice;
  /** RDS Proxy bills at least this many vCPUs per proxy. */
  readonly rdsProxyMinVcpus: number;
  /** RDS Proxy on Aurora Serverless v2: per ACU-hour of the capacity behind it. */
  readonly rdsProxyPerAcuHour: UnitPrice;
  /** RDS Proxy on Serverless v2 bills at least this many ACUs per proxy. */
  readonly rdsProxyMinAcus: number;
  /** EC2 Linux on-demand, per instance-hour. */
  readonly ec2Instances: Readonly<Record<string, InstancePrice>>;
  /** EBS gp3, per GB-month. */
  readonly ebsGp3PerGbMonth: UnitPrice;
  /** VPC interface endpoint, per endpoint per AZ per hour (data processed extra). */
  readonly interfaceEndpointPerAzHour: UnitPrice;
  /** VPC interface endpoint data processed, per GB (the first-PB tier: a lab never leaves it). */
  readonly interfaceEndpointPerGb: UnitPrice;
  /** NAT gateway, per gateway-hour (data processed extra). */
  readonly natGatewayPerHour: UnitPrice;
  /** NAT gateway data processed, per GB. */
  readonly natGatewayPerGb: UnitPrice;
  /** Public IPv4 address (in use or idle), per address-hour. */
  readonly publicIpv4PerHour: UnitPrice;
  /** Secrets Manager, per secret-month. */
  readonly secretPerMonth: UnitPrice;
  /**
   * Network Load Balancer, per load-balancer-hour (LCUs extra): the production bill's HA pooler pair
   * (lib/cost/production.ts). Optional: a table without it leaves the pair's total unknown.
   */
  readonly nlbPerHour?: UnitPrice;
}

const X = 'experiments-2026' as const;
const T = 'aws-agent-toolkit-2026-03' as const;
const P = 'aws-pricing-pages-2026' as const;
const E = 'ec2-price-list-2026-09' as const;
const R = 'rds-postgres-2026' as const;
const G = 'ec2-public-tables-2026-10' as const;

/** The baseline CPU per vCPU of the burstable sizes (EC2 User Guide credit table; RDS and Aurora classes alike). */
export const BASELINE = { micro: 10, small: 20, medium: 20, large: 30 } as const;

const US_EAST_1: PriceTable = {
  region: 'us-east-1',
  asOf: '2026-11-21',
  currency: 'USD',
  auroraInstances: {
    'db.t4g.medium': {
      usdPerHour: 0.073,
      vcpus: 2,
      memoryGiB: 4,
      baselineCpuPercent: BASELINE.medium,
      source: X,
    },
    'db.t4g.large': {
      usdPerHour: 0.146,
      vcpus: 2,
      memoryGiB: 8,
      baselineCpuPercent: BASELINE.large,
      source: T,
    },
    'db.t3.medium': {
      usdPerHour: 0.082,
      vcpus: 2,
      memoryGiB: 4,
      baselineCpuPercent: BASELINE.medium,
      source: T,
    },
    'db.t3.large': {
      usdPerHour: 0.164,
      vcpus: 2,
      memoryGiB: 8,
      baselineCpuPercent: BASELINE.large,
      source: T,
    },
    'db.r5.large': { usdPerHour: 0.29, vcpus: 2, memoryGiB: 16, source: T },
    'db.r5.xlarge': { usdPerHour: 0.58, vcpus: 4, memoryGiB: 32, source: T },
    'db.r5.2xlarge': { usdPerHour: 1.16, vcpus: 8, memoryGiB: 64, source: T },
    'db.r5.4xlarge': { usdPerHour: 2.32, vcpus: 16, memoryGiB: 128, source: T },
    'db.r5.8xlarge': { usdPerHour: 4.64, vcpus: 32, memoryGiB: 256, source: T },
    'db.r6g.large': { usdPerHour: 0.26, vcpus: 2, memoryGiB: 16, source: X },
    'db.r6g.xlarge': { usdPerHour: 0.519, vcpus: 4, memoryGiB: 32, source: T },
    'db.r6g.2xlarge': { usdPerHour: 1.038, vcpus: 8, memoryGiB: 64, source: T },
    'db.r6g.4xlarge': { usdPerHour: 2.076, vcpus: 16, memoryGiB: 128, source: T },
    'db.r6g.8xlarge': { usdPerHour: 4.152, vcpus: 32, memoryGiB: 256, source: T },
    'db.r6g.12xlarge': { usdPerHour: 6.228, vcpus: 48, memoryGiB: 384, source: T },
    'db.r6g.16xlarge': { usdPerHour: 8.304, vcpus: 64, memoryGiB: 512, source: T },
    'db.r7g.large': { usdPerHour: 0.276, vcpus: 2, memoryGiB: 16, source: T },
    'db.r7g.xlarge': { usdPerHour: 0.553, vcpus: 4, memoryGiB: 32, source: T },
    'db.r7g.2xlarge': { usdPerHour: 1.106, vcpus: 8, memoryGiB: 64, source: T },
    'db.r7g.4xlarge': { usdPerHour: 2.211, vcpus: 16, memoryGiB: 128, source: T },
    'db.r7g.8xlarge': { usdPerHour: 4.422, vcpus: 32, memoryGiB: 256, source: T },
    'db.r7g.12xlarge': { usdPerHour: 6.633, vcpus: 48, memoryGiB: 384, source: T },
    'db.r7g.16xlarge': { usdPerHour: 8.844, vcpus: 64, memoryGiB: 512, source: T },
    'db.r8g.large': { usdPerHour: 0.276, vcpus: 2, memoryGiB: 16, source: T },
    'db.r8g.xlarge': { usdPerHour: 0.552, vcpus: 4, memoryGiB: 32, source: T },
    'db.r8g.2xlarge': { usdPerHour: 1.104, vcpus: 8, memoryGiB: 64, source: T },
    'db.r8g.4xlarge': { usdPerHour: 2.208, vcpus: 16, memoryGiB: 128, source: T },
    'db.r8g.8xlarge': { usdPerHour: 4.416, vcpus: 32, memoryGiB: 256, source: T },
    'db.r8g.12xlarge': { usdPerHour: 6.624, vcpus: 48, memoryGiB: 384, source: T },
    'db.r8g.16xlarge': { usdPerHour: 8.832, vcpus: 64, memoryGiB: 512, source: T },
  },
  rdsPostgresInstances: {
    'db.t4g.micro': {
      usdPerHour: 0.016,
      usdPerHourMultiAz: 0.032,
      vcpus: 2,
      memoryGiB: 1,
      baselineCpuPercent: BASELINE.micro,
      source: R,
    },
    'db.t4g.small': {
      usdPerHour: 0.032,
      usdPerHourMultiAz: 0.064,
      vcpus: 2,
      memoryGiB: 2,
      baselineCpuPercent: BASELINE.small,
      source: R,
    },
    'db.t4g.medium': {
      usdPerHour: 0.065,
      usdPerHourMultiAz: 0.13,
      vcpus: 2,
      memoryGiB: 4,
      baselineCpuPercent: BASELINE.medium,
      source: R,
    },
  },
  rdsGp3PerGbMonth: { usd: 0.115, source: R },
  rdsMultiAzStorageFactor: 2,
  rdsCpuCreditPerVcpuHour: { usd: 0.075, source: 'rds-cpu-credits-2026' },
  // unsourced: no AWS page gives an Aurora credit rate (see SOURCES['aurora-cpu-credits-2024'])
  auroraCpuCreditPerVcpuHour: { usd: 0.09, source: 'aurora-cpu-credits-2024' },
  auroraServerlessPerAcuHour: { usd: 0.12, source: T },
  auroraStoragePerGbMonth: { usd: 0.1, source: X },
  auroraIoPerMillionRequests: { usd: 0.2, source: X },
  auroraIoOptimized: {
    computeMultiplier: 1.3,
    storagePerGbMonth: { usd: 0.225, source: 'aurora-io-optimized-2025' },
    serverlessPerAcuHour: { usd: 0.16, source: 'aurora-io-optimized-2025' },
    // unsourced, as the Standard rate above
    cpuCreditPerVcpuHour: { usd: 0.12, source: 'aurora-cpu-credits-2024' },
    source: 'aurora-io-optimized-2025',
  },
  rdsProxyPerVcpuHour: { usd: 0.015, source: X },
  rdsProxyMinVcpus: 2,
  rdsProxyPerAcuHour: { usd: 0.015, source: P },
  rdsProxyMinAcus: 8,
  ec2Instances: {
    'c7g.medium': { usdPerHour: 0.0363, vcpus: 1, memoryGiB: 2, source: E },
    'c7g.large': { usdPerHour: 0.0725, vcpus: 2, memoryGiB: 4, source: X },
    'c7g.xlarge': { usdPerHour: 0.145, vcpus: 4, memoryGiB: 8, source: E },
    'c7g.2xlarge': { usdPerHour: 0.29, vcpus: 8, memoryGiB: 16, source: E },
    'c7g.4xlarge': { usdPerHour: 0.58, vcpus: 16, memoryGiB: 32, source: E },
    'c7g.8xlarge': { usdPerHour: 1.16, vcpus: 32, memoryGiB: 64, source: E },
    'c7g.12xlarge': { usdPerHour: 1.74, vcpus: 48, memoryGiB: 96, source: G },
    'c7g.16xlarge': { usdPerHour: 2.32, vcpus: 64, memoryGiB: 128, source: G },
    // Graviton 2 and 4, and x86 (Intel) compute and general-purpose families: runners and pooler hosts.
    'c6g.large': { usdPerHour: 0.068, vcpus: 2, memoryGiB: 4, source: G },
    'c6g.xlarge': { usdPerHour: 0.136, vcpus: 4, memoryGiB: 8, source: G },
    'c6g.2xlarge': { usdPerHour: 0.272, vcpus: 8, memoryGiB: 16, source: G },
    'c8g.large': { usdPerHour: 0.07976, vcpus: 2, memoryGiB: 4, source: G },
    'c6i.large': { usdPerHour: 0.085, vcpus: 2, memoryGiB: 4, source: G },
    'c6i.xlarge': { usdPerHour: 0.17, vcpus: 4, memoryGiB: 8, source: G },
    'c6i.2xlarge': { usdPerHour: 0.34, vcpus: 8, memoryGiB: 16, source: G },
    'c6i.4xlarge': { usdPerHour: 0.68, vcpus: 16, memoryGiB: 32, source: G },
    'c6i.8xlarge': { usdPerHour: 1.36, vcpus: 32, memoryGiB: 64, source: G },
    'c7i.large': { usdPerHour: 0.08925, vcpus: 2, memoryGiB: 4, source: G },
    'c7i.xlarge': { usdPerHour: 0.1785, vcpus: 4, memoryGiB: 8, source: G },
    'c7i.2xlarge': { usdPerHour: 0.357, vcpus: 8, memoryGiB: 16, source: G },
    'c7i.4xlarge': { usdPerHour: 0.714, vcpus: 16, memoryGiB: 32, source: G },
    'm7g.large': { usdPerHour: 0.0816, vcpus: 2, memoryGiB: 8, source: G },
    'm7g.xlarge': { usdPerHour: 0.1632, vcpus: 4, memoryGiB: 16, source: G },
    'm7g.2xlarge': { usdPerHour: 0.3264, vcpus: 8, memoryGiB: 32, source: G },
    'm7g.4xlarge': { usdPerHour: 0.6528, vcpus: 16, memoryGiB: 64, source: G },
    'm7i.large': { usdPerHour: 0.1008, vcpus: 2, memoryGiB: 8, source: G },
    'm7i.xlarge': { usdPerHour: 0.2016, vcpus: 4, memoryGiB: 16, source: G },
    'm7i.2xlarge': { usdPerHour: 0.4032, vcpus: 8, memoryGiB: 32, source: G },
    'm7i.4xlarge': { usdPerHour: 0.8064, vcpus: 16, memoryGiB: 64, source: G },
  },
  ebsGp3PerGbMonth: { usd: 0.08, source: P },
  interfaceEndpointPerAzHour: { usd: 0.01, source: 'aws-privatelink-2026' },
  interfaceEndpointPerGb: { usd: 0.01, source: 'aws-privatelink-2026' },
  natGatewayPerHour: { usd: 0.045, source: X },
  natGatewayPerGb: { usd: 0.045, source: X },
  publicIpv4PerHour: { usd: 0.005, source: X },
  secretPerMonth: { usd: 0.4, source: P },
  nlbPerHour: { usd: 0.0225, source: 'nlb-public-2026' },
};

/**
 * The tables committed to the repository: the offline fallback (us-east-1 only). A region's prices
 * read at run time are never kept here: a command resolves them (`preparePrices`,
 * lib/cost/pricelist/command.ts) and passes the table down (`EstimateOptions.table`, `unpricedProblems`'
 * table, `PreviewOptions.table`): no process-wide table to forget or to leak between tests.
 */
export const PRICE_TABLES_COMMITTED: Readonly<Record<string, PriceTable>> = {
  'us-east-1': US_EAST_1,
};

export const DEFAULT_PRICE_REGION = 'us-east-1';
