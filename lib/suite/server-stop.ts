/**
 * A server or pooler that stops under a step — shut down (smart, fast or immediate), restarted,
 * crashed and recovering, or a PgBouncer shutting down — is the infrastructure failing, not a
 * behaviour an experiment measures (pure: no I/O).
 *
 * pgbench cannot tell: it prints what the server or PgBouncer sent and aborts the client. So the
 * messages are recognised here, by the texts PostgreSQL and PgBouncer send (each with its SQLSTATE
 * and where it comes from), and become one error class, `server-stopped`. The engine
 * (lib/engine/run-suite.ts) asks `serverStopCause` after every pgbench run: a step with such an
 * error is `infrastructure-error` (not measured, never judged, measured again on resume) and the
 * run ends `failed` — the same path as a server process the local stack sees die (SIGKILL).
 *
 * The seam for disruption scenarios (issue 22): a scenario whose measurement IS a server going away
 * says `serverStops: 'measured'` (catalog.ts); its steps keep the `server-stopped` errors as
 * measured errors and are judged like any other. Every other scenario uses the default,
 * `'infrastructure'`.
 */
import type { ErrorClass, StepMeasurement } from './types';

/** The error class of every message below. */
export const SERVER_STOPPED: ErrorClass = 'server-stopped';

/** How a scenario treats a server or pooler that stops during a step. */
export type ServerStopPolicy =
  /** Not a measurement: the step is an infrastructure error and the run fails, resumable (default). */
  | 'infrastructure'
  /** The stop is what the scenario measures (a disruption): the errors are judged like any others. */
  | 'measured';

export const DEFAULT_SERVER_STOP_POLICY: ServerStopPolicy = 'infrastructure';

export interface ServerStopMessage {
  /** Matched case-insensitively anywhere in a pgbench error segment. */
  readonly pattern: RegExp;
  /** The SQLSTATE the sender attaches (PgBouncer sends 08P01 for its own errors). */
  readonly sqlstate: string;
  readonly source: 'PostgreSQL' | 'PgBouncer';
  /** When it is sent, in words. */
  readonly when: string;
}

/**
 * Every message recognised, in the order tried. PostgreSQL texts: src/backend/tcop/postgres.c
 * (ProcessInterrupts, quickdie) and src/backend/tcop/backend_startup.c (postmaster.c before 17),
 * codes from src/backend/utils/errcodes.txt (class 57, operator intervention); all present in the
 * PostgreSQL 15 binary this was checked against. PgBouncer texts: src/objects.c and src/janitor.c
 * (`disconnect_client(…, "pooler is shutting down" / "server shutting down")`, sent as FATAL with
 * SQLSTATE 08P01 by src/proto.c), 1.23 and later; 1.18 closes client connections without a message
 * on SIGINT (safe shutdown) and exits at once on SIGTERM — seen as the process ending.
 */
export const SERVER_STOP_MESSAGES: readonly ServerStopMessage[] = [
  {
    pattern: /terminating connection due to administrator command/i,
    sqlstate: '57P01',
    source: 'PostgreSQL',
    when: 'fast shutdown or restart (SIGINT to the postmaster, pg_ctl stop/restart by default), pg_terminate_backend()',
  },
  {
    pattern: /terminating connection due to immediate shutdown command/i,
    sqlstate: '57P01',
    source: 'PostgreSQL',
    when: 'immediate shutdown (SIGQUIT to the postmaster, pg_ctl stop -m immediate)',
  },
  {
    pattern: /terminating connection due to unexpected postmaster exit/i,
    sqlstate: '57P01',
    source: 'PostgreSQL',
    when: 'the postmaster died under its backends',
  },
  {
    pattern: /terminating connection because of unexpected SIGQUIT signal/i,
    sqlstate: '57P01',
    source: 'PostgreSQL',
    when: 'a backend was sent SIGQUIT from outside',
  },
  {
    pattern: /terminating connection because of crash of another server process/i,
    sqlstate: '57P02',
    source: 'PostgreSQL',
    when: 'another backend crashed (or was killed): the postmaster resets every session and recovers',
  },
  {
    pattern: /the database system is shutting down/i,
    sqlstate: '57P03',
    source: 'PostgreSQL',
    when: 'a connection attempt during a shutdown',
  },
  {
    pattern: /the database system is starting up/i,
    sqlstate: '57P03',
    source: 'PostgreSQL',
    when: 'a connection attempt while the server starts (after a restart)',
  },
  {
    pattern: /the database system is in recovery mode/i,
    sqlstate: '57P03',
    source: 'PostgreSQL',
    when: 'a connection attempt during crash recovery',
  },
  {
    pattern: /the database system is not (?:yet )?accepting connections/i,
    sqlstate: '57P03',
    source: 'PostgreSQL',
    when: 'a connection attempt before recovery reached a consistent state',
  },
  {
    pattern: /pooler is shutting down/i,
    sqlstate: '08P01',
    source: 'PgBouncer',
    when: 'a client login while PgBouncer shuts down (1.23+: SIGTERM waits for clients, SIGINT for servers)',
  },
  {
    pattern: /\bserver shutting down\b/i,
    sqlstate: '08P01',
    source: 'PgBouncer',
    when: 'a client that needs a server connection while PgBouncer waits for servers to be released (1.23+: SIGINT)',
  },
];

