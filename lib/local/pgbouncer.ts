/**
 * A throwaway PgBouncer in front of the local cluster: database `bench` in transaction pooling and
 * `bench_session` in session pooling, both on the same server database, pool size = pool percent ×
 * max_connections (the local analogue of RDS Proxy's MaxConnectionsPercent). The admin console
 * (user `postgres`, database `pgbouncer`) resets pools between steps and resizes them at run time.
 *
 * The ini comes from the shared configuration module (lib/poolers/pgbouncer/config.ts), the one the cloud
 * pooler host renders too. With `processes` > 1 (--pooler-processes) the processes share the TCP
 * port with so_reuseport, the pool is split across them, and each is reached on its own unix socket
 * directory (`pgbouncer/s<i>`) for the admin console: resets, resizes and the prepared-statement
 * switch go to every process.
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
import { delay, startServer, type RunAs, type ServerProcess } from '../exec/process';
import { processPoolSize, renderPgbouncerIni, renderUserlist } from '../poolers/pgbouncer/config';
import { immediateStopSignals } from '../poolers/pgbouncer/signals';
import { poolDatabaseAlias, POOLER_PROCESSES_MAX, type PgbouncerPoolMode } from '../poolers/pgbouncer/layout';
import { psqlExec, psqlQueryOne, type PsqlTarget, type Row } from '../exec/psql';

const POOL_MODES: readonly PgbouncerPoolMode[] = ['transaction', 'session'];
/** The aliases the ini declares (lib/poolers/pgbouncer/layout.ts names them). */
export const TRANSACTION_DB = poolDatabaseAlias(BENCH_DB, 'transaction');
export const SESSION_DB = poolDatabaseAlias(BENCH_DB, 'session');
/** PgBouncer database → pool mode (sampler dimensions, the run's settings). */
export const LOCAL_POOLS: Readonly<Record<string, PgbouncerPoolMode>> = Object.fromEntries(
  POOL_MODES.map((mode) => [poolDatabaseAlias(BENCH_DB, mode), mode]),
);
const ADMIN_USER = SUPERUSER;

export interface PgbouncerOptions {
  readonly bins: LocalBinaries;
  readonly baseDir: string;
  readonly runAs: RunAs | null;
  readonly server: PostgresCluster;
  /** Initial pool size as % of the server's max_connections (split across processes). */
  readonly poolPercent: number;
  /** PgBouncer processes sharing the port (so_reuseport). @default 1 */
  readonly processes?: number;
  readonly maxClientConnections?: number;
  readonly excludePorts?: ReadonlySet<number>;
  /** Picks the TCP port to try (tests pick a taken one). @default findFreePort */
  readonly choosePort?: (excluded: ReadonlySet<number>) => Promise<number>;
}

/** One PgBouncer process of the pooler. */
export interface PgbouncerProcess {
  readonly index: number;
  readonly pid: number;
  readonly iniFile: string;
  readonly pidFile: string;
  readonly logFile: string;
  /** Its admin console, through its own unix socket directory. */
  readonly admin: PsqlTarget;
}

export interface Pgbouncer {
  readonly host: '127.0.0.1';
  /** The data port every process shares. */
  readonly port: number;
  /** Process 0's pid, log and ini (the only ones with processes = 1). */
  readonly pid: number;
  readonly logFile: string;
  readonly iniFile: string;
  readonly processes: readonly PgbouncerProcess[];
  readonly version: string;
  /** default_pool_size of each process configured at start. */
  readonly initialPoolSize: number;
  /** max_prepared_statements as SHOW CONFIG reported it at start; null when absent (PgBouncer < 1.21). */
  readonly initialMaxPreparedStatements: number | null;
  /** max_prepared_statements in effect now (null: the setting does not exist in this version). */
  maxPreparedStatements(): number | null;
  /** SET max_prepared_statements = n on every process's admin console; verified through SHOW CONFIG. */
  setMaxPreparedStatements(n: number): Promise<void>;
  /** default_pool_size of each process now in effect. */
  poolSize(): number;
  /** Server connections one pool may open across all processes (poolSize × processes). */
  totalPoolSize(): number;
  /** Process 0's admin console. */
  admin(): PsqlTarget;
  /** KILL + RESUME one database (or both) on every process. */
  reset(dbname?: string): Promise<void>;
  /** Set default_pool_size of every process; verified through SHOW DATABASES. */
  setPoolSize(size: number): Promise<void>;
  /** SHOW POOLS of every process, rows concatenated. */
  showPools(): Promise<Row[]>;
  stop(): Promise<void>;
  /** Leave the servers running after proxylab exits (--keep). */
  release(): void;
  /** Resolves when any PgBouncer process ends, saying which and how (`process 2 was killed by SIGKILL`). */
  readonly exited: Promise<string>;
}

