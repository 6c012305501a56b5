/** What the terminal shows: durations, step lines, the per-scenario table, progress modes. */
import { PassThrough } from 'node:stream';
import { formatDuration } from '../../lib/core/format';
import {
  formatErrors,
  formatResultTables,
  formatStepLine,
  formatSummary,
  ProgressPrinter,
  type ProgressClock,
} from '../../lib/cli/terminal';
import { getSuite } from '../../lib/suite/catalog';
import type { RunManifest, StepRecord } from '../../lib/suite/types';
import { defined } from '../helpers/defined';

function record(over: Partial<StepRecord> & { stepId: string; scenario: string }): StepRecord {
  return {
    schemaVersion: 1,
    runId: 'r',
    target: { kind: 'direct', name: 'direct' },
    params: {
      clients: 60,
      jobs: 2,
      protocol: 'simple',
      connect: 'persistent',
      script: 'select-1.sql',
      durationSec: 3,
      transactionsPerClient: null,
      rate: null,
      scale: 1,
      poolPercent: null,
      repetition: 1,
    },
    startedAt: '2026-01-01T00:00:00Z',
    endedAt: '2026-01-01T00:00:03Z',
    status: 'completed',
    result: null,
    verdict: { expected: 'succeeds', observed: 'x', held: true },
    loadGeneratorSaturated: false,
    saturationReason: null,
    command: ['pgbench'],
    files: { stdout: 'a', stderr: 'b', log: null },
    ...over,
  };
}

describe('formatDuration', () => {
  test.each([
    [0, '0:00'],
    [59.6, '1:00'],
    [185, '3:05'],
    [3725, '1:02:05'],
    [null, '?'],
  ])('%p → %s', (sec, text) => {
    expect(formatDuration(sec)).toBe(text);
  });
});

test('formatErrors lists classes with counts and aborted clients, or a dash', () => {
  expect(formatErrors([{ class: 'too-many-connections', count: 1, sample: 's' }], 1)).toBe(
    'too-many-connections ×1, 1 aborted',
  );
  expect(formatErrors([], 0)).toBe('-');
});

test('the scenario table shows target, clients, protocol, connect, tps, p95, errors and a ✓/✗ verdict, then comparisons', () => {
  const suite = getSuite('smoke');
  const refused = record({
    stepId: 'smoke-max-connections/direct/c60/simple/persistent/r1',
    scenario: 'smoke-max-connections',
    result: null,
    verdict: { expected: 'refused: too-many-connections', observed: 'o', held: true },
  });
  const broke = record({
    stepId: 'smoke-max-connections/pgbouncer-transaction/c60/simple/persistent/r1',
    scenario: 'smoke-max-connections',
    target: { kind: 'pgbouncer-transaction', name: 'pgbouncer-transaction' },
    verdict: { expected: 'succeeds', observed: 'o', held: false },
  });
  const text = formatResultTables(
    suite,
    [refused, broke],
    [{ scenario: 'smoke-max-connections', expected: '[x] ratio ≥ 3', observed: '1 vs 2', held: false }],
  );
  const lines = text.split('\n');
  expect(lines[0]).toBe(
    'smoke-max-connections — Direct above max_connections is refused, pooled with the same clients succeeds',
  );
  expect(lines[1]).toMatch(/^ {2}target +clients +protocol +connect +tps +p95 ms +errors +verdict$/);
  expect(lines[2]).toMatch(
    /^ {2}direct +60 +simple +persistent +\? +\? +- +✓ refused: too-many-connections$/,
  );
  expect(lines[3]).toMatch(/pgbouncer-transaction +60 .* ✗ succeeds$/);
  expect(lines[4]).toBe('  ✗ [x] ratio ≥ 3 — 1 vs 2');
});

