/**
 * PgDoorman for real (a binary given by $PROXYLAB_PGDOORMAN or PATH, test/helpers/pgdoorman.ts; none
 * given: these tests do not run, and npm test says so): the
 * smoke findings through it with the CLI, a pool resize through its admin console (the file
 * rewritten, RELOAD, SHOW POOLS), its stats and CPU (per process and per thread) in the metrics,
 * the E1 prepared cell with prepared statements carried, and a stop that leaves nothing behind.
 *
 * The three runs (the E1 cell, the smoke findings, the run without PgDoorman) and the stop test
 * each start their own stack, and the runs wait mostly on pgbench's fixed -T: they run side by side
 * (test.concurrent), beside the tests on the shared stack. Only the smoke run is a catalog suite as users run it; the E1 cell is
 * its prepared cells alone, and the run without PgDoorman is the test-only cheap run (its point is
 * the message and the poolers that run, not a finding).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { psqlQueryOne } from '../../lib/exec/psql';
import { runLocal, validateLocalInput } from '../../lib/local/run-local';
import { getSuite } from '../../lib/suite/catalog';
import { isAlive } from '../../lib/exec/process';
import {
  exitedAs,
  RUN_TO_INTERRUPT,
  spawnCli,
  startLocalStack,
  type LocalStack,
} from '../helpers/local-stack';
import { defined } from '../helpers/defined';
import { pgdataTemplate } from '../helpers/pg-template';
import { scratchDir } from '../helpers/scratch';
import { describeWithPgdoorman } from '../helpers/pgdoorman';
import { readRunDir } from '../../lib/results/run-reader';

describeWithPgdoorman('test/integration/local-pgdoorman.test.ts', (bin) => {
  const ENV = { PROXYLAB_PGDOORMAN: bin.file };
  let stack: LocalStack;

  beforeAll(async () => {
    process.env.PROXYLAB_PGDOORMAN = bin.file;
    stack = await startLocalStack({
      maxConnections: 40,
      poolPercent: 25,
      poolers: [{ product: 'pgdoorman', processes: 1, instance: 'pgdoorman' }],
    });
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
  });

  const doorman = () =>
    defined(
      stack.poolers.find((p) => p.product === 'pgdoorman'),
      'pgdoorman',
    );

  test('the stack runs PgDoorman with both pools of 25 % and its targets describe what it can do', async () => {
    // GIVEN / WHEN
    const pools = await psqlQueryOne(doorman().admin(), 'SHOW POOLS');
    // THEN
    expect(pools.map((r) => [r.database, r.pool_mode, r.pool_size]).sort()).toEqual([
      ['bench', 'transaction', '10'],
      ['bench_session', 'session', '10'],
    ]);
    expect(stack.target('pgdoorman-transaction').descriptor).toMatchObject({
      kind: 'pgdoorman-transaction',
      version: bin.version,
      settings: { maxPreparedStatements: 8192, processes: 1 },
      capabilities: { carriesPreparedStatements: 'yes', resizablePool: 'pgdoorman-reload' },
    });
    expect(() => stack.pgbouncer).toThrow(/runs no PgBouncer/);
  });

  test('a pool resize goes through the admin console (file rewritten, RELOAD, checked in SHOW POOLS) and back', async () => {
    // WHEN the engine asks for 50 % of max_connections 40
    await stack.pool.setPoolPercent({ kind: 'pgdoorman-transaction', name: 'pgdoorman-transaction' }, 50);
    // THEN both pools are 20, as PgDoorman itself reports
    const after = await psqlQueryOne(doorman().admin(), 'SHOW POOLS');
    expect(after.map((r) => r.pool_size)).toEqual(['20', '20']);
    expect(await stack.target('pgdoorman-transaction').poolSize()).toBe(20);
    // and restore puts the start size back
    await stack.pool.restore();
    const restored = await psqlQueryOne(doorman().admin(), 'SHOW POOLS');
    expect(restored.map((r) => r.pool_size)).toEqual(['10', '10']);
  });

  test('its stats and CPU (per process and per worker thread) reach the metrics while pgbench runs through it', async () => {
    // GIVEN a sampler polling every 200 ms
    const sampler = stack.createSampler(200);
    await sampler.start();
    // WHEN 30 clients run for 3 s through the transaction pool (30 > the pool of 10: some wait)
    const conn = stack.target('pgdoorman-transaction').connection();
    const dir = await stack.executor.workDir('pgd-metrics');
    const script = path.join(dir, 'select-aid.sql');
    const res = await stack.executor.run({
      argv: [
        'pgbench',
        '-h',
        conn.host,
        '-p',
        String(conn.port),
        '-U',
        conn.user,
        '-n',
        '-f',
        script,
        '-c',
        '30',
        '-j',
        '2',
        '-T',
        '3',
        '-M',
        'prepared',
        conn.dbname,
      ],
      env: {},
      timeoutMs: 60_000,
      logDir: dir,
      files: [{ path: script, content: '\\set aid random(1, 100000)\nSELECT :aid;\n' }],
    });
    const series = await sampler.stop();
    // THEN
    expect(res.exitCode).toBe(0);
    const of = (name: string) =>
      series.filter(
        (s) => s.source === 'pgdoorman' && s.name === name && s.dimensions.database !== 'bench_session',
      );
    const max = (name: string) => Math.max(...of(name).flatMap((s) => s.points.map((p) => p[1])));
    expect(max('cl_active') + max('cl_waiting')).toBeGreaterThan(0);
    // at every poll the transaction pool held at most its 10 server connections (active + idle)
    const atPoll = new Map<string, number>();
    for (const s of [...of('sv_active'), ...of('sv_idle')])
      for (const [at, v] of s.points) atPoll.set(String(at), (atPoll.get(String(at)) ?? 0) + v);
    expect(atPoll.size).toBeGreaterThan(0);
    expect(Math.max(...atPoll.values())).toBeLessThanOrEqual(10);
    expect(max('sv_active')).toBeGreaterThan(0);
    expect(max('total_xact_count')).toBeGreaterThan(0);
    expect(of('process_cpu_percent').some((s) => s.points.length > 0)).toBe(true);
    const threads = of('thread_cpu_percent');
    expect(threads.some((s) => /^worker-pg-doorm-\d+$/.test(s.dimensions.thread ?? ''))).toBe(true);
  }, 60_000);

  test.concurrent(
    'the E1 prepared cell holds through its transaction pool: prepared statements carried, 1.5 × max_connections',
    async () => {
      // GIVEN quick-e1 (its expectations), shortened to -T 1, its prepared cells only (direct, the control
      // refused at 1.5 ×, and PgDoorman's pool: the simple ones are smoke's below), PgDoorman the only
      // pooler, on a copy of the tests' data directory template (initdb is not the point)
      const quickE1 = defined(
        getSuite('quick').scenarios.find((s) => s.name === 'quick-e1'),
        'quick-e1',
      );
      const out = scratchDir('proxylab-pgd-e1-');
      const opts = {
        ...validateLocalInput({ suite: 'quick', out, poolers: 'pgdoorman', install: false }, out),
        suite: {
          name: 'quick',
          description: 'quick-e1 prepared only',
          scenarios: [{ ...quickE1, durationSec: 1, protocols: ['prepared' as const] }],
        },
        dataTemplate: pgdataTemplate(),
      };
      // WHEN
      const result = await runLocal(opts, { handleSignals: false });
      // THEN every prepared step through PgDoorman completed without an error and was expected to
      const prepared = result.records.filter(
        (r) => r.target.name === 'pgdoorman-transaction' && r.params.protocol === 'prepared',
      );
      expect(prepared.map((r) => r.params.clients).sort((a, b) => a - b)).toEqual([20, 60]);
      // (the run is the prepared cells: direct's and PgDoorman's, below and above max_connections)
      expect(result.records.map((r) => `${r.target.name}/${r.params.protocol}`).sort()).toEqual([
        'direct/prepared',
        'direct/prepared',
        'pgdoorman-transaction/prepared',
        'pgdoorman-transaction/prepared',
      ]);
      for (const r of prepared) {
        expect(r.status).toBe('completed');
        expect(r.verdict.held).toBe(true);
        expect(r.result?.failedTransactions ?? null).toBe(0);
        expect(r.result?.tps ?? 0).toBeGreaterThan(0);
      }
      expect(result.allHeld).toBe(true);
    },
    120_000,
  );

  test.concurrent(
    'proxylab local --poolers pgdoorman: the smoke findings through PgDoorman (smoke at -T 1), exit 0',
    async () => {
      // GIVEN smoke's scenarios and findings at -T 1 (test-smoke-short), on a copy of the tests' data
      // directory template (initdb and smoke's -T 3 are local-smoke's to test)
      const out = scratchDir('proxylab-pgd-smoke-');
      // WHEN
      const run = spawnCli(
        [
          ...['local', '--test-suite', 'test-smoke-short', '--poolers', 'pgdoorman', '--no-install'],
          ...['--out', out],
          ...['--test-pgdata-template', pgdataTemplate()],
        ],
        ENV,
      );
      // THEN
      expect(await exitedAs(run, 0)).toEqual({ code: 0 });
      expect(run.stdout()).toMatch(/PgDoorman \S+ on 127\.0\.0\.1:\d+ \(\d+ worker threads\)/);
      const runDir = path.join(out, defined(fs.readdirSync(out)[0], 'run dir'));
      const { steps: records } = readRunDir(runDir);
      const through = records.filter((r) => r.target.name === 'pgdoorman-transaction');
      expect(
        through
          .map((r) => `${r.scenario}/${r.params.protocol}/${r.params.connect}:${String(r.verdict.held)}`)
          .sort(),
      ).toEqual([
        'smoke-churn/simple/per-transaction:true',
        'smoke-max-connections/simple/persistent:true',
        'smoke-prepared/prepared/persistent:true',
        'smoke-prepared/simple/persistent:true',
      ]);
    },
    120_000,
  );

  test.concurrent(
    'without PgDoorman, local says how to get it and runs the other poolers',
    async () => {
      // GIVEN $PROXYLAB_PGDOORMAN naming nothing (it wins over PATH), and the
      // test-only cheap run (RUN_TO_INTERRUPT, short: direct and pooled steps, as smoke has)
      const out = scratchDir('proxylab-pgd-missing-');
      // WHEN
      const run = spawnCli(
        [...RUN_TO_INTERRUPT.args(out, undefined, { short: true }), '--poolers', 'pgbouncer,pgdoorman'],
        {
          PROXYLAB_PGDOORMAN: '/nonexistent/pg_doorman',
        },
      );
      // THEN the run goes on (exit 0) through PgBouncer, after saying what is missing and how to get it
      expect(await exitedAs(run, 0)).toEqual({ code: 0 });
      expect(run.stdout()).toContain(
        'PgDoorman not found ($PROXYLAB_PGDOORMAN=/nonexistent/pg_doorman is not a PgDoorman that answers --version): running without pgdoorman.',
      );
      expect(run.stdout()).toContain('sudo add-apt-repository ppa:vadv/pg-doorman');
      const runDir = path.join(out, defined(fs.readdirSync(out)[0], 'run dir'));
      const kinds = new Set(readRunDir(runDir).steps.map((r) => r.target.kind));
      expect([...kinds].sort()).toEqual(['direct', 'pgbouncer-transaction']);
    },
    120_000,
  );

  test.concurrent(
    'stop ends PgDoorman (SIGTERM) and removes its files',
    async () => {
      // GIVEN a second stack of its own
      const s = await startLocalStack({
        maxConnections: 20,
        poolers: [{ product: 'pgdoorman', processes: 1, instance: 'pgdoorman' }],
      });
      const pid = defined(s.poolers[0], 'pooler').pid;
      // WHEN
      await s.stop();
      // THEN
      expect(isAlive(pid)).toBe(false);
      expect(fs.existsSync(s.baseDir)).toBe(false);
    },
    60_000,
  );
});
