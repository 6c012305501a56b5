/**
 * Fleet, pure part: splitting a step across runners and merging their measurements.
 */
import {
  argvNumber,
  divideEvenly,
  mergeParts,
  mergeSeries,
  mergeStepRecords,
  PART_NOT_JUDGED,
  partRecord,
  PERCENTILE_MERGE_NOTE,
  rewriteArgvForShare,
  splitStep,
  type RunnerStepRecord,
} from '../../lib/runner/fleet';
import { getSuite } from '../../lib/suite/catalog';
import { expandSuite } from '../../lib/suite/expand';
import type { RunnerPart, StepMeasurement, StepRecord } from '../../lib/suite/types';
import { judgeStep, verdictTotals } from '../../lib/suite/verdict';

function measurement(over: Partial<StepMeasurement>): StepMeasurement {
  return {
    pgbenchVersion: '17.2',
    serverVersion: '16.9',
    transactionType: '<builtin: select only>',
    protocol: 'simple',
    clients: 10,
    threads: 2,
    durationSec: 10,
    transactionsProcessed: 1000,
    transactionsExpected: null,
    failedTransactions: 0,
    tps: 100,
    tpsMode: 'excluding-connections',
    latencyAvgMs: 10,
    latencyStddevMs: 1,
    initialConnectionMs: 5,
    avgConnectionMs: null,
    scheduleLagAvgMs: null,
    abortedClients: 0,
    abortedWhileConnecting: 0,
    complete: true,
    exitCode: 0,
    errors: [],
    latencyP50Ms: 9,
    latencyP95Ms: 12,
    latencyP99Ms: 15,
    series: null,
    ...over,
  };
}

function part(
  runnerId: string,
  clients: number,
  result: StepMeasurement | null,
  cpu: number | null = 20,
): RunnerPart {
  return { runnerId, clients, jobs: 1, result, cpuMaxPercent: cpu };
}

describe('divideEvenly / splitStep', () => {
  test.each([
    [10, 3, [4, 3, 3]],
    [9, 3, [3, 3, 3]],
    [2, 3, [1, 1, 0]],
    [600, 4, [150, 150, 150, 150]],
    [601, 4, [151, 150, 150, 150]],
  ])('divideEvenly(%i, %i) = %j', (total, parts, expected) => {
    // WHEN / THEN
    expect(divideEvenly(total, parts)).toEqual(expected);
  });

  test.each([
    // clients, jobs, rate, runners → [clients], [jobs], [rate]
    [{ clients: 10, jobs: 4, rate: null }, 3, [4, 3, 3], [2, 1, 1], [null, null, null]],
    [{ clients: 600, jobs: 10, rate: 100000 }, 2, [300, 300], [5, 5], [50000, 50000]],
    [{ clients: 5, jobs: 5, rate: 1000 }, 2, [3, 2], [3, 2], [600, 400]],
    // fewer clients than runners: the extra runner sits out, with no jobs and no rate
    [{ clients: 1, jobs: 1, rate: null }, 2, [1, 0], [1, 0], [null, null]],
    // jobs never exceed the runner's clients, never drop below 1
    [{ clients: 3, jobs: 1, rate: null }, 3, [1, 1, 1], [1, 1, 1], [null, null, null]],
  ])('splitStep(%j, %i)', (step, runners, clients, jobs, rate) => {
    // WHEN
    const shares = splitStep(step, runners);
    // THEN
    expect(shares.map((s) => s.clients)).toEqual(clients);
    expect(shares.map((s) => s.jobs)).toEqual(jobs);
    expect(shares.map((s) => s.rate)).toEqual(rate);
    expect(shares.reduce((a, s) => a + s.clients, 0)).toBe(step.clients);
    expect(shares.map((s) => s.runnerIndex)).toEqual(shares.map((_, i) => i));
  });

  test('rejects nonsense', () => {
    expect(() => splitStep({ clients: 0, jobs: 1 }, 2)).toThrow(/clients must be a positive integer/);
    expect(() => splitStep({ clients: 4, jobs: 1 }, 0)).toThrow(/parts must be a positive integer/);
  });
});

