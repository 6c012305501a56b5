/**
 * Background load during a disruption (pure; issue 42 item 4): what a disruption scenario asks for
 * (`DisruptionProbe.load`, resolved from `{ scenario, clients, jobs? }`) and what one target's
 * pgbench did through the group (`DisruptionResult.load`), with the figures the report and the
 * downtime table read. The pgbench run itself is lib/exec/background-load.ts; docs/disruptions.md
 * ("Background load") explains each figure.
 *
 * The load runs through the same target (and endpoint) as the probes, one pgbench per target per
 * repetition, from the warm-up's start until the recovery window closes; its per-second progress
 * lines (`--progress 1 --progress-timestamp`) are placed on the probes' timeline (ms from T0).
 */
import type { ErrorClass } from './error-class';
import { BUILTIN_SCRIPTS, scriptLabel, type BuiltinScript, type ScriptSpec } from './script-spec';

/** `load` as a scenario or a lab file gives it: a built-in script or a lab's own scenario by name. */
export interface BackgroundLoadInput {
  readonly scenario: string;
  readonly clients: number;
  /** pgbench -j. @default 1 */
  readonly jobs?: number;
}

/** DisruptionProbe.load: resolved, so the script travels with the plan (and the run request's lab scenarios). */
export interface BackgroundLoad {
  /** As named: a pgbench built-in script (`tpcb-like`) or a lab's own scenario (`checkout`). */
  readonly scenario: string;
  /** What pgbench runs: the builtin, or the lab scenario's workload. */
  readonly script: ScriptSpec;
  /** The scale its tables are loaded at (`pgbench -i -s`, before the group, not measured). */
  readonly scale: number;
  /** pgbench -c: clients per target. */
  readonly clients: number;
  /** pgbench -j (capped at clients). */
  readonly jobs: number;
}

/**
 * Bounds of a load. Clients: the local stack's default max_connections is 100 and each target also
 * carries the probe clients, so a load above 200 could not be taken by any target the kit starts;
 * a run checks the target's own max_connections too (lib/exec/background-load.ts).
 */
export const LOAD_LIMITS = {
  clients: { min: 1, max: 200 },
  jobs: { min: 1, max: 32 },
  scale: { min: 1, max: 10_000 },
} as const;

/** A lab's own scenario as a load can run it (lib/config/scenarios.ts gives them). */
export interface LoadableScenario {
  readonly name: string;
  readonly script: ScriptSpec;
  readonly scale: number;
}

/**
 * The load `input` names, resolved against pgbench's builtins and the lab's own scenarios, or the
 * problems (each naming the field at `at`, the value and what is allowed).
 */
export function resolveLoad(
  at: string,
  input: BackgroundLoadInput,
  labScenarios: readonly LoadableScenario[] = [],
): { readonly load: BackgroundLoad } | { readonly problems: string[] } {
  const problems: string[] = [];
  const own = labScenarios.find((s) => s.name === input.scenario);
  const builtin = (BUILTIN_SCRIPTS as readonly string[]).includes(input.scenario);
  if (!builtin && own === undefined) {
    const allowed = [...BUILTIN_SCRIPTS, ...labScenarios.map((s) => s.name)].join(', ');
    problems.push(
      `${at}.scenario must be a pgbench built-in script or one of the lab's own scenarios (${allowed}), got ${JSON.stringify(input.scenario)}`,
    );
  }
  const jobs = input.jobs ?? 1;
  const script: ScriptSpec =
    own?.script ?? ({ parts: [{ builtin: input.scenario as BuiltinScript }] } satisfies ScriptSpec);
  const load: BackgroundLoad = {
    scenario: input.scenario,
    script,
    scale: own?.scale ?? 1,
    clients: input.clients,
    jobs,
  };
  problems.push(...loadProblems(at, load));
  return problems.length > 0 ? { problems } : { load };
}

