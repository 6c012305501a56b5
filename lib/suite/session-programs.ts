/**
 * The session-state programs (pure, data): per session feature, what it is (scope, the row of
 * PgBouncer's feature map, RDS Proxy's pinning condition, the cleanup that undoes it) and the
 * deterministic two-client program that shows it (`steps`). ./session-state.ts decides what a
 * program's observations mean and what each target should show; lib/exec/session-program.ts runs
 * the steps. The sources are named in ./session-state.ts.
 */
import type { CheckRole, SessionFeature } from './session-state-kind';
import type { SessionCleanup } from './targets';

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
