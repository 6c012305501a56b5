import { applyOnEveryProcess, type AdminRow, type AdminRun } from '../../lib/poolers/driver';
import { poolerEndpointSchema } from '../../lib/poolers/endpoint';
import { POOLER_PRODUCTS } from '../../lib/poolers/products';
import { POOLER_DRIVERS, poolerDriver } from '../../lib/poolers/registry';
import type { PoolerHostConfig } from '../../lib/poolers/host-config';
import { renderPgbouncerIni } from '../../lib/poolers/pgbouncer/config';
import { pgbouncerDriver } from '../../lib/poolers/pgbouncer/driver';
import { poolerPaths } from '../../lib/poolers/pgbouncer/host';
import { parsePoolerEndpoints } from '../../lib/config/stack-outputs';
import { poolerEndpoint } from '../helpers/pooler-endpoint';

describe('the driver registry', () => {
  test.each(POOLER_PRODUCTS.map((p) => [p]))('%s has a driver that says it is %s', (product) => {
    // GIVEN / WHEN
    const d = poolerDriver(product);
    // THEN
    expect(d.product).toBe(product);
    expect(d.releases.length).toBeGreaterThan(0);
    expect(d.releases.every((r) => r.product === product)).toBe(true);
    expect(d.releases.map((r) => r.version)).toContain(d.defaultVersion);
  });

  test('an unknown product names the products there are', () => {
    expect(() => poolerDriver('pgdog')).toThrow(
      /^pooler product "pgdog" has no driver; one of pgbouncer, pgdoorman$/,
    );
    expect(Object.keys(POOLER_DRIVERS).sort()).toEqual([...POOLER_PRODUCTS].sort());
  });
});

describe('PgBouncer capabilities by version', () => {
  test.each([
    ['1.18.0', false, false],
    ['1.19.0', false, true],
    ['1.21.0', true, true],
    ['1.25.2', true, true],
  ] as const)('%s: prepared statements in transaction mode %s, peering %s', (version, prepared, peering) => {
    const c = pgbouncerDriver.capabilities(version);
    expect(c.preparedStatementsInTransactionMode).toBe(prepared);
    expect(c.peering).toBe(peering);
  });

  test('an unknown version is assumed to have neither', () => {
    expect(pgbouncerDriver.capabilities(null)).toEqual({
      preparedStatementsInTransactionMode: false,
      reusePort: true,
      peering: false,
      singleThreaded: true,
      runtimePoolResize: 'admin-set',
      gracefulBinaryUpgrade: false,
    });
  });
});

