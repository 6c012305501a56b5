/** Step logs: per-transaction files (one per thread) → percentiles, series, merged per-second log. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { aggregateTransactionLogs, summarizeStepLogs } from '../../lib/engine/step-logs';
import { parseAggregateLogs } from '../../lib/suite/logs';
import { defined } from '../helpers/defined';

const LOGS = path.join(__dirname, '..', 'fixtures', 'pgbench', 'pg15-local', 'logs');

test('no log files: everything unknown, nothing to keep', () => {
  expect(summarizeStepLogs([], { samplingRate: null, throttled: false })).toEqual({
    latencyP50Ms: null,
    latencyP95Ms: null,
    latencyP99Ms: null,
    series: null,
    mergedLog: null,
  });
  expect(summarizeStepLogs(['', '\n'], { samplingRate: null, throttled: false }).mergedLog).toBeNull();
});

test('the merged log of a real per-transaction capture reads back as the same per-second counts', () => {
  // GIVEN a real pgbench 15 per-transaction log
  const tx = fs.readFileSync(path.join(LOGS, 'per-transaction.thread0.head200.log'), 'utf8');
  const lines = tx.trim().split('\n').length;
  // WHEN
  const s = summarizeStepLogs([tx], { samplingRate: null, throttled: false });
  // THEN the merged aggregate log parses (suite/logs) to the same series counts and the latencies agree
  const back = parseAggregateLogs([defined(s.mergedLog, 'a merged log')], { throttled: false });
  const series = defined(s.series, 'a series');
  expect(back.series.map((p) => p.transactions)).toEqual(series.map((p) => p.transactions));
  expect(back.series.reduce((n, p) => n + p.transactions, 0)).toBe(lines);
  back.series.forEach((p, i) => expect(p.latencyAvgMs).toBeCloseTo(series[i]?.latencyAvgMs ?? NaN, 6));
  expect(s.latencyP50Ms).not.toBeNull();
  expect(s.latencyP50Ms!).toBeLessThanOrEqual(s.latencyP95Ms!);
  expect(s.latencyP95Ms!).toBeLessThanOrEqual(s.latencyP99Ms!);
});

test('aggregate logs (two threads) pass through, sorted by interval', () => {
  const t0 = fs.readFileSync(path.join(LOGS, 'aggregate-interval-1.thread0.log'), 'utf8');
  const t1 = fs.readFileSync(path.join(LOGS, 'aggregate-interval-1.thread1.log'), 'utf8');
  const s = summarizeStepLogs([t0, t1], { samplingRate: null, throttled: false });
  expect(s.series?.[0]).toMatchObject({ t: 1795255350, transactions: 538 + 539 });
  expect(s.latencyP95Ms).toBeNull(); // aggregate logs carry no percentiles
  const starts = s
    .mergedLog!.trim()
    .split('\n')
    .map((l) => Number(l.split(' ')[0]));
  expect(starts).toEqual([...starts].sort((a, b) => a - b));
});

test('with --rate, lag fields and skipped transactions are aggregated; sampling scales counts', () => {
  const lines = [
    '0 1 1000 0 1795255364 100 500',
    '0 2 skipped 0 1795255364 200 9000',
    '1 1 3000 0 1795255364 300 1500',
  ].join('\n');
  expect(aggregateTransactionLogs([lines], 1, true)).toBe(
    '1795255364 2 4000 10000000 1000 3000 2000 2500000 500 1500 1\n',
  );
  expect(aggregateTransactionLogs([lines], 0.5, false)).toBe('1795255364 4 8000 20000000 1000 3000\n');
});
