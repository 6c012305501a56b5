import { UsageError } from '../../../lib/core/errors';
import {
  getSuite,
  scriptLabel,
  SUITE_NAMES,
  validateScenario,
  type Scenario,
} from '../../../lib/suite/catalog';
import {
  expandSuite,
  initPlan,
  logSamplingRateFor,
  maxConnectionsBand,
  resolveClients,
  type PlannedStep,
  type TargetCapacity,
} from '../../../lib/suite/expand';
import {
  DIRECT,
  MANAGED_POOL,
  SELF_HOSTED_TRANSACTION_POOL,
  SESSION_POOL,
} from '../../../lib/suite/experiments/common';
import {
  describeTarget,
  directTarget,
  kindsSelected,
  managedProxyTarget,
  matchesTarget,
  poolerTarget,
  TARGET_KIND_NAMES,
  type Placement,
} from '../../../lib/suite/targets';
import { summarizeRepetitions } from '../../../lib/suite/verdict';

const LOCAL: TargetCapacity[] = [
  { ref: { kind: 'direct', name: 'direct' }, maxConnections: 40, poolSize: null },
  { ref: { kind: 'pgbouncer-transaction', name: 'pgbouncer-transaction' }, maxConnections: 40, poolSize: 10 },
  { ref: { kind: 'pgbouncer-session', name: 'pgbouncer-session' }, maxConnections: 40, poolSize: 10 },
];
// An E1-like lab: db.t4g.medium read 394, two proxies.
const CLOUD: TargetCapacity[] = [
  { ref: { kind: 'direct', name: 'direct' }, maxConnections: 394, poolSize: null },
  { ref: { kind: 'rds-proxy', name: 'proxy-a' }, maxConnections: 394, poolSize: 394 },
  { ref: { kind: 'rds-proxy', name: 'proxy-b' }, maxConnections: 394, poolSize: 197 },
];

function byId(steps: PlannedStep[], id: string): PlannedStep {
  const s = steps.find((x) => x.stepId === id);
  if (!s) throw new Error(`no step ${id}; have ${steps.map((x) => x.stepId).join(', ')}`);
  return s;
}

