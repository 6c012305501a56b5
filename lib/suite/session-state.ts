/**
 * The session-state matrix (pure): which session features a pooler keeps, loses, leaks to another
 * client or refuses, and — on RDS Proxy — which pin the client to its server connection.
 *
 * Each feature is a deterministic two-client program (`steps`): client A sets some session state,
 * client B — on the same pool, narrowed where the target allows so both share one server connection —
 * looks for it and sets its own, and A looks for its own again. lib/exec/session-probe.ts runs a
 * program against a real server (node-postgres), this module decides what the observations mean:
 *
 * - **works**: A saw its own state whenever it looked, and B never saw it;
 * - **lost**: A did not see its own state in a later transaction (it went with a server connection);
 * - **leaks**: B saw A's state (or A's action reached B's state, as `DISCARD ALL` does on a shared
 *   server connection, or state outlived its transaction);
 * - **errors**: a statement failed with an SQLSTATE (the state could not be set or used);
 * - **pins** (RDS Proxy): the proxy kept the client on its server connection; read afterwards from
 *   `DatabaseConnectionsCurrentlySessionPinned` over the minute the probe held the state (`pinnedIn`).
 *
 * Every expectation names its source and is decided from the target's descriptor (capabilities,
 * version, settings: lib/suite/targets.ts), never from a version written down as the truth.
 * Sources (read 2026-11 through the project's search tool):
 * - PgBouncer's "SQL feature map for pooling modes" (https://www.pgbouncer.org/features.html,
 *   pgbouncer/pgbouncer.github.io features.md): per feature, session pooling Yes, transaction pooling
 *   Yes / Never; protocol-level prepared plans Yes in transaction pooling with max_prepared_statements.
 * - PgBouncer's doc/config.md: `server_reset_query` ("When transaction pooling is used, the
 *   server_reset_query is not used"), `track_extra_parameters` (default IntervalStyle, 1.20),
 *   `max_prepared_statements` (1.21); NEWS.md 1.20.0 / 1.21.0 / 1.22.0.
 * - PgBouncer's src/server.c: a NotificationResponse from a server connection no client is linked to
 *   is skipped ("got packet '%c' from server when not linked").
 * - AWS, "Avoiding pinning an RDS Proxy" (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-pinning.html,
 *   the same list in the RDS user guide): the PostgreSQL conditions and the 16 KB rule quoted below.
 * - AWS Database Blog, "Amazon RDS Proxy multiplexing support for PostgreSQL Extended Query Protocol"
 *   (2023-11): named protocol-level statements are not on the pinning list, and whether they survive
 *   multiplexing is not documented, so that cell is measured, not predicted.
 */
import {
  SESSION_OUTCOMES,
  type CheckRole,
  type ProbeOrder,
  type SessionExpectation,
  type SessionFeature,
  type SessionFeatureResult,
  type SessionOutcome,
  type SessionProbeError,
  type SessionProbeStep,
  type SessionStateResult,
} from './session-state-kind';
import { sessionHandling, type SessionCleanup, type TargetDescriptor } from './targets';
import type { Verdict } from './types';

export * from './session-state-kind';

// ---------------------------------------------------------------------------------------------
// The programs

/** The two clients of a probe; `notifier` is a third, direct connection that only sends NOTIFY. */
export type ProbeClient = 'A' | 'B';

/**
 * One step of a program. Every check returns one row `value text, present boolean, pid int` (the
 * backend pid tells which server connection answered) and never fails by design: a failing statement
 * is an `errors` outcome with its SQLSTATE.
 */
export type ProbeStepSpec =
  | { readonly kind: 'apply'; readonly client: ProbeClient; readonly sql: string }
  /** A protocol-level named statement (Parse/Bind/Execute), as drivers send them; returns a check row. */
  | {
      readonly kind: 'apply-prepared';
      readonly client: ProbeClient;
      readonly name: string;
      readonly text: string;
    }
  | { readonly kind: 'check'; readonly client: ProbeClient; readonly role: CheckRole; readonly sql: string }
  /** Bind/Execute of a named statement the client prepared earlier (no Parse): its row is the check. */
  | {
      readonly kind: 'check-prepared';
      readonly client: ProbeClient;
      readonly role: CheckRole;
      readonly name: string;
      readonly text: string;
    }
  /** BEGIN; the statements; the check; COMMIT — all on one client. */
  | {
      readonly kind: 'transaction';
      readonly client: ProbeClient;
      readonly sql: readonly string[];
      readonly role: CheckRole;
      readonly check: string;
    }
  /** NOTIFY from a separate direct connection, then a pause for the server to deliver it. */
  | { readonly kind: 'notify'; readonly channel: string; readonly payload: string }
  /** The client runs a statement and waits briefly for a notification on `channel`: present if one came. */
  | {
      readonly kind: 'check-notification';
      readonly client: ProbeClient;
      readonly role: CheckRole;
      readonly channel: string;
    };