/** The local stand-in's ini for process i of n, through the one configuration module. */
export function localPgbouncerIni(p: {
  version: string;
  serverPort: number;
  listenPort: number;
  poolSize: number;
  processIndex: number;
  socketDirs: readonly string[];
  authFile: string;
  logFile: string;
  pidFile: string;
  maxClientConnections: number;
}): string {
  return renderPgbouncerIni({
    header: 'written by proxylab local: a throwaway pooler, trust auth on 127.0.0.1 only',
    version: p.version,
    processIndex: p.processIndex,
    processes: p.socketDirs.length,
    listenAddr: '127.0.0.1',
    listenPort: p.listenPort,
    socketDirs: p.socketDirs,
    server: { host: '127.0.0.1', port: p.serverPort, dbname: BENCH_DB },
    poolModes: POOL_MODES,
    defaultPoolSize: p.poolSize,
    // PgBouncer's own default (0 before 1.24, 200 since): the probe reads it, the suite may SET it.
    maxPreparedStatements: null,
    authType: 'trust',
    authFile: p.authFile,
    adminUsers: [ADMIN_USER],
    statsUsers: [],
    serverTlsSslmode: 'disable',
    clientTls: null,
    logFile: p.logFile,
    pidFile: p.pidFile,
    maxClientConnections: p.maxClientConnections,
  });
}

/** Files of process i: process 0 keeps the names of a single-process pooler. */
function processFiles(
  root: string,
  i: number,
): { ini: string; pid: string; log: string; out: string; sock: string } {
  const base = i === 0 ? 'pgbouncer' : `pgbouncer-${i}`;
  return {
    ini: path.join(root, `${base}.ini`),
    pid: path.join(root, `${base}.pid`),
    log: path.join(root, `${base}.log`),
    out: path.join(root, i === 0 ? 'stdout.log' : `stdout-${i}.log`),
    // Short: a unix socket path must fit in 107 bytes (sun_path).
    sock: path.join(root, `s${i}`),
  };
}

