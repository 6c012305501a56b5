/**
 * RDS Proxy's settings, by their API names: the target group's ConnectionPoolConfiguration
 * (MaxConnectionsPercent, MaxIdleConnectionsPercent, ConnectionBorrowTimeout, InitQuery,
 * SessionPinningFilters — RDS API reference, ConnectionPoolConfiguration; CloudFormation
 * AWS::RDS::DBProxyTargetGroup ConnectionPoolConfigurationInfoFormat: ConnectionBorrowTimeout "Must be
 * between 0 and 300", default 120) and the proxy's own (IdleClientTimeout, RequireTLS, DebugLogging,
 * DefaultAuthScheme, Auth[].IAMAuth — RDS API reference, CreateDBProxy; aws-cdk-lib DatabaseProxy
 * `defaultAuthScheme`, `DefaultAuthScheme.IAM_AUTH | NONE`, since v2.235.0).
 *
 * The ones a lab sets through a proxy field carry `setBy` (the field); the rest are the `settings`
 * object's. RDS Proxy has no versions: `since: null` everywhere.
 */
import { settingBuilders } from '../setting-builders';
import type { SettingsCatalogue } from '../types';

const POOL = 'RDS API reference, ConnectionPoolConfiguration (CreateDBProxy / ModifyDBProxyTargetGroup)';
const PROXY = 'RDS API reference, CreateDBProxy';
const pool = settingBuilders({ source: POOL });
const proxy = settingBuilders({ source: PROXY });
const NOT_BUILT =
  'proxylab: the runners authenticate with the database secret from Secrets Manager (IAM authentication end to end is not built yet)';

export const RDS_PROXY_SETTINGS: SettingsCatalogue = {
  product: 'RDS Proxy',
  settings: [
    pool.integer(
      'MaxConnectionsPercent',
      'percent',
      100,
      100,
      'pool',
      "the pool's size as a share of the database's max_connections",
      {
        min: 1,
        setBy: "the proxy's `maxConnectionsPercent` field",
      },
    ),
    pool.integer(
      'MaxIdleConnectionsPercent',
      'percent',
      100,
      50,
      'pool',
      'idle connections the proxy keeps open, as a share of max_connections',
      {
        setBy: "the proxy's `maxIdleConnectionsPercent` field",
      },
    ),
    pool.integer(
      'ConnectionBorrowTimeout',
      'seconds',
      300,
      120,
      'timeouts',
      'how long a client waits for a connection from a full pool before it gets an error',
      {
        source: `${POOL}; CloudFormation ConnectionPoolConfigurationInfoFormat ("Must be between 0 and 300")`,
        setBy: "the proxy's `borrowTimeoutSeconds` field",
      },
    ),
    pool.text(
      'InitQuery',
      null,
      'session',
      'SQL run on each new database connection (SET statements): the documented way to give every connection the same settings without pinning',
    ),
    pool.list('SessionPinningFilters', [], 'session', 'SQL operations that do not pin a session', {
      values: ['EXCLUDE_VARIABLE_SETS'],
      source: `${POOL}; RDS User Guide, "Avoiding pinning an RDS Proxy"`,
      refused:
        'is not available for PostgreSQL: its one filter, EXCLUDE_VARIABLE_SETS, applies to MySQL (RDS User Guide, "Avoiding pinning an RDS Proxy"); for PostgreSQL use InitQuery for settings every connection needs',
    }),
    proxy.integer(
      'IdleClientTimeout',
      'seconds',
      28_800,
      1800,
      'timeouts',
      'client connections idle longer are closed by the proxy',
      {
        min: 1,
        source: `${PROXY} (IdleClientTimeout: default 1,800 s, at most 28,800 s)`,
      },
    ),
    proxy.flag('RequireTLS', false, 'auth', 'clients must use TLS', {
      setBy: "the proxy's `requireTls` field",
    }),
    proxy.flag(
      'DebugLogging',
      false,
      'network',
      'log SQL statements and connection details to CloudWatch Logs',
      {
        setBy: "the proxy's `debugLogging` field",
      },
    ),
    proxy.choice(
      'DefaultAuthScheme',
      ['NONE', 'IAM_AUTH'],
      'NONE',
      'auth',
      'IAM_AUTH: end-to-end IAM authentication, client to proxy and proxy to database, no secret',
      { source: `${PROXY}; aws-cdk-lib DefaultAuthScheme (v2.235.0)`, setBy: NOT_BUILT },
    ),
    proxy.choice(
      'IAMAuth',
      ['DISABLED', 'REQUIRED'],
      'DISABLED',
      'auth',
      'clients must authenticate to the proxy with an IAM token',
      {
        source: `${PROXY}, Auth[].IAMAuth (ENABLED is for SQL Server only)`,
        setBy: NOT_BUILT,
      },
    ),
  ],
};