/** How long a feature's state lives, which decides what a transaction pool does with it. */
export type FeatureScope =
  /** Outlives the transaction: the session (a server connection) keeps it. */
  | 'session'
  /** Lives inside one transaction, which a transaction pool keeps on one server connection. */
  | 'transaction'
  /** No state: one statement. */
  | 'statement'
  /** A protocol-level named prepared statement: a pooler carries it or it does not. */
  | 'protocol'
  /** Resets the session: on a shared server connection it resets other clients' state too. */
  | 'reset';

export interface SessionFeatureInfo {
  readonly id: SessionFeature;
  /** Short label for the matrix row (`SET (session)`). */
  readonly label: string;
  /** What the program does, in words (docs, hover). */
  readonly what: string;
  readonly scope: FeatureScope;
  /** The parameter a SET feature changes (lowercase), so a pooler that tracks it can keep it per client. */
  readonly parameter?: string;
  /** The row of PgBouncer's feature map this is, when it has one. */
  readonly pgbouncerRow: string | null;
  /** The cleanup that undoes this state when a pooler resets a returned connection (SessionHandling.cleansOnRelease). */
  readonly cleanedBy?: SessionCleanup;
  /** AWS's pinning page: whether it pins an RDS Proxy session, and the condition quoted. null: not documented. */
  readonly rdsProxy: { readonly pins: boolean | null; readonly condition: string };
  /** Statements run once on a direct superuser/owner connection before the clients connect (`:probe_user_literal` is the clients' role as a string literal). */
  readonly setup?: readonly string[];
  readonly steps: readonly ProbeStepSpec[];
}

/** The check row of a probe: what was read, whether A's state is there, which backend answered. */
export function checkSql(value: string, present: string): string {
  return `SELECT (${value})::text AS value, (${present}) AS present, pg_backend_pid() AS pid`;
}

const setting = (name: string, v: string): string =>
  checkSql(`current_setting('${name}')`, `current_setting('${name}') = '${v}'`);
const tempRelation = (rel: string): string =>
  checkSql(`to_regclass('pg_temp.${rel}')`, `to_regclass('pg_temp.${rel}') IS NOT NULL`);
/** Advisory locks this backend holds under the probe's key (two-int4 form: classid = key1, objid = key2). */
const advisoryHeld = (objid: number): string =>
  checkSql(
    `(SELECT string_agg(objid::text, ',' ORDER BY objid) FROM pg_locks WHERE locktype = 'advisory' AND classid::bigint = :lock_key AND objsubid = 2 AND pid = pg_backend_pid() AND granted)`,
    `EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND classid::bigint = :lock_key AND objid::bigint = ${objid} AND objsubid = 2 AND pid = pg_backend_pid() AND granted)`,
  );

/** Characters of the long statement's literal: above RDS Proxy's 16 KB. */
export const LONG_STATEMENT_CHARS = 16 * 1024 + 512;