describe('catalog', () => {
  test('suite names', () => {
    expect([...SUITE_NAMES].sort()).toEqual([
      'all-published',
      'blue-green',
      'disruption',
      'e1',
      'e2',
      'e3',
      'e4',
      'e5',
      'e6',
      'e6-local',
      'failover',
      'latency',
      'planned',
      'quick',
      'session',
      'session-state',
      'smoke',
    ]);
  });

  test('getSuite with an unknown name throws a UsageError listing the valid names', () => {
    expect(() => getSuite('e9')).toThrow(UsageError);
    expect(() => getSuite('e9')).toThrow(
      /valid suites: quick, smoke, e1, e2, e3, e4, e5, e6, e6-local, session, session-state, latency, disruption, failover, planned, blue-green, all-published/,
    );
  });

  test('every experiment E1–E6 is in all-published, with a finding and expectations', () => {
    const suite = getSuite('all-published');
    expect([...new Set(suite.scenarios.map((s) => s.experiment))].sort()).toEqual([
      'E1',
      'E2',
      'E3',
      'E4',
      'E5',
      'E6',
    ]);
    for (const s of suite.scenarios) {
      expect(s.finding.length).toBeGreaterThan(20);
      expect(s.expectations.length).toBeGreaterThan(0);
    }
  });

  test('the measurements beyond the published experiments are in `session`, not in all-published or quick', () => {
    const session = getSuite('session').scenarios.map((s) => s.experiment);
    expect([...new Set(session)]).toEqual(['SESSION', 'LATENCY']);
    for (const name of ['all-published', 'quick', 'smoke'])
      expect(
        getSuite(name).scenarios.some((s) => s.experiment === 'LATENCY' || s.experiment === 'SESSION'),
      ).toBe(false);
  });

  test('latency: one client through every local target and direct, a repetition running every target back to back', () => {
    // GIVEN the local stand-in's targets WHEN the latency suite is expanded
    const steps = expandSuite(getSuite('latency'), LOCAL);
    // THEN every step is one client on one connection, and within a repetition and protocol every target follows direct
    expect(new Set(steps.map((s) => s.params.clients))).toEqual(new Set([1]));
    expect(
      steps
        .filter((s) => s.scenario === 'latency-single')
        .map((s) => s.stepId)
        .slice(0, 6),
    ).toEqual([
      'latency-single/direct/c1/simple/persistent/r1',
      'latency-single/pgbouncer-transaction/c1/simple/persistent/r1',
      'latency-single/pgbouncer-session/c1/simple/persistent/r1',
      'latency-single/direct/c1/extended/persistent/r1',
      'latency-single/pgbouncer-transaction/c1/extended/persistent/r1',
      'latency-single/pgbouncer-session/c1/extended/persistent/r1',
    ]);
    expect(steps.filter((s) => s.scenario === 'latency-rated').every((s) => s.params.rate === 500)).toBe(
      true,
    );
    expect(steps).toHaveLength(2 * 3 * 2 * 3);
    expect(steps.every((s) => s.expectation.outcome === 'succeeds')).toBe(true);
  });

  test.each(SUITE_NAMES.map((n) => [n]))('every scenario of %s is valid data', (name) => {
    for (const s of getSuite(name).scenarios) expect(validateScenario(s)).toEqual([]);
  });

  test('validation reports every problem at once', () => {
    const bad: Scenario = {
      ...getSuite('e1').scenarios[0]!,
      name: 'bad',
      jobs: 0,
      transactionsPerClient: 5,
      poolPercents: [0, 120],
    };
    const problems = validateScenario(bad);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/exactly one of durationSec and transactionsPerClient/),
        expect.stringMatching(/jobs must be ≥ 1, got 0/),
        expect.stringMatching(/poolPercents must be 1–100, got 0,120/),
      ]),
    );
  });

  test.each([
    ['e1', 'select-1.sql'],
    ['e2', 'select-only'],
    ['e3', 'tpcb-like'],
    ['e4', 'mixed(select-only@8,tpcb-like@2)'],
  ])('%s script label is %s', (suite, label) => {
    expect(scriptLabel(getSuite(suite).scenarios[0]!.script)).toBe(label);
  });

  test('published parameters: E1 rate/jobs/duration, E2 -t 10 -j 20 scale 4 with init flags, E3 -c 20 -T 60 scale 50', () => {
    const [e1] = getSuite('e1').scenarios;
    expect(e1).toMatchObject({ jobs: 10, durationSec: 20, rate: 100000, protocols: ['prepared', 'simple'] });
    const [e2] = getSuite('e2').scenarios;
    expect(e2).toMatchObject({
      jobs: 20,
      transactionsPerClient: 10,
      scale: 4,
      initFlags: ['--unlogged-tables', '--foreign-keys'],
    });
    const [e3] = getSuite('e3').scenarios;
    expect(e3).toMatchObject({
      clients: [20],
      durationSec: 60,
      scale: 50,
      connects: ['per-transaction', 'persistent'],
    });
    const e5 = getSuite('e5').scenarios[0]!;
    expect(e5.repetitions).toBe(3);
  });
});

