/**
 * Issue 40, item 3: a team's pgbench script is read for session features (session-scope SET and
 * set_config, session advisory locks, SQL PREPARE / EXECUTE / DEALLOCATE, LISTEN, temporary
 * tables, WITH HOLD cursors, DISCARD), each mapped to the session-state matrix's feature, and
 * `validate` and `plan` list them per own scenario (lib/suite/script-features.ts).
 */
import { expect } from '@jest/globals';
import { loadLabFile } from '../../lib/config/load';
import { formatRunPlan, previewRun } from '../../lib/cost/run-plan';
import {
  scriptSessionFeatures,
  sessionFeatureLines,
  type ScriptFeatureUse,
} from '../../lib/suite/script-features';
import { SESSION_FEATURES } from '../../lib/suite/session-state-kind';
import { runCliInProcess } from '../helpers/cli';
import { labWithScript } from '../helpers/lab-with-script';

type Found = Pick<ScriptFeatureUse, 'label' | 'line' | 'scope' | 'sessionFeature'>;

const SELECT = 'SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n';

describe('which session features a script uses, with their lines', () => {
  test.each<[string, string, Found[]]>([
    [
      'SET search_path',
      `${SELECT}SET search_path = app, public;\n`,
      [{ label: 'SET search_path', line: 2, scope: 'session', sessionFeature: 'search-path' }],
    ],
    [
      'SET inside BEGIN … END is still session scope',
      `BEGIN;\nset statement_timeout TO '5s';\n${SELECT}END;\n`,
      [{ label: 'SET statement_timeout', line: 2, scope: 'session', sessionFeature: 'set-session' }],
    ],
    [
      'SET SESSION of a custom parameter',
      'SET SESSION myapp.tenant = 7;\n',
      [{ label: 'SET myapp.tenant', line: 1, scope: 'session', sessionFeature: 'set-session' }],
    ],
    [
      'SET IntervalStyle, a reported parameter',
      "SET IntervalStyle = 'iso_8601';\n",
      [{ label: 'SET intervalstyle', line: 1, scope: 'session', sessionFeature: 'set-tracked' }],
    ],
    [
      'SET ROLE',
      'SET ROLE app_reader;\n',
      [{ label: 'SET ROLE', line: 1, scope: 'session', sessionFeature: 'set-role' }],
    ],
    [
      'set_config(…, false)',
      "SELECT set_config('search_path', 'app', false);\n",
      [
        {
          label: 'set_config(search_path, …, false)',
          line: 1,
          scope: 'session',
          sessionFeature: 'search-path',
        },
      ],
    ],
    [
      'session advisory locks, schema-qualified and try/shared forms',
      'SELECT pg_advisory_lock(:aid);\nSELECT pg_catalog.PG_TRY_ADVISORY_LOCK_SHARED(1, 2);\n',
      [
        { label: 'session advisory lock', line: 1, scope: 'session', sessionFeature: 'advisory-lock' },
        { label: 'session advisory lock', line: 2, scope: 'session', sessionFeature: 'advisory-lock' },
      ],
    ],
    [
      'PREPARE / EXECUTE / DEALLOCATE',
      'PREPARE q (int) AS SELECT $1;\nEXECUTE q(:aid);\nDEALLOCATE q;\n',
      [
        { label: 'PREPARE', line: 1, scope: 'session', sessionFeature: 'sql-prepare' },
        { label: 'EXECUTE', line: 2, scope: 'session', sessionFeature: 'sql-prepare' },
        { label: 'DEALLOCATE', line: 3, scope: 'session', sessionFeature: 'sql-prepare' },
      ],
    ],
    [
      'LISTEN and UNLISTEN',
      'LISTEN orders;\nUNLISTEN *;\n',
      [
        { label: 'LISTEN', line: 1, scope: 'session', sessionFeature: 'listen-notify' },
        { label: 'UNLISTEN', line: 2, scope: 'session', sessionFeature: 'listen-notify' },
      ],
    ],
    [
      'temporary tables: CREATE TEMP, CREATE TEMPORARY, SELECT INTO TEMP',
      'CREATE TEMP TABLE t (v int);\ncreate global temporary table u (v int);\nSELECT 1 AS v INTO TEMP w;\n',
      [
        { label: 'temporary table', line: 1, scope: 'session', sessionFeature: 'temp-table' },
        { label: 'temporary table', line: 2, scope: 'session', sessionFeature: 'temp-table' },
        { label: 'temporary table', line: 3, scope: 'session', sessionFeature: 'temp-table' },
      ],
    ],
    [
      'a WITH HOLD cursor (one without is not a session feature)',
      'DECLARE c NO SCROLL CURSOR WITH HOLD FOR SELECT 1;\nDECLARE d CURSOR FOR SELECT 1;\n',
      [{ label: 'WITH HOLD cursor', line: 1, scope: 'session', sessionFeature: 'with-hold-cursor' }],
    ],
    [
      'DISCARD ALL and DISCARD PLANS',
      'DISCARD ALL;\nDISCARD PLANS;\n',
      [
        { label: 'DISCARD ALL', line: 1, scope: 'reset', sessionFeature: 'discard-all' },
        { label: 'DISCARD PLANS', line: 2, scope: 'reset', sessionFeature: null },
      ],
    ],
    [
      'transaction-scoped: SET LOCAL, set_config(…, true), xact locks, ON COMMIT DROP',
      "BEGIN;\nSET LOCAL lock_timeout = '1s';\nSELECT set_config('app.x', '1', true);\n" +
        'SELECT pg_advisory_xact_lock(:aid);\nCREATE TEMP TABLE t (v int) ON COMMIT DROP;\nEND;\n',
      [
        { label: 'SET LOCAL lock_timeout', line: 2, scope: 'transaction', sessionFeature: 'set-local' },
        { label: 'set_config(app.x, …, true)', line: 3, scope: 'transaction', sessionFeature: 'set-local' },
        {
          label: 'transaction advisory lock',
          line: 4,
          scope: 'transaction',
          sessionFeature: 'advisory-xact-lock',
        },
        {
          label: 'temporary table ON COMMIT DROP',
          line: 5,
          scope: 'transaction',
          sessionFeature: 'temp-table-on-commit-drop',
        },
      ],
    ],
    [
      'comments, string literals, dollar quotes and meta-commands are not SQL',
      "-- SET search_path = x;\n/* LISTEN a; /* nested */ DISCARD ALL; */\nSELECT 'SET role x; LISTEN b';\n" +
        "SELECT E'it\\'s; LISTEN c';\nDO $$ BEGIN PERFORM pg_advisory_lock(1); END $$;\n\\set v random(1, 10)\n" +
        'SELECT "pg_advisory_lock";\nPREPARE TRANSACTION \'t1\';\n',
      [],
    ],
    [
      'a meta-command after SQL ends the statement; the next line is SQL again',
      'SELECT 1 \\gset\nLISTEN q;\n',
      [{ label: 'LISTEN', line: 2, scope: 'session', sessionFeature: 'listen-notify' }],
    ],
    [
      'lines counted through multi-line comments and literals',
      "/* one\ntwo */ SELECT 'a\nb';\nDISCARD ALL;\n",
      [{ label: 'DISCARD ALL', line: 4, scope: 'reset', sessionFeature: 'discard-all' }],
    ],
  ])('%s', (_name, sql, expected) => {
    // WHEN
    const found = scriptSessionFeatures(sql);
    // THEN
    expect(found).toEqual(expected);
  });

  test('every feature it names is a row of the session-state matrix', () => {
    // GIVEN every form above in one script
    const sql =
      "SET search_path = a;\nSET ROLE r;\nSET IntervalStyle = 'iso_8601';\nSET x.y = 1;\nSET LOCAL a = 1;\n" +
      'SELECT pg_advisory_lock(1), pg_advisory_xact_lock(2);\nCREATE TEMP TABLE t (v int);\n' +
      'CREATE TEMP TABLE u (v int) ON COMMIT DROP;\nCREATE TEMP SEQUENCE s;\nLISTEN c;\nPREPARE p AS SELECT 1;\n' +
      'DECLARE k CURSOR WITH HOLD FOR SELECT 1;\nDISCARD ALL;\n';
    // WHEN
    const ids = scriptSessionFeatures(sql).map((u) => u.sessionFeature);
    // THEN
    expect(ids).toHaveLength(14);
    for (const id of ids) expect(SESSION_FEATURES as readonly (string | null)[]).toContain(id);
  });
});