export async function startPgbouncer(opts: PgbouncerOptions): Promise<Pgbouncer> {
  const n = opts.processes ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > POOLER_PROCESSES_MAX)
    throw new InfrastructureError(`PgBouncer processes must be 1–${POOLER_PROCESSES_MAX}, got ${n}`);
  const root = path.join(opts.baseDir, 'pgbouncer');
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  const own = (f: string): void => {
    if (opts.runAs) fs.chownSync(f, opts.runAs.uid, opts.runAs.gid);
  };
  own(root);
  const files = Array.from({ length: n }, (_, i) => processFiles(root, i));
  for (const f of files) {
    fs.mkdirSync(f.sock, { recursive: true, mode: 0o700 });
    own(f.sock);
  }
  const authFile = path.join(root, 'userlist.txt');
  fs.writeFileSync(
    authFile,
    renderUserlist([
      { username: BENCH_USER, password: '' },
      { username: ADMIN_USER, password: '' },
    ]),
  );
  own(authFile);
  const initialPoolSize = processPoolSize(opts.poolPercent, opts.server.maxConnections, n);
  const maxClientConnections = opts.maxClientConnections ?? 2000;
  const excluded = new Set(opts.excludePorts ?? []);
  excluded.add(opts.server.port);
  let lastError = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await (opts.choosePort ?? findFreePort)(excluded);
    excluded.add(port);
    const servers: ServerProcess[] = [];
    const procs: PgbouncerProcess[] = [];
    let failed: string | null = null;
    for (const [i, f] of files.entries()) {
      fs.writeFileSync(
        f.ini,
        localPgbouncerIni({
          version: opts.bins.poolerVersion,
          serverPort: opts.server.port,
          listenPort: port,
          poolSize: initialPoolSize,
          processIndex: i,
          socketDirs: files.map((x) => x.sock),
          authFile,
          logFile: f.log,
          pidFile: f.pid,
          maxClientConnections,
        }),
      );
      own(f.ini);
      const server = startServer('pgbouncer', opts.bins.pgbouncer, [f.ini], {
        runAs: opts.runAs,
        logFile: f.out,
        cwd: root,
      });
      servers.push(server);
      // The admin console of THIS process: its own unix socket (the TCP port is shared by all).
      const admin: PsqlTarget = {
        psql: opts.bins.psql,
        host: f.sock,
        port,
        user: ADMIN_USER,
        dbname: 'pgbouncer',
      };
      if (!(await waitAdminReady(server, admin, f.ini, 15000))) {
        failed = readTail(f.log) || readTail(f.out);
        break;
      }
      procs.push({ index: i, pid: server.pid, iniFile: f.ini, pidFile: f.pid, logFile: f.log, admin });
    }
    // The port was free when chosen, but another process may have bound it since. PgBouncer ≥ 1.19
    // then exits ("Address already in use"); 1.18 logs it and keeps running on its unix socket
    // alone (checked with Debian's 1.18.0), which the admin check above cannot see. So the config
    // is read over TCP: it must be ours, and it gives max_prepared_statements too.
    const config = failed === null ? await tcpConfigIfOurs(port, procs) : null;
    if (config === null) {
      await stopImmediately(servers, opts.bins.poolerVersion, 5000);
      lastError =
        failed ?? `127.0.0.1:${port} is not answered by this PgBouncer (another process bound it first)`;
      if (failed === null || /Address already in use|bind/i.test(failed)) continue;
      throw new InfrastructureError(`PgBouncer did not start on port ${port}: ${lastError}`);
    }
    const mps = maxPreparedStatementsIn(config);
    return makePgbouncer(servers, procs, port, opts.bins.poolerVersion, initialPoolSize, mps);
  }
  throw new InfrastructureError(`PgBouncer could not bind a free port after 5 attempts: ${lastError}`);
}

