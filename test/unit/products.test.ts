/**
 * The product registry (lib/products): every product has an entry that owns its kinds, its
 * capabilities by version and its settings catalogue; every catalogue entry is self-consistent (its
 * defaults pass its own check); a lab's settings are checked for the version it pins; the effective
 * settings a descriptor records say whose value each is.
 */
import { PRODUCT_ENTRIES, productEntry } from '../../lib/products';
import { KINDS, PRODUCT_IDS, TARGET_KIND_NAMES } from '../../lib/products/kinds';
import {
  checkSettings,
  defaultAt,
  effectiveSettings,
  formatSetting,
  settingSpec,
  settingText,
  valueProblem,
} from '../../lib/products/settings';
import { PGBOUNCER_SETTINGS } from '../../lib/products/pgbouncer/settings';
import { PGDOORMAN_SETTINGS } from '../../lib/products/pgdoorman/settings';
import { RDS_PROXY_SETTINGS } from '../../lib/products/rds-proxy/settings';
import { versionAtLeast } from '../../lib/products/version';
import { describeTarget, poolerTarget } from '../../lib/suite/targets';
import { renderPgbouncerIni } from '../../lib/poolers/pgbouncer/config';
import { renderPgdoormanToml } from '../../lib/poolers/pgdoorman/config';
import { targetDescriptorSchema } from '../../lib/results/schemas';

describe('the registry', () => {
  test('one entry per product id, and each kind belongs to the entry of its product', () => {
    expect(Object.keys(PRODUCT_ENTRIES).sort()).toEqual([...PRODUCT_IDS].sort());
    for (const kind of TARGET_KIND_NAMES) {
      const entry = productEntry(KINDS[kind].product);
      expect(entry.kinds).toContain(kind);
    }
    const listed = Object.values(PRODUCT_ENTRIES).flatMap((e) => e.kinds);
    expect([...listed].sort()).toEqual([...TARGET_KIND_NAMES].sort());
  });

  test('an unknown product is named with the ones there are', () => {
    expect(() => productEntry('odyssey')).toThrow(
      /no product "odyssey"; one of postgres, rds-proxy, pgbouncer, pgdoorman/,
    );
  });

  test('every entry names its sources', () => {
    for (const e of Object.values(PRODUCT_ENTRIES)) expect(e.sources.length).toBeGreaterThan(0);
  });
});

describe('capabilities travel with the version', () => {
  const tx = poolerTarget('pgbouncer', 'bouncer', 'transaction');
  test.each([
    ['1.18.0', 200, 'no', 'keeps-listening'],
    ['1.21.0', 0, 'no', 'keeps-listening'],
    ['1.21.0', 200, 'yes', 'keeps-listening'],
    ['1.24.1', 200, 'yes', 'stops-listening'],
  ] as const)(
    'PgBouncer %s with max_prepared_statements %d: carries %s, rolling restart %s',
    (v, mps, carries, rr) => {
      const d = describeTarget(tx, { version: v, maxPreparedStatements: mps });
      expect(d.capabilities.carriesPreparedStatements).toBe(carries);
      expect(d.capabilities.rollingRestart).toBe(rr);
    },
  );

  test('IntervalStyle is tracked from PgBouncer 1.20', () => {
    const s = (v: string) => describeTarget(tx, { version: v }).capabilities.session?.trackedParameters;
    expect(s('1.19.1')).not.toContain('intervalstyle');
    expect(s('1.20.0')).toContain('intervalstyle');
  });

  test('PgDoorman cleans session state; RDS Proxy pins; direct has no pool', () => {
    const dm = describeTarget(poolerTarget('pgdoorman', 'doorman', 'transaction'), {
      version: '3.10.7',
      maxPreparedStatements: 8192,
    });
    expect(dm.capabilities.session?.cleansOnRelease).toEqual(['role', 'settings', 'prepared', 'cursors']);
    expect(dm.capabilities.carriesPreparedStatements).toBe('yes');
    expect(
      describeTarget({ kind: 'rds-proxy', name: 'p' }, { version: null }).capabilities.session?.pinsSessions,
    ).toBe(true);
    expect(describeTarget({ kind: 'direct', name: 'direct' }, { version: '15.4' }).capabilities.pooled).toBe(
      false,
    );
  });
});

