/**
 * What the database was doing during a step (issue 40, item 1): once a second, pg_stat_activity's
 * client backends (by state, their wait events, how old their transactions and queries are) and
 * pg_locks (locks waited for and held), plus the session that blocks the most waiters
 * (pg_blocking_pids). Pure: the types stored in a step record, the reading of one sample as the
 * sampler's query returns it, and the words for a step that hung ("14 clients waiting on
 * Lock/advisory held by a backend idle for 41 s").
 *
 * A sample that failed (permissions, a server restarting) is stored with `ok: false` and every figure
 * null: unknown for that second, never zero waiters.
 */

/** How many clients waited on one wait event (`Lock` / `advisory`). */
export interface WaitCount {
  readonly type: string;
  readonly event: string;
  readonly count: number;
}

/** The backend holding what the most sampled waiters wait for (pg_blocking_pids). */
export interface Blocker {
  readonly pid: number;
  /** pg_stat_activity.state (`idle`, `idle in transaction`, `active`); null when not visible. */
  readonly state: string | null;
  readonly backendType: string | null;
  readonly applicationName: string | null;
  /** Seconds since its state last changed (idle for …); null when unknown. */
  readonly stateSec: number | null;
  /** Seconds since its transaction began; null when none or unknown. */
  readonly xactSec: number | null;
  /** How many of the sampled waiters it blocks. */
  readonly blocking: number;
}

/** One second of the database. Figures are null when the sample failed (`ok: false`): unknown. */
export interface DbActivitySample {
  readonly at: string;
  readonly ok: boolean;
  /** Client backends other than the sampler's own session. */
  readonly clients: number | null;
  /** Of them, those with the bench clients' application_name (`pgbench`; a pooler passes it on). */
  readonly benchClients: number | null;
  readonly active: number | null;
  readonly idle: number | null;
  readonly idleInTransaction: number | null;
  /** Wait events of the client backends that are not idle, most common first (at most 5). */
  readonly waits: readonly WaitCount[] | null;
  /** pg_locks rows not granted / granted (the sampler's own excluded). */
  readonly locksWaiting: number | null;
  readonly locksHeld: number | null;
  /** The oldest open transaction and the oldest running query among the client backends, seconds. */
  readonly oldestXactSec: number | null;
  readonly oldestQuerySec: number | null;
  /** Who blocks the most waiters on a heavyweight lock, or null when nobody waits on one. */
  readonly blocker: Blocker | null;
}

/** A step's samples, taken every `intervalMs` on the same clock as the step. */
export interface DatabaseActivity {
  readonly intervalMs: number;
  readonly samples: readonly DbActivitySample[];
}

/** The figures of a failed sample: all unknown. */
export function unknownSample(at: string): DbActivitySample {
  return {
    at,
    ok: false,
    clients: null,
    benchClients: null,
    active: null,
    idle: null,
    idleInTransaction: null,
    waits: null,
    locksWaiting: null,
    locksHeld: null,
    oldestXactSec: null,
    oldestQuerySec: null,
    blocker: null,
  };
}