describe('rewriteArgvForShare', () => {
  test.each([
    [
      ['pgbench', '-c', '10', '-j', '4', '-T', '20', 'db'],
      ['pgbench', '-c', '4', '-j', '2', '-T', '20', 'db'],
    ],
    [
      ['pgbench', '--client=10', '--jobs=4', '--rate', '1000', 'db'],
      ['pgbench', '--client=4', '--jobs=2', '--rate', '400', 'db'],
    ],
    [
      ['pgbench', '-c10', '-j4', '-R1000', 'db'],
      ['pgbench', '-c4', '-j2', '-R400', 'db'],
    ],
  ])('%j → %j', (argv, expected) => {
    // GIVEN the first of 3 runners' share of 10 clients, 4 jobs, rate 1000
    const share = {
      runnerIndex: 0,
      clients: 4,
      jobs: 2,
      rate: argvNumber(argv, '-R', '--rate') === null ? null : 400,
    };
    // WHEN / THEN
    expect(rewriteArgvForShare(argv, share)).toEqual(expected);
  });

  test('leaves -C, -h and the rest alone', () => {
    const argv = ['pgbench', '-h', 'h', '-C', '-c', '6', '-j', '2', '-M', 'prepared', 'db'];
    expect(rewriteArgvForShare(argv, { runnerIndex: 1, clients: 3, jobs: 1, rate: null })).toEqual([
      'pgbench',
      '-h',
      'h',
      '-C',
      '-c',
      '3',
      '-j',
      '1',
      '-M',
      'prepared',
      'db',
    ]);
  });
});

describe('mergeParts', () => {
  test('sums counts and tps, weights the mean latency by transactions, pools the stddev', () => {
    // GIVEN two runners with different loads (numbers chosen so the merge is checkable by hand)
    const a = measurement({
      clients: 6,
      threads: 2,
      transactionsProcessed: 3000,
      tps: 300,
      latencyAvgMs: 10,
      latencyStddevMs: 2,
      failedTransactions: 1,
    });
    const b = measurement({
      clients: 4,
      threads: 1,
      transactionsProcessed: 1000,
      tps: 100,
      latencyAvgMs: 20,
      latencyStddevMs: 4,
      failedTransactions: 2,
    });
    // WHEN
    const m = mergeParts([part('runner-0', 6, a), part('runner-1', 4, b)]);
    // THEN
    expect(m).not.toBeNull();
    expect(m?.tps).toBe(400);
    expect(m?.transactionsProcessed).toBe(4000);
    expect(m?.failedTransactions).toBe(3);
    expect(m?.clients).toBe(10);
    expect(m?.threads).toBe(3);
    expect(m?.latencyAvgMs).toBeCloseTo(12.5, 10); // (3000·10 + 1000·20) / 4000
    // pooled: E[x²] = (3000·(4+100) + 1000·(16+400)) / 4000 = 182; σ² = 182 − 12.5² = 25.75
    expect(m?.latencyStddevMs).toBeCloseTo(Math.sqrt(25.75), 10);
  });

  test('percentiles are the max over runners (an upper bound), unknown if any runner lacks one', () => {
    const a = measurement({ latencyP95Ms: 12, latencyP99Ms: 30 });
    const b = measurement({ latencyP95Ms: 18, latencyP99Ms: null });
    const m = mergeParts([part('runner-0', 5, a), part('runner-1', 5, b)]);
    expect(m?.latencyP95Ms).toBe(18);
    expect(m?.latencyP99Ms).toBeNull();
  });

  test('errors add up per class, complete only when every part is, unknown tps stays unknown', () => {
    const a = measurement({
      errors: [{ class: 'too-many-connections', count: 3, sample: 'FATAL: sorry' }],
      complete: false,
      exitCode: 2,
      tps: null,
    });
    const b = measurement({
      errors: [
        { class: 'too-many-connections', count: 2, sample: 'other' },
        { class: 'other', count: 1, sample: 'x' },
      ],
    });
    const m = mergeParts([part('runner-0', 5, a), part('runner-1', 5, b)]);
    expect(m?.errors).toEqual([
      { class: 'too-many-connections', count: 5, sample: 'FATAL: sorry' },
      { class: 'other', count: 1, sample: 'x' },
    ]);
    expect(m?.complete).toBe(false);
    expect(m?.exitCode).toBe(2);
    expect(m?.tps).toBeNull();
  });

  test('a runner that sat the step out (0 clients) is ignored; nobody ran → null', () => {
    const a = measurement({ tps: 123 });
    expect(mergeParts([part('runner-0', 1, a), part('runner-1', 0, measurement({ tps: 999 }))])?.tps).toBe(
      123,
    );
    expect(mergeParts([part('runner-0', 1, null), part('runner-1', 0, null)])).toBeNull();
  });

  test('series merge by second: transactions add, latency weighted, max is max', () => {
    const s = mergeSeries([
      [{ t: 100, transactions: 30, latencyAvgMs: 10, latencyMaxMs: 40, lagAvgMs: null, skipped: null }],
      [
        { t: 100, transactions: 10, latencyAvgMs: 30, latencyMaxMs: 90, lagAvgMs: null, skipped: null },
        { t: 101, transactions: 5, latencyAvgMs: 8, latencyMaxMs: 9, lagAvgMs: null, skipped: null },
      ],
    ]);
    expect(s).toEqual([
      { t: 100, transactions: 40, latencyAvgMs: 15, latencyMaxMs: 90, lagAvgMs: null, skipped: null },
      { t: 101, transactions: 5, latencyAvgMs: 8, latencyMaxMs: 9, lagAvgMs: null, skipped: null },
    ]);
  });
});

