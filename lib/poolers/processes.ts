/**
 * Finding a pooler's processes by their command line (pure: the caller reads /proc): shared by the
 * local stand-in's binary upgrade (lib/local/pgdoorman-upgrade.ts) and the pooler host's rolling
 * restart (lib/pooler-host/roll.ts).
 */

/** A process of /proc: its pid and its command line (NUL-separated arguments joined by spaces). */
export interface ProcEntry {
  readonly pid: number;
  readonly cmdline: string;
}

/** The process a binary upgrade started: the one running `configFile` that is none of `known`. */
export function upgradedPid(
  procs: readonly ProcEntry[],
  configFile: string,
  known: ReadonlySet<number>,
): number | null {
  const found = procs.filter((p) => !known.has(p.pid) && p.cmdline.split(' ').includes(configFile));
  return found.length === 1 ? (found[0] as ProcEntry).pid : null;
}
