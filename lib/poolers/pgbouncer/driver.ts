/**
 * PgBouncer as a pooler driver (lib/poolers/driver.ts): every PgBouncer fact the adapters need,
 * each written once — capabilities by version (config.ts: peering ≥ 1.19, max_prepared_statements
 * ≥ 1.21; so_reuseport since 1.12, older than any release proxylab supports), the admin console's
 * statements and their checks (both `proxylab local` and the runner's pool control run these),
 * SHOW POOLS / SHOW STATS parsed into the pooler-metrics schema, immediate-stop signals by version
 * (signals.ts), pinned releases (releases.ts) and how `proxylab local` finds the binary.
 *
 * Admin console facts (checked against 1.18.0 and 1.25.2):
 * - `KILL db` drops every client and server connection of db and pauses it; `RESUME db` lifts the
 *   pause. Together they reset the pool (prepared statements left on server connections go too).
 * - `SET default_pool_size = N` applies at once to databases without their own pool_size;
 *   `SHOW DATABASES` then reports it. `max_user_connections` is set with it (config.ts says why).
 * - `SET max_prepared_statements = N` (≥ 1.21, `changeable: yes` in SHOW CONFIG): SET 0 brings back
 *   `prepared statement "P_0" already exists` through a transaction pool, SET 200 makes
 *   pgbench -M prepared succeed (checked against 1.25.2).
 */
import {
  PGBOUNCER_MAX_PREPARED_STATEMENTS_ON,
  PGBOUNCER_PREPARED_SINCE,
} from '../../products/pgbouncer/entry';
import type { AdminOp, AdminRow, PoolerDriver } from '../driver';
import { parsePoolsAndStats } from '../show-stats';
import { POOL_MODES } from '../products';
import { parsePgbouncerVersion, supportsMaxPreparedStatements, supportsPeering } from './config';
import {
  PGBOUNCER_HOST_MAX_CLIENT_CONN,
  pgbouncerUnitInstance,
  PGBOUNCER_ROLLING_GENERATION,
  pgbouncerUnits,
  poolerPaths,
  renderPgbouncerHostFiles,
} from './host';
import { PGBOUNCER_PORT, poolDatabaseAlias } from './layout';
import { PGBOUNCER_BIN, PGBOUNCER_USER, pgbouncerInstallCommands } from './install';
import { DEFAULT_PGBOUNCER_VERSION, PGBOUNCER_RELEASES } from './releases';
import { immediateStopSignals, PGBOUNCER_LIFECYCLE } from './signals';

/** max_prepared_statements from SHOW CONFIG rows; null when this PgBouncer has no such setting (< 1.21). */
export function maxPreparedStatementsIn(config: readonly AdminRow[]): number | null {
  const row = config.find((r) => r.key === 'max_prepared_statements');
  if (!row) return null;
  const n = Number(row.value);
  return Number.isInteger(n) ? n : null;
}

function reset(aliases: readonly string[]): AdminOp {
  return { statements: aliases.flatMap((a) => [`KILL ${a}`, `RESUME ${a}`]), check: () => null };
}

function setPoolSize(size: number, aliases: readonly string[]): AdminOp {
  if (!Number.isInteger(size) || size < 1)
    throw new Error(`pool size must be a positive integer, got ${size}`);
  return {
    statements: [`SET default_pool_size = ${size}`, `SET max_user_connections = ${size}`, 'SHOW DATABASES'],
    check: (answers) => {
      const dbs = answers[2] ?? [];
      for (const alias of aliases) {
        const row = dbs.find((r) => r.name === alias);
        if (!row || Number(row.pool_size) !== size)
          return `did not apply pool size ${size} to ${alias} (SHOW DATABASES says ${row?.pool_size ?? 'nothing'})`;
      }
      return null;
    },
  };
}

function setMaxPreparedStatements(n: number): AdminOp {
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`max_prepared_statements must be an integer ≥ 0, got ${n}`);
  return {
    statements: [`SET max_prepared_statements = ${n}`, 'SHOW CONFIG'],
    check: (answers) => {
      const row = (answers[1] ?? []).find((r) => r.key === 'max_prepared_statements');
      return row && Number(row.value) === n
        ? null
        : `did not apply max_prepared_statements ${n} (SHOW CONFIG says ${row?.value ?? 'nothing'})`;
    },
  };
}

/** SHOW DATABASES (the last answer) rows of `aliases` whose `paused` column is not `want` (1 paused, 0 not). */
function pausedCheck(aliases: readonly string[], want: '0' | '1', what: string): AdminOp['check'] {
  return (answers) => {
    const dbs = answers[answers.length - 1] ?? [];
    const wrong = aliases.filter((a) => dbs.find((r) => r.name === a)?.paused !== want);
    return wrong.length === 0
      ? null
      : `did not ${what} ${wrong.join(', ')} (SHOW DATABASES paused ≠ ${want})`;
  };
}

/**
 * PAUSE returns once every server connection is released and closed (doc/usage.md: "in session
 * pooling mode the client must disconnect"): through a session pool with connected clients it
 * waits for them, so the local disruption pauses transaction pools only.
 */
