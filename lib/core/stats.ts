/** Order statistics shared by the verdicts (repetition summaries), the report and the benchmarks. Pure. */

export interface OrderStats {
  readonly min: number;
  readonly median: number;
  readonly max: number;
  /** How many finite values there were. */
  readonly n: number;
}

/**
 * Min, median (the mean of the middle two when the count is even) and max of the finite values;
 * null when there are none (unknown, never 0).
 */
export function orderStats(values: readonly number[]): OrderStats | null {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const [min] = sorted;
  const max = sorted.at(-1);
  if (min === undefined || max === undefined) return null;
  const mid = Math.floor(sorted.length / 2);
  const upper = sorted[mid] ?? max;
  const lower = sorted[mid - 1] ?? upper;
  const median = sorted.length % 2 === 1 ? upper : (lower + upper) / 2;
  return { min, median, max, n: sorted.length };
}

/**
 * Nearest-rank percentiles of the finite values, one per p of `ps` (p in 0–100): the value at rank
 * ⌈p / 100 × n⌉ of the n finite values in ascending order (rank kept within 1…n), so always a value
 * that occurred, never an interpolation between two. The values come in any order and are left as
 * they are (a copy is sorted, once for all of `ps`); NaN and ±Infinity are left out; each is null when
 * no finite value is left (unknown, never 0).
 */
export function percentiles(values: ArrayLike<number>, ps: readonly number[]): (number | null)[] {
  let n = 0;
  for (let i = 0; i < values.length; i++) if (Number.isFinite(values[i])) n++;
  const sorted = new Float64Array(n);
  let at = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (Number.isFinite(v)) sorted[at++] = v;
  }
  sorted.sort(); // a typed array sorts numerically
  return ps.map((p) => {
    if (n === 0) return null;
    const rank = Math.min(n, Math.max(1, Math.ceil((p / 100) * n)));
    return sorted[rank - 1] ?? null;
  });
}

/** The nearest-rank percentile p (0–100) of the finite values, in any order: `percentiles(values, [p])`. */
export function percentile(values: ArrayLike<number>, p: number): number | null {
  return percentiles(values, [p])[0] ?? null;
}

/** A sampled average over (fromMs, toMs]: what a rate or CPU sample between two polls stands for. */
export interface SampledInterval {
  readonly fromMs: number;
  readonly toMs: number;
  readonly value: number;
}

/**
 * The mean over [startMs, endMs] of sampled interval averages, each weighted by its overlap with
 * the window. An interval less than `minInsideShare` inside the window is left out: its average is
 * mostly about what happened before or after (a 1 s CPU sample that caught 0.05 s of a 0.4 s step
 * says little about that step). null when no interval qualifies: unknown, never 0.
 */
export function windowMean(
  intervals: readonly SampledInterval[],
  startMs: number,
  endMs: number,
  minInsideShare = 0.5,
): number | null {
  let weighted = 0;
  let ms = 0;
  for (const iv of intervals) {
    const span = iv.toMs - iv.fromMs;
    const overlap = Math.min(endMs, iv.toMs) - Math.max(startMs, iv.fromMs);
    if (span <= 0 || overlap <= 0 || overlap / span < minInsideShare || !Number.isFinite(iv.value)) continue;
    weighted += iv.value * overlap;
    ms += overlap;
  }
  return ms > 0 ? weighted / ms : null;
}

/**
 * The highest windowMean of several interval lists: the busiest of several processes over the
 * window (a single-threaded process saturates alone). null when no list has a qualifying interval.
 */
export function busiestWindowMean(
  lists: Iterable<readonly SampledInterval[]>,
  startMs: number,
  endMs: number,
): number | null {
  let busiest: number | null = null;
  for (const list of lists) {
    const mean = windowMean(list, startMs, endMs);
    if (mean !== null) busiest = busiest === null ? mean : Math.max(busiest, mean);
  }
  return busiest;
}

/** Intervals from a series of `[iso time, value]` points, each standing for the time since the one before. */
export function intervalsOfPoints(points: ReadonlyArray<readonly [string, number]>): SampledInterval[] {
  const out: SampledInterval[] = [];
  for (let i = 1; i < points.length; i++) {
    const prev = points[i - 1];
    const cur = points[i];
    if (!prev || !cur) continue;
    const fromMs = Date.parse(prev[0]);
    const toMs = Date.parse(cur[0]);
    if (Number.isFinite(fromMs) && Number.isFinite(toMs)) out.push({ fromMs, toMs, value: cur[1] });
  }
  return out;
}
