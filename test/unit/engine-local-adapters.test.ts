/**
 * Pure parts of the local adapters: version parsing, install commands, PgBouncer config, pool
 * sizing, flag validation, psql output parsing, metric merging.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UsageError } from '../../lib/core/errors';
import { parseUnaligned } from '../../lib/core/psql-text';
import { installCommand, parseToolVersion } from '../../lib/local/binaries';
import { mergeSeries, FileSystemSink } from '../../lib/local/fs-sink';
import { localPgbouncerIni } from '../../lib/local/pgbouncer';
import { dataTemplateProblem } from '../../lib/local/postgres';
import { totalPoolSize } from '../../lib/poolers/pgbouncer/config';
import {
  defaultRunId,
  localCapacities,
  planLocal,
  resumeCommand,
  validateLocalInput,
} from '../../lib/local/run-local';
import { getSuite, SUITE_NAMES } from '../../lib/suite/catalog';
import { getTestSuite, TEST_SUITE_NAMES } from '../../lib/suite/test-suites';
import type { MetricSeries, MetricsFile } from '../../lib/suite/types';
import { scratchDir } from '../helpers/scratch';

describe('parseToolVersion', () => {
  test.each([
    ['postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)', '15.18'],
    ['pgbench (PostgreSQL) 17.2', '17.2'],
    ['postgres (PostgreSQL) 14.15 (Homebrew)', '14.15'],
    ['PgBouncer 1.18.0\nlibevent 2.1.12-stable', '1.18.0'],
    ['pgbouncer version 1.23.1', null],
    ['something else', null],
  ])('%j → %s', (text, version) => {
    expect(parseToolVersion(text)).toBe(version);
  });
});

describe('installCommand', () => {
  test.each([
    [
      'apt-get',
      { postgres: true, pgbouncer: true },
      'apt-get install -y --no-install-recommends postgresql postgresql-contrib pgbouncer',
    ],
    ['apt-get', { postgres: false, pgbouncer: true }, 'apt-get install -y --no-install-recommends pgbouncer'],
    [
      'dnf',
      { postgres: true, pgbouncer: false },
      'dnf install -y postgresql-server postgresql-contrib postgresql',
    ],
    ['brew', { postgres: true, pgbouncer: true }, 'brew install postgresql@16 pgbouncer'],
  ] as const)('%s %j', (pm, missing, cmd) => {
    expect(installCommand(pm, missing).join(' ')).toBe(cmd);
  });
});

describe('local pool size (totalPoolSize)', () => {
  test.each([
    [25, 40, 10],
    [50, 40, 20],
    [100, 40, 40],
    [1, 40, 1], // rounds to 0, at least one
    [33, 100, 33],
  ])('%i %% of %i → %i', (percent, max, size) => {
    expect(totalPoolSize(percent, max)).toBe(size);
  });
});

describe('localPgbouncerIni', () => {
  test('a transaction and a session database on the same server database, trust on 127.0.0.1, admin console', () => {
    const ini = localPgbouncerIni({
      version: '1.18.0',
      processIndex: 0,
      socketDirs: ['/x/s0'],
      serverPort: 25000,
      listenPort: 26000,
      poolSize: 10,
      authFile: '/x/userlist.txt',
      logFile: '/x/p.log',
      pidFile: '/x/p.pid',
      maxClientConnections: 2000,
    });
    expect(ini).toMatch(/^bench = host=127\.0\.0\.1 port=25000 dbname=bench pool_mode=transaction$/m);
    expect(ini).toMatch(/^bench_session = host=127\.0\.0\.1 port=25000 dbname=bench pool_mode=session$/m);
    expect(ini).toMatch(/^listen_addr = 127\.0\.0\.1$/m);
    expect(ini).toMatch(/^listen_port = 26000$/m);
    expect(ini).toMatch(/^default_pool_size = 10$/m);
    expect(ini).toMatch(/^admin_users = postgres$/m);
    expect(ini).toMatch(/^unix_socket_dir = \/x\/s0$/m);
    // so_reuseport even for one process: the pooler-restart disruption starts a second one on the
    // port; no peering with one process
    expect(ini).toMatch(/^so_reuseport = 1$/m);
    expect(ini).not.toMatch(/peer_id|\[peers\]/);
    // no failure, timeout or pool setting of the kit's own: PgBouncer's defaults (server_login_retry 15 s)
    expect(ini).not.toMatch(
      /^(server_login_retry|reserve_pool_size|server_connect_timeout|query_wait_timeout) =/m,
    );
  });

  test("the lab's settings, typed, and only those: a short server_login_retry is the lab's, visibly", () => {
    const ini = localPgbouncerIni({
      version: '1.24.1',
      processIndex: 0,
      socketDirs: ['/x/s0'],
      serverPort: 25000,
      listenPort: 26000,
      poolSize: 10,
      authFile: '/x/userlist.txt',
      logFile: '/x/p.log',
      pidFile: '/x/p.pid',
      maxClientConnections: 2000,
      settings: { server_login_retry: 2, server_round_robin: true },
    });
    expect(ini).toMatch(/^server_login_retry = 2$/m);
    expect(ini).toMatch(/^server_round_robin = 1$/m);
    expect(() =>
      localPgbouncerIni({
        version: '1.24.1',
        processIndex: 0,
        socketDirs: ['/x/s0'],
        serverPort: 25000,
        listenPort: 26000,
        poolSize: 10,
        authFile: '/x/userlist.txt',
        logFile: '/x/p.log',
        pidFile: '/x/p.pid',
        maxClientConnections: 2000,
        settings: { default_pool_size: 99 },
      }),
    ).toThrow(/setting default_pool_size: not one a lab may set/);
  });
});

describe('validateLocalInput', () => {
  const cwd = os.tmpdir();
  test('defaults: quick suite, runs/ under the working directory, 40 connections, 25 %', () => {
    const o = validateLocalInput({}, '/somewhere', new Date('2026-11-21T10:45:01Z'));
    expect(o).toMatchObject({
      outDir: '/somewhere/runs',
      runId: expect.stringMatching(/^local-20261121-104501-[0-9a-f]{4}$/) as unknown,
      runIdGiven: false,
      maxConnections: 40,
      poolPercent: 25,
      keep: false,
      install: true,
    });
    expect(o.suite.name).toBe('quick');
  });

  test.each([
    [{ suite: 'nope' }, /--suite must be one of quick, smoke/],
    [{ maxConnections: '5' }, /--max-connections must be an integer 10–5000, got 5/],
    [{ maxConnections: 'forty' }, /--max-connections must be an integer/],
    [{ poolPercent: '0' }, /--pool-percent must be an integer 1–100, got 0/],
    [{ poolPercent: '101' }, /--pool-percent must be an integer 1–100/],
    [{ runId: '../escape' }, /--run-id must match/],
    [{ runId: '' }, /--run-id must match/],
  ])('%j is a usage error', (input, message) => {
    expect(() => validateLocalInput(input, cwd)).toThrow(UsageError);
    expect(() => validateLocalInput(input, cwd)).toThrow(message);
  });

  test('reports every problem at once', () => {
    try {
      validateLocalInput({ suite: 'x', poolPercent: '0', maxConnections: '1' }, cwd);
      throw new Error('expected a UsageError');
    } catch (e) {
      expect((e as Error).message.split('\n')).toHaveLength(3);
    }
  });

  test('--out that is a file is refused', () => {
    const file = path.join(scratchDir('plx-'), 'f');
    fs.writeFileSync(file, '');
    expect(() => validateLocalInput({ out: file }, cwd)).toThrow(/is not a directory/);
  });

  test('--pooler-processes: 1 by default, 1–32, named in the message when out of range', () => {
    expect(validateLocalInput({}, cwd).poolerProcesses).toBe(1);
    expect(validateLocalInput({ poolerProcesses: '4' }, cwd).poolerProcesses).toBe(4);
    expect(() => validateLocalInput({ poolerProcesses: '0' }, cwd)).toThrow(
      /--pooler-processes must be an integer 1–32, got 0/,
    );
    expect(() => validateLocalInput({ poolerProcesses: '33' }, cwd)).toThrow(/--pooler-processes/);
  });

  describe('the hidden test-only flags --test-suite and --test-pgdata-template (CONTRIBUTING.md "Test time")', () => {
    test('test-steps: four steps, direct then three through the PgBouncer transaction pool, each a slow transaction', () => {
      // WHEN
      const o = validateLocalInput({ testSuite: 'test-steps', runId: 'r', out: cwd }, cwd);
      // THEN step 3 and 4 go through PgBouncer, every step expects success, and no step is unthrottled SELECT 1
      const steps = planLocal(o);
      expect(steps.map((s) => s.stepId)).toEqual([
        'test-steps/direct/c2/simple/persistent/r1',
        'test-steps-pooled/pgbouncer-transaction/c2/simple/persistent/r1',
        'test-steps-pooled/pgbouncer-transaction/c3/simple/persistent/r1',
        'test-steps-pooled/pgbouncer-transaction/c4/simple/persistent/r1',
      ]);
      for (const s of steps) {
        expect(s.expectation.outcome).toBe('succeeds');
        expect(s.params.durationSec).toBe(3);
        expect(s.script.parts).toEqual([
          { file: { name: 'sleep-50ms.sql', sql: 'SELECT pg_sleep(0.05);\n' } },
        ]);
      }
      // AND the resume command names it the way it was chosen
      expect(resumeCommand(o)).toMatch(/^proxylab local --test-suite test-steps --out /);
      expect(resumeCommand(validateLocalInput({ suite: 'smoke', runId: 'r', out: cwd }, cwd))).toMatch(
        /^proxylab local --suite smoke --out /,
      );
    });

    test('test-steps-short: test-steps’ four steps at pgbench -T 1, the rest of each scenario the same', () => {
      // WHEN
      const o = validateLocalInput({ testSuite: 'test-steps-short', runId: 'r', out: cwd }, cwd);
      const full = planLocal(validateLocalInput({ testSuite: 'test-steps', runId: 'r', out: cwd }, cwd));
      // THEN the same step ids, scripts, targets and expectations; only the duration differs
      const steps = planLocal(o);
      expect(steps.map((s) => s.stepId)).toEqual(full.map((s) => s.stepId));
      expect(steps.map((s) => s.params.durationSec)).toEqual([1, 1, 1, 1]);
      const shortSuite = getTestSuite('test-steps-short');
      const fullSuite = getTestSuite('test-steps');
      expect(shortSuite?.scenarios.map((sc) => ({ ...sc, durationSec: 3 }))).toEqual(fullSuite?.scenarios);
      expect(steps.map((s) => s.expectation)).toEqual(full.map((s) => s.expectation));
      expect(resumeCommand(o)).toMatch(/^proxylab local --test-suite test-steps-short --out /);
    });

    test('test-smoke-short: smoke’s steps, expectations and comparisons at pgbench -T 1, nothing else changed', () => {
      // WHEN
      const o = validateLocalInput({ testSuite: 'test-smoke-short', runId: 'r', out: cwd }, cwd);
      const smoke = planLocal(validateLocalInput({ suite: 'smoke', runId: 'r', out: cwd }, cwd));
      // THEN the same step ids, scripts, targets and expectations; only the duration differs
      const steps = planLocal(o);
      expect(steps.map((s) => s.stepId)).toEqual(smoke.map((s) => s.stepId));
      expect(steps.map((s) => s.expectation)).toEqual(smoke.map((s) => s.expectation));
      expect(new Set(smoke.map((s) => s.params.durationSec))).toEqual(new Set([3]));
      expect(new Set(steps.map((s) => s.params.durationSec))).toEqual(new Set([1]));
      // each scenario is the catalog's own, its comparisons and findings included, but -T
      const short = getTestSuite('test-smoke-short')?.scenarios ?? [];
      expect(short.map((sc) => ({ ...sc, durationSec: 3 }))).toEqual(getSuite('smoke').scenarios);
      expect(resumeCommand(o)).toMatch(/^proxylab local --test-suite test-smoke-short --out /);
    });

    test('test-smoke-churn is test-smoke-short’s churn scenario alone, comparison included', () => {
      const churn = getTestSuite('test-smoke-short')?.scenarios.find((sc) => sc.name === 'smoke-churn');
      expect(churn?.comparisons?.length).toBeGreaterThan(0);
      expect(churn?.durationSec).toBe(1);
      expect(getTestSuite('test-smoke-churn')?.scenarios).toEqual([churn]);
      expect(getTestSuite('test-smoke-churn')?.scenarios[0]).toBe(churn);
    });

    test('is no suite a user sees: not in the catalog, and --suite refuses it naming only the catalog', () => {
      expect(TEST_SUITE_NAMES).toEqual([
        'test-steps',
        'test-steps-short',
        'test-smoke-short',
        'test-smoke-churn',
      ]);
      expect(SUITE_NAMES.filter((n) => TEST_SUITE_NAMES.includes(n))).toEqual([]);
      expect(() => validateLocalInput({ suite: 'test-steps' }, cwd)).toThrow(
        `--suite must be one of ${SUITE_NAMES.join(', ')}; got "test-steps"`,
      );
    });

    test('--test-pgdata-template: a data directory (PG_VERSION) or refused naming it', () => {
      const dir = scratchDir('plx-tpl-');
      expect(() => validateLocalInput({ testPgdataTemplate: dir }, cwd)).toThrow(
        `--test-pgdata-template ${dir} is not a PostgreSQL data directory (no PG_VERSION)`,
      );
      fs.writeFileSync(path.join(dir, 'PG_VERSION'), '15\n');
      expect(validateLocalInput({ testPgdataTemplate: dir }, cwd).dataTemplate).toBe(dir);
      expect(validateLocalInput({}, cwd).dataTemplate).toBeNull();
    });

    test.each([
      ['15\n', '15.18', null],
      ['17\n', '17.2', null],
      ['14\n', '15.18', 'is a PostgreSQL 14 data directory, the server is 15.18'],
      [null, '15.18', 'is not a PostgreSQL data directory (no readable PG_VERSION'],
    ])('a template with PG_VERSION %j for server %s: %s', (version, server, problem) => {
      const dir = scratchDir('plx-tpl-');
      if (version !== null) fs.writeFileSync(path.join(dir, 'PG_VERSION'), version);
      const got = dataTemplateProblem(dir, server);
      if (problem === null) expect(got).toBeNull();
      else expect(got).toContain(`${dir} ${problem}`);
    });

    test.each([
      [
        { testSuite: 'smoke' },
        '--test-suite must be one of test-steps, test-steps-short, test-smoke-short, test-smoke-churn; got "smoke"',
      ],
      [{ testSuite: 'test-steps', suite: 'smoke' }, '--test-suite and --suite: give one of them, not both'],
    ])('%j is refused: %s', (input, message) => {
      expect(() => validateLocalInput(input, cwd)).toThrow(UsageError);
      expect(() => validateLocalInput(input, cwd)).toThrow(message);
    });
  });
});

describe('planning against local capacities', () => {
  test('pool size follows the pool percent; the smoke plan has eight steps as the README capture shows (readme-capture.test.ts)', () => {
    expect(
      localCapacities({ maxConnections: 40, poolPercent: 25 }).map((c) => [c.ref.kind, c.poolSize]),
    ).toEqual([
      ['direct', null],
      ['pgbouncer-transaction', 10],
      ['pgbouncer-session', 10],
    ]);
    // 10 over 3 processes: 3 each (rounded down), 9 server connections per pool in all
    expect(
      localCapacities({ maxConnections: 40, poolPercent: 25, poolerProcesses: 3 }).map((c) => c.poolSize),
    ).toEqual([null, 9, 9]);
    const o = validateLocalInput({ suite: 'smoke' }, os.tmpdir());
    expect(planLocal(o).map((s) => s.stepId)).toEqual([
      'smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-off/r1',
      'smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-on/r1',
      'smoke-prepared/pgbouncer-transaction/c5/simple/persistent/ps-off/r1',
      'smoke-prepared/pgbouncer-transaction/c5/simple/persistent/ps-on/r1',
      'smoke-max-connections/direct/c60/simple/persistent/r1',
      'smoke-max-connections/pgbouncer-transaction/c60/simple/persistent/r1',
      'smoke-churn/direct/c5/simple/per-transaction/r1',
      'smoke-churn/pgbouncer-transaction/c5/simple/per-transaction/r1',
    ]);
  });

  test('defaultRunId is sortable UTC with a random suffix: two runs in the same second differ', () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    expect(defaultRunId(at, '3f9a')).toBe('local-20260102-030405-3f9a');
    const ids = new Set(Array.from({ length: 50 }, () => defaultRunId(at)));
    expect(ids.size).toBeGreaterThan(45);
    for (const id of ids) {
      expect(id).toMatch(/^local-20260102-030405-[0-9a-f]{4}$/);
      expect(validateLocalInput({ runId: id }, '/tmp').runId).toBe(id);
    }
  });
});

describe('parseUnaligned', () => {
  test('header and rows split on the unit separator; empty cells kept', () => {
    const text =
      ['database\u001fcl_active\u001fcl_waiting', 'bench\u001f10\u001f28', 'pgbouncer\u001f1\u001f'].join(
        '\n',
      ) + '\n';
    expect(parseUnaligned(text)).toEqual([
      { database: 'bench', cl_active: '10', cl_waiting: '28' },
      { database: 'pgbouncer', cl_active: '1', cl_waiting: '' },
    ]);
  });
});

describe('metrics merging (resume and periodic flushes)', () => {
  const s = (points: Array<[string, number]>, name = 'cl_active'): MetricSeries => ({
    source: 'pgbouncer',
    name,
    stat: 'value',
    unit: 'count',
    dimensions: { database: 'bench' },
    points,
    status: points.length ? 'ok' : 'no-data',
  });

  test('same series are united by time, later sample wins; other series kept', () => {
    const merged = mergeSeries(
      [
        s([
          ['2026-01-01T00:00:01Z', 1],
          ['2026-01-01T00:00:02Z', 2],
        ]),
        s([['2026-01-01T00:00:01Z', 9]], 'cl_waiting'),
      ],
      [
        s([
          ['2026-01-01T00:00:02Z', 3],
          ['2026-01-01T00:00:03Z', 4],
        ]),
      ],
    );
    expect(merged.find((x) => x.name === 'cl_active')?.points).toEqual([
      ['2026-01-01T00:00:01Z', 1],
      ['2026-01-01T00:00:02Z', 3],
      ['2026-01-01T00:00:03Z', 4],
    ]);
    expect(merged.find((x) => x.name === 'cl_waiting')?.points).toHaveLength(1);
  });

  test('the filesystem sink keeps the first part of a resumed run when it writes the second', async () => {
    const dir = scratchDir('plx-sink-');
    const sink = new FileSystemSink(dir);
    await sink.writeMetrics('local', 'r', { start: '2026-01-01T00:00:00Z', end: '2026-01-01T00:00:02Z' }, [
      s([['2026-01-01T00:00:01Z', 1]]),
    ]);
    await sink.writeMetrics('local', 'r', { start: '2026-01-01T01:00:00Z', end: '2026-01-01T01:00:02Z' }, [
      s([['2026-01-01T01:00:01Z', 5]]),
    ]);
    const file = JSON.parse(fs.readFileSync(path.join(dir, 'metrics', 'local.json'), 'utf8')) as MetricsFile;
    expect(file.window).toEqual({ start: '2026-01-01T00:00:00Z', end: '2026-01-01T01:00:02Z' });
    expect(file.series[0]?.points).toEqual([
      ['2026-01-01T00:00:01Z', 1],
      ['2026-01-01T01:00:01Z', 5],
    ]);
    expect(fs.readdirSync(path.join(dir, 'metrics')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
