/**
 * A throwaway PgBouncer in front of the local cluster: database `bench` in transaction pooling and
 * `bench_session` in session pooling, both on the same server database, pool size = pool percent ×
 * max_connections (the local analogue of RDS Proxy's MaxConnectionsPercent). The admin console
 * (user `postgres`, database `pgbouncer`) resets pools between steps and resizes them at run time.
 *
 * PgBouncer 1.18 facts this relies on (checked against 1.18.0):
 * - `SET default_pool_size = N` on the admin console is applied at once to databases without their
 *   own pool_size; `SHOW DATABASES` then reports the new pool_size.
 * - `KILL db` drops every client and server connection of db and pauses it; `RESUME db` lifts the
 *   pause. Together they reset the pool (prepared statements left on server connections go too).
 * - PgBouncer refuses to run as root, like PostgreSQL.
 * PgBouncer ≥ 1.21 adds `max_prepared_statements` (0 disables prepared statements through a
 * transaction pool; default 200 since 1.24); the ini leaves PgBouncer's default, the probe reads it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InfrastructureError } from '../core/errors';
import type { LocalBinaries } from './binaries';
import { BENCH_DB, BENCH_USER, howExited, SUPERUSER, type PostgresCluster } from './postgres';
import { findFreePort } from './ports-free';
import { delay, startServer, type RunAs, type ServerProcess } from './process';
import { psqlExec, psqlQueryOne, type PsqlTarget, type Row } from './psql';

export const TRANSACTION_DB = BENCH_DB;
export const SESSION_DB = 'bench_session';
const ADMIN_USER = SUPERUSER;

export interface PgbouncerOptions {
  readonly bins: LocalBinaries;
  readonly baseDir: string;
  readonly runAs: RunAs | null;
  readonly server: PostgresCluster;
  /** Initial pool size as % of the server's max_connections. */
  readonly poolPercent: number;
  readonly maxClientConnections?: number;
  readonly excludePorts?: ReadonlySet<number>;
}

export interface Pgbouncer {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly pid: number;
  readonly logFile: string;
  readonly iniFile: string;
  readonly version: string;
  /** The pool size configured at start. */
  readonly initialPoolSize: number;
  /** max_prepared_statements as SHOW CONFIG reported it at start; null when absent (PgBouncer < 1.21). */
  readonly initialMaxPreparedStatements: number | null;
  /** max_prepared_statements in effect now (null: the setting does not exist in this version). */
  maxPreparedStatements(): number | null;
  /** SET max_prepared_statements = n on the admin console; verified through SHOW CONFIG. */
  setMaxPreparedStatements(n: number): Promise<void>;
  /** Pool size now in effect. */
  poolSize(): number;
  admin(): PsqlTarget;
  /** KILL + RESUME one database (or both). */
  reset(dbname?: string): Promise<void>;
  /** Set the pool size of both databases; verified through SHOW DATABASES. */
  setPoolSize(size: number): Promise<void>;
  showPools(): Promise<Row[]>;
  stop(): Promise<void>;
  /** Leave the server running after proxylab exits (--keep). */
  release(): void;
  /** Resolves when the PgBouncer process ends, saying how (`was killed by SIGKILL`). */
  readonly exited: Promise<string>;
}

/** Pool size for a percentage of max_connections: rounded, at least 1. */
export function poolSizeFor(percent: number, maxConnections: number): number {
  return Math.max(1, Math.round((percent / 100) * maxConnections));
}