describe('the catalogues', () => {
  const catalogues = [PGBOUNCER_SETTINGS, PGDOORMAN_SETTINGS, RDS_PROXY_SETTINGS];

  test.each(catalogues.map((c) => [c.product, c] as const))(
    '%s: names are unique, every default passes its own check, sources are given',
    (_, cat) => {
      const names = cat.settings.map((s) => s.name);
      expect(new Set(names).size).toBe(names.length);
      for (const spec of cat.settings) {
        expect(spec.source.length).toBeGreaterThan(0);
        expect(spec.summary.length).toBeGreaterThan(0);
        for (const d of spec.defaults)
          if (d.value !== null) expect([spec.name, valueProblem(spec, d.value)]).toEqual([spec.name, null]);
        // defaults are listed oldest first
        const since = spec.defaults.map((d) => d.since).filter((x): x is string => x !== null);
        for (let i = 1; i < since.length; i++)
          expect(versionAtLeast(since[i] ?? '', since[i - 1] ?? '')).toBe(true);
      }
    },
  );

  test('the settings issue 39 names for PgBouncer are all there', () => {
    for (const name of [
      'server_login_retry',
      'query_wait_timeout',
      'query_timeout',
      'client_idle_timeout',
      'server_lifetime',
      'server_idle_timeout',
      'server_connect_timeout',
      'server_check_delay',
      'server_reset_query',
      'server_reset_query_always',
      'dns_max_ttl',
      'max_client_conn',
      'default_pool_size',
      'min_pool_size',
      'reserve_pool_size',
      'reserve_pool_timeout',
      'idle_transaction_timeout',
      'transaction_timeout',
      'max_prepared_statements',
      'track_extra_parameters',
      'tcp_keepalive',
    ])
      expect([name, settingSpec(PGBOUNCER_SETTINGS, name) !== undefined]).toEqual([name, true]);
    for (const name of [
      'InitQuery',
      'IdleClientTimeout',
      'MaxIdleConnectionsPercent',
      'ConnectionBorrowTimeout',
      'SessionPinningFilters',
      'DefaultAuthScheme',
      'RequireTLS',
    ])
      expect([name, settingSpec(RDS_PROXY_SETTINGS, name) !== undefined]).toEqual([name, true]);
  });

  test('defaults follow the version: max_prepared_statements 0 on 1.21, 200 from 1.24; server_check_query empty from 1.25', () => {
    const mps = settingSpec(PGBOUNCER_SETTINGS, 'max_prepared_statements');
    const check = settingSpec(PGBOUNCER_SETTINGS, 'server_check_query');
    expect(mps && defaultAt(mps, '1.21.0')).toBe(0);
    expect(mps && defaultAt(mps, '1.24.1')).toBe(200);
    expect(check && defaultAt(check, '1.24.1')).toBe('select 1');
    expect(check && defaultAt(check, '1.25.2')).toBe('');
  });
});

describe("checking a lab's settings", () => {
  const check = (v: string | null, s: unknown) =>
    checkSettings(PGBOUNCER_SETTINGS, v, s, 'poolers[0].settings').map((p) => `${p.path}: ${p.message}`);

  test('good values pass', () => {
    expect(
      check('1.25.2', {
        server_login_retry: 2,
        query_wait_timeout: 30.5,
        server_reset_query_always: true,
        track_extra_parameters: ['IntervalStyle', 'search_path'],
        transaction_timeout: 10,
      }),
    ).toEqual([]);
  });

  test('unknown name with a suggestion, wrong type, out of range, not in this version, set by proxylab', () => {
    const problems = check('1.24.1', {
      server_login_retyr: 2,
      query_wait_timeout: '30',
      server_lifetime: -1,
      transaction_timeout: 5,
      default_pool_size: 10,
    });
    expect(problems).toEqual([
      expect.stringMatching(
        /^poolers\[0\]\.settings\.server_login_retyr: is not a PgBouncer setting proxylab knows \(did you mean server_login_retry\?\).*got 2$/,
      ),
      'poolers[0].settings.query_wait_timeout: must be a number 0–86400 (seconds), got "30"',
      'poolers[0].settings.server_lifetime: must be a number 0–86400 (seconds), got -1',
      'poolers[0].settings.transaction_timeout: is not in PgBouncer 1.24.1: it appeared in 1.25, got 5',
      expect.stringMatching(
        /^poolers\[0\]\.settings\.default_pool_size: is set by proxylab: from the pooler's `poolPercent`/,
      ),
    ]);
  });

  test('injection attempts are refused: a line break, a double quote, a backslash, a non-name list member', () => {
    const problems = check('1.25.2', {
      server_reset_query: 'DISCARD ALL\n[databases]\nx = host=evil',
      server_check_query: 'select "1"',
      application_name_add_host: 'yes',
      track_extra_parameters: ['search_path\nadmin_users=me'],
    });
    expect(problems).toHaveLength(4);
    expect(problems[0]).toMatch(/server_reset_query: must be one line of printable ASCII/);
    expect(problems[1]).toMatch(/server_check_query: must be one line/);
    expect(problems[2]).toMatch(/application_name_add_host: must be true or false/);
    expect(problems[3]).toMatch(/track_extra_parameters: must be a list of names/);
  });

  test('not an object', () => {
    expect(check('1.25.2', [1])).toEqual([
      expect.stringMatching(/must be an object of PgBouncer settings, got \[1\]/),
    ]);
  });

  test("RDS Proxy's SessionPinningFilters is refused for PostgreSQL with the reason", () => {
    const p = checkSettings(
      RDS_PROXY_SETTINGS,
      null,
      { SessionPinningFilters: ['EXCLUDE_VARIABLE_SETS'] },
      'proxies[0].settings',
    );
    expect(p[0]?.message).toMatch(/not available for PostgreSQL.*MySQL/);
  });
});