test('a probe scenario (no pgbench) shows what each probe observed instead of tps, p95 and errors', () => {
  // GIVEN the session-state scenario's steps: a probe result beside a null pgbench result
  const suite = getSuite('session-state');
  const probe = (observed: string, target: string): StepRecord =>
    record({
      stepId: `session-state/${target}/c2/simple/persistent/r1`,
      scenario: 'session-state',
      target: { kind: target === 'direct' ? 'direct' : 'pgbouncer-transaction', name: target },
      params: { ...record({ stepId: 'x', scenario: 'x' }).params, clients: 2 },
      probe: { kind: 'session-state', order: 'interleaved', sharing: 'direct', features: [] },
      verdict: { expected: 'succeeds (session-state)', observed, held: true },
    });
  // WHEN the closing table is drawn
  const lines = formatResultTables(
    suite,
    [
      probe('16 features: 16 works, 0 lost, 0 leaks, 0 errors', 'direct'),
      probe('16 features: 4 works, 0 lost, 11 leaks, 1 errors', 'pgbouncer-transaction'),
    ],
    [],
  ).split('\n');
  // THEN no tps or p95 column (never a "?" for what a probe does not measure), the observation instead
  expect(lines[1]).toMatch(/^ {2}target +clients +protocol +connect +observed +verdict$/);
  expect(lines[2]).toMatch(
    /^ {2}direct +2 +simple +persistent +16 features: 16 works, 0 lost, 0 leaks, 0 errors +✓ succeeds \(session-state\)$/,
  );
  expect(lines[3]).toMatch(
    /^ {2}pgbouncer-transaction +2 +simple +persistent +16 features: 4 works, 0 lost, 11 leaks/,
  );
});

test('the summary counts held, broken and informational verdicts and names the run directory', () => {
  const m = {
    status: 'completed',
    stepsCompleted: 2,
    stepIds: ['a', 'b'],
    scenarioVerdicts: [{ scenario: 's', expected: 'e', observed: 'o', held: null }],
  } as unknown as RunManifest;
  const recs = [
    record({ stepId: 'a', scenario: 's' }),
    record({ stepId: 'b', scenario: 's', verdict: { expected: 'e', observed: 'o', held: false } }),
  ];
  expect(formatSummary(m, recs, '/runs/x', 65)).toBe(
    '1 verdict(s) did not hold: 1 held, 1 broke, 1 informational; 2/2 steps in 1:05.\nRun directory: /runs/x',
  );
});

test.each([
  [
    'every verdict informational: not a success',
    [null, null],
    [],
    'No verdict to hold (all informational): 0 held, 0 broke, 2 informational',
  ],
  ['some held, none broke', [true, null], [], 'All verdicts held: 1 held, 0 broke, 1 informational'],
  [
    'a hung step, nothing broke',
    [true, null],
    ['hung'],
    '1 step(s) hung: 1 held, 0 broke, 1 informational, 1 step(s) hung',
  ],
] as const)('the closing line: %s', (_, helds, statuses, head) => {
  const m = { status: 'completed', stepsCompleted: 2, stepIds: ['a', 'b'] } as unknown as RunManifest;
  const recs = helds.map((held, i) =>
    record({
      stepId: `s${i}`,
      scenario: 's',
      ...(statuses[i] ? { status: statuses[i] } : {}),
      verdict: { expected: 'e', observed: 'o', held },
    }),
  );
  expect(formatSummary(m, recs, '/runs/x', 65).split('\n')[0]).toBe(`${head}; 2/2 steps in 1:05.`);
});