describe('PgBouncer admin statements and their checks', () => {
  const dbs = (sizes: Record<string, string>): AdminRow[] =>
    Object.entries(sizes).map(([name, pool_size]) => ({ name, pool_size }));

  test('pool size: applied when SHOW DATABASES says so for every alias, else names the alias', () => {
    // GIVEN
    const op = pgbouncerDriver.admin.setPoolSize(5, ['bench', 'bench_session']);
    // THEN
    expect(op.statements).toEqual([
      'SET default_pool_size = 5',
      'SET max_user_connections = 5',
      'SHOW DATABASES',
    ]);
    expect(op.check([[], [], dbs({ bench: '5', bench_session: '5' })])).toBeNull();
    expect(op.check([[], [], dbs({ bench: '5', bench_session: '4' })])).toBe(
      'did not apply pool size 5 to bench_session (SHOW DATABASES says 4)',
    );
    expect(op.check([[], [], dbs({ bench: '5' })])).toMatch(/bench_session \(SHOW DATABASES says nothing\)$/);
  });

  // SHOW DATABASES as PgBouncer 1.18.0 answered after `PAUSE bench` (captured; columns trimmed).
  const paused = (bench: string, session: string, port = '21985'): AdminRow[] => [
    { name: 'bench', host: '127.0.0.1', port, pool_mode: 'transaction', paused: bench, disabled: '0' },
    { name: 'bench_session', host: '127.0.0.1', port, pool_mode: 'session', paused: session, disabled: '0' },
    { name: 'pgbouncer', host: '', port: '30562', pool_mode: 'statement', paused: '0', disabled: '0' },
  ];

  test('PAUSE and RESUME per alias, checked through SHOW DATABASES', () => {
    // GIVEN
    const pause = pgbouncerDriver.admin.pause(['bench']);
    const resume = pgbouncerDriver.admin.resume(['bench']);
    // THEN
    expect(pause.statements).toEqual(['PAUSE bench', 'SHOW DATABASES']);
    expect(pause.check([[], paused('1', '0')])).toBeNull();
    expect(pause.check([[], paused('0', '0')])).toBe('did not pause bench (SHOW DATABASES paused ≠ 1)');
    expect(resume.statements).toEqual(['RESUME bench', 'SHOW DATABASES']);
    expect(resume.check([[], paused('0', '0')])).toBeNull();
    expect(resume.check([[], paused('1', '0')])).toBe('did not resume bench (SHOW DATABASES paused ≠ 0)');
  });

  test('RELOAD after re-pointing: every alias must name the new port', () => {
    const op = pgbouncerDriver.admin.reload(['bench', 'bench_session'], 26687);
    expect(op.statements).toEqual(['RELOAD', 'SHOW DATABASES']);
    expect(op.check([[], paused('0', '0', '26687')])).toBeNull();
    expect(op.check([[], paused('0', '0')])).toBe(
      'did not re-point bench, bench_session to port 26687 (SHOW DATABASES after RELOAD)',
    );
  });

  test('max_prepared_statements: checked through SHOW CONFIG', () => {
    const op = pgbouncerDriver.admin.setMaxPreparedStatements(0);
    expect(op.statements).toEqual(['SET max_prepared_statements = 0', 'SHOW CONFIG']);
    expect(op.check([[], [{ key: 'max_prepared_statements', value: '0' }]])).toBeNull();
    expect(op.check([[], [{ key: 'max_prepared_statements', value: '200' }]])).toBe(
      'did not apply max_prepared_statements 0 (SHOW CONFIG says 200)',
    );
  });

  test.each([[0], [-1], [1.5]])('pool size %p is refused before anything is sent', (size) => {
    expect(() => pgbouncerDriver.admin.setPoolSize(size, ['bench'])).toThrow(
      `pool size must be a positive integer, got ${size}`,
    );
  });

  test('reset: KILL then RESUME each alias', () => {
    expect(pgbouncerDriver.admin.reset(['bench', 'bench_session']).statements).toEqual([
      'KILL bench',
      'RESUME bench',
      'KILL bench_session',
      'RESUME bench_session',
    ]);
  });

  test('probe: version and max_prepared_statements, null when the setting is absent (< 1.21)', () => {
    const { probe } = pgbouncerDriver.admin;
    expect(
      probe.parse([[{ version: 'PgBouncer 1.25.2' }], [{ key: 'max_prepared_statements', value: '200' }]]),
    ).toEqual({ version: '1.25.2', maxPreparedStatements: 200 });
    expect(
      probe.parse([[{ version: 'PgBouncer 1.18.0' }], [{ key: 'pool_mode', value: 'session' }]]),
    ).toEqual({
      version: '1.18.0',
      maxPreparedStatements: null,
    });
  });

  test('applyOnEveryProcess runs each process in turn and stops at the first failed check, naming it', async () => {
    // GIVEN process 2 of 3 keeps its old pool size
    const sent: number[] = [];
    const run: AdminRun = (i) => {
      sent.push(i);
      return Promise.resolve([[], [], dbs({ bench: i === 1 ? '4' : '5' })]);
    };
    // WHEN / THEN
    await expect(
      applyOnEveryProcess(run, 3, pgbouncerDriver.admin.setPoolSize(5, ['bench']), (i) => `process ${i + 1}`),
    ).rejects.toThrow('process 2 did not apply pool size 5 to bench (SHOW DATABASES says 4)');
    expect(sent).toEqual([0, 1]);
  });
});