const FEATURES: readonly SessionFeatureInfo[] = [
  {
    id: 'set-session',
    label: 'SET (session)',
    what: "SET statement_timeout = '41s' outside a transaction; B sets '42s'",
    scope: 'session',
    parameter: 'statement_timeout',
    pgbouncerRow: 'SET/RESET',
    cleanedBy: 'settings',
    rdsProxy: { pins: true, condition: 'Using SET commands' },
    steps: [
      { kind: 'apply', client: 'A', sql: "SET statement_timeout = '41s'" },
      { kind: 'check', client: 'B', role: 'other', sql: setting('statement_timeout', '41s') },
      { kind: 'apply', client: 'B', sql: "SET statement_timeout = '42s'" },
      { kind: 'check', client: 'A', role: 'own', sql: setting('statement_timeout', '41s') },
    ],
  },
  {
    id: 'set-tracked',
    label: 'SET IntervalStyle (a reported parameter)',
    what: "SET IntervalStyle = 'iso_8601'; B sets 'sql_standard' — a parameter PostgreSQL reports to the client, which PgBouncer ≥ 1.20 tracks",
    scope: 'session',
    parameter: 'intervalstyle',
    pgbouncerRow: 'SET/RESET',
    cleanedBy: 'settings',
    rdsProxy: { pins: true, condition: 'Using SET commands' },
    steps: [
      { kind: 'apply', client: 'A', sql: "SET IntervalStyle = 'iso_8601'" },
      { kind: 'check', client: 'B', role: 'other', sql: setting('IntervalStyle', 'iso_8601') },
      { kind: 'apply', client: 'B', sql: "SET IntervalStyle = 'sql_standard'" },
      { kind: 'check', client: 'A', role: 'own', sql: setting('IntervalStyle', 'iso_8601') },
    ],
  },
  {
    id: 'set-local',
    label: 'SET LOCAL',
    what: "BEGIN; SET LOCAL statement_timeout = '43s'; read it; COMMIT — then it must be gone for A and never seen by B",
    scope: 'transaction',
    parameter: 'statement_timeout',
    pgbouncerRow: null,
    rdsProxy: {
      pins: true,
      condition: 'Using SET commands (the page exempts SET LOCAL only for MySQL)',
    },
    steps: [
      {
        kind: 'transaction',
        client: 'A',
        sql: ["SET LOCAL statement_timeout = '43s'"],
        role: 'own',
        check: setting('statement_timeout', '43s'),
      },
      { kind: 'check', client: 'B', role: 'other', sql: setting('statement_timeout', '43s') },
      { kind: 'check', client: 'A', role: 'scope', sql: setting('statement_timeout', '43s') },
    ],
  },
  {
    id: 'search-path',
    label: 'search_path',
    what: 'SET search_path = proxylab_probe_a, public; B sets proxylab_probe_b',
    scope: 'session',
    parameter: 'search_path',
    pgbouncerRow: 'SET/RESET',
    cleanedBy: 'settings',
    rdsProxy: { pins: true, condition: 'Using SET commands' },
    steps: [
      { kind: 'apply', client: 'A', sql: 'SET search_path = proxylab_probe_a, public' },
      {
        kind: 'check',
        client: 'B',
        role: 'other',
        sql: checkSql(
          "current_setting('search_path')",
          "position('proxylab_probe_a' in current_setting('search_path')) > 0",
        ),
      },
      { kind: 'apply', client: 'B', sql: 'SET search_path = proxylab_probe_b, public' },
      {
        kind: 'check',
        client: 'A',
        role: 'own',
        sql: checkSql(
          "current_setting('search_path')",
          "position('proxylab_probe_a' in current_setting('search_path')) > 0",
        ),
      },
    ],
  },
  {
    id: 'set-role',
    label: 'SET ROLE',
    what: 'SET ROLE proxylab_probe_a (a NOLOGIN role granted to the probe user); B sets proxylab_probe_b',
    scope: 'session',
    pgbouncerRow: 'SET/RESET',
    cleanedBy: 'role',
    rdsProxy: { pins: true, condition: 'Using SET commands' },
    // Roles made if missing, granted to the probe's user unless it may already SET ROLE to them (a
    // DBA may create and grant them up front; the probe's user then needs no CREATEROLE). From
    // PostgreSQL 16 a role's creator holds it WITH ADMIN but without SET, hence the SET check there.
    setup: [
      `DO $$
DECLARE
  r text;
  can_set boolean;
BEGIN
  FOREACH r IN ARRAY ARRAY['proxylab_probe_a', 'proxylab_probe_b'] LOOP
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r) THEN
      EXECUTE format('CREATE ROLE %I NOLOGIN', r);
    END IF;
    IF current_setting('server_version_num')::int >= 160000 THEN
      can_set := pg_has_role(:probe_user_literal, r, 'SET');
    ELSE
      can_set := pg_has_role(:probe_user_literal, r, 'MEMBER');
    END IF;
    IF NOT can_set THEN
      EXECUTE format('GRANT %I TO %I', r, :probe_user_literal);
    END IF;
  END LOOP;
END $$`,
    ],
    steps: [
      { kind: 'apply', client: 'A', sql: 'SET ROLE proxylab_probe_a' },
      {
        kind: 'check',
        client: 'B',
        role: 'other',
        sql: checkSql('current_user', "current_user = 'proxylab_probe_a'"),
      },
      { kind: 'apply', client: 'B', sql: 'SET ROLE proxylab_probe_b' },
      {
        kind: 'check',
        client: 'A',
        role: 'own',
        sql: checkSql('current_user', "current_user = 'proxylab_probe_a'"),
      },
    ],
  },
  {
    id: 'advisory-lock',
    label: 'advisory lock (session)',
    what: 'SELECT pg_advisory_lock(key, 1); B takes (key, 2); each looks at the advisory locks its backend holds',
    scope: 'session',
    pgbouncerRow: 'Session-level advisory locks',
    rdsProxy: { pins: true, condition: 'Interacting with locks using functions such as pg_advisory_lock' },
    steps: [
      { kind: 'apply', client: 'A', sql: 'SELECT pg_advisory_lock(:lock_key, 1)' },
      { kind: 'check', client: 'B', role: 'other', sql: advisoryHeld(1) },
      { kind: 'apply', client: 'B', sql: 'SELECT pg_advisory_lock(:lock_key, 2)' },
      { kind: 'check', client: 'A', role: 'own', sql: advisoryHeld(1) },
    ],
  },
  {
    id: 'advisory-xact-lock',
    label: 'advisory lock (transaction)',
    what: 'BEGIN; SELECT pg_advisory_xact_lock(key, 3); look; COMMIT — then nobody holds it',
    scope: 'transaction',
    pgbouncerRow: null,
    rdsProxy: {
      pins: false,
      condition: 'RDS Proxy does not pin on transaction level advisory locks (pg_advisory_xact_lock …)',
    },
    steps: [
      {
        kind: 'transaction',
        client: 'A',
        sql: ['SELECT pg_advisory_xact_lock(:lock_key, 3)'],
        role: 'own',
        check: advisoryHeld(3),
      },
      { kind: 'check', client: 'B', role: 'other', sql: advisoryHeld(3) },
      { kind: 'check', client: 'A', role: 'scope', sql: advisoryHeld(3) },
    ],
  },
  {
    id: 'temp-table',
    label: 'temporary table (session)',
    what: 'CREATE TEMP TABLE proxylab_probe_a; B creates proxylab_probe_b; each looks for A’s in pg_temp',
    scope: 'session',
    pgbouncerRow: 'PRESERVE/DELETE ROWS temp tables',
    rdsProxy: { pins: true, condition: 'Creating temporary sequences, tables, or views' },
    steps: [
      { kind: 'apply', client: 'A', sql: 'CREATE TEMP TABLE proxylab_probe_a (v text)' },
      { kind: 'check', client: 'B', role: 'other', sql: tempRelation('proxylab_probe_a') },
      { kind: 'apply', client: 'B', sql: 'CREATE TEMP TABLE proxylab_probe_b (v text)' },
      { kind: 'check', client: 'A', role: 'own', sql: tempRelation('proxylab_probe_a') },
    ],
  },
  {
    id: 'temp-table-on-commit-drop',
    label: 'temporary table ON COMMIT DROP',
    what: 'BEGIN; CREATE TEMP TABLE … ON COMMIT DROP; INSERT; look; COMMIT — then it is gone',
    scope: 'transaction',
    pgbouncerRow: 'ON COMMIT DROP temp tables',
    rdsProxy: { pins: true, condition: 'Creating temporary sequences, tables, or views' },
    steps: [
      {
        kind: 'transaction',
        client: 'A',
        sql: [
          'CREATE TEMP TABLE proxylab_probe_tx_a (v text) ON COMMIT DROP',
          "INSERT INTO proxylab_probe_tx_a VALUES ('a')",
        ],
        role: 'own',
        check: tempRelation('proxylab_probe_tx_a'),
      },
      { kind: 'check', client: 'B', role: 'other', sql: tempRelation('proxylab_probe_tx_a') },
      { kind: 'check', client: 'A', role: 'scope', sql: tempRelation('proxylab_probe_tx_a') },
    ],
  },
  {
    id: 'listen-notify',
    label: 'LISTEN / NOTIFY',
    what: 'LISTEN proxylab_probe_a; a direct connection sends NOTIFY; A must receive it, B must not be listening',
    scope: 'session',
    pgbouncerRow: 'LISTEN',
    rdsProxy: { pins: true, condition: 'Listening on a notification channel' },
    steps: [
      { kind: 'apply', client: 'A', sql: 'LISTEN proxylab_probe_a' },
      {
        kind: 'check',
        client: 'B',
        role: 'other',
        sql: checkSql(
          "(SELECT string_agg(c, ',') FROM pg_listening_channels() AS c)",
          "'proxylab_probe_a' = ANY (ARRAY(SELECT pg_listening_channels()))",
        ),
      },
      { kind: 'notify', channel: 'proxylab_probe_a', payload: 'a' },
      { kind: 'check-notification', client: 'A', role: 'own', channel: 'proxylab_probe_a' },
      { kind: 'check-notification', client: 'B', role: 'other', channel: 'proxylab_probe_a' },
    ],
  },
  {
    id: 'protocol-prepared',
    label: 'protocol-level prepared statement',
    what: 'Parse/Bind/Execute of a named statement "proxylab_probe" (as drivers do: both clients use the same name), then A executes it again without Parse',
    scope: 'protocol',
    pgbouncerRow: 'Protocol-level prepared plans',
    rdsProxy: {
      pins: null,
      condition:
        'not on the pinning list since RDS Proxy multiplexes the extended query protocol (2023-11); whether named statements survive is undocumented',
    },
    steps: [
      {
        kind: 'apply-prepared',
        client: 'A',
        name: 'proxylab_probe',
        text: "SELECT 'a'::text AS value, true AS present, pg_backend_pid() AS pid",
      },
      {
        kind: 'check',
        client: 'B',
        role: 'other',
        sql: checkSql(
          "(SELECT string_agg(name, ',') FROM pg_prepared_statements)",
          "EXISTS (SELECT FROM pg_prepared_statements WHERE name = 'proxylab_probe')",
        ),
      },
      {
        kind: 'apply-prepared',
        client: 'B',
        name: 'proxylab_probe',
        text: "SELECT 'b'::text AS value, true AS present, pg_backend_pid() AS pid",
      },
      {
        kind: 'check-prepared',
        client: 'A',
        role: 'own',
        name: 'proxylab_probe',
        text: "SELECT 'a'::text AS value, true AS present, pg_backend_pid() AS pid",
      },
    ],
  },
  {
    id: 'sql-prepare',
    label: 'SQL PREPARE / EXECUTE',
    what: "PREPARE proxylab_probe_a AS SELECT 'a'; B prepares proxylab_probe_b; each looks in pg_prepared_statements",
    scope: 'session',
    pgbouncerRow: 'PREPARE / DEALLOCATE',
    cleanedBy: 'prepared',
    rdsProxy: {
      pins: true,
      condition: 'Using PREPARE, DISCARD, DEALLOCATE, or EXECUTE commands to manage prepared statements',
    },
    steps: [
      { kind: 'apply', client: 'A', sql: "PREPARE proxylab_probe_a AS SELECT 'a'::text" },
      {
        kind: 'check',
        client: 'B',
        role: 'other',
        sql: checkSql(
          "(SELECT string_agg(name, ',') FROM pg_prepared_statements)",
          "EXISTS (SELECT FROM pg_prepared_statements WHERE name = 'proxylab_probe_a')",
        ),
      },
      { kind: 'apply', client: 'B', sql: "PREPARE proxylab_probe_b AS SELECT 'b'::text" },
      {
        kind: 'check',
        client: 'A',
        role: 'own',
        sql: checkSql(
          "(SELECT string_agg(name, ',') FROM pg_prepared_statements)",
          "EXISTS (SELECT FROM pg_prepared_statements WHERE name = 'proxylab_probe_a')",
        ),
      },
    ],
  },
  {
    id: 'with-hold-cursor',
    label: 'DECLARE … WITH HOLD',
    what: 'DECLARE proxylab_probe_a CURSOR WITH HOLD FOR SELECT …; B declares proxylab_probe_b; each looks in pg_cursors',
    scope: 'session',
    pgbouncerRow: 'WITH HOLD CURSOR',
    cleanedBy: 'cursors',
    rdsProxy: { pins: true, condition: 'Declaring cursors' },
    steps: [
      {
        kind: 'apply',
        client: 'A',
        sql: 'DECLARE proxylab_probe_a CURSOR WITH HOLD FOR SELECT g FROM generate_series(1, 3) AS g',
      },
      {
        kind: 'check',
        client: 'B',
        role: 'other',
        sql: checkSql(
          "(SELECT string_agg(name, ',') FROM pg_cursors)",
          "EXISTS (SELECT FROM pg_cursors WHERE name = 'proxylab_probe_a')",
        ),
      },
      {
        kind: 'apply',
        client: 'B',
        sql: 'DECLARE proxylab_probe_b CURSOR WITH HOLD FOR SELECT g FROM generate_series(1, 3) AS g',
      },
      {
        kind: 'check',
        client: 'A',
        role: 'own',
        sql: checkSql(
          "(SELECT string_agg(name, ',') FROM pg_cursors)",
          "EXISTS (SELECT FROM pg_cursors WHERE name = 'proxylab_probe_a')",
        ),
      },
    ],
  },
  {
    id: 'long-statement',
    label: 'statement over 16 KB',
    what: `one SELECT whose text is ${LONG_STATEMENT_CHARS} characters (a string literal)`,
    scope: 'statement',
    pgbouncerRow: null,
    rdsProxy: {
      pins: true,
      condition: 'Any statement with a text size greater than 16 KB causes the proxy to pin the session',
    },
    steps: [
      {
        kind: 'check',
        client: 'A',
        role: 'own',
        sql:
          `SELECT n::text AS value, n = ${LONG_STATEMENT_CHARS} AS present, pg_backend_pid() AS pid ` +
          `FROM (SELECT length('${'x'.repeat(LONG_STATEMENT_CHARS)}') AS n) AS s`,
      },
    ],
  },
  {
    id: 'discard-all',
    label: 'DISCARD ALL',
    what: "B sets statement_timeout = '44s'; A sets lock_timeout = '45s' and runs DISCARD ALL: A's setting must go, B's must stay",
    scope: 'reset',
    pgbouncerRow: null,
    rdsProxy: { pins: true, condition: 'Discarding the session state' },
    steps: [
      { kind: 'apply', client: 'B', sql: "SET statement_timeout = '44s'" },
      { kind: 'apply', client: 'A', sql: "SET lock_timeout = '45s'" },
      { kind: 'apply', client: 'A', sql: 'DISCARD ALL' },
      { kind: 'check', client: 'B', role: 'victim', sql: setting('statement_timeout', '44s') },
      {
        kind: 'check',
        client: 'A',
        role: 'own',
        sql: checkSql("current_setting('lock_timeout')", "current_setting('lock_timeout') <> '45s'"),
      },
    ],
  },
  {
    id: 'temp-sequence-nextval',
    label: 'nextval of a temporary sequence',
    what: 'CREATE TEMP SEQUENCE proxylab_probe_seq_a; nextval; B creates its own; A calls nextval again',
    scope: 'session',
    pgbouncerRow: 'PRESERVE/DELETE ROWS temp tables',
    rdsProxy: {
      pins: true,
      condition:
        'Creating temporary sequences, tables, or views; Manipulating sequences using functions such as nextval',
    },
    steps: [
      { kind: 'apply', client: 'A', sql: 'CREATE TEMP SEQUENCE proxylab_probe_seq_a' },
      { kind: 'apply', client: 'A', sql: "SELECT nextval('proxylab_probe_seq_a')" },
      { kind: 'check', client: 'B', role: 'other', sql: tempRelation('proxylab_probe_seq_a') },
      { kind: 'apply', client: 'B', sql: 'CREATE TEMP SEQUENCE proxylab_probe_seq_b' },
      {
        kind: 'check',
        client: 'A',
        role: 'own',
        sql:
          'SELECT v::text AS value, v IS NOT NULL AS present, pg_backend_pid() AS pid ' +
          "FROM (SELECT nextval(to_regclass('pg_temp.proxylab_probe_seq_a')) AS v) AS s",
      },
    ],
  },
];

