/**
 * The session-state probe kind's vocabulary and shapes (pure; its one import is the pure
 * ./client-timeouts): the features, outcomes and
 * sources, the spec a scenario gives (`SessionStateProbe`) and the result a step records
 * (`SessionStateResult`), so lib/suite/probes.ts (which lib/suite/types.ts reads) can name them
 * without a cycle. What the features do and mean is lib/suite/session-state.ts, which re-exports all
 * of this.
 */

import { clientTimeoutsProblems, type ClientTimeouts } from './client-timeouts';

export const SESSION_OUTCOMES = ['works', 'lost', 'leaks', 'errors'] as const;
export type SessionOutcome = (typeof SESSION_OUTCOMES)[number];

export const SESSION_SOURCES = {
  'pgbouncer-features': {
    title: 'PgBouncer: SQL feature map for pooling modes',
    url: 'https://www.pgbouncer.org/features.html',
  },
  'pgbouncer-reset-query': {
    title: 'PgBouncer configuration: server_reset_query (not used in transaction pooling)',
    url: 'https://www.pgbouncer.org/config.html#server_reset_query',
  },
  'pgbouncer-track-extra-parameters': {
    title: 'PgBouncer configuration: track_extra_parameters (1.20, default IntervalStyle)',
    url: 'https://www.pgbouncer.org/config.html#track_extra_parameters',
  },
  'pgbouncer-max-prepared-statements': {
    title: 'PgBouncer configuration: max_prepared_statements (1.21; default 200 since 1.24)',
    url: 'https://www.pgbouncer.org/config.html#max_prepared_statements',
  },
  'pgbouncer-notification-source': {
    title: 'PgBouncer src/server.c: a packet from a server connection no client is linked to is skipped',
    url: 'https://github.com/pgbouncer/pgbouncer/blob/master/src/server.c',
  },
  'pgdoorman-cleanup': {
    title:
      'PgDoorman configuration: cleanup_server_connections (default true: RESET ROLE, RESET ALL, DEALLOCATE ALL, CLOSE ALL on a modified connection returning to the pool)',
    url: 'https://github.com/ozontech/pg_doorman/blob/v3.10.7/src/config/pool.rs',
  },
  'rds-proxy-pinning': {
    title: 'AWS: Avoiding pinning an RDS Proxy (conditions that cause pinning for PostgreSQL)',
    url: 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-pinning.html',
  },
  'rds-proxy-extended-protocol': {
    title:
      'AWS Database Blog: RDS Proxy multiplexing support for PostgreSQL Extended Query Protocol (2023-11)',
    url: 'https://aws.amazon.com/blogs/database/amazon-rds-proxy-multiplexing-support-for-postgresql-extended-query-protocol/',
  },
  postgresql: {
    title: 'PostgreSQL: a session is one server process (SET, DISCARD, LISTEN, PREPARE, temporary objects)',
    url: 'https://www.postgresql.org/docs/current/sql-set.html',
  },
} as const satisfies Record<string, { readonly title: string; readonly url: string }>;
export type SessionSource = keyof typeof SESSION_SOURCES;

export const SESSION_FEATURES = [
  'set-session',
  'set-tracked',
  'set-local',
  'search-path',
  'set-role',
  'advisory-lock',
  'advisory-xact-lock',
  'temp-table',
  'temp-table-on-commit-drop',
  'listen-notify',
  'protocol-prepared',
  'sql-prepare',
  'with-hold-cursor',
  'long-statement',
  'discard-all',
  'temp-sequence-nextval',
] as const;
export type SessionFeature = (typeof SESSION_FEATURES)[number];

/**
 * What a check means: `own` — A's (or B's) own state must be there (else lost); `other` — B must not
 * see A's state (else it leaked); `victim` — B's own state must survive A's action (else A's action
 * leaked into B's session); `scope` — state must be gone once its transaction ended (else it leaked
 * out of its scope).
 */
export type CheckRole = 'own' | 'other' | 'victim' | 'scope';

export interface SessionExpectation {
  /** Any of these holds; empty: nothing is predicted (measured only). */
  readonly outcomes: readonly SessionOutcome[];
  /** For `errors`: the SQLSTATEs that count (any one); empty: any. */
  readonly sqlstates: readonly string[];
  /** Whether the target pins the session for this feature (RDS Proxy); null: the target does not pin, or it is undocumented. */
  readonly pins: boolean | null;
  /** Why, in words, with what the sources say. */
  readonly why: string;
  readonly sources: readonly SessionSource[];
}

/** One step as the probe ran it. */
export interface SessionProbeStep {
  /** `A`, `B` or `notifier`. */
  readonly client: string;
  /** apply, apply-prepared, check, check-prepared, transaction, notify, check-notification, setup. */
  readonly kind: string;
  /** For checks: what the check stands for. */
  readonly role: CheckRole | null;
  /** The statement (a long literal shortened; no secrets: the probe sends none). */
  readonly sql: string;
  /** The server process that answered (pg_backend_pid), when the step read it. */
  readonly backendPid: number | null;
  /** What a check read (`41s`), or null. */
  readonly value: string | null;
  /** A check's `present`; null for steps that are not checks, or that failed. */
  readonly present: boolean | null;
  readonly sqlstate: string | null;
  readonly error: string | null;
  readonly ms: number;
}

export interface SessionProbeError {
  readonly client: string;
  readonly kind: string;
  readonly sqlstate: string | null;
  readonly message: string;
}

/** Where the pinning metric of the probe's proxy is, and the window in which the probe held its state. */
export interface PinWatch {
  readonly metric: string;
  readonly dimensions: Readonly<Record<string, string>>;
  /** The metric's period (s): only periods wholly inside the window count. */
  readonly periodSec: number;
  /** From the first statement to the clients' disconnect (ISO). */
  readonly start: string;
  readonly end: string;
}

