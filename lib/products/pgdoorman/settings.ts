/**
 * PgDoorman's settings that decide pooling, failure handling and session state: read from its
 * configuration reference at v3.10.7 (ozontech/pg_doorman, documentation/ru/src/reference/general.md
 * and pool.md — the only reference pages the tag carries; "По умолчанию" is each default). Durations
 * are milliseconds, as its TOML takes them. `since: null`: in 3.10.7, the one release proxylab pins.
 */
import { settingBuilders } from '../setting-builders';
import type { SettingsCatalogue } from '../types';

const general = settingBuilders({
  source: 'PgDoorman configuration reference, documentation/ru/src/reference/general.md at v3.10.7',
  section: 'general',
});
const pool = settingBuilders({
  source: 'PgDoorman configuration reference, documentation/ru/src/reference/pool.md at v3.10.7',
  section: 'pool',
});
const DAY_MS = 86_400_000;
const MANY = 100_000;

export const PGDOORMAN_SETTINGS: SettingsCatalogue = {
  product: 'PgDoorman',
  settings: [
    general.integer(
      'connect_timeout',
      'milliseconds',
      DAY_MS,
      3000,
      'failure',
      'how long a new server connection may take (PgBouncer: server_connect_timeout)',
    ),
    general.integer(
      'query_wait_timeout',
      'milliseconds',
      DAY_MS,
      5000,
      'timeouts',
      'how long a client may wait for a server connection when the pool is busy before it gets an error',
    ),
    general.integer(
      'idle_timeout',
      'milliseconds',
      DAY_MS,
      600_000,
      'pool',
      'server connections idle longer are closed (0: never)',
    ),
    general.integer(
      'server_lifetime',
      'milliseconds',
      DAY_MS,
      1_200_000,
      'pool',
      'server connections older than this are closed once idle (0: never)',
    ),
    general.integer(
      'retain_connections_time',
      'milliseconds',
      DAY_MS,
      30_000,
      'pool',
      'how often idle and old server connections are looked for',
    ),
    general.integer(
      'retain_connections_max',
      null,
      MANY,
      3,
      'pool',
      'idle connections closed per retain cycle (0: all at once)',
    ),
    general.flag(
      'server_round_robin',
      false,
      'pool',
      'hand server connections out round-robin instead of LIFO',
    ),
    general.flag(
      'sync_server_parameters',
      false,
      'session',
      'restore the parameters a client SET on each server connection it gets',
    ),
    general.integer(
      'shutdown_timeout',
      'milliseconds',
      DAY_MS,
      10_000,
      'failure',
      'how long a shutdown waits for clients before closing them',
    ),
    general.integer(
      'tcp_keepalives_idle',
      'seconds',
      MANY,
      5,
      'network',
      'seconds idle before the first keepalive probe',
    ),
    general.integer(
      'tcp_keepalives_interval',
      'seconds',
      MANY,
      5,
      'network',
      'seconds between keepalive probes',
    ),
    general.integer(
      'tcp_keepalives_count',
      null,
      MANY,
      5,
      'network',
      'keepalive probes before a connection is dropped',
    ),
    general.integer(
      'tcp_user_timeout',
      'seconds',
      MANY,
      60,
      'network',
      'seconds unacknowledged data may stay before a client connection is dropped (0: the OS)',
    ),
    pool.flag(
      'cleanup_server_connections',
      true,
      'session',
      'RESET ROLE / RESET ALL / DEALLOCATE ALL / CLOSE ALL when the client changed that state',
    ),
    pool.integer(
      'reserve_pool_size',
      'connections',
      MANY,
      0,
      'pool',
      'extra server connections a pool may open when clients wait too long',
    ),
    pool.integer(
      'reserve_pool_timeout',
      'milliseconds',
      DAY_MS,
      3000,
      'pool',
      'how long a client waits before the reserve pool is used',
    ),
    pool.integer(
      'max_db_connections',
      'connections',
      MANY,
      0,
      'pool',
      'server connections per database over all its pools (0: unlimited)',
    ),
    pool.integer(
      'min_connection_lifetime',
      'milliseconds',
      DAY_MS,
      30_000,
      'pool',
      'server connections younger than this are not closed by the retain cycle',
    ),
    pool.integer('pool_size', 'connections', MANY, 40, 'pool', 'server connections per pool user', {
      setBy: "from the pooler's `poolPercent` (its share of max_connections)",
    }),
    pool.choice(
      'pool_mode',
      ['transaction', 'session'],
      'transaction',
      'pool',
      'when a server connection goes back to the pool',
      {
        setBy: "one pool per entry of the pooler's `poolModes`",
      },
    ),
    general.flag(
      'prepared_statements',
      true,
      'session',
      'carry prepared statements through transaction pooling',
      {
        setBy: "the pooler's `maxPreparedStatements` field (0: off)",
      },
    ),
    general.integer(
      'prepared_statements_cache_size',
      null,
      MANY,
      8192,
      'session',
      'prepared statements cached per pool',
      {
        setBy: "the pooler's `maxPreparedStatements` field",
      },
    ),
    general.integer('worker_threads', null, MANY, 4, 'pool', 'threads of the one process', {
      setBy: "the pooler's `workerThreads` field",
    }),
    general.integer('max_connections', null, MANY, 8192, 'pool', 'client connections accepted', {
      setBy: "proxylab sizes it to the run's largest client count",
    }),
    general.choice(
      'tls_mode',
      ['disable', 'allow', 'require', 'verify-full'],
      'allow',
      'auth',
      'TLS demanded from clients',
      {
        setBy: "the pooler's `tls` field",
      },
    ),
  ],
};
