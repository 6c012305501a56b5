/**
 * The local adapters against a real throwaway PostgreSQL + PgBouncer (test/helpers/local-stack):
 * what the engine relies on — a non-superuser bench role refused at max_connections, pool size
 * from the pool percent and resizable at run time, a reset that really drops server state, the
 * pgbench executor's timeout and logs, the sampler, and a stop that leaves nothing behind.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { InfrastructureError } from '../../lib/core/errors';
import { findBinaries } from '../../lib/local/binaries';
import { psqlQuery, psqlQueryOne, PsqlError, PsqlSession } from '../../lib/exec/psql';
import { SESSION_DB, startPgbouncer, TRANSACTION_DB, type Pgbouncer } from '../../lib/local/pgbouncer';
import { isAlive } from '../../lib/exec/process';
import { findFreePort, probePort } from '../../lib/local/ports-free';
import { pgCtlRestart, pidsMentioning, startLocalStack, type LocalStack } from '../helpers/local-stack';
import { defined } from '../helpers/defined';
import { scratchDir } from '../helpers/scratch';
import { lookUp } from '../helpers/looked-up';
import { pgbouncerModern } from '../helpers/pgbouncer-versions';

/** The current PgBouncer, looked up as the file loads: its version names its test. */
const modern = lookUp(() => pgbouncerModern('local-stack.test.ts (taken port)'));

let stack: LocalStack;