export const SESSION_FEATURE_INFO: Readonly<Record<SessionFeature, SessionFeatureInfo>> = Object.fromEntries(
  FEATURES.map((f) => [f.id, f]),
) as Record<SessionFeature, SessionFeatureInfo>;

export function sessionFeature(id: SessionFeature): SessionFeatureInfo {
  return SESSION_FEATURE_INFO[id];
}

// ---------------------------------------------------------------------------------------------
// Expectations

/** The statement a cleanup runs (PgDoorman's cleanup_server_connections). */
const CLEANUP_STATEMENT: Record<SessionCleanup, string> = {
  role: 'RESET ROLE',
  settings: 'RESET ALL',
  prepared: 'DEALLOCATE ALL',
  cursors: 'CLOSE ALL',
};

/** The outcome a target should show for a feature, from what the descriptor says it is and can do. */
export function expectSession(feature: SessionFeature, d: TargetDescriptor): SessionExpectation {
  const f = sessionFeature(feature);
  const c = d.capabilities;
  const s = sessionHandling(d);
  const row = f.pgbouncerRow !== null ? `PgBouncer's feature map, "${f.pgbouncerRow}"` : null;
  const none = { sqlstates: [], pins: null } as const;
  if (!c.pooled)
    return {
      ...none,
      outcomes: ['works'],
      why: 'a direct connection is one session: its state stays with it and no other client shares its server process',
      sources: ['postgresql'],
    };
  const cleaned = f.cleanedBy !== undefined && (s.cleansOnRelease ?? []).includes(f.cleanedBy);
  if (!c.multiplexes) {
    if (cleaned && !s.resetsOnRelease && f.scope === 'session')
      return {
        ...none,
        outcomes: ['works'],
        why: `a session pool gives the client one server connection for its whole session, and the pooler resets this state (${CLEANUP_STATEMENT[f.cleanedBy ?? 'settings']}) before the next client gets it`,
        sources: ['pgdoorman-cleanup'],
      };
    if (s.resetsOnRelease || f.scope !== 'session')
      return {
        ...none,
        outcomes: ['works'],
        why:
          'a session pool gives the client one server connection for its whole session' +
          (s.resetsOnRelease
            ? ' and resets it (server_reset_query, DISCARD ALL) before the next client gets it'
            : '') +
          (row ? `; ${row}: Yes in session pooling` : ''),
        sources: s.resetsOnRelease ? ['pgbouncer-features', 'pgbouncer-reset-query'] : ['pgbouncer-features'],
      };
    return {
      ...none,
      outcomes: ['leaks'],
      why: 'a session pool that does not reset a server connection hands its state to the next client',
      sources: ['pgbouncer-reset-query'],
    };
  }
  if (s.pinsSessions) {
    if (f.rdsProxy.pins === null)
      return {
        ...none,
        outcomes: [],
        why: `measured, not predicted: ${f.rdsProxy.condition}`,
        sources: ['rds-proxy-extended-protocol', 'rds-proxy-pinning'],
      };
    return {
      outcomes: ['works'],
      sqlstates: [],
      pins: f.rdsProxy.pins,
      why: f.rdsProxy.pins
        ? `AWS lists "${f.rdsProxy.condition}" as pinning: the client keeps its server connection until it disconnects, so its state works and no other client gets that connection`
        : `${f.rdsProxy.condition}: the state lives inside one transaction, which the proxy keeps on one server connection`,
      sources: ['rds-proxy-pinning'],
    };
  }
  // A transaction pool that does not pin (PgBouncer pool_mode = transaction).
  switch (f.scope) {
    case 'transaction':
    case 'statement':
      return {
        ...none,
        outcomes: ['works'],
        why:
          'a transaction pool keeps a transaction on one server connection' +
          (row ? `; ${row}: Yes in transaction pooling` : '') +
          (f.scope === 'transaction' ? ', and the state ends with the transaction' : ''),
        sources: ['pgbouncer-features'],
      };
    case 'protocol':
      if (c.carriesPreparedStatements === 'yes')
        return {
          ...none,
          outcomes: ['works'],
          why: `the pooler carries protocol-level prepared statements (max_prepared_statements ${d.settings.maxPreparedStatements ?? '?'} > 0): each client's names are its own`,
          sources: ['pgbouncer-features', 'pgbouncer-max-prepared-statements'],
        };
      if (c.carriesPreparedStatements === 'no')
        return {
          outcomes: ['errors'],
          sqlstates: ['42P05', '26000'],
          pins: null,
          why: `the pooler does not carry protocol-level prepared statements (${d.version === null ? 'version unknown' : `${d.version}`}${d.settings.maxPreparedStatements === 0 ? ', max_prepared_statements = 0' : ''}): two clients' statements of one name meet on the shared server connection (42P05 already exists) or a client's statement is on another one (26000 does not exist)`,
          sources: ['pgbouncer-features', 'pgbouncer-max-prepared-statements'],
        };
      return { ...none, outcomes: [], why: 'measured, not predicted', sources: [] };
    case 'reset':
      return {
        ...none,
        outcomes: ['leaks'],
        why: "DISCARD ALL runs on the server connection the clients share, so it also resets the other client's state (no reset query runs in transaction pooling)",
        sources: ['pgbouncer-reset-query', 'postgresql'],
      };
    case 'session':
      if (cleaned && f.cleanedBy === 'prepared')
        return {
          ...none,
          outcomes: ['lost', 'leaks'],
          why: `the pooler's cleanup runs DEALLOCATE ALL "if PREPARE was used" when the server connection returns to the pool after the transaction (lost); PgDoorman 3.10.7, measured locally, left a SQL PREPARE on the shared connection (leaks): either is accepted until its documentation and its behaviour agree`,
          sources: ['pgdoorman-cleanup'],
        };
      if (cleaned)
        return {
          ...none,
          outcomes: ['lost'],
          why: `the pooler resets this state (${CLEANUP_STATEMENT[f.cleanedBy ?? 'settings']}) when the server connection returns to the pool after each transaction: A's later transaction does not find it and the next client never sees it`,
          sources: ['pgdoorman-cleanup'],
        };
      if (f.parameter !== undefined && s.trackedParameters.includes(f.parameter))
        return {
          ...none,
          outcomes: ['works'],
          why: `${f.parameter} is a parameter the pooler tracks: it restores each client's value when it hands out a server connection`,
          sources: ['pgbouncer-track-extra-parameters'],
        };
      return {
        ...none,
        outcomes: ['leaks'],
        why:
          `${row ?? 'PgBouncer'}: Never in transaction pooling` +
          (f.parameter !== undefined ? ` (${f.parameter} is not a tracked parameter)` : '') +
          ', and no reset query runs between clients: the next client on that server connection finds the state' +
          (f.id === 'listen-notify'
            ? '; a notification reaching a server connection no client holds is dropped'
            : ''),
        sources:
          f.id === 'listen-notify'
            ? ['pgbouncer-features', 'pgbouncer-reset-query', 'pgbouncer-notification-source']
            : f.parameter !== undefined
              ? ['pgbouncer-features', 'pgbouncer-reset-query', 'pgbouncer-track-extra-parameters']
              : ['pgbouncer-features', 'pgbouncer-reset-query'],
      };
  }
}

