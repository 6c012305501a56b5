/**
 * CPU ticks of one process from the text of /proc/<pid>/stat (pure: the caller reads the file).
 * proc(5): field 2 `comm` is in parentheses and may contain spaces or `)`, so the fields are
 * counted after the LAST `)`; utime is field 14 and stime field 15, in clock ticks
 * (sysconf(_SC_CLK_TCK), 100 on Linux).
 */
export const LINUX_CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime, or null when the text is not a stat line. */
export function processCpuTicks(statText: string): number | null {
  const close = statText.lastIndexOf(')');
  if (close < 0) return null;
  // after ") ": field 3 (state) is index 0, so field n is index n - 3
  const fields = statText
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const utime = Number(fields[14 - 3]);
  const stime = Number(fields[15 - 3]);
  if (!Number.isInteger(utime) || !Number.isInteger(stime)) return null;
  return utime + stime;
}
