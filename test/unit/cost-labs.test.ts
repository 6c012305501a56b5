/**
 * The shipped labs, costed by hand. Each expectation below is arithmetic on the us-east-1 price
 * table's numbers, written out (lib/cost/price-table.ts, as of 2026-11-21):
 *
 *   Aurora: db.t4g.medium 0.073 (2 vCPU) · db.r6g.large 0.26 (2) · db.r6g.2xlarge 1.038 (8) · db.r6g.4xlarge 2.076 (16) · db.r6g.8xlarge 4.152 (32)
 *   RDS Proxy 0.015 per vCPU-hour of the instances behind it (minimum 2 vCPU)
 *   EC2: c7g.large 0.0725 · c7g.xlarge 0.145 · c7g.2xlarge 0.29 · c7g.4xlarge 0.58
 *   per runner: 16 GB gp3 × 0.08 / 720 h, one public IPv4 × 0.005
 *   Aurora storage 10 GB × 0.10 / 720 h; I/O 0.2 M/h × 0.20; one secret 0.40 / 720 h
 *   RDS for PostgreSQL: db.t4g.micro 0.016 single-AZ, 0.032 Multi-AZ (2 vCPU); gp3 storage as provisioned
 *   × 0.115 / 720 h (Multi-AZ: primary and standby), no I/O charge; RDS Proxy billed on the instance's 2 vCPUs
 *   EC2 c7g.medium 0.0363 (runner and pooler host prices alike)
 *   per dedicated pooler host (PgBouncer or PgDoorman): its type + the same volume and address as a runner; a lab with
 *   any pooler has one more secret (0.40 / 720 h); a PgBouncer on the runners adds nothing
 *   existing VPC (labs/private.json, labs/existing-vpc.json): no public IPv4 on any host; without internet
 *   7 interface endpoints × 2 zones × 0.01 per endpoint-hour, and 0.05 GB/h × 0.01 per GB assumed through them
 *   burstable writer (Unlimited mode): $0 up to 2 vCPU × (100 % suite CPU − baseline) × the credit rate:
 *   db.t4g.micro (RDS, 10 %) 2 × 0.9 × 0.075 = 0.135 · db.t4g.medium (Aurora, 20 %) 2 × 0.8 × 0.09 = 0.144
 *
 * A lab added to labs/ without an expectation here fails the test: cost it by hand first.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadLabFile } from '../../lib/config/load';
import { estimateCost } from '../../lib/cost/estimate';

const LABS_DIR = join(__dirname, '..', '..', 'labs');

const PER_RUNNER = (16 * 0.08) / 720 + 0.005; // volume + public IPv4
const SHARED = (10 * 0.1) / 720 + 0.2 * 0.2 + 0.4 / 720; // Aurora storage + I/O + secret
/** RDS for PostgreSQL: provisioned gp3 storage (no I/O charge) + secret. */
const rdsShared = (storageGb: number): number => (storageGb * 0.115) / 720 + 0.4 / 720;

/** Surplus CPU credits of a burstable writer: from $0 (idle) to sustained suite load. */
const RDS_T4G_MICRO_CREDITS: [number, number] = [0, 2 * 0.9 * 0.075];
const AURORA_T4G_MEDIUM_CREDITS: [number, number] = [0, 2 * 0.8 * 0.09];

interface Expected {
  /** part → $/hour (or [low, high] for a range), for the lines that depend on the lab. */
  readonly lines: Readonly<Record<string, number | readonly [number, number]>>;
  readonly runners: number;
  /** Dedicated pooler hosts (volume + address each) and whether there is a pooler secret. */
  readonly poolerHosts?: number;
  readonly poolerSecret?: boolean;
  /** Storage, I/O and secret when not Aurora's SHARED (RDS for PostgreSQL). */
  readonly shared?: number;
  /** Hosts get a public IPv4 (the lab's own VPC). @default true */
  readonly publicIpv4?: boolean;
  /** The network lines (VPC endpoints: zone-hours and data), part → $/hour. */
  readonly network?: Readonly<Record<string, number>>;
}

const PRIVATE_ENDPOINTS =
  'VPC interface endpoints 7 × 2 zones (ssm, ssmmessages, ec2messages, secretsmanager, lambda, rds, cloudformation)';

