/**
 * The decision table's session features and its answer line (issue 40, items 3 and 4), on SYNTHETIC
 * run directories (hand-made to the result types, not measurements): each row shows, for each
 * session feature the scenario's script uses, the target's outcome — measured by a session-state
 * step of the same run, else expected from its product entry (and said so) —; the answer names the
 * targets that ran without errors, hangs or session breakage, the cheapest of them at the observed
 * rate and p99, and what each other would need, derived from the outcome and the product entry;
 * and when no cell has a tps for every target (a local stand-in's max_connections below the team's
 * counts), the targets that could run are compared at the counts they all ran.
 */
import { expect } from '@jest/globals';
import { groupCells } from '../../lib/report/cells';
import { comparisonOf } from '../../lib/report/decision-comparison';
import { decisionTables, type DecisionTable } from '../../lib/report/decision';
import {
  decisionAnswer,
  decisionCells,
  decisionNotes,
  DECISION_HEADER,
} from '../../lib/report/decision-text';
import { renderHtml } from '../../lib/report/render-html';
import { renderMarkdown } from '../../lib/report/render-md';
import { compareRuns, renderCompareHtml } from '../../lib/report/compare';
import { loadRun, type LoadedRun } from '../../lib/report/load';
import { buildModel } from '../../lib/report/shape';
import type { RunPlan } from '../../lib/suite/plan';
import {
  classifySession,
  expectSession,
  type SessionFeature,
  type SessionFeatureResult,
  type SessionProbeStep,
} from '../../lib/suite/session-state';
import { describeTarget, type TargetDescriptor } from '../../lib/suite/targets';
import type { RunManifest, StepRecord } from '../../lib/suite/types';
import { makeManifest, makeStep, writeRunDir, type StepSpec } from '../fixtures/runs/synthetic';
import { scratchDir } from '../helpers/scratch';

const LOCKS_SQL =
  'SET search_path = app, public;\nSELECT pg_advisory_lock(1);\nSELECT pg_advisory_unlock(1);\n';

const DESCRIPTORS: Record<string, TargetDescriptor> = {
  direct: describeTarget({ kind: 'direct', name: 'direct' }, { version: '15.18' }),
  'bouncer-transaction': describeTarget(
    { kind: 'pgbouncer-transaction', name: 'bouncer-transaction' },
    { version: '1.25.2', maxPreparedStatements: 0 },
  ),
  'bouncer-session': describeTarget(
    { kind: 'pgbouncer-session', name: 'bouncer-session' },
    { version: '1.25.2', maxPreparedStatements: 200 },
  ),
  pool100: describeTarget({ kind: 'rds-proxy', name: 'pool100' }, { version: null }),
  old: describeTarget(
    { kind: 'pgbouncer-transaction', name: 'old' },
    { version: '1.18.0', maxPreparedStatements: null },
  ),
};

type Spec = Omit<StepSpec, 'target' | 'targetName' | 'scenario'> & { readonly name: string };

/** A pgbench step of scenario `team` on one of DESCRIPTORS. */
function pgbenchStep(runId: string, s: Spec): StepRecord {
  const d = DESCRIPTORS[s.name] as TargetDescriptor;
  return makeStep(runId, { ...s, scenario: 'team', target: d.kind, targetName: d.name });
}

