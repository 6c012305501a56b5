/**
 * A throwaway PgDoorman for the local stand-in: one multithreaded process (worker threads = this
 * machine's cores) in front of the throwaway PostgreSQL, with a transaction pool (`bench`) and a
 * session pool (`bench_session`), trust auth on 127.0.0.1 and its unix socket. The configuration is
 * the one the pooler host renders (lib/poolers/pgdoorman/config.ts); the admin statements and their
 * checks are the driver's (lib/poolers/pgdoorman/driver.ts); this adapter runs them over psql on the
 * process's unix socket and, for a resize, rewrites the file first (PgDoorman resizes by RELOAD).
 *
 * Two things differ from PgBouncer's adapter (./pgbouncer.ts):
 * - Its listener always sets SO_REUSEPORT (src/app/server.rs), so a port another process of the
 *   same user bound with it would be SHARED, not refused. Each stack's PgDoorman therefore gets its
 *   own admin user name, and the port counts as ours only when several TCP connections to it all
 *   reach that admin user.
 * - It is stopped with SIGTERM (immediate); never SIGINT, which without a TTY starts a binary upgrade.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InfrastructureError } from '../core/errors';
import { startServer, type RunAs, type ServerProcess } from '../exec/process';
import { psqlQuery, psqlQueryOne, type PsqlTarget } from '../exec/psql';
import { applyOnEveryProcess, type AdminOp, type AdminRun, type ConfigRewrite } from '../poolers/driver';
import { processPoolSize } from '../poolers/pool-size';
import { POOL_MODES } from '../poolers/products';
import { md5Verifier, pgdoormanPoolName, renderPgdoormanToml } from '../poolers/pgdoorman/config';
import { PGDOORMAN_PAUSE_SINCE, pgdoormanDriver } from '../poolers/pgdoorman/driver';
import type { LocalPooler, LocalPoolerProcess } from './pooler';
import type { SettingValue } from '../products/types';
import { binaryUpgrade } from './pgdoorman-upgrade';
import { startOnFreePort } from './port-retry';
import { BENCH_DB, BENCH_USER, howExited, pollUntilAnswered, type PostgresCluster } from './postgres';

const driver = pgdoormanDriver;

export interface PgdoormanOptions {
  /** The binary and its version (lib/local/binaries.ts findPoolerBinary). */
  readonly binary: { readonly file: string; readonly version: string };
  readonly psql: string;
  readonly baseDir: string;
  readonly runAs: RunAs | null;
  readonly server: PostgresCluster;
  readonly poolPercent: number;
  /** Its instance name (its directory under baseDir, its targets' prefix). @default 'pgdoorman' */
  readonly instance?: string;
  /** @default this machine's cores */
  readonly workerThreads?: number;
  readonly maxClientConnections?: number;
  readonly excludePorts?: ReadonlySet<number>;
  readonly choosePort?: (excluded: ReadonlySet<number>) => Promise<number>;
  /** The lab's settings (checked against the catalogue), in the general and pool sections. @default {} */
  readonly settings?: Readonly<Record<string, SettingValue>>;
}

/** The local configuration: trust on 127.0.0.1 and the unix socket, no TLS (the local server has none). */
export function localPgdoormanToml(p: {
  version: string;
  listenPort: number;
  socketDir: string;
  serverPort: number;
  poolSize: number;
  workerThreads: number;
  adminUser: string;
  adminPassword: string;
  maxClientConnections: number;
  settings?: Readonly<Record<string, SettingValue>>;
}): string {
  return renderPgdoormanToml({
    header: 'written by proxylab local: a throwaway pooler, trust auth on 127.0.0.1 only',
    version: p.version,
    listenAddr: '127.0.0.1',
    listenPort: p.listenPort,
    unixSocketDir: p.socketDir,
    server: { host: '127.0.0.1', port: p.serverPort, dbname: BENCH_DB },
    poolModes: POOL_MODES,
    poolSize: p.poolSize,
    workerThreads: p.workerThreads,
    preparedStatementsCacheSize: driver.defaultMaxPreparedStatements,
    clientAuth: 'trust',
    clientCidr: '127.0.0.1/32',
    // trust on both sides: the verifier is never checked, the server login reuses the client's (passthrough)
    user: {
      username: BENCH_USER,
      verifier: md5Verifier(BENCH_USER, randomBytes(16).toString('hex')),
      serverPassword: null,
    },
    admin: { username: p.adminUser, password: p.adminPassword },
    serverTlsMode: 'disable',
    clientTls: null,
    maxClientConnections: p.maxClientConnections,
    settings: p.settings ?? {},
  });
}