describe('expandSuite', () => {
  test('quick, local: ids, same clients across targets, expectations per cell', () => {
    // WHEN
    const steps = expandSuite(getSuite('quick'), LOCAL);
    // THEN
    expect(byId(steps, 'quick-e1/direct/c60/prepared/persistent/r1').expectation).toMatchObject({
      outcome: 'refused',
      errorClasses: ['too-many-connections'],
    });
    expect(
      byId(steps, 'quick-e1/pgbouncer-transaction/c60/prepared/persistent/ps-off/r1').expectation.outcome,
    ).toBe('errors');
    expect(
      byId(steps, 'quick-e1/pgbouncer-transaction/c60/prepared/persistent/ps-off/r1').expectation
        .errorClasses,
    ).toContain('prepared-statement-missing');
    expect(
      byId(steps, 'quick-e1/pgbouncer-transaction/c60/simple/persistent/ps-off/r1').expectation.outcome,
    ).toBe('succeeds');
    expect(byId(steps, 'quick-e1/direct/c20/simple/persistent/r1').expectation.outcome).toBe('succeeds');
    expect(byId(steps, 'quick-e2/direct/c60/simple/persistent/r1').expectation.outcome).toBe('refused');
    // E3 locally: clients = pool size so persistent session pooling does not queue forever
    expect(byId(steps, 'quick-e3/pgbouncer-session/c10/simple/persistent/r1').expectation.outcome).toBe(
      'succeeds',
    );
    expect(byId(steps, 'quick-e3/direct/c10/simple/per-transaction/r1').params).toMatchObject({
      clients: 10,
      jobs: 2,
      durationSec: 10,
    });
    // pgbouncer-session is not part of E1/E2
    expect(
      steps.filter((s) => s.scenario !== 'quick-e3').every((s) => s.target.kind !== 'pgbouncer-session'),
    ).toBe(true);
  });

  test('expansion is stable and ids are unique in every suite (local and cloud targets)', () => {
    for (const name of SUITE_NAMES) {
      for (const targets of [LOCAL, CLOUD, [...LOCAL, CLOUD[1]!]]) {
        const a = expandSuite(getSuite(name), targets).map((s) => s.stepId);
        const b = expandSuite(getSuite(name), targets).map((s) => s.stepId);
        expect(a).toEqual(b);
        expect(new Set(a).size).toBe(a.length);
      }
    }
  });

  test('E1 on a cloud lab: rds-proxy expands to each proxy; 1.5 × prepared through the proxy is recorded, not judged', () => {
    // WHEN
    const steps = expandSuite(getSuite('e1'), CLOUD);
    // THEN: 0.9 × 394 = 355, 1.5 × 394 = 591, same on every target
    expect([...new Set(steps.map((s) => s.params.clients))]).toEqual([355, 591]);
    expect(steps.map((s) => s.target.name).filter((n, i, a) => a.indexOf(n) === i)).toEqual([
      'direct',
      'proxy-a',
      'proxy-b',
    ]);
    const proxyPrepared = byId(steps, 'e1/proxy-b/c591/prepared/persistent/r1');
    expect(proxyPrepared.expectation.outcome).toBe('any');
    expect(proxyPrepared.expectation.published).toMatch(
      /portal-missing, prepared-statement-exists, backend-died/,
    );
    expect(byId(steps, 'e1/proxy-a/c355/prepared/persistent/r1').expectation.outcome).toBe('succeeds');
    expect(byId(steps, 'e1/proxy-a/c591/simple/persistent/r1').expectation.outcome).toBe('succeeds');
    expect(byId(steps, 'e1/direct/c591/prepared/persistent/r1').expectation.outcome).toBe('refused');
    expect(byId(steps, 'e1/direct/c355/prepared/persistent/r1').expectation.outcome).toBe('succeeds');
    // no pgbouncer target given: none planned
    expect(steps.some((s) => s.target.kind === 'pgbouncer-transaction')).toBe(false);
    // 20 s × 100000 tps bound > 1e6 log lines: sampled
    expect(proxyPrepared.logSamplingRate).toBe(0.5);
  });

  test('E2 scales with max_connections: 7 client points, direct refused above it, proxy queues', () => {
    const steps = expandSuite(
      getSuite('e2'),
      [CLOUD[0]!, CLOUD[1]!].map((t) => ({ ...t, maxConnections: 550 })),
    );
    expect([...new Set(steps.map((s) => s.params.clients))]).toEqual([110, 220, 330, 440, 495, 605, 715]);
    expect(byId(steps, 'e2/direct/c605/simple/persistent/r1').expectation.outcome).toBe('refused');
    expect(byId(steps, 'e2/direct/c495/simple/persistent/r1').expectation.outcome).toBe('succeeds');
    expect(byId(steps, 'e2/proxy-a/c715/simple/persistent/r1').expectation.outcome).toBe('succeeds');
    expect(steps.every((s) => s.params.transactionsPerClient === 10 && s.params.durationSec === null)).toBe(
      true,
    );
    expect(steps.every((s) => s.params.jobs === 20)).toBe(true);
  });

  test('E4 sweeps pool percent on pooled targets with /pool<p> in the id; pool size follows the percent', () => {
    const steps = expandSuite(getSuite('e4'), LOCAL);
    expect(steps.map((s) => s.stepId)).toEqual([
      'e4/pgbouncer-transaction/c60/simple/persistent/pool25/r1',
      'e4/pgbouncer-transaction/c60/simple/persistent/pool50/r1',
      'e4/pgbouncer-transaction/c60/simple/persistent/pool75/r1',
      'e4/pgbouncer-transaction/c60/simple/persistent/pool100/r1',
    ]);
    expect(steps.map((s) => s.poolSize)).toEqual([10, 20, 30, 40]);
    expect(steps.map((s) => s.params.poolPercent)).toEqual([25, 50, 75, 100]);
  });

  test('E5: 50..1000 clients on max_connections 1200, three repetitions, direct and session pool', () => {
    const targets: TargetCapacity[] = [
      { ref: { kind: 'direct', name: 'direct' }, maxConnections: 1200, poolSize: null },
      { ref: { kind: 'pgbouncer-session', name: 'pgbouncer-session' }, maxConnections: 1200, poolSize: 300 },
    ];
    const steps = expandSuite(getSuite('e5'), targets).filter((s) => s.scenario === 'e5-short');
    expect([...new Set(steps.map((s) => s.params.clients))]).toEqual(
      Array.from({ length: 20 }, (_, i) => 50 * (i + 1)),
    );
    expect([...new Set(steps.map((s) => s.params.repetition))]).toEqual([1, 2, 3]);
    // session pooling, persistent, clients above the pool: may hang → not judged
    expect(byId(steps, 'e5-short/pgbouncer-session/c400/simple/persistent/r1').expectation.outcome).toBe(
      'any',
    );
    expect(byId(steps, 'e5-short/pgbouncer-session/c250/simple/persistent/r1').expectation.outcome).toBe(
      'succeeds',
    );
    expect(byId(steps, 'e5-short/pgbouncer-session/c400/simple/per-transaction/r2').expectation.outcome).toBe(
      'succeeds',
    );
  });

  test('quick and smoke on a lab measure every proxy as well as direct (no PgBouncer there)', () => {
    // GIVEN the default lab runs `quick`; WHEN expanded against a lab's targets
    const quick = expandSuite(getSuite('quick'), CLOUD);
    const smoke = expandSuite(getSuite('smoke'), CLOUD);
    // THEN each proxy gets the same cells as direct, with the published expectations
    for (const steps of [quick, smoke]) {
      expect(new Set(steps.map((s) => s.target.name))).toEqual(new Set(['direct', 'proxy-a', 'proxy-b']));
      expect(steps.some((s) => s.target.kind.startsWith('pgbouncer'))).toBe(false);
    }
    expect(byId(quick, 'quick-e1/proxy-a/c591/prepared/persistent/r1').expectation.outcome).toBe('any');
    expect(byId(quick, 'quick-e1/direct/c591/prepared/persistent/r1').expectation.outcome).toBe('refused');
    expect(byId(quick, 'quick-e2/proxy-b/c591/simple/persistent/r1').expectation.outcome).toBe('succeeds');
    expect(byId(smoke, 'smoke-max-connections/proxy-a/c591/simple/persistent/r1').expectation.outcome).toBe(
      'succeeds',
    );
    // the proxy churn comparison is reported, not judged (RDS Proxy is not PgBouncer)
    const churn = getSuite('smoke').scenarios.find((s) => s.name === 'smoke-churn');
    expect(churn?.comparisons?.find((c) => c.id === 'rds-proxy-churn-vs-direct-churn')?.minRatio).toBeNull();
  });

  test('smoke covers the three findings and fits in 45 s with init', () => {
    const steps = expandSuite(getSuite('smoke'), LOCAL);
    expect(steps.map((s) => `${s.stepId} ${s.expectation.outcome}`)).toEqual([
      'smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-off/r1 errors',
      // version unknown here: the `on` cells are planned as not available (their rule is not judged)
      'smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-on/r1 errors',
      'smoke-prepared/pgbouncer-transaction/c5/simple/persistent/ps-off/r1 succeeds',
      'smoke-prepared/pgbouncer-transaction/c5/simple/persistent/ps-on/r1 succeeds',
      'smoke-max-connections/direct/c60/simple/persistent/r1 refused',
      'smoke-max-connections/pgbouncer-transaction/c60/simple/persistent/r1 succeeds',
      'smoke-churn/direct/c5/simple/per-transaction/r1 succeeds',
      'smoke-churn/pgbouncer-transaction/c5/simple/per-transaction/r1 succeeds',
    ]);
    // every cell runnable (PgBouncer ≥ 1.21 runs the `ps-on` cells too): 8 steps × 3 s
    const pgbenchSec = steps.reduce((sum, s) => sum + (s.params.durationSec ?? 0), 0);
    expect(pgbenchSec).toBeLessThanOrEqual(24);
    expect(
      getSuite('smoke').scenarios.find((s) => s.name === 'smoke-churn')?.comparisons?.[0]?.minRatio,
    ).toBe(3);
  });

  test('quick stays near 3 minutes of pgbench time on the local defaults', () => {
    const steps = expandSuite(getSuite('quick'), LOCAL);
    const pgbenchSec = steps.reduce((sum, s) => sum + (s.params.durationSec ?? 5), 0);
    expect(pgbenchSec).toBeLessThanOrEqual(200);
    expect(initPlan(steps)).toEqual([
      { scale: 1, initFlags: [], scenarios: ['quick-e1', 'quick-e2', 'quick-e3'] },
    ]);
  });

  test('options: repetitions override and duration scale', () => {
    const steps = expandSuite(getSuite('quick'), LOCAL, { repetitionsOverride: 2, durationScale: 0.5 });
    expect(byId(steps, 'quick-e1/direct/c20/simple/persistent/r2').params.durationSec).toBe(5);
    expect(byId(steps, 'quick-e2/direct/c20/simple/persistent/r1').params.transactionsPerClient).toBe(250);
    expect(() => expandSuite(getSuite('quick'), LOCAL, { repetitionsOverride: 0 })).toThrow(UsageError);
    expect(() => expandSuite(getSuite('quick'), LOCAL, { durationScale: 0 })).toThrow(UsageError);
  });

  test('jobs never exceed clients; timeouts exceed the run', () => {
    for (const name of SUITE_NAMES) {
      for (const s of expandSuite(getSuite(name), LOCAL)) {
        expect(s.params.jobs).toBeLessThanOrEqual(s.params.clients);
        if (s.params.durationSec !== null) expect(s.timeoutSec).toBeGreaterThan(s.params.durationSec);
      }
    }
  });

  test('duplicate target names are a usage error; no targets → no steps', () => {
    expect(() =>
      expandSuite(getSuite('e1'), [CLOUD[1]!, { ...CLOUD[2]!, ref: { kind: 'rds-proxy', name: 'proxy-a' } }]),
    ).toThrow(/unique/);
    expect(expandSuite(getSuite('e1'), [])).toEqual([]);
  });
});