/** A session-state step of this run on `name`, with each feature's B check seeing A's state (`leak`) or not. */
function sessionStep(runId: string, name: string, features: Array<[SessionFeature, boolean]>): StepRecord {
  const d = DESCRIPTORS[name] as TargetDescriptor;
  const check = (client: string, role: SessionProbeStep['role'], present: boolean, pid: number) => ({
    client,
    kind: 'check',
    role,
    sql: 'SELECT …',
    backendPid: pid,
    value: present ? 'app' : 'public',
    present,
    sqlstate: null,
    error: null,
    ms: 1,
  });
  const results = features.map(([f, leak]): SessionFeatureResult => {
    const steps = [check('B', 'other', leak, leak ? 7 : 8), check('A', 'own', true, 7)];
    return { feature: f, expected: expectSession(f, d), ...classifySession(steps), steps, pinWatch: null };
  });
  const base = makeStep(runId, {
    scenario: 'session-state',
    target: d.kind,
    targetName: d.name,
    clients: 2,
    tps: null,
    startSec: 500,
  });
  return {
    ...base,
    result: null,
    probe: { kind: 'session-state', order: 'interleaved', sharing: 'pool of one', features: results },
  };
}

/**
 * The run as the report loads it, with the plan.json parts these tables read: each step's script (the
 * team's file for its pgbench steps) and descriptor (so the versions are the probed ones).
 */
function load(
  steps: readonly StepRecord[],
  manifest: Partial<RunManifest> = {},
  opts: { sql?: string; runnerCount?: number; plan?: boolean } = {},
): LoadedRun {
  const runId = steps[0]?.runId ?? 'synthetic-x';
  const run = loadRun(
    writeRunDir(scratchDir('proxylab-decision-session-'), {
      manifest: makeManifest(runId, { stepIds: steps.map((s) => s.stepId), ...manifest }),
      steps,
      metrics: {},
    }),
  );
  if (opts.plan === false) return run;
  const descriptorOf = (s: Pick<StepRecord, 'target'>): TargetDescriptor =>
    DESCRIPTORS[s.target.name] as TargetDescriptor;
  const plan = {
    runnerCount: opts.runnerCount ?? 1,
    steps: steps.map((s) => ({
      stepId: s.stepId,
      scenario: s.scenario,
      descriptor: descriptorOf(s),
      script: {
        parts:
          s.scenario === 'team'
            ? [{ file: { name: 'locks.sql', sql: opts.sql ?? LOCKS_SQL } }]
            : [{ builtin: 'select-only' }],
      },
    })),
  } as unknown as RunPlan;
  return { ...run, plan, descriptorOf };
}

function teamTable(run: LoadedRun): DecisionTable {
  const table = decisionTables(run, groupCells(run.steps)).find((t) => t.scenario === 'team');
  if (!table) throw new Error('no table for scenario team');
  return table;
}

const rowOf = (t: DecisionTable, label: string) => t.rows.find((r) => r.label === label);
const sessionCell = (t: DecisionTable, label: string): string =>
  decisionCells(t, rowOf(t, label)!)[DECISION_HEADER.indexOf('session features (outcome, on)')] ?? '';