/** `leaks`, `works or lost`, `errors (42P05 | 26000)`, `measured`. */
export function describeSessionExpectation(e: SessionExpectation): string {
  if (e.outcomes.length === 0) return 'measured (not predicted)';
  const base = e.outcomes.join(' or ');
  return e.outcomes.includes('errors') && e.sqlstates.length > 0
    ? `${base} (${e.sqlstates.join(' | ')})`
    : base;
}

// ---------------------------------------------------------------------------------------------
// Observations and their meaning

/** SQLSTATE classes that mean the connection or server went away: infrastructure, never a finding. */
export function isInfrastructureSqlstate(sqlstate: string | null): boolean {
  return sqlstate !== null && (sqlstate.startsWith('08') || sqlstate.startsWith('57'));
}

/** Outcome, lost, leaked, first error and sharing, from the steps as run. */
export function classifySession(
  steps: readonly SessionProbeStep[],
): Pick<SessionFeatureResult, 'outcome' | 'lost' | 'leaked' | 'error' | 'shared'> {
  const failed = steps.find((s) => s.sqlstate !== null || s.error !== null);
  const error: SessionProbeError | null = failed
    ? {
        client: failed.client,
        kind: failed.kind,
        sqlstate: failed.sqlstate,
        message: failed.error ?? `SQLSTATE ${failed.sqlstate ?? '?'}`,
      }
    : null;
  const checks = steps.filter((s) => s.role !== null && s.error === null && s.sqlstate === null);
  const leaked = checks.some(
    (s) =>
      ((s.role === 'other' || s.role === 'scope') && s.present === true) ||
      (s.role === 'victim' && s.present === false),
  );
  const lost = checks.some((s) => s.role === 'own' && s.present !== true);
  const outcome: SessionOutcome = error ? 'errors' : leaked ? 'leaks' : lost ? 'lost' : 'works';
  const pidsOf = (client: string): number[] =>
    steps.filter((s) => s.client === client && s.backendPid !== null).map((s) => s.backendPid as number);
  const a = pidsOf('A');
  const b = pidsOf('B');
  const shared = a.length === 0 || b.length === 0 ? null : b.some((p) => a.includes(p));
  return { outcome, lost, leaked, error, shared };
}

