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
 * The admin statements and their checks are the driver's (lib/poolers/pgbouncer/driver.ts, which
 * the runner's pool control runs too); this adapter runs them over psql. PgBouncer refuses to run
 * as root, like PostgreSQL. The ini leaves PgBouncer's own max_prepared_statements default; the
 * probe reads it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InfrastructureError } from '../core/errors';
import type { LocalBinaries } from './binaries';
import { BENCH_DB, BENCH_USER, type PostgresCluster } from './postgres';
import { startOnFreePort } from './port-retry';
import { startServer, type RunAs, type ServerProcess } from '../exec/process';
import { processPoolSize, renderPgbouncerIni, renderUserlist } from '../poolers/pgbouncer/config';
import { poolDatabaseAlias, POOLER_PROCESSES_MAX, type PgbouncerPoolMode } from '../poolers/pgbouncer/layout';
import { psqlQuery, psqlQueryOne, type PsqlTarget, type Row } from '../exec/psql';
import { applyOnEveryProcess, type AdminOp, type AdminRun } from '../poolers/driver';
import { maxPreparedStatementsIn, pgbouncerDriver } from '../poolers/pgbouncer/driver';
import type { LocalPooler, LocalPoolerProcess } from './pooler';
import type { SettingValue } from '../products/types';
import {
  ADMIN_USER,
  adminTarget,
  processFiles,
  processSet,
  readTail,
  restoreEveryProcess,
  rollEveryProcess,
  stopImmediately,
  tcpConfigIfOurs,
  waitAdminReady,
  type PgbouncerLayout,
  type ProcessFiles,
} from './pgbouncer-processes';

const POOL_MODES = pgbouncerDriver.poolModes;
/** The aliases the ini declares (lib/poolers/pgbouncer/layout.ts names them). */
export const TRANSACTION_DB = poolDatabaseAlias(BENCH_DB, 'transaction');
export const SESSION_DB = poolDatabaseAlias(BENCH_DB, 'session');
/** PgBouncer database → pool mode (sampler dimensions, the run's settings). */
export const LOCAL_POOLS: Readonly<Record<string, PgbouncerPoolMode>> = Object.fromEntries(
  POOL_MODES.map((mode) => [poolDatabaseAlias(BENCH_DB, mode), mode]),
);
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
  /** Its instance name: its directory under baseDir and its targets' prefix. @default 'pgbouncer' */
  readonly instance?: string;
  /** The binary and its version. @default bins.pgbouncer, bins.poolerVersion */
  readonly binary?: { readonly file: string; readonly version: string };
  /**
   * The lab's settings (checked against the catalogue for the binary's version), written into the
   * ini as they are: proxylab forces none of PgBouncer's failure or timeout settings. @default {}
   */
  readonly settings?: Readonly<Record<string, SettingValue>>;
}

/** One PgBouncer process of the pooler (a rolling restart replaces its pid, then puts its files back). */
export interface PgbouncerProcess extends LocalPoolerProcess {
  readonly iniFile: string;
  readonly pidFile: string;
}

export interface Pgbouncer extends LocalPooler {
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
  /**
   * Resolves when a PgBouncer process ends that we did not retire on purpose, saying which and how
   * (`process 2 was killed by SIGKILL`); a process a rolling restart retires is not one.
   */
  readonly exited: Promise<string>;
  // pause, resume, serverPort, repoint, rollingRestart, restoreAfterRoll: LocalPooler's (PAUSE
  // returns once the server connections are closed; a rolling restart starts a new process on the
  // port with its own socket directory, then signals the old one as its version documents:
  // `rollingStopSignal`)
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
  settings?: Readonly<Record<string, SettingValue>>;
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
    // A rolling restart (the pooler-restart disruption) starts a second process on the port.
    reusePort: true,
    settings: p.settings ?? {},
  });
}

/** The pooler's directory, its processes' socket directories and the userlist, owned by the server user. */
function prepareFiles(
  opts: PgbouncerOptions,
  instance: string,
  n: number,
): { root: string; own: (f: string) => void; files: ProcessFiles[]; authFile: string } {
  const root = path.join(opts.baseDir, instance);
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
  return { root, own, files, authFile };
}

/**
 * One try on `port`: writes each process's ini and starts it, in order, until one does not answer
 * on its admin console (`failed`: its log's tail). The servers started so far are returned either way.
 */
