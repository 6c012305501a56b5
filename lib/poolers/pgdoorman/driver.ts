/**
 * PgDoorman (ozontech/pg_doorman, MIT) as a pooler driver (lib/poolers/driver.ts): one multithreaded
 * process (`worker_threads`), prepared statements carried through transaction pooling by a pool-level
 * cache, a PgBouncer-like admin console on the virtual database `pgdoorman`, and a binary upgrade
 * that hands the listening socket and the idle clients to a new process.
 *
 * Admin console facts (src/admin/mod.rs at v3.10.7; answers captured from the 3.10.7 binary in
 * test/unit/pooler-driver.test.ts):
 * - SHOW POOLS / SHOW STATS answer in PgBouncer's columns (../show-stats.ts parses both); SHOW
 *   POOLS also has `pool_size` and `paused`; SHOW VERSION says `PgDoorman 3.10.7`; SHOW CONFIG lists
 *   only a few settings (not prepared_statements nor worker_threads), so the adapters record what
 *   they configured.
 * - There is no `SET` but `SET log_level`: a pool is resized by rewriting `pool_size` in the file
 *   and `RELOAD` ("Pool definitions (added, removed, resized)" are reloaded: operations/signals.md);
 *   SHOW POOLS then reports the new `pool_size` (checked: 5 → 7). RELOAD rebuilds a changed pool,
 *   closing its idle server connections.
 * - `RECONNECT [db]` closes idle server connections at once and retires active ones when they come
 *   back: the reset between steps. `KILL db` is in the documentation's table but not in 3.10.7's
 *   dispatch: it answers "Unsupported query against the admin database" as a FATAL and closes the
 *   admin session (checked), so it is never sent.
 * - Statements are read one per query message (a `;`-joined string is not split), as psql -c sends.
 *
 * Signals (operations/signals.md, src/app/server.rs at v3.10.7): SIGTERM is the immediate shutdown
 * (clients closed, no drain); SIGHUP reloads; SIGUSR2 (≥ 3.3.1) is the binary upgrade; SIGINT shuts
 * down only in a foreground process with a TTY — without one (systemd, a child process of proxylab)
 * it starts a binary upgrade, so proxylab never sends it. SIGQUIT is not handled.
 */
import { POOL_MODES } from '../products';
import type { AdminOp, PoolerDriver, PoolerLifecycle } from '../driver';
import { parsePoolsAndStats } from '../show-stats';
import { PGDOORMAN_PREPARED_SINCE } from '../../products/pgdoorman/entry';
import { versionAtLeast } from '../../products/version';
import { parsePgdoormanVersion, pgdoormanPoolName, withPoolSize, withServerPort } from './config';
import {
  PGDOORMAN_HOST_MAX_CONNECTIONS,
  pgdoormanPaths,
  pgdoormanUnitInstance,
  pgdoormanUnits,
  renderPgdoormanHostFiles,
} from './host';
import {
  PGDOORMAN_BIN,
  PGDOORMAN_BUILD_MIN_MEMORY_GIB,
  PGDOORMAN_NEEDS_INTERNET,
  PGDOORMAN_USER,
  pgdoormanInstallCommands,
} from './install';
import { DEFAULT_PGDOORMAN_VERSION, PGDOORMAN_RELEASES } from './releases';

/** The data port on a pooler host (PgDoorman's own examples use 6432, as PgBouncer's do). */
const PGDOORMAN_PORT = 6432;

/**
 * The oldest release in PgDoorman's changelog (1.7.7) already has `prepared_statements` (1.8.1
 * "Fixed config value of prepared_statements"); proxylab pins 3.x only. The fact is its product entry's
 * (lib/products/pgdoorman/entry.ts).
 */
export { PGDOORMAN_PREPARED_SINCE };
/** SIGUSR2 and the admin UPGRADE: binary upgrade in every mode (changelog 3.3.1). */
export const PGDOORMAN_SIGUSR2_SINCE = '3.3.1';
/** PAUSE, RESUME, RECONNECT on the admin console (changelog 3.3.2). */
export const PGDOORMAN_PAUSE_SINCE = '3.3.2';
/** Idle clients move to the new process during a binary upgrade (changelog 3.5.0). */
export const PGDOORMAN_CLIENT_MIGRATION_SINCE = '3.5.0';
/** `shutdown_timeout` default: how long the old process drains during a binary upgrade. */
export const PGDOORMAN_SHUTDOWN_TIMEOUT_MS = 10_000;
/** `worker_threads` default (general.md). */
export const PGDOORMAN_DEFAULT_WORKER_THREADS = 4;
/** `prepared_statements_cache_size` default (general.md): a lab's default for a PgDoorman pooler. */
export const PGDOORMAN_DEFAULT_PREPARED_CACHE = 8192;

