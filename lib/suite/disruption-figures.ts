/**
 * The figures of a disruption step (pure): from the probe's attempts, timed on a monotonic clock,
 * and the ledger read back afterwards, to the `DisruptionResult` a step records. Each figure is
 * defined in docs/disruptions.md; what could not be measured is null, never 0.
 *
 * Times: every attempt carries its scheduled slot, start and end in milliseconds of one monotonic
 * clock (the probe's); T0 is on the same clock. An error or a success is *seen* at its end.
 */
import type {
  DisruptionEvent,
  DisruptionFigures,
  LedgerCheck,
  ProbeAttempt,
  ProbeErrorCount,
} from './disruption';
import { percentile } from '../core/stats';
import type { ErrorClass } from './error-class';
import { serverStopMessageIn } from './server-stop';

/** What the client library reported for an attempt that did not succeed. */
export interface ProbeFailure {
  /** PostgreSQL's SQLSTATE (5 characters) when the server or pooler sent an error. */
  readonly sqlstate: string | null;
  /**
   * The socket's error code (ECONNREFUSED …), `timeout` for an attempt that outlived the client's
   * own timeout, or `window-end` for one still waiting when the recovery window ended.
   */
  readonly code: string | null;
  readonly message: string;
  /** ERROR, FATAL, PANIC (the error response's severity); null for a socket error. */
  readonly severity: string | null;
  /** `connect`: before the write was sent; `write`: after. */
  readonly phase: 'connect' | 'write';
}

/** ProbeFailure.code of an attempt that outlived the client's connect or statement timeout. */
export const CLIENT_TIMEOUT_CODE = 'timeout';
/** ProbeFailure.code of an attempt still waiting when the window ended (its AttemptRecord.endMs is null). */
export const WINDOW_END_CODE = 'window-end';

const SOCKET_CONNECT_FAILED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
const SOCKET_LOST = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * The error class of a failed attempt, by SQLSTATE first (PostgreSQL's errcodes.txt; PgBouncer
 * sends 08P01 for its own errors, told apart by their text), then the socket code, then the text.
 */
export function classifyProbeFailure(f: ProbeFailure): ErrorClass {
  // The probe's own timers: the client gave up (a server-side timeout comes with an SQLSTATE or text).
  if (f.code === CLIENT_TIMEOUT_CODE || f.code === WINDOW_END_CODE) return 'client-timeout';
  const s = f.sqlstate;
  if (s === '57P01' || s === '57P02' || s === '57P03') return 'server-stopped';
  if (s === '53300') return 'too-many-connections';
  if (s === '25006') return 'read-only';
  if (s === '28P01' || s === '28000') return 'auth-failed';
  if (s === '25P02') return 'transaction-aborted';
  if (s === '57014') return 'timeout';
  if (serverStopMessageIn(f.message) !== null) return 'server-stopped';
  if (/server login has been failing|no server available|could not connect to server/i.test(f.message))
    return 'connection-failed';
  if (/query_wait_timeout|query_timeout|client_login_timeout/i.test(f.message)) return 'timeout';
  if (/no more connections allowed|too many connections|remaining connection slots/i.test(f.message))
    return 'too-many-connections';
  if (f.code !== null && SOCKET_CONNECT_FAILED.has(f.code)) return 'connection-failed';
  if (f.code !== null && SOCKET_LOST.has(f.code)) return 'backend-died';
  if (/connection terminated|server conn crashed|unexpected(ly)? (eof|end)/i.test(f.message))
    return f.phase === 'connect' ? 'connection-failed' : 'backend-died';
  if (s !== null && s.startsWith('08')) return f.phase === 'connect' ? 'connection-failed' : 'backend-died';
  return 'other';
}

/**
 * Whether a failed attempt's write may still have committed: a failure before the write was sent,
 * or an ERROR the server answered it with (the transaction rolled back), did not; a lost connection,
 * a FATAL, or no answer after sending may have — its fate is read from the ledger.
 */
export function writeFate(f: ProbeFailure): 'failed' | 'unknown' {
  if (f.phase === 'connect') return 'failed';
  if (f.severity === 'ERROR') return 'failed';
  // A pooler's refusal to hand the query a server connection: it never reached the database.
  if (NO_SERVER_REACHED.test(f.message)) return 'failed';
  return 'unknown';
}

/**
 * PgBouncer's errors for a query it could not give a server connection (src/janitor.c, objects.c):
 * the query was never forwarded. `server_login_retry`: a login to the server failed less than
 * server_login_retry ago; `query_wait_timeout`: no server connection came in time. ("pooler is
 * shutting down" is not among them: a client may get it while its query is on a server connection,
 * so whether that write committed is left to the ledger.)
 */
