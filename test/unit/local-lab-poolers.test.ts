/**
 * `local --lab` with variants: one local pooler per lab pooler (its name, product, settings, pinned
 * version), which binary runs it and what a different version changes, disruption windows sized
 * from the targets' settings, and the pure parts of PgDoorman's disruptions (re-pointing, which
 * process a binary upgrade started). Nothing here starts a server.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cacheRoots, chooseBinary, poolerRunLine, versionChange } from '../../lib/local/adapters';
import { poolerUnavailable } from '../../lib/local/disruptions';
import { recoveryBoundMs, RECOVERY_MARGIN_SEC, sizeRecoveryWindows } from '../../lib/local/lab-poolers';
import { upgradedPid } from '../../lib/local/pgdoorman-upgrade';
import { localTargetsOf, resumeCommand, validateLocalInput } from '../../lib/local/run-local';
import { withServerPort } from '../../lib/poolers/pgdoorman/config';
import { pgdoormanDriver } from '../../lib/poolers/pgdoorman/driver';
import { productEntry } from '../../lib/products';
import { describeTarget, poolerTarget } from '../../lib/suite/targets';
import { scratchDir } from '../helpers/scratch';

const ROOT = path.resolve(__dirname, '..', '..');
const NOW = new Date('2026-11-28T12:00:00Z');

/** own-workload.json with two PgBouncer variants and a PgDoorman instead of its one PgBouncer. */
function variantsLab(): string {
  const lab = JSON.parse(fs.readFileSync(path.join(ROOT, 'labs', 'own-workload.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  delete lab.$schema;
  const common = { placement: 'dedicated', instanceType: 'c7g.large', poolPercent: 20 };
  lab.poolers = [
    { ...common, name: 'bouncer-default', kind: 'pgbouncer', version: '1.25.2', poolModes: ['transaction'] },
    {
      ...common,
      name: 'bouncer-fast-retry',
      kind: 'pgbouncer',
      version: '1.25.2',
      poolModes: ['transaction'],
      settings: { server_login_retry: 2 },
    },
    {
      ...common,
      name: 'doorman',
      kind: 'pgdoorman',
      version: '3.10.7',
      poolModes: ['transaction', 'session'],
    },
  ];
  lab.proxies = [];
  const dir = scratchDir('proxylab-variants-');
  fs.writeFileSync(path.join(dir, 'variants.json'), JSON.stringify(lab));
  fs.writeFileSync(
    path.join(dir, 'own-workload.sql'),
    fs.readFileSync(path.join(ROOT, 'labs', 'own-workload.sql')),
  );
  return path.join(dir, 'variants.json');
}

describe('local --lab: one local pooler per lab pooler', () => {
  test('two PgBouncer variants and a PgDoorman: each its own pooler, settings and version, each target its own rows', () => {
    // GIVEN a lab with two PgBouncer variants and a PgDoorman
    const file = variantsLab();
    // WHEN it is validated for a local run
    const opts = validateLocalInput({ lab: file, suite: 'disruption' }, ROOT, NOW);
    // THEN every lab pooler has its local pooler, named as in the lab, with the lab's settings and version
    expect(opts.poolers).toEqual([
      { product: 'pgbouncer', processes: 1, instance: 'bouncer-default', settings: {}, version: '1.25.2' },
      {
        product: 'pgbouncer',
        processes: 1,
        instance: 'bouncer-fast-retry',
        settings: { server_login_retry: 2 },
        version: '1.25.2',
      },
      { product: 'pgdoorman', processes: 1, instance: 'doorman', settings: {}, version: '3.10.7' },
    ]);
    // and the lab's targets (their modes only) are the local targets, under the lab's names
    expect(localTargetsOf(opts.lab, opts.poolers).map((r) => r.name)).toEqual([
      'direct',
      'bouncer-default-transaction',
      'bouncer-fast-retry-transaction',
      'doorman-transaction',
      'doorman-session',
    ]);
    expect(opts.lab?.counterparts.every((c) => c.local?.name === c.lab.name)).toBe(true);
    // the resume command is the lab's, without --poolers
    expect(resumeCommand(opts)).not.toContain('--poolers');
  });

  test('--poolers with --lab is refused, naming the lab poolers', () => {
    expect(() => validateLocalInput({ lab: variantsLab(), poolers: 'pgbouncer' }, ROOT, NOW)).toThrow(
      /--poolers and --lab: a lab runs its own poolers \(bouncer-default, bouncer-fast-retry, doorman\)/,
    );
  });

  test('without --lab: one PgBouncer named pgbouncer, as before', () => {
    const opts = validateLocalInput({ runId: 'r' }, ROOT, NOW);
    expect(opts.poolers).toEqual([{ product: 'pgbouncer', processes: 1, instance: 'pgbouncer' }]);
  });
});

describe('which binary runs a pinned version', () => {
  const os118 = { file: '/usr/sbin/pgbouncer', version: '1.18.0' };
  const cached = [{ file: '/var/cache/proxylab/pgbouncer-1.24.1/bin/pgbouncer', version: '1.24.1' }];

  test.each([
    ['the exact version when any candidate has it', '1.24.1', {}, cached[0]],
    ['else the newest there is', '1.25.2', {}, cached[0]],
    [
      'else the one $PROXYLAB_PGBOUNCER names (the user chose it)',
      '1.25.2',
      { PROXYLAB_PGBOUNCER: '/x' },
      os118,
    ],
    ['nothing pinned: the one found, as before', undefined, {}, os118],
  ])('%s', (_what, version, env, expected) => {
    expect(chooseBinary({ product: 'pgbouncer', version }, os118, cached, env)).toEqual(expected);
  });

  test("the cache the preflight builds into: root's is /var/cache (the servers' user cannot enter /root)", () => {
    expect(cacheRoots({}, 0)).toEqual(['/var/cache/proxylab']);
    expect(cacheRoots({ XDG_CACHE_HOME: '/c' }, 0)).toEqual(['/c/proxylab']);
    expect(cacheRoots({ XDG_CACHE_HOME: 'relative' }, 1000)[0]).toMatch(/\/\.cache\/proxylab$/);
  });

  test('no binary at all: null', () => {
    expect(chooseBinary({ product: 'pgdoorman', version: '3.10.7' }, null, [])).toBeNull();
  });

  test("a different version names the cells it changes, from the product's entry", () => {
    expect(versionChange('pgbouncer', '1.25.2', '1.18.0')).toEqual([
      'prepared-statement cells: not available on PgBouncer 1.18.0 (needs ≥ 1.21)',
      'pooler-restart: its old process keeps-listening (1.25.2: stops-listening)',
      'session-state cells: tracked parameters client_encoding,datestyle,timezone,standard_conforming_strings,application_name (1.25.2: client_encoding,datestyle,timezone,standard_conforming_strings,application_name,intervalstyle)',
    ]);
    expect(versionChange('pgbouncer', '1.25.2', '1.24.1')).toEqual([]);
    expect(versionChange('pgbouncer', '1.25.2', '1.25.2')).toEqual([]);
  });

  test('one line per pooler: version asked and run, the settings', () => {
    expect(
      poolerRunLine(
        {
          product: 'pgbouncer',
          processes: 1,
          instance: 'bouncer-fast-retry',
          version: '1.25.2',
          settings: { server_login_retry: 2 },
        },
        cached[0]!,
      ),
    ).toBe(
      "  bouncer-fast-retry: PgBouncer 1.24.1 instead of 1.25.2 (the lab's; not on this machine: `npm run preflight` builds one into the proxylab cache, or set $PROXYLAB_PGBOUNCER); no cell depends on the difference; settings server_login_retry = 2",
    );
    expect(
      poolerRunLine(
        { product: 'pgbouncer', processes: 1, instance: 'b', version: '1.18.0', settings: {} },
        os118,
      ),
    ).toBe("  b: PgBouncer 1.18.0 (the version the lab pins); settings: the product's defaults");
    expect(poolerRunLine({ product: 'pgbouncer', processes: 1, instance: 'pgbouncer' }, os118)).toBeNull();
  });
});

describe('recovery windows from the targets settings', () => {
  const pgb = (name: string, settings: Record<string, number>) =>
    describeTarget(poolerTarget('pgbouncer', name, 'transaction'), {
      version: '1.24.1',
      placement: 'local',
      settings,
    });
  const doorman = describeTarget(poolerTarget('pgdoorman', 'doorman', 'transaction'), {
    version: '3.10.7',
    placement: 'local',
    settings: {},
  });

  test("each product's bound: PgBouncer's server_login_retry, PgDoorman's connect_timeout, the longest wins", () => {
    expect(productEntry('pgbouncer').recoveryBoundMs?.(pgb('a', {}).settings.effective ?? {})).toBe(15_000);
    expect(recoveryBoundMs([pgb('b', { server_login_retry: 2 })])).toBe(2000);
    expect(recoveryBoundMs([doorman])).toBe(3000);
    expect(recoveryBoundMs([pgb('a', {}), pgb('b', { server_login_retry: 2 }), doorman])).toBe(15_000);
  });

  test('a disruption window grows to the bound plus the margin; other scenarios and longer windows stay', () => {
    const suite = {
      name: 's',
      description: 'd',
      scenarios: [
        {
          name: 'x',
          durationSec: 6.5,
          probe: {
            kind: 'disruption',
            warmupSec: 1.5,
            recoverySec: 5,
            clientTimeouts: { connectTimeoutMs: 5000, statementTimeoutMs: 5000 },
          },
        },
        { name: 'y', durationSec: 10, probe: null },
        {
          name: 'z',
          durationSec: 61,
          probe: {
            kind: 'disruption',
            warmupSec: 1,
            recoverySec: 60,
            clientTimeouts: { connectTimeoutMs: 60_000, statementTimeoutMs: 60_000 },
          },
        },
        {
          name: 'w',
          durationSec: 6,
          probe: {
            kind: 'disruption',
            warmupSec: 1,
            recoverySec: 5,
            clientTimeouts: { connectTimeoutMs: 1000, statementTimeoutMs: 2000 },
          },
        },
      ],
    } as unknown as Parameters<typeof sizeRecoveryWindows>[0];
    const sized = sizeRecoveryWindows(suite, [pgb('a', {})]);
    const need = 15 + RECOVERY_MARGIN_SEC;
    expect(
      sized.scenarios.map((s) => [
        s.durationSec,
        s.probe?.kind === 'disruption' ? s.probe.recoverySec : null,
      ]),
    ).toEqual([
      [1.5 + need, need],
      [10, null],
      [61, 60],
      [1 + need, need],
    ]);
    // client timeouts left at the window's default follow the window (a client waits through the
    // recovery it is there to see); ones a scenario chose stay
    const timeouts = sized.scenarios.map((s) =>
      s.probe?.kind === 'disruption' ? s.probe.clientTimeouts : null,
    );
    expect(timeouts[0]).toEqual({ connectTimeoutMs: need * 1000, statementTimeoutMs: need * 1000 });
    expect(timeouts[3]).toEqual({ connectTimeoutMs: 1000, statementTimeoutMs: 2000 });
    // a tuned pooler needs no more than the scenario's own 5 s
    expect(sizeRecoveryWindows(suite, [pgb('b', { server_login_retry: 2 })])).toBe(suite);
  });
});

describe('disruptions act on each target pooler as its product does', () => {
  test("a PgDoorman before 3.3.2 has no PAUSE: 'not available' with the reason; a current one can", () => {
    const old = describeTarget(poolerTarget('pgdoorman', 'd', 'transaction'), {
      version: '3.3.1',
      placement: 'local',
    });
    const cur = describeTarget(poolerTarget('pgdoorman', 'd', 'transaction'), {
      version: '3.10.7',
      placement: 'local',
    });
    expect(poolerUnavailable('pooler-pause', old)).toBe('PgDoorman 3.3.1 has no PAUSE on its admin console');
    expect(poolerUnavailable('pooler-pause', cur)).toBeNull();
    expect(poolerUnavailable('pooler-restart', cur)).toBeNull();
    // a server disruption is not the pooler's to refuse
    expect(poolerUnavailable('postgres-restart', old)).toBeNull();
  });

  test("PgDoorman is re-pointed by rewriting every pool's server_port, then RELOAD", () => {
    const toml =
      '[pools.bench]\nserver_host = "127.0.0.1"\nserver_port = 5432\n\n[pools.bench_session]\nserver_port = 5432\n';
    expect(withServerPort(toml, 6543)).toBe(toml.replace(/5432/g, '6543'));
    expect(() => withServerPort('[general]\n', 6543)).toThrow(/no server_port line/);
    const op = pgdoormanDriver.admin.reload(['bench', 'bench_session'], 6543);
    expect(op.statements).toEqual(['RELOAD', 'SHOW POOLS']);
    expect(op.rewriteConfig?.(toml)).toContain('server_port = 6543');
    expect(op.check([[], [{ database: 'bench' }]])).toBe(
      'bench_session not served after RELOAD (SHOW POOLS)',
    );
    expect(op.check([[], [{ database: 'bench' }, { database: 'bench_session' }]])).toBeNull();
  });

  test('its restart is SIGUSR2, and the new process is the one running its configuration that was not there before', () => {
    expect(pgdoormanDriver.lifecycle.restart('3.10.7')).toMatchObject({
      kind: 'binary-upgrade',
      signal: 'SIGUSR2',
    });
    const procs = [
      { pid: 10, cmdline: '/usr/bin/pg_doorman /tmp/s/doorman/pg_doorman.toml' },
      { pid: 11, cmdline: '/usr/bin/pg_doorman /tmp/s/other/pg_doorman.toml' },
      { pid: 12, cmdline: '/usr/bin/pg_doorman --inherit-fd 7 /tmp/s/doorman/pg_doorman.toml' },
    ];
    expect(upgradedPid(procs, '/tmp/s/doorman/pg_doorman.toml', new Set([10]))).toBe(12);
    expect(upgradedPid(procs, '/tmp/s/doorman/pg_doorman.toml', new Set([10, 12]))).toBeNull();
    // two candidates: not guessed
    expect(upgradedPid(procs, '/tmp/s/doorman/pg_doorman.toml', new Set())).toBeNull();
  });
});