describe('PgBouncer stats into the pooler-metrics schema', () => {
  test('processes are summed per database; maxwait is the longest; a counter missing anywhere is unknown', () => {
    // GIVEN two processes, the second without total_wait_time
    const p0 = [
      [{ database: 'bench', cl_active: '3', sv_active: '2', maxwait: '1', maxwait_us: '500000' }],
      [{ database: 'bench', total_xact_count: '100', total_wait_time: '7' }],
    ];
    const p1 = [
      [{ database: 'bench', cl_active: '4', sv_active: '1', maxwait: '0', maxwait_us: '250000' }],
      [{ database: 'bench', total_xact_count: '50' }],
    ];
    // WHEN
    const [bench, session] = pgbouncerDriver.stats.parse([p0, p1], ['bench', 'bench_session']);
    // THEN
    expect(bench).toMatchObject({ database: 'bench', maxWaitMs: 1500, transactions: 150, waitTimeUs: null });
    expect(bench?.gauges).toMatchObject({ cl_active: 7, sv_active: 3, cl_waiting: 0 });
    // a pool not used yet: gauges truly 0, counters unknown
    expect(session).toMatchObject({
      database: 'bench_session',
      maxWaitMs: 0,
      transactions: null,
      waitTimeUs: null,
    });
  });
});

describe('the pooler endpoint schema', () => {
  test('an output written before products existed is a PgBouncer', () => {
    const { product, ...old } = poolerEndpoint();
    expect(product).toBe('pgbouncer');
    expect(poolerEndpointSchema.parse(old).product).toBe('pgbouncer');
  });

  test.each([
    [{ adminPorts: [6440] }, 'adminPorts', 'one admin port per process'],
    [{ poolModes: ['statement'] }, 'poolModes.0', ''],
    [{ product: 'pgdog' }, 'product', ''],
    [{ processes: 33, adminPorts: Array.from({ length: 33 }, (_, i) => 6440 + i) }, 'processes', ''],
  ])('PoolerEndpoints with %j names %s', (over, field, why) => {
    const json = JSON.stringify({ bouncer: { ...poolerEndpoint(), ...over } });
    expect(() => parsePoolerEndpoints(json)).toThrow(
      new RegExp(
        `^output PoolerEndpoints\\.bouncer\\.${field.replace('.', '\\.')} is missing or malformed: .*${why}`,
      ),
    );
  });

  test('the key and the name must agree', () => {
    const json = JSON.stringify({ other: poolerEndpoint() });
    expect(() => parsePoolerEndpoints(json)).toThrow(
      'output PoolerEndpoints.other.name is missing or malformed: "bouncer"',
    );
  });
});

describe('how the pooler host installs a release', () => {
  test('the pinned tarball is checked against its published SHA-256 before it is built', () => {
    const release = pgbouncerDriver.releases[0];
    if (!release) throw new Error('PgBouncer has releases');
    const lines = pgbouncerDriver.host.installCommands(release).join('\n');
    expect(lines).toContain(`echo '${release.sha256}  pgbouncer-${release.version}.tar.gz'`);
    expect(lines.indexOf('sha256sum -c')).toBeLessThan(lines.indexOf('./configure'));
    expect(lines).toContain(`${pgbouncerDriver.host.binaryPath} --version`);
  });
});

