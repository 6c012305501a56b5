import { readFileSync } from 'fs';
import * as path from 'path';
import { getSuite } from '../../../lib/suite/catalog';
import { expandSuite, type PlannedStep, type TargetCapacity } from '../../../lib/suite/expand';
import { parsePgbench } from '../../../lib/suite/parser';
import type { StepMeasurement, StepRecord, StepStatus } from '../../../lib/suite/types';
import { describeTarget } from '../../../lib/suite/targets';
import { describeExpectation, detectSaturation, judgeScenario, judgeStep } from '../../../lib/suite/verdict';

const FIXTURES = path.resolve(__dirname, '../../fixtures/pgbench/pg15-local');
const LOCAL: TargetCapacity[] = [
  { ref: { kind: 'direct', name: 'direct' }, maxConnections: 40, poolSize: null },
  { ref: { kind: 'pgbouncer-transaction', name: 'pgbouncer-transaction' }, maxConnections: 40, poolSize: 10 },
];
const SMOKE = expandSuite(getSuite('smoke'), LOCAL);

function capture(name: string): StepMeasurement {
  const base = path.join(FIXTURES, name);
  const meta = JSON.parse(readFileSync(`${base}.meta.json`, 'utf8')) as { exitCode: number };
  const run = parsePgbench({
    stdout: readFileSync(`${base}.stdout`, 'utf8'),
    stderr: readFileSync(`${base}.stderr`, 'utf8'),
    exitCode: meta.exitCode,
  });
  return { ...run, latencyP50Ms: null, latencyP95Ms: null, latencyP99Ms: null, series: null };
}

function smokeStep(id: string): PlannedStep {
  const s = SMOKE.find((x) => x.stepId === id);
  if (!s) throw new Error(`no step ${id}`);
  return s;
}

const PREPARED = 'smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-off/r1';
const SIMPLE = 'smoke-prepared/pgbouncer-transaction/c5/simple/persistent/ps-off/r1';
const DIRECT_ABOVE = 'smoke-max-connections/direct/c60/simple/persistent/r1';
const POOLED_ABOVE = 'smoke-max-connections/pgbouncer-transaction/c60/simple/persistent/r1';

describe('judgeStep on real captures', () => {
  test.each<[string, string, StepStatus, boolean | null]>([
    // the finding, as predicted
    [PREPARED, 'pgb_sel1_prepared_c5', 'completed', true],
    [SIMPLE, 'pgb_sel1_simple_c5', 'completed', true],
    [DIRECT_ABOVE, 'direct_sel1_simple_c60_bench', 'completed', true],
    [DIRECT_ABOVE, 'direct_sel1_simple_c60_postgres', 'completed', true],
    [DIRECT_ABOVE, 'direct_C_sel1_c60', 'completed', true], // -C: fails mid-run with too-many-connections
    [POOLED_ABOVE, 'pgb_S_simple_c60', 'completed', true],
    // broken expectations
    [SIMPLE, 'pgb_sel1_prepared_c5', 'completed', false], // aborted clients: not a success
    [PREPARED, 'pgb_sel1_simple_c5', 'completed', false], // no prepared-statement errors
    [DIRECT_ABOVE, 'pgb_S_simple_c60', 'completed', false], // direct was not refused
    [POOLED_ABOVE, 'direct_C_sel1_c60', 'completed', false],
  ])('%s with %s (%s) → held %s', (id, fixture, status, held) => {
    expect(judgeStep(smokeStep(id), status, capture(fixture)).held).toBe(held);
  });

  test('words: expected and observed', () => {
    const v = judgeStep(smokeStep(DIRECT_ABOVE), 'completed', capture('direct_sel1_simple_c60_bench'));
    expect(v.expected).toBe('refused: too-many-connections');
    expect(v.observed).toBe('incomplete (exit 1), tps unknown, 1 clients aborted, too-many-connections ×1');
  });

  test('timeouts', () => {
    expect(judgeStep(smokeStep(SIMPLE), 'timeout', null)).toMatchObject({
      held: false,
      observed: 'timed out',
    });
    expect(judgeStep(smokeStep(PREPARED), 'timeout', null).held).toBe(false);
    const anyStep: PlannedStep = {
      ...smokeStep(SIMPLE),
      expectation: { outcome: 'any', errorClasses: [], published: 'errors: portal-missing', note: null },
    };
    expect(judgeStep(anyStep, 'timeout', null).held).toBeNull();
    expect(judgeStep(anyStep, 'completed', capture('pgb_sel1_simple_c5')).held).toBeNull();
    expect(describeExpectation(anyStep.expectation)).toBe('any (published: errors: portal-missing)');
    const timeoutExpected: PlannedStep = {
      ...anyStep,
      expectation: { outcome: 'errors', errorClasses: ['timeout'], published: null, note: null },
    };
    expect(judgeStep(timeoutExpected, 'timeout', null).held).toBe(true);
  });
});

