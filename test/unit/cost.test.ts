/**
 * estimateCost: every expected figure is written out from the price table's numbers by hand
 * (us-east-1, lib/cost/price-table.ts as of 2026-11-21), never by calling estimateCost again.
 *
 *   db.t4g.medium $0.073/h (2 vCPU)   db.r6g.large $0.260/h (2 vCPU)   db.r6g.4xlarge $2.076/h (16 vCPU)
 *   serverless v2 $0.12/ACU-h         RDS Proxy $0.015/vCPU-h (min 2) or $0.015/ACU-h (min 8)
 *   c7g.large $0.0725/h               EBS gp3 $0.08/GB-month          interface endpoint $0.01/AZ-h
 *   Aurora storage $0.10/GB-month     Aurora I/O $0.20/million        secret $0.40/month
 *   public IPv4 $0.005/h              NAT gateway $0.045/h
 *   month = 720 h; default assumptions: 10 GB storage, 0.2 M I/O per hour; the stack (network.ts,
 *   runner-fleet.ts): 16 GB runner volumes, a public IPv4 per runner, no NAT, no interface endpoints.
 */
import { UsageError } from '../../lib/core/errors';
import * as path from 'node:path';
import { loadLabFile } from '../../lib/config/load';
import { validateLab } from '../../lib/config/validate';
import type { LabConfig } from '../../lib/config/types';
import { estimateCost } from '../../lib/cost/estimate';
import type { CostEstimate, CostLine } from '../../lib/cost/estimate';
import { formatCostTable } from '../../lib/cost/format';
import { auroraOnlyFlagsNote } from '../../scripts/commands/cost';
import { runCliInProcess } from '../helpers/cli';

function lab(raw: Record<string, unknown>): LabConfig {
  const v = validateLab({ name: 'unit', ...raw });
  if (!v.ok) throw new Error(`test lab invalid: ${JSON.stringify(v.problems)}`);
  return v.lab;
}

/** The line whose part is `partPrefix` exactly, else the one line starting with it. */
function line(e: CostEstimate, partPrefix: string): CostLine {
  const exact = e.lines.find((l) => l.part === partPrefix);
  if (exact) return exact;
  const found = e.lines.filter((l) => l.part.startsWith(partPrefix));
  if (found.length !== 1)
    throw new Error(
      `expected one line starting "${partPrefix}", got ${found.map((l) => l.part).join(' | ') || 'none'}`,
    );
  return found[0] as CostLine;
}

// Parts that do not depend on the database shape, per hour, with the default assumptions:
const EBS_16GB = (16 * 0.08) / 720; //          one runner's 16 GB root volume
const IPV4 = 0.005; //                          one runner's public IPv4
const STORAGE_10GB = (10 * 0.1) / 720;
const IO_0_2M = 0.2 * 0.2;
const SECRET = 0.4 / 720;