const NO_SERVER_REACHED = /server login has been failing|query_wait_timeout|no server available/i;

/** One attempt of one probe client, on the probe's monotonic clock. */
export interface AttemptRecord {
  /** The ledger id its write inserts (unique in the run). */
  readonly id: string;
  readonly client: number;
  /** When it was due (its slot: start of the probe + n × interval). */
  readonly scheduledMs: number;
  readonly startMs: number;
  /** When the answer (or the error) arrived; null: abandoned at the end of the window without one. */
  readonly endMs: number | null;
  readonly outcome: 'ok' | 'failed' | 'unknown';
  readonly failure: ProbeFailure | null;
  /** inet_server_addr() the write returned (null: no answer, or a unix socket). */
  readonly server: string | null;
  /** A persistent client opened a connection for this attempt (its first, or a reconnect). */
  readonly connected: boolean;
}

export interface FigureWindow {
  /** T0 on the attempts' clock; null when the disruption was never issued. */
  readonly t0Ms: number | null;
  /** When the warm-up started (the first slot). */
  readonly warmupStartMs: number;
  /** When the recovery window ended (no attempt is started after it). */
  readonly endMs: number;
}

function latency(a: AttemptRecord): number | null {
  return a.endMs === null ? null : a.endMs - a.startMs;
}

/** The warm-up's baseline: attempts that ended before T0. */
export function warmupOf(
  attempts: readonly AttemptRecord[],
  w: FigureWindow,
): { attempts: number; p50Ms: number | null; p99Ms: number | null; successPerSec: number | null } {
  const t0 = w.t0Ms ?? w.endMs;
  const before = attempts.filter((a) => a.endMs !== null && a.endMs < t0);
  const ok = before.filter((a) => a.outcome === 'ok').map((a) => latency(a) as number);
  const spanSec = (t0 - w.warmupStartMs) / 1000;
  return {
    attempts: before.length,
    p50Ms: round(percentile(ok, 50)),
    p99Ms: round(percentile(ok, 99)),
    successPerSec: spanSec > 0 && ok.length > 0 ? round(ok.length / spanSec) : null,
  };
}

/** Rolling windows of successes are this long for the recovery figure. */
export const ROLLING_WINDOW_MS = 1000;
/** A stall is a success slower than this many times the warm-up p99. */
export const STALL_FACTOR = 10;
/** Recovered when the rolling p99 is back within this many times the warm-up p99. */
export const RECOVERY_FACTOR = 1.2;

/**
 * What an attempt was, for the figures: `ok` (answered: a success, however slow — a wait that ends
 * in a success is a stall, never an error), `error` (the server or the pooler said no, or the
 * connection broke), `client-timeout` (the client's own timeout ran out first), `open` (still
 * waiting when the window ended).
 */
export type AttemptKind = 'ok' | 'error' | 'client-timeout' | 'open';

export function attemptKind(a: AttemptRecord): AttemptKind {
  if (a.outcome === 'ok') return 'ok';
  if (a.endMs === null) return 'open';
  return a.failure !== null && classifyProbeFailure(a.failure) === 'client-timeout'
    ? 'client-timeout'
    : 'error';
}

function first(ts: readonly number[]): number | null {
  return ts.length > 0 ? Math.min(...ts) : null;
}
function last(ts: readonly number[]): number | null {
  return ts.length > 0 ? Math.max(...ts) : null;
}