const EXPECTED: Readonly<Record<string, Expected>> = {
  'default.json': {
    lines: {
      'Aurora writer db.t4g.medium': 0.073,
      'Aurora writer db.t4g.medium CPU credits (Unlimited mode)': AURORA_T4G_MEDIUM_CREDITS,
      'RDS Proxy pool100': 2 * 0.015,
      'Runners 1 × c7g.large': 0.0725,
    },
    runners: 1,
  },
  'e1-prepared-statements.json': {
    lines: {
      'Aurora writer db.t4g.medium': 0.073,
      'Aurora writer db.t4g.medium CPU credits (Unlimited mode)': AURORA_T4G_MEDIUM_CREDITS,
      'RDS Proxy pool100': 2 * 0.015,
      'Runners 1 × c7g.2xlarge': 0.29,
    },
    runners: 1,
  },
  'e2-client-sweep.json': {
    lines: {
      'RDS for PostgreSQL db.t4g.micro single-AZ': 0.016,
      'RDS for PostgreSQL db.t4g.micro CPU credits (Unlimited mode)': RDS_T4G_MICRO_CREDITS,
      'RDS Proxy pool100': 2 * 0.015,
      'Runners 1 × c7g.xlarge': 0.145,
    },
    runners: 1,
    shared: rdsShared(20),
  },
  'e3-connection-churn.json': {
    lines: {
      'Aurora writer db.r6g.large': 0.26,
      'RDS Proxy pool100': 2 * 0.015,
      'Runners 1 × c7g.large': 0.0725,
    },
    runners: 1,
  },
  'e4-pool-share.json': {
    lines: {
      'Aurora writer db.r6g.4xlarge': 2.076,
      'RDS Proxy pool50': 16 * 0.015,
      'RDS Proxy pool25': 16 * 0.015,
      'Runners 2 × c7g.2xlarge': 2 * 0.29,
    },
    runners: 2,
  },
  'e5-big-server.json': {
    lines: {
      'Aurora writer db.r6g.8xlarge': 4.152,
      'RDS Proxy pool100': 32 * 0.015,
      'Runners 2 × c7g.4xlarge': 2 * 0.58,
      'PgBouncer host bouncer c7g.xlarge': 0.145,
      'PgBouncer colocated on the runners': 0,
    },
    runners: 2,
    poolerHosts: 1,
    poolerSecret: true,
  },
  'own-workload.json': {
    lines: {
      'Aurora writer db.r6g.large': 0.26,
      'RDS Proxy proxy': 2 * 0.015,
      'Runners 2 × c7g.large': 2 * 0.0725,
      'PgBouncer host bouncer c7g.large': 0.0725,
    },
    runners: 2,
    poolerHosts: 1,
    poolerSecret: true,
  },
  'failover-aurora.json': {
    lines: {
      'Aurora writer db.t4g.medium': 0.073,
      'Aurora reader 1 db.t4g.medium': 0.073,
      'Aurora writer db.t4g.medium CPU credits (Unlimited mode)': AURORA_T4G_MEDIUM_CREDITS,
      // the proxy bills on the vCPUs of every instance behind it: writer and reader, 2 each
      'RDS Proxy pool100': 4 * 0.015,
      'Runners 1 × c7g.medium': 0.0363,
      'PgBouncer host bouncer c7g.large': 0.0725,
    },
    runners: 1,
    poolerHosts: 1,
    poolerSecret: true,
  },
  'failover-rds.json': {
    lines: {
      'RDS for PostgreSQL db.t4g.micro Multi-AZ': 0.032,
      'RDS for PostgreSQL db.t4g.micro CPU credits (Unlimited mode)': RDS_T4G_MICRO_CREDITS,
      'RDS Proxy pool100': 2 * 0.015,
      'Runners 1 × c7g.medium': 0.0363,
      'PgBouncer host bouncer c7g.large': 0.0725,
    },
    runners: 1,
    poolerHosts: 1,
    poolerSecret: true,
    // 20 GB on the primary and 20 GB on the standby
    shared: rdsShared(40),
  },
  'e6-poolers.json': {
    lines: {
      'Aurora writer db.r6g.2xlarge': 1.038,
      'RDS Proxy proxy40': 8 * 0.015,
      'Runners 2 × c7g.4xlarge': 2 * 0.58,
      'PgDoorman host doorman c7g.2xlarge': 0.29,
      'PgBouncer host bouncer1 c7g.2xlarge': 0.29,
      'PgBouncer host bouncer8 c7g.2xlarge': 0.29,
    },
    runners: 2,
    poolerHosts: 3,
    poolerSecret: true,
  },
  'existing-vpc.json': {
    lines: {
      'Aurora writer db.t4g.medium': 0.073,
      'Aurora writer db.t4g.medium CPU credits (Unlimited mode)': AURORA_T4G_MEDIUM_CREDITS,
      'RDS Proxy pool100': 2 * 0.015,
      'Runners 1 × c7g.large': 0.0725,
    },
    runners: 1,
    publicIpv4: false,
    network: {},
  },
  'private.json': {
    lines: {
      'Aurora writer db.t4g.medium': 0.073,
      'Aurora writer db.t4g.medium CPU credits (Unlimited mode)': AURORA_T4G_MEDIUM_CREDITS,
      'RDS Proxy pool100': 2 * 0.015,
      'Runners 1 × c7g.large': 0.0725,
      'PgBouncer host bouncer c7g.medium': 0.0363,
    },
    runners: 1,
    poolerHosts: 1,
    poolerSecret: true,
    publicIpv4: false,
    network: {
      [PRIVATE_ENDPOINTS]: 7 * 2 * 0.01,
      'VPC interface endpoint data 0.05 GB/h (assumed)': 0.05 * 0.01,
    },
  },
  'pocket.json': {
    lines: {
      'RDS for PostgreSQL db.t4g.micro single-AZ': 0.016,
      'RDS for PostgreSQL db.t4g.micro CPU credits (Unlimited mode)': RDS_T4G_MICRO_CREDITS,
      'RDS Proxy pool100': 2 * 0.015,
      // A spot runner is priced at its on-demand ceiling.
      'Runners 1 × c7g.medium (spot: on-demand as ceiling)': 0.0363,
    },
    runners: 1,
    shared: rdsShared(20),
  },
};

