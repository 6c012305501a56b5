/**
 * Issue 25 item 6: a region and an instance family are priced, or refused in the same words by
 * `validate`, `cost` and `deploy`; Aurora I/O-Optimized is priced as its own configuration; and each
 * target's share of the bill (targetPrices) is what the decision table prices transactions with.
 * Expected figures are written out by hand from lib/cost/price-table.ts (us-east-1), never by calling
 * the estimate again.
 */
import { validateLab } from '../../lib/config/validate';
import type { LabConfig } from '../../lib/config/types';
import { labWarnings } from '../../lib/config/warnings';
import { estimateCost } from '../../lib/cost/estimate';
import { unpricedProblems } from '../../lib/cost/price-check';
import { PRICE_TABLES_COMMITTED } from '../../lib/cost/price-table';
import { targetPrices } from '../../lib/cost/target-prices';
import { UsageError } from '../../lib/core/errors';
import { runTargetPrices } from '../../scripts/commands/run';

function lab(raw: Record<string, unknown>): LabConfig {
  const v = validateLab({ name: 'unit', ...raw });
  if (!v.ok) throw new Error(`test lab invalid: ${JSON.stringify(v.problems)}`);
  return v.lab;
}

/** The lab: Aurora r6g.large writer + reader, proxies at 50 % and 100 %, a PgBouncer host, 2 runners. */
const TEAM = {
  aurora: { instanceClass: 'db.r6g.large', readers: 1 },
  proxies: [
    { name: 'half', maxConnectionsPercent: 50 },
    { name: 'full', maxConnectionsPercent: 100 },
  ],
  poolers: [{ name: 'bouncer', kind: 'pgbouncer', placement: 'dedicated', instanceType: 'c7g.large' }],
  runners: { instanceType: 'c7g.large', count: 2 },
};

describe('a region without prices is refused the same way everywhere', () => {
  test('validate names the region and the priced ones; cost refuses it in the same words', () => {
    // GIVEN the lab in eu-west-1 (no price table for it)
    expect(PRICE_TABLES_COMMITTED['eu-west-1']).toBeUndefined();
    const raw = { name: 'team', region: 'eu-west-1', ...TEAM };
    // WHEN validate's price check and cost's estimate read it
    const problems = unpricedProblems(raw);
    let costError: unknown = null;
    try {
      estimateCost(lab({ region: 'eu-west-1', ...TEAM }));
    } catch (err) {
      costError = err;
    }
    // THEN one problem at `region`, and cost throws a usage error carrying the same sentence
    expect(problems).toEqual([
      {
        path: 'region',
        value: 'eu-west-1',
        message: expect.stringMatching(
          /cannot be priced, so .*: no prices were read for it \(the AWS Price List, its cache, or for us-east-1 the committed table\); got "eu-west-1"/,
        ) as unknown,
      },
    ]);
    expect(costError).toBeInstanceOf(UsageError);
    expect((costError as UsageError).code).toBe('unpriced-region');
    expect((costError as Error).message).toBe(`region eu-west-1 ${problems[0]?.message}`);
  });

  test.each([['us-east-1'], [undefined]])(
    'a lab in %s (or without a region) is priced and passes',
    (region) => {
      expect(unpricedProblems({ name: 'team', ...(region ? { region } : {}), ...TEAM })).toEqual([]);
    },
  );
});

describe('runner and pooler host families beyond c7g', () => {
  test.each([
    ['c7i.large', 0.08925, 2],
    ['c6i.2xlarge', 0.34, 8],
    ['c6g.large', 0.068, 2],
    ['m7g.xlarge', 0.1632, 4],
    ['m7i.large', 0.1008, 2],
    ['c8g.large', 0.07976, 2],
  ])('%s is priced ($%s/h, %i vCPU) and validates', (type, usd, vcpus) => {
    // GIVEN runners of the type
    const l = lab({ runners: { instanceType: type, count: 2 } });
    // WHEN priced
    const runners = estimateCost(l).lines.find((x) => x.category === 'runner');
    // THEN 2 × the table's price, and validate has nothing to say about the type
    expect(runners?.usdPerHourMax).toBeCloseTo(2 * usd, 9);
    expect(runners?.note).toContain(`(${vcpus} vCPU each)`);
    expect(unpricedProblems({ name: 'x', runners: { instanceType: type } })).toEqual([]);
  });

  test('a family still without a price is refused by validate, naming it and a close priced type', () => {
    const problems = unpricedProblems({ name: 'x', runners: { instanceType: 'c7a.large' } });
    expect(problems).toEqual([
      expect.objectContaining({
        path: 'runners.instanceType',
        message: expect.stringMatching(
          /has no us-east-1 price .*got "c7a\.large"; did you mean "c7[gi]\.large"\?/,
        ) as unknown,
      }),
    ]);
  });
});

