/**
 * The plan of a run from the lab file alone (`proxylab plan`, `run --dry-run`, `run`'s duration
 * check, `validate`'s warnings): the steps the engine would plan, every target left out with its
 * reason, billed parts no step measures, the duration against ttlHours, the cost — and one
 * max_connections assumption shared with `deploy`.
 */
import { expect } from '@jest/globals';
import * as path from 'node:path';
import { loadLabFile } from '../../lib/config/load';
import { validateLab } from '../../lib/config';
import type { LabConfig } from '../../lib/config/types';
import { UsageError } from '../../lib/core/errors';
import { labMaxConnections, maxConnectionsAssumption, runnerCapacityWarnings } from '../../lib/cost/guards';
import { formatRunPlan, labSuiteWarnings, previewRun } from '../../lib/cost/run-plan';
import { decideRunExpiry } from '../../lib/operator/run-window';
import { cloudUnavailable } from '../../lib/runner/disruptions';
import { cloudSessionProbeRunner } from '../../lib/runner/session-probe-runner';
import type { PlannedStep } from '../../lib/suite/expand';

const ROOT = path.resolve(__dirname, '..', '..');
/** The lab of issue 25: Aurora db.r6g.large + 1 reader, RDS Proxy at 50 % and 100 %, PgBouncer on a dedicated c7g.large, 2 runners. */
const ISSUE_LAB = loadLabFile(
  path.join(ROOT, 'test', 'fixtures', 'labs', 'issue-25-rds-proxy-vs-pgbouncer.json'),
);
const OWN = loadLabFile(path.join(ROOT, 'labs', 'own-workload.json'));

function lab(raw: Record<string, unknown>): LabConfig {
  const r = validateLab({ name: 'unit', ...raw });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.lab;
}

