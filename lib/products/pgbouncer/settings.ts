/**
 * PgBouncer's settings that decide pooling, failure handling and session state, by version: read
 * from doc/config.md of each release tag (pgbouncer/pgbouncer, `pgbouncer_1_15_0` … `pgbouncer_1_25_0`,
 * the "Default:" line under each `###` heading) — https://www.pgbouncer.org/config.html is the
 * current one. `since: null` = in every release proxylab knows (1.15 and later have it).
 *
 * Settings proxylab derives from a lab field (pool size from `poolPercent`, `pool_mode` from
 * `poolModes`, `max_prepared_statements`, `so_reuseport` from `processes`, TLS) or needs for its own
 * measurement (`stats_period`) carry `setBy`; the rest are the team's.
 */
import { settingBuilders } from '../setting-builders';
import type { SettingsCatalogue } from '../types';

const DOC = 'PgBouncer doc/config.md (https://www.pgbouncer.org/config.html)';
const at = (tag: string): string => `${DOC}, release ${tag}`;
const { number, integer, flag, choice, text, list } = settingBuilders({ source: DOC });
const DAY = 86_400;
const MANY = 100_000;
/** seconds, as PgBouncer reads them (a float; 0 disables where the doc says so). */
const seconds = (
  name: string,
  def: number,
  area: Parameters<typeof number>[4],
  summary: string,
  extra = {},
) => number(name, 'seconds', DAY, def, area, summary, extra);
const connections = (
  name: string,
  def: number,
  area: Parameters<typeof number>[4],
  summary: string,
  extra = {},
) => integer(name, 'connections', MANY, def, area, summary, extra);
const SSLMODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'];