function pause(aliases: readonly string[]): AdminOp {
  return {
    statements: [...aliases.map((a) => `PAUSE ${a}`), 'SHOW DATABASES'],
    check: pausedCheck(aliases, '1', 'pause'),
  };
}

function resume(aliases: readonly string[]): AdminOp {
  return {
    statements: [...aliases.map((a) => `RESUME ${a}`), 'SHOW DATABASES'],
    check: pausedCheck(aliases, '0', 'resume'),
  };
}

function reload(aliases: readonly string[], port: number): AdminOp {
  return {
    statements: ['RELOAD', 'SHOW DATABASES'],
    check: (answers) => {
      const dbs = answers[1] ?? [];
      const wrong = aliases.filter((a) => dbs.find((r) => r.name === a)?.port !== String(port));
      return wrong.length === 0
        ? null
        : `did not re-point ${wrong.join(', ')} to port ${port} (SHOW DATABASES after RELOAD)`;
    },
  };
}

export const pgbouncerDriver: PoolerDriver = {
  product: 'pgbouncer',
  displayName: 'PgBouncer',
  poolSizeSettings: ['default_pool_size', 'max_user_connections'],
  poolModes: POOL_MODES,
  capabilities: (version) => ({
    preparedStatementsInTransactionMode: version !== null && supportsMaxPreparedStatements(version),
    // so_reuseport exists since 1.12, older than every release proxylab pins or finds (Debian 12: 1.18).
    reusePort: true,
    peering: version !== null && supportsPeering(version),
    // one event loop per process (hence so_reuseport and several processes for several cores)
    singleThreaded: true,
    runtimePoolResize: 'admin-set',
    // -R (online restart) is deprecated since 1.20; a process is replaced by a so_reuseport sibling
    gracefulBinaryUpgrade: false,
  }),
  preparedStatementsSince: PGBOUNCER_PREPARED_SINCE,
  defaultMaxPreparedStatements: PGBOUNCER_MAX_PREPARED_STATEMENTS_ON,
  poolDatabaseAlias,
  adminDatabase: 'pgbouncer',
  admin: {
    relaySslmode: 'prefer',
    reset,
    setPoolSize,
    setMaxPreparedStatements,
    pause,
    resume,
    reload,
    probe: {
      statements: ['SHOW VERSION', 'SHOW CONFIG'],
      parse: ([versionRows, configRows]) => {
        const v = parsePgbouncerVersion(Object.values(versionRows?.[0] ?? {})[0] ?? '');
        return {
          version: v ? v.join('.') : null,
          maxPreparedStatements: maxPreparedStatementsIn(configRows ?? []),
        };
      },
    },
  },
  stats: { statements: ['SHOW POOLS', 'SHOW STATS'], parse: parsePoolsAndStats },
  immediateStopSignals,
  lifecycle: PGBOUNCER_LIFECYCLE,
  coresPerProcess: () => 1,
  releases: PGBOUNCER_RELEASES,
  defaultVersion: DEFAULT_PGBOUNCER_VERSION,
  host: {
    binaryPath: PGBOUNCER_BIN,
    systemUser: PGBOUNCER_USER,
    installCommands: pgbouncerInstallCommands,
    needsInternet: null,
    dataPort: PGBOUNCER_PORT,
    layout: poolerPaths,
    render: renderPgbouncerHostFiles,
    units: pgbouncerUnits,
    processUnit: (name, i) => pgbouncerUnitInstance(name, i),
    rollingGeneration: PGBOUNCER_ROLLING_GENERATION,
    versionStatement: 'SHOW VERSION',
    parseVersion: (text) => parsePgbouncerVersion(text)?.join('.') ?? null,
    // renderPgbouncerHostFiles → renderPgbouncerIni (./host.ts, ./config.ts)
    kitSettings: (p, mode, mps) => ({
      default_pool_size: null,
      max_user_connections: null,
      pool_mode: mode,
      // written only when > 0 (and the release has it); otherwise the release's default
      ...(mps !== null && mps > 0 ? { max_prepared_statements: mps } : {}),
      so_reuseport: p.processes > 1,
      server_tls_sslmode: 'require',
      client_tls_sslmode: p.tls ? 'require' : 'disable',
      max_client_conn: PGBOUNCER_HOST_MAX_CLIENT_CONN,
      stats_period: 1,
    }),
  },
  localBinary: {
    executable: 'pgbouncer',
    envVar: 'PROXYLAB_PGBOUNCER',
    searchPaths: (platform) => [
      '/usr/sbin/pgbouncer',
      '/usr/bin/pgbouncer',
      '/usr/local/bin/pgbouncer',
      '/usr/local/sbin/pgbouncer',
      ...(platform === 'darwin'
        ? ['/opt/homebrew/bin/pgbouncer', '/usr/local/opt/pgbouncer/bin/pgbouncer']
        : []),
    ],
    packages: { 'apt-get': 'pgbouncer', dnf: 'pgbouncer', yum: 'pgbouncer', brew: 'pgbouncer' },
    parseVersion: (text) => {
      const v = parsePgbouncerVersion(/PgBouncer\s+\S+/i.exec(text)?.[0] ?? '');
      return v ? v.join('.') : null;
    },
  },
  costLabel: 'PgBouncer process',
};