const known = (v: string | null, min: string): boolean => versionAtLeast(v, min);

function reset(aliases: readonly string[]): AdminOp {
  return { statements: aliases.map((a) => `RECONNECT ${a}`), check: () => null };
}

function setPoolSize(size: number, aliases: readonly string[]): AdminOp {
  if (!Number.isInteger(size) || size < 1)
    throw new Error(`pool size must be a positive integer, got ${size}`);
  return {
    statements: ['RELOAD', 'SHOW POOLS'],
    rewriteConfig: (text) => withPoolSize(text, size),
    check: (answers) => {
      const pools = answers[1] ?? [];
      for (const alias of aliases) {
        const row = pools.find((r) => r.database === alias);
        if (!row || Number(row.pool_size) !== size)
          return `did not apply pool size ${size} to ${alias} (SHOW POOLS says ${row?.pool_size ?? 'nothing'})`;
      }
      return null;
    },
  };
}

/** SHOW POOLS (the last answer) pools of `aliases` whose `paused` column is not `want` (1 paused, 0 not; 3.10.7 has the column). */
function pausedCheck(aliases: readonly string[], want: '0' | '1', what: string): AdminOp['check'] {
  return (answers) => {
    const pools = answers[answers.length - 1] ?? [];
    const wrong = aliases.filter((a) => pools.find((r) => r.database === a)?.paused !== want);
    return wrong.length === 0 ? null : `did not ${what} ${wrong.join(', ')} (SHOW POOLS paused ≠ ${want})`;
  };
}

export const PGDOORMAN_LIFECYCLE: PoolerLifecycle = {
  reload: { signal: 'SIGHUP', adminStatement: 'RELOAD' },
  // "PAUSE [db] blocks new backend connection acquisition (active transactions continue)" (3.3.2):
  // it does not wait for server connections to close, unlike PgBouncer's.
  pause: (version, database) =>
    known(version, PGDOORMAN_PAUSE_SINCE)
      ? {
          pause: [database === null ? 'PAUSE' : `PAUSE ${database}`],
          resume: [database === null ? 'RESUME' : `RESUME ${database}`],
          drainsServers: false,
        }
      : null,
  restart: (version) =>
    known(version, PGDOORMAN_SIGUSR2_SINCE)
      ? {
          kind: 'binary-upgrade',
          signal: 'SIGUSR2',
          adminStatement: 'UPGRADE',
          migratesIdleClients: known(version, PGDOORMAN_CLIENT_MIGRATION_SINCE),
          drainTimeoutMs: PGDOORMAN_SHUTDOWN_TIMEOUT_MS,
        }
      : // before 3.3.1 SIGINT was the upgrade signal, also in the foreground (no admin statement)
        {
          kind: 'binary-upgrade',
          signal: 'SIGINT',
          adminStatement: null,
          migratesIdleClients: false,
          drainTimeoutMs: PGDOORMAN_SHUTDOWN_TIMEOUT_MS,
        },
  // SIGTERM is immediate and SIGINT without a TTY is an upgrade: no signal only drains and exits.
  gracefulStopSignals: () => [],
};

