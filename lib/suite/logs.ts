/**
 * pgbench log files (pure: contents in, figures out). pgbench writes one file per thread
 * (`PREFIX.PID`, `PREFIX.PID.1`, …); pass all of them, they are merged.
 *
 * Per-transaction log (`--log`), one line per transaction, times in µs:
 *   client_id transaction_no time_us script_no time_epoch time_us_frac [schedule_lag] [retries]
 * `time_us` is `skipped` / `failed` / `serialization` / `deadlock` / `other` for transactions that
 * did not complete; those count in no latency and not as transactions. `time_epoch` is the
 * completion time. With `--sampling-rate r` only a fraction r of transactions is logged: series
 * counts are scaled by 1/r (rounded), percentiles are computed on the sample.
 *
 * Aggregate log (`--aggregate-interval N`), one line per interval and thread, µs:
 *   pg14:     start cnt sum sum2 min max [lag_sum lag_sum2 lag_min lag_max [skipped]]
 *   pg15–17:  start cnt sum sum2 min max lag_sum lag_sum2 lag_min lag_max skipped retried retries
 *             serialization_failures deadlock_failures   (every field always written)
 *   pg18:     … plus other_sql_failures
 * pg15+ writes zeros for lag without `--rate`: pass `{ throttled: false }` so lag reads as unknown.
 */
import { percentiles } from '../core/stats';
import type { SeriesPoint } from './types';

export interface TransactionLogSummary {
  readonly latencyP50Ms: number | null;
  readonly latencyP95Ms: number | null;
  readonly latencyP99Ms: number | null;
  readonly series: SeriesPoint[];
  /** Completed transactions in the log (the sample, not scaled). */
  readonly sampledTransactions: number;
  /** Sampling rate applied to the series counts (1 = every transaction logged). */
  readonly samplingRate: number;
}

interface Bucket {
  n: number;
  latencySumUs: number;
  latencyMaxUs: number;
  lagSumUs: number;
  lagN: number;
  skipped: number;
}

function emptyBucket(): Bucket {
  return { n: 0, latencySumUs: 0, latencyMaxUs: 0, lagSumUs: 0, lagN: 0, skipped: 0 };
}

function fillGaps<B>(
  buckets: Map<number, B>,
  toPoint: (t: number, b: B | undefined) => SeriesPoint,
): SeriesPoint[] {
  if (buckets.size === 0) return [];
  const keys = [...buckets.keys()];
  const first = Math.min(...keys);
  const last = Math.max(...keys);
  const out: SeriesPoint[] = [];
  for (let t = first; t <= last; t++) out.push(toPoint(t, buckets.get(t)));
  return out;
}

/** One line of a per-transaction log, as read. */
export interface TransactionLine {
  /** Completion time, epoch seconds. */
  readonly epochSec: number;
  /** Latency in µs; null for a transaction that did not complete (failed, serialization, …). */
  readonly latencyUs: number | null;
  /** Skipped by --rate with --latency-limit. */
  readonly skipped: boolean;
  /** Schedule lag in µs (only with --rate), else null. */
  readonly lagUs: number | null;
}

/** Visit every transaction line of per-thread per-transaction logs; other lines are ignored. */
export function forEachTransaction(files: readonly string[], visit: (tx: TransactionLine) => void): void {
  for (const content of files) {
    for (const line of content.split('\n')) {
      const f = line.trim().split(/\s+/);
      if (f.length < 6) continue;
      const epochSec = Number(f[4]);
      if (!Number.isInteger(epochSec)) continue;
      const skipped = f[2] === 'skipped';
      const latency = skipped ? Number.NaN : Number(f[2]);
      const lag = f.length >= 7 ? Number(f[6]) : Number.NaN;
      visit({
        epochSec,
        latencyUs: Number.isFinite(latency) ? latency : null,
        skipped,
        lagUs: Number.isFinite(lag) ? lag : null,
      });
    }
  }
}