describe('session features per row, when the run has no session-state steps: expected, never invented', () => {
  const run = load(
    ['direct', 'bouncer-transaction', 'bouncer-session'].map((name, i) =>
      pgbenchStep('synthetic-features-expected', {
        name,
        clients: 12,
        tps: 1000 + i * 100,
        startSec: i * 20,
      }),
    ),
  );
  const table = teamTable(run);

  test('each feature the script uses, with what the product entry predicts for that kind and version', () => {
    const tx = rowOf(table, 'bouncer-transaction')?.sessionFeatures;
    expect(tx?.map((f) => [f.feature, f.source, f.outcomes, f.version])).toEqual([
      ['search-path', 'expected', ['leaks'], 'PgBouncer 1.25.2'],
      ['advisory-lock', 'expected', ['leaks'], 'PgBouncer 1.25.2'],
    ]);
    expect(rowOf(table, 'bouncer-session')?.sessionFeatures?.map((f) => f.outcomes)).toEqual([
      ['works'],
      ['works'],
    ]);
    expect(sessionCell(table, 'bouncer-transaction')).toBe(
      'SET search_path (line 1): leaks — PgBouncer 1.25.2, expected, not measured (--suite session); ' +
        'session advisory lock (lines 2, 3): leaks — PgBouncer 1.25.2, expected, not measured (--suite session)',
    );
    expect(sessionCell(table, 'direct')).toBe(
      'SET search_path (line 1): works — PostgreSQL 15.18, expected, not measured (--suite session); ' +
        'session advisory lock (lines 2, 3): works — PostgreSQL 15.18, expected, not measured (--suite session)',
    );
  });

  test('the answer: an expected leak is session breakage — pgbench cannot see it, the table says it', () => {
    expect(decisionAnswer(table)).toBe(
      'Answer: Ran without errors, hangs or session breakage: direct, bouncer-session; ' +
        'cheapest per million transactions: unpriced; compared at 12 clients. ' +
        'bouncer-transaction: not suitable: SET search_path (line 1) leaks through a transaction pool; ' +
        'session advisory lock (lines 2, 3) leaks through a transaction pool ' +
        '(PgBouncer 1.25.2; expected, not measured: --suite session measures it).',
    );
  });

  test('summary.md, report.html and compare draw the same column', () => {
    const model = buildModel(run, () => null);
    const md = renderMarkdown(model, () => null);
    expect(md).toContain('| session features (outcome, on) |');
    expect(md).toContain(
      'session advisory lock (lines 2, 3): leaks — PgBouncer 1.25.2, expected, not measured',
    );
    const page = renderHtml(model, { lookup: () => null, generatedAt: new Date('2026-01-05T12:00:00Z') });
    expect(page).toContain('<th>session features (outcome, on)</th>');
    expect(page).toContain(
      'session advisory lock (lines 2, 3): leaks — PgBouncer 1.25.2, expected, not measured',
    );
    const compared = renderCompareHtml(compareRuns(run, run)).page;
    expect(compared).toContain('<th>session features A → B</th>');
    expect(compared).toMatch(
      /SET search_path \(line 1\): leaks — PgBouncer 1\.25\.2, [^<]+ → SET search_path/,
    );
  });

  test('a run without plan.json: the script is not recorded, so no feature is claimed either way', () => {
    const bare = load(
      [pgbenchStep('synthetic-features-noplan', { name: 'direct', clients: 12, tps: 900, startSec: 0 })],
      {},
      { plan: false },
    );
    const t = teamTable(bare);
    expect(t.rows[0]?.sessionFeatures).toBeNull();
    expect(sessionCell(t, 'direct')).toBe('script not recorded (no plan.json)');
  });

  test('a script without session features: "none used"', () => {
    const plain = load(
      [pgbenchStep('synthetic-features-none', { name: 'direct', clients: 12, tps: 900, startSec: 0 })],
      {},
      { sql: 'SELECT 1;\n' },
    );
    expect(sessionCell(teamTable(plain), 'direct')).toBe('none used');
  });
});

