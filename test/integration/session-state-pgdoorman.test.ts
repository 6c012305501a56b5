/**
 * The session-state matrix through PgDoorman 3.10.7 for real, in a local stack that runs a PgBouncer
 * beside it (as `--poolers pgbouncer,pgdoorman` does): the probe must narrow THE STEP'S OWN pooler to
 * one server connection, not the first PgBouncer, or the two clients never share one and every
 * cell reads "works". What PgDoorman's transaction pool shows follows its cleanup_server_connections
 * (on by default): SET-like state is lost, not leaked; what it does not clean still leaks.
 *
 * Its session pool is left out: PgDoorman 3.10.7 closes a LISTENing client's connection when a
 * notification reaches its idle server connection, which the probe reads as a lost connection
 * (docs/session-state.md).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { planOrResume } from '../../lib/engine/plan-or-resume';
import type { RunSuiteResult } from '../../lib/engine/run-suite';
import { FileSystemSink } from '../../lib/local/fs-sink';
import { planLocal } from '../../lib/local/run-local';
import { startLocalStack, type LocalStack } from '../../lib/local/stack';
import { loadRun } from '../../lib/report/load';
import { sessionMatrix, type SessionMatrix } from '../../lib/report/session-matrix';
import { getSuite } from '../../lib/suite/catalog';
import { buildPlan } from '../../lib/suite/plan';
import { SESSION_FEATURES, type SessionFeature, type SessionOutcome } from '../../lib/suite/session-state';
import { describeWithPgdoorman } from '../helpers/pgdoorman';
import { runOnLocalStack } from '../helpers/session-run';

/** PgDoorman's transaction pool, feature by feature (RESET ROLE / RESET ALL / CLOSE ALL on release). */
const TX: Readonly<Record<SessionFeature, SessionOutcome>> = {
  'set-session': 'lost',
  'set-tracked': 'lost',
  'set-local': 'works',
  'search-path': 'lost',
  'set-role': 'lost',
  'advisory-lock': 'leaks',
  'advisory-xact-lock': 'works',
  'temp-table': 'leaks',
  'temp-table-on-commit-drop': 'works',
  'listen-notify': 'leaks',
  'protocol-prepared': 'works',
  'sql-prepare': 'leaks',
  'with-hold-cursor': 'lost',
  'long-statement': 'works',
  'discard-all': 'leaks',
  'temp-sequence-nextval': 'leaks',
};

describeWithPgdoorman('test/integration/session-state-pgdoorman.test.ts', (bin) => {
  let stack: LocalStack;
  let work: string;
  let result: RunSuiteResult;
  let matrix: SessionMatrix;
  let runDir: string;
  let bouncerPoolBefore: number;

  beforeAll(async () => {
    process.env.PROXYLAB_PGDOORMAN = bin.file;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-session-doorman-'));
    // GIVEN a PgBouncer first and PgDoorman second, as `--poolers pgbouncer,pgdoorman` starts them
    const poolers = [
      { product: 'pgbouncer', processes: 1, instance: 'pgbouncer' },
      { product: 'pgdoorman', processes: 1, instance: 'pgdoorman' },
    ] as const;
    stack = await startLocalStack({ install: false, reapOrphans: false, poolers });
    bouncerPoolBefore = stack.pgbouncer.poolSize();
    runDir = path.join(work, 'session-doorman');
    const sink = new FileSystemSink(runDir);
    const suite = getSuite('session-state');
    const opts = { suite, maxConnections: stack.postgres.maxConnections, poolPercent: 25, poolers };
    // WHEN the session-state scenario runs on PgDoorman's transaction pool through the engine
    const { steps } = await planOrResume(sink, {
      stored: null,
      check: () => undefined,
      fresh: () =>
        buildPlan({
          runId: 'session-doorman',
          suite: suite.name,
          mode: 'local',
          createdAt: new Date().toISOString(),
          environment: stack.environment,
          targets: stack.descriptors,
          steps: planLocal(opts, stack.descriptors).filter((s) => s.target.name === 'pgdoorman-transaction'),
        }),
      write: true,
    });
    result = await runOnLocalStack(stack, { runId: 'session-doorman', suite, steps, sink });
    const m = sessionMatrix(loadRun(runDir));
    if (m === null) throw new Error(`no session-state steps in ${runDir}`);
    matrix = m;
  }, 180_000);

  afterAll(async () => {
    await stack?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('one step on PgDoorman, completed, every expectation held', () => {
    expect(matrix.columns.map((c) => c.target)).toEqual(['pgdoorman-transaction']);
    expect(result.manifest.status).toBe('completed');
    expect(result.allHeld).toBe(true);
    expect(matrix.totals).toEqual({ held: 16, broke: 0, informational: 0 });
  });

  test.each([...SESSION_FEATURES])('%s: as measured, as its sources expect', (feature) => {
    const cell = matrix.rows.find((r) => r.feature === feature)?.cells[0];
    expect({ feature, state: cell?.state, held: cell?.held }).toEqual({
      feature,
      state: TX[feature],
      held: true,
    });
  });

  test("the clients shared PgDoorman's one server connection; the PgBouncer beside it was left alone", () => {
    // GIVEN the transcript of the step
    const step = loadRun(runDir).steps.find((s) => s.target.name === 'pgdoorman-transaction');
    const transcript = fs.readFileSync(path.join(runDir, step?.files.stdout ?? 'missing'), 'utf8');
    // THEN the narrowing was PgDoorman's, the clients met on one backend, and PgBouncer's pool is as it was
    expect(transcript).toMatch(/^order: interleaved; sharing: PgDoorman pool_size = 1 for the step; /);
    const shared = matrix.rows.filter((r) => r.feature !== 'long-statement').map((r) => r.cells[0]?.shared);
    expect(new Set(shared)).toEqual(new Set([true]));
    expect(stack.pgbouncer.poolSize()).toBe(bouncerPoolBefore);
  });
});