/** One line: `leaks: B saw statement_timeout = 41s on A's server process 1234`. */
export function describeSessionResult(r: SessionFeatureResult): string {
  const other = r.steps.find(
    (s) =>
      ((s.role === 'other' || s.role === 'scope') && s.present === true) ||
      (s.role === 'victim' && s.present === false),
  );
  const own = r.steps.find((s) => s.role === 'own' && s.present !== true && s.error === null);
  const shared =
    r.shared === true
      ? 'B shared A’s server connection'
      : r.shared === false
        ? 'B never shared A’s server connection'
        : 'sharing unknown';
  switch (r.outcome) {
    case 'errors':
      return `errors: ${r.error?.client ?? '?'} ${r.error?.kind ?? ''} failed${r.error?.sqlstate ? ` with SQLSTATE ${r.error.sqlstate}` : ''}: ${r.error?.message ?? ''} (${shared})`;
    case 'leaks':
      return `leaks: ${other ? `${other.client} ${other.role === 'victim' ? 'lost its own state' : 'found the state'} (${other.value ?? 'null'}) on server process ${other.backendPid ?? '?'}` : 'state crossed clients'}${r.lost ? '; A also lost its own' : ''} (${shared})`;
    case 'lost':
      return `lost: A's later check read ${own?.value ?? 'null'} on server process ${own?.backendPid ?? '?'} (${shared})`;
    case 'works':
      return `works (${shared})`;
  }
}