describe('Aurora I/O-Optimized', () => {
  test('instances at 1.3 × Standard, storage at $0.225, and no I/O line', () => {
    // GIVEN the same provisioned cluster, Standard and I/O-Optimized
    const standard = estimateCost(lab({ aurora: { instanceClass: 'db.r6g.large', readers: 1 } }));
    const iopt = estimateCost(
      lab({ aurora: { instanceClass: 'db.r6g.large', readers: 1, storageType: 'io-optimized' } }),
    );
    const parts = (e: typeof standard) => e.lines.map((l) => l.part);
    // THEN Standard has an assumed I/O line; I/O-Optimized has none and dearer instances and storage
    expect(parts(standard).some((p) => p.startsWith('Aurora I/O '))).toBe(true);
    expect(parts(iopt).some((p) => p.startsWith('Aurora I/O '))).toBe(false);
    const writer = iopt.lines.find((l) => l.part === 'Aurora writer db.r6g.large (I/O-Optimized)');
    expect(writer?.usdPerHourMax).toBeCloseTo(0.26 * 1.3, 9); // $0.338/h
    const storage = iopt.lines.find((l) => l.part.startsWith('Aurora I/O-Optimized storage'));
    expect(storage?.usdPerHourMax).toBeCloseTo((10 * 0.225) / 720, 9);
    expect(iopt.assumptions.join(' ')).toMatch(/Aurora I\/O-Optimized: storage 10 GB, no I\/O charge/);
    // the Standard I/O line says a benchmark can exceed its assumption and how to avoid it
    const io = standard.lines.find((l) => l.part.startsWith('Aurora I/O '));
    expect(io?.note).toMatch(/many times more .*--io-millions-per-hour.*io-optimized/);
  });

  test('serverless v2 on I/O-Optimized bills $0.16 per ACU-hour', () => {
    const e = estimateCost(
      lab({ aurora: { serverless: { minCapacity: 1, maxCapacity: 4 }, storageType: 'io-optimized' } }),
    );
    const writer = e.lines.find((l) => l.part === 'Aurora writer serverless v2');
    expect([writer?.usdPerHourMin, writer?.usdPerHourMax]).toEqual([0.16, 0.64]);
  });

  test('an unknown storage type is refused naming the allowed ones', () => {
    const v = validateLab({ name: 'x', aurora: { storageType: 'aurora-iopt1' } });
    expect(v.ok).toBe(false);
    expect(!v.ok && v.problems).toEqual([
      expect.objectContaining({
        path: 'aurora.storageType',
        message: expect.stringContaining('one of "standard", "io-optimized"') as unknown,
      }),
    ]);
  });
});