export function pgbouncerIni(p: {
  serverPort: number;
  listenPort: number;
  poolSize: number;
  authFile: string;
  logFile: string;
  pidFile: string;
  maxClientConnections: number;
}): string {
  return [
    '; written by proxylab local: a throwaway pooler, trust auth on 127.0.0.1 only',
    '[databases]',
    `${TRANSACTION_DB} = host=127.0.0.1 port=${p.serverPort} dbname=${BENCH_DB} pool_mode=transaction`,
    `${SESSION_DB} = host=127.0.0.1 port=${p.serverPort} dbname=${BENCH_DB} pool_mode=session`,
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${p.listenPort}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${p.authFile}`,
    `admin_users = ${ADMIN_USER}`,
    'pool_mode = transaction',
    `default_pool_size = ${p.poolSize}`,
    'min_pool_size = 0',
    'reserve_pool_size = 0',
    `max_client_conn = ${p.maxClientConnections}`,
    'ignore_startup_parameters = extra_float_digits',
    'log_connections = 0',
    'log_disconnections = 0',
    'stats_period = 1',
    `logfile = ${p.logFile}`,
    `pidfile = ${p.pidFile}`,
    '',
  ].join('\n');
}

export async function startPgbouncer(opts: PgbouncerOptions): Promise<Pgbouncer> {
  const root = path.join(opts.baseDir, 'pgbouncer');
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  if (opts.runAs) fs.chownSync(root, opts.runAs.uid, opts.runAs.gid);
  const authFile = path.join(root, 'userlist.txt');
  fs.writeFileSync(authFile, `"${BENCH_USER}" ""\n"${ADMIN_USER}" ""\n`);
  const logFile = path.join(root, 'pgbouncer.log');
  const iniFile = path.join(root, 'pgbouncer.ini');
  const initialPoolSize = poolSizeFor(opts.poolPercent, opts.server.maxConnections);
  const maxClientConnections = opts.maxClientConnections ?? 2000;
  const excluded = new Set(opts.excludePorts ?? []);
  excluded.add(opts.server.port);
  let lastError = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await findFreePort(excluded);
    excluded.add(port);
    fs.writeFileSync(
      iniFile,
      pgbouncerIni({
        serverPort: opts.server.port,
        listenPort: port,
        poolSize: initialPoolSize,
        authFile,
        logFile,
        pidFile: path.join(root, 'pgbouncer.pid'),
        maxClientConnections,
      }),
    );
    for (const f of [authFile, iniFile]) if (opts.runAs) fs.chownSync(f, opts.runAs.uid, opts.runAs.gid);
    const server = startServer('pgbouncer', opts.bins.pgbouncer, [iniFile], {
      runAs: opts.runAs,
      logFile: path.join(root, 'stdout.log'),
      cwd: root,
    });
    const admin: PsqlTarget = {
      psql: opts.bins.psql,
      host: '127.0.0.1',
      port,
      user: ADMIN_USER,
      dbname: 'pgbouncer',
    };
    const ready = await waitAdminReady(server, admin, iniFile, 15000);
    if (!ready) {
      await server.stop('SIGTERM', 5000);
      lastError = readTail(logFile) || readTail(path.join(root, 'stdout.log'));
      if (/Address already in use|bind/i.test(lastError)) continue;
      throw new InfrastructureError(`PgBouncer did not start on port ${port}: ${lastError}`);
    }
    const mps = await readMaxPreparedStatements(admin);
    return makePgbouncer(
      server,
      port,
      admin,
      logFile,
      iniFile,
      opts.bins.poolerVersion,
      initialPoolSize,
      mps,
    );
  }
  throw new InfrastructureError(`PgBouncer could not bind a free port after 5 attempts: ${lastError}`);
}

function makePgbouncer(
  server: ServerProcess,
  port: number,
  admin: PsqlTarget,
  logFile: string,
  iniFile: string,
  version: string,
  initialPoolSize: number,
  initialMps: number | null,
): Pgbouncer {
  let current = initialPoolSize;
  let mps = initialMps;
  return {
    host: '127.0.0.1',
    port,
    pid: server.pid,
    logFile,
    iniFile,
    version,
    initialPoolSize,
    initialMaxPreparedStatements: initialMps,
    maxPreparedStatements: () => mps,
    async setMaxPreparedStatements(n) {
      if (mps === null)
        throw new InfrastructureError(`PgBouncer ${version} has no max_prepared_statements (needs ≥ 1.21)`);
      if (!Number.isInteger(n) || n < 0)
        throw new InfrastructureError(`max_prepared_statements must be an integer ≥ 0, got ${n}`);
      await psqlExec(admin, [`SET max_prepared_statements = ${n}`]);
      const now = await readMaxPreparedStatements(admin);
      if (now !== n)
        throw new InfrastructureError(
          `PgBouncer did not apply max_prepared_statements ${n} (SHOW CONFIG says ${now ?? 'nothing'})`,
        );
      mps = n;
    },
    poolSize: () => current,
    admin: () => admin,
    async reset(dbname) {
      const dbs = dbname ? [dbname] : [TRANSACTION_DB, SESSION_DB];
      await psqlExec(
        admin,
        dbs.flatMap((db) => [`KILL ${db}`, `RESUME ${db}`]),
      );
    },
    async setPoolSize(size) {
      if (!Number.isInteger(size) || size < 1)
        throw new InfrastructureError(`pool size must be a positive integer, got ${size}`);
      await psqlExec(admin, [`SET default_pool_size = ${size}`]);
      const rows = await psqlQueryOne(admin, 'SHOW DATABASES');
      for (const db of [TRANSACTION_DB, SESSION_DB]) {
        const row = rows.find((r) => r.name === db);
        if (!row || Number(row.pool_size) !== size) {
          throw new InfrastructureError(
            `PgBouncer did not apply pool size ${size} to ${db} (SHOW DATABASES says ${row?.pool_size ?? 'nothing'})`,
          );
        }
      }
      current = size;
    },
    async showPools() {
      return await psqlQueryOne(admin, 'SHOW POOLS');
    },
    // SIGTERM = immediate shutdown (SIGINT would wait for clients).
    release: () => server.release(),
    stop: () => server.stop('SIGTERM', 10000),
    exited: howExited(server),
  };
}

/**
 * max_prepared_statements from SHOW CONFIG; null when PgBouncer has no such setting (< 1.21).
 * PgBouncer ≥ 1.21 reports it `changeable: yes`, so the admin console may SET it at run time
 * (checked against 1.25.2: SET 0 brings back `prepared statement "P_0" already exists`, SET 200
 * makes pgbench -M prepared through the transaction pool succeed).
 */
async function readMaxPreparedStatements(admin: PsqlTarget): Promise<number | null> {
  const rows = await psqlQueryOne(admin, 'SHOW CONFIG');
  const row = rows.find((r) => r.key === 'max_prepared_statements');
  if (!row) return null;
  const n = Number(row.value);
  return Number.isInteger(n) ? n : null;
}

async function waitAdminReady(
  server: ServerProcess,
  admin: PsqlTarget,
  iniFile: string,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.exited()) return false;
    try {
      // SHOW CONFIG names the ini file: make sure we reached our PgBouncer, not another on that port.
      const rows = await psqlQueryOne(admin, 'SHOW CONFIG', 5000);
      const conf = rows.find((r) => r.key === 'conffile');
      return conf?.value === iniFile && !server.exited();
    } catch {
      await delay(100);
    }
  }
  return false;
}

function readTail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-3).join(' | ');
  } catch {
    return '';
  }
}
