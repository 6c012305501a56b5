/**
 * A probe client's own timeouts (pure, no imports): a setting of the scenario, for disruption and
 * session-state steps alike, recorded with each step's result. Its own module so both probe kinds'
 * types (./disruption.ts, ./session-state-kind.ts) can name it without importing each other.
 */

/**
 * A client's own timeouts (as libpq's connect_timeout and a statement timeout): an attempt that
 * outlives one is a `client-timeout`, its own class — the client gave up, the server said nothing
 * wrong. A write that waits and then succeeds within them is a stall, never an error.
 */
export interface ClientTimeouts {
  /** Opening a connection (TCP, TLS, the login through a pooler) is given up after this long. */
  readonly connectTimeoutMs: number;
  /** One statement on an open connection is given up after this long. */
  readonly statementTimeoutMs: number;
}

/** Bounds of either timeout (ms). */
export const CLIENT_TIMEOUT_LIMITS = { min: 100, max: 3_600_000 } as const;

/**
 * The client timeouts a disruption scenario gets unless it sets its own: no shorter than the
 * recovery window, so a wait the window can see end (PgBouncer holds a client through
 * `server_login_retry`, 15 s by default) is measured as a stall, not cut short by the probe.
 */
export function defaultClientTimeouts(recoverySec: number): ClientTimeouts {
  const ms = Math.ceil(recoverySec * 1000);
  return { connectTimeoutMs: ms, statementTimeoutMs: ms };
}

/** Problems of a scenario's `probe.clientTimeouts` (each naming the field, the value and what is allowed). */
export function clientTimeoutsProblems(scenario: string, t: unknown): string[] {
  if (t === undefined || t === null || typeof t !== 'object')
    return [
      `${scenario}: probe.clientTimeouts must be { connectTimeoutMs, statementTimeoutMs }, got ${String(t)}`,
    ];
  const { min, max } = CLIENT_TIMEOUT_LIMITS;
  const out: string[] = [];
  for (const field of ['connectTimeoutMs', 'statementTimeoutMs'] as const) {
    const value = (t as Record<string, unknown>)[field];
    if (!(typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max))
      out.push(
        `${scenario}: probe.clientTimeouts.${field} must be an integer ${min}–${max}, got ${String(value)}`,
      );
  }
  return out;
}
