/**
 * The downtime table (lib/suite/disruption-summary.ts) and its terminal form: repetitions summed per
 * scenario × target × mode, spreads of the windows, writes lost and unknown outcomes.
 */
import { formatResultTables } from '../../lib/cli/terminal';
import type { Suite } from '../../lib/suite/catalog';
import { downtimeRows, formatSpreadSec, livedThrough } from '../../lib/suite/disruption-summary';
import type { ProbeErrorCount } from '../../lib/suite/disruption';
import type { StepRecord } from '../../lib/suite/types';
import { disruptionResult, type DisruptionResultInput } from '../helpers/disruption-result';

const STOPPED: ProbeErrorCount = {
  class: 'server-stopped',
  sqlstate: '57P03',
  code: null,
  count: 5,
  sample: 's',
};

function record(
  target: string,
  rep: number,
  input: DisruptionResultInput,
  held: boolean | null = null,
): StepRecord {
  const mode = input.mode ?? 'persistent';
  return {
    schemaVersion: 1,
    runId: 'r',
    stepId: `restart/${target}/c2/extended/${mode}/r${rep}`,
    scenario: 'restart',
    target: { kind: target === 'direct' ? 'direct' : 'pgbouncer-transaction', name: target },
    params: {
      clients: 2,
      jobs: 1,
      protocol: 'extended',
      connect: mode,
      script: 'disruption(postgres-restart fast)',
      durationSec: 7,
      transactionsPerClient: null,
      rate: null,
      scale: 1,
      poolPercent: null,
      repetition: rep,
    },
    startedAt: '2026-11-21T10:00:00Z',
    endedAt: '2026-11-21T10:00:07Z',
    status: 'completed',
    result: null,
    probe: disruptionResult(input),
    verdict: { expected: 'errors', observed: 'x', held },
    loadGeneratorSaturated: false,
    saturationReason: null,
    command: [],
    files: { stdout: 'a', stderr: 'b', log: null },
  };
}

const RECORDS: StepRecord[] = [
  record('direct', 1, { errors: [STOPPED], figures: { errorWindowMs: 1200 } }, true),
  record(
    'direct',
    2,
    { errors: [STOPPED], figures: { errorWindowMs: 1800 }, writes: { unknown: 2, unknownCommitted: 1 } },
    true,
  ),
  record('direct', 3, { errors: [STOPPED], figures: { errorWindowMs: 1500 } }, true),
  record('pooled', 1, { figures: { stallWindowMs: 600, maxLatencyMs: 620 } }),
  record('pooled', 2, { figures: { stallWindowMs: 0 } }),
  record('pooled', 3, { figures: { stallWindowMs: 700, maxLatencyMs: 710 } }),
];

describe('downtimeRows', () => {
  test('one row per target × mode, the windows as median and range, the ledger summed', () => {
    // GIVEN three repetitions on direct (errors) and on a pool (stalls) WHEN
    const [direct, pooled] = downtimeRows(RECORDS);
    // THEN
    expect(direct).toMatchObject({
      target: { name: 'direct' },
      mode: 'persistent',
      repetitions: 3,
      withErrors: 3,
      errorWindowMs: { min: 1200, median: 1500, max: 1800, n: 3 },
      errorClasses: [{ label: 'server-stopped 57P03', count: 15 }],
      lost: 0,
      unknown: 2,
      unknownCommitted: 1,
      held: 3,
    });
    expect(pooled).toMatchObject({
      withErrors: 0,
      errorWindowMs: null,
      stallWindowMs: { min: 0, median: 600, max: 700 },
      informational: 3,
    });
    expect(formatSpreadSec(direct?.errorWindowMs ?? null)).toBe('1.50 s (1.20–1.80)');
  });

  test('a repetition whose ledger was not read makes the lost count unknown, not 0', () => {
    const rows = downtimeRows([
      ...RECORDS.slice(0, 2),
      record('direct', 3, { writes: { acknowledgedMissing: null, reconciled: false } }),
    ]);
    expect(rows[0]?.lost).toBeNull();
  });

  test('what a client lived through, in one line', () => {
    const [direct, pooled] = downtimeRows(RECORDS);
    expect(livedThrough(direct as NonNullable<typeof direct>)).toBe(
      'direct (persistent, reconnecting), a PostgreSQL restart: errors in 3 of 3 for 1.50 s (1.20–1.80); server-stopped 57P03 ×15; no stall; 0 of 585 acknowledged writes lost, 2 unknown resolved from the ledger (1 committed)',
    );
    expect(livedThrough(pooled as NonNullable<typeof pooled>)).toMatch(
      /^pooled .*: no errors; stalls up to 0\.70 s; 0 of 600 acknowledged writes lost$/,
    );
  });

  test('the terminal shows a disruption scenario as its downtime table', () => {
    const suite: Suite = { name: 's', description: 'd', scenarios: [] };
    const text = formatResultTables(suite, RECORDS, []);
    expect(text).toMatch(
      /target\s+connect\s+reps\s+errors\s+error window\s+stall\s+max ms\s+lost\s+unknown\s+verdicts/,
    );
    expect(text).toMatch(
      /direct\s+persistent\s+3\s+3\/3\s+1\.50 s \(1\.20–1\.80\)\s+none\s+25\s+0\s+2 \(1 committed\)\s+✓3/,
    );
    expect(text).toMatch(/pooled\s+persistent\s+3\s+0\/3\s+–\s+0\.60 s \(0\.00–0\.70\)\s+710/);
  });
});