describe('estimateCost, provisioned', () => {
  test('one t4g.medium writer, one proxy, one c7g.large runner: each line and the totals', () => {
    // GIVEN
    const l = lab({
      aurora: { instanceClass: 'db.t4g.medium' },
      proxies: [{ name: 'pool100' }],
      runners: { instanceType: 'c7g.large', count: 1 },
    });
    // WHEN
    const e = estimateCost(l);
    // THEN
    expect(e.region).toBe('us-east-1');
    expect(e.regionFrom).toBe('default');
    expect(line(e, 'Aurora writer db.t4g.medium').usdPerHourMax).toBeCloseTo(0.073, 6);
    const proxy = line(e, 'RDS Proxy pool100');
    expect(proxy.quantityMax).toBe(2); // 1 instance × 2 vCPU
    expect(proxy.usdPerHourMax).toBeCloseTo(2 * 0.015, 6);
    expect(line(e, 'Runners 1 × c7g.large').usdPerHourMax).toBeCloseTo(0.0725, 6);
    expect(line(e, 'Runner EBS').usdPerHourMax).toBeCloseTo(EBS_16GB, 6);
    expect(line(e, 'Public IPv4 × 1').usdPerHourMax).toBeCloseTo(IPV4, 6);
    expect(e.lines.some((x) => /NAT|interface endpoints/.test(x.part))).toBe(false);
    expect(line(e, 'Aurora storage').usdPerHourMax).toBeCloseTo(STORAGE_10GB, 6);
    expect(line(e, 'Aurora I/O').usdPerHourMax).toBeCloseTo(IO_0_2M, 6);
    expect(line(e, 'Secrets Manager').usdPerHourMax).toBeCloseTo(SECRET, 6);
    // db.t4g.medium runs in Unlimited mode: $0 idle, up to 2 vCPU × (100 − 20 %) × $0.09 under a suite
    const credits = line(e, 'Aurora writer db.t4g.medium CPU credits (Unlimited mode)');
    expect(credits).toMatchObject({
      basis: 'assumption',
      unit: 'vCPU-hour',
      quantityMin: 0,
      quantityMax: 1.6,
    });
    expect(credits.usdPerHourMin).toBe(0);
    expect(credits.usdPerHourMax).toBeCloseTo(2 * 0.8 * 0.09, 9);
    const hour = 0.073 + 0.03 + 0.0725 + EBS_16GB + IPV4 + STORAGE_10GB + IO_0_2M + SECRET;
    expect(e.totals.perHourUsdMin).toBeCloseTo(hour, 5);
    expect(e.totals.perHourUsdMax).toBeCloseTo(hour + 0.144, 5);
    expect(e.totals.perDayUsdMax).toBeCloseTo((hour + 0.144) * 8, 4);
    expect(e.totals.perMonthUsdMax).toBeCloseTo((hour + 0.144) * 720, 3);
  });

  test('a memory-optimized class has no CPU credits line; readers add none either', () => {
    const e = estimateCost(lab({ aurora: { instanceClass: 'db.r6g.large', readers: 1 } }));
    expect(e.lines.some((x) => x.part.includes('CPU credits'))).toBe(false);
    const t = estimateCost(lab({ aurora: { instanceClass: 'db.t4g.large', readers: 2 } }));
    // only the writer is loaded by a suite: 2 vCPU × (100 − 30 %) × $0.09
    expect(
      t.lines.filter((x) => x.part.includes('CPU credits')).map((x) => [x.part, x.usdPerHourMax]),
    ).toEqual([['Aurora writer db.t4g.large CPU credits (Unlimited mode)', 2 * 0.7 * 0.09]]);
  });

  test('readers: a line per instance, and the proxy bills the vCPUs of writer + readers', () => {
    // GIVEN two readers on db.r6g.large (2 vCPU each) and two proxies
    const l = lab({
      aurora: { instanceClass: 'db.r6g.large', readers: 2 },
      proxies: [{ name: 'a' }, { name: 'b' }],
    });
    // WHEN
    const e = estimateCost(l);
    // THEN
    const db = e.lines.filter((x) => x.category === 'database');
    expect(db.map((x) => x.part)).toEqual([
      'Aurora writer db.r6g.large',
      'Aurora reader 1 db.r6g.large',
      'Aurora reader 2 db.r6g.large',
    ]);
    for (const d of db) expect(d.usdPerHourMax).toBeCloseTo(0.26, 6);
    for (const name of ['RDS Proxy a', 'RDS Proxy b']) {
      const p = line(e, name);
      expect(p.quantityMax).toBe(6); // 3 instances × 2 vCPU
      expect(p.usdPerHourMax).toBeCloseTo(6 * 0.015, 6);
    }
  });

  test('a large class: the proxy bills 16 vCPU, not the 2-vCPU minimum', () => {
    const e = estimateCost(lab({ aurora: { instanceClass: 'db.r6g.4xlarge' }, proxies: [{ name: 'p' }] }));
    expect(line(e, 'Aurora writer').usdPerHourMax).toBeCloseTo(2.076, 6);
    expect(line(e, 'RDS Proxy p').usdPerHourMax).toBeCloseTo(16 * 0.015, 6);
  });

  test('no proxy: no proxy line', () => {
    const e = estimateCost(lab({ proxies: [] }));
    expect(e.lines.some((x) => x.category === 'proxy')).toBe(false);
  });

  test('runner count multiplies the instance and volume lines', () => {
    const e = estimateCost(lab({ runners: { instanceType: 'c7g.large', count: 4 } }));
    expect(line(e, 'Runners 4 × c7g.large').usdPerHourMax).toBeCloseTo(4 * 0.0725, 6);
    expect(line(e, 'Runner EBS').usdPerHourMax).toBeCloseTo(4 * EBS_16GB, 6);
    expect(line(e, 'Public IPv4 × 4').usdPerHourMax).toBeCloseTo(4 * IPV4, 6);
  });
});