describe('targetPrices: what each target adds per hour', () => {
  test("the issue's lab: direct $0, each proxy its vCPU-hours, each PgBouncer pool the whole host", () => {
    // GIVEN the team's lab in us-east-1
    const prices = targetPrices(lab(TEAM));
    // THEN (2 instances × 2 vCPU = 4 vCPU × $0.015 = $0.06; c7g.large $0.0725 + 16 GB gp3
    // × $0.08 / 720 h = $0.001778 + public IPv4 $0.005 = $0.079278)
    expect(prices.map((p) => [p.target, p.usdPerHour])).toEqual([
      ['direct', 0],
      ['half', 0.06],
      ['full', 0.06],
      ['bouncer-transaction', 0.079278],
      ['bouncer-session', 0.079278],
    ]);
    expect(prices[3]?.basis).toMatch(
      /c7g\.large \$0\.0725\/h .*public IPv4 \$0\.005\/h; shared by its transaction and session pools/,
    );
  });

  test('a run in a region without prices records every target as not priced, saying why, and goes on', () => {
    // GIVEN a lab deployed with `deploy --force` into eu-west-1
    const prices = runTargetPrices(lab(TEAM), 'eu-west-1', null);
    // THEN each target, null (unknown), never another region's price
    expect(prices.map((p) => [p.target, p.usdPerHour])).toEqual([
      ['direct', null],
      ['half', null],
      ['full', null],
      ['bouncer-transaction', null],
      ['bouncer-session', null],
    ]);
    expect(prices[1]?.basis).toMatch(/^not priced: region eu-west-1 cannot be priced, .*; got "eu-west-1"$/);
    expect(
      runTargetPrices(lab(TEAM), 'us-east-1', PRICE_TABLES_COMMITTED['us-east-1'] ?? null)[1]?.usdPerHour,
    ).toBe(0.06);
  });

  test('a pooler on the runners adds nothing, and says why', () => {
    const prices = targetPrices(
      lab({
        poolers: [{ name: 'near', kind: 'pgbouncer', placement: 'on-runners', poolModes: ['session'] }],
      }),
    );
    const near = prices.find((p) => p.target === 'near-session');
    expect(near).toMatchObject({
      target: 'near-session',
      usdPerHour: 0,
      basis: expect.stringMatching(/runs on the runners/) as unknown,
    });
    // In production it is an HA pair whose host type the lab does not give: the report picks it from
    // the runners' family (c7g), fewest vCPUs first.
    expect(near?.production?.hostChoices?.map((c) => [c.type, c.vcpus])).toEqual([
      ['c7g.medium', 1],
      ['c7g.large', 2],
      ['c7g.xlarge', 4],
      ['c7g.2xlarge', 8],
      ['c7g.4xlarge', 16],
      ['c7g.8xlarge', 32],
      ['c7g.12xlarge', 48],
      ['c7g.16xlarge', 64],
    ]);
    expect(near?.production?.hostChoices?.[1]?.usdPerMonth).toBe(123.16); // the c7g.large pair, as `cost` prints it
  });

  test('each target carries its production option: direct nothing, the proxy its vCPUs, a dedicated pooler its pair', () => {
    const prices = targetPrices(lab(TEAM));
    const production = (name: string) => prices.find((p) => p.target === name)?.production;
    expect(production('direct')).toMatchObject({
      usdPerMonth: 0,
      hostChoices: null,
      hourlyIsProduction: false,
    });
    expect(production('direct')?.basis).toMatch(/^nothing added: the database \(\$\d+\.\d\d\/month\)/);
    expect(production('half')?.basis).toMatch(/^RDS Proxy half 4 vCPU \(2 × db\.r6g\.large, minimum 2\)/);
    expect(production('bouncer-transaction')).toMatchObject({
      pricedAs: expect.stringMatching(/^us-east-1 on-demand prices as of \d{4}-\d{2}-\d{2}$/) as unknown,
      usdPerMonth: 123.16,
      hostChoices: null, // the lab gives the pooler host's type
      targetUtilisation: 0.7,
    });
  });
});

describe('pool shares over 100 % of max_connections', () => {
  test("the issue's 50 % + 100 % + 90 % = 240 % is a warning with the reason, not an error", () => {
    // GIVEN the team's lab (the pooler's poolPercent defaults to 90)
    const l = lab(TEAM);
    // WHEN its warnings are listed
    const warnings = labWarnings(l);
    // THEN one warning naming every share and the total, and why it is allowed
    expect(warnings).toEqual([
      {
        id: 'pool-shares-over-100',
        path: 'proxies[0].maxConnectionsPercent + proxies[1].maxConnectionsPercent + poolers[0].poolPercent',
        message: expect.stringMatching(
          /50 % \(RDS Proxy half\) \+ 100 % \(RDS Proxy full\) \+ 90 % \(pooler bouncer\) = 240 % of max_connections.*measured one at a time.*serverConnections/,
        ) as unknown,
      },
    ]);
  });

  test.each([
    [
      [
        { name: 'a', maxConnectionsPercent: 60 },
        { name: 'b', maxConnectionsPercent: 40 },
      ],
    ],
    [[{ name: 'only', maxConnectionsPercent: 100 }]],
  ])('shares that fit in 100 %% (or a single pool) give no warning', (proxies) => {
    expect(labWarnings(lab({ proxies }))).toEqual([]);
  });
});