describe('what the pooler host writes and starts for PgBouncer', () => {
  const config: PoolerHostConfig = {
    name: 'bouncer',
    product: 'pgbouncer',
    placement: 'dedicated',
    region: 'eu-west-1',
    dbSecretArn: 'arn:db',
    adminSecretArn: 'arn:admin',
    serverHost: 'writer.example',
    serverPort: 5432,
    listenAddr: '0.0.0.0',
    poolModes: ['transaction', 'session'],
    processes: 2,
    poolPercent: 90,
    sharedBy: 1,
    maxPreparedStatements: 200,
    tls: true,
    binaryPath: '/usr/local/bin/pgbouncer',
    version: '1.25.2',
  };

  test('the userlist (0600) and one ini per process and generation, as renderPgbouncerIni writes them', () => {
    // GIVEN / WHEN
    const files = pgbouncerDriver.host.render({
      config,
      root: '/r',
      dataPort: 6432,
      poolSizePerProcess: 10,
      dbname: 'bench',
      dbUser: { username: 'master', password: 'pw"1' },
      adminUser: { username: 'pgbouncer_admin', password: 'pw2' },
      workerThreads: 1,
      random: (n) => Buffer.alloc(n, 7),
    });
    // THEN
    const p = poolerPaths('bouncer', '/r');
    expect(files.map((f) => [f.path, f.mode])).toEqual([
      ['/r/etc/proxylab/pgbouncer/bouncer.userlist', 0o600],
      ['/r/etc/proxylab/pgbouncer/bouncer-0.ini', 0o644],
      ['/r/etc/proxylab/pgbouncer/bouncer-1.ini', 0o644],
      // the rolling restart's second generation of each process
      ['/r/etc/proxylab/pgbouncer/bouncer-0r.ini', 0o644],
      ['/r/etc/proxylab/pgbouncer/bouncer-1r.ini', 0o644],
    ]);
    expect(files[0]?.text).toBe('"master" "pw""1"\n"pgbouncer_admin" "pw2"\n');
    expect(files[2]?.text).toBe(
      renderPgbouncerIni({
        header: 'written by proxylab pooler bootstrap for bouncer',
        version: '1.25.2',
        processIndex: 1,
        processes: 2,
        listenAddr: '0.0.0.0',
        listenPort: 6432,
        socketDirs: [p.socketDir(0), p.socketDir(1)],
        server: { host: 'writer.example', port: 5432, dbname: 'bench' },
        poolModes: ['transaction', 'session'],
        defaultPoolSize: 10,
        maxPreparedStatements: 200,
        authType: 'scram-sha-256',
        authFile: p.userlist,
        adminUsers: ['pgbouncer_admin'],
        statsUsers: ['pgbouncer_admin'],
        serverTlsSslmode: 'require',
        clientTls: { keyFile: p.tlsKey, certFile: p.tlsCert },
        logFile: p.logFile(1),
        pidFile: p.pidFile(1),
        maxClientConnections: 10000,
        reusePort: true,
      }),
    );
    expect(files[2]?.text).toMatch(/^client_tls_key_file = \/r\/etc\/proxylab\/pgbouncer\/bouncer\.key$/m);
    expect(files[2]?.text).toMatch(/^peer_id = 2$/m);
    // generation 1 of process 1: its own socket directory, pid file and log; process 0's socket as its peer
    const r = poolerPaths('bouncer', '/r', true);
    expect(r.socketDir(1)).toBe('/r/run/proxylab-pgb/bouncer-1r');
    expect(files[4]?.text).toMatch(/^unix_socket_dir = \/r\/run\/proxylab-pgb\/bouncer-1r$/m);
    expect(files[4]?.text).toMatch(/^pidfile = \/r\/run\/proxylab-pgb\/bouncer-1r\/pgbouncer\.pid$/m);
    expect(files[4]?.text).toMatch(/^logfile = \/r\/var\/log\/proxylab\/pgbouncer-bouncer-1r\.log$/m);
    expect(files[4]?.text).toMatch(/^1 = host=\/r\/run\/proxylab-pgb\/bouncer-0 port=6432$/m);
    expect(files[4]?.text).toMatch(/^so_reuseport = 1$/m);
    expect(pgbouncerDriver.host.rollingGeneration?.processUnit('bouncer', 1)).toBe(
      'proxylab-pgbouncer@bouncer-1r.service',
    );
  });

  test('its template unit, the unit instance of each process, and the versions it reads', () => {
    const units = pgbouncerDriver.host.units(config, 'pgbouncer');
    expect(units.map((u) => u.file)).toEqual(['proxylab-pgbouncer@.service']);
    expect(units[0]?.text).toMatch(
      /^ExecStart=\/usr\/local\/bin\/pgbouncer \/etc\/proxylab\/pgbouncer\/%i\.ini$/m,
    );
    expect(pgbouncerDriver.host.processUnit('bouncer', 3)).toBe('proxylab-pgbouncer@bouncer-3.service');
    expect(pgbouncerDriver.host.layout('bouncer').socketFile(1, 6432)).toBe(
      '/run/proxylab-pgb/bouncer-1/.s.PGSQL.6432',
    );
    expect(pgbouncerDriver.host.dataPort).toBe(6432);
    expect(pgbouncerDriver.host.parseVersion('PgBouncer 1.25.2\nlibevent 2.1.12-stable')).toBe('1.25.2');
    expect(pgbouncerDriver.host.parseVersion('no version here')).toBeNull();
  });
});