/** Sequential for a session pool (B can only share A's server connection after A left), else interleaved. */
export function probeOrder(d: Pick<TargetDescriptor, 'capabilities'>): ProbeOrder {
  return d.capabilities.pooled && !d.capabilities.multiplexes ? 'sequential' : 'interleaved';
}

/**
 * The step's verdict from the expectation and the probe. A leak cannot be observed when B never shared
 * A's server connection: then an expected leak is not judged (held null), never called broken.
 */
export function judgeSession(e: SessionExpectation, r: SessionFeatureResult): Verdict {
  const expected = `${describeSessionExpectation(e)} — ${e.why}`;
  const observed = describeSessionResult(r);
  if (e.outcomes.length === 0) return { expected, observed, held: null };
  if (e.outcomes.includes('leaks') && r.shared === false && r.outcome !== 'leaks')
    return { expected, observed: `${observed}: a leak could not be observed`, held: null };
  let held = e.outcomes.includes(r.outcome);
  if (held && r.outcome === 'errors' && e.sqlstates.length > 0)
    held = r.error?.sqlstate != null && e.sqlstates.includes(r.error.sqlstate);
  return { expected, observed, held };
}

/**
 * The verdict of a session-state step: every feature judged against its own expectation; the step
 * breaks when one feature does, holds when some held and none broke, and is informational otherwise.
 */
