import { UsageError } from '../../lib/core/errors';
import { validateLab } from '../../lib/config/validate';
import type { LabConfig } from '../../lib/config/types';
import { estimateCost } from '../../lib/cost/estimate';
import type { CostEstimate } from '../../lib/cost/estimate';
import {
  CLIENTS_PER_RUNNER_VCPU,
  checkBudget,
  defaultMaxConnections,
  enforceBudget,
  labMaxConnections,
  runnerCapacityWarnings,
  runnerCapacityWarningsFor,
  suiteClientDemands,
} from '../../lib/cost/guards';
import { deployPreflight, deployWarningLines } from '../../lib/cost/preflight';

function lab(raw: Record<string, unknown>): LabConfig {
  const v = validateLab({ name: 'unit', ...raw });
  if (!v.ok) throw new Error(`test lab invalid: ${JSON.stringify(v.problems)}`);
  return v.lab;
}

/** An estimate with chosen totals, so the budget rule is tested on its own. */
function estimateWith(perHourMin: number, perHourMax: number, labBudget: number | null): CostEstimate {
  const base = estimateCost(lab({}));
  return {
    ...base,
    labBudgetMaxHourlyUsd: labBudget,
    totals: { ...base.totals, perHourUsdMin: perHourMin, perHourUsdMax: perHourMax },
  };
}

