/**
 * PgBouncer's settings that decide pooling, failure handling and session state, by version: read
 * from doc/config.md of each release tag (pgbouncer/pgbouncer, `pgbouncer_1_15_0` … `pgbouncer_1_25_0`,
 * the "Default:" line under each `###` heading) — https://www.pgbouncer.org/config.html is the
 * current one. `since: null` = in every release proxylab knows (1.15 and later have it).
 *
 * Settings proxylab derives from a lab field (pool size from `poolPercent`, `pool_mode` from
 * `poolModes`, `max_prepared_statements`, `so_reuseport` from `processes`, TLS) or needs for its own
 * measurement (`stats_period`, the admin and auth settings) carry `setBy`; the rest are the team's.
 */
import type { SettingSpec, SettingsCatalogue } from '../types';

const DOC = 'PgBouncer doc/config.md (https://www.pgbouncer.org/config.html)';
const at = (tag: string): string => `${DOC}, release ${tag}`;

/** seconds, as PgBouncer reads them (a float; 0 disables where the doc says so). */
function seconds(
  name: string,
  def: number,
  area: SettingSpec['area'],
  summary: string,
  extra: Partial<SettingSpec> = {},
): SettingSpec {
  return {
    name,
    type: 'number',
    unit: 'seconds',
    min: 0,
    max: 86_400,
    defaults: [{ since: null, value: def }],
    since: null,
    area,
    summary,
    source: DOC,
    ...extra,
  };
}

function count(
  name: string,
  def: number,
  area: SettingSpec['area'],
  summary: string,
  extra: Partial<SettingSpec> = {},
): SettingSpec {
  return {
    name,
    type: 'integer',
    unit: 'connections',
    min: 0,
    max: 100_000,
    defaults: [{ since: null, value: def }],
    since: null,
    area,
    summary,
    source: DOC,
    ...extra,
  };
}