describe('detectSaturation', () => {
  const e1 = expandSuite(getSuite('e1'), [
    { ref: { kind: 'rds-proxy', name: 'p' }, maxConnections: 394, poolSize: 394 },
  ])[0]!;
  const base = capture('pgb_sel1_simple_c50');

  test('E1-like schedule lag of seconds with --rate: saturated', () => {
    const r = detectSaturation(e1, { ...base, scheduleLagAvgMs: 7234, latencyAvgMs: 3 });
    expect(r.saturated).toBe(true);
    expect(r.reason).toMatch(/--rate 100000: schedule lag avg 7234.0 ms vs latency avg 3.0 ms/);
  });

  test('small lag, no rate, or unknown lag: not saturated', () => {
    expect(detectSaturation(e1, { ...base, scheduleLagAvgMs: 2, latencyAvgMs: 3 })).toEqual({
      saturated: false,
      reason: null,
    });
    expect(detectSaturation(smokeStep(SIMPLE), { ...base, scheduleLagAvgMs: 7000 })).toEqual({
      saturated: false,
      reason: null,
    });
    expect(detectSaturation(e1, null)).toEqual({ saturated: false, reason: null });
  });

  test('client CPU ≥ 90 % is saturation', () => {
    expect(detectSaturation(smokeStep(SIMPLE), base, 95).reason).toMatch(/CPU peaked at 95 %/);
    expect(detectSaturation(smokeStep(SIMPLE), base, 60).saturated).toBe(false);
  });

  test("a PgBouncer co-located on the runner: the note says the runner's CPU includes PgBouncer's", () => {
    const step = smokeStep(SIMPLE);
    const colocated = { ...step, descriptor: { ...step.descriptor, placement: 'co-located' as const } };
    expect(detectSaturation(colocated, base, 95).reason).toMatch(
      /CPU peaked at 95 % .*includes the co-located PgBouncer's/,
    );
    expect(detectSaturation(step, base, 95).reason).not.toMatch(/co-located/);
  });
});

