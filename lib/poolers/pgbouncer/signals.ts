/**
 * Which signal stops PgBouncer at once, dropping its clients: the one place that knows it changed.
 *
 * - Before 1.23: SIGTERM is the immediate shutdown, SIGINT the safe one (waits until every server
 *   connection is released); SIGQUIT is ignored (checked with Debian's 1.18.0: still running 8 s
 *   after SIGQUIT with a client connected).
 * - 1.23 and later: SIGQUIT is the immediate shutdown; SIGTERM became a "super safe shutdown" that
 *   waits for every client to disconnect (a second SIGTERM is immediate); SIGINT stays the safe one.
 *   Changelog 1.23.0: "SIGTERM doesn't cause immediate shutdown of the PgBouncer process anymore …
 *   If you relied on the old behaviour of SIGTERM in your Dockerfile or Systemd service file you
 *   should now use SIGQUIT" (pgbouncer/pgbouncer#902; checked with 1.25.2: SIGTERM leaves it
 *   running while a client is connected, SIGQUIT ends it in milliseconds).
 *
 * Pure (no I/O): the local adapter and the reaper send what this says.
 */

import type { PoolerLifecycle } from '../driver';
import { parsePgbouncerVersion, versionAtLeast } from './config';

/** The first release whose SIGTERM waits for clients and whose SIGQUIT is immediate. */
export const SIGQUIT_IMMEDIATE_SINCE: readonly [number, number, number] = [1, 23, 0];

/**
 * The signals that stop PgBouncer `version` immediately, in the order to send them.
 * A known version (`1.25.2`, `PgBouncer 1.18.0`) gets one signal. An unknown one (null, or no
 * version in it) gets SIGQUIT then SIGTERM: a release before 1.23 ignores the SIGQUIT and stops on
 * the SIGTERM; 1.23 and later stop on the SIGQUIT (a SIGTERM arriving first only starts the wait
 * that the SIGQUIT then cuts short).
 */
export function immediateStopSignals(version: string | null): readonly NodeJS.Signals[] {
  const v = version === null ? null : parsePgbouncerVersion(version);
  if (v === null) return ['SIGQUIT', 'SIGTERM'];
  return versionAtLeast(v, SIGQUIT_IMMEDIATE_SINCE) ? ['SIGQUIT'] : ['SIGTERM'];
}

/**
 * The signal that retires the old process of a rolling restart, by version:
 * - 1.23 and later: SIGTERM, the "super safe shutdown" introduced for rolling restarts: the process
 *   stops listening (new connections go to the other process on the port) and exits once its
 *   clients have disconnected (changelog 1.23.0, pgbouncer/pgbouncer#902: "The new SIGTERM
 *   behaviour allows rolling restarts of multiple PgBouncer processes … listening on the same port
 *   using so_reuseport").
 * - before 1.23: SIGINT, the safe shutdown (waits until every server connection is released); it
 *   is what an operator had short of `-R` (online restart, deprecated since 1.20). #902 notes that
 *   this safe shutdown "didn't actually allow for zero-downtime rolling restarts": it kept
 *   listening while it waited.
 */
export function rollingStopSignal(version: string | null): { signal: NodeJS.Signals; does: string } {
  const v = version === null ? null : parsePgbouncerVersion(version);
  if (v !== null && versionAtLeast(v, SIGQUIT_IMMEDIATE_SINCE))
    return {
      signal: 'SIGTERM',
      does: 'super safe shutdown: stops listening, exits once its clients have disconnected (≥ 1.23)',
    };
  return {
    signal: 'SIGINT',
    does: 'safe shutdown: exits once its server connections are released; before 1.23 it keeps listening meanwhile',
  };
}

/**
 * PgBouncer's reload, pause and restart semantics (doc/usage.md, "Admin console" and "Signals"):
 * - `RELOAD` / SIGHUP re-read the configuration file; connections stay.
 * - `PAUSE [db]`: "PgBouncer tries to disconnect from all servers … The command will not return before
 *   all server connections have been disconnected" (in transaction pooling, at the end of each
 *   transaction); `RESUME [db]` lifts it. So a PAUSE drains the server side: the planned-maintenance
 *   recipe around a server restart.
 * - No binary upgrade: `-R` (online restart) is deprecated since 1.20; a process is replaced by
 *   starting a sibling on the same port with so_reuseport and retiring the old one with the signal
 *   `rollingStopSignal` gives for its version (above).
 */
export const PGBOUNCER_LIFECYCLE: PoolerLifecycle = {
  reload: { signal: 'SIGHUP', adminStatement: 'RELOAD' },
  pause: (_version, database) => ({
    pause: [database === null ? 'PAUSE' : `PAUSE ${database}`],
    resume: [database === null ? 'RESUME' : `RESUME ${database}`],
    drainsServers: true,
  }),
  restart: (version) => ({ kind: 'reuseport-rolling', stopOldWith: [rollingStopSignal(version).signal] }),
  gracefulStopSignals: () => ['SIGINT'],
};