describe('mergeStepRecords', () => {
  function record(runner: number, clients: number, over: Partial<StepRecord> = {}): RunnerStepRecord {
    const rec: StepRecord = {
      schemaVersion: 1,
      runId: 'r1',
      stepId: 'e1/direct/c600/prepared/persistent/r1',
      scenario: 'e1',
      target: { kind: 'direct', name: 'direct' },
      params: {
        clients,
        jobs: 5,
        protocol: 'prepared',
        connect: 'persistent',
        script: 'select-1.sql',
        durationSec: 20,
        transactionsPerClient: null,
        rate: 50000,
        scale: 1,
        poolPercent: null,
        repetition: 1,
      },
      startedAt: `2026-11-21T10:00:0${runner}.000Z`,
      endedAt: `2026-11-21T10:00:2${runner}.000Z`,
      status: 'completed',
      result: measurement({ clients, tps: clients * 10 }),
      verdict: { expected: 'succeeds', observed: 'succeeded', held: true },
      loadGeneratorSaturated: false,
      saturationReason: null,
      command: ['pgbench'],
      files: { stdout: 's', stderr: 'e', log: null },
      ...over,
    };
    return {
      runnerIndex: runner,
      record: rec,
      cpuMaxPercent: 40,
      raw: { stdout: `out${runner}`, stderr: '', log: null },
    };
  }

  test('full clients/jobs/rate back, parts kept, earliest start and latest end, percentile note', () => {
    // WHEN
    const merged = mergeStepRecords([record(1, 300), record(0, 300)], { judge: (r) => r.verdict });
    // THEN
    expect(merged.params.clients).toBe(600);
    expect(merged.params.jobs).toBe(10);
    expect(merged.params.rate).toBe(100000);
    expect(merged.result?.tps).toBe(6000);
    expect(merged.parts?.map((p) => [p.runnerId, p.clients, p.result?.tps])).toEqual([
      ['runner-0', 300, 3000],
      ['runner-1', 300, 3000],
    ]);
    expect(merged.startedAt).toBe('2026-11-21T10:00:00.000Z');
    expect(merged.endedAt).toBe('2026-11-21T10:00:21.000Z');
    expect(merged.note).toContain(PERCENTILE_MERGE_NOTE);
    expect(merged.loadGeneratorSaturated).toBe(false);
  });

  test('saturated when any runner says so or its CPU reached the threshold', () => {
    const byFlag = mergeStepRecords(
      [record(0, 5), record(1, 5, { loadGeneratorSaturated: true, saturationReason: 'lag' })],
      { judge: (r) => r.verdict },
    );
    expect(byFlag.loadGeneratorSaturated).toBe(true);
    expect(byFlag.saturationReason).toBe('runner-1: lag');
    const hot = { ...record(1, 5), cpuMaxPercent: 97 };
    const byCpu = mergeStepRecords([record(0, 5), hot], {
      judge: (r) => r.verdict,
      cpuSaturationPercent: 90,
    });
    expect(byCpu.saturationReason).toMatch(/runner-1: CPU 97 % ≥ 90 %/);
  });

  test("one runner's server stopped under its share: the merged step is unmeasured and says why first", () => {
    // GIVEN runner 0's share measured, runner 1's share an infrastructure error (the server shut down)
    const cause =
      'infrastructure: server-stopped ×5: the server or pooler stopped during the step; PostgreSQL sent "terminating connection due to administrator command" (SQLSTATE 57P01: …)';
    const stopped = record(1, 5, {
      status: 'infrastructure-error',
      note: cause,
      result: measurement({
        clients: 5,
        complete: false,
        errors: [
          {
            class: 'server-stopped',
            count: 5,
            sample: 'FATAL:  terminating connection due to administrator command',
          },
        ],
      }),
    });
    const planned = expandSuite(getSuite('quick'), [
      { ref: { kind: 'direct', name: 'direct' }, maxConnections: 40, poolSize: null },
    ])[0];
    if (!planned) throw new Error('quick has no direct step');
    // WHEN merged and judged as the fleet leader does
    const merged = mergeStepRecords([record(0, 5, { note: 'pgbench CPU max 40 %' }), stopped], {
      judge: (r) => judgeStep(planned, r.status, r.result),
    });
    // THEN the step is not measured, unjudged, and its note starts with runner 1's cause
    expect(merged.status).toBe('infrastructure-error');
    expect(merged.verdict.held).toBeNull();
    expect(merged.note).toMatch(
      new RegExp(`^runner-1: ${cause.replace(/[()…×]/g, '.')}; pgbench CPU max 40 %`),
    );
    expect(merged.result?.errors.map((e) => e.class)).toContain('server-stopped');
  });

  test('the verdict is re-judged on the merged record', () => {
    const merged = mergeStepRecords([record(0, 5), record(1, 5)], {
      judge: (r) => ({ expected: 'x', observed: `tps ${r.result?.tps}`, held: false }),
    });
    expect(merged.verdict).toEqual({ expected: 'x', observed: 'tps 100', held: false });
  });

  test('a 30-of-60-client share cannot break what the whole step holds: parts carry no verdict', () => {
    // GIVEN a step of 60 clients against max_connections 40 that the catalog expects refused, run
    // as two shares of 30: runner 0's share was refused, runner 1's fitted and succeeded — judged
    // alone, runner 1's share would "break" the expectation.
    const step = expandSuite(getSuite('quick'), [
      { ref: { kind: 'direct', name: 'direct' }, maxConnections: 40, poolSize: null },
    ]).find((s) => s.expectation.outcome === 'refused' && s.params.clients >= 60);
    if (!step) throw new Error('quick has no refused direct step at ≥ 60 clients');
    const refused = measurement({
      clients: 30,
      complete: false,
      abortedClients: 12,
      errors: [{ class: 'too-many-connections', count: 12, sample: 'sorry, too many clients already' }],
    });
    const fitted = measurement({ clients: 30 });
    expect(judgeStep(step, 'completed', fitted).held).toBe(false); // what runner 1's engine concludes
    const engineRecord = (runner: number, m: StepMeasurement): RunnerStepRecord => {
      const base = record(runner, step.params.clients).record;
      const own: StepRecord = {
        ...base,
        stepId: step.stepId,
        result: m,
        verdict: judgeStep(step, 'completed', m),
      };
      return {
        runnerIndex: runner,
        record: partRecord(own, { runnerIndex: runner, clients: 30, jobs: 1, rate: null }, null),
        cpuMaxPercent: 40,
        raw: { stdout: '', stderr: '', log: null },
      };
    };
    const parts = [engineRecord(0, refused), engineRecord(1, fitted)];
    // THEN the parts are measurements only
    for (const p of parts) {
      expect(p.record.verdict).toEqual(PART_NOT_JUDGED);
      expect(p.record.params.clients).toBe(30);
    }
    expect(
      verdictTotals(
        parts.map((p) => p.record),
        [],
      ),
    ).toMatchObject({ broke: 0 });
    // WHEN runner 0 merges them and judges the step once
    const merged = mergeStepRecords(parts, { judge: (r) => judgeStep(step, r.status, r.result) });
    // THEN the whole step (60 clients, some refused) holds
    expect(merged.params.clients).toBe(60);
    expect(merged.verdict.held).toBe(true);
  });
});
