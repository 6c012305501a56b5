/**
 * From the log files pgbench wrote for one step (one per thread) to what the step record keeps:
 * latency percentiles + per-second series (via suite/logs), and a compact merged per-second log
 * in pgbench's aggregate format for `steps/<step>.log` — the raw per-transaction files can be
 * hundreds of MB on a long run and are not kept.
 *
 * Merged log line (one per second, all threads), µs, the pg14 aggregate layout:
 *   interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency [sum_lag sum_lag_2 min_lag max_lag skipped]
 * Lag fields only with --rate. With --sampling-rate r, counts and sums are scaled by 1/r.
 */
import { detectLogKind, forEachTransaction, parseAggregateLogs, parseTransactionLogs } from '../suite/logs';
import type { SeriesPoint } from '../suite/types';

export interface StepLogs {
  readonly latencyP50Ms: number | null;
  readonly latencyP95Ms: number | null;
  readonly latencyP99Ms: number | null;
  readonly series: readonly SeriesPoint[] | null;
  /** Merged per-second log text, null when pgbench wrote no log. */
  readonly mergedLog: string | null;
}

export function summarizeStepLogs(
  files: readonly string[],
  opts: { samplingRate: number | null; throttled: boolean },
): StepLogs {
  const nonEmpty = files.filter((f) => f.trim() !== '');
  const [first] = nonEmpty;
  if (first === undefined)
    return { latencyP50Ms: null, latencyP95Ms: null, latencyP99Ms: null, series: null, mergedLog: null };
  const kind = detectLogKind(first);
  if (kind === 'aggregate') {
    const agg = parseAggregateLogs(nonEmpty, { throttled: opts.throttled });
    const lines = nonEmpty
      .flatMap((f) => f.split('\n').filter((l) => l.trim() !== ''))
      .sort((a, b) => Number(a.split(' ')[0]) - Number(b.split(' ')[0]));
    return { ...agg, mergedLog: lines.join('\n') + '\n' };
  }
  if (kind !== 'per-transaction')
    return { latencyP50Ms: null, latencyP95Ms: null, latencyP99Ms: null, series: null, mergedLog: null };
  const tx = parseTransactionLogs(nonEmpty, { samplingRate: opts.samplingRate });
  return {
    latencyP50Ms: tx.latencyP50Ms,
    latencyP95Ms: tx.latencyP95Ms,
    latencyP99Ms: tx.latencyP99Ms,
    series: tx.series,
    mergedLog: aggregateTransactionLogs(nonEmpty, opts.samplingRate ?? 1, opts.throttled),
  };
}

interface Agg {
  n: number;
  sum: number;
  sum2: number;
  min: number;
  max: number;
  lagSum: number;
  lagSum2: number;
  lagMin: number;
  lagMax: number;
  skipped: number;
}

/** Per-second aggregate lines from per-transaction logs (see the file comment for the layout). */
export function aggregateTransactionLogs(
  files: readonly string[],
  samplingRate: number,
  throttled: boolean,
): string {
  const buckets = new Map<number, Agg>();
  forEachTransaction(files, (tx) => {
    let b = buckets.get(tx.epochSec);
    if (!b) {
      b = {
        n: 0,
        sum: 0,
        sum2: 0,
        min: Infinity,
        max: 0,
        lagSum: 0,
        lagSum2: 0,
        lagMin: Infinity,
        lagMax: 0,
        skipped: 0,
      };
      buckets.set(tx.epochSec, b);
    }
    if (tx.skipped) {
      b.skipped++;
      return;
    }
    if (tx.latencyUs === null) return;
    const lat = tx.latencyUs;
    b.n++;
    b.sum += lat;
    b.sum2 += lat * lat;
    b.min = Math.min(b.min, lat);
    b.max = Math.max(b.max, lat);
    if (tx.lagUs !== null) {
      const lag = tx.lagUs;
      b.lagSum += lag;
      b.lagSum2 += lag * lag;
      b.lagMin = Math.min(b.lagMin, lag);
      b.lagMax = Math.max(b.lagMax, lag);
    }
  });
  if (buckets.size === 0) return '';
  const keys = [...buckets.keys()];
  const first = Math.min(...keys);
  const last = Math.max(...keys);
  const k = 1 / samplingRate;
  const lines: string[] = [];
  for (let t = first; t <= last; t++) {
    const b = buckets.get(t);
    const n = b?.n ?? 0;
    const fields = [
      t,
      Math.round(n * k),
      Math.round((b?.sum ?? 0) * k),
      Math.round((b?.sum2 ?? 0) * k),
      b !== undefined && n > 0 ? b.min : 0,
      b !== undefined && n > 0 ? b.max : 0,
    ];
    if (throttled) {
      const hasLag = b !== undefined && b.lagMin !== Infinity;
      fields.push(
        Math.round((b?.lagSum ?? 0) * k),
        Math.round((b?.lagSum2 ?? 0) * k),
        hasLag ? b.lagMin : 0,
        hasLag ? b.lagMax : 0,
        Math.round((b?.skipped ?? 0) * k),
      );
    }
    lines.push(fields.join(' '));
  }
  return lines.join('\n') + '\n';
}