/** The figures of one step's attempts (docs/disruptions.md). */
export function disruptionFigures(attempts: readonly AttemptRecord[], w: FigureWindow): DisruptionFigures {
  const warm = warmupOf(attempts, w);
  const t0 = w.t0Ms;
  const seen = (a: AttemptRecord): number => a.endMs ?? w.endMs;
  const after = t0 === null ? [] : attempts.filter((a) => seen(a) >= t0);
  const of = (k: AttemptKind): AttemptRecord[] => after.filter((a) => attemptKind(a) === k);
  const [errors, timedOut, successes] = [of('error'), of('client-timeout'), of('ok')];
  const open = attempts.filter((a) => attemptKind(a) === 'open').length;
  const firstError = first(errors.map(seen));
  const lastError = last(errors.map(seen));
  // The client writing again: a success after the last error or client timeout.
  const lastFailure = last([...errors, ...timedOut].map(seen));
  const successAfter = (t: number | null): number | null =>
    t === null ? null : first(successes.map(seen).filter((x) => x >= t));
  const threshold = warm.p99Ms === null ? null : warm.p99Ms * STALL_FACTOR;
  const slow = threshold === null ? [] : successes.filter((a) => (latency(a) ?? 0) > threshold);
  const stallWindowMs =
    threshold === null
      ? null
      : slow.length === 0
        ? 0
        : (last(slow.map(seen)) ?? 0) - Math.min(...slow.map((a) => a.startMs));
  // Over in the window: writing again after the last error or client timeout, and no write still
  // waiting at the window's end — neither abandoned then nor already stalled by then (waiting longer
  // than the stall threshold when the window ended, answered only after it).
  const stalledAtEnd =
    threshold !== null && successes.some((a) => seen(a) > w.endMs && w.endMs - a.startMs > threshold);
  const writingAgain = lastFailure === null ? successes.length > 0 : successAfter(lastFailure) !== null;
  const windowClosed = t0 !== null && open === 0 && writingAgain && !stalledAtEnd;
  const latencies = successes.map((a) => latency(a) as number);
  const errorEnd = successAfter(lastError);
  return {
    timeToFirstErrorMs: t0 === null || firstError === null ? null : round(firstError - t0),
    errorWindowMs: firstError === null || errorEnd === null ? null : round(errorEnd - firstError),
    stallThresholdMs: round(threshold),
    stallWindowMs: round(stallWindowMs),
    maxLatencyMs: latencies.length > 0 ? round(Math.max(...latencies)) : null,
    recoveryMs: t0 === null ? null : round(recoveryMs(successes, lastFailure, t0, warm.p99Ms, w.endMs)),
    throughputDip: t0 === null ? null : round(throughputDip(successes, warm.successPerSec, t0, w.endMs)),
    recovered: t0 !== null && open === 0 && writingAgain,
    reconnects: t0 === null ? 0 : attempts.filter((a) => a.connected && a.startMs >= t0).length,
    readOnlyRefusals: after.filter((a) => a.failure?.sqlstate === '25006').length,
    clientTimeouts: timedOut.length,
    openAtEnd: open,
    windowClosed,
  };
}

/**
 * T0 → the first moment t (a success's end, after the last error) from which every rolling window
 * of successes ending at or after t has its p99 within RECOVERY_FACTOR × the warm-up p99; null when
 * no such moment came before the window ended (or there is no warm-up p99).
 */
function recoveryMs(
  successes: readonly AttemptRecord[],
  lastError: number | null,
  t0: number,
  warmP99: number | null,
  endMs: number,
): number | null {
  if (warmP99 === null) return null;
  const limit = warmP99 * RECOVERY_FACTOR;
  const ends = successes
    .map((a) => ({ end: a.endMs ?? endMs, ms: latency(a) ?? Number.POSITIVE_INFINITY }))
    .filter((x) => lastError === null || x.end >= lastError)
    .sort((a, b) => a.end - b.end);
  let candidate: number | null = null;
  // Backwards: the earliest end from which no later window is over the limit.
  for (let i = ends.length - 1; i >= 0; i--) {
    const cur = ends[i] as { end: number; ms: number };
    const window = ends
      .filter((x) => x.end > cur.end - ROLLING_WINDOW_MS && x.end <= cur.end)
      .map((x) => x.ms);
    const p99 = percentile(window, 99);
    if (p99 === null || p99 > limit) break;
    candidate = cur.end;
  }
  return candidate === null ? null : Math.max(0, candidate - t0);
}

/** Successful writes missing after T0 against the warm-up rate (writes). */
function throughputDip(
  successes: readonly AttemptRecord[],
  ratePerSec: number | null,
  t0: number,
  endMs: number,
): number | null {
  if (ratePerSec === null) return null;
  const expected = (ratePerSec * (endMs - t0)) / 1000;
  const got = successes.filter((a) => a.startMs >= t0 && a.startMs < endMs).length;
  return Math.max(0, expected - got);
}

/**
 * Failed and unknown attempts by class, SQLSTATE and socket code, most frequent first; client
 * timeouts among them (class `client-timeout`), attempts still open at the window's end not (they
 * are `figures.openAtEnd`).
 */
export function errorCounts(attempts: readonly AttemptRecord[]): ProbeErrorCount[] {
  const byKey = new Map<string, ProbeErrorCount>();
  for (const a of attempts) {
    if (a.outcome === 'ok' || a.failure === null || a.endMs === null) continue;
    const f = a.failure;
    const cls = classifyProbeFailure(f);
    const code = f.sqlstate === null ? f.code : null;
    const key = `${cls}|${f.sqlstate ?? ''}|${code ?? ''}`;
    const prev = byKey.get(key);
    byKey.set(
      key,
      prev
        ? { ...prev, count: prev.count + 1 }
        : { class: cls, sqlstate: f.sqlstate, code, count: 1, sample: f.message.slice(0, 300) },
    );
  }
  return [...byKey.values()].sort((a, b) => b.count - a.count);
}

