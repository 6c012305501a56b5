/**
 * Building blocks the experiments share: scripts, what targets a scenario runs against (by
 * capability), and expectation rules several experiments use.
 */
import type { ExpectationRule, ScriptSpec } from '../scenario';
import type { TargetMatch } from '../targets';
import type { ErrorClass } from '../types';

export const SELECT_1: ScriptSpec = { parts: [{ file: { name: 'select-1.sql', sql: 'SELECT 1;\n' } }] };
export const SELECT_ONLY: ScriptSpec = { parts: [{ builtin: 'select-only' }] };
export const TPCB: ScriptSpec = { parts: [{ builtin: 'tpcb-like' }] };
export const MIXED_READ_WRITE: ScriptSpec = {
  parts: [
    { builtin: 'select-only', weight: 8 },
    { builtin: 'tpcb-like', weight: 2 },
  ],
};

// What a scenario runs against. Disjoint on every kind of target there is, so a target is selected
// by exactly one of them (test/unit/suite/catalog.test.ts).
/** The database itself, no pool in between (`direct`). */
export const DIRECT: TargetMatch = { pooled: false };
/** A pool AWS runs: every RDS Proxy of the lab. */
export const MANAGED_POOL: TargetMatch = { pooled: true, managed: true };
/** A self-hosted pooler multiplexing at transaction level (PgBouncer `pool_mode = transaction`). */
export const SELF_HOSTED_TRANSACTION_POOL: TargetMatch = { pooled: true, managed: false, multiplexes: true };
/** A self-hosted pool that gives each client a server connection for its session (PgBouncer `pool_mode = session`). */
export const SESSION_POOL: TargetMatch = { pooled: true, managed: false, multiplexes: false };
/** What the local stand-in has (direct, a PgBouncer transaction pool) and a lab's RDS Proxies. */
export const LOCAL_AND_CLOUD: readonly TargetMatch[] = [DIRECT, SELF_HOSTED_TRANSACTION_POOL, MANAGED_POOL];

// What rules and comparisons ask of a target.
export const POOLED: TargetMatch = { pooled: true };
export const UNPOOLED: TargetMatch = { pooled: false };
export const PGBOUNCER: TargetMatch = { pooler: ['pgbouncer'] };
export const RDS_PROXY: TargetMatch = { pooler: ['rds-proxy'] };
export const MULTIPLEXING_POOL: TargetMatch = { pooled: true, multiplexes: true };
export const PREPARED_ERRORS: readonly ErrorClass[] = [
  'prepared-statement-exists',
  'prepared-statement-missing',
  'portal-missing',
];

export const DIRECT_ABOVE_REFUSED: ExpectationRule = {
  when: { target: UNPOOLED, maxConnectionsBand: ['above'] },
  outcome: 'refused',
  errorClasses: ['too-many-connections'],
  note: 'more clients than max_connections: the server refuses the extra connections',
};
export const DIRECT_NEAR_ANY: ExpectationRule = {
  when: { target: UNPOOLED, maxConnectionsBand: ['near'] },
  outcome: 'any',
  note: 'within the reserved-slot margin of max_connections: refusal depends on reserved slots and the role',
};
export const DIRECT_BELOW_SUCCEEDS: ExpectationRule = {
  when: { target: UNPOOLED, maxConnectionsBand: ['below'] },
  outcome: 'succeeds',
};
export const MULTIPLEXED_PREPARED_FAILS: ExpectationRule = {
  when: {
    target: { ...MULTIPLEXING_POOL, carriesPreparedStatements: ['no'] },
    protocols: ['prepared'],
  },
  outcome: 'errors',
  errorClasses: PREPARED_ERRORS,
  note:
    'a transaction pool that does not carry prepared statements (PgBouncer < 1.21, or max_prepared_statements = 0): ' +
    'named statements land on other server connections (`prepared statement "P_0" already exists / does not exist`), even with 2 clients',
};
export const PGBOUNCER_SESSION_OVER_POOL: ExpectationRule = {
  when: {
    target: { pooled: true, multiplexes: false },
    connects: ['persistent'],
    clientsAbovePoolSize: true,
  },
  outcome: 'any',
  note: 'session pooling with more persistent clients than the pool: waiting clients never get a server connection; the run can hang (timeout)',
};
export const POOLED_SUCCEEDS: ExpectationRule = {
  when: { target: POOLED },
  outcome: 'succeeds',
  note: 'clients beyond the pool queue in the pooler instead of failing',
};

/** k/24 × max_connections, k = 1..20: 50..1000 clients on E5's max_connections = 1200. */

/**
 * The capability selectors a lab's own scenario may name (lab file `scenarios[].targets`, besides
 * `all`), in the order a scenario lists what they select: the same four the catalog uses.
 */
export const TARGET_SELECTORS = {
  direct: DIRECT,
  'managed-pool': MANAGED_POOL,
  'self-hosted-transaction-pool': SELF_HOSTED_TRANSACTION_POOL,
  'self-hosted-session-pool': SESSION_POOL,
} as const satisfies Readonly<Record<string, TargetMatch>>;
export type TargetSelectorName = keyof typeof TARGET_SELECTORS;
export const TARGET_SELECTOR_NAMES = Object.keys(TARGET_SELECTORS) as TargetSelectorName[];

/**
 * What a lab's own scenario expects of each target: only what the target's capabilities predict
 * for any workload (direct above max_connections refused; a pool queues clients; a transaction pool
 * that does not carry prepared statements breaks `-M prepared`; RDS Proxy's handling of named
 * statements is recorded, not predicted). What the team's own SQL does (SET, temporary tables,
 * advisory locks through a transaction pool) the lab cannot know: such a failure shows as a broken
 * `succeeds` with its error classes.
 */
export const OWN_WORKLOAD_EXPECTATIONS: readonly ExpectationRule[] = [
  DIRECT_ABOVE_REFUSED,
  DIRECT_NEAR_ANY,
  DIRECT_BELOW_SUCCEEDS,
  {
    when: { target: { carriesPreparedStatements: ['measured'] }, protocols: ['prepared'] },
    outcome: 'any',
    note: 'named prepared statements through RDS Proxy: recorded (with DatabaseConnectionsCurrentlySessionPinned), not predicted',
  },
  MULTIPLEXED_PREPARED_FAILS,
  PGBOUNCER_SESSION_OVER_POOL,
  POOLED_SUCCEEDS,
];