/**
 * A client (psql, libpq) that found no socket file where the kit's own server or pooler listens:
 * `connection to server on socket "<dir>/.s.PGSQL.<port>" failed: No such file or directory`
 * (libpq's connectDBComplete message). The kit made that directory and the server made the socket,
 * so a missing one means the server stopped listening — it is shutting down. PgBouncer before 1.25
 * removes its unix sockets at the start of a SIGTERM or SIGINT shutdown while it keeps running for
 * its clients (1.24.1 src/main.c: handle_sigterm/handle_sigint → cleanup_sockets(); NEWS.md 1.25.0
 * "Enable access to the PgBouncer UNIX socket during shutdown for admin connections", #1305), so the
 * kit's next admin command meets no socket while the process is still alive. Not a pgbench error
 * class (pgbench reaches targets over TCP): for pool-control and pre-check errors only.
 */
const SOCKET_GONE = /on socket "[^"]*\/\.s\.PGSQL\.\d+" failed: No such file or directory/;

/** Why a pool-control or pre-check error means its server stopped listening, or null. */
export function socketGoneIn(text: string): string | null {
  const m = SOCKET_GONE.exec(text);
  return m === null
    ? null
    : `the socket ${/"([^"]*)"/.exec(m[0])?.[1] ?? ''} is gone: its server or pooler stopped listening (shutting down)`;
}

/** The message a text carries, or null: for pgbench -i output and pool-control errors too. */
export function serverStopMessageIn(text: string): ServerStopMessage | null {
  return SERVER_STOP_MESSAGES.find((m) => m.pattern.test(text)) ?? null;
}

/**
 * Why a step's pgbench result is not a measurement because a server or pooler stopped under it,
 * or null when it is one (no such error, or the scenario measures stops). The cause names the
 * class, the count, what was sent and its SQLSTATE.
 */
export function serverStopCause(
  m: Pick<StepMeasurement, 'errors'> | null,
  policy: ServerStopPolicy = DEFAULT_SERVER_STOP_POLICY,
): string | null {
  if (policy === 'measured' || m === null) return null;
  const stopped = m.errors.find((e) => e.class === SERVER_STOPPED && e.count > 0);
  if (!stopped) return null;
  return describeServerStop(stopped.sample, stopped.count);
}

/** `infrastructure: server-stopped ×5 — PostgreSQL sent "…" (SQLSTATE 57P01: fast or smart shutdown…)`. */
export function describeServerStop(sample: string, count: number | null = null): string {
  const msg = serverStopMessageIn(sample);
  const what = msg
    ? `${msg.source} sent "${msg.pattern.exec(sample)?.[0] ?? sample}" (SQLSTATE ${msg.sqlstate}: ${msg.when})`
    : `"${sample}"`;
  return `infrastructure: ${SERVER_STOPPED}${count !== null ? ` ×${count}` : ''}: the server or pooler stopped during the step; ${what}`;
}