export function judgeSessionState(r: SessionStateResult): Pick<Verdict, 'observed' | 'held'> {
  const judged = r.features.map((f) => ({ f, v: judgeSession(f.expected, f) }));
  const count = (o: SessionOutcome): number => r.features.filter((f) => f.outcome === o).length;
  const tally = SESSION_OUTCOMES.map((o) => `${count(o)} ${o}`).join(', ');
  const broke = judged.filter((j) => j.v.held === false);
  const held = broke.length > 0 ? false : judged.some((j) => j.v.held === true) ? true : null;
  const observed =
    `${r.features.length} features: ${tally}` +
    (broke.length > 0
      ? `; broke: ${broke.map((j) => `${j.f.feature} (expected ${describeSessionExpectation(j.f.expected)}, ${describeSessionResult(j.f)})`).join('; ')}`
      : '');
  return { observed, held };
}

// ---------------------------------------------------------------------------------------------
// Pins (RDS Proxy), read afterwards from CloudWatch

export const PINNED_METRIC = 'DatabaseConnectionsCurrentlySessionPinned';

export interface PinObservation {
  /** true: some minute fully inside the window showed a pinned connection; false: every such minute 0; null: unknown. */
  readonly pinned: boolean | null;
  /** Where it was read, in words (`CloudWatch DatabaseConnectionsCurrentlySessionPinned (Sum) …`). */
  readonly source: string;
  readonly detail: string;
}

/**
 * Whether the probe's session was pinned, from the metric's points (period starts, one per minute):
 * only periods that lie entirely inside the window count, so a neighbouring step's pin is never
 * charged to this one (the probe holds its state for a whole aligned minute on a target that pins).
 * No such period with data: unknown (null), never "not pinned".
 */
export function pinnedIn(
  points: ReadonlyArray<readonly [string, number]>,
  window: { readonly start: string; readonly end: string },
  periodSec = 60,
): Pick<PinObservation, 'pinned' | 'detail'> {
  const start = Date.parse(window.start);
  const end = Date.parse(window.end);
  const inside = points.filter(([t]) => {
    const at = Date.parse(t);
    return at >= start && at + periodSec * 1000 <= end;
  });
  if (inside.length === 0)
    return {
      pinned: null,
      detail: `no ${periodSec}-s datapoint lies inside ${window.start} – ${window.end}`,
    };
  const max = Math.max(...inside.map(([, v]) => v));
  return {
    pinned: max >= 1,
    detail: `max ${max} over ${inside.length} minute(s) from ${inside[0]?.[0] ?? '?'}`,
  };
}