/** Problems with a resolved load (all at once), each naming `at`'s field, its value and the bounds. */
export function loadProblems(at: string, load: BackgroundLoad): string[] {
  const problems: string[] = [];
  for (const field of ['clients', 'jobs', 'scale'] as const) {
    const { min, max } = LOAD_LIMITS[field];
    const v = load[field];
    if (!(Number.isInteger(v) && v >= min && v <= max))
      problems.push(`${at}.${field} must be an integer ${min}–${max}, got ${String(v)}`);
  }
  if (load.script.parts.length === 0) problems.push(`${at}.script needs at least one part`);
  return problems;
}

/** `tpcb-like × 4 clients`: the load in words. */
export function loadLabel(load: Pick<BackgroundLoad, 'scenario' | 'clients' | 'jobs'>): string {
  return `${load.scenario} × ${load.clients} client${load.clients === 1 ? '' : 's'}${load.jobs > 1 ? ` (-j ${load.jobs})` : ''}`;
}

/** What pgbench is given, as a label (`tpcb-like`, `own-workload.sql`). */
export function loadScriptLabel(load: BackgroundLoad): string {
  return scriptLabel(load.script);
}

/**
 * How one target's load ended:
 * - `window-closed`: still running when the recovery window closed, and stopped then (not an error);
 * - `clients-aborted`: the last pgbench ended before the window closed because its clients aborted
 *   (a server stop ends their sessions: that is the measurement, see `abortedClients`), too near the
 *   window's end to be started again;
 * - `ended`: pgbench ran its whole duration (it outlasts the window by design: seen only when the
 *   window was cut short);
 * - `failed`: pgbench could not run (its note says why);
 * - `not-run`: not started (the run has no pgbench, or the target cannot take the clients).
 */
export const LOAD_END_STATES = ['window-closed', 'clients-aborted', 'ended', 'failed', 'not-run'] as const;
export type LoadEndState = (typeof LOAD_END_STATES)[number];

/**
 * One second of pgbench's progress: [ms from T0 at the second's end, tps, average latency ms,
 * failed transactions in it (null: this pgbench does not report them)]. A second pgbench printed
 * nothing for (it printed no line: all its clients were waiting) is absent, not 0.
 */
export type LoadSecond = readonly [number, number | null, number | null, number | null];

export interface LoadErrorCount {
  readonly class: ErrorClass;
  readonly count: number;
  /** One line as pgbench printed it (never a password). */
  readonly sample: string;
}

/** Mean tps over parts of the window (null: no second of pgbench's fell in that part). */
export interface LoadTps {
  /** Seconds that ended at or before T0 (the warm-up). */
  readonly before: number | null;
  /** Seconds that ended in the first half of the recovery window. */
  readonly during: number | null;
  /** Seconds that ended in its second half. */
  readonly after: number | null;
  /** The lowest second after T0. */
  readonly min: number | null;
}

/** DisruptionResult.load: one target's pgbench through the group (the same in both modes' steps). */
export interface BackgroundLoadResult {
  readonly scenario: string;
  /** What pgbench ran (`tpcb-like`, `own-workload.sql`). */
  readonly script: string;
  readonly clients: number;
  readonly jobs: number;
  readonly endState: LoadEndState;
  /** Why it is `failed` or `not-run`, or what to know; null: nothing. */
  readonly note: string | null;
  /** Exit code of the last pgbench (null: stopped by a signal, or not run). */
  readonly exitCode: number | null;
  /**
   * pgbench processes started: 1, plus one each time every client had ended before the window
   * closed (a server stop aborts them; they are started again as an application reconnects). 0: not run.
   */
  readonly starts: number;
  readonly series: readonly LoadSecond[];
  readonly tps: LoadTps;
  /**
   * The longest stretch of the recovery window in which pgbench reported no transaction (a second
   * printed at 0 tps, or no second printed at all: its clients were waiting, or pgbench was being
   * started again), ms; 0: a transaction every second. Precise to pgbench's one-second lines; the
   * window's last, partial second (pgbench is stopped before it prints it) does not count. null: no
   * second reported at all.
   */
  readonly gapMs: number | null;
  /** Sum of the seconds' failed transactions; null when pgbench did not report them. */
  readonly failedTransactions: number | null;
  /** Clients pgbench reported aborted (a lost session ends a pgbench client); null: not run. */
  readonly abortedClients: number | null;
  readonly errors: readonly LoadErrorCount[];
}