export async function startPgdoorman(opts: PgdoormanOptions): Promise<LocalPooler> {
  const instance = opts.instance ?? 'pgdoorman';
  const root = path.join(opts.baseDir, instance);
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  const own = (f: string): void => {
    if (opts.runAs) fs.chownSync(f, opts.runAs.uid, opts.runAs.gid);
  };
  own(root);
  const sock = path.join(root, 's0'); // short: a unix socket path must fit in 107 bytes
  fs.mkdirSync(sock, { recursive: true, mode: 0o700 });
  own(sock);
  const configFile = path.join(root, 'pg_doorman.toml');
  const logFile = path.join(root, 'stdout.log');
  const workerThreads = opts.workerThreads ?? Math.max(1, os.cpus().length);
  const poolSize = processPoolSize(opts.poolPercent, opts.server.maxConnections, 1);
  // This stack's own admin user: how a TCP connection tells this PgDoorman from another on the port.
  const adminUser = `proxylab_${randomBytes(4).toString('hex')}`;
  const maxClientConnections = opts.maxClientConnections ?? 2000;
  const settings = opts.settings ?? {};
  const kitSettings: Record<string, SettingValue> = {
    pool_size: poolSize,
    worker_threads: workerThreads,
    max_connections: maxClientConnections,
    prepared_statements: driver.defaultMaxPreparedStatements > 0,
    prepared_statements_cache_size: driver.defaultMaxPreparedStatements,
    server_tls_mode: 'disable',
    tls_mode: 'disable',
  };
  const policy = {
    server: 'PgDoorman',
    tries: 5,
    portTaken: (failed: string) => /can't bind|Address already in use/i.test(failed),
    exclude: [...(opts.excludePorts ?? []), opts.server.port],
    choosePort: opts.choosePort,
  };
  return startOnFreePort<LocalPooler>(policy, async (port) => {
    fs.writeFileSync(
      configFile,
      localPgdoormanToml({
        version: opts.binary.version,
        listenPort: port,
        socketDir: sock,
        serverPort: opts.server.port,
        poolSize,
        workerThreads,
        adminUser,
        adminPassword: randomBytes(16).toString('hex'),
        maxClientConnections,
        settings,
      }),
      { mode: 0o600 },
    );
    own(configFile);
    const server = startServer('pg_doorman', opts.binary.file, [configFile], {
      runAs: opts.runAs,
      logFile,
      cwd: root,
    });
    const admin: PsqlTarget = {
      psql: opts.psql,
      host: sock,
      port,
      user: adminUser,
      dbname: driver.adminDatabase,
    };
    const ready = await pollUntilAnswered(server, 15000, async () => {
      const rows = await psqlQueryOne(admin, driver.host.versionStatement, 5000);
      return driver.host.parseVersion(Object.values(rows[0] ?? {})[0] ?? '') !== null;
    });
    if (ready && (await tcpIsOurs(admin, port))) {
      const proc: LocalPoolerProcess = {
        index: 0,
        pid: server.pid,
        pidFile: null,
        logFile,
        configFile,
        admin,
      };
      return {
        started: makePgdoorman(server, proc, {
          instance,
          port,
          version: opts.binary.version,
          initialPoolSize: poolSize,
          workerThreads,
          serverPort: opts.server.port,
          settings,
          kitSettings,
        }),
      };
    }
    const failed = ready
      ? `127.0.0.1:${port} is shared with another process (SO_REUSEPORT)`
      : readTail(logFile) || 'it did not answer on its admin console within 15 s';
    await server.stop('SIGTERM', 5000);
    return { failed, portTaken: ready };
  });
}

/** Three TCP connections to the port all reach this stack's admin user (else the port is shared). */
async function tcpIsOurs(admin: PsqlTarget, port: number): Promise<boolean> {
  for (let i = 0; i < 3; i++) {
    try {
      await psqlQueryOne({ ...admin, host: '127.0.0.1', port }, driver.host.versionStatement, 5000);
    } catch {
      return false;
    }
  }
  return true;
}