describe('session features measured by session-state steps of the same run win over the expectation', () => {
  const runId = 'synthetic-features-measured';
  const run = load([
    ...['direct', 'bouncer-transaction', 'bouncer-session'].map((name, i) =>
      pgbenchStep(runId, { name, clients: 12, tps: 1000 + i * 100, startSec: i * 20 }),
    ),
    // the session pool's search_path measured leaking (its expectation says works), the transaction
    // pool's measured working (its expectation says leaks): each row must show what was measured
    sessionStep(runId, 'bouncer-session', [['search-path', true]]),
    sessionStep(runId, 'bouncer-transaction', [['search-path', false]]),
  ]);
  const table = teamTable(run);

  test('the session-state steps have no decision table of their own: they measure no tps', () => {
    expect(decisionTables(run, groupCells(run.steps)).map((t) => t.scenario)).toEqual(['team']);
  });

  test('a run of session-state steps only: no table, and the decision section says why, not "nothing measured"', () => {
    const only = load([
      sessionStep('synthetic-session-only', 'bouncer-transaction', [['search-path', true]]),
    ]);
    const model = buildModel(only, () => null);
    expect(model.decisions).toEqual([]);
    const md = renderMarkdown(model, () => null);
    expect(md).toContain(
      'No pgbench step: this run measured only probes (disruptions, the session-state matrix)',
    );
    expect(md).not.toContain('No step was measured yet.');
  });

  test('measured outcome and the step it came from; the unmeasured feature stays expected', () => {
    const session = rowOf(table, 'bouncer-session')?.sessionFeatures;
    expect(session?.map((f) => [f.feature, f.source, f.outcomes])).toEqual([
      ['search-path', 'measured', ['leaks']],
      ['advisory-lock', 'expected', ['works']],
    ]);
    expect(session?.[0]?.stepId).toBe('session-state/bouncer-session/c2/simple/persistent/r1');
    expect(rowOf(table, 'bouncer-transaction')?.sessionFeatures?.[0]?.outcomes).toEqual(['works']);
    expect(sessionCell(table, 'bouncer-session')).toMatch(
      /^SET search_path \(line 1\): leaks — PgBouncer 1\.25\.2, measured; session advisory lock \(lines 2, 3\): works — PgBouncer 1\.25\.2, expected/,
    );
  });

  test('the answer follows the measurement: the session pool is the one whose search_path broke', () => {
    const answer = decisionAnswer(table);
    expect(answer).toContain('Ran without errors, hangs or session breakage: direct; ');
    expect(answer).toContain(
      'bouncer-session: not suitable: SET search_path (line 1) leaks through a session pool ' +
        '(PgBouncer 1.25.2, measured in step session-state/bouncer-session/c2/simple/persistent/r1).',
    );
    // the transaction pool: search_path measured works, the advisory lock still expected to leak
    expect(answer).toContain(
      'bouncer-transaction: not suitable: session advisory lock (lines 2, 3) leaks through a transaction pool (PgBouncer 1.25.2; expected',
    );
  });
});

test('a target that pins (RDS Proxy): the advisory lock works because the proxy pins the session, and the cell says so', () => {
  const run = load([
    pgbenchStep('synthetic-features-pins', { name: 'pool100', clients: 12, tps: 700, startSec: 0 }),
  ]);
  const table = teamTable(run);
  expect(rowOf(table, 'pool100')?.sessionFeatures?.map((f) => [f.feature, f.outcomes, f.pins])).toEqual([
    ['search-path', ['works'], true],
    ['advisory-lock', ['works'], true],
  ]);
  expect(sessionCell(table, 'pool100')).toContain(
    'session advisory lock (lines 2, 3): works · pins — RDS Proxy (managed, no version), expected, not measured (--suite session)',
  );
  expect(decisionAnswer(table)).toMatch(/^Answer: Ran without errors, hangs or session breakage: pool100;/);
});

describe('what a target would need, from its product entry: prepared statements by release and setting', () => {
  const runId = 'synthetic-features-prepared';
  const run = load(
    ['direct', 'old', 'bouncer-transaction'].map((name, i) =>
      pgbenchStep(runId, { name, clients: 12, protocol: 'prepared', tps: 1000 + i, startSec: i * 20 }),
    ),
    {},
    { sql: 'SELECT 1;\n' },
  );
  const table = teamTable(run);

  test('-M prepared is a session feature of its own; the release or the setting that carries it is named', () => {
    expect(rowOf(table, 'old')?.sessionFeatures?.map((f) => [f.feature, f.outcomes])).toEqual([
      ['protocol-prepared', ['errors']],
    ]);
    const answer = decisionAnswer(table);
    expect(answer).toContain(
      'old: PgBouncer ≥ 1.21 for prepared statements (ran 1.18.0) (protocol-level prepared statements (-M prepared) fails; PgBouncer 1.18.0; expected, not measured: --suite session measures it).',
    );
    expect(answer).toContain(
      "bouncer-transaction: PgBouncer's prepared-statement support turned on (this target ran with it off)",
    );
    expect(answer).toMatch(/^Answer: [^.]*Ran without errors, hangs or session breakage: direct;/);
  });
});