beforeAll(async () => {
  // a fresh initdb: this file tests the stack itself (the other stacks of the tests copy a template)
  stack = await startLocalStack({ maxConnections: 30, poolPercent: 20, initdb: true });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

function viaPool(dbname: string) {
  return { ...stack.postgres.benchTarget(), port: stack.pgbouncer.port, dbname };
}

describe('throwaway PostgreSQL', () => {
  test('runs with the requested max_connections and a bench role that is not a superuser', async () => {
    const [settingsRows, roleRows] = await psqlQuery(stack.postgres.superuserTarget(), [
      "SELECT current_setting('max_connections') AS max, current_setting('superuser_reserved_connections') AS reserved, current_setting('listen_addresses') AS listen",
      "SELECT rolsuper FROM pg_roles WHERE rolname = 'bench'",
    ]);
    expect(settingsRows).toEqual([{ max: '30', reserved: '3', listen: '127.0.0.1' }]);
    expect(roleRows).toEqual([{ rolsuper: 'f' }]);
    expect(stack.environment).toMatchObject({ maxConnections: 30, poolerVersion: stack.bins.poolerVersion });
  });

  test('runs as an unprivileged OS user when we are root', () => {
    const uid = typeof process.getuid === 'function' ? process.getuid() : null;
    const owner = fs.statSync(stack.postgres.dataDir).uid;
    if (uid === 0) expect(owner).not.toBe(0);
    else expect(owner).toBe(uid);
  });
});

describe('PgBouncer pools', () => {
  test('pool size is the pool percent of max_connections, for both pools', async () => {
    const dbs = await psqlQueryOne(stack.pgbouncer.admin(), 'SHOW DATABASES');
    for (const [name, mode] of [
      [TRANSACTION_DB, 'transaction'],
      [SESSION_DB, 'session'],
    ]) {
      expect(dbs.find((d) => d.name === name)).toMatchObject({ pool_size: '6', pool_mode: mode });
    }
    expect(await stack.target('pgbouncer-transaction').poolSize()).toBe(6);
    expect(await stack.target('direct').poolSize()).toBeNull();
  });

  test('setPoolPercent resizes both pools at run time and restore puts them back', async () => {
    await stack.pool.setPoolPercent(stack.target('pgbouncer-transaction').ref, 50);
    const after = await psqlQueryOne(stack.pgbouncer.admin(), 'SHOW DATABASES');
    expect(
      after.filter((d) => d.name === TRANSACTION_DB || d.name === SESSION_DB).map((d) => d.pool_size),
    ).toEqual(['15', '15']);
    expect(await stack.target('pgbouncer-session').poolSize()).toBe(15);
    await stack.pool.restore();
    const restored = await psqlQueryOne(stack.pgbouncer.admin(), 'SHOW DATABASES');
    expect(restored.find((d) => d.name === TRANSACTION_DB)?.pool_size).toBe('6');
  });

  test('the transaction and session pools share one pool of server connections (max_user_connections)', async () => {
    // GIVEN the pools reset and 5 clients busy on EACH pool of 6 (10 clients in all)
    await stack.pool.reset(stack.target('pgbouncer-transaction').ref);
    const busy = [TRANSACTION_DB, SESSION_DB].flatMap((db) =>
      Array.from({ length: 5 }, () => psqlQuery(viaPool(db), ['SELECT pg_sleep(1.5)'])),
    );
    // WHEN the server is asked, while they run, how many bench connections it has
    await new Promise((r) => setTimeout(r, 700));
    const [open] = await psqlQueryOne(
      stack.postgres.superuserTarget(),
      "SELECT count(*) AS n FROM pg_stat_activity WHERE usename = 'bench' AND backend_type = 'client backend'",
    );
    await Promise.all(busy);
    // THEN the two aliases together opened at most the pool (6), not 6 each: the pooler's share of
    // max_connections means the same whichever pool modes a lab deploys
    expect(Number(open?.n)).toBeGreaterThan(0);
    expect(Number(open?.n)).toBeLessThanOrEqual(6);
  }, 30_000);

  test('reset drops server connections, and with them state left by the previous step', async () => {
    // GIVEN a prepared statement left on the transaction pool's only server connection
    await stack.pool.reset(stack.target('pgbouncer-transaction').ref);
    await psqlQuery(viaPool(TRANSACTION_DB), ['PREPARE leftover AS SELECT 41 + 1 AS answer']);
    const leaked = await psqlQueryOne(viaPool(TRANSACTION_DB), 'EXECUTE leftover');
    expect(leaked).toEqual([{ answer: '42' }]); // the state leaked into the next client
    // WHEN the pool is reset
    await stack.pool.reset(stack.target('pgbouncer-transaction').ref);
    // THEN the next client gets a fresh server connection
    await expect(psqlQuery(viaPool(TRANSACTION_DB), ['EXECUTE leftover'])).rejects.toThrow(PsqlError);
    await expect(psqlQuery(viaPool(TRANSACTION_DB), ['EXECUTE leftover'])).rejects.toThrow(
      /prepared statement "leftover" does not exist/,
    );
  });
});

describe('pgbench executor', () => {
  const conn = () => stack.target('direct').connection();
  const base = () => ['pgbench', '-h', conn().host, '-p', String(conn().port), '-U', conn().user];

  beforeAll(async () => {
    const dir = await stack.executor.workDir('init');
    const out = await stack.executor.run({
      argv: ['pgbench', '-i', '-s', '1', '--quiet', ...base().slice(1), 'bench'],
      env: {},
      timeoutMs: 60_000,
      logDir: dir,
    });
    expect(out.exitCode).toBe(0);
  }, 60_000);

  test('returns stdout, stderr, exit code and the per-thread log files', async () => {
    const dir = await stack.executor.workDir('logs');
    const out = await stack.executor.run({
      argv: [
        ...base(),
        '-n',
        '-S',
        '-c',
        '2',
        '-j',
        '2',
        '-t',
        '50',
        '--log',
        '--log-prefix',
        `${dir}/pgbench_log`,
        'bench',
      ],
      env: {},
      timeoutMs: 60_000,
      logDir: dir,
    });
    expect(out.exitCode).toBe(0);
    expect(out.timedOut).toBe(false);
    expect(out.stdout).toMatch(/number of transactions actually processed: 100\/100/);
    expect(out.logFiles).toHaveLength(2);
    expect(out.logFiles.join('').trim().split('\n')).toHaveLength(100);
  });

  test('kills pgbench at the timeout and reports it', async () => {
    const dir = await stack.executor.workDir('timeout');
    const started = Date.now();
    const out = await stack.executor.run({
      argv: [...base(), '-n', '-S', '-c', '1', '-T', '60', 'bench'],
      env: {},
      timeoutMs: 1500,
      logDir: dir,
    });
    expect(out.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(pidsMentioning(`-T 60 bench`).length).toBe(0);
  });

  test('an abort signal stops pgbench and says so', async () => {
    const dir = await stack.executor.workDir('abort');
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 500);
    const out = await stack.executor.run({
      argv: [...base(), '-n', '-S', '-c', '1', '-T', '61', 'bench'],
      env: {},
      timeoutMs: 60_000,
      logDir: dir,
      signal: abort.signal,
    });
    expect(out.aborted).toBe(true);
    expect(out.timedOut).toBe(false);
    expect(pidsMentioning(`-T 61 bench`).length).toBe(0);
  });

  test('a load generator that dies by a signal nobody here sent reports which (SIGABRT: it crashed)', async () => {
    const dir = await stack.executor.workDir('crash');
    // the executor runs any program but `pgbench` as given: a process that aborts itself
    const out = await stack.executor.run({
      argv: ['sh', '-c', 'kill -ABRT $$'],
      env: {},
      timeoutMs: 10_000,
      logDir: dir,
    });
    expect(out).toMatchObject({ exitCode: null, signal: 'SIGABRT', timedOut: false, aborted: false });
  });
});

describe('metrics sampler', () => {
  test('samples PgBouncer pools and pg_stat_database while clients wait for a small pool', async () => {
    const sampler = stack.createSampler(300);
    await sampler.start();
    const dir = await stack.executor.workDir('sampled');
    const tx = stack.target('pgbouncer-transaction').connection();
    await stack.executor.run({
      argv: [
        'pgbench',
        '-h',
        tx.host,
        '-p',
        String(tx.port),
        '-U',
        tx.user,
        '-n',
        '-S',
        '-c',
        '20',
        '-j',
        '2',
        '-T',
        '3',
        tx.dbname,
      ],
      env: {},
      timeoutMs: 30_000,
      logDir: dir,
    });
    const series = await sampler.stop();
    const find = (source: string, name: string, db = TRANSACTION_DB) =>
      series.find((s) => s.source === source && s.name === name && (s.dimensions.database ?? db) === db);
    const waiting = find('pgbouncer', 'cl_waiting');
    expect(waiting?.status).toBe('ok');
    expect(Math.max(...waiting!.points.map((p) => p[1]))).toBeGreaterThan(0); // 20 clients, pool of 6
    expect(Math.max(...find('pgbouncer', 'sv_active')!.points.map((p) => p[1]))).toBeLessThanOrEqual(6);
    expect(Math.max(...find('pgbouncer', 'total_xact_count')!.points.map((p) => p[1]))).toBeGreaterThan(100);
    expect(find('pg_stat_database', 'xact_commit')?.unit).toBe('count/s');
    expect(find('pgbouncer', 'total_wait_time_us')?.unit).toBe('us/s'); // wait time per second, not a count
  }, 30_000);
});

describe("PsqlSession (the sampler's long-lived connection)", () => {
  test('answers several statements per call, survives an error, and reconnects after its backend is terminated', async () => {
    const session = new PsqlSession(stack.postgres.superuserTarget());
    try {
      expect(await session.query(['SELECT 1 AS one', "SELECT 'x' AS letter"])).toEqual([
        [{ one: '1' }],
        [{ letter: 'x' }],
      ]);
      const backendPid = async (): Promise<string> =>
        defined((await session.query(['SELECT pg_backend_pid() AS pid']))[0]?.[0]?.pid, 'a backend pid');
      // stderr and stdout are separate pipes, so the error text can arrive after the marker that
      // follows it; every one of many failing calls must still reject (it once resolved to [[]]).
      for (let i = 0; i < 40; i++) {
        await expect(session.query(['SELECT 1 AS one', 'SELECT * FROM no_such_table'])).rejects.toThrow(
          /no_such_table.*SQLSTATE 42P01/,
        );
      }
      const pid = await backendPid();
      expect(await backendPid()).toBe(pid); // same connection, not a new one per call
      await psqlQuery(stack.postgres.superuserTarget(), [`SELECT pg_terminate_backend(${pid})`]);
      await expect(session.query(['SELECT 1 AS one'])).rejects.toThrow(PsqlError);
      expect(await backendPid()).not.toBe(pid);
    } finally {
      await session.close();
    }
  });
});

describe("probePort (the watch's active look after a failed pgbench)", () => {
  test('a live server accepts; the port of one that stopped is refused, not unknown', async () => {
    // GIVEN a server listening on a free port
    const port = await findFreePort();
    const server = net.createServer((sock) => sock.destroy());
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    // THEN it accepts
    expect(await probePort(port)).toBe('accepts');
    // WHEN it stops, THEN the port is refused at once
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await probePort(port)).toBe('refused');
  });
});

describe('PgBouncer on a TCP port another process bound after it was chosen', () => {
  // PgBouncer 1.18 logs the failed bind and keeps running on its unix socket alone; since 1.19 it
  // exits when it could listen on no address of listen_addr (NEWS.md 1.19.0, pgbouncer/pgbouncer#838).
  // Either way the pooler must end up answering on a port of its own.
  test.each([
    ['1.18 (Debian)', () => ({ bin: stack.bins.pgbouncer, version: stack.bins.poolerVersion })],
    [
      modern.value?.version ?? '≥ 1.21 (none found)',
      () => {
        const { file, version } = modern.get();
        return { bin: file, version };
      },
    ],
  ])(
    '%s: starts again on another port, and its TCP port reaches it',
    async (_name, which) => {
      // GIVEN a port held by another listener, offered as the first choice
      const taken = await findFreePort();
      const squatter = net.createServer((sock) => sock.destroy());
      await new Promise<void>((resolve) => squatter.listen(taken, '127.0.0.1', resolve));
      const offered: number[] = [];
      const choosePort = async (excluded: ReadonlySet<number>): Promise<number> => {
        const port = offered.length === 0 ? taken : await findFreePort(excluded);
        offered.push(port);
        return port;
      };
      const { bin, version } = which();
      const baseDir = path.join(stack.baseDir, `taken-${offered.length}-${Date.now()}`);
      fs.mkdirSync(baseDir, { mode: 0o755 });
      let pgb: Pgbouncer | null = null;
      try {
        // WHEN PgBouncer starts
        pgb = await startPgbouncer({
          bins: { ...stack.bins, pgbouncer: bin, poolerVersion: version },
          baseDir,
          runAs: stack.runAs,
          server: stack.postgres,
          poolPercent: 20,
          choosePort,
        });
        // THEN it moved off the taken port, and a client over TCP reaches this PgBouncer
        expect(offered[0]).toBe(taken);
        expect(pgb.port).not.toBe(taken);
        expect(offered.length).toBeGreaterThanOrEqual(2);
        const rows = await psqlQueryOne(
          { ...pgb.processes[0]!.admin, host: '127.0.0.1', port: pgb.port },
          'SHOW CONFIG',
        );
        expect(rows.find((r) => r.key === 'conffile')?.value).toBe(pgb.iniFile);
      } finally {
        await pgb?.stop();
        await new Promise<void>((resolve) => squatter.close(() => resolve()));
      }
    },
    60_000,
  );
});

// Each starts a stack of its own and times nothing: the two run side by side (test.concurrent),
// beside the tests of the shared stack above.
describe('stop', () => {
  test.concurrent(
    'ends PostgreSQL and PgBouncer and removes the temporary directory',
    async () => {
      // GIVEN a second stack of our own
      const other = await startLocalStack();
      const pids = [...other.pids];
      expect(pids.every(isAlive)).toBe(true);
      // WHEN
      await other.stop();
      // THEN
      expect(pids.filter(isAlive)).toEqual([]);
      expect(pidsMentioning(other.baseDir)).toEqual([]);
      expect(fs.existsSync(other.baseDir)).toBe(false);
    },
    60_000,
  );

  test.concurrent(
    'after a pg_ctl restart, also the new postmaster (no child of ours) is stopped',
    async () => {
      // GIVEN a stack whose server someone restarted: the postmaster we started is gone, a new one runs
      const other = await startLocalStack();
      const pgCtl = path.join(path.dirname(other.bins.postgres), 'pg_ctl');
      const restarted = await pgCtlRestart(pgCtl, other.postgres.dataDir, other.runAs);
      expect(restarted.exitCode).toBe(0);
      const successor = Number(
        fs.readFileSync(path.join(other.postgres.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0],
      );
      expect(successor).not.toBe(other.postgres.pid);
      expect(isAlive(successor)).toBe(true);
      // WHEN the stack stops
      await other.stop();
      // THEN the new postmaster is gone too, and nothing runs from the removed directory
      expect(isAlive(successor)).toBe(false);
      expect(pidsMentioning(other.baseDir)).toEqual([]);
      expect(fs.existsSync(other.baseDir)).toBe(false);
    },
    120_000,
  );
});

describe('findBinaries', () => {
  test('finds PostgreSQL >= 14 and PgBouncer with their versions', () => {
    expect(Number(stack.bins.serverVersion.split('.')[0])).toBeGreaterThanOrEqual(14);
    expect(stack.bins.poolerVersion).toMatch(/^1\.\d+\.\d+$/);
    for (const f of [
      stack.bins.initdb,
      stack.bins.postgres,
      stack.bins.pgbench,
      stack.bins.psql,
      stack.bins.pgbouncer,
    ])
      expect(fs.existsSync(f)).toBe(true);
  });

  test('when nothing is found and installing is off, the error names what is missing and the exact command', () => {
    // GIVEN search paths with nothing in them
    const empty = scratchDir('plx-empty-');
    try {
      const find = () =>
        findBinaries({
          install: false,
          searchPaths: { postgresDirs: [empty], pgbouncerFiles: [`${empty}/pgbouncer`] },
        });
      // THEN
      expect(find).toThrow(InfrastructureError);
      expect(find).toThrow(
        /PostgreSQL >= 14 \(initdb, postgres, pgbench, psql\) and PgBouncer not found \(--no-install given\)/,
      );
      if (fs.existsSync('/usr/bin/apt-get'))
        expect(find).toThrow(
          /install with: sudo apt-get install -y --no-install-recommends postgresql postgresql-contrib pgbouncer/,
        );
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });

  test('a PostgreSQL directory missing pgbench is skipped', () => {
    const partial = scratchDir('plx-partial-');
    try {
      for (const t of ['initdb', 'postgres', 'psql'])
        fs.symlinkSync(`${stack.bins.bindir}/${t}`, `${partial}/${t}`);
      const found = findBinaries({
        install: false,
        searchPaths: { postgresDirs: [partial, stack.bins.bindir], pgbouncerFiles: [stack.bins.pgbouncer] },
      });
      expect(found.bindir).toBe(stack.bins.bindir);
    } finally {
      fs.rmSync(partial, { recursive: true, force: true });
    }
  });
});
