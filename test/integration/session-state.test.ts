/**
 * The session-state matrix against a real PostgreSQL and the two real PgBouncers (Debian's 1.18 and
 * the current one, ≥ 1.21, that test/helpers/pgbouncer-versions.ts finds): the `session-state`
 * suite runs through the engine with the local probe runner, one stack per version (started
 * together), and every cell — feature × direct, transaction pool, session pool
 * — is asserted: the outcome measured, the expectation of its sources held, the step records
 * schema-checked on the way back, and the report drawing the matrix.
 *
 * The versions differ where their sources say they do, and each one's expected cells follow from
 * what it can do, not from its number: IntervalStyle is tracked per client from 1.20
 * (track_extra_parameters), and protocol-level prepared statements survive a transaction pool from
 * 1.21 with max_prepared_statements > 0 — which the stack leaves at PgBouncer's own default: 0 until
 * 1.24, 200 since (test/helpers/pgbouncer-defaults.ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { planOrResume } from '../../lib/engine/plan-or-resume';
import type { RunSuiteResult } from '../../lib/engine/run-suite';
import { findBinaries, findPgbouncer } from '../../lib/local/binaries';
import { FileSystemSink } from '../../lib/local/fs-sink';
import { planLocal } from '../../lib/local/run-local';
import { startLocalStack, type LocalStack } from '../../lib/local/stack';
import { pgdataTemplate } from '../helpers/pg-template';
import { writeReport } from '../../lib/report';
import { loadRun, type LoadedRun } from '../../lib/report/load';
import { sessionMatrix, type SessionMatrix } from '../../lib/report/session-matrix';
import { getSuite } from '../../lib/suite/catalog';
import { buildPlan } from '../../lib/suite/plan';
import { SESSION_FEATURES, type SessionFeature, type SessionOutcome } from '../../lib/suite/session-state';
import { PGBOUNCER_TRACK_EXTRA_SINCE } from '../../lib/products/pgbouncer/entry';
import { versionAtLeast } from '../../lib/products/version';
import { defaultMaxPreparedStatements } from '../helpers/pgbouncer-defaults';
import { pgbouncer118, pgbouncerModern } from '../helpers/pgbouncer-versions';
import { runOnLocalStack } from '../helpers/session-run';

type Cell = SessionOutcome | `errors ${string}`;
/** What each target showed, per feature: [direct, transaction pool, session pool]. */
type Row = readonly [Cell, Cell, Cell];

const COMMON: Readonly<Record<Exclude<SessionFeature, 'set-tracked' | 'protocol-prepared'>, Row>> = {
  'set-session': ['works', 'leaks', 'works'],
  'set-local': ['works', 'works', 'works'],
  'search-path': ['works', 'leaks', 'works'],
  'set-role': ['works', 'leaks', 'works'],
  'advisory-lock': ['works', 'leaks', 'works'],
  'advisory-xact-lock': ['works', 'works', 'works'],
  'temp-table': ['works', 'leaks', 'works'],
  'temp-table-on-commit-drop': ['works', 'works', 'works'],
  'listen-notify': ['works', 'leaks', 'works'],
  'sql-prepare': ['works', 'leaks', 'works'],
  'with-hold-cursor': ['works', 'leaks', 'works'],
  'long-statement': ['works', 'works', 'works'],
  'discard-all': ['works', 'leaks', 'works'],
  'temp-sequence-nextval': ['works', 'leaks', 'works'],
};

/** The cells PgBouncer `version` gives, from what it can do. */
function rowsFor(version: string): Readonly<Record<SessionFeature, Row>> {
  const mps = defaultMaxPreparedStatements(version);
  return {
    ...COMMON,
    // IntervalStyle is tracked per client since 1.20 (track_extra_parameters); before, it leaks
    'set-tracked': [
      'works',
      versionAtLeast(version, PGBOUNCER_TRACK_EXTRA_SINCE) ? 'works' : 'leaks',
      'works',
    ],
    // two clients' statements of one name collide on the shared server connection unless
    // max_prepared_statements (1.21) is on, here at this version's default
    'protocol-prepared': ['works', mps !== null && mps > 0 ? 'works' : 'errors 42P05', 'works'],
  };
}

const modern = pgbouncerModern(
  'test/integration/session-state.test.ts (the matrix on the current PgBouncer)',
);

/** The two PgBouncers (their binaries), by version: Debian's 1.18 and the one found, by what it reports. */
const VERSIONS: ReadonlyMap<string, () => string> = new Map([
  ['1.18', () => pgbouncer118('test/integration/session-state.test.ts')],
  [modern.version, () => modern.file],
]);
type Version = string;

interface Measured {
  readonly stack: LocalStack;
  readonly result: RunSuiteResult;
  readonly run: LoadedRun;
  readonly matrix: SessionMatrix;
  readonly runDir: string;
}

const measured = new Map<Version, Measured>();
let work: string;