/**
 * The writes reconciled against the ledger: `ledger` is how often each id was found, or null when
 * the ledger could not be read (then nothing that needs it is known).
 */
export function reconcile(
  attempts: readonly AttemptRecord[],
  ledger: ReadonlyMap<string, number> | null,
): LedgerCheck {
  const acknowledged = attempts.filter((a) => a.outcome === 'ok');
  const unknown = attempts.filter((a) => a.outcome === 'unknown');
  const failed = attempts.filter((a) => a.outcome === 'failed').length;
  if (ledger === null)
    return {
      acknowledged: acknowledged.length,
      failed,
      unknown: unknown.length,
      unknownCommitted: 0,
      unknownNotCommitted: 0,
      acknowledgedMissing: null,
      duplicates: null,
      reconciled: false,
    };
  const committed = unknown.filter((a) => (ledger.get(a.id) ?? 0) > 0).length;
  const ids = new Set(attempts.map((a) => a.id));
  return {
    acknowledged: acknowledged.length,
    failed,
    unknown: unknown.length,
    unknownCommitted: committed,
    unknownNotCommitted: unknown.length - committed,
    acknowledgedMissing: acknowledged.filter((a) => (ledger.get(a.id) ?? 0) === 0).length,
    duplicates: [...ledger].filter(([id, n]) => ids.has(id) && n > 1).length,
    reconciled: true,
  };
}

/** Attempts a failed write was said to fail for, but that the ledger holds (should be none). */
export function failedButCommitted(
  attempts: readonly AttemptRecord[],
  ledger: ReadonlyMap<string, number>,
): number {
  return attempts.filter((a) => a.outcome === 'failed' && (ledger.get(a.id) ?? 0) > 0).length;
}

/** A timeline outcome: the attempt was still waiting when the window ended. */
export const OPEN_AT_END = 'open';

/** The timeline a step records: times from T0 (or from the first slot, when T0 never came). */
export function timeline(attempts: readonly AttemptRecord[], w: FigureWindow): ProbeAttempt[] {
  const origin = w.t0Ms ?? w.warmupStartMs;
  return [...attempts]
    .sort((a, b) => a.startMs - b.startMs)
    .map((a): ProbeAttempt => [
      round1(a.startMs - origin),
      a.endMs === null ? null : round2(a.endMs - a.startMs),
      a.outcome === 'ok'
        ? 'ok'
        : a.endMs === null
          ? OPEN_AT_END
          : a.failure
            ? classifyProbeFailure(a.failure)
            : a.outcome,
      a.server,
    ]);
}

/** Interval jitter (how late attempts started after their slot): p50, p99, max. */
export function jitter(attempts: readonly AttemptRecord[]): {
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
} {
  const late = attempts.map((a) => Math.max(0, a.startMs - a.scheduledMs));
  return {
    p50Ms: round(percentile(late, 50)),
    p99Ms: round(percentile(late, 99)),
    maxMs: late.length > 0 ? round(Math.max(...late)) : null,
  };
}

/** Events on the attempts' clock, as ms from T0. */
export function eventsFromT0(
  events: ReadonlyArray<Omit<DisruptionEvent, 'atMs'> & { readonly atClockMs: number }>,
  t0Ms: number | null,
): DisruptionEvent[] {
  const origin = t0Ms ?? 0;
  // In time order: events placed from someone else's clock (RDS) arrive after the fact.
  return [...events]
    .sort((a, b) => a.atClockMs - b.atClockMs)
    .map(({ atClockMs, ...e }) => ({ ...e, atMs: round1(atClockMs - origin) }));
}

/** Server addresses the writes reached, in order of first appearance. */
export function serversOf(attempts: readonly AttemptRecord[]): string[] {
  const out: string[] = [];
  for (const a of [...attempts].sort((x, y) => x.startMs - y.startMs))
    if (a.server !== null && !out.includes(a.server)) out.push(a.server);
  return out;
}

function round(v: number | null): number | null {
  return v === null ? null : Math.round(v * 100) / 100;
}
function round1(v: number): number {
  return Math.round(v * 10) / 10;
}
function round2(v: number): number {
  return Math.round(v * 100) / 100;
}