describe('the answer at counts a local stand-in cannot serve directly: compared where every target that could run did', () => {
  test('direct refused at every count above max_connections: the pools compared at the counts they share', () => {
    const runId = 'synthetic-standin';
    const refused = {
      class: 'too-many-connections' as const,
      count: 1,
      sample: 'FATAL: sorry, too many clients already',
    };
    const steps = [60, 120].flatMap((clients, j) => [
      pgbenchStep(runId, { name: 'direct', clients, tps: null, errors: [refused], startSec: j * 100 }),
      pgbenchStep(runId, { name: 'bouncer-session', clients, tps: 800, p50: 2, startSec: j * 100 + 20 }),
      pgbenchStep(runId, { name: 'bouncer-transaction', clients, tps: 1000, p50: 1, startSec: j * 100 + 40 }),
    ]);
    const table = teamTable(load(steps, {}, { sql: 'SELECT 1;\n' }));
    expect(table.comparableFigures).toBe(false);
    expect(table.comparable).toEqual([
      { clients: 60, script: 'select-1.sql' },
      { clients: 120, script: 'select-1.sql' },
    ]);
    expect(table.localMaxConnections).toBe(40);
    expect(table.rows.map((r) => [r.label, r.compared])).toEqual([
      ['direct', false],
      ['bouncer-session', true],
      ['bouncer-transaction', true],
    ]);
    expect(decisionAnswer(table)).toBe(
      'Answer: 60, 120 clients exceed what the local stand-in serves directly (max_connections 40). ' +
        'Ran without errors, hangs or session breakage: bouncer-session, bouncer-transaction; ' +
        'cheapest per million transactions: unpriced; compared at 60 clients and 120 clients, the counts every ' +
        'target that could run it ran with a tps (bouncer-session, bouncer-transaction; not direct). ' +
        'direct: refused connections (refused at 60 clients (too-many-connections ×1); refused at 120 clients (too-many-connections ×1)).',
    );
    // the compared rows carry no †; the † note names the row outside and why
    expect(decisionCells(table, rowOf(table, 'bouncer-transaction')!)[1]).toBe('1,000.0');
    expect(decisionNotes(table)[0]).toBe(
      'Compared at 60 clients, 120 clients among bouncer-session, bouncer-transaction: the cells each of them ran with a tps. ' +
        '† direct: not compared (no tps in all of those cells); figures over its own shared cells with a tps.',
    );
  });

  test('a pool with no tps anywhere (hung) and direct refused above max_connections: the others at the count they share', () => {
    const runId = 'synthetic-standin-hung';
    const refused = {
      class: 'too-many-connections' as const,
      count: 1,
      sample: 'FATAL: sorry, too many clients already',
    };
    const timeout = { class: 'timeout' as const, count: 20, sample: 'stopped by the harness' };
    const steps = [20, 60].flatMap((clients, j) => [
      pgbenchStep(runId, {
        name: 'direct',
        clients,
        tps: clients > 40 ? null : 900,
        errors: clients > 40 ? [refused] : [],
        startSec: j * 100,
      }),
      pgbenchStep(runId, { name: 'bouncer-session', clients, tps: 800, startSec: j * 100 + 20 }),
      {
        ...pgbenchStep(runId, {
          name: 'bouncer-transaction',
          clients,
          tps: null,
          errors: [timeout],
          transactions: { processed: 50, expected: 0 },
          startSec: j * 100 + 40,
        }),
        status: 'hung' as const,
      },
    ]);
    const table = teamTable(load(steps));
    expect(table.comparable).toEqual([{ clients: 20, script: 'select-1.sql' }]);
    expect(table.rows.filter((r) => r.compared).map((r) => r.label)).toEqual(['direct', 'bouncer-session']);
    expect(decisionNotes(table)).toEqual([
      'Compared at 20 clients among direct, bouncer-session: the cells each of them ran with a tps. ' +
        '† bouncer-transaction: not compared (no tps in all of those cells); figures over its own shared cells with a tps.',
      'Errors only (some target had no tps there): 60 clients.',
    ]);
    expect(decisionCells(table, rowOf(table, 'bouncer-transaction')!)[1]).toBe('? †');
    expect(decisionAnswer(table)).toMatch(
      /^Answer: 60 clients exceed what the local stand-in serves directly \(max_connections 40\)\. Ran without errors, hangs or session breakage: bouncer-session; cheapest per million transactions: unpriced; compared at 20 clients, the counts every target that could run it ran with a tps \(direct, bouncer-session; not bouncer-transaction\)\. /,
    );
  });

  test.each([
    {
      name: 'every row shares a cell with a tps: all rows, those cells',
      tps: { a: ['x', 'y'], b: ['y'], c: ['x', 'y'] },
      want: { rows: ['a', 'b', 'c'], keys: ['y'] },
    },
    {
      name: 'one row has no tps anywhere: the others, at the cells they share',
      tps: { a: [], b: ['x', 'y'], c: ['y'] },
      want: { rows: ['b', 'c'], keys: ['y'] },
    },
    {
      name: 'no cell common to all who ran: the rows of the cell most of them have a tps in',
      tps: { a: ['x'], b: ['x', 'y'], c: ['y', 'z'], d: ['y'] },
      want: { rows: ['b', 'c', 'd'], keys: ['y'] },
    },
    {
      name: 'only one row has a tps: no comparison',
      tps: { a: [], b: ['x'] },
      want: { rows: [], keys: [] },
    },
  ])('comparisonOf: $name', ({ tps, want }) => {
    const map = tps as Record<string, string[]>;
    expect(comparisonOf(Object.keys(map), ['x', 'y', 'z'], (l, k) => map[l]?.includes(k) ?? false)).toEqual(
      want,
    );
  });
});

