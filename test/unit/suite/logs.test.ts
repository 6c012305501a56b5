import { readFileSync } from 'fs';
import * as path from 'path';
import { detectLogKind, parseAggregateLogs, parseTransactionLogs } from '../../../lib/suite/logs';

const LOGS = path.resolve(__dirname, '../../fixtures/pgbench/pg15-local/logs');
const read = (name: string): string => readFileSync(path.join(LOGS, name), 'utf8');

describe('aggregate logs (--aggregate-interval 1, pgbench 15, two threads)', () => {
  const thread0 = read('aggregate-interval-1.thread0.log');
  const thread1 = read('aggregate-interval-1.thread1.log');

  test('merging two threads sums transactions per second and keeps the max latency', () => {
    // WHEN
    const { series, latencyP95Ms } = parseAggregateLogs([thread0, thread1], { throttled: false });
    // THEN: values summed by hand from the two files
    expect(series.map((p) => p.t)).toEqual([1795255350, 1795255351, 1795255352, 1795255353, 1795255354]);
    expect(series.map((p) => p.transactions)).toEqual([
      538 + 539,
      5851 + 5702,
      5826 + 6013,
      5760 + 5714,
      6313 + 5682,
    ]);
    expect(series[0]?.latencyAvgMs).toBeCloseTo((220063 + 220320) / (538 + 539) / 1000, 9);
    expect(series.map((p) => p.latencyMaxMs)).toEqual([2.383, 4.19, 2.944, 5.713, 4.46]);
    expect(series[0]?.lagAvgMs).toBeNull(); // not throttled: pg15's zero lag fields are not a measurement
    expect(series[0]?.skipped).toBe(0);
    expect(latencyP95Ms).toBeNull(); // aggregates carry no percentiles
  });

  test('a single thread alone gives that thread only', () => {
    const { series } = parseAggregateLogs([thread1]);
    expect(series.map((p) => p.transactions)).toEqual([539, 5702, 6013, 5714, 5682]);
    expect(series[0]?.lagAvgMs).toBe(0); // fields present and throttling not ruled out
  });

  test('pg14 layout without lag fields: lag and skipped unknown; gaps filled with zero', () => {
    const { series } = parseAggregateLogs(['100 10 5000 0 100 900\n102 4 4000 0 500 1500\n']);
    expect(series).toEqual([
      { t: 100, transactions: 10, latencyAvgMs: 0.5, latencyMaxMs: 0.9, lagAvgMs: null, skipped: null },
      { t: 101, transactions: 0, latencyAvgMs: null, latencyMaxMs: null, lagAvgMs: null, skipped: null },
      { t: 102, transactions: 4, latencyAvgMs: 1, latencyMaxMs: 1.5, lagAvgMs: null, skipped: null },
    ]);
  });
});

describe('per-transaction logs (--log)', () => {
  const thread0 = read('per-transaction.thread0.head200.log');

  test('exact percentiles and one per-second point from the real log', () => {
    // WHEN
    const r = parseTransactionLogs([thread0]);
    // THEN: latencies 300 320 354 317 274 443 µs → sorted 274 300 317 320 354 443
    expect(r.latencyP50Ms).toBe(0.317);
    expect(r.latencyP95Ms).toBe(0.443);
    expect(r.latencyP99Ms).toBe(0.443);
    expect(r.sampledTransactions).toBe(6);
    expect(r.series).toHaveLength(1);
    expect(r.series[0]).toMatchObject({
      t: 1795255364,
      transactions: 6,
      latencyMaxMs: 0.443,
      lagAvgMs: null,
      skipped: null,
    });
    expect(r.series[0]?.latencyAvgMs).toBeCloseTo(2008 / 6 / 1000, 9);
  });

  test('a percentile on 0 µs entries (pgbench’s lazily read clock) is unknown, not 0 ms', () => {
    // GIVEN a fast direct step: 6 of 10 transactions logged at 0 µs (started and completed within
    // one pass of pgbench's state machine, one clock reading), the rest 20–90 µs
    const lines = [0, 0, 0, 0, 0, 0, 20, 40, 60, 90].map((us, i) => `0 ${i} ${us} 0 300 ${i}`).join('\n');
    // WHEN
    const r = parseTransactionLogs([lines]);
    // THEN p50 lands on a 0 µs entry: unknown; p95 and p99 are real
    expect(r.latencyP50Ms).toBeNull();
    expect(r.latencyP95Ms).toBe(0.09);
    expect(r.latencyP99Ms).toBe(0.09);
    expect(r.sampledTransactions).toBe(10);
  });

  test('two threads merge into the same seconds; failed transactions are not counted; lag read when present', () => {
    const threadA = '0 1 1000 0 200 10 50\n0 2 3000 0 201 10 150\n';
    const threadB = '1 1 2000 0 200 99 100\n1 2 failed 0 201 50 0\n1 3 skipped 0 203 0 0\n';
    // WHEN
    const r = parseTransactionLogs([threadA, threadB]);
    // THEN
    expect(r.series).toEqual([
      { t: 200, transactions: 2, latencyAvgMs: 1.5, latencyMaxMs: 2, lagAvgMs: 0.075, skipped: 0 },
      { t: 201, transactions: 1, latencyAvgMs: 3, latencyMaxMs: 3, lagAvgMs: 0.15, skipped: 0 },
      { t: 202, transactions: 0, latencyAvgMs: null, latencyMaxMs: null, lagAvgMs: null, skipped: 0 },
      { t: 203, transactions: 0, latencyAvgMs: null, latencyMaxMs: null, lagAvgMs: null, skipped: 1 },
    ]);
    expect(r.latencyP50Ms).toBe(2);
  });

  test('with --sampling-rate the series counts scale by 1/rate, percentiles stay on the sample', () => {
    const r = parseTransactionLogs([thread0], { samplingRate: 0.5 });
    expect(r.series[0]?.transactions).toBe(12);
    expect(r.samplingRate).toBe(0.5);
    expect(r.latencyP50Ms).toBe(0.317);
  });

  test('empty logs: percentiles unknown, no series', () => {
    const r = parseTransactionLogs(['']);
    expect(r).toMatchObject({ latencyP50Ms: null, latencyP95Ms: null, latencyP99Ms: null, series: [] });
  });
});

test.each([
  ['aggregate-interval-1.thread0.log', 'aggregate'],
  ['per-transaction.thread0.head200.log', 'per-transaction'],
])('detectLogKind(%s) = %s', (file, kind) => {
  expect(detectLogKind(read(file))).toBe(kind);
});

test('detectLogKind rejects something that is not a pgbench log', () => {
  expect(detectLogKind('number of clients: 5\n')).toBe('unknown');
});