function makePgbouncer(
  servers: readonly ServerProcess[],
  procs: readonly PgbouncerProcess[],
  port: number,
  version: string,
  initialPoolSize: number,
  initialMps: number | null,
): Pgbouncer {
  let current = initialPoolSize;
  let mps = initialMps;
  const first = procs[0] as PgbouncerProcess;
  const admins = procs.map((p) => p.admin);
  const each = async (f: (admin: PsqlTarget) => Promise<void>): Promise<void> => {
    for (const a of admins) await f(a);
  };
  return {
    host: '127.0.0.1',
    port,
    pid: first.pid,
    logFile: first.logFile,
    iniFile: first.iniFile,
    processes: procs,
    version,
    initialPoolSize,
    initialMaxPreparedStatements: initialMps,
    maxPreparedStatements: () => mps,
    async setMaxPreparedStatements(n) {
      if (mps === null)
        throw new InfrastructureError(`PgBouncer ${version} has no max_prepared_statements (needs ≥ 1.21)`);
      if (!Number.isInteger(n) || n < 0)
        throw new InfrastructureError(`max_prepared_statements must be an integer ≥ 0, got ${n}`);
      await each(async (admin) => {
        await psqlExec(admin, [`SET max_prepared_statements = ${n}`]);
        const now = await readMaxPreparedStatements(admin);
        if (now !== n)
          throw new InfrastructureError(
            `PgBouncer (${admin.host}) did not apply max_prepared_statements ${n} (SHOW CONFIG says ${now ?? 'nothing'})`,
          );
      });
      mps = n;
    },
    poolSize: () => current,
    totalPoolSize: () => current * procs.length,
    admin: () => first.admin,
    async reset(dbname) {
      const dbs = dbname ? [dbname] : [TRANSACTION_DB, SESSION_DB];
      await each((admin) =>
        psqlExec(
          admin,
          dbs.flatMap((db) => [`KILL ${db}`, `RESUME ${db}`]),
        ),
      );
    },
    async setPoolSize(size) {
      if (!Number.isInteger(size) || size < 1)
        throw new InfrastructureError(`pool size must be a positive integer, got ${size}`);
      await each(async (admin) => {
        await psqlExec(admin, [`SET default_pool_size = ${size}`, `SET max_user_connections = ${size}`]);
        const rows = await psqlQueryOne(admin, 'SHOW DATABASES');
        for (const db of [TRANSACTION_DB, SESSION_DB]) {
          const row = rows.find((r) => r.name === db);
          if (!row || Number(row.pool_size) !== size) {
            throw new InfrastructureError(
              `PgBouncer (${admin.host}) did not apply pool size ${size} to ${db} (SHOW DATABASES says ${row?.pool_size ?? 'nothing'})`,
            );
          }
        }
      });
      current = size;
    },
    async showPools() {
      const rows: Row[] = [];
      for (const a of admins) rows.push(...(await psqlQueryOne(a, 'SHOW POOLS')));
      return rows;
    },
    release: () => servers.forEach((s) => s.release()),
    // Immediate shutdown, clients dropped: SIGQUIT since 1.23, SIGTERM before (lib/poolers/pgbouncer/signals.ts).
    stop: () => stopImmediately(servers, version, 10000),
    exited: Promise.race(
      servers.map((s, i) =>
        howExited(s).then((how) => (servers.length > 1 ? `process ${i + 1} (pid ${s.pid}) ${how}` : how)),
      ),
    ),
  };
}

/**
 * Stops every process with PgBouncer `version`'s immediate-shutdown signal(s); a process still
 * there after `graceMs` is killed with its process group (ServerProcess.stop).
 */
async function stopImmediately(
  servers: readonly ServerProcess[],
  version: string,
  graceMs: number,
): Promise<void> {
  const signals = immediateStopSignals(version);
  const last = signals[signals.length - 1] as NodeJS.Signals;
  await Promise.all(
    servers.map((s) => {
      for (const sig of signals.slice(0, -1)) {
        try {
          if (!s.exited()) s.child.kill(sig);
        } catch {
          /* already gone */
        }
      }
      return s.stop(last, graceMs);
    }),
  );
}

/**
 * max_prepared_statements from SHOW CONFIG; null when PgBouncer has no such setting (< 1.21).
 * PgBouncer ≥ 1.21 reports it `changeable: yes`, so the admin console may SET it at run time
 * (checked against 1.25.2: SET 0 brings back `prepared statement "P_0" already exists`, SET 200
 * makes pgbench -M prepared through the transaction pool succeed).
 */
async function readMaxPreparedStatements(admin: PsqlTarget): Promise<number | null> {
  return maxPreparedStatementsIn(await psqlQueryOne(admin, 'SHOW CONFIG'));
}

function maxPreparedStatementsIn(config: readonly Row[]): number | null {
  const row = config.find((r) => r.key === 'max_prepared_statements');
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

/**
 * SHOW CONFIG through 127.0.0.1:port when it reaches one of these processes (its conffile is one
 * of their ini files); null when another process answers there, or nothing does.
 */
async function tcpConfigIfOurs(port: number, procs: readonly PgbouncerProcess[]): Promise<Row[] | null> {
  const first = procs[0];
  if (first === undefined) return null;
  try {
    const rows = await psqlQueryOne({ ...first.admin, host: '127.0.0.1', port }, 'SHOW CONFIG', 5000);
    const conf = rows.find((r) => r.key === 'conffile')?.value;
    return procs.some((p) => p.iniFile === conf) ? rows : null;
  } catch {
    return null;
  }
}

function readTail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-3).join(' | ');
  } catch {
    return '';
  }
}