describe('checkBudget with a pooler host', () => {
  test('the dedicated PgBouncer host counts against the budget; a pooler on the runners does not', () => {
    // GIVEN a budget the lab meets without a pooler host (up to $0.37/h with its writer's
    // Unlimited-mode CPU credits under sustained load)
    const bare = estimateCost(lab({ budget: { maxHourlyUsd: 0.45 } }));
    expect(checkBudget(bare).allowed).toBe(true);
    const near = estimateCost(
      lab({
        budget: { maxHourlyUsd: 0.45 },
        poolers: [{ name: 'near', kind: 'pgbouncer', placement: 'on-runners' }],
      }),
    );
    expect(checkBudget(near).allowed).toBe(true);
    // WHEN the same lab adds a c7g.xlarge PgBouncer host ($0.145/h + volume + address)
    const hosted = estimateCost(
      lab({
        budget: { maxHourlyUsd: 0.45 },
        poolers: [{ name: 'b', kind: 'pgbouncer', placement: 'dedicated', instanceType: 'c7g.xlarge' }],
      }),
    );
    // THEN deploy's guard refuses it, naming the estimate and the limit
    const check = checkBudget(hosted);
    expect(check.allowed).toBe(false);
    expect(check.estimateUsdPerHour).toBeGreaterThan(bare.totals.perHourUsdMax + 0.145);
    expect(check.message).toMatch(/exceeds the lab's budget\.maxHourlyUsd \$0\.45\/h/);
  });
});

describe('checkBudget', () => {
  test.each([
    // estimate max, flag, lab budget, force → allowed, over, limitFrom
    [0.5, undefined, null, false, true, false, null],
    [0.5, 1, null, false, true, false, 'flag'],
    [1.5, 1, null, false, false, true, 'flag'],
    [1.5, 1, null, true, true, true, 'flag'],
    [1.5, undefined, 1, false, false, true, 'lab'],
    [1.5, undefined, 2, false, true, false, 'lab'],
    [1.5, 2, 1, false, true, false, 'flag'], // the flag wins over the lab's budget
    [1.5, 1, 2, false, false, true, 'flag'],
    [1.0, 1, null, false, true, false, 'flag'], // equal is within
  ] as const)(
    'estimate $%s, --max-hourly %s, lab budget %s, force %s → allowed %s, over %s, from %s',
    (est, flag, budget, force, allowed, over, from) => {
      // GIVEN
      const e = estimateWith(est / 2, est, budget);
      // WHEN
      const r = checkBudget(e, flag, force);
      // THEN
      expect(r.allowed).toBe(allowed);
      expect(r.overBudget).toBe(over);
      expect(r.limitFrom).toBe(from);
      expect(r.estimateUsdPerHour).toBe(est);
    },
  );

  test('the upper bound of a serverless range is what is compared', () => {
    const r = checkBudget(estimateWith(0.2, 1.2, null), 1);
    expect(r.allowed).toBe(false);
    expect(r.message).toMatch(
      /estimate \$1\.2000\/h exceeds --max-hourly \$1\/h for lab "unit"; refusing to deploy/,
    );
  });

  test('enforceBudget throws a UsageError with the reason, and passes when forced', () => {
    const e = estimateWith(2, 2, 1);
    expect(() => enforceBudget(e)).toThrow(UsageError);
    expect(() => enforceBudget(e)).toThrow(/exceeds the lab's budget\.maxHourlyUsd \$1\/h/);
    expect(enforceBudget(e, undefined, true).message).toMatch(/deploying anyway because --force/);
  });

  test.each([0, -1, Number.NaN])('--max-hourly %s is a usage error', (bad) => {
    expect(() => checkBudget(estimateWith(1, 1, null), bad)).toThrow(
      /--max-hourly must be a positive number/,
    );
  });
});

describe('max_connections for the capacity rule', () => {
  test.each([
    // LEAST(memory bytes / 9531392, 5000)
    ['db.t4g.medium', Math.floor((4 * 1024 ** 3) / 9531392)], // 450
    ['db.r6g.large', Math.floor((16 * 1024 ** 3) / 9531392)], // 1802
    ['db.r6g.4xlarge', 5000], // 128 GiB → 14420, capped
  ])('%s → %d', (cls, expected) => {
    expect(defaultMaxConnections(cls)).toBe(expected);
  });

  test('unknown class → null, override wins, serverless uses 2 GiB per max ACU', () => {
    expect(defaultMaxConnections('db.nope.large')).toBeNull();
    expect(labMaxConnections(lab({ aurora: { maxConnections: 400 } }))).toBe(400);
    expect(labMaxConnections(lab({ aurora: { serverless: { minCapacity: 0.5, maxCapacity: 4 } } }))).toBe(
      Math.floor((8 * 1024 ** 3) / 9531392),
    );
  });
});

describe('runnerCapacityWarnings', () => {
  test(`rule of thumb: ${CLIENTS_PER_RUNNER_VCPU} clients per runner vCPU; one c7g.large (2 vCPU) drives 400`, () => {
    expect(CLIENTS_PER_RUNNER_VCPU).toBe(200);
    const l = lab({ runners: { instanceType: 'c7g.large', count: 1 } });
    expect(runnerCapacityWarningsFor(l, [{ suite: 'x', clients: [400] }])).toEqual([]);
    const w = runnerCapacityWarningsFor(l, [{ suite: 'x', clients: [401] }]);
    expect(w).toHaveLength(1);
    expect(w[0]?.id).toBe('proxylab:runners-too-few');
    expect(w[0]?.runnersNeeded).toBe(2);
    expect(w[0]?.message).toMatch(
      /suite x runs up to 401 clients but 1 × c7g\.large \(2 vCPU\) drive about 400.*runners\.count ≥ 2/,
    );
  });

  test('relative counts resolve against max_connections and the largest count across suites is checked', () => {
    // GIVEN max_connections 1000, 2 runners × 2 vCPU = 800 clients; 1.5 × max_connections = 1500
    const l = lab({ aurora: { maxConnections: 1000 }, runners: { instanceType: 'c7g.large', count: 2 } });
    const w = runnerCapacityWarningsFor(l, [
      { suite: 'small', clients: [50] },
      {
        suite: 'e1',
        clients: [
          { times: 0.9, of: 'maxConnections' },
          { times: 1.5, of: 'maxConnections' },
        ],
      },
    ]);
    // THEN one warning, for the 1500-client step: ceil(1500 / 400) = 4 runners
    expect(w).toHaveLength(1);
    expect(w[0]?.suite).toBe('e1');
    expect(w[0]?.clients).toBe(1500);
    expect(w[0]?.runnerVcpus).toBe(4);
    expect(w[0]?.runnersNeeded).toBe(4);
  });

  test('pool-relative counts use the largest proxy pool', () => {
    // GIVEN max_connections 1000 and proxies at 50 % and 90 % → largest pool 900; 1 × poolSize = 900 > 400
    const l = lab({
      aurora: { maxConnections: 1000 },
      proxies: [
        { name: 'a', maxConnectionsPercent: 50 },
        { name: 'b', maxConnectionsPercent: 90 },
      ],
    });
    const w = runnerCapacityWarningsFor(l, [{ suite: 'p', clients: [{ times: 1, of: 'poolSize' }] }]);
    expect(w[0]?.clients).toBe(900);
  });

  test('suites are read from the catalog by name: quick on the default lab shape', () => {
    // GIVEN db.t4g.medium (max_connections ≈ LEAST(4 GiB / 9531392, 5000) = 450) and one c7g.large
    const l = lab({
      aurora: { instanceClass: 'db.t4g.medium' },
      proxies: [{ name: 'pool100' }],
      runners: { instanceType: 'c7g.large', count: 1 },
    });
    // THEN quick's largest step, 1.5 × 450 = 675 clients, needs ceil(675 / 400) = 2 runners
    expect(suiteClientDemands(['quick'])[0]?.clients.length).toBeGreaterThan(0);
    const w = runnerCapacityWarnings(l, ['quick']);
    expect(w.map((x) => [x.suite, x.clients, x.runnersNeeded])).toEqual([['quick', 675, 2]]);
    // AND e3 (20 clients) raises nothing
    expect(runnerCapacityWarnings(l, ['e3'])).toEqual([]);
  });

  test('an unknown suite name is a usage error listing the valid ones', () => {
    expect(() => runnerCapacityWarnings(lab({}), ['nope'])).toThrow(/unknown suite "nope"; valid suites: /);
  });

  test('a runner type without a vCPU count is reported, not guessed', () => {
    const w = runnerCapacityWarningsFor(lab({ runners: { instanceType: 'm5.large' } }), [
      { suite: 'q', clients: [10] },
    ]);
    expect(w[0]?.message).toMatch(/m5\.large has no vCPU count/);
    expect(w[0]?.runnersNeeded).toBeNull();
  });
});

describe('deployPreflight', () => {
  test('one call gives the table, the budget decision and the capacity warnings for the lab suites', () => {
    // GIVEN a default-shaped lab with a budget below its estimate and the quick suite
    const l = lab({ proxies: [{ name: 'pool100' }], budget: { maxHourlyUsd: 0.1 }, suites: ['quick'] });
    // WHEN
    const p = deployPreflight(l);
    // THEN
    expect(p.table).toContain('RDS Proxy pool100');
    expect(p.budget.allowed).toBe(false);
    expect(p.budget.limitFrom).toBe('lab');
    expect(p.warnings.map((w) => w.id)).toEqual(['proxylab:runners-too-few']);
    // AND --force / --max-hourly / an explicit suite list are honoured
    const forced = deployPreflight(l, { force: true, maxHourlyUsd: 0.15, suites: ['e3'] });
    expect(forced.budget).toMatchObject({
      allowed: true,
      overBudget: true,
      limitFrom: 'flag',
      limitUsdPerHour: 0.15,
    });
    expect(forced.warnings).toEqual([]);
  });
});

describe('deployWarningLines: what deploy prints, --dry-run included', () => {
  test("validate's warnings (the suites' plan, the lab's own) beside the preflight's, each once", () => {
    // GIVEN a lab whose suite measures no direct target, whose pools add up past 100 % and whose
    // runners are too few for the suite
    const l = lab({
      aurora: { instanceClass: 'db.r6g.large' },
      proxies: [{ name: 'pool100' }],
      poolers: [{ name: 'bouncer', kind: 'pgbouncer', placement: 'dedicated', instanceType: 'c7g.large' }],
      suites: ['e4'],
    });
    const pre = deployPreflight(l);
    // WHEN
    const lines = deployWarningLines(l, pre.warnings);
    // THEN every warning validate gives is there, the lab's with its path
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^warning \[proxylab:runners-too-few\]: suite e4 runs up to/),
        expect.stringMatching(
          /^warning \[proxylab:target-not-measured\]: target direct gets no step in suite e4/,
        ),
        expect.stringMatching(
          /^warning \[pool-shares-over-100\]: proxies\[0\]\.maxConnectionsPercent \+ poolers\[0\]\.poolPercent: /,
        ),
      ]),
    );
    // AND the capacity warning, which the preflight and the plan both give, once
    expect(lines.filter((x) => x.includes('[proxylab:runners-too-few]'))).toHaveLength(1);
    expect(new Set(lines).size).toBe(lines.length);
  });
});