function mean(xs: readonly number[]): number | null {
  return xs.length === 0 ? null : Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10) / 10;
}

/** The longest stretch of (0, recoveryMs] no second with transactions covers (BackgroundLoadResult.gapMs). */
function longestGapMs(series: readonly LoadSecond[], recoveryMs: number): number {
  const busy = series
    .filter(([, tps]) => tps !== null && tps > 0)
    .map(([at]) => [at - 1000, at] as const)
    .sort((a, b) => a[0] - b[0]);
  let cursor = 0;
  let longest = 0;
  for (const [start, end] of busy) {
    if (start > cursor) longest = Math.max(longest, Math.min(start, recoveryMs) - cursor);
    cursor = Math.max(cursor, end);
    if (cursor >= recoveryMs) break;
  }
  // the window's last second is not printed (pgbench is stopped first): not a gap
  return Math.round(Math.max(longest, recoveryMs - cursor - 1000, 0));
}

/** The tps figures of a series, the recovery window `recoveryMs` long after T0. */
export function loadFigures(
  series: readonly LoadSecond[],
  recoveryMs: number,
): Pick<BackgroundLoadResult, 'tps' | 'gapMs' | 'failedTransactions'> {
  const tpsOf = (keep: (atMs: number) => boolean): number[] =>
    series.flatMap(([at, tps]) => (keep(at) && tps !== null ? [tps] : []));
  const half = recoveryMs / 2;
  const afterT0 = tpsOf((at) => at > 0);
  const failed = series.map((s) => s[3]);
  return {
    tps: {
      before: mean(tpsOf((at) => at <= 0)),
      during: mean(tpsOf((at) => at > 0 && at <= half)),
      after: mean(tpsOf((at) => at > half)),
      min: afterT0.length === 0 ? null : Math.min(...afterT0),
    },
    gapMs: series.length === 0 ? null : longestGapMs(series, recoveryMs),
    failedTransactions:
      failed.length === 0 || failed.some((f) => f === null)
        ? null
        : failed.reduce<number>((a, f) => a + (f ?? 0), 0),
  };
}

/** A load that was not started, with why. */
export function loadNotRun(load: BackgroundLoad, note: string): BackgroundLoadResult {
  return {
    scenario: load.scenario,
    script: loadScriptLabel(load),
    clients: load.clients,
    jobs: load.jobs,
    endState: 'not-run',
    note,
    exitCode: null,
    starts: 0,
    series: [],
    tps: { before: null, during: null, after: null, min: null },
    gapMs: null,
    failedTransactions: null,
    abortedClients: null,
    errors: [],
  };
}

/** `tpcb-like × 4 clients: 812 tps before, 95 during, 790 after; 2 s at 0 tps; 3 clients aborted`. */
export function describeLoad(r: BackgroundLoadResult): string {
  const head = `${loadLabel(r)}`;
  if (r.endState === 'not-run' || r.endState === 'failed')
    return `${head}: ${r.endState}${r.note !== null ? ` (${r.note})` : ''}`;
  const t = (v: number | null): string => (v === null ? '?' : String(Math.round(v)));
  const errors = r.errors.reduce((a, e) => a + e.count, 0);
  return [
    `${head}: ${t(r.tps.before)} tps before, ${t(r.tps.during)} during, ${t(r.tps.after)} after (min ${t(r.tps.min)})`,
    `longest gap without a transaction ${r.gapMs === null ? '?' : `${(r.gapMs / 1000).toFixed(1)} s`}`,
    `${r.abortedClients ?? '?'} client(s) aborted`,
    `pgbench started ${r.starts} time(s)`,
    `${errors} error line(s)`,
    `failed transactions ${r.failedTransactions ?? 'not reported'}`,
    `ended: ${r.endState}`,
  ].join('; ');
}