async function startEachProcess(
  files: readonly ProcessFiles[],
  port: number,
  render: (i: number, f: ProcessFiles) => string,
  start: (f: ProcessFiles) => ServerProcess,
  own: (f: string) => void,
  psql: string,
): Promise<{ servers: ServerProcess[]; procs: PgbouncerProcess[]; failed: string | null }> {
  const servers: ServerProcess[] = [];
  const procs: PgbouncerProcess[] = [];
  let failed: string | null = null;
  for (const [i, f] of files.entries()) {
    fs.writeFileSync(f.ini, render(i, f));
    own(f.ini);
    const server = start(f);
    servers.push(server);
    const admin = adminTarget(psql, f, port);
    if (!(await waitAdminReady(server, admin, f.ini, 15000))) {
      failed = readTail(f.log) || readTail(f.out);
      break;
    }
    procs.push({
      index: i,
      pid: server.pid,
      iniFile: f.ini,
      configFile: f.ini,
      pidFile: f.pid,
      logFile: f.log,
      admin,
    });
  }
  return { servers, procs, failed };
}

export async function startPgbouncer(opts: PgbouncerOptions): Promise<Pgbouncer> {
  const n = opts.processes ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > POOLER_PROCESSES_MAX)
    throw new InfrastructureError(`PgBouncer processes must be 1–${POOLER_PROCESSES_MAX}, got ${n}`);
  const instance = opts.instance ?? 'pgbouncer';
  const binary = opts.binary ?? { file: opts.bins.pgbouncer, version: opts.bins.poolerVersion };
  const { root, own, files, authFile } = prepareFiles(opts, instance, n);
  const initialPoolSize = processPoolSize(opts.poolPercent, opts.server.maxConnections, n);
  const maxClientConnections = opts.maxClientConnections ?? 2000;
  const settings = opts.settings ?? {};
  const policy = {
    server: 'PgBouncer',
    tries: 5,
    portTaken: (failed: string) => /Address already in use|bind/i.test(failed),
    exclude: [...(opts.excludePorts ?? []), opts.server.port],
    choosePort: opts.choosePort,
  };
  const start = (f: ProcessFiles): ServerProcess => {
    const server = startServer('pgbouncer', binary.file, [f.ini], {
      runAs: opts.runAs,
      logFile: f.out,
      cwd: root,
    });
    return server;
  };
  return startOnFreePort<Pgbouncer>(policy, async (port) => {
    const render = (i: number, serverPort: number, socketDirs: readonly string[], f: ProcessFiles): string =>
      localPgbouncerIni({
        version: binary.version,
        serverPort,
        listenPort: port,
        poolSize: initialPoolSize,
        processIndex: i,
        socketDirs,
        authFile,
        logFile: f.log,
        pidFile: f.pid,
        maxClientConnections,
        settings,
      });
    const dirs = files.map((x) => x.sock);
    const { servers, procs, failed } = await startEachProcess(
      files,
      port,
      (i, f) => render(i, opts.server.port, dirs, f),
      start,
      own,
      opts.bins.psql,
    );
    // The port was free when chosen, but another process may have bound it since. PgBouncer ≥ 1.19
    // then exits ("Address already in use"); 1.18 logs it and keeps running on its unix socket
    // alone (checked with Debian's 1.18.0), which the admin check above cannot see. So the config
    // is read over TCP: it must be ours, and it gives max_prepared_statements too.
    const config = failed === null ? await tcpConfigIfOurs(port, procs) : null;
    if (config === null) {
      await stopImmediately(servers, binary.version, 5000);
      return failed === null
        ? {
            failed: `127.0.0.1:${port} is not answered by this PgBouncer (another process bound it first)`,
            portTaken: true,
          }
        : { failed };
    }
    const mps = maxPreparedStatementsIn(config);
    return {
      started: makePgbouncer(servers, procs, port, binary.version, initialPoolSize, mps, instance, {
        root,
        files,
        render,
        start,
        own,
        serverPort: opts.server.port,
        psql: opts.bins.psql,
        settings,
        kitSettings: {
          default_pool_size: initialPoolSize,
          max_user_connections: initialPoolSize,
          max_client_conn: maxClientConnections,
          so_reuseport: true,
          server_tls_sslmode: 'disable',
          client_tls_sslmode: 'disable',
          stats_period: 1,
        },
      }),
    };
  });
}

/** Every Pgbouncer this module made: how the stack tells its PgBouncers without comparing product names. */
const MADE = new WeakSet<LocalPooler>();