describe('one line per scenario, one hint, nothing without a session feature', () => {
  test('a scenario with session features, one with only transaction-scoped ones, one with none', () => {
    // GIVEN
    const scenarios = [
      {
        name: 'orders',
        scripts: [
          {
            name: 'orders.sql',
            sql: `${SELECT}SET search_path = app;\n${SELECT}SELECT pg_advisory_lock(1);\n`,
          },
        ],
      },
      { name: 'local', scripts: [{ name: 'l.sql', sql: "BEGIN;\nSET LOCAL a = '1';\nEND;\n" }] },
      { name: 'plain', scripts: [{ name: 'p.sql', sql: SELECT }] },
    ];
    // WHEN
    const lines = sessionFeatureLines(scenarios);
    // THEN
    expect(lines).toEqual([
      'scenario orders: session features (→ session-state feature): SET search_path (line 2) → search-path; session advisory lock (line 4) → advisory-lock',
      expect.stringMatching(/^hint: a transaction pool may lose or leak .*`proxylab local --suite session`/),
    ]);
    expect(sessionFeatureLines(scenarios.slice(1))).toEqual([]);
  });

  test('a mix of scripts names the file of each line; transaction-scoped uses are said so', () => {
    // WHEN
    const [line] = sessionFeatureLines([
      {
        name: 'mix',
        scripts: [
          { name: 'a.sql', sql: 'LISTEN q;\n' },
          { name: 'b.sql', sql: `${SELECT}LISTEN q;\nCREATE TEMP TABLE t (v int) ON COMMIT DROP;\n` },
        ],
      },
    ]);
    // THEN
    expect(line).toBe(
      'scenario mix: session features (→ session-state feature): LISTEN (a.sql line 1, b.sql line 2) → listen-notify; ' +
        'transaction-scoped (kept within its transaction): temporary table ON COMMIT DROP (b.sql line 3) → temp-table-on-commit-drop',
    );
  });
});