describe('judgeScenario', () => {
  function record(step: PlannedStep, fixture: string | null, tpsOverride?: number): StepRecord {
    const m = fixture === null ? null : capture(fixture);
    const result = m && tpsOverride !== undefined ? { ...m, tps: tpsOverride } : m;
    return {
      schemaVersion: 1,
      runId: 'r',
      stepId: step.stepId,
      scenario: step.scenario,
      target: step.target,
      params: step.params,
      startedAt: '2026-11-21T10:00:00Z',
      endedAt: '2026-11-21T10:00:03Z',
      status: 'completed',
      result,
      verdict: { expected: '', observed: '', held: null },
      loadGeneratorSaturated: false,
      saturationReason: null,
      command: [],
      files: { stdout: 'x.stdout', stderr: 'x.stderr', log: null },
    };
  }
  const churn = getSuite('smoke').scenarios.find((s) => s.name === 'smoke-churn')!;
  const direct = smokeStep('smoke-churn/direct/c5/simple/per-transaction/r1');
  const pooled = smokeStep('smoke-churn/pgbouncer-transaction/c5/simple/per-transaction/r1');

  test('-C through PgBouncer vs direct on the real captures: 3344 vs 405 tps = 8.26 ×, held', () => {
    const verdicts = judgeScenario(churn, [
      record(direct, 'direct_C_sel1_c5_trust'),
      record(pooled, 'pgbtx_C_sel1_c5'),
    ]);
    expect(verdicts).toEqual([
      {
        expected:
          '[pgbouncer-churn-vs-direct-churn] pgbouncer-transaction vs direct c5/simple: -C through PgBouncer ≥ 3 × the tps of -C direct: ratio ≥ 3',
        observed: '3344.1 vs 405.0 tps = 8.26 ×',
        held: true,
      },
    ]);
  });

  test('a ratio below the minimum breaks the comparison', () => {
    const verdicts = judgeScenario(churn, [
      record(direct, 'direct_C_sel1_c5_trust'),
      record(pooled, 'pgbtx_C_sel1_c5', 800),
    ]);
    expect(verdicts.map((v) => v.held)).toEqual([false]);
  });

  test('median over repetitions', () => {
    const pooled2 = {
      ...pooled,
      stepId: pooled.stepId.replace('/r1', '/r2'),
      params: { ...pooled.params, repetition: 2 },
    };
    const pooled3 = {
      ...pooled,
      stepId: pooled.stepId.replace('/r1', '/r3'),
      params: { ...pooled.params, repetition: 3 },
    };
    const verdicts = judgeScenario(churn, [
      record(direct, 'direct_C_sel1_c5_trust', 400),
      record(pooled, 'pgbtx_C_sel1_c5', 100),
      record(pooled2, 'pgbtx_C_sel1_c5', 4000),
      record(pooled3, 'pgbtx_C_sel1_c5', 2000),
    ]);
    expect(verdicts[0]?.observed).toBe('2000.0 vs 400.0 tps = 5.00 ×');
  });

  test('a side with no complete run cannot show the finding', () => {
    const verdicts = judgeScenario(churn, [
      record(direct, 'direct_C_sel1_c60'),
      record(pooled, 'pgbtx_C_sel1_c5'),
    ]);
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]).toMatchObject({
      held: false,
      observed: 'not comparable: direct has no complete run with a tps',
    });
  });

  test('E4: pool 50 % vs 25 % on the same target, reported without a judgement', () => {
    const e4 = getSuite('e4').scenarios[0]!;
    const steps = expandSuite(getSuite('e4'), LOCAL);
    const at = (p: number): PlannedStep => steps.find((s) => s.params.poolPercent === p)!;
    const verdicts = judgeScenario(e4, [
      record(at(25), 'pgb_S_simple_c60', 1000),
      record(at(50), 'pgb_S_simple_c60', 1500),
      record(at(100), 'pgb_S_simple_c60', 500),
    ]);
    expect(verdicts.map((v) => [v.observed, v.held])).toEqual([
      ['1500.0 vs 1000.0 tps = 1.50 ×', null],
      ['500.0 vs 1000.0 tps = 0.50 ×', null],
    ]);
  });

  test('quick-e3: direct persistent vs direct -C is judged on the same target', () => {
    const quickE3 = getSuite('quick').scenarios.find((s) => s.name === 'quick-e3')!;
    const steps = expandSuite(getSuite('quick'), LOCAL).filter((s) => s.scenario === 'quick-e3');
    const find = (target: string, connect: string): PlannedStep =>
      steps.find((s) => s.target.name === target && s.params.connect === connect)!;
    const verdicts = judgeScenario(quickE3, [
      record(find('direct', 'per-transaction'), 'direct_C_sel1_c5_trust'),
      record(find('direct', 'persistent'), 'pgb_sel1_simple_c5', 19084.8),
      record(find('pgbouncer-transaction', 'per-transaction'), 'pgbtx_C_sel1_c5'),
      record(find('pgbouncer-transaction', 'persistent'), 'pgb_sel1_simple_c5'),
    ]);
    expect(verdicts.map((v) => [v.expected.split(':')[0], v.observed, v.held])).toEqual([
      ['[direct-persistent-vs-churn] direct vs direct c10/simple', '19084.8 vs 405.0 tps = 47.12 ×', true],
      [
        '[pgbouncer-churn-vs-direct-churn] pgbouncer-transaction vs direct c10/simple',
        '3344.1 vs 405.0 tps = 8.26 ×',
        true,
      ],
    ]);
  });

  test('records of other scenarios are ignored; no comparisons → no verdicts', () => {
    expect(judgeScenario(churn, [record(smokeStep(SIMPLE), 'pgb_sel1_simple_c5')])).toEqual([]);
    const maxConn = getSuite('smoke').scenarios.find((s) => s.name === 'smoke-max-connections')!;
    expect(judgeScenario(maxConn, [record(smokeStep(POOLED_ABOVE), 'pgb_S_simple_c60')])).toEqual([]);
  });
});