/** `p` as the PgBouncer it is, or null when this module did not make it. */
export function asPgbouncer(p: LocalPooler): Pgbouncer | null {
  return MADE.has(p) ? (p as Pgbouncer) : null;
}

/** The driver's admin statement `f()`, its usage error (a bad value) as an InfrastructureError. */
function usage(f: () => AdminOp): AdminOp {
  try {
    return f();
  } catch (err) {
    throw new InfrastructureError(err instanceof Error ? err.message : String(err));
  }
}

function makePgbouncer(
  firstServers: readonly ServerProcess[],
  firstProcs: readonly PgbouncerProcess[],
  port: number,
  version: string,
  initialPoolSize: number,
  initialMps: number | null,
  instance: string,
  layout: PgbouncerLayout,
): Pgbouncer {
  let current = initialPoolSize;
  let mps = initialMps;
  let serverPort = layout.serverPort;
  const set = processSet(
    firstServers,
    firstProcs.map((p) => p.admin),
    port,
    layout,
    () => serverPort,
  );
  const { servers, admins, retiring, retired } = set;
  const procs: PgbouncerProcess[] = firstProcs.map((p) => ({
    index: p.index,
    get pid() {
      return (servers[p.index] as ServerProcess).pid;
    },
    iniFile: p.iniFile,
    configFile: p.configFile,
    pidFile: p.pidFile,
    logFile: p.logFile,
    get admin() {
      return admins[p.index] as PsqlTarget;
    },
  }));
  const first = procs[0] as PgbouncerProcess;
  // The driver says what to run and how to check it; this adapter only runs it (psql per process).
  const run: AdminRun = (i, statements) => psqlQuery(admins[i] as PsqlTarget, statements);
  const apply = (op: AdminOp): Promise<void> =>
    applyOnEveryProcess(run, admins.length, op, (i) => `PgBouncer (${(admins[i] as PsqlTarget).host})`);
  const made: Pgbouncer = {
    instance,
    settings: layout.settings,
    kitSettings: layout.kitSettings,
    product: pgbouncerDriver.product,
    workerThreads: null,
    pools: LOCAL_POOLS,
    host: '127.0.0.1',
    port,
    get pid() {
      return first.pid;
    },
    logFile: first.logFile,
    iniFile: first.iniFile,
    processes: procs,
    version,
    initialPoolSize,
    initialMaxPreparedStatements: initialMps,
    maxPreparedStatements: () => mps,
    async setMaxPreparedStatements(n) {
      if (mps === null)
        throw new InfrastructureError(
          `PgBouncer ${version} has no max_prepared_statements (needs ≥ ${pgbouncerDriver.preparedStatementsSince})`,
        );
      await apply(usage(() => pgbouncerDriver.admin.setMaxPreparedStatements(n)));
      mps = n;
    },
    poolSize: () => current,
    totalPoolSize: () => current * procs.length,
    admin: () => first.admin,
    async reset(dbname) {
      await apply(pgbouncerDriver.admin.reset(dbname ? [dbname] : [TRANSACTION_DB, SESSION_DB]));
    },
    async setPoolSize(size) {
      await apply(usage(() => pgbouncerDriver.admin.setPoolSize(size, [TRANSACTION_DB, SESSION_DB])));
      current = size;
    },
    async showPools() {
      const rows: Row[] = [];
      for (const a of admins) rows.push(...(await psqlQueryOne(a, 'SHOW POOLS')));
      return rows;
    },
    release: () => servers.forEach((s) => s.release()),
    // Immediate shutdown, clients dropped: SIGQUIT since 1.23, SIGTERM before (lib/poolers/pgbouncer/signals.ts).
    stop: () => {
      for (const s of servers) retiring.add(s);
      return stopImmediately([...servers, ...retired.map((r) => r.old)], version, 10000);
    },
    exited: set.exited,
    pause: (aliases) => apply(pgbouncerDriver.admin.pause(aliases)),
    resume: (aliases) => apply(pgbouncerDriver.admin.resume(aliases)),
    serverPort: () => serverPort,
    async repoint(to) {
      serverPort = to;
      procs.forEach((p, i) => set.writeIni(i, layout.files[i] as ProcessFiles, set.socketDirs()));
      await apply(pgbouncerDriver.admin.reload([TRANSACTION_DB, SESSION_DB], to));
    },
    rollingRestart: (event) => rollEveryProcess(set, procs, layout.root, port, version, event),
    restoreAfterRoll: () => restoreEveryProcess(set, layout.files, version),
  };
  MADE.add(made);
  return made;
}