const SESSION_SCRIPT = `\\set aid random(1, 100000 * :scale)\nSET search_path = app, public;\n${SELECT}SELECT pg_advisory_lock(:aid);\n`;
const ORDERS_LINE =
  'scenario orders: session features (→ session-state feature): SET search_path (line 2) → search-path; session advisory lock (line 4) → advisory-lock';

describe('validate and plan list the session features of each own scenario', () => {
  test('validate prints the scenario line and the hint under the summary', async () => {
    // GIVEN
    const file = labWithScript(SESSION_SCRIPT, [{ builtin: 'select-only' }]);
    // WHEN
    const { code, out } = await runCliInProcess(['validate', file]);
    // THEN
    expect(code).toBe(0);
    const lines = out.split('\n');
    expect(lines[0]).toBe(`${file}: ok`);
    // under the summary, the prices the lab is checked against (with their date), then the scenario
    expect(lines[2]).toMatch(/^ {2}us-east-1 prices as of \d{4}-\d{2}-\d{2} /);
    expect(lines.slice(3, 5)).toEqual([
      `  ${ORDERS_LINE}`,
      expect.stringMatching(/^ {2}hint: .*--suite session/),
    ]);
  });

  test('validate prints nothing more for a script without session features', async () => {
    // WHEN
    const { code, out } = await runCliInProcess([
      'validate',
      labWithScript(SELECT, [{ builtin: 'select-only' }]),
    ]);
    // THEN
    expect(code).toBe(0);
    expect(out).not.toContain('session features');
    expect(out).not.toContain('hint:');
  });

  test('plan lists them for the suite lab, not for a catalog suite', () => {
    // GIVEN
    const lab = loadLabFile(labWithScript(SESSION_SCRIPT, [{ builtin: 'select-only' }]));
    // WHEN
    const own = previewRun(lab, 'lab');
    // THEN
    expect(own.sessionFeatures).toEqual([ORDERS_LINE, expect.stringMatching(/^hint: /)]);
    expect(formatRunPlan(own)).toContain(`\n\n  ${ORDERS_LINE}\n  hint: `);
    expect(previewRun(lab, 'quick').sessionFeatures).toEqual([]);
    expect(formatRunPlan(previewRun(lab, 'quick'))).not.toContain('session features');
  });
});