export const PGBOUNCER_SETTINGS: SettingsCatalogue = {
  product: 'PgBouncer',
  settings: [
    // -- failure handling
    seconds(
      'server_login_retry',
      15,
      'failure',
      'after a failed login to the server, how long a pool waits before trying again; clients wait (or get "server login has been failing") meanwhile',
    ),
    seconds('server_connect_timeout', 15, 'failure', 'how long a connect plus login to the server may take'),
    seconds(
      'server_check_delay',
      30,
      'failure',
      'how long a released server connection may sit before it is checked with server_check_query',
    ),
    text(
      'server_check_query',
      'select 1',
      'failure',
      'the query that checks an idle server connection (empty: an empty query; 1.25 default)',
      {
        defaults: [
          { since: null, value: 'select 1' },
          { since: '1.25', value: '' },
        ],
        source: at('1.25.0'),
      },
    ),
    flag(
      'server_fast_close',
      false,
      'failure',
      'in session pooling, close a server connection as soon as its client is done after RECONNECT or RELOAD',
    ),
    seconds('dns_max_ttl', 15, 'failure', 'how long a DNS answer is kept (an RDS failover moves the name)'),
    seconds('dns_nxdomain_ttl', 15, 'failure', 'how long a failed DNS lookup is kept'),
    // -- timeouts a client lives through
    seconds(
      'query_wait_timeout',
      120,
      'timeouts',
      'how long a client may wait for a server connection before it is disconnected (0: forever)',
    ),
    seconds('query_timeout', 0, 'timeouts', 'queries running longer are cancelled (0: disabled)'),
    seconds('client_idle_timeout', 0, 'timeouts', 'client connections idle longer are closed (0: disabled)'),
    seconds('client_login_timeout', 60, 'timeouts', 'a client that has not logged in by then is dropped'),
    seconds(
      'idle_transaction_timeout',
      0,
      'timeouts',
      'a client idle in a transaction longer is disconnected (0: disabled)',
    ),
    seconds('transaction_timeout', 0, 'timeouts', 'a transaction running longer is cancelled (0: disabled)', {
      since: '1.25',
      source: at('1.25.0'),
    }),
    seconds(
      'cancel_wait_timeout',
      10,
      'timeouts',
      'how long a cancel request may wait for a server connection',
      {
        since: '1.19',
        source: at('1.19.0'),
      },
    ),
    seconds(
      'query_wait_notify',
      5,
      'timeouts',
      'a client waiting this long for a server connection gets a notice that it is queued',
      { since: '1.25', defaults: [{ since: '1.25', value: 5 }], source: at('1.25.0') },
    ),
    seconds('suspend_timeout', 10, 'timeouts', 'how long SUSPEND/online restart waits for buffers to flush'),
    // -- the pool
    seconds('server_lifetime', 3600, 'pool', 'server connections older than this are closed once released'),
    seconds('server_idle_timeout', 600, 'pool', 'server connections idle longer are closed'),
    connections('min_pool_size', 0, 'pool', 'server connections kept open per pool even when unused'),
    connections(
      'reserve_pool_size',
      0,
      'pool',
      'extra server connections a pool may open when clients wait too long',
    ),
    seconds('reserve_pool_timeout', 5, 'pool', 'how long a client waits before the reserve pool is used'),
    connections(
      'max_db_connections',
      0,
      'pool',
      'server connections per database, over all its pools (0: unlimited)',
    ),
    connections('max_client_conn', 100, 'pool', 'client connections a process accepts', { min: 1 }),
    flag('server_round_robin', false, 'pool', 'hand server connections out round-robin instead of LIFO'),
    connections('default_pool_size', 20, 'pool', 'server connections per user/database pair', {
      setBy: "from the pooler's `poolPercent` (its share of max_connections, split across its processes)",
    }),
    connections('max_user_connections', 0, 'pool', 'server connections per user', {
      setBy: "equal to the pool size, so the transaction and session aliases share the pooler's share",
    }),
    choice(
      'pool_mode',
      ['session', 'transaction', 'statement'],
      'session',
      'pool',
      'when a server connection goes back to the pool',
      {
        setBy: "one database alias per entry of the pooler's `poolModes`",
      },
    ),
    // -- session state
    text(
      'server_reset_query',
      'DISCARD ALL',
      'session',
      'run on a server connection released by a session-pool client (not in transaction pooling unless server_reset_query_always)',
    ),
    flag(
      'server_reset_query_always',
      false,
      'session',
      'run server_reset_query in every pool mode, after each transaction in transaction pooling',
    ),
    integer(
      'max_prepared_statements',
      'statements',
      MANY,
      0,
      'session',
      'protocol-level prepared statements tracked per client in transaction pooling (0: off)',
      {
        defaults: [
          { since: '1.21', value: 0 },
          { since: '1.24', value: 200 },
        ],
        since: '1.21',
        source: at('1.21.0 and 1.24.0'),
        setBy: "the pooler's `maxPreparedStatements` field",
      },
    ),
    list(
      'track_extra_parameters',
      ['IntervalStyle'],
      'session',
      'parameters besides client_encoding, datestyle, timezone, standard_conforming_strings and application_name restored per client',
      { since: '1.20', defaults: [{ since: '1.20', value: ['IntervalStyle'] }], source: at('1.20.0') },
    ),
    list(
      'ignore_startup_parameters',
      [],
      'session',
      'startup parameters accepted and ignored (proxylab always adds extra_float_digits, which pgbench sends)',
    ),
    flag(
      'application_name_add_host',
      false,
      'session',
      "append the client's host and port to application_name",
    ),
    // -- network
    flag('tcp_keepalive', true, 'network', 'TCP keepalive on client and server sockets'),
    integer(
      'tcp_keepidle',
      'seconds',
      MANY,
      null,
      'network',
      'seconds idle before the first keepalive probe (not set: the OS)',
    ),
    integer(
      'tcp_keepintvl',
      'seconds',
      MANY,
      null,
      'network',
      'seconds between keepalive probes (not set: the OS)',
    ),
    integer(
      'tcp_keepcnt',
      null,
      MANY,
      null,
      'network',
      'keepalive probes before a connection is dropped (not set: the OS)',
    ),
    integer(
      'tcp_user_timeout',
      'milliseconds',
      3_600_000,
      0,
      'network',
      'ms unacknowledged data may stay before the connection is dropped (0: the OS)',
    ),
    flag('so_reuseport', false, 'network', 'several processes share the port', {
      setBy:
        'on when the pooler runs more than one process (`processes`), and locally for the rolling restart',
    }),
    choice('server_tls_sslmode', SSLMODES, 'prefer', 'auth', 'TLS towards the server', {
      setBy: '`require` towards RDS and Aurora, `disable` to the local throwaway server',
    }),
    choice('client_tls_sslmode', SSLMODES, 'disable', 'auth', 'TLS demanded from clients', {
      setBy: "the pooler's `tls` field",
    }),
    seconds('stats_period', 60, 'pool', 'how often SHOW STATS averages are recomputed', {
      setBy: 'proxylab samples SHOW STATS every second: 1',
    }),
  ],
};