describe('helpers', () => {
  test.each([
    [37, 40, 'below'],
    [38, 40, 'near'],
    [40, 40, 'near'],
    [41, 40, 'above'],
    [355, 394, 'below'],
    [380, 394, 'near'],
    [600, 550, 'above'],
  ] as const)('maxConnectionsBand(%i, %i) = %s', (clients, max, band) => {
    expect(maxConnectionsBand(clients, max)).toBe(band);
  });

  test.each([
    [7, 40, null, 7],
    [{ times: 1.5, of: 'maxConnections' as const }, 40, 10, 60],
    [{ times: 2, of: 'poolSize' as const }, 40, 10, 20],
    [{ times: 2, of: 'poolSize' as const }, 40, null, 80],
    [{ times: 0.001, of: 'maxConnections' as const }, 40, null, 1],
  ])('resolveClients(%j, max %i, pool %s) = %i', (spec, maxConnections, poolSize, expected) => {
    expect(resolveClients(spec, { maxConnections, poolSize })).toBe(expected);
  });

  test.each([
    [5, { durationSec: 3, transactionsPerClient: null }, null],
    [20, { durationSec: 60, transactionsPerClient: null }, 0.2], // 60 × 80000 = 4.8e6 lines
    [700, { durationSec: null, transactionsPerClient: 10 }, null],
    [591, { durationSec: 20, transactionsPerClient: null }, 0.5],
  ])('logSamplingRateFor(%i clients, %j) = %s', (clients, run, expected) => {
    expect(logSamplingRateFor(clients, run)).toBe(expected);
  });

  test.each([
    [[3, 1, 2], { best: 3, median: 2, worst: 1, n: 3 }],
    [[4, 1, 3, 2], { best: 4, median: 2.5, worst: 1, n: 4 }],
    [[5], { best: 5, median: 5, worst: 5, n: 1 }],
    [[], { best: null, median: null, worst: null, n: 0 }],
  ])('summarizeRepetitions(%j)', (values, expected) => {
    expect(summarizeRepetitions(values)).toEqual(expected);
  });
});