describe('estimateCost, serverless v2', () => {
  test('ACU range per instance and proxy billed on ACUs with the 8-ACU minimum', () => {
    // GIVEN 0.5–4 ACU, one reader, one proxy
    const l = lab({
      aurora: { serverless: { minCapacity: 0.5, maxCapacity: 4 }, readers: 1 },
      proxies: [{ name: 'p' }],
    });
    // WHEN
    const e = estimateCost(l);
    // THEN each instance 0.5 × 0.12 = 0.06 to 4 × 0.12 = 0.48
    const db = e.lines.filter((x) => x.category === 'database');
    expect(db).toHaveLength(2);
    for (const d of db) {
      expect(d.usdPerHourMin).toBeCloseTo(0.06, 6);
      expect(d.usdPerHourMax).toBeCloseTo(0.48, 6);
    }
    // proxy: 2 instances × 0.5–4 ACU = 1–8 ACU, billed at least 8 → 8 × 0.015 = 0.12 both ends
    const p = line(e, 'RDS Proxy p');
    expect(p.usdPerHourMin).toBeCloseTo(0.12, 6);
    expect(p.usdPerHourMax).toBeCloseTo(0.12, 6);
    const fixed = 0.12 + 0.0725 + EBS_16GB + IPV4 + STORAGE_10GB + IO_0_2M + SECRET;
    expect(e.totals.perHourUsdMin).toBeCloseTo(2 * 0.06 + fixed, 5);
    expect(e.totals.perHourUsdMax).toBeCloseTo(2 * 0.48 + fixed, 5);
    expect(e.totals.perMonthUsdMax).toBeCloseTo((2 * 0.48 + fixed) * 720, 3);
  });

  test.each([
    // minCapacity 0 (auto-pause): 0 without a proxy; with one, the proxy's connections keep it at 0.5 ACU
    [[], 0],
    [[{ name: 'p' }], 0.5 * 0.12],
  ])('minCapacity 0 with proxies %j: low end $%s/h per instance', (proxies, lowUsd) => {
    const e = estimateCost(lab({ aurora: { serverless: { minCapacity: 0, maxCapacity: 2 } }, proxies }));
    const writer = line(e, 'Aurora writer serverless v2');
    expect(writer.usdPerHourMin).toBeCloseTo(lowUsd, 9);
    expect(writer.usdPerHourMax).toBeCloseTo(2 * 0.12, 9);
  });

  test('above the minimum the proxy follows the ACUs: 1 instance × 2–16 ACU', () => {
    const e = estimateCost(
      lab({ aurora: { serverless: { minCapacity: 2, maxCapacity: 16 } }, proxies: [{ name: 'p' }] }),
    );
    const p = line(e, 'RDS Proxy p');
    expect(p.usdPerHourMin).toBeCloseTo(8 * 0.015, 6);
    expect(p.usdPerHourMax).toBeCloseTo(16 * 0.015, 6);
  });
});

