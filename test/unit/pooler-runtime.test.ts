import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { readPoolerCpu } from '../../lib/pooler-host/agent';
import { fetchPoolerCpu } from '../../lib/aws/pooler-agent-client';
import { parsePoolerHostConfig, systemdProcessManager } from '../../lib/pooler-host/bootstrap';
import {
  adminConnection,
  CompositePoolControl,
  PoolerPoolControl,
  type AdminRowsQuery,
} from '../../lib/runner/pooler-targets';
import { parseUnaligned } from '../../lib/core/psql-text';
import { NoopPoolControl } from '../../lib/runner/proxy-pool';
import { runRequestSchema } from '../../lib/aws/run-request';
import {
  PoolerMetrics,
  poolerSaturation,
  processCpuPercents,
  type AdminRow,
  type PoolerCpuSnapshot,
} from '../../lib/engine/pooler-metrics';
import { poolerPaths } from '../../lib/poolers/pgbouncer/host';
import { pgdoormanPaths } from '../../lib/poolers/pgdoorman/host';
import type { PoolerEndpoint, PoolerHostConfig } from '../../lib/poolers/pgbouncer/layout';
import { poolerEndpoint } from '../helpers/pooler-endpoint';
import { scratchDir } from '../helpers/scratch';
import { pgbouncerDriver } from '../../lib/poolers/pgbouncer/driver';

const POOLER = poolerEndpoint();

function snap(at: string, ticks: Array<[number, number, number]>): PoolerCpuSnapshot {
  return {
    at,
    clockTicksPerSecond: 100,
    processes: ticks.map(([index, pid, cpuTicks]) => ({ index, pid, cpuTicks })),
  };
}

describe('processCpuPercents', () => {
  test('ticks per second of wall time, percent of one core; a restarted process (new pid) is skipped', () => {
    const a = snap('2026-11-22T10:00:00.000Z', [
      [0, 100, 1000],
      [1, 101, 500],
    ]);
    const b = snap('2026-11-22T10:00:02.000Z', [
      [0, 100, 1190],
      [1, 999, 10],
    ]);
    expect(processCpuPercents(a, b)).toEqual([{ index: 0, percent: 95 }]);
  });
});

