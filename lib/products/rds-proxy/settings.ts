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
import type { SettingSpec, SettingsCatalogue } from '../types';

const POOL = 'RDS API reference, ConnectionPoolConfiguration (CreateDBProxy / ModifyDBProxyTargetGroup)';
const PROXY = 'RDS API reference, CreateDBProxy';

const base = {
  since: null,
} as const;

export const RDS_PROXY_SETTINGS: SettingsCatalogue = {
  product: 'RDS Proxy',
  settings: [
    {
      ...base,
      name: 'MaxConnectionsPercent',
      type: 'integer',
      unit: 'percent',
      min: 1,
      max: 100,
      defaults: [{ since: null, value: 100 }],
      area: 'pool',
      summary: "the pool's size as a share of the database's max_connections",
      source: POOL,
      setBy: "the proxy's `maxConnectionsPercent` field",
    },
    {
      ...base,
      name: 'MaxIdleConnectionsPercent',
      type: 'integer',
      unit: 'percent',
      min: 0,
      max: 100,
      defaults: [{ since: null, value: 50 }],
      area: 'pool',
      summary: 'idle connections the proxy keeps open, as a share of max_connections',
      source: POOL,
      setBy: "the proxy's `maxIdleConnectionsPercent` field",
    },
    {
      ...base,
      name: 'ConnectionBorrowTimeout',
      type: 'integer',
      unit: 'seconds',
      min: 0,
      max: 300,
      defaults: [{ since: null, value: 120 }],
      area: 'timeouts',
      summary: 'how long a client waits for a connection from a full pool before it gets an error',
      source: `${POOL}; CloudFormation ConnectionPoolConfigurationInfoFormat ("Must be between 0 and 300")`,
      setBy: "the proxy's `borrowTimeoutSeconds` field",
    },
    {
      ...base,
      name: 'InitQuery',
      type: 'text',
      unit: null,
      defaults: [{ since: null, value: null }],
      area: 'session',
      summary:
        'SQL run on each new database connection (SET statements): the documented way to give every connection the same settings without pinning',
      source: POOL,
    },
    {
      ...base,
      name: 'SessionPinningFilters',
      type: 'list',
      unit: null,
      values: ['EXCLUDE_VARIABLE_SETS'],
      defaults: [{ since: null, value: [] }],
      area: 'session',
      summary: 'SQL operations that do not pin a session',
      source: `${POOL}; RDS User Guide, "Avoiding pinning an RDS Proxy"`,
      refused:
        'is not available for PostgreSQL: its one filter, EXCLUDE_VARIABLE_SETS, applies to MySQL (RDS User Guide, "Avoiding pinning an RDS Proxy"); for PostgreSQL use InitQuery for settings every connection needs',
    },
    {
      ...base,
      name: 'IdleClientTimeout',
      type: 'integer',
      unit: 'seconds',
      min: 1,
      max: 28_800,
      defaults: [{ since: null, value: 1800 }],
      area: 'timeouts',
      summary: 'client connections idle longer are closed by the proxy',
      source: `${PROXY} (IdleClientTimeout: default 1,800 s, at most 28,800 s)`,
    },
    {
      ...base,
      name: 'RequireTLS',
      type: 'boolean',
      unit: null,
      defaults: [{ since: null, value: false }],
      area: 'auth',
      summary: 'clients must use TLS',
      source: PROXY,
      setBy: "the proxy's `requireTls` field",
    },
    {
      ...base,
      name: 'DebugLogging',
      type: 'boolean',
      unit: null,
      defaults: [{ since: null, value: false }],
      area: 'network',
      summary: 'log SQL statements and connection details to CloudWatch Logs',
      source: PROXY,
      setBy: "the proxy's `debugLogging` field",
    },
    {
      ...base,
      name: 'DefaultAuthScheme',
      type: 'enum',
      unit: null,
      values: ['NONE', 'IAM_AUTH'],
      defaults: [{ since: null, value: 'NONE' }],
      area: 'auth',
      summary: 'IAM_AUTH: end-to-end IAM authentication, client to proxy and proxy to database, no secret',
      source: `${PROXY}; aws-cdk-lib DefaultAuthScheme (v2.235.0)`,
      setBy:
        'proxylab: the runners authenticate with the database secret from Secrets Manager (IAM authentication end to end is not built yet)',
    },
    {
      ...base,
      name: 'IAMAuth',
      type: 'enum',
      unit: null,
      values: ['DISABLED', 'REQUIRED'],
      defaults: [{ since: null, value: 'DISABLED' }],
      area: 'auth',
      summary: 'clients must authenticate to the proxy with an IAM token',
      source: `${PROXY}, Auth[].IAMAuth (ENABLED is for SQL Server only)`,
      setBy:
        'proxylab: the runners authenticate with the database secret from Secrets Manager (IAM authentication is not built yet)',
    },
  ] satisfies readonly SettingSpec[],
};
