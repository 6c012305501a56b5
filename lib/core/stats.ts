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