describe('the answer names the cheapest clean target at its observed rate and p99, and the load generator’s limit', () => {
  test('priced cloud rows: the cheapest of the clean ones; a saturated load generator asks for more runners', () => {
    const runId = 'synthetic-priced';
    const steps = ['direct', 'bouncer-session', 'bouncer-transaction'].map((name, i) => {
      const s = pgbenchStep(runId, {
        name,
        clients: 1500,
        tps: [1000, 2000, 4000][i] as number,
        startSec: i * 20,
        saturated: i === 2 ? 'runner CPU 97 %' : null,
      });
      return { ...s, result: { ...s.result!, latencyP99Ms: [5, 6, 7][i] as number } };
    });
    const run = load(
      steps,
      {
        mode: 'cloud',
        environment: {
          maxConnections: 5000,
          serverVersion: '17.9',
          pgbenchVersion: '17.9',
          poolerVersion: null,
          cpus: 2,
          targetPrices: [
            { target: 'direct', usdPerHour: 0, basis: 'the database itself' },
            { target: 'bouncer-session', usdPerHour: 0.1, basis: 'pooler host' },
            { target: 'bouncer-transaction', usdPerHour: 0.1, basis: 'pooler host' },
          ],
        },
      },
      { sql: 'SELECT 1;\n', runnerCount: 1 },
    );
    const answer = decisionAnswer(teamTable(run));
    // direct adds $0 per hour: the cheapest per million transactions of the three clean rows
    expect(answer).toContain('cheapest per million transactions: direct ($0 at 1,000.0 tps, p99 5.00 ms)');
    expect(answer).not.toMatch(/exceed what the local stand-in/);
    expect(answer).toContain(
      'The load generator saturated (runner CPU 97 %; bouncer-transaction): their tps measured the client; more than 1 runner of 2 cores for 1,500 clients.',
    );
  });
});
