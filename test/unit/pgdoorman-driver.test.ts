/**
 * PgDoorman's driver fed with what the 3.10.7 binary answered (test/fixtures/pgdoorman/), its
 * configuration writer, its host files and install lines, and the local `--poolers` list.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyOnEveryProcess, type AdminRow } from '../../lib/poolers/driver';
import type { PoolerHostConfig } from '../../lib/poolers/host-config';
import {
  md5Verifier,
  renderPgdoormanToml,
  scramVerifier,
  withPoolSize,
  type PgdoormanTomlInput,
} from '../../lib/poolers/pgdoorman/config';
import { pgdoormanDriver as d } from '../../lib/poolers/pgdoorman/driver';
import { pgdoormanPaths } from '../../lib/poolers/pgdoorman/host';
import { pgdoormanInstallCommands } from '../../lib/poolers/pgdoorman/install';
import { PGDOORMAN_RELEASES } from '../../lib/poolers/pgdoorman/releases';
import { parsePoolerSpecs } from '../../lib/local/pooler';
import { getSuite } from '../../lib/suite/catalog';
import { expandSuite } from '../../lib/suite/expand';
import { describeTarget, poolerTarget } from '../../lib/suite/targets';

const CAPTURE = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'pgdoorman', 'admin-3.10.7.json'), 'utf8'),
) as Record<string, unknown>;
const rows = (k: string): AdminRow[] => CAPTURE[k] as AdminRow[];

describe('PgDoorman capabilities by version', () => {
  test.each([
    ['3.10.7', true, true],
    ['3.3.1', true, true],
    ['3.3.0', true, false],
    ['1.7.6', false, false],
  ] as const)(
    '%s: prepared statements in transaction mode %s, graceful binary upgrade %s',
    (v, prepared, upgrade) => {
      const c = d.capabilities(v);
      expect(c.preparedStatementsInTransactionMode).toBe(prepared);
      expect(c.gracefulBinaryUpgrade).toBe(upgrade);
      expect(c.singleThreaded).toBe(false);
      expect(c.runtimePoolResize).toBe('config-reload');
    },
  );

  test('an unknown version is assumed to have neither', () => {
    expect(d.capabilities(null)).toMatchObject({
      preparedStatementsInTransactionMode: false,
      gracefulBinaryUpgrade: false,
    });
  });

  test('cores per process are its worker threads (PgDoorman’s default 4 when unknown)', () => {
    expect(d.coresPerProcess(8)).toBe(8);
    expect(d.coresPerProcess(null)).toBe(4);
  });
});

describe('PgDoorman admin statements, checked against answers captured from 3.10.7', () => {
  test('the probe reads SHOW VERSION; the prepared-statement cache comes from the configuration', () => {
    expect(d.admin.probe.statements).toEqual(['SHOW VERSION']);
    expect(d.admin.probe.parse([rows('showVersion')])).toEqual({
      version: '3.10.7',
      maxPreparedStatements: null,
    });
    expect(d.admin.probe.preparedStatementsFromConfig).toBe(true);
  });

  test('reset is RECONNECT per pool (KILL is documented but answered with a FATAL by 3.10.7)', () => {
    expect(d.admin.reset(['bench', 'bench_session']).statements).toEqual([
      'RECONNECT bench',
      'RECONNECT bench_session',
    ]);
    expect(String(CAPTURE.killAnswer)).toMatch(/FATAL: +Unsupported query/);
  });

  test('resize: the file rewritten, RELOAD, then SHOW POOLS must report the new pool_size for every pool', () => {
    // GIVEN
    const op = d.admin.setPoolSize(7, ['bench', 'bench_session']);
    // THEN
    expect(op.statements).toEqual(['RELOAD', 'SHOW POOLS']);
    expect(op.rewriteConfig?.('pool_size = 5\nx = 1\npool_size = 5\n')).toBe(
      'pool_size = 7\nx = 1\npool_size = 7\n',
    );
    const answer = CAPTURE.reloadThenShowPoolsAfterPoolSize7 as AdminRow[][];
    expect(op.check(answer)).toBeNull();
    expect(d.admin.setPoolSize(8, ['bench']).check(answer)).toBe(
      'did not apply pool size 8 to bench (SHOW POOLS says 7)',
    );
    expect(d.admin.setPoolSize(7, ['other']).check(answer)).toBe(
      'did not apply pool size 7 to other (SHOW POOLS says nothing)',
    );
  });

  test.each([[0], [-2], [2.5]])('pool size %p is refused before anything is sent', (size) => {
    expect(() => d.admin.setPoolSize(size, ['bench'])).toThrow(/positive integer/);
  });

  test('an adapter that cannot rewrite the file is refused before any statement is sent', async () => {
    // GIVEN a run that would answer anything
    const sent: string[][] = [];
    const run = (_i: number, s: readonly string[]): Promise<AdminRow[][]> => {
      sent.push([...s]);
      return Promise.resolve([]);
    };
    // WHEN the resize is applied without a rewrite
    await expect(
      applyOnEveryProcess(run, 1, d.admin.setPoolSize(7, ['bench']), () => 'PgDoorman x'),
    ).rejects.toThrow(/PgDoorman x needs its configuration file rewritten .* which this adapter cannot do/);
    // THEN nothing reached the console
    expect(sent).toEqual([]);
  });

  test('there is no run-time switch for prepared statements', () => {
    expect(() => d.admin.setMaxPreparedStatements(0)).toThrow(/no run-time switch/);
  });

  test('relay connections to its unix socket do not ask for TLS (PgDoorman answers the request with an error)', () => {
    expect(d.admin.relaySslmode).toBe('disable');
  });
});

describe('PgDoorman stats into the pooler-metrics schema', () => {
  test('SHOW POOLS / SHOW STATS under load, as captured', () => {
    const [bench, session] = d.stats.parse(
      [[rows('showPoolsUnderLoad'), rows('showStats')]],
      ['bench', 'bench_session'],
    );
    expect(bench).toEqual({
      database: 'bench',
      gauges: { cl_active: 3, cl_waiting: 5, sv_active: 3, sv_idle: 2, sv_used: 0, sv_login: 0 },
      maxWaitMs: 10.728,
      transactions: 78730,
      waitTimeUs: 15972158,
    });
    expect(session?.transactions).toBe(0);
    expect(session?.gauges.cl_active).toBe(0);
  });

  test('a counter a process did not report is unknown (null), never 0', () => {
    const [bench] = d.stats.parse([[rows('showPoolsUnderLoad'), [{ database: 'bench' }]]], ['bench']);
    expect(bench?.transactions).toBeNull();
    expect(bench?.waitTimeUs).toBeNull();
  });
});

describe('PgDoorman lifecycle semantics by version (for the disruption lab)', () => {
  test.each([
    ['3.10.7', 'SIGUSR2', 'UPGRADE', true],
    ['3.3.1', 'SIGUSR2', 'UPGRADE', false],
    ['3.3.0', 'SIGINT', null, false],
  ] as const)('%s: binary upgrade by %s / %s, idle clients migrate: %s', (v, signal, statement, migrates) => {
    expect(d.lifecycle.restart(v)).toEqual({
      kind: 'binary-upgrade',
      signal,
      adminStatement: statement,
      migratesIdleClients: migrates,
      drainTimeoutMs: 10000,
    });
  });

  test('stop is SIGTERM (immediate); no signal only drains; PAUSE since 3.3.2 does not drain servers', () => {
    expect(d.immediateStopSignals(null)).toEqual(['SIGTERM']);
    expect(d.lifecycle.gracefulStopSignals('3.10.7')).toEqual([]);
    expect(d.lifecycle.reload).toEqual({ signal: 'SIGHUP', adminStatement: 'RELOAD' });
    expect(d.lifecycle.pause('3.10.7', 'bench')).toEqual({
      pause: ['PAUSE bench'],
      resume: ['RESUME bench'],
      drainsServers: false,
    });
    expect(d.lifecycle.pause('3.3.1', null)).toBeNull();
  });
});

describe('PgDoorman configuration (TOML)', () => {
  const base: PgdoormanTomlInput = {
    version: '3.10.7',
    listenAddr: '0.0.0.0',
    listenPort: 6432,
    unixSocketDir: '/run/x',
    server: { host: 'writer.example', port: 5432, dbname: 'bench' },
    poolModes: ['transaction', 'session'],
    poolSize: 40,
    workerThreads: 4,
    preparedStatementsCacheSize: 8192,
    clientAuth: 'scram-sha-256',
    clientCidr: '0.0.0.0/0',
    user: { username: 'master', verifier: 'SCRAM-SHA-256$4096:c2FsdA==$a:b', serverPassword: 'p"w\\1' },
    admin: { username: 'pgbouncer_admin', password: 'adm' },
    serverTlsMode: 'require',
    clientTls: { keyFile: '/k', certFile: '/c' },
    maxClientConnections: 10000,
  };

  test('TLS to the server and from clients, SCRAM, one pool per mode with its size, quoting escaped', () => {
    const text = renderPgdoormanToml(base);
    for (const line of [
      'worker_threads = 4',
      'server_tls_mode = "require"',
      'tls_mode = "require"',
      'prepared_statements = true',
      'prepared_statements_cache_size = 8192',
      'hostssl all all 0.0.0.0/0 scram-sha-256',
      'local all all scram-sha-256',
      '[pools.bench]',
      '[pools.bench_session]',
      'server_database = "bench"',
      'pool_mode = "session"',
      'server_password = "p\\"w\\\\1"',
    ])
      expect(text.split('\n')).toContain(line);
    expect(text.match(/^pool_size = 40$/gm)).toHaveLength(2);
    // no timeout of the kit's own: PgDoorman's default query_wait_timeout (5 s) unless the lab sets one
    expect(text).not.toMatch(/^query_wait_timeout/m);
  });

  test('cache size 0 turns prepared statements off; no client TLS: tls_mode disable and host rules', () => {
    const text = renderPgdoormanToml({ ...base, preparedStatementsCacheSize: 0, clientTls: null });
    expect(text).toContain('prepared_statements = false');
    expect(text).not.toContain('prepared_statements_cache_size');
    expect(text).toContain('tls_mode = "disable"');
    expect(text).toContain('host all all 0.0.0.0/0 scram-sha-256');
  });

  test.each([
    [
      'a line break in a value',
      { admin: { username: 'a', password: 'x\ny = 1' } },
      /must not contain a line break/,
    ],
    ['pool size 0', { poolSize: 0 }, /pool_size must be an integer ≥ 1, got 0/],
    ['no pool mode', { poolModes: [] }, /at least one pool mode/],
    ['a CIDR that is not one', { clientCidr: 'any' }, /not an IPv4 CIDR/],
  ])('%s is refused', (_what, change, message) => {
    expect(() => renderPgdoormanToml({ ...base, ...(change as Partial<PgdoormanTomlInput>) })).toThrow(
      message,
    );
  });

  test('withPoolSize refuses a text it did not write', () => {
    expect(() => withPoolSize('port = 1\n', 5)).toThrow(/no pool_size line/);
  });

  test('verifiers: SCRAM-SHA-256 per RFC 7677 (pbkdf2 + HMAC), md5 as PostgreSQL stores it', () => {
    // md5('pencil' + 'user'), and a SCRAM verifier PgDoorman 3.10.7 accepted for password "secretpw"
    expect(md5Verifier('user', 'pencil')).toMatch(/^md5[0-9a-f]{32}$/);
    expect(scramVerifier('secretpw', Buffer.from('0123456789abcdef'))).toBe(
      'SCRAM-SHA-256$4096:MDEyMzQ1Njc4OWFiY2RlZg==$' +
        scramVerifier('secretpw', Buffer.from('0123456789abcdef')).split('$')[2],
    );
    expect(scramVerifier('secretpw', Buffer.from('0123456789abcdef'))).not.toBe(
      scramVerifier('secretpw', Buffer.from('fedcba9876543210')),
    );
    expect(() => scramVerifier('x', Buffer.alloc(4))).toThrow(/salt/);
  });
});

describe('PgDoorman on a pooler host', () => {
  const config: PoolerHostConfig = {
    name: 'doorman',
    product: 'pgdoorman',
    placement: 'dedicated',
    region: 'eu-west-1',
    dbSecretArn: 'arn:db',
    adminSecretArn: 'arn:admin',
    serverHost: 'writer.example',
    serverPort: 5432,
    listenAddr: '0.0.0.0',
    poolModes: ['transaction'],
    processes: 1,
    workerThreads: null,
    poolPercent: 10,
    sharedBy: 1,
    maxPreparedStatements: 8192,
    tls: true,
    binaryPath: '/usr/local/bin/pg_doorman',
    version: '3.10.7',
  };
  const input = {
    config,
    root: '/r',
    dataPort: 6432,
    poolSizePerProcess: 40,
    dbname: 'bench',
    dbUser: { username: 'master', password: 'pw' },
    adminUser: { username: 'pgbouncer_admin', password: 'adm' },
    workerThreads: 2,
    random: (n: number) => Buffer.alloc(n, 1),
  };

  test('one configuration file, 0600 (it holds passwords), with the salted verifier and no plain client password', () => {
    const files = d.host.render(input);
    expect(files.map((f) => [f.path, f.mode])).toEqual([['/r/etc/proxylab/pgdoorman/doorman-0.toml', 0o600]]);
    const text = files[0]?.text ?? '';
    expect(text).toContain(`password = "${scramVerifier('pw', Buffer.alloc(16, 1))}"`);
    expect(text).toContain('unix_socket_dir = "/r/run/proxylab-pgd/doorman-0"');
    expect(text).toContain('worker_threads = 2');
    expect(text).toContain('tls_certificate = "/r/etc/proxylab/pgdoorman/doorman.crt"');
  });

  test('more than one process is refused', () => {
    expect(() => d.host.render({ ...input, config: { ...config, processes: 2 } })).toThrow(
      /one multithreaded process/,
    );
  });

  test('the unit: Type=notify, stop with SIGTERM, reload = SIGHUP, the pid file the agent reads, never SIGINT', () => {
    const unit = d.host.units({ binaryPath: '/usr/local/bin/pg_doorman' }, 'pgdoorman')[0]?.text ?? '';
    expect(unit).toContain('Type=notify');
    expect(unit).toContain('KillSignal=SIGTERM');
    expect(unit).toContain('ExecReload=/bin/kill -HUP $MAINPID');
    expect(unit).toContain('ExecStart=/usr/local/bin/pg_doorman /etc/proxylab/pgdoorman/%i.toml');
    expect(unit).toContain(`> ${pgdoormanPaths('x').pidFile(0).replace('x-0', '%i')}`);
    expect(unit).not.toMatch(/SIGINT/);
  });

  test('install: the tag’s commit and rustup-init’s SHA-256 are checked before anything from them runs', () => {
    const release = PGDOORMAN_RELEASES[0];
    if (!release) throw new Error('no release');
    const lines = d.host.installCommands(release);
    const at = (re: RegExp): number => lines.findIndex((l) => re.test(l));
    expect(at(/sha256sum -c --strict/)).toBeGreaterThan(-1);
    expect(at(/sha256sum -c --strict/)).toBeLessThan(at(/rustup-init" -y/));
    expect(at(/9b8ba27ee0846947febd65c3c1b05839207696fc/)).toBeGreaterThan(at(/git clone/));
    expect(at(/9b8ba27ee0846947febd65c3c1b05839207696fc/)).toBeLessThan(
      at(/cargo" build --release --locked/),
    );
    expect(lines).toContain("/usr/local/bin/pg_doorman --version | grep -F 'pg_doorman 3.10.7'");
    for (const b of release.buildInputs) expect(lines.join('\n')).toContain(`rustup_sha256='${b.sha256}'`);
  });

  test('install: built on the root volume (/var/tmp), never in AL2023’s tmpfs /tmp, compilers’ TMPDIR included', () => {
    // GIVEN the pinned release
    const release = PGDOORMAN_RELEASES[0];
    if (!release) throw new Error('no release');
    // WHEN its install lines are rendered
    const lines = d.host.installCommands(release);
    // THEN the build directory is made under /var/tmp, and rustup and cargo get a TMPDIR inside it
    expect(lines).toContain("pgdoorman_src=$(mktemp -d '/var/tmp/proxylab-pgdoorman.XXXXXXXX')");
    const tmpdir = 'TMPDIR="${pgdoorman_src}/tmp"';
    const at = (re: RegExp): number => lines.findIndex((l) => re.test(l));
    expect(at(/^mkdir "\$\{pgdoorman_src\}\/tmp"$/)).toBeGreaterThan(at(/mktemp -d/));
    expect(lines[at(/rustup-init" -y/)]).toContain(tmpdir);
    expect(lines[at(/cargo" build --release/)]).toContain(tmpdir);
    // AND nothing in the lines names /tmp itself (a bare `mktemp -d` would land there)
    expect(lines.filter((l) => /(^|[^r])\/tmp\b/.test(l.replace(/\$\{pgdoorman_src\}\/tmp/g, '')))).toEqual(
      [],
    );
    expect(lines.filter((l) => /mktemp -d\)/.test(l))).toEqual([]);
  });

  test('a build root that is not a plain absolute path is refused', () => {
    const release = PGDOORMAN_RELEASES[0];
    if (!release) throw new Error('no release');
    expect(() => pgdoormanInstallCommands(release, { kind: 'upstream' }, "/var/tmp'; rm -rf /")).toThrow(
      /build root must be an absolute path/,
    );
    expect(() => pgdoormanInstallCommands(release, { kind: 'upstream' }, 'var/tmp')).toThrow(/build root/);
  });

  test('a malformed release entry (shell in the tag) is refused', () => {
    const release = PGDOORMAN_RELEASES[0];
    if (!release) throw new Error('no release');
    expect(() => d.host.installCommands({ ...release, tag: "v1'; rm -rf /" })).toThrow(/malformed/);
    expect(() => d.host.installCommands({ ...release, gitCommit: 'abc' })).toThrow(/malformed/);
  });
});

describe('the descriptor of a PgDoorman target', () => {
  test('its transaction pool carries prepared statements while the cache is on, resizes by reload, no switch', () => {
    const ref = poolerTarget('pgdoorman', 'doorman', 'transaction');
    const on = describeTarget(ref, {
      version: '3.10.7',
      maxPreparedStatements: 8192,
      processes: 1,
      workerThreads: 4,
    });
    expect(on.capabilities).toMatchObject({
      carriesPreparedStatements: 'yes',
      resizablePool: 'pgdoorman-reload',
      preparedStatementsSwitch: null,
    });
    expect(on.settings).toEqual({ maxPreparedStatements: 8192, processes: 1, workerThreads: 4 });
    expect(
      describeTarget(ref, { version: '3.10.7', maxPreparedStatements: 0 }).capabilities
        .carriesPreparedStatements,
    ).toBe('no');
  });

  test('an adapter that cannot rewrite its file says so: the pool is fixed, with the reason', () => {
    const ref = poolerTarget('pgdoorman', 'doorman', 'transaction');
    const d2 = describeTarget(ref, {
      version: '3.10.7',
      maxPreparedStatements: 8192,
      poolResizeUnavailable: 'no file access',
    });
    expect(d2.capabilities.resizablePool).toBeNull();
    expect(d2.capabilities.fixedPoolReason).toBe('no file access');
  });
});

describe('local --poolers', () => {
  test.each([
    ['pgbouncer', 1, [['pgbouncer', 1, 'pgbouncer']]],
    ['pgbouncer', 3, [['pgbouncer', 3, 'pgbouncer']]],
    [
      'pgbouncer,pgbouncer:2,pgdoorman',
      1,
      [
        ['pgbouncer', 1, 'pgbouncer-1p'],
        ['pgbouncer', 2, 'pgbouncer-2p'],
        ['pgdoorman', 1, 'pgdoorman'],
      ],
    ],
    [' pgdoorman ', 4, [['pgdoorman', 1, 'pgdoorman']]],
  ] as const)('%p with %p default processes', (text, n, want) => {
    const { specs, problems } = parsePoolerSpecs(text, n);
    expect(problems).toEqual([]);
    expect(specs.map((s) => [s.product, s.processes, s.instance])).toEqual(want);
  });

  test.each([
    ['pgcat', /"pgcat" is not <product>\[:<processes>\]/],
    ['pgdoorman:2', /PgDoorman runs one multithreaded process/],
    ['pgbouncer:0', /processes must be 1–32/],
    ['pgbouncer:2,pgbouncer:2', /listed twice/],
    ['', /at least one of pgbouncer, pgdoorman/],
  ])('%p is refused naming the entry', (text, message) => {
    expect(parsePoolerSpecs(text).problems.join('\n')).toMatch(message);
  });
});

describe('a pool-percent sweep on a pool this run cannot resize', () => {
  test('its cells are planned as not available with the reason; a resizable one runs them', () => {
    // GIVEN E4's sweep and two PgDoorman targets, one of which the adapter cannot resize
    const ref = (n: string) => ({ kind: 'pgdoorman-transaction' as const, name: n });
    const fixed = describeTarget(ref('fixed'), {
      version: '3.10.7',
      maxPreparedStatements: 8192,
      poolResizeUnavailable: 'the runners reach only its admin console',
    });
    const free = describeTarget(ref('free'), { version: '3.10.7', maxPreparedStatements: 8192 });
    // WHEN
    const steps = expandSuite(getSuite('e4'), [
      { ref: ref('fixed'), descriptor: fixed, maxConnections: 400, poolSize: 40 },
      { ref: ref('free'), descriptor: free, maxConnections: 400, poolSize: 40 },
    ]);
    // THEN
    const of = (n: string) => steps.filter((s) => s.target.name === n);
    expect(of('fixed').length).toBeGreaterThan(0);
    expect(new Set(of('fixed').map((s) => s.unavailable))).toEqual(
      new Set(['pool of fixed cannot be resized at run time: the runners reach only its admin console']),
    );
    expect(of('free').every((s) => s.unavailable === null)).toBe(true);
  });
});