describe('scenario targets: chosen by capability', () => {
  const SELECTORS = { DIRECT, MANAGED_POOL, SELF_HOSTED_TRANSACTION_POOL, SESSION_POOL };
  const PLACEMENTS: readonly Placement[] = ['managed', 'dedicated-host', 'co-located', 'local'];
  // Every kind where an adapter may put it (a lab's PgBouncer on its own host or on the runners,
  // the local stand-in), at a version with and without prepared-statement support.
  const described = TARGET_KIND_NAMES.flatMap((kind) =>
    PLACEMENTS.flatMap((placement) =>
      ['1.25.2', '1.18.0', null].map((version) =>
        describeTarget({ kind, name: kind }, { version, maxPreparedStatements: 200, placement }),
      ),
    ),
  );

  test('each kind is selected by exactly one of the selectors, wherever it runs', () => {
    for (const d of described) {
      const by = Object.entries(SELECTORS).filter(([, m]) => matchesTarget(d, m));
      expect([d.kind, d.placement, by.map(([name]) => name)]).toEqual([
        d.kind,
        d.placement,
        [expect.any(String)],
      ]);
    }
  });

  test('no scenario lists a selector that selects nothing, or one twice', () => {
    for (const name of SUITE_NAMES) {
      for (const s of getSuite(name).scenarios) {
        expect([s.name, s.targets.map((m) => kindsSelected([m]).length > 0)]).toEqual([
          s.name,
          s.targets.map(() => true),
        ]);
        expect([s.name, new Set(s.targets).size]).toEqual([s.name, s.targets.length]);
      }
    }
  });

  test('a lab with two proxies and a dedicated PgBouncer: the proxies in their order, then the pooler', () => {
    // GIVEN the runner's order (direct, proxies, poolers)
    const targets: TargetCapacity[] = [
      { ref: directTarget(), maxConnections: 394, poolSize: null },
      { ref: managedProxyTarget('proxy-b'), maxConnections: 394, poolSize: 197 },
      { ref: managedProxyTarget('proxy-a'), maxConnections: 394, poolSize: 394 },
      ...(['transaction', 'session'] as const).map((mode) => {
        const ref = poolerTarget('pgbouncer', 'bouncer', mode);
        return {
          ref,
          descriptor: describeTarget(ref, {
            version: '1.25.2',
            maxPreparedStatements: 200,
            placement: 'dedicated-host',
          }),
          maxConnections: 394,
          poolSize: 100,
        };
      }),
    ];
    // WHEN e3 (direct, managed pools, self-hosted transaction pool, session pool) expands
    const steps = expandSuite(getSuite('e3'), targets);
    // THEN one cell's targets come in the scenario's order
    const cell = steps.filter((s) => s.stepId.includes('/per-transaction/'));
    expect(cell.map((s) => s.target.name)).toEqual([
      'direct',
      'proxy-b',
      'proxy-a',
      'bouncer-transaction',
      'bouncer-session',
    ]);
  });
});