export const pgdoormanDriver: PoolerDriver = {
  product: 'pgdoorman',
  displayName: 'PgDoorman',
  poolSizeSettings: ['pool_size'],
  poolModes: POOL_MODES,
  capabilities: (version) => ({
    preparedStatementsInTransactionMode: known(version, PGDOORMAN_PREPARED_SINCE),
    // its listener sets SO_REUSEPORT (src/app/server.rs), but one multithreaded process is the design
    reusePort: true,
    peering: false,
    singleThreaded: false,
    runtimePoolResize: 'config-reload',
    gracefulBinaryUpgrade: known(version, PGDOORMAN_SIGUSR2_SINCE),
  }),
  preparedStatementsSince: PGDOORMAN_PREPARED_SINCE,
  defaultMaxPreparedStatements: PGDOORMAN_DEFAULT_PREPARED_CACHE,
  poolDatabaseAlias: pgdoormanPoolName,
  adminDatabase: 'pgdoorman',
  admin: {
    relaySslmode: 'disable',
    reset,
    setPoolSize,
    setMaxPreparedStatements: () => {
      throw new Error(
        'PgDoorman has no run-time switch for prepared statements (prepared_statements is read at start)',
      );
    },
    // PAUSE [db] only blocks new checkouts (PGDOORMAN_LIFECYCLE): no drain, unlike PgBouncer's
    pause: (aliases) => ({
      statements: [...aliases.map((a) => `PAUSE ${a}`), 'SHOW POOLS'],
      check: pausedCheck(aliases, '1', 'pause'),
    }),
    resume: (aliases) => ({
      statements: [...aliases.map((a) => `RESUME ${a}`), 'SHOW POOLS'],
      check: pausedCheck(aliases, '0', 'resume'),
    }),
    // re-pointing: every pool's server_port rewritten, then RELOAD (operations/signals.md: pool
    // definitions are reloaded); checked as far as the console says: every pool is still served
    reload: (aliases, port) => ({
      statements: ['RELOAD', 'SHOW POOLS'],
      rewriteConfig: (text) => withServerPort(text, port),
      check: (answers) => {
        const pools = answers[1] ?? [];
        const gone = aliases.filter((a) => !pools.some((r) => r.database === a));
        return gone.length === 0 ? null : `${gone.join(', ')} not served after RELOAD (SHOW POOLS)`;
      },
    }),
    probe: {
      statements: ['SHOW VERSION'],
      parse: ([versionRows]) => ({
        version: parsePgdoormanVersion(Object.values(versionRows?.[0] ?? {})[0] ?? ''),
        // not in SHOW CONFIG: the adapter that wrote the configuration knows it
        maxPreparedStatements: null,
      }),
      preparedStatementsFromConfig: true,
    },
  },
  stats: { statements: ['SHOW POOLS', 'SHOW STATS'], parse: parsePoolsAndStats },
  immediateStopSignals: () => ['SIGTERM'],
  lifecycle: PGDOORMAN_LIFECYCLE,
  coresPerProcess: (workerThreads) => workerThreads ?? PGDOORMAN_DEFAULT_WORKER_THREADS,
  releases: PGDOORMAN_RELEASES,
  defaultVersion: DEFAULT_PGDOORMAN_VERSION,
  host: {
    binaryPath: PGDOORMAN_BIN,
    systemUser: PGDOORMAN_USER,
    installCommands: pgdoormanInstallCommands,
    needsInternet: PGDOORMAN_NEEDS_INTERNET,
    dataPort: PGDOORMAN_PORT,
    layout: pgdoormanPaths,
    render: renderPgdoormanHostFiles,
    units: pgdoormanUnits,
    processUnit: pgdoormanUnitInstance,
    versionStatement: 'SHOW VERSION',
    parseVersion: parsePgdoormanVersion,
    // renderPgdoormanHostFiles → renderPgdoormanToml (./host.ts, ./config.ts)
    kitSettings: (p, mode) => ({
      pool_size: null,
      pool_mode: mode,
      prepared_statements: p.maxPreparedStatements > 0,
      ...(p.maxPreparedStatements > 0 ? { prepared_statements_cache_size: p.maxPreparedStatements } : {}),
      worker_threads: null,
      max_connections: PGDOORMAN_HOST_MAX_CONNECTIONS,
      tls_mode: p.tls ? 'require' : 'disable',
    }),
    // `cargo build --release` with LTO on a 2-vCPU host, before the bootstrap
    bootMinutes: 60,
    buildMemory: {
      minGiB: PGDOORMAN_BUILD_MIN_MEMORY_GIB,
      what: 'a Rust release build with link-time optimization',
    },
  },
  localBinary: {
    executable: 'pg_doorman',
    envVar: 'PROXYLAB_PGDOORMAN',
    searchPaths: (platform) => [
      '/usr/bin/pg_doorman',
      '/usr/local/bin/pg_doorman',
      ...(platform === 'darwin' ? ['/opt/homebrew/bin/pg_doorman'] : []),
    ],
    // Its packages come from the maintainers' own repositories, which proxylab does not enable for you.
    packages: {},
    howToGet: [
      'Ubuntu: sudo add-apt-repository ppa:vadv/pg-doorman && sudo apt install pg-doorman',
      'Fedora/RHEL: sudo dnf copr enable @pg-doorman/pg-doorman && sudo dnf install pg_doorman',
      'from source (Rust ≥ 1.87): git clone https://github.com/ozontech/pg_doorman.git && cd pg_doorman && cargo build --release (target/release/pg_doorman)',
      'then put it on PATH or set PROXYLAB_PGDOORMAN=/path/to/pg_doorman',
    ],
    parseVersion: (text) => {
      const m = /pg_?doorman\s+(\d+\.\d+(?:\.\d+)?)/i.exec(text);
      return m?.[1] ? parsePgdoormanVersion(m[1]) : null;
    },
  },
  costLabel: 'PgDoorman process',
};