describe('estimateCost, errors and options', () => {
  test.each([
    [
      'an Aurora class the table has no price for',
      { aurora: { instanceClass: 'db.x2g.large' } },
      /unknown Aurora instance class db\.x2g\.large/,
    ],
    [
      'a runner type the table has no price for',
      { runners: { instanceType: 'm5.large' } },
      /unknown runner instance type m5\.large/,
    ],
  ])('%s is an error naming it', (_what, raw, pattern) => {
    const l = lab(raw);
    expect(() => estimateCost(l)).toThrow(UsageError);
    expect(() => estimateCost(l)).toThrow(pattern);
  });

  test('a region without prices is an error naming the regions that have them', () => {
    expect(() => estimateCost(lab({}), { region: 'eu-west-1' })).toThrow(
      /region eu-west-1 cannot be priced, .*or for us-east-1 the committed table/,
    );
  });

  test("the lab's region is used, and the flag wins over it", () => {
    expect(() => estimateCost(lab({ region: 'ap-southeast-2' }))).toThrow(/ap-southeast-2/);
    const e = estimateCost(lab({ region: 'ap-southeast-2' }), { region: 'us-east-1' });
    expect(e.region).toBe('us-east-1');
    expect(e.regionFrom).toBe('flag');
    expect(estimateCost(lab({ region: 'us-east-1' })).regionFrom).toBe('lab');
  });

  test('a network with interface endpoints and a NAT gateway bills endpoints × AZs, the gateway and its address', () => {
    // GIVEN a shape with 6 endpoints in 2 AZs, one NAT gateway, runners without public addresses
    const shape = {
      availabilityZones: 2,
      interfaceEndpoints: ['ssm', 'ssmmessages', 'ec2messages', 'secretsmanager', 'lambda', 'rds'],
      natGateways: 1,
      runnersHavePublicIpv4: false,
      runnerRootVolumeGb: 16,
      poolerHostRootVolumeGb: 16,
      poolerHostsHavePublicIpv4: true,
      secrets: 1,
      poolerSecrets: 1,
    };
    // WHEN
    const e = estimateCost(lab({ runners: { instanceType: 'c7g.large', count: 3 } }), { shape });
    // THEN 6 × 2 × 0.01 = 0.12; NAT 0.045; one EIP 0.005 (the runners have none)
    expect(line(e, 'VPC interface endpoints').usdPerHourMax).toBeCloseTo(0.12, 6);
    expect(line(e, 'NAT gateway × 1').usdPerHourMax).toBeCloseTo(0.045, 6);
    expect(line(e, 'Public IPv4 × 1').usdPerHourMax).toBeCloseTo(0.005, 6);
  });

  test('poolers: a dedicated host is its own line with its volume and address; on the runners adds nothing', () => {
    // GIVEN one pooler on a c7g.xlarge and one on the runners
    const base = estimateCost(lab({}));
    const e = estimateCost(
      lab({
        poolers: [
          {
            name: 'bouncer',
            kind: 'pgbouncer',
            placement: 'dedicated',
            instanceType: 'c7g.xlarge',
            processes: 4,
          },
          { name: 'near', kind: 'pgbouncer', placement: 'on-runners' },
        ],
      }),
    );
    // THEN the host: 1 × $0.145/h, in its own category
    const host = line(e, 'PgBouncer host bouncer c7g.xlarge');
    expect(host).toMatchObject({
      category: 'pooler',
      quantityMin: 1,
      unitPriceUsd: 0.145,
      basis: 'price-table',
    });
    expect(host.usdPerHourMax).toBeCloseTo(0.145, 6);
    expect(host.note).toContain('4 PgBouncer processes');
    // its 16 GB gp3 root volume, one more public IPv4 and the admin secret
    expect(line(e, 'Pooler host EBS gp3 1 × 16 GB').usdPerHourMax).toBeCloseTo((16 * 0.08) / 720, 9);
    expect(line(e, 'Public IPv4 × 2').note).toContain('1 pooler host(s)');
    expect(line(e, 'Secrets Manager × 2').usdPerHourMax).toBeCloseTo((2 * 0.4) / 720, 9);
    // on the runners: a line that says so, at $0
    const near = line(e, 'PgBouncer near on the runners');
    expect(near.usdPerHourMax).toBe(0);
    expect(near.note).toMatch(/no extra cost: it runs on the runners/);
    // and the total grows by exactly those parts
    expect(e.totals.perHourUsdMax - base.totals.perHourUsdMax).toBeCloseTo(
      0.145 + (16 * 0.08) / 720 + 0.005 + 0.4 / 720,
      9,
    );
  });

  test('a pooler host type without a price is refused naming it', () => {
    expect(() =>
      estimateCost(
        lab({
          poolers: [{ name: 'b', kind: 'pgbouncer', placement: 'dedicated', instanceType: 'c7g.huge' }],
        }),
      ),
    ).toThrow(/unknown pooler host instance type c7g\.huge: no us-east-1 price/);
  });

  test('usage assumptions change only their own lines', () => {
    const e = estimateCost(lab({}), {
      usage: { auroraStorageGb: 100, auroraIoMillionsPerHour: 3, suiteCpuPercent: 50 },
    });
    expect(line(e, 'Aurora storage 100 GB').usdPerHourMax).toBeCloseTo((100 * 0.1) / 720, 6);
    expect(line(e, 'Aurora I/O 3 M').usdPerHourMax).toBeCloseTo(3 * 0.2, 6);
    expect(line(e, 'Aurora I/O').basis).toBe('assumption');
    expect(line(e, 'Aurora writer db.t4g.medium').basis).toBe('price-table');
    // 2 vCPU × (50 − 20 %) × $0.09
    expect(line(e, 'Aurora writer db.t4g.medium CPU credits').usdPerHourMax).toBeCloseTo(2 * 0.3 * 0.09, 9);
    // at or under the baseline there is no surplus to bill
    const idle = estimateCost(lab({}), { usage: { suiteCpuPercent: 20 } });
    expect(line(idle, 'Aurora writer db.t4g.medium CPU credits').usdPerHourMax).toBe(0);
  });

  test("the lab's budget rides along for checkBudget", () => {
    expect(estimateCost(lab({ budget: { maxHourlyUsd: 1.5 } })).labBudgetMaxHourlyUsd).toBe(1.5);
    expect(estimateCost(lab({})).labBudgetMaxHourlyUsd).toBeNull();
  });

  test('every line cites a source listed in the estimate', () => {
    const e = estimateCost(lab({ proxies: [{ name: 'p' }] }));
    const ids = new Set(e.sources.map((s) => s.id));
    for (const l of e.lines) expect(ids.has(l.source)).toBe(true);
  });
});