describe("e5 on the issue's lab: nothing skipped silently", () => {
  const plan = previewRun(ISSUE_LAB, 'e5');

  test('the transaction pooler gets no step, and the plan says why per scenario', () => {
    expect(plan.targets.map((t) => [t.name, t.steps])).toEqual([
      ['direct', 126],
      ['pool50', 126],
      ['pool100', 126],
      ['bouncer-transaction', 0],
    ]);
    for (const s of plan.scenarios) {
      const bouncer = s.targets.find((t) => t.target === 'bouncer-transaction');
      expect(bouncer?.steps).toBe(0);
      expect(bouncer?.skipped).toBe(
        `${s.name} runs on targets that are [not pooled (direct)] or [pooled, not multiplexing, self-hosted] or ` +
          '[pooled, managed (run by AWS)]; bouncer-transaction is pooled, multiplexing (transaction pool), self-hosted, ' +
          'on a dedicated host (PgBouncer)',
      );
    }
  });

  test('it warns: the unmeasured target, the billed reader and pooler host, the lab outlived, too few runners', () => {
    const byId = (id: string): string[] => plan.warnings.filter((w) => w.id === id).map((w) => w.message);
    expect(byId('proxylab:target-not-measured')).toEqual([
      expect.stringMatching(
        /^target bouncer-transaction gets no step in suite e5: e5-short, e5-long: each runs on/,
      ),
    ]);
    expect(byId('proxylab:billed-not-measured')).toEqual([
      expect.stringMatching(/^aurora\.readers 1: a reader is billed \(\$0\.26\/h\) and no step measures it/),
      'the pooler host of bouncer (c7g.large) is billed ($0.07/h) and suite e5 never measures its pools (bouncer-transaction)',
    ]);
    expect(byId('proxylab:outlives-lab')).toEqual([
      expect.stringMatching(
        /more than the lab's ttlHours 6 from a fresh deploy: run it with --extend \(adds 5 h ≈ \$4\.\d\d\)/,
      ),
    ]);
    expect(byId('proxylab:runners-too-few')).toHaveLength(1);
  });

  test("duration against the lab: about 10.7 h does not fit ttlHours 6; --extend would add 5 h at the lab's hourly price", () => {
    expect(plan.stepCount).toBe(378);
    expect(plan.duration.totalSec / 3600).toBeCloseTo(10.7, 1);
    expect(plan.expiry).toEqual({
      ttlHours: 6,
      neededSec: plan.duration.totalSec + 15 * 60,
      fits: false,
      extendHours: 5,
      extendUsd: expect.closeTo(5 * (plan.cost.priced ? plan.cost.usdPerHour : NaN), 6),
    });
    expect(plan.cost).toEqual(
      expect.objectContaining({ priced: true, region: 'us-east-1', usdPerHour: expect.closeTo(0.92, 2) }),
    );
    const c = plan.cost.priced ? plan.cost : null;
    expect(c?.runUsd).toBeCloseTo((plan.duration.totalSec / 3600) * (c?.usdPerHour ?? 0), 6);
  });

  test('in words: steps per target, every skip reason, duration, lab time, cost, warnings', () => {
    const text = formatRunPlan(plan);
    expect(text).toMatch(
      /^Plan: suite e5 on lab rds-proxy-vs-pgbouncer: 2 scenarios, 378 steps, 2 runners$/m,
    );
    expect(text).toMatch(/^ {4}bouncer-transaction {2}skipped: e5-short runs on targets that are/m);
    expect(text).toMatch(/^ {4}bouncer-transaction {2}0 {5}not measured/m);
    expect(text).toMatch(/^ {2}lab time: does NOT fit in ttlHours 6 .*--extend adds 5 h ≈ \$4\.\d\d$/m);
    expect(text).toMatch(/^ {2}cost: the lab bills about \$0\.92\/h \(us-east-1/m);
    expect(text).toMatch(/^warning: target bouncer-transaction gets no step/m);
  });

  test("the same warnings in validate (the lab's suites together)", () => {
    expect(labSuiteWarnings(ISSUE_LAB, ISSUE_LAB.suites).map((w) => w.id)).toEqual([
      'proxylab:target-not-measured',
      'proxylab:billed-not-measured',
      'proxylab:billed-not-measured',
      'proxylab:outlives-lab',
      'proxylab:runners-too-few',
    ]);
  });

  test("a target measured by one of the lab's suites is not called unmeasured", () => {
    // GIVEN e5 (session pools) and e3 (which runs a transaction pool too)
    const warnings = labSuiteWarnings(ISSUE_LAB, ['e5', 'e3']);
    expect(warnings.some((w) => w.message.startsWith('target bouncer-transaction'))).toBe(false);
    expect(warnings.some((w) => w.message.startsWith('the pooler host of bouncer'))).toBe(false);
  });
});

describe('one max_connections assumption for plan, run and deploy', () => {
  test("db.r6g.large without an override: the class formula (1802), in the plan and in deploy's runner check", () => {
    // GIVEN the lab the issue found assumed 400 by `run` and ≈ 1802 by `deploy`
    const m = maxConnectionsAssumption(ISSUE_LAB);
    expect(m).toEqual({ value: 1802, basis: 'formula', text: expect.stringMatching(/^1802 \(the default /) });
    expect(labMaxConnections(ISSUE_LAB)).toBe(1802);
    // WHEN the plan resolves e5's largest client count (20/24 × max_connections) and deploy checks the runners
    const plan = previewRun(ISSUE_LAB, 'e5');
    const largest = Math.max(...plan.scenarios.flatMap((s) => s.clients));
    const deploy = runnerCapacityWarnings(ISSUE_LAB, ['e5']);
    // THEN both saw the same clients, from the same max_connections
    expect(plan.maxConnections).toEqual(m);
    expect(largest).toBe(Math.round((20 / 24) * 1802));
    expect(deploy.map((w) => w.clients)).toEqual([largest]);
  });

  test.each([
    [{ aurora: { instanceClass: 'db.r6g.large', maxConnections: 1200 } }, 1200, 'lab'],
    [{ aurora: { instanceClass: 'db.t4g.medium' } }, 450, 'formula'],
    [{ aurora: { serverless: { minCapacity: 0.5, maxCapacity: 4 } } }, 901, 'formula'],
    [{ postgres: { instanceClass: 'db.t4g.micro' } }, 112, 'formula'],
  ])('%j → %d (%s)', (raw, value, basis) => {
    expect(maxConnectionsAssumption(lab(raw))).toEqual(expect.objectContaining({ value, basis }));
  });

  test('a class without a memory figure cannot be planned: the error names the fix', () => {
    // (built past validation: every class the validator accepts is to have a price)
    const unknownClass: LabConfig = {
      ...OWN,
      database: {
        ...(OWN.database as Extract<LabConfig['database'], { engine: 'aurora-postgresql' }>),
        capacity: { kind: 'provisioned', instanceClass: 'db.zz9.large' },
      },
    };
    expect(maxConnectionsAssumption(unknownClass).basis).toBe('unknown');
    expect(() => previewRun(unknownClass, 'quick')).toThrow(UsageError);
    expect(() => previewRun(unknownClass, 'quick')).toThrow(/set aurora\.maxConnections/);
  });
});

describe('the own-workload lab: its own scenario on every target', () => {
  const plan = previewRun(OWN, 'lab');

  test('36 steps, 9 per target, none skipped, fits its ttl, priced', () => {
    expect(plan.suite).toBe('lab');
    expect(plan.stepCount).toBe(36);
    expect(plan.targets.map((t) => [t.name, t.steps])).toEqual([
      ['direct', 9],
      ['proxy', 9],
      ['bouncer-transaction', 9],
      ['bouncer-session', 9],
    ]);
    expect(plan.scenarios.map((s) => [s.name, s.experiment, s.source, s.clients])).toEqual([
      ['checkout', null, null, [180, 360, 721]],
    ]);
    expect(plan.expiry.fits).toBe(true);
    expect(plan.warnings).toEqual([]);
  });

  test('a catalog suite on it warns about what that suite leaves out (e4 has no direct step)', () => {
    expect(previewRun(OWN, 'e4').warnings.map((w) => w.message)).toContainEqual(
      expect.stringMatching(/^target direct gets no step in suite e4: e4 runs on targets that are/),
    );
  });
});

describe('lab time', () => {
  test('no expiry: nothing to outlive', () => {
    const plan = previewRun({ ...OWN, ttlHours: null }, 'lab');
    expect(plan.expiry).toEqual(expect.objectContaining({ ttlHours: null, fits: null, extendHours: 0 }));
    expect(formatRunPlan(plan)).toMatch(/lab time: no expiry/);
  });

  test("run's refusal says what the missing hours cost", () => {
    const now = new Date('2026-11-21T10:00:00Z');
    expect(() =>
      decideRunExpiry({
        now,
        estimatedSec: 11 * 3600,
        expiresAt: new Date(now.getTime() + 6 * 3_600_000),
        allowExtend: false,
        suite: 'e5',
        labFile: 'lab.json',
        usdPerHour: 0.92,
      }),
    ).toThrow(/or run with --extend \(6 h more at \$0\.92\/h ≈ \$5\.52\)$/);
  });
});

test("deploy's preflight on a lab that runs its own scenarios checks the runners against them", () => {
  // GIVEN the own-workload lab (suites: ["lab"]) with one small runner
  const small: LabConfig = { ...OWN, runners: { ...OWN.runners, count: 1 } };
  // WHEN deploy's runner check reads the lab's suites
  const warnings = runnerCapacityWarnings(small, small.suites);
  // THEN it resolved `lab` to the lab's scenarios: 0.4 × 1802 = 721 clients > 400 on one c7g.large
  expect(warnings.map((w) => [w.suite, w.clients, w.runnersNeeded])).toEqual([['lab', 721, 2]]);
});

/**
 * The failover labs (issue 37): a disruption's steps of one repetition run together (one failover
 * under every target: a probe group), and a scenario the lab cannot undergo is recorded not
 * available by the runner, in no time. The plan counts what runs, and says what will not, and why.
 */
describe('disruption plans: groups, not steps; only what the lab can run', () => {
  const FAILOVER_AURORA = loadLabFile(path.join(ROOT, 'labs', 'failover-aurora.json'));
  /** One repetition of a cloud disruption: 20 s warm-up + 120 s window, + the 15 s per-step overhead once. */
  const GROUP_SEC = 20 + 120 + 15;
  const SETTLE_SEC = 5 * 60;

  /** One repetition of the pooler's rolling restart: 10 s warm-up + 30 s window + 15 s. */
  const ROLL_SEC = 10 + 30 + 15;

  test.each([
    // Aurora: failover-aurora's 3 repetitions and the pooler host's rolling restart's 3; the RDS reboots are not available
    ['failover-aurora.json', 3 * GROUP_SEC + 3 * ROLL_SEC, 48, 3 * GROUP_SEC + 3 * ROLL_SEC + SETTLE_SEC],
    // RDS Multi-AZ: failover-rds' and reboot-rds' 3 repetitions each, and the rolling restart's 3
    ['failover-rds.json', 6 * GROUP_SEC + 3 * ROLL_SEC, 24, 6 * GROUP_SEC + 3 * ROLL_SEC + SETTLE_SEC],
  ])(
    'the failover suite on labs/%s: %i s of groups, %i steps not available, %i s',
    (file, stepsSec, na, sec) => {
      // WHEN the failover suite is planned on the lab
      const plan = previewRun(loadLabFile(path.join(ROOT, 'labs', file)), 'failover');
      // THEN each repetition counts once, the not-available scenarios and the (absent) data load not at all
      expect(plan.duration.totalSec).toBe(sec);
      // the lab's description promises the suite "under an hour"
      expect(plan.duration.totalSec).toBeLessThan(3600);
      expect(plan.stepCount).toBe(90);
      expect(plan.notAvailableCount).toBe(na);
      expect(plan.duration).toEqual(expect.objectContaining({ initCount: 0, notAvailable: na, stepsSec }));
      const c = plan.cost.priced ? plan.cost : null;
      expect(c?.runUsd).toBeCloseTo((sec / 3600) * (c?.usdPerHour ?? NaN), 6);
    },
  );

  test("an Aurora reader is measured by a suite that fails over to it: no 'billed, not measured' warning", () => {
    // GIVEN the Aurora failover lab (one reader), planned with the failover suite and with a suite without failover
    const billed = (suite: string): string[] =>
      previewRun(FAILOVER_AURORA, suite)
        .warnings.filter((w) => w.id === 'proxylab:billed-not-measured')
        .map((w) => w.message);
    // THEN only the suite that never fails over says the reader is not measured
    expect(billed('failover').filter((m) => m.startsWith('aurora.readers'))).toEqual([]);
    expect(billed('quick').filter((m) => m.startsWith('aurora.readers'))).toEqual([
      expect.stringMatching(/^aurora\.readers 1: a reader is billed .* and no step measures it/),
    ]);
  });

  test('what the lab cannot undergo is planned not available, with the reason the runner records', () => {
    // GIVEN the Aurora failover lab (one runner)
    const plan = previewRun(FAILOVER_AURORA, 'failover');
    const aurora = { engine: 'aurora-postgresql', clusterId: 'c', instanceIds: ['w', 'r'] } as const;
    const reasons = Object.fromEntries(
      plan.scenarios.map((s) => [s.name, s.notAvailable.map((x) => x.reason)]),
    );
    // THEN the runner's own reasons (lib/runner/disruptions.ts), scenario by scenario
    expect(reasons).toEqual({
      'failover-aurora': [],
      'failover-rds': [cloudUnavailable('rds-reboot-failover', { database: aurora, runnerCount: 1 })],
      'reboot-rds': [cloudUnavailable('rds-reboot', { database: aurora, runnerCount: 1 })],
      // the lab has a pooler host: its rolling restart is injected through the host's agent
      'pooler-restart-cloud': [],
    });
    expect(reasons['failover-rds']?.[0]).toMatch(/needs RDS for PostgreSQL; this lab runs Aurora PostgreSQL/);
    // AND in words: the counts in the header, each scenario's reason, each target's time
    const text = formatRunPlan(plan);
    expect(text).toMatch(
      /^Plan: suite failover on lab failover-aurora: 4 scenarios, 90 steps \(48 not available on this lab\), 1 runner$/m,
    );
    expect(text).toMatch(/^ {4}direct {15}6 steps, not available$/m);
    expect(text).toMatch(
      /^ {4}not available \(24 steps, recorded so by the runners, not run\): rds-reboot needs RDS for PostgreSQL/m,
    );
    expect(text).toMatch(/^ {4}direct {15}24 {4}about 11 min \(12 not available\) /m);
    expect(text).toMatch(/^ {2}duration: about 16 min = steps 11 min \(load \+ 15 s each; 36 run together/m);
  });
});

describe('runner count vs steps that need one runner', () => {
  /** The Aurora failover lab with two runners. */
  const TWO = ((l: LabConfig): LabConfig => ({ ...l, runners: { ...l.runners, count: 2 } }))(
    loadLabFile(path.join(ROOT, 'labs', 'failover-aurora.json')),
  );

  test("a failover on two runners: planned not available with the runner's reason; no failover, no time", () => {
    // WHEN the failover suite is planned for a lab of two runners
    const plan = previewRun(TWO, 'failover');
    // THEN every disruption step is not available, failover-aurora's for the runner count
    expect(plan.notAvailableCount).toBe(plan.stepCount);
    const aurora = plan.scenarios.find((s) => s.name === 'failover-aurora');
    expect(aurora?.notAvailable.map((x) => [x.reason, x.steps])).toEqual([
      [
        cloudUnavailable('aurora-failover', {
          database: { engine: 'aurora-postgresql', clusterId: 'c', instanceIds: ['w', 'r'] },
          runnerCount: 2,
        }),
        24,
      ],
    ]);
    expect(plan.duration.stepsSec).toBe(0);
    expect(formatRunPlan(plan)).toMatch(
      /^ {4}not available \(24 steps, recorded so by the runners, not run\): a disruption is injected once, by one runner: this run has 2 \(use a lab with runners\.count 1\)$/m,
    );
  });

  test.each([
    ['plan and run --dry-run', (l: LabConfig) => previewRun(l, 'failover').warnings],
    // (the lab's suites also hold `planned`, warned about the same way: the failover suite's warning here)
    ['validate', (l: LabConfig) => labSuiteWarnings(l, ['failover'])],
  ])('%s warn that the runner count makes them not available', (_where, warningsOf) => {
    expect(warningsOf(TWO).filter((w) => w.id === 'proxylab:needs-one-runner')).toEqual([
      {
        id: 'proxylab:needs-one-runner',
        message: expect.stringMatching(
          /^suite failover: 42 steps need a lab with runners\.count 1 and lab failover-aurora has 2: the runners will record them not available — failover-aurora \(24 steps\): a disruption is injected once, by one runner: this run has 2 .*; pooler-restart-cloud \(18 steps\): a disruption is injected once, by one runner: this run has 2/,
        ),
      },
    ]);
    // one runner: nothing to warn about
    expect(warningsOf({ ...TWO, runners: { ...TWO.runners, count: 1 } }).map((w) => w.id)).not.toContain(
      'proxylab:needs-one-runner',
    );
  });

  test('session-state on two runners: the reason the runner records', () => {
    // GIVEN the session-state suite planned on a lab of two runners
    const plan = previewRun({ ...OWN, runners: { ...OWN.runners, count: 2 } }, 'session-state');
    const runner = cloudSessionProbeRunner({
      targets: [],
      runnerCount: 2,
      proxyNames: {},
      narrow: () => Promise.resolve(null),
      reset: () => Promise.resolve(),
      pinPeriodMs: null,
    });
    const [scenario] = plan.scenarios;
    // THEN every step of it is not available, for the reason the session-state runner gives
    expect(plan.notAvailableCount).toBe(plan.stepCount);
    expect(scenario?.notAvailable.map((x) => x.reason)).toEqual([runner.unavailable?.({} as PlannedStep)]);
    expect(scenario?.notAvailable[0]?.reason).toMatch(
      /^session-state probes run on a single runner \(this run has 2\)/,
    );
    expect(plan.warnings.map((w) => w.id)).toContain('proxylab:needs-one-runner');
  });
});