describe('PoolerMetrics', () => {
  const rows = (database: string, v: Partial<Record<string, string>>): AdminRow => ({ database, ...v });
  function metrics(answers: Array<Array<AdminRow[][] | Error>>, cpu: PoolerCpuSnapshot[]) {
    let poll = 0;
    let cpuCall = 0;
    let t = Date.parse('2026-11-22T10:00:00.000Z');
    const m = new PoolerMetrics({
      pooler: 'bouncer',
      product: 'pgbouncer',
      stats: pgbouncerDriver.stats,
      admin: {
        processes: 2,
        query: (i) => {
          const a = answers[poll]?.[i];
          return a instanceof Error ? Promise.reject(a) : Promise.resolve(a ?? [[], []]);
        },
        close: () => Promise.resolve(),
      },
      cpu: () => Promise.resolve(cpu[cpuCall++] ?? null),
      pools: { app: 'transaction' },
      targets: ['bouncer-transaction'],
      now: () => t,
    });
    return {
      m,
      next: async () => {
        await m.poll();
        poll++;
        t += 1000;
      },
    };
  }

  test('pools summed over the processes, counters as a rate of the sum, CPU per process; a partial poll records no pools', async () => {
    const proc = (active: string, xacts: string): AdminRow[][] => [
      [rows('app', { cl_active: active, cl_waiting: '1', sv_active: '3', maxwait: '0', maxwait_us: '5000' })],
      [rows('app', { total_xact_count: xacts, total_wait_time: '0' })],
    ];
    const { m, next } = metrics(
      [
        [proc('10', '100'), proc('5', '50')],
        [proc('11', '300'), proc('6', '150')],
        [proc('1', '400'), new Error('process 2: connection refused')],
      ],
      [
        snap('2026-11-22T10:00:00.000Z', [
          [0, 1, 0],
          [1, 2, 0],
        ]),
        snap('2026-11-22T10:00:01.000Z', [
          [0, 1, 50],
          [1, 2, 95],
        ]),
        snap('2026-11-22T10:00:02.000Z', [
          [0, 1, 100],
          [1, 2, 190],
        ]),
      ],
    );
    await next();
    await next();
    await next();
    const s = m.series();
    const find = (name: string, dims: Record<string, string> = { database: 'app' }) =>
      s.find((x) => x.name === name && Object.entries(dims).every(([k, v]) => x.dimensions[k] === v));
    expect(find('cl_active')?.points.map((p) => p[1])).toEqual([15, 17]); // the third poll was partial
    expect(find('cl_active')?.dimensions).toEqual({
      pooler: 'bouncer',
      database: 'app',
      pool_mode: 'transaction',
    });
    expect(find('maxwait')?.points.map((p) => p[1])).toEqual([5, 5]);
    expect(find('total_xact_count')?.points.map((p) => p[1])).toEqual([300]); // (450 − 150) / 1 s
    expect(find('process_cpu_percent', { process: '1' })?.points.map((p) => p[1])).toEqual([95, 95]);
    expect(find('process_cpu_percent', { process: '0' })?.unit).toBe('percent');
    // saturation over the window: the busiest process averaged 95 % ≥ 90
    expect(
      await poolerSaturation(
        [m],
        { kind: 'pgbouncer-transaction', name: 'bouncer-transaction' },
        '2026-11-22T10:00:00.000Z',
        '2026-11-22T10:00:02.000Z',
      ),
    ).toEqual({ saturated: true, percent: 95, product: 'pgbouncer', cores: 1 });
    expect(
      await poolerSaturation(
        [m],
        { kind: 'direct', name: 'direct' },
        '2026-11-22T10:00:00.000Z',
        '2026-11-22T10:00:02.000Z',
      ),
    ).toEqual({ saturated: null, percent: null });
  });

  test('a multithreaded process (PgDoorman, 4 worker threads): saturation per the cores it can use, each thread its own series', async () => {
    // GIVEN a process that used 3 of its 4 cores for 2 s, one worker at 100 %, another at 50 %
    const at = (s: number) => `2026-11-22T10:00:0${s}.000Z`;
    const doorman = (s: number, ticks: number, w0: number, w1: number): PoolerCpuSnapshot => ({
      at: at(s),
      clockTicksPerSecond: 100,
      coresPerProcess: 4,
      processes: [
        {
          index: 0,
          pid: 7,
          cpuTicks: ticks,
          threads: [
            { tid: 8, name: 'worker-pg-doorm', cpuTicks: w0 },
            { tid: 9, name: 'worker-pg-doorm', cpuTicks: w1 },
          ],
        },
      ],
    });
    let i = 0;
    const cpu = [doorman(0, 0, 0, 0), doorman(1, 300, 100, 50), doorman(2, 600, 200, 100)];
    const m = new PoolerMetrics({
      pooler: 'doorman',
      product: 'pgdoorman',
      stats: pgbouncerDriver.stats,
      admin: { processes: 1, query: () => Promise.resolve([[], []]), close: () => Promise.resolve() },
      cpu: () => Promise.resolve(cpu[i++] ?? null),
      pools: { app: 'transaction' },
      targets: ['doorman-transaction'],
    });
    // WHEN polled three times
    for (let n = 0; n < 3; n++) await m.pollCpu();
    // THEN the process series is % of one core (300), its saturation % of its 4 cores (75: not saturated)
    const s = m.series();
    expect(s.find((x) => x.name === 'process_cpu_percent')?.points.map((p) => p[1])).toEqual([300, 300]);
    expect(
      await poolerSaturation(
        [m],
        { kind: 'pgdoorman-transaction', name: 'doorman-transaction' },
        at(0),
        at(2),
      ),
    ).toEqual({ saturated: false, percent: 75, product: 'pgdoorman', cores: 4 });
    // and each worker thread is a series of its own
    expect(
      s
        .filter((x) => x.name === 'thread_cpu_percent')
        .map((x) => [x.source, x.dimensions, x.points.map((p) => p[1])]),
    ).toEqual([
      ['pgdoorman', { pooler: 'doorman', process: '0', thread: 'worker-pg-doorm-8' }, [100, 100]],
      ['pgdoorman', { pooler: 'doorman', process: '0', thread: 'worker-pg-doorm-9' }, [50, 50]],
    ]);
  });

  test('every poll failing: one error series with the reason, never zeros', async () => {
    const err = new Error('no route to host');
    const { m, next } = metrics([[err, err]], []);
    await next();
    const s = m.series();
    expect(s.find((x) => x.name === 'cl_active')).toBeUndefined();
    expect(s.find((x) => x.name === 'poll')).toMatchObject({
      status: 'error',
      reason: expect.stringContaining('no route to host') as unknown,
    });
    expect(s.find((x) => x.name === 'process_cpu_percent')).toMatchObject({ status: 'error' });
  });
});