/** One stack of `version`, the session-state suite through the engine, the run read back as the report reads it. */
async function measure(version: Version): Promise<Measured> {
  const bin = VERSIONS.get(version);
  if (bin === undefined) throw new Error(`PgBouncer ${version}: not one of this file's versions`);
  const pooler = findPgbouncer(process.platform, [bin()]);
  if (pooler === null) throw new Error(`PgBouncer ${version}: no version from its binary`);
  const stack = await startLocalStack({
    install: false,
    reapOrphans: false,
    bins: { ...findBinaries({ install: false }), pgbouncer: pooler.file, poolerVersion: pooler.version },
    // a copy of the tests' data directory template, not an initdb per stack (test/helpers/pg-template.ts)
    dataTemplate: pgdataTemplate(),
  });
  const runDir = path.join(work, `session-${version}`);
  const sink = new FileSystemSink(runDir);
  const suite = getSuite('session-state');
  const opts = { suite, maxConnections: stack.postgres.maxConnections, poolPercent: 25 };
  const { steps } = await planOrResume(sink, {
    stored: null,
    check: () => undefined,
    fresh: () =>
      buildPlan({
        runId: `session-${version}`,
        suite: suite.name,
        mode: 'local',
        createdAt: new Date().toISOString(),
        environment: stack.environment,
        targets: stack.descriptors,
        steps: planLocal(opts, stack.descriptors),
      }),
    write: true,
  });
  const result = await runOnLocalStack(stack, { runId: `session-${version}`, suite, steps, sink });
  const run = loadRun(runDir);
  const matrix = sessionMatrix(run);
  if (matrix === null) throw new Error(`no session-state steps in ${runDir}`);
  return { stack, result, run, matrix, runDir };
}

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-session-it-'));
  const versions = [...VERSIONS.keys()];
  const done = await Promise.all(versions.map((v) => measure(v)));
  versions.forEach((v, i) => measured.set(v, done[i] as Measured));
}, 240_000);

afterAll(async () => {
  await Promise.all([...measured.values()].map((m) => m.stack.stop()));
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

function get(version: Version): Measured {
  const m = measured.get(version);
  if (!m) throw new Error(`PgBouncer ${version} was not measured`);
  return m;
}

describe.each([...VERSIONS.keys()])('PgBouncer %s', (version) => {
  test('it is the PgBouncer asked for, and the run completed with every verdict held', () => {
    const m = get(version);
    expect(m.stack.pgbouncer.version.startsWith(version)).toBe(true);
    // the stack leaves max_prepared_statements at this version's default: what rowsFor() builds on
    expect(m.stack.pgbouncer.initialMaxPreparedStatements).toBe(
      defaultMaxPreparedStatements(m.stack.pgbouncer.version),
    );
    expect(m.result.manifest.status).toBe('completed');
    expect(m.result.allHeld).toBe(true);
    expect(m.run.problems).toEqual([]);
    expect(m.matrix.columns.map((c) => c.target)).toEqual([
      'direct',
      'pgbouncer-transaction',
      'pgbouncer-session',
    ]);
    expect(m.matrix.totals).toEqual({ held: 48, broke: 0, informational: 0 });
  });

  test.each([...SESSION_FEATURES])('%s: each target as measured, each as its sources expect', (feature) => {
    // GIVEN the matrix read back from the run directory
    const row = get(version).matrix.rows.find((r) => r.feature === feature);
    // THEN every cell shows the outcome this PgBouncer gives, and its expectation held
    const cells = (row?.cells ?? []).map((c) =>
      c === null ? null : c.state === 'errors' ? `errors ${c.sqlstate ?? '?'}` : c.state,
    );
    expect({ feature, cells }).toEqual({
      feature,
      cells: [...rowsFor(get(version).stack.pgbouncer.version)[feature]],
    });
    expect({ feature, held: row?.cells.map((c) => c?.held) }).toEqual({ feature, held: [true, true, true] });
  });

  test('the clients really shared one server connection in both pools; direct never shares', () => {
    const rows = get(version).matrix.rows.filter((r) => r.feature !== 'long-statement');
    for (const r of rows) {
      const [direct, tx, session] = r.cells;
      expect({ f: r.feature, direct: direct?.shared, tx: tx?.shared, session: session?.shared }).toEqual({
        f: r.feature,
        direct: false,
        tx: true,
        session: true,
      });
    }
  });

  test('each step keeps its transcript, and the report draws the matrix cell by cell', () => {
    const m = get(version);
    const tx = m.run.steps.find((s) => s.target.name === 'pgbouncer-transaction');
    const transcript = fs.readFileSync(path.join(m.runDir, tx?.files.stdout ?? 'missing'), 'utf8');
    expect(transcript).toMatch(/^order: interleaved; sharing: PgBouncer default_pool_size = 1/);
    expect(transcript).toContain('✓ set-session: leaks');
    const report = writeReport(m.runDir, { now: new Date('2026-11-26T12:00:00Z') });
    const page = fs.readFileSync(report.htmlPath, 'utf8');
    expect(page.match(/<td class="so-[a-z-]+" title="/g)?.length).toBe(48);
    expect(page).toContain(
      'data-feature="set-session" data-target="pgbouncer-transaction" data-outcome="leaks"',
    );
    const summary = fs.readFileSync(report.mdPath, 'utf8');
    expect(summary).toContain('| SET (session) | ✓ works | ✓ leaks | ✓ works |');
  });
});