describe('formatCostTable', () => {
  test('prints every part, the three totals and marks assumed lines', () => {
    // GIVEN
    const e = estimateCost(
      lab({ aurora: { serverless: { minCapacity: 0.5, maxCapacity: 4 } }, proxies: [{ name: 'pool100' }] }),
    );
    // WHEN
    const text = formatCostTable(e);
    // THEN
    for (const l of e.lines) expect(text).toContain(l.part);
    expect(text).toMatch(/Aurora I\/O .*\(assumed\) \*/);
    expect(text).toMatch(/Total per hour: +\$\d+\.\d{4}–\d+\.\d{4}/);
    expect(text).toMatch(/Total per 8-hour day: +\$/);
    expect(text).toMatch(/Total per 30-day month \(720 h\): \$/);
    expect(text).toContain('as of 2026-11-21');
  });

  test.each([
    [{}, {}, /region from the default; pass --region/],
    [{ region: 'us-east-1' }, {}, /region from the lab's region/],
    [{}, { region: 'us-east-1' }, /region from --region/],
    [{}, { region: 'us-east-1', regionFrom: 'deploy' as const }, /region from the deploy environment/],
  ])('the header says where the price region came from (lab %j, options %j)', (raw, opts, expected) => {
    expect(formatCostTable(estimateCost(lab(raw), opts)).split('\n')[0]).toMatch(expected);
  });
});

describe('RDS for PostgreSQL', () => {
  const ROOT = path.join(__dirname, '..', '..');
  const fromFile = (rel: string): LabConfig => loadLabFile(path.join(ROOT, rel));
  const sum = (e: CostEstimate): number => e.lines.reduce((s, l) => s + l.usdPerHourMin, 0);

  test('labs/pocket.json is under $0.10/h idle; sustained suite load adds the Unlimited-mode CPU credits', () => {
    const e = estimateCost(fromFile('labs/pocket.json'));
    // db.t4g.micro 0.016 + proxy 2 vCPU × 0.015 + c7g.medium 0.0363 + runner EBS 16 GB × 0.08 / 720
    // + public IPv4 0.005 + gp3 20 GB × 0.115 / 720 + 1 secret × 0.4 / 720
    const byHand = 0.016 + 0.03 + 0.0363 + (16 * 0.08) / 720 + 0.005 + (20 * 0.115) / 720 + 0.4 / 720;
    expect(e.totals.perHourUsdMin).toBeCloseTo(byHand, 9);
    expect(sum(e)).toBeCloseTo(e.totals.perHourUsdMin, 9);
    expect(e.totals.perHourUsdMin).toBeLessThan(0.1);
    // db.t4g.micro, 10 % baseline per vCPU, Unlimited mode: 2 vCPU × (100 − 10 %) × $0.075/vCPU-hour
    // = $0.135/h under sustained load — more than the whole lab costs idle
    const credits = line(e, 'RDS for PostgreSQL db.t4g.micro CPU credits (Unlimited mode)');
    expect(credits).toMatchObject({
      basis: 'assumption',
      quantityMin: 0,
      quantityMax: 1.8,
      unitPriceUsd: 0.075,
    });
    expect(credits.source).toBe('rds-cpu-credits-2026');
    expect(credits.usdPerHourMax).toBeCloseTo(0.135, 9);
    expect(credits.usdPerHourMax).toBeGreaterThan(byHand);
    expect(e.totals.perHourUsdMax).toBeCloseTo(byHand + 0.135, 9);
    expect(e.assumptions.join('\n')).toMatch(/Unlimited mode: CPU credits from \$0 .* 100 % CPU/);
    expect(e.lines.find((l) => l.category === 'proxy')).toMatchObject({ quantityMin: 2, unit: 'vCPU-hour' });
    expect(e.lines.some((l) => l.part.startsWith('Aurora'))).toBe(false);
  });

  test('Multi-AZ bills the Multi-AZ instance rate and storage twice; the proxy still bills one instance', () => {
    const e = estimateCost(fromFile('test/fixtures/labs/pocket-multi-az.json'));
    expect(e.lines.find((l) => l.category === 'database')).toMatchObject({
      part: 'RDS for PostgreSQL db.t4g.small Multi-AZ',
      unitPriceUsd: 0.064,
      usdPerHourMin: 0.064,
    });
    const storage = e.lines.find((l) => l.part.startsWith('RDS gp3 storage'));
    expect(storage?.usdPerHourMin).toBeCloseTo((30 * 2 * 0.115) / 720, 9);
    expect(e.lines.find((l) => l.category === 'proxy')?.quantityMin).toBe(2);
  });

  test('a class without a sourced price is refused by name, not guessed', () => {
    expect(() => estimateCost(lab({ postgres: { instanceClass: 'db.m7g.large' } }))).toThrow(
      /unknown RDS for PostgreSQL instance class db\.m7g\.large: no us-east-1 price/,
    );
  });
});

describe('usage flags and the assumption footnote', () => {
  const ROOT = path.join(__dirname, '..', '..');
  const POCKET = path.join(ROOT, 'labs', 'pocket.json');
  const DEFAULT = path.join(ROOT, 'labs', 'default.json');

  test.each([
    ['an Aurora lab (assumed storage, I/O and CPU credits)', DEFAULT, false, true],
    ['an RDS for PostgreSQL lab (assumed CPU credits)', POCKET, false, true],
    ['an estimate without assumed lines', POCKET, true, false],
  ])(
    'the "* usage assumed" footnote is printed only when a line is marked *: %s',
    (_what, file, dropAssumed, marked) => {
      // GIVEN the estimate of a shipped lab (or the same without its assumed lines)
      const full = estimateCost(loadLabFile(file));
      const e = dropAssumed ? { ...full, lines: full.lines.filter((l) => l.basis !== 'assumption') } : full;
      // WHEN it is printed
      const text = formatCostTable(e);
      // THEN the footnote is there exactly when a line carries the mark
      expect(e.lines.some((l) => l.basis === 'assumption')).toBe(marked);
      expect(text.includes('* usage assumed, see below.')).toBe(marked);
      expect(/ \* +\d/.test(text)).toBe(marked);
    },
  );

  test.each([
    [{ storageGb: '500' }, /^note: --storage-gb applies to Aurora only and was ignored: lab "pocket"/],
    [{ ioMillionsPerHour: '5' }, /^note: --io-millions-per-hour applies to Aurora only/],
    [{ storageGb: '500', ioMillionsPerHour: '5' }, /^note: --storage-gb and --io-millions-per-hour apply/],
  ])('an RDS for PostgreSQL lab with Aurora usage flags %j gets a note', (flags, expected) => {
    expect(auroraOnlyFlagsNote(loadLabFile(POCKET), flags)).toMatch(expected);
  });

  test('no note on an Aurora lab, nor without the flags', () => {
    expect(auroraOnlyFlagsNote(loadLabFile(DEFAULT), { storageGb: '500' })).toBeNull();
    expect(auroraOnlyFlagsNote(loadLabFile(POCKET), {})).toBeNull();
  });

  test('through the CLI: the note goes to stderr, the estimate is unchanged by the ignored flags', async () => {
    // GIVEN the pocket lab priced with and without the Aurora-only flags
    const plain = await runCliInProcess(['cost', POCKET]);
    const flagged = await runCliInProcess([
      'cost',
      POCKET,
      '--storage-gb',
      '500',
      '--io-millions-per-hour',
      '5',
    ]);
    // THEN both succeed, print the same table, and only the flagged run says the flags were ignored
    expect([plain.code, flagged.code]).toEqual([0, 0]);
    expect(flagged.out).toBe(plain.out);
    // (stderr carries the date of the prices, as every priced output does)
    expect(plain.err).toMatch(/^us-east-1 prices as of \d{4}-\d{2}-\d{2} \([^)]*\)\n$/);
    expect(flagged.err).toMatch(
      /--storage-gb and --io-millions-per-hour apply to Aurora only and were ignored/,
    );
  });
});