describe('PoolerPoolControl', () => {
  function control(applies: boolean, pooler: PoolerEndpoint = POOLER, runnerCount = 1) {
    const sent: Array<[number, string]> = [];
    let size = 486;
    let mps = 200;
    const query: AdminRowsQuery = (conn, statements) => {
      const out: AdminRow[][] = [];
      for (const s of statements) {
        sent.push([conn.port, s]);
        const set = /^SET default_pool_size = (\d+)$/.exec(s);
        if (set) size = Number(set[1]);
        const m = /^SET max_prepared_statements = (\d+)$/.exec(s);
        if (m) mps = Number(m[1]);
        if (s === 'SHOW DATABASES')
          out.push([
            { name: 'postgres', pool_size: String(size) },
            { name: 'postgres_session', pool_size: String(size) },
          ]);
        else if (s === 'SHOW CONFIG') out.push([{ key: 'max_prepared_statements', value: String(mps) }]);
        else out.push([]);
      }
      return Promise.resolve(out);
    };
    const c = new PoolerPoolControl({
      poolers: [pooler],
      admin: { username: 'pgbouncer_admin', password: 'x' },
      query,
      maxConnections: () => Promise.resolve(1080),
      dbname: 'postgres',
      applies: () => applies,
      initialMaxPreparedStatements: () => 200,
      runnerCount,
    });
    return { c, sent };
  }
  const tx = { kind: 'pgbouncer-transaction' as const, name: 'bouncer-transaction' };

  test('a sweep goes to every process (45 % of 1080 over 2 processes: 243 each), restore puts the lab value back', async () => {
    const { c, sent } = control(true);
    await c.setPoolPercent(tx, 45);
    expect(sent.filter(([, s]) => s.startsWith('SET'))).toEqual([
      [6440, 'SET default_pool_size = 243'],
      [6440, 'SET max_user_connections = 243'],
      [6441, 'SET default_pool_size = 243'],
      [6441, 'SET max_user_connections = 243'],
    ]);
    expect(c.currentPercent('bouncer')).toBe(45);
    await c.setMaxPreparedStatements(tx, 0);
    await c.restore();
    const sets = sent.filter(([, s]) => s.startsWith('SET')).map(([p, s]) => `${p} ${s}`);
    expect(sets.slice(-6)).toEqual([
      '6440 SET default_pool_size = 486',
      '6440 SET max_user_connections = 486',
      '6441 SET default_pool_size = 486',
      '6441 SET max_user_connections = 486',
      '6440 SET max_prepared_statements = 200',
      '6441 SET max_prepared_statements = 200',
    ]);
  });

  test('a pooler on the runners splits the % across them: 45 % of 1080 over 3 runners × 2 processes is 81 each', async () => {
    // GIVEN the same pooler placed on each of 3 runners (the stack's host config says sharedBy 3)
    const { c, sent } = control(true, { ...POOLER, placement: 'on-runners', host: '127.0.0.1' }, 3);
    // WHEN a sweep sets 45 %
    await c.setPoolPercent(tx, 45);
    // THEN each runner's processes together open a third of the share (486 / 3 / 2 = 81)
    expect(sent.filter(([, s]) => s.startsWith('SET'))).toEqual([
      [6440, 'SET default_pool_size = 81'],
      [6440, 'SET max_user_connections = 81'],
      [6441, 'SET default_pool_size = 81'],
      [6441, 'SET max_user_connections = 81'],
    ]);
  });

  test('a session-state step narrows the pooler to one server connection per process, and restore puts the current % back', async () => {
    // GIVEN a sweep left the pooler at 45 %
    const { c, sent } = control(true);
    await c.setPoolPercent(tx, 45);
    sent.length = 0;
    // WHEN a probe narrows it, then restores it
    const narrowed = await c.narrowToOne(tx);
    const during = sent.filter(([, s]) => s.startsWith('SET')).map(([p, s]) => `${p} ${s}`);
    await narrowed?.restore();
    // THEN one server connection on every process, then the 45 % it had (not the lab's value)
    expect(during).toEqual([
      '6440 SET default_pool_size = 1',
      '6440 SET max_user_connections = 1',
      '6441 SET default_pool_size = 1',
      '6441 SET max_user_connections = 1',
    ]);
    expect(narrowed?.sharing).toMatch(
      /default_pool_size = 1 .* on each of 2 processes \(clients may land on different ones\)/,
    );
    expect(
      sent
        .filter(([, s]) => s.startsWith('SET'))
        .slice(-4)
        .map(([p, s]) => `${p} ${s}`),
    ).toEqual([
      '6440 SET default_pool_size = 243',
      '6440 SET max_user_connections = 243',
      '6441 SET default_pool_size = 243',
      '6441 SET max_user_connections = 243',
    ]);
  });

  test('a runner that does not own the pooler does not narrow it, and an RDS Proxy is not one of its poolers', async () => {
    const { c, sent } = control(false);
    expect(await c.narrowToOne(tx)).toBeNull();
    expect(await control(true).c.narrowToOne({ kind: 'rds-proxy', name: 'pool100' })).toBeNull();
    expect(sent).toEqual([]);
  });

  test('a runner that does not own the pooler sends nothing but tracks the %', async () => {
    const { c, sent } = control(false);
    await c.setPoolPercent(tx, 25);
    await c.reset();
    expect(sent).toEqual([]);
    expect(c.currentPercent('bouncer')).toBe(25);
  });

  test('the composite sends PgBouncer targets to PgBouncer, others to the proxy control; reset drops every pool', async () => {
    const { c, sent } = control(true);
    const composite = new CompositePoolControl(new NoopPoolControl(), c);
    await composite.reset({ kind: 'direct', name: 'direct' });
    expect(sent.map(([p, s]) => `${p} ${s}`)).toEqual([
      '6440 KILL postgres',
      '6440 RESUME postgres',
      '6440 KILL postgres_session',
      '6440 RESUME postgres_session',
      '6441 KILL postgres',
      '6441 RESUME postgres',
      '6441 KILL postgres_session',
      '6441 RESUME postgres_session',
    ]);
    await expect(
      composite.setMaxPreparedStatements({ kind: 'rds-proxy', name: 'pool100' }, 0),
    ).rejects.toThrow(/no max_prepared_statements/);
  });

  test('admin connections go to the relay port of the process, sslmode prefer (the relay ends at a unix socket)', () => {
    expect(adminConnection(POOLER, 1, { username: 'a', password: 'p' })).toMatchObject({
      host: '10.0.1.5',
      port: 6441,
      dbname: 'pgbouncer',
      sslmode: 'prefer',
    });
  });
});