describe('E6: the page’s direction judged, the counterparts reported (hand-made records)', () => {
  // GIVEN a lab with direct, PgBouncer with 1 and with 4 processes, and PgDoorman: a pool of 40
  const desc = (name: string, kind: 'pgbouncer-transaction' | 'pgdoorman-transaction', processes: number) =>
    describeTarget(
      { kind, name },
      {
        version: kind === 'pgdoorman-transaction' ? '3.10.7' : '1.25.2',
        maxPreparedStatements: 200,
        processes,
      },
    );
  const targets: TargetCapacity[] = [
    { ref: { kind: 'direct', name: 'direct' }, maxConnections: 405, poolSize: null },
    {
      ref: { kind: 'pgbouncer-transaction', name: 'one-transaction' },
      descriptor: desc('one-transaction', 'pgbouncer-transaction', 1),
      maxConnections: 405,
      poolSize: 40,
    },
    {
      ref: { kind: 'pgbouncer-transaction', name: 'four-transaction' },
      descriptor: desc('four-transaction', 'pgbouncer-transaction', 4),
      maxConnections: 405,
      poolSize: 40,
    },
    {
      ref: { kind: 'pgdoorman-transaction', name: 'doorman-transaction' },
      descriptor: desc('doorman-transaction', 'pgdoorman-transaction', 1),
      maxConnections: 405,
      poolSize: 40,
    },
  ];
  const e6 = getSuite('e6').scenarios.find((s) => s.name === 'e6')!;
  const steps = expandSuite({ name: 'x', description: 'x', scenarios: [e6] }, targets).filter(
    (s) => s.params.clients === 120 && s.params.protocol === 'prepared' && s.params.connect === 'persistent',
  );
  const tps: Record<string, number> = {
    direct: 5000,
    'one-transaction': 10000,
    'four-transaction': 30000,
  };
  const records = (doorman: number): StepRecord[] =>
    steps.map((s) => ({
      schemaVersion: 1,
      runId: 'r',
      stepId: s.stepId,
      scenario: s.scenario,
      target: s.target,
      params: s.params,
      startedAt: '2026-11-21T10:00:00Z',
      endedAt: '2026-11-21T10:01:00Z',
      status: 'completed',
      result: {
        ...capture('pgbtx_C_sel1_c5'),
        tps: s.target.name === 'doorman-transaction' ? doorman : (tps[s.target.name] ?? 0),
      },
      verdict: { expected: '', observed: '', held: null },
      loadGeneratorSaturated: false,
      saturationReason: null,
      command: [],
      files: { stdout: 'x.stdout', stderr: 'x.stderr', log: null },
    }));
  const describe2 = (r: StepRecord) => steps.find((s) => s.stepId === r.stepId)!.descriptor;

  test.each([
    [120000, true],
    [9000, false],
  ])(
    'PgDoorman at %p tps vs one PgBouncer process at 10000: direction held %p; the N-process ratio only reported',
    (doorman, held) => {
      // WHEN
      const v = judgeScenario(e6, records(doorman), describe2);
      // THEN the page's comparison is judged against the one-process PgBouncer only
      const judged = v.filter((x) => x.held !== null);
      expect(judged).toHaveLength(1);
      expect(judged[0]?.expected).toMatch(
        /^\[pgdoorman-vs-pgbouncer-one-process\] doorman-transaction vs one-transaction c120\/prepared\/persistent/,
      );
      expect(judged[0]?.held).toBe(held);
      // and the fair counterpart (4 processes), the processes' gain and direct are reported
      expect(
        v.filter((x) => x.held === null).map((x) => x.expected.slice(0, x.expected.indexOf(']') + 1)),
      ).toEqual([
        '[pgdoorman-vs-pgbouncer-processes]',
        '[pgbouncer-processes-vs-one-process]',
        '[pgdoorman-vs-direct]',
      ]);
    },
  );

  test('prepared statements through PgDoorman’s transaction pool are expected to succeed, through a PgBouncer with max_prepared_statements 0 to fail', () => {
    const doorman = steps.find((s) => s.target.name === 'doorman-transaction')!;
    expect(doorman.expectation.outcome).toBe('succeeds');
    const off = expandSuite({ name: 'x', description: 'x', scenarios: [e6] }, [
      {
        ref: { kind: 'pgbouncer-transaction', name: 'p' },
        descriptor: describeTarget(
          { kind: 'pgbouncer-transaction', name: 'p' },
          { version: '1.25.2', maxPreparedStatements: 0 },
        ),
        maxConnections: 405,
        poolSize: 40,
      },
    ]).find((s) => s.params.protocol === 'prepared');
    expect(off?.expectation.outcome).toBe('errors');
  });
});