const flag = (name: string, def: boolean, area: SettingSpec['area'], summary: string): SettingSpec => ({
  name,
  type: 'boolean',
  unit: null,
  defaults: [{ since: null, value: def }],
  since: null,
  area,
  summary,
  source: DOC,
});

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
    {
      name: 'server_check_query',
      type: 'text',
      unit: null,
      defaults: [
        { since: null, value: 'select 1' },
        { since: '1.25', value: '' },
      ],
      since: null,
      area: 'failure',
      summary: 'the query that checks an idle server connection (empty: an empty query; 1.25 default)',
      source: at('1.25.0'),
    },
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
    {
      name: 'query_wait_notify',
      type: 'number',
      unit: 'seconds',
      min: 0,
      max: 86_400,
      defaults: [{ since: '1.25', value: 5 }],
      since: '1.25',
      area: 'timeouts',
      summary: 'a client waiting this long for a server connection gets a notice that it is queued',
      source: at('1.25.0'),
    },
    seconds('suspend_timeout', 10, 'timeouts', 'how long SUSPEND/online restart waits for buffers to flush'),
    // -- the pool
    seconds('server_lifetime', 3600, 'pool', 'server connections older than this are closed once released'),
    seconds('server_idle_timeout', 600, 'pool', 'server connections idle longer are closed'),
    count('min_pool_size', 0, 'pool', 'server connections kept open per pool even when unused'),
    count(
      'reserve_pool_size',
      0,
      'pool',
      'extra server connections a pool may open when clients wait too long',
    ),
    {
      ...seconds(
        'reserve_pool_timeout',
        5,
        'pool',
        'how long a client waits before the reserve pool is used',
      ),
    },
    count(
      'max_db_connections',
      0,
      'pool',
      'server connections per database, over all its pools (0: unlimited)',
    ),
    count('max_client_conn', 100, 'pool', 'client connections a process accepts', { min: 1 }),
    flag('server_round_robin', false, 'pool', 'hand server connections out round-robin instead of LIFO'),
    count('default_pool_size', 20, 'pool', 'server connections per user/database pair', {
      setBy: "from the pooler's `poolPercent` (its share of max_connections, split across its processes)",
    }),
    count('max_user_connections', 0, 'pool', 'server connections per user', {
      setBy: "equal to the pool size, so the transaction and session aliases share the pooler's share",
    }),
    {
      name: 'pool_mode',
      type: 'enum',
      unit: null,
      values: ['session', 'transaction', 'statement'],
      defaults: [{ since: null, value: 'session' }],
      since: null,
      area: 'pool',
      summary: 'when a server connection goes back to the pool',
      source: DOC,
      setBy: "one database alias per entry of the pooler's `poolModes`",
    },
    // -- session state
    {
      name: 'server_reset_query',
      type: 'text',
      unit: null,
      defaults: [{ since: null, value: 'DISCARD ALL' }],
      since: null,
      area: 'session',
      summary:
        'run on a server connection released by a session-pool client (not in transaction pooling unless server_reset_query_always)',
      source: DOC,
    },
    flag(
      'server_reset_query_always',
      false,
      'session',
      'run server_reset_query in every pool mode, after each transaction in transaction pooling',
    ),
    {
      name: 'max_prepared_statements',
      type: 'integer',
      unit: 'statements',
      min: 0,
      max: 100_000,
      defaults: [
        { since: '1.21', value: 0 },
        { since: '1.24', value: 200 },
      ],
      since: '1.21',
      area: 'session',
      summary: 'protocol-level prepared statements tracked per client in transaction pooling (0: off)',
      source: at('1.21.0 and 1.24.0'),
      setBy: "the pooler's `maxPreparedStatements` field",
    },
    {
      name: 'track_extra_parameters',
      type: 'list',
      unit: null,
      defaults: [{ since: '1.20', value: ['IntervalStyle'] }],
      since: '1.20',
      area: 'session',
      summary:
        'parameters besides client_encoding, datestyle, timezone, standard_conforming_strings and application_name restored per client',
      source: at('1.20.0'),
    },
    {
      name: 'ignore_startup_parameters',
      type: 'list',
      unit: null,
      defaults: [{ since: null, value: [] }],
      since: null,
      area: 'session',
      summary:
        'startup parameters accepted and ignored (proxylab always adds extra_float_digits, which pgbench sends)',
      source: DOC,
    },
    flag(
      'application_name_add_host',
      false,
      'session',
      "append the client's host and port to application_name",
    ),
    // -- network
    flag('tcp_keepalive', true, 'network', 'TCP keepalive on client and server sockets'),
    {
      ...count(
        'tcp_keepidle',
        0,
        'network',
        'seconds idle before the first keepalive probe (not set: the OS)',
      ),
      unit: 'seconds',
      defaults: [{ since: null, value: null }],
    },
    {
      ...count('tcp_keepintvl', 0, 'network', 'seconds between keepalive probes (not set: the OS)'),
      unit: 'seconds',
      defaults: [{ since: null, value: null }],
    },
    {
      ...count(
        'tcp_keepcnt',
        0,
        'network',
        'keepalive probes before a connection is dropped (not set: the OS)',
      ),
      unit: null,
      defaults: [{ since: null, value: null }],
    },
    {
      ...count(
        'tcp_user_timeout',
        0,
        'network',
        'ms unacknowledged data may stay before the connection is dropped (0: the OS)',
      ),
      unit: 'milliseconds',
      max: 3_600_000,
    },
    {
      name: 'so_reuseport',
      type: 'boolean',
      unit: null,
      defaults: [{ since: null, value: false }],
      since: null,
      area: 'network',
      summary: 'several processes share the port',
      source: DOC,
      setBy:
        'on when the pooler runs more than one process (`processes`), and locally for the rolling restart',
    },
    {
      name: 'server_tls_sslmode',
      type: 'enum',
      unit: null,
      values: ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'],
      defaults: [{ since: null, value: 'prefer' }],
      since: null,
      area: 'auth',
      summary: 'TLS towards the server',
      source: DOC,
      setBy: '`require` towards RDS and Aurora, `disable` to the local throwaway server',
    },
    {
      name: 'client_tls_sslmode',
      type: 'enum',
      unit: null,
      values: ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'],
      defaults: [{ since: null, value: 'disable' }],
      since: null,
      area: 'auth',
      summary: 'TLS demanded from clients',
      source: DOC,
      setBy: "the pooler's `tls` field",
    },
    {
      ...seconds('stats_period', 60, 'pool', 'how often SHOW STATS averages are recomputed'),
      setBy: 'proxylab samples SHOW STATS every second: 1',
    },
  ],
};