test('parseUnaligned (the admin queries read psql through it)', () => {
  expect(parseUnaligned('a\u001fb\n1\u001f2\n3\u001f\n')).toEqual([
    { a: '1', b: '2' },
    { a: '3', b: '' },
  ]);
});

describe('agent', () => {
  test('readPoolerCpu: pid files and /proc; a process without a pid file is left out', () => {
    const files: Record<string, string> = {
      '/r/run/proxylab-pgb/bouncer-0/pgbouncer.pid': '4242\n',
      '/proc/4242/stat': '4242 (pgbouncer) S 1 2 3 4 5 6 7 8 9 10 300 45 0 0',
    };
    const snapText = readPoolerCpu(
      2,
      poolerPaths('bouncer', '/r'),
      (f) => {
        const t = files[f];
        if (t === undefined) throw new Error('ENOENT');
        return t;
      },
      () => new Date('2026-11-22T10:00:00.000Z'),
    );
    expect(snapText).toEqual({
      at: '2026-11-22T10:00:00.000Z',
      clockTicksPerSecond: 100,
      processes: [{ index: 0, pid: 4242, cpuTicks: 345 }],
    });
  });

  test('readPoolerCpu with threads: each thread’s ticks and name from /proc/<pid>/task, one gone meanwhile left out', () => {
    const files: Record<string, string> = {
      '/r/run/proxylab-pgd/doorman-0/pg_doorman.pid': '77\n',
      '/proc/77/stat': '77 (pg_doorman) S 1 2 3 4 5 6 7 8 9 10 500 100 0 0',
      '/proc/77/task/78/stat': '78 (worker-pg-doorm) S 1 2 3 4 5 6 7 8 9 10 200 20 0 0',
      '/proc/77/task/78/comm': 'worker-pg-doorm\n',
    };
    const snapText = readPoolerCpu(
      1,
      pgdoormanPaths('doorman', '/r'),
      (f) => {
        const t = files[f];
        if (t === undefined) throw new Error('ENOENT');
        return t;
      },
      () => new Date('2026-11-22T10:00:00.000Z'),
      { list: () => [78, 79], coresPerProcess: 4 },
    );
    expect(snapText).toEqual({
      at: '2026-11-22T10:00:00.000Z',
      clockTicksPerSecond: 100,
      coresPerProcess: 4,
      processes: [
        { index: 0, pid: 77, cpuTicks: 600, threads: [{ tid: 78, name: 'worker-pg-doorm', cpuTicks: 220 }] },
      ],
    });
  });

  test('fetchPoolerCpu checks the line it reads', async () => {
    const answer = { text: '' };
    const server = net.createServer((s) => s.end(answer.text));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as net.AddressInfo).port;
    try {
      answer.text =
        JSON.stringify({ at: '2026-11-22T10:00:00Z', clockTicksPerSecond: 100, processes: [] }) + '\n';
      await expect(fetchPoolerCpu('127.0.0.1', port)).resolves.toMatchObject({ clockTicksPerSecond: 100 });
      answer.text = '{"at":"x","clockTicksPerSecond":0,"processes":[]}\n';
      await expect(fetchPoolerCpu('127.0.0.1', port)).rejects.toThrow(/clockTicksPerSecond|at/);
      answer.text = 'nope';
      await expect(fetchPoolerCpu('127.0.0.1', port)).rejects.toThrow(/not JSON/);
    } finally {
      server.close();
    }
  });
});

