/**
 * The error classes a step's errors fall into (pure, no imports): pgbench's (lib/suite/parser.ts)
 * and the probes' (lib/suite/probes.ts) alike. Re-exported by ./types; its own module so the probe
 * kinds' result types can use it without a cycle through ./types. `server-stopped`: the server or
 * pooler was shut down, restarted or crashed under the step (lib/suite/server-stop.ts).
 */
export const ERROR_CLASSES = [
  'server-stopped',
  'too-many-connections',
  'prepared-statement-exists',
  'prepared-statement-missing',
  'portal-missing',
  'backend-died',
  'connection-failed',
  'auth-failed',
  'transaction-aborted',
  /** A write refused by a server that accepts reads only (SQLSTATE 25006): a standby, after a failover. */
  'read-only',
  /** A timeout the server or pooler imposed (57014 statement_timeout, PgBouncer's query_wait_timeout …). */
  'timeout',
  /**
   * The client's own timeout (connect or statement) ran out before an answer came: the client gave
   * up on a wait, the server said nothing wrong. A disruption scenario's setting (docs/disruptions.md).
   */
  'client-timeout',
  'other',
] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];