/** What a session-state probe step records (StepRecord.probe). */
/** What one feature's program showed on one target. */
export interface SessionFeatureResult {
  readonly feature: SessionFeature;
  /** true: one of B's checks ran on a server process A had used; false: never; null: unknown. */
  readonly shared: boolean | null;
  /** What the target should show, decided from the step's descriptor when the probe ran (expectSession). */
  readonly expected: SessionExpectation;
  readonly outcome: SessionOutcome;
  readonly lost: boolean;
  readonly leaked: boolean;
  readonly error: SessionProbeError | null;
  readonly steps: readonly SessionProbeStep[];
  /** For a target that pins (RDS Proxy): where to read whether it did; null otherwise. */
  readonly pinWatch: PinWatch | null;
}

/** The session-state probe spec (Scenario.probe): the features each step runs on its target. */
export interface SessionStateProbe {
  readonly kind: 'session-state';
  readonly features: readonly SessionFeature[];
  /**
   * The period (s) of the pinning metric a target that pins publishes (CloudWatch: 60): on such a
   * target each feature keeps its state until a whole period that began after its first statement
   * has passed, so the per-period datapoint can only be this feature's.
   */
  readonly pinPeriodSec: number;
  /** The clients' own timeouts (a setting of the scenario). Absent: SESSION_CLIENT_TIMEOUTS. */
  readonly clientTimeouts?: ClientTimeouts;
}

/**
 * The session clients' timeouts unless a scenario sets them: 10 s to connect, 30 s a statement.
 * Nothing is disrupted under a session-state step, so a timeout there is the target not answering.
 */
export const SESSION_CLIENT_TIMEOUTS: ClientTimeouts = {
  connectTimeoutMs: 10_000,
  statementTimeoutMs: 30_000,
};

/** Seconds one feature takes at most without a pin hold (connects, statements, a notification wait). */
const FEATURE_SEC = 5;

/** Problems with a session-state spec (all at once); empty when valid. */
export function validateSessionStateProbe(scenario: string, p: SessionStateProbe): string[] {
  const problems: string[] = [];
  if (p.features.length === 0) problems.push(`${scenario}: probe.features must name at least one feature`);
  const unknown = p.features.filter((f) => !(SESSION_FEATURES as readonly string[]).includes(f));
  if (unknown.length > 0)
    problems.push(
      `${scenario}: probe.features must be among ${SESSION_FEATURES.join(', ')}; got ${unknown.join(', ')}`,
    );
  if (new Set(p.features).size !== p.features.length)
    problems.push(`${scenario}: probe.features must not repeat a feature`);
  if (!(p.pinPeriodSec > 0 && p.pinPeriodSec <= 3600))
    problems.push(`${scenario}: probe.pinPeriodSec must be > 0 and ≤ 3600, got ${p.pinPeriodSec}`);
  if (p.clientTimeouts !== undefined) problems.push(...clientTimeoutsProblems(scenario, p.clientTimeouts));
  return problems;
}

export function sessionStateLabel(p: SessionStateProbe): string {
  return `session-state(${p.features.length} feature${p.features.length === 1 ? '' : 's'})`;
}

/**
 * Seconds a step is expected to take on a target: a feature's statements, plus on a target that pins
 * the wait for a whole period after the first statement (1.5 periods on average).
 */
export function sessionStateStepSec(
  p: SessionStateProbe,
  target: { readonly capabilities: { readonly session?: { readonly pinsSessions: boolean } } },
): number {
  const hold = (target.capabilities.session?.pinsSessions ?? false) ? 1.5 * p.pinPeriodSec : 0;
  return Math.ceil(p.features.length * (1 + hold));
}

/**
 * A self-hosted pool this run cannot narrow to one server connection (PgDoorman on a pooler host,
 * whose file the runners cannot rewrite: `resizablePool` null) would let the two clients each keep a
 * connection of their own, and every feature would read "works": such a step is planned not
 * available with the reason. A pool that pins (RDS Proxy) is observed, never narrowed.
 */
export function sessionStateUnavailableOn(
  _p: SessionStateProbe,
  target: {
    readonly capabilities: {
      readonly pooled?: boolean;
      readonly resizablePool?: string | null;
      readonly fixedPoolReason?: string;
      readonly session?: { readonly pinsSessions: boolean };
    };
  },
): string | null {
  const c = target.capabilities;
  if (c.pooled !== true || (c.session?.pinsSessions ?? false) || c.resizablePool !== null) return null;
  return `the session-state probe narrows the pool to one server connection, and this run cannot resize it${c.fixedPoolReason ? ` (${c.fixedPoolReason})` : ''}`;
}

/** Seconds a step may take: every feature, each with the longest pin hold (two periods). */
export function sessionStateDurationSec(p: SessionStateProbe): number {
  return p.features.length * (FEATURE_SEC + 2 * p.pinPeriodSec + 2);
}

export type ProbeOrder = 'interleaved' | 'sequential';

/** What a session-state step records (StepRecord.probe): every feature's program on the step's target. */
export interface SessionStateResult {
  readonly kind: 'session-state';
  /** interleaved: A and B connected together; sequential: B connected after A left (a session pool of one). */
  readonly order: ProbeOrder;
  /** How the adapter made both clients share a server connection, in words (`PgBouncer default_pool_size = 1`). */
  readonly sharing: string;
  /** The clients' timeouts the step ran with. Absent in runs written before they were settings. */
  readonly clientTimeouts?: ClientTimeouts;
  readonly features: readonly SessionFeatureResult[];
}