describe('pooler host config', () => {
  const good = {
    name: 'bouncer',
    product: 'pgbouncer',
    placement: 'dedicated',
    region: 'eu-west-1',
    dbSecretArn: 'arn:db',
    adminSecretArn: 'arn:admin',
    serverHost: 'writer.example',
    serverPort: 5432,
    listenAddr: '0.0.0.0',
    poolModes: ['session'],
    processes: 4,
    poolPercent: 90,
    sharedBy: 1,
    maxPreparedStatements: 200,
    tls: true,
    binaryPath: '/opt/pgbouncer/bin/pgbouncer',
    version: '1.25.2',
  };
  test('accepted as written', () => {
    expect(parsePoolerHostConfig(JSON.stringify(good), 'f.json')).toEqual(good);
  });
  test('the form older user data wrote (pgbouncerPath, no product) reads as PgBouncer', () => {
    const { product, binaryPath, ...rest } = good;
    expect(product).toBe('pgbouncer');
    const old = { ...rest, pgbouncerPath: binaryPath };
    expect(parsePoolerHostConfig(JSON.stringify(old), 'f.json')).toEqual(good);
    // both names at once is not an old config: the stray key is named
    expect(() =>
      parsePoolerHostConfig(JSON.stringify({ ...good, pgbouncerPath: binaryPath }), 'f.json'),
    ).toThrow(/pgbouncerPath/);
    expect(() => parsePoolerHostConfig(JSON.stringify({ ...good, product: 'odyssey' }), 'f.json')).toThrow(
      /product/,
    );
  });
  test('every problem named with its field; unknown keys refused', () => {
    expect(() =>
      parsePoolerHostConfig(JSON.stringify({ ...good, processes: 0, poolPercent: 120, extra: 1 }), 'f.json'),
    ).toThrow(/processes.*poolPercent|poolPercent.*processes/);
    expect(() => parsePoolerHostConfig(JSON.stringify({ ...good, extra: 1 }), 'f.json')).toThrow(/extra/);
    expect(() => parsePoolerHostConfig('{', 'f.json')).toThrow(/not JSON/);
  });
});

test('run requests written before poolers existed still parse (no poolers, no admin secret)', () => {
  const req = {
    requestVersion: 1,
    runId: 'r1',
    suite: 'smoke',
    bucket: 'b',
    runnerCount: 1,
    secretArn: 'arn',
    targets: {
      writer: { host: 'w', port: 5432 },
      proxies: [],
      sslmode: 'require',
      proxyTargetKind: 'rds-proxy',
    },
    settings: {
      region: null,
      startAt: null,
      collector: null,
      poolControl: true,
      barrierTimeoutSec: 900,
      expectVersion: null,
    },
  };
  const parsed = runRequestSchema.parse(req);
  expect(parsed.targets.poolers).toEqual([]);
  expect(parsed.targets.poolerAdminSecretArn).toBeNull();
  expect(
    runRequestSchema.parse({ ...req, targets: { ...req.targets, poolers: [POOLER] } }).targets.poolers,
  ).toEqual([POOLER]);
});