const low = (v: number | readonly [number, number]): number => (typeof v === 'number' ? v : v[0]);
const high = (v: number | readonly [number, number]): number => (typeof v === 'number' ? v : v[1]);

const labFiles = readdirSync(LABS_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

test('every lab in labs/ has a hand-costed expectation', () => {
  expect(labFiles.length).toBeGreaterThan(0);
  expect(labFiles.filter((f) => !(f in EXPECTED))).toEqual([]);
});

describe.each(labFiles)('%s', (file) => {
  const expected = EXPECTED[file];
  const lab = loadLabFile(join(LABS_DIR, file));
  const estimate = estimateCost(lab);

  test('each lab-specific line matches the hand arithmetic', () => {
    if (!expected) throw new Error(`no expectation for ${file}`);
    for (const [part, usd] of Object.entries(expected.lines)) {
      const line = estimate.lines.find((l) => l.part === part);
      expect({ part, found: line !== undefined }).toEqual({ part, found: true });
      expect(line?.usdPerHourMin).toBeCloseTo(low(usd), 9);
      expect(line?.usdPerHourMax).toBeCloseTo(high(usd), 9);
    }
    // Nothing database/proxy/runner-instance-priced beyond what is listed.
    const priced = estimate.lines.filter(
      (l) =>
        l.category === 'database' ||
        l.category === 'proxy' ||
        l.category === 'runner' ||
        l.category === 'pooler',
    );
    expect(priced.map((l) => l.part).sort()).toEqual(Object.keys(expected.lines).sort());
  });

  test('network lines: public addresses, or the VPC endpoints by zone-hour and by GB', () => {
    if (!expected) throw new Error(`no expectation for ${file}`);
    const network = estimate.lines.filter((l) => l.category === 'network');
    const hosts = expected.runners + (expected.poolerHosts ?? 0);
    const want =
      expected.network ??
      (expected.publicIpv4 === false ? {} : { [`Public IPv4 × ${hosts}`]: hosts * 0.005 });
    expect(network.map((l) => l.part).sort()).toEqual(Object.keys(want).sort());
    for (const [part, usd] of Object.entries(want))
      expect(network.find((l) => l.part === part)?.usdPerHourMax).toBeCloseTo(usd, 9);
  });

  test('totals per hour, 8-hour day and 30-day month', () => {
    if (!expected) throw new Error(`no expectation for ${file}`);
    const perHost = expected.publicIpv4 === false ? PER_RUNNER - 0.005 : PER_RUNNER;
    const network = Object.values(expected.network ?? {}).reduce((a, b) => a + b, 0);
    const rest =
      network +
      (expected.runners + (expected.poolerHosts ?? 0)) * perHost +
      (expected.shared ?? SHARED) +
      (expected.poolerSecret ? 0.4 / 720 : 0);
    const values = Object.values(expected.lines);
    const hourMin = values.reduce<number>((a, b) => a + low(b), 0) + rest;
    const hourMax = values.reduce<number>((a, b) => a + high(b), 0) + rest;
    expect(estimate.totals.perHourUsdMax).toBeCloseTo(hourMax, 6);
    expect(estimate.totals.perHourUsdMin).toBeCloseTo(hourMin, 6);
    expect(estimate.totals.perDayUsdMax).toBeCloseTo(hourMax * 8, 5);
    expect(estimate.totals.perMonthUsdMax).toBeCloseTo(hourMax * 720, 4);
  });
});
