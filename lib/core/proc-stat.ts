/**
 * Fields of /proc/<pid>/stat from its text (pure: the caller reads the file): CPU ticks, start
 * time, state.
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

/** `/proc/<pid>/stat` field 22 (starttime). The command name (field 2) may hold spaces and parens. */
export function parseProcStartTicks(stat: string): number | null {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state); starttime is field 22.
  const v = Number(rest[19]);
  return Number.isInteger(v) && v >= 0 ? v : null;
}

/** `/proc/<pid>/stat` field 3 (state: R, S, D, Z, …); null when unreadable. */
export function parseProcState(stat: string): string | null {
  const close = stat.lastIndexOf(')');
  return close < 0 ? null : (stat.slice(close + 2).split(' ')[0] ?? null);
}