export function parseTransactionLogs(
  files: readonly string[],
  opts: { samplingRate?: number | null } = {},
): TransactionLogSummary {
  const rate = opts.samplingRate ?? 1;
  if (!(rate > 0 && rate <= 1)) throw new RangeError(`samplingRate must be in (0, 1], got ${rate}`);
  const latencies: number[] = [];
  const buckets = new Map<number, Bucket>();
  let sawLag = false;
  let sawSkipped = false;
  forEachTransaction(files, (tx) => {
    const b = buckets.get(tx.epochSec) ?? emptyBucket();
    buckets.set(tx.epochSec, b);
    if (tx.skipped) {
      sawSkipped = true;
      b.skipped += 1;
      return;
    }
    if (tx.latencyUs === null) return; // failed / serialization / deadlock / other
    latencies.push(tx.latencyUs);
    b.n += 1;
    b.latencySumUs += tx.latencyUs;
    b.latencyMaxUs = Math.max(b.latencyMaxUs, tx.latencyUs);
    if (tx.lagUs !== null) {
      sawLag = true;
      b.lagSumUs += tx.lagUs;
      b.lagN += 1;
    }
  });
  const [p50 = null, p95 = null, p99 = null] = percentiles(latencies, [50, 95, 99]);
  // A percentile that lands on a 0 µs entry is unknown, not 0: pgbench reads its clock lazily, once
  // per pass of a client's state machine (pg_time_now_lazy in advanceConnectionState: txn_begin and
  // the end of a transaction can share one reading), so a transaction that starts and completes
  // within one pass is logged at 0 µs. No PostgreSQL round trip takes 0 µs; such a figure is below
  // what pgbench measured (fast local direct steps hit it: issue 25's "p50 = 0 ms").
  const ms = (us: number | null): number | null => (us === null || us === 0 ? null : us / 1000);
  const series = fillGaps(buckets, (t, b) => ({
    t,
    transactions: b ? Math.round(b.n / rate) : 0,
    latencyAvgMs: b && b.n > 0 ? b.latencySumUs / b.n / 1000 : null,
    latencyMaxMs: b && b.n > 0 ? b.latencyMaxUs / 1000 : null,
    lagAvgMs: sawLag && b && b.lagN > 0 ? b.lagSumUs / b.lagN / 1000 : null,
    skipped: sawSkipped ? Math.round((b?.skipped ?? 0) / rate) : null,
  }));
  return {
    latencyP50Ms: ms(p50),
    latencyP95Ms: ms(p95),
    latencyP99Ms: ms(p99),
    series,
    sampledTransactions: latencies.length,
    samplingRate: rate,
  };
}

export interface AggregateLogSummary {
  readonly latencyP50Ms: null;
  readonly latencyP95Ms: null;
  readonly latencyP99Ms: null;
  readonly series: SeriesPoint[];
}

/** Merge per-thread aggregate logs by interval start: counts and sums add, max is the max. */
export function parseAggregateLogs(
  files: readonly string[],
  opts: { throttled?: boolean } = {},
): AggregateLogSummary {
  interface Agg extends Bucket {
    hasLag: boolean;
    hasSkipped: boolean;
  }
  const buckets = new Map<number, Agg>();
  for (const content of files) {
    for (const line of content.split('\n')) {
      const f = line.trim().split(/\s+/).map(Number);
      if (f.length < 6 || f.some((x) => !Number.isFinite(x))) continue;
      const [t, cnt, sum, , , max] = f as [number, number, number, number, number, number];
      const b = buckets.get(t) ?? { ...emptyBucket(), hasLag: false, hasSkipped: false };
      buckets.set(t, b);
      b.n += cnt;
      b.latencySumUs += sum;
      if (cnt > 0) b.latencyMaxUs = Math.max(b.latencyMaxUs, max);
      if (f.length >= 10 && opts.throttled !== false) {
        b.hasLag = true;
        b.lagSumUs += f[6] ?? 0;
        b.lagN += cnt;
      }
      if (f.length >= 11) {
        b.hasSkipped = true;
        b.skipped += f[10] ?? 0;
      }
    }
  }
  const series = fillGaps(buckets, (t, b) => ({
    t,
    transactions: b?.n ?? 0,
    latencyAvgMs: b && b.n > 0 ? b.latencySumUs / b.n / 1000 : null,
    latencyMaxMs: b && b.n > 0 ? b.latencyMaxUs / 1000 : null,
    lagAvgMs: b && b.hasLag && b.lagN > 0 ? b.lagSumUs / b.lagN / 1000 : null,
    skipped: b && b.hasSkipped ? b.skipped : null,
  }));
  return { latencyP50Ms: null, latencyP95Ms: null, latencyP99Ms: null, series };
}

export type LogKind = 'per-transaction' | 'aggregate' | 'unknown';

/**
 * Tell the two log kinds apart by the first data line: aggregate lines start with an epoch
 * second (≥ 9 digits) and are all numeric; per-transaction lines carry the epoch in field 5.
 */
export function detectLogKind(content: string): LogKind {
  const line = content.split('\n').find((l) => l.trim() !== '');
  if (!line) return 'unknown';
  const f = line.trim().split(/\s+/);
  if (f.length >= 6 && /^\d{9,}$/.test(f[0] ?? '') && f.every((x) => /^-?\d+(\.\d+)?$/.test(x)))
    return 'aggregate';
  if (f.length >= 6 && /^\d{9,}$/.test(f[4] ?? '')) return 'per-transaction';
  return 'unknown';
}