describe('Aurora CPU credits (issue 37 item 9)', () => {
  const ROOT = path.join(__dirname, '..', '..');
  const fromFile = (rel: string): LabConfig => loadLabFile(path.join(ROOT, rel));
  const CREDITS = 'Aurora writer db.t4g.medium CPU credits (Unlimited mode)';

  test("Aurora's credit rate has no AWS source: its line says so (unsourced, †); RDS's, AWS's own, does not", () => {
    // GIVEN the default lab (a db.t4g.medium Aurora writer) and the pocket lab (RDS for PostgreSQL db.t4g.micro)
    const aurora = estimateCost(fromFile('labs/default.json'));
    const rds = estimateCost(fromFile('labs/pocket.json'));
    // WHEN priced and printed
    const table = formatCostTable(aurora);
    // THEN only the Aurora credit line is unsourced, and the printed table marks it and says why
    expect(aurora.lines.filter((l) => l.unsourced).map((l) => l.part)).toEqual([CREDITS]);
    expect(table).toContain(`${CREDITS} * †`);
    expect(table).toMatch(/^† unit price not from an AWS source/m);
    expect(table).toMatch(
      /^ {2}- \[aurora-cpu-credits-2024\] † UNSOURCED: no AWS page, API or statement found/m,
    );
    expect(rds.lines.some((l) => l.unsourced)).toBe(false);
    expect(formatCostTable(rds)).not.toContain('†');
  });

  test.each([
    ['labs/failover-aurora.json (suite failover: FailoverDBCluster)', ['failover'], true],
    ['the same lab and reader with suites that never fail over', ['quick'], false],
  ])('%s: one credit line, its note says whether the writer role moves', (_what, suites, moves) => {
    // GIVEN the failover lab (a db.t4g.medium writer and one reader) with these suites
    const l = fromFile('labs/failover-aurora.json');
    // WHEN
    const e = estimateCost({ ...l, suites });
    const credits = e.lines.filter((l) => l.part.includes('CPU credits'));
    // THEN one line, priced once: 2 vCPU × (100 − 20 %) × $0.09, whichever instance holds the role
    expect(credits.map((l) => [l.part, l.quantityMax])).toEqual([[CREDITS, 1.6]]);
    expect(
      credits[0]?.note.includes(
        'the writer role, and the load with it, moves between the writer and reader 1',
      ),
    ).toBe(moves);
  });
});
