/**
 * PgDoorman's settings that decide pooling, failure handling and session state: read from its
 * configuration reference at v3.10.7 (ozontech/pg_doorman, documentation/ru/src/reference/general.md
 * and pool.md — the only reference pages the tag carries; "По умолчанию" is each default). Durations
 * are milliseconds, as its TOML takes them. `since: null`: in 3.10.7, the one release proxylab pins.
 */
import type { SettingSpec, SettingsCatalogue } from '../types';

const REF = 'PgDoorman configuration reference, documentation/ru/src/reference/general.md at v3.10.7';
const POOL_REF = 'PgDoorman configuration reference, documentation/ru/src/reference/pool.md at v3.10.7';

function ms(
  name: string,
  def: number,
  area: SettingSpec['area'],
  summary: string,
  extra: Partial<SettingSpec> = {},
): SettingSpec {
  return {
    name,
    type: 'integer',
    unit: 'milliseconds',
    min: 0,
    max: 86_400_000,
    defaults: [{ since: null, value: def }],
    since: null,
    area,
    summary,
    source: REF,
    section: 'general',
    ...extra,
  };
}

function int(
  name: string,
  def: number | null,
  area: SettingSpec['area'],
  summary: string,
  extra: Partial<SettingSpec> = {},
): SettingSpec {
  return {
    name,
    type: 'integer',
    unit: null,
    min: 0,
    max: 100_000,
    defaults: [{ since: null, value: def }],
    since: null,
    area,
    summary,
    source: REF,
    section: 'general',
    ...extra,
  };
}

function flag(
  name: string,
  def: boolean,
  area: SettingSpec['area'],
  summary: string,
  extra: Partial<SettingSpec> = {},
): SettingSpec {
  return {
    name,
    type: 'boolean',
    unit: null,
    defaults: [{ since: null, value: def }],
    since: null,
    area,
    summary,
    source: REF,
    section: 'general',
    ...extra,
  };
}

export const PGDOORMAN_SETTINGS: SettingsCatalogue = {
  product: 'PgDoorman',
  settings: [
    ms(
      'connect_timeout',
      3000,
      'failure',
      'how long a new server connection may take (PgBouncer: server_connect_timeout)',
    ),
    ms(
      'query_wait_timeout',
      5000,
      'timeouts',
      'how long a client may wait for a server connection when the pool is busy before it gets an error',
    ),
    ms('idle_timeout', 600_000, 'pool', 'server connections idle longer are closed (0: never)'),
    ms(
      'server_lifetime',
      1_200_000,
      'pool',
      'server connections older than this are closed once idle (0: never)',
    ),
    ms('retain_connections_time', 30_000, 'pool', 'how often idle and old server connections are looked for'),
    int('retain_connections_max', 3, 'pool', 'idle connections closed per retain cycle (0: all at once)'),
    flag('server_round_robin', false, 'pool', 'hand server connections out round-robin instead of LIFO'),
    flag(
      'sync_server_parameters',
      false,
      'session',
      'restore the parameters a client SET on each server connection it gets',
    ),
    ms('shutdown_timeout', 10_000, 'failure', 'how long a shutdown waits for clients before closing them'),
    int('tcp_keepalives_idle', 5, 'network', 'seconds idle before the first keepalive probe', {
      unit: 'seconds',
    }),
    int('tcp_keepalives_interval', 5, 'network', 'seconds between keepalive probes', { unit: 'seconds' }),
    int('tcp_keepalives_count', 5, 'network', 'keepalive probes before a connection is dropped'),
    int(
      'tcp_user_timeout',
      60,
      'network',
      'seconds unacknowledged data may stay before a client connection is dropped (0: the OS)',
      {
        unit: 'seconds',
      },
    ),
    flag(
      'cleanup_server_connections',
      true,
      'session',
      'RESET ROLE / RESET ALL / DEALLOCATE ALL / CLOSE ALL when the client changed that state',
      {
        section: 'pool',
        source: POOL_REF,
      },
    ),
    int(
      'reserve_pool_size',
      0,
      'pool',
      'extra server connections a pool may open when clients wait too long',
      {
        section: 'pool',
        source: POOL_REF,
        unit: 'connections',
      },
    ),
    ms('reserve_pool_timeout', 3000, 'pool', 'how long a client waits before the reserve pool is used', {
      section: 'pool',
      source: POOL_REF,
    }),
    int(
      'max_db_connections',
      0,
      'pool',
      'server connections per database over all its pools (0: unlimited)',
      {
        section: 'pool',
        source: POOL_REF,
        unit: 'connections',
      },
    ),
    ms(
      'min_connection_lifetime',
      30_000,
      'pool',
      'server connections younger than this are not closed by the retain cycle',
      {
        section: 'pool',
        source: POOL_REF,
      },
    ),
    int('pool_size', 40, 'pool', 'server connections per pool user', {
      section: 'pool',
      source: POOL_REF,
      unit: 'connections',
      setBy: "from the pooler's `poolPercent` (its share of max_connections)",
    }),
    {
      name: 'pool_mode',
      type: 'enum',
      unit: null,
      values: ['transaction', 'session'],
      defaults: [{ since: null, value: 'transaction' }],
      since: null,
      area: 'pool',
      summary: 'when a server connection goes back to the pool',
      source: POOL_REF,
      section: 'pool',
      setBy: "one pool per entry of the pooler's `poolModes`",
    },
    flag('prepared_statements', true, 'session', 'carry prepared statements through transaction pooling', {
      setBy: "the pooler's `maxPreparedStatements` field (0: off)",
    }),
    int('prepared_statements_cache_size', 8192, 'session', 'prepared statements cached per pool', {
      setBy: "the pooler's `maxPreparedStatements` field",
    }),
    int('worker_threads', 4, 'pool', 'threads of the one process', {
      setBy: "the pooler's `workerThreads` field",
    }),
    int('max_connections', 8192, 'pool', 'client connections accepted', {
      setBy: "proxylab sizes it to the run's largest client count",
    }),
    {
      name: 'tls_mode',
      type: 'enum',
      unit: null,
      values: ['disable', 'allow', 'require', 'verify-full'],
      defaults: [{ since: null, value: 'allow' }],
      since: null,
      area: 'auth',
      summary: 'TLS demanded from clients',
      source: REF,
      section: 'general',
      setBy: "the pooler's `tls` field",
    },
  ],
};