describe('the disruption lab (DISRUPT)', () => {
  const disruptionOf = (s: Scenario) => (s.probe?.kind === 'disruption' ? s.probe : undefined);
  const local = getSuite('disruption');
  const cloud = getSuite('failover');

  test('local: every local disruption (and a restart under background load), probed in both modes, 3 repetitions, measured stops, in about 2.5 minutes of windows', () => {
    // GIVEN / WHEN / THEN
    expect(local.scenarios.map((s) => disruptionOf(s)?.disruption)).toEqual([
      { action: 'postgres-restart', shutdown: 'fast' },
      { action: 'postgres-restart', shutdown: 'immediate' },
      { action: 'backend-terminate', shutdown: null },
      { action: 'pooler-pause', shutdown: null },
      { action: 'pooler-restart', shutdown: null },
      { action: 'primary-failover', shutdown: null },
      { action: 'postgres-restart', shutdown: 'fast' },
    ]);
    // the last one under pgbench's tpcb-like at 4 clients per target (issue 42), the others without a load
    expect(local.scenarios.map((s) => disruptionOf(s)?.load?.scenario ?? null)).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
      'tpcb-like',
    ]);
    for (const s of local.scenarios) {
      expect({
        name: s.name,
        experiment: s.experiment,
        stops: s.serverStops,
        reps: s.repetitions,
        connects: s.connects,
      }).toEqual({
        name: s.name,
        experiment: 'DISRUPT',
        stops: 'measured',
        reps: 3,
        connects: ['persistent', 'per-transaction'],
      });
      expect(validateScenario(s)).toEqual([]);
    }
    const windowSec = local.scenarios.reduce((a, s) => {
      const p = disruptionOf(s);
      return a + (p ? (p.warmupSec + p.recoverySec) * s.repetitions : 0);
    }, 0);
    expect(windowSec).toBeLessThanOrEqual(145);
  });

  test('cloud: the AWS disruptions and the pooler restart, each citing its sources', () => {
    // GIVEN / WHEN / THEN
    expect(cloud.scenarios.map((s) => disruptionOf(s)?.disruption.action)).toEqual([
      'aurora-failover',
      'rds-reboot-failover',
      'rds-reboot',
      'pooler-restart',
    ]);
    for (const s of [...cloud.scenarios, ...local.scenarios])
      for (const rule of s.expectations)
        if (rule.outcome !== 'any' || rule.when.target?.pooled === true)
          expect({
            scenario: s.name,
            rule: rule.when,
            cites: (rule.published ?? rule.note ?? '').length > 20,
          }).toEqual({
            scenario: s.name,
            rule: rule.when,
            cites: true,
          });
  });

  test.each([
    ['1.25.2', 'succeeds'],
    ['1.18.0', 'any'],
    [null, 'any'],
  ])(
    'a rolling restart of PgBouncer %s through its transaction pool is expected to be: %s',
    (version, outcome) => {
      // GIVEN a PgBouncer transaction pool of that version
      const ref = { kind: 'pgbouncer-transaction' as const, name: 'pgbouncer-transaction' };
      const steps = expandSuite(
        {
          ...local,
          scenarios: local.scenarios.filter((s) => disruptionOf(s)?.disruption.action === 'pooler-restart'),
        },
        [
          {
            ref,
            descriptor: describeTarget(ref, { version, placement: 'local' }),
            maxConnections: 40,
            poolSize: 10,
          },
        ],
      );
      // WHEN / THEN (by capability: whether the old process stops listening, decided from the version)
      expect([...new Set(steps.map((s) => s.expectation.outcome))]).toEqual([outcome]);
    },
  );
});