const record = (v: unknown): Record<string, unknown> | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/** A whole number ≥ 0, else null (unknown). */
function countOf(v: unknown): number | null {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** A year: an age beyond it is not believed (the result files' bound on seconds). */
const SEC_MAX = 366 * 24 * 3600;

/** Seconds ≥ 0 (rounded to 0.1 s), else null; a clock skew's slightly negative age reads as 0. */
function secOf(v: unknown): number | null {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || n > SEC_MAX) return null;
  return Math.max(0, Math.round(n * 10) / 10);
}

const textOf = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function waitsOf(v: unknown): WaitCount[] | null {
  if (!Array.isArray(v)) return null;
  const out: WaitCount[] = [];
  for (const raw of v) {
    const w = record(raw);
    const count = countOf(w?.count);
    if (w && typeof w.type === 'string' && typeof w.event === 'string' && count !== null)
      out.push({ type: w.type, event: w.event, count });
  }
  return out.sort((a, b) => b.count - a.count).slice(0, 5);
}

function blockerOf(v: unknown): Blocker | null {
  const b = record(v);
  const pid = countOf(b?.pid);
  if (!b || pid === null) return null;
  return {
    pid,
    state: textOf(b.state),
    backendType: textOf(b.backend_type),
    applicationName: textOf(b.application_name),
    stateSec: secOf(b.state_sec),
    xactSec: secOf(b.xact_sec),
    blocking: countOf(b.blocking) ?? 0,
  };
}

/**
 * One sample from the sampler query's JSON object (lib/exec/db-activity-sql.ts): a figure that is
 * missing or not a number is null, never 0. Not an object at all: the whole sample is unknown.
 */
export function sampleFromRow(at: string, row: unknown): DbActivitySample {
  const r = record(row);
  if (!r) return unknownSample(at);
  // Backends whose state the sampler's role may not see: their states, waits and ages are unknown.
  const seen = countOf(r.hidden) === 0;
  const ifSeen = <T>(v: T): T | null => (seen ? v : null);
  return {
    at,
    ok: true,
    clients: countOf(r.clients),
    benchClients: countOf(r.bench_clients),
    active: ifSeen(countOf(r.active)),
    idle: ifSeen(countOf(r.idle)),
    idleInTransaction: ifSeen(countOf(r.idle_in_transaction)),
    waits: ifSeen(waitsOf(r.waits)),
    locksWaiting: countOf(r.locks_waiting),
    locksHeld: countOf(r.locks_held),
    oldestXactSec: ifSeen(secOf(r.oldest_xact_sec)),
    oldestQuerySec: ifSeen(secOf(r.oldest_query_sec)),
    blocker: blockerOf(r.blocker),
  };
}

/** Clients waiting on a heavyweight lock (wait event type `Lock`) in a sample; null when unknown. */
export function lockWaiters(s: DbActivitySample): number | null {
  if (!s.ok || s.waits === null) return null;
  return s.waits.filter((w) => w.type === 'Lock').reduce((n, w) => n + w.count, 0);
}

/**
 * Whether the last `n` samples all saw clients waiting on a lock (a step past its duration that
 * still shows this is stuck, not slow). An unknown sample breaks the run: never judged stuck on a
 * guess.
 */
export function stuckOnLocks(samples: readonly DbActivitySample[], n: number): boolean {
  if (samples.length < n) return false;
  return samples.slice(-n).every((s) => (lockWaiters(s) ?? 0) > 0);
}

/** The last sample that knew anything, preferring one that saw waiters (the step's state before it was stopped). */
function telling(samples: readonly DbActivitySample[]): DbActivitySample | null {
  const ok = samples.filter((s) => s.ok);
  for (let i = ok.length - 1; i >= 0; i--) {
    const s = ok[i] as DbActivitySample;
    if ((s.waits?.length ?? 0) > 0) return s;
  }
  return ok[ok.length - 1] ?? null;
}

function fmtSec(v: number): string {
  return `${v < 10 ? v.toFixed(1).replace(/\.0$/, '') : Math.round(v)} s`;
}

/** `a backend idle for 41 s` / `pgbench's backend (pid 42) active for 3 s`. */
function blockerWords(b: Blocker): string {
  const who = b.applicationName ? `a backend of ${b.applicationName}` : 'a backend';
  const state = b.state ?? 'in an unknown state';
  const since = b.stateSec !== null ? ` for ${fmtSec(b.stateSec)}` : '';
  const xact = b.state !== 'idle' && b.xactSec !== null ? `, its transaction open ${fmtSec(b.xactSec)}` : '';
  return `${who} (pid ${b.pid}) ${state}${since}${xact}`;
}

/**
 * What the database showed when a step was stopped, in words: the top wait events and the blocking
 * session (`14 clients waiting on Lock/advisory held by a backend (pid 4242) idle for 41 s; 2 on
 * Client/ClientRead`); what it could not know, said so.
 */
export function describeActivity(activity: DatabaseActivity | null | undefined): string {
  if (!activity || activity.samples.length === 0) return 'the database was not sampled';
  const s = telling(activity.samples);
  const unknown = activity.samples.filter((x) => !x.ok).length;
  const gaps = unknown > 0 ? ` (${unknown} of ${activity.samples.length} samples unknown)` : '';
  if (s === null) return `the database could not be sampled${gaps}`;
  if (s.waits === null) return `wait events unknown${gaps}`;
  if (s.waits.length === 0) return `no client was waiting on anything at ${s.at}${gaps}`;
  const parts = s.waits.slice(0, 3).map((w, i) => {
    const what = `${w.type}/${w.event}`;
    const n =
      i === 0 ? `${w.count} client${w.count === 1 ? '' : 's'} waiting on ${what}` : `${w.count} on ${what}`;
    return i === 0 && w.type === 'Lock' && s.blocker ? `${n} held by ${blockerWords(s.blocker)}` : n;
  });
  const locks =
    s.locksWaiting !== null && s.locksHeld !== null
      ? ` (pg_locks: ${s.locksWaiting} waiting, ${s.locksHeld} held)`
      : '';
  return `${parts.join('; ')}${locks}${gaps}`;
}

/** The most client backends seen waiting on a lock in any sample; null when no sample knew. */
export function peakLockWaiters(activity: DatabaseActivity | null | undefined): number | null {
  const v = (activity?.samples ?? []).map(lockWaiters).filter((n): n is number => n !== null);
  return v.length === 0 ? null : Math.max(...v);
}