describe('effective settings', () => {
  test("the lab's value, the kit's, the version's default — and whose each is", () => {
    const eff = effectiveSettings(
      PGBOUNCER_SETTINGS,
      '1.24.1',
      { server_login_retry: 2 },
      { stats_period: 1 },
    );
    expect(eff.server_login_retry).toEqual({ value: 2, source: 'lab' });
    expect(eff.stats_period).toEqual({ value: 1, source: 'proxylab' });
    expect(eff.query_wait_timeout).toEqual({ value: 120, source: 'default' });
    expect(eff.max_prepared_statements).toEqual({ value: 200, source: 'default' });
    // not in 1.24: absent
    expect(eff.transaction_timeout).toBeUndefined();
  });

  test('a descriptor records them and its schema reads them back', () => {
    const d = describeTarget(poolerTarget('pgbouncer', 'bouncer-fast', 'transaction'), {
      version: '1.24.1',
      maxPreparedStatements: 200,
      settings: { server_login_retry: 2 },
    });
    expect(d.settings.effective?.server_login_retry).toEqual({ value: 2, source: 'lab' });
    expect(targetDescriptorSchema.parse(d)).toEqual(d);
  });

  test('formatting', () => {
    expect(formatSetting(settingSpec(PGBOUNCER_SETTINGS, 'server_login_retry'), 15)).toBe('15 s');
    expect(formatSetting(settingSpec(PGDOORMAN_SETTINGS, 'query_wait_timeout'), 5000)).toBe('5000 ms');
    expect(formatSetting(undefined, true)).toBe('on');
    expect(formatSetting(undefined, null)).toBe('–');
  });
});

describe('rendered configuration carries the values typed', () => {
  const base = {
    version: '1.24.1',
    processIndex: 0,
    processes: 1,
    listenAddr: '127.0.0.1',
    listenPort: 6432,
    socketDirs: ['/tmp/s'],
    server: { host: '127.0.0.1', port: 5432, dbname: 'bench' },
    poolModes: ['transaction'] as const,
    defaultPoolSize: 10,
    maxPreparedStatements: null,
    authType: 'trust' as const,
    authFile: '/tmp/u',
    adminUsers: ['a'],
    statsUsers: [],
    serverTlsSslmode: 'disable' as const,
    clientTls: null,
    logFile: '/tmp/l',
    pidFile: '/tmp/p',
    maxClientConnections: 100,
  };

  test('PgBouncer: booleans as 1/0, lists joined, ignore_startup_parameters keeps extra_float_digits', () => {
    const ini = renderPgbouncerIni({
      ...base,
      settings: {
        server_login_retry: 2,
        server_reset_query_always: true,
        ignore_startup_parameters: ['search_path'],
      },
    });
    expect(ini).toMatch(/^server_login_retry = 2$/m);
    expect(ini).toMatch(/^server_reset_query_always = 1$/m);
    expect(ini).toMatch(/^ignore_startup_parameters = extra_float_digits,search_path$/m);
  });

  test('PgBouncer: a value that slipped past validation is refused, never written', () => {
    expect(() => renderPgbouncerIni({ ...base, settings: { server_reset_query: 'x\n[databases]' } })).toThrow(
      /server_reset_query/,
    );
    expect(() => renderPgbouncerIni({ ...base, settings: { default_pool_size: 5 } })).toThrow(
      /not one a lab may set/,
    );
    expect(() => renderPgbouncerIni({ ...base, settings: { transaction_timeout: 5 } })).toThrow(
      /not one a lab may set/,
    );
  });

  const doorman = {
    version: '3.10.7',
    listenAddr: '127.0.0.1',
    listenPort: 6433,
    unixSocketDir: '/tmp/d',
    server: { host: '127.0.0.1', port: 5432, dbname: 'bench' },
    poolModes: ['transaction'],
    poolSize: 10,
    workerThreads: 2,
    preparedStatementsCacheSize: 0,
    clientAuth: 'trust',
    clientCidr: '127.0.0.1/32',
    user: { username: 'bench', verifier: 'md5x', serverPassword: null },
    admin: { username: 'admin', password: 'pw' },
    serverTlsMode: 'disable',
    clientTls: null,
    maxClientConnections: 100,
  } as const;

  test('PgDoorman: each setting in its section, strings quoted for TOML', () => {
    const toml = renderPgdoormanToml({
      ...doorman,
      settings: { query_wait_timeout: 120000, cleanup_server_connections: false },
    });
    const general = toml.slice(0, toml.indexOf('[pools.'));
    const pool = toml.slice(toml.indexOf('[pools.'));
    expect(general).toMatch(/^query_wait_timeout = 120000$/m);
    expect(pool).toMatch(/^cleanup_server_connections = false$/m);
  });

  test('PgDoorman: nothing proxylab forces — its own query_wait_timeout stands unless the lab sets one', () => {
    expect(renderPgdoormanToml(doorman)).not.toMatch(/query_wait_timeout/);
  });

  test('settingText refuses a bad value', () => {
    const spec = settingSpec(PGBOUNCER_SETTINGS, 'server_login_retry');
    expect(spec && settingText(spec, 2.5)).toBe('2.5');
    expect(() => spec && settingText(spec, -1)).toThrow(/server_login_retry must be a number/);
  });
});