function makePgdoorman(
  server: ServerProcess,
  proc: LocalPoolerProcess,
  o: {
    readonly instance: string;
    readonly port: number;
    readonly version: string;
    readonly initialPoolSize: number;
    readonly workerThreads: number;
    readonly serverPort: number;
    readonly settings: Readonly<Record<string, SettingValue>>;
    readonly kitSettings: Readonly<Record<string, SettingValue>>;
  },
): LocalPooler {
  const { instance, port, version, initialPoolSize, workerThreads } = o;
  let current = initialPoolSize;
  let serverPort = o.serverPort;
  const aliases = POOL_MODES.map((m) => pgdoormanPoolName(BENCH_DB, m));
  const run: AdminRun = (_i, statements) => psqlQuery(proc.admin, statements);
  // Its file is this adapter's: a resize rewrites it, then RELOAD (the driver's op) applies it.
  const rewrite: ConfigRewrite = (_i, edit) => {
    fs.writeFileSync(proc.configFile, edit(fs.readFileSync(proc.configFile, 'utf8')));
    return Promise.resolve();
  };
  const apply = (op: AdminOp): Promise<void> =>
    applyOnEveryProcess(run, 1, op, () => `PgDoorman (${proc.admin.host})`, rewrite);
  const mps = driver.defaultMaxPreparedStatements;
  // A binary upgrade (SIGUSR2) hands the listener to a new process: the first one leaves on purpose.
  const upgrade = binaryUpgrade(server, proc.configFile, version);
  let unexpected: (how: string) => void = () => undefined;
  const exited = new Promise<string>((resolve) => (unexpected = resolve));
  void howExited(server).then((how) => {
    if (!upgrade.upgrading()) unexpected(how);
  });
  const process0: LocalPoolerProcess = {
    ...proc,
    get pid() {
      return upgrade.pid();
    },
  };
  return {
    instance,
    product: driver.product,
    host: '127.0.0.1',
    port,
    get pid() {
      return upgrade.pid();
    },
    version,
    processes: [process0],
    workerThreads,
    pools: Object.fromEntries(POOL_MODES.map((m) => [pgdoormanPoolName(BENCH_DB, m), m])),
    settings: o.settings,
    kitSettings: o.kitSettings,
    initialPoolSize,
    initialMaxPreparedStatements: mps,
    maxPreparedStatements: () => mps,
    setMaxPreparedStatements: () =>
      Promise.reject(new InfrastructureError('PgDoorman has no run-time switch for prepared statements')),
    poolSize: () => current,
    totalPoolSize: () => current,
    async setPoolSize(size) {
      await apply(usage(() => driver.admin.setPoolSize(size, aliases)));
      current = size;
    },
    async reset(dbname) {
      await apply(driver.admin.reset(dbname ? [dbname] : aliases));
    },
    admin: () => proc.admin,
    // PAUSE only blocks new checkouts (PGDOORMAN_LIFECYCLE: no drain); checked in SHOW POOLS
    pause: (names) => apply(usage(() => pauseOp(version, names, 'pause'))),
    resume: (names) => apply(usage(() => pauseOp(version, names, 'resume'))),
    serverPort: () => serverPort,
    async repoint(to) {
      await apply(driver.admin.reload(aliases, to));
      serverPort = to;
    },
    rollingRestart: (event) => upgrade.start(event),
    restoreAfterRoll: () => upgrade.settle(),
    stop: () => upgrade.stop(driver.immediateStopSignals(version)[0] ?? 'SIGTERM', 10000),
    release: () => server.release(),
    exited,
  };
}

/** The driver's op, or an InfrastructureError saying why not (its message). */
function usage(f: () => AdminOp): AdminOp {
  try {
    return f();
  } catch (err) {
    throw new InfrastructureError(err instanceof Error ? err.message : String(err));
  }
}

/** PAUSE or RESUME of `names`, when this version has them (PAUSE since 3.3.2). */
function pauseOp(version: string, names: readonly string[], which: 'pause' | 'resume'): AdminOp {
  if (driver.lifecycle.pause(version, null) === null)
    throw new Error(`PgDoorman ${version} has no PAUSE/RESUME (since ${PGDOORMAN_PAUSE_SINCE})`);
  return driver.admin[which](names);
}

function readTail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-3).join(' | ');
  } catch {
    return '';
  }
}