describe('systemd on the pooler host', () => {
  test("template units, the rolling restart's sudoers drop-in, and the enable + restart of each instance", async () => {
    const dir = scratchDir('pooler-units');
    const sudoersDir = scratchDir('pooler-sudoers');
    const calls: string[] = [];
    const manager = systemdProcessManager(
      {
        name: 'bouncer',
        product: 'pgbouncer',
        processes: 2,
        binaryPath: '/opt/pgbouncer-1.25.2/bin/pgbouncer',
      } as PoolerHostConfig,
      'pgbouncer',
      (file, args) => {
        calls.push([file, ...args].join(' '));
        return Promise.resolve({ code: 0, stdout: '', stderr: '' });
      },
      dir,
      sudoersDir,
    );
    await manager.prepare();
    await manager.startProcess(1);
    await manager.startAgent();
    const unit = fs.readFileSync(path.join(dir, 'proxylab-pgbouncer@.service'), 'utf8');
    expect(unit).toMatch(
      /^ExecStart=\/opt\/pgbouncer-1\.25\.2\/bin\/pgbouncer \/etc\/proxylab\/pgbouncer\/%i\.ini$/m,
    );
    expect(unit).toMatch(/^User=pgbouncer$/m);
    // the instance's socket directory is its runtime directory: /run/proxylab-pgb/bouncer-1
    expect(unit).toMatch(/^RuntimeDirectory=proxylab-pgb\/%i$/m);
    expect(poolerPaths('bouncer').socketDir(1)).toBe('/run/proxylab-pgb/bouncer-1');
    expect(poolerPaths('bouncer').iniFile(1)).toBe('/etc/proxylab/pgbouncer/bouncer-1.ini');
    expect(fs.readFileSync(path.join(dir, 'proxylab-pooler-agent@.service'), 'utf8')).toMatch(
      /^ExecStart=\/usr\/bin\/env node \/opt\/proxylab\/pooler\.js agent --config \/etc\/proxylab\/pooler-%i\.json$/m,
    );
    // the agent's user may start exactly each process's two generation units, nothing else
    const sudoers = path.join(sudoersDir, 'proxylab-pooler-bouncer');
    expect(fs.statSync(sudoers).mode & 0o777).toBe(0o440);
    expect(fs.readFileSync(sudoers, 'utf8').split('\n')[1]).toBe(
      'pgbouncer ALL=(root) NOPASSWD: ' +
        [
          '/usr/bin/systemctl start proxylab-pgbouncer@bouncer-0.service',
          '/usr/bin/systemctl start proxylab-pgbouncer@bouncer-0r.service',
          '/usr/bin/systemctl start proxylab-pgbouncer@bouncer-1.service',
          '/usr/bin/systemctl start proxylab-pgbouncer@bouncer-1r.service',
        ].join(', '),
    );
    expect(calls).toEqual([
      `visudo -c -q -f ${sudoers}`,
      'systemctl daemon-reload',
      // a second bootstrap: the other generation a rolling restart left running stops first
      'systemctl stop proxylab-pgbouncer@bouncer-1r.service',
      'systemctl enable proxylab-pgbouncer@bouncer-1.service',
      'systemctl restart proxylab-pgbouncer@bouncer-1.service',
      'systemctl enable proxylab-pooler-agent@bouncer.service',
      'systemctl restart proxylab-pooler-agent@bouncer.service',
    ]);
  });

  test('a failing systemctl names the command and its stderr', async () => {
    const manager = systemdProcessManager(
      { name: 'bouncer', product: 'pgbouncer', binaryPath: '/x' } as PoolerHostConfig,
      'pgbouncer',
      () => Promise.resolve({ code: 1, stdout: '', stderr: 'Job for x failed.\n' }),
      scratchDir('pooler-units'),
    );
    await expect(manager.startAgent()).rejects.toThrow(
      /systemctl enable proxylab-pooler-agent@bouncer\.service failed \(exit 1\): Job for x failed\./,
    );
  });
});