describe('ProgressPrinter', () => {
  const step = { stepId: 'smoke-churn/direct/c5/simple/per-transaction/r1' } as never;

  test('without a TTY: one plain line per step start and end, no escape codes', () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (b: Buffer) => (text += b.toString()));
    const p = new ProgressPrinter({ stream: out, tty: false });
    p.handle({ type: 'run-start', runId: 'r', total: 2, alreadyDone: 0, resumed: false });
    p.handle({ type: 'step-start', index: 1, total: 2, step, elapsedSec: 0, etaSec: 8, note: null });
    p.handle({
      type: 'step-end',
      index: 1,
      total: 2,
      step,
      record: record({ stepId: 'smoke-churn/direct/c5/simple/per-transaction/r1', scenario: 'smoke-churn' }),
      elapsedSec: 4,
      etaSec: 4,
    });
    p.handle({ type: 'run-end', status: 'completed', elapsedSec: 8, error: null });
    expect(text).not.toContain('\x1b[');
    expect(text.split('\n')).toEqual([
      'Run r: 2 steps.',
      '> [1/2] smoke-churn/direct/c5/simple/per-transaction/r1  (elapsed 0:00, ETA 0:08)',
      '✓ [1/2] smoke-churn/direct/c5/simple/per-transaction/r1  ? tps, p95 ? ms, errors -',
      '',
    ]);
  });

  test('without a TTY: a long step prints a "still running" line now and then', () => {
    // GIVEN a printer on a fake clock whose timer fires when the test advances time
    let nowMs = 1_000_000;
    let beat: { ms: number; fn: () => void } | null = null;
    let stopped = false;
    const clock: ProgressClock = {
      now: () => nowMs,
      every: (ms, fn) => {
        beat = { ms, fn };
        return () => (stopped = true);
      },
    };
    const advance = (ms: number): void => {
      nowMs += ms;
      beat?.fn();
    };
    const out = new PassThrough();
    let text = '';
    out.on('data', (b: Buffer) => (text += b.toString()));
    const p = new ProgressPrinter({ stream: out, tty: false, heartbeatMs: 60_000, clock });
    // WHEN a step runs for two heartbeats
    p.handle({ type: 'step-start', index: 1, total: 1, step, elapsedSec: 0, etaSec: 600, note: null });
    advance(60_000);
    advance(60_000);
    p.close();
    // THEN two "still running" lines with the step's own elapsed time and the ETA counting down
    const beats = text.split('\n').filter((l) => l.startsWith('  … [1/1] '));
    expect(beat).toMatchObject({ ms: 60_000 });
    expect(beats).toEqual([
      '  … [1/1] 1:00 · elapsed 1:00 · ETA 9:00 · smoke-churn/direct/c5/simple/per-transaction/r1',
      '  … [1/1] 2:00 · elapsed 2:00 · ETA 8:00 · smoke-churn/direct/c5/simple/per-transaction/r1',
    ]);
    expect(stopped).toBe(true);
    expect(text).not.toContain('\x1b[');
  });

  test('on a TTY: the current step is redrawn in place with step k/n, elapsed and ETA', () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (b: Buffer) => (text += b.toString()));
    const p = new ProgressPrinter({ stream: out, tty: true, tickMs: 10_000 });
    p.handle({ type: 'step-start', index: 3, total: 6, step, elapsedSec: 7, etaSec: 12, note: null });
    p.close();
    expect(text).toMatch(
      // eslint-disable-next-line no-control-regex -- the escape codes (ESC [2K) are what this test checks
      /^\r\x1b\[2K\[3\/6\] 0:00 · elapsed 0:00 · ETA 0:12 · smoke-churn\/direct\/c5\/simple\/per-transaction\/r1\r\x1b\[2K$/,
    );
  });

  test('on a narrow TTY the step id is cut, never the counters', () => {
    const out = Object.assign(new PassThrough(), { columns: 50 });
    let text = '';
    out.on('data', (b: Buffer) => (text += b.toString()));
    const p = new ProgressPrinter({ stream: out, tty: true, tickMs: 10_000 });
    p.handle({ type: 'step-start', index: 3, total: 6, step, elapsedSec: 7, etaSec: 12, note: null });
    p.close();
    const line = defined(text.split('\r\x1b[2K')[1], 'a redrawn status line');
    expect([...line].length).toBeLessThanOrEqual(49);
    expect(line).toMatch(/^\[3\/6\] 0:00 · elapsed 0:00 · ETA 0:12 · smo/);
  });
});

describe('a cell the pooler cannot run', () => {
  test('its step line says why, not "? tps"', () => {
    const line = formatStepLine(
      2,
      8,
      record({
        stepId: 'smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-on/r1',
        scenario: 'smoke-prepared',
        status: 'not-available',
        result: null,
        verdict: {
          expected: 'succeeds',
          observed: 'not available on PgBouncer 1.18.0 (needs ≥ 1.21)',
          held: null,
        },
        note: 'not available on PgBouncer 1.18.0 (needs ≥ 1.21)',
      }),
    );
    expect(line).toBe(
      '· [2/8] smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-on/r1  not available on PgBouncer 1.18.0 (needs ≥ 1.21)',
    );
  });
});

test.each([
  // GIVEN a local run with a pooled step: the summary says what loopback means for pooled vs direct
  ['pgbouncer-transaction', 'local', true],
  // a local run of direct steps only has nothing to compare
  ['direct', 'local', false],
  // a cloud run measures real hops
  ['pgbouncer-transaction', 'cloud', false],
] as const)('summary with a %s step in a %s run: loopback caveat %s', (kind, mode, said) => {
  const m = { mode, status: 'completed', stepsCompleted: 1, stepIds: ['a'] } as unknown as RunManifest;
  // WHEN
  const text = formatSummary(
    m,
    [record({ stepId: 'a', scenario: 's', target: { kind, name: kind } })],
    '/runs/x',
    5,
  );
  // THEN
  expect(text.includes('One machine, loopback')).toBe(said);
});
