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
  'timeout',
  'other',
] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];
