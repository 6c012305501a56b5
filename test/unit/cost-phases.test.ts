/**
 * The phases of estimateCost, each alone (lib/cost/estimate.ts): what each resource bills, with
 * figures written out by hand from the us-east-1 price table (c7g.large $0.0725/h, EBS gp3
 * $0.08/GB-month, public IPv4 $0.005/h, secret $0.40/month, RDS Proxy $0.015/vCPU-hour minimum 2,
 * db.t4g.micro $0.016/h single-AZ and $0.032/h Multi-AZ; month = 720 h).
 */
import { validateLab } from '../../lib/config/validate';
import type { LabConfig } from '../../lib/config/types';
import {
  databaseLines,
  databaseStorageLines,
  DEFAULT_USAGE,
  networkLines,
  poolerLines,
  priceTableFor,
  proxyLines,
  runnerLines,
  secretLines,
  type CostInputs,
  type CostLine,
} from '../../lib/cost/estimate';
import { LAB_DEPLOYMENT_SHAPE, type DeploymentShape } from '../../lib/cost/shape';

function inputs(raw: Record<string, unknown>, shape: Partial<DeploymentShape> = {}): CostInputs {
  const v = validateLab({ name: 'phases', runners: { instanceType: 'c7g.large', count: 2 }, ...raw });
  if (!v.ok) throw new Error(`test lab invalid: ${JSON.stringify(v.problems)}`);
  const lab: LabConfig = v.lab;
  return {
    lab,
    table: priceTableFor('us-east-1'),
    usage: DEFAULT_USAGE,
    shape: { ...LAB_DEPLOYMENT_SHAPE, ...shape },
  };
}

const parts = (lines: readonly CostLine[]): string[] => lines.map((l) => l.part);
const POSTGRES = { postgres: { instanceClass: 'db.t4g.micro', multiAz: true } };
const POOLERS = {
  poolers: [
    { name: 'host', kind: 'pgbouncer', placement: 'dedicated', instanceType: 'c7g.large' },
    { name: 'shared', kind: 'pgbouncer', placement: 'on-runners' },
  ],
};

describe('cost phases, each alone', () => {
  test('databaseLines: a Multi-AZ RDS for PostgreSQL instance and its CPU credits, nothing else', () => {
    // WHEN
    const lines = databaseLines(inputs({ ...POSTGRES, proxies: [{ name: 'p' }] }));
    // THEN the instance at the Multi-AZ rate; the proxy is not this phase's
    expect(parts(lines)).toEqual([
      'RDS for PostgreSQL db.t4g.micro Multi-AZ',
      'RDS for PostgreSQL db.t4g.micro CPU credits (Unlimited mode)',
    ]);
    expect(lines[0]?.usdPerHourMax).toBeCloseTo(0.032, 9);
  });

  test('proxyLines: one line per proxy, the standby not counted (2 vCPU, the minimum)', () => {
    const lines = proxyLines(inputs({ ...POSTGRES, proxies: [{ name: 'a' }, { name: 'b' }] }));
    expect(parts(lines)).toEqual(['RDS Proxy a', 'RDS Proxy b']);
    expect(lines.map((l) => l.usdPerHourMax)).toEqual([0.03, 0.03]);
  });

  test('runnerLines: the runners and their root volumes', () => {
    const lines = runnerLines(inputs(POSTGRES));
    expect(parts(lines)).toEqual(['Runners 2 × c7g.large', 'Runner EBS gp3 2 × 16 GB']);
    expect(lines[0]?.usdPerHourMax).toBeCloseTo(2 * 0.0725, 9);
    expect(lines[1]?.usdPerHourMax).toBeCloseTo((32 * 0.08) / 720, 9);
  });

  test('poolerLines: a dedicated host bills an instance and a volume, one on the runners $0', () => {
    const lines = poolerLines(inputs({ ...POSTGRES, ...POOLERS }));
    expect(parts(lines)).toEqual([
      'PgBouncer host host c7g.large',
      'PgBouncer shared on the runners',
      `Pooler host EBS gp3 1 × ${LAB_DEPLOYMENT_SHAPE.poolerHostRootVolumeGb} GB`,
    ]);
    expect(lines.map((l) => l.usdPerHourMax).slice(0, 2)).toEqual([0.0725, 0]);
  });

  test('poolerLines: no pooler, no line', () => {
    expect(poolerLines(inputs(POSTGRES))).toEqual([]);
  });

  test.each([
    // shape, addresses
    [{}, 3], // two runners + one pooler host
    [{ poolerHostsHavePublicIpv4: false }, 2],
    [{ runnersHavePublicIpv4: false, natGateways: 1 }, 2], // NAT EIP + pooler host
  ])(
    'networkLines: public IPv4 counts NAT, runners and pooler hosts as the shape says (%j → %i)',
    (shape, ips) => {
      const lines = networkLines(inputs({ ...POSTGRES, ...POOLERS }, shape));
      const ipv4 = lines.find((l) => l.part.startsWith('Public IPv4'));
      expect(ipv4?.quantityMax).toBe(ips);
      expect(ipv4?.usdPerHourMax).toBeCloseTo(ips * 0.005, 9);
    },
  );

  test('databaseStorageLines: RDS provisioned storage doubles for Multi-AZ; Aurora is two assumed lines', () => {
    const rds = databaseStorageLines(inputs(POSTGRES));
    expect(parts(rds)).toEqual(['RDS gp3 storage 20 GB × 2 (primary + standby)']);
    const aurora = databaseStorageLines(inputs({ aurora: { instanceClass: 'db.t4g.medium' } }));
    expect(aurora.map((l) => [l.part, l.basis])).toEqual([
      ['Aurora storage 10 GB (assumed)', 'assumption'],
      ['Aurora I/O 0.2 M requests/h (assumed)', 'assumption'],
    ]);
  });

  test.each([
    [{}, 1],
    [POOLERS, 2], // the pooler admin secret
  ])('secretLines: %j → %i secret(s)', (raw, n) => {
    const [line] = secretLines(inputs({ ...POSTGRES, ...raw }));
    expect(line?.part).toBe(`Secrets Manager × ${n}`);
    expect(line?.usdPerHourMax).toBeCloseTo((n * 0.4) / 720, 9);
  });
});
