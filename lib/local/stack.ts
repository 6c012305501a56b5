/**
 * The local stand-in as one object: binaries found (or installed), a throwaway PostgreSQL, a
 * PgBouncer with a transaction and a session pool in front of it, and the engine ports bound to
 * them (targets, pool control, pgbench executor, metrics sampler). `stop()` ends every process we
 * started and removes the temporary directory unless asked to keep it. The directory holds
 * `owner.json` (this process, the servers, `kept`), so a later start can reap a stack whose
 * proxylab was killed before it could clean up (lib/local/reap.ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InfrastructureError } from '../core/errors';
import { PgServerConnections } from '../exec/server-connections';
import type { InfrastructureWatch, PoolControl, Target } from '../engine/ports';
import type { ConnectionInfo } from '../suite/types';
import { describeTarget, directTarget, poolerTarget, type TargetDescriptor } from '../suite/targets';
import type { RunEnvironment, TargetRef } from '../suite/types';
import { findBinaries, type LocalBinaries } from './binaries';
import { LocalPgbenchExecutor } from '../exec/pgbench-executor';
import { processPoolSize } from '../poolers/pgbouncer/config';
import { pgbouncerDriver } from '../poolers/pgbouncer/driver';
import {
  LOCAL_POOLS,
  LOCAL_SERVER_LOGIN_RETRY_SEC,
  SESSION_DB,
  startPgbouncer,
  TRANSACTION_DB,
  type Pgbouncer,
} from './pgbouncer';
import { BENCH_DB, BENCH_USER, startPostgres, type PostgresCluster } from './postgres';
import { resolveRunAs, type RunAs } from '../exec/process';
import { probePort } from './ports-free';
import {
  currentOwner,
  nodeReapSystem,
  reapOrphanedStacks,
  STACK_DIR_PREFIX,
  writeOwnerFile,
  type StackOwner,
} from './reap';
import { LocalMetricsSampler } from './sampler';

export const DEFAULT_MAX_CONNECTIONS = 40;
export const DEFAULT_POOL_PERCENT = 25;
/** As in the fixtures and RDS's default: 3 slots only a superuser may take. */
export const DEFAULT_SUPERUSER_RESERVED = 3;
/** The local PgBouncer's instance name: its targets are `pgbouncer-transaction` and `pgbouncer-session`. */
export const LOCAL_POOLER = 'pgbouncer';
/** The local pooler's product: its driver's (lib/poolers/pgbouncer/driver.ts). */
export const LOCAL_POOLER_PRODUCT = pgbouncerDriver.product;

export interface LocalStackOptions {
  /** @default 40 */
  readonly maxConnections?: number;
  /** Pool size of each PgBouncer pool as % of max_connections. @default 25 (10 on 40) */
  readonly poolPercent?: number;
  /** @default 3 */
  readonly superuserReservedConnections?: number;
  /**
   * PgBouncer processes sharing the port (so_reuseport), as on a multi-core pooler host; each has
   * its own unix socket directory and admin console. @default 1
   */
  readonly poolerProcesses?: number;
  /** Install missing PostgreSQL/PgBouncer with the OS package manager. @default false */
  readonly install?: boolean;
  /** Already found binaries (skips the search). */
  readonly bins?: LocalBinaries;
  /** Test-only: copy this data directory instead of running initdb (lib/local/postgres.ts `dataTemplate`). */
  readonly dataTemplate?: string | null;
  readonly log?: (line: string) => void;
  /** First stop stacks left by dead proxylab processes (one log line each). @default true */
  readonly reapOrphans?: boolean;
}

export interface LocalStack {
  readonly bins: LocalBinaries;
  readonly runAs: RunAs | null;
  /** Temporary directory holding the cluster, PgBouncer's files and pgbench work dirs. */
  readonly baseDir: string;
  readonly postgres: PostgresCluster;
  readonly pgbouncer: Pgbouncer;
  readonly targets: readonly Target[];
  readonly pool: PoolControl;
  readonly executor: LocalPgbenchExecutor;
  readonly environment: RunEnvironment;
  /** Settings for the manifest (no secrets: trust auth, nothing to hide). */
  readonly settings: Readonly<Record<string, unknown>>;
  /** The target of that name (`direct`, `pgbouncer-transaction`, `pgbouncer-session`). */
  target(name: string): Target;
  /** Descriptors of every target, as probed (versions, max_prepared_statements). */
  readonly descriptors: readonly TargetDescriptor[];
  createSampler(intervalMs?: number): LocalMetricsSampler;
  /** How to connect by hand (for --keep). */
  connectionHelp(): string;
  /** Stop PgBouncer then PostgreSQL; remove the temp dir unless keepFiles. Idempotent. */
  stop(opts?: { keepFiles?: boolean }): Promise<void>;
  /** Leave both servers running after proxylab exits (--keep); stop() is then a no-op. */
  release(): void;
  /** PIDs of the server processes we started (for leak checks). */
  readonly pids: readonly number[];
  /** Sees PostgreSQL or PgBouncer die (process exit) before stop(): the engine aborts the step at once. */
  readonly infrastructure: InfrastructureWatch;
  /**
   * Connections held on PostgreSQL around each step (the superuser's session, in a reserved slot the
   * bench role cannot take); opened at the first step, closed by stop() and release().
   */
  readonly serverConnections: PgServerConnections;
}

export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const maxConnections = opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const poolPercent = opts.poolPercent ?? DEFAULT_POOL_PERCENT;
  const reserved = opts.superuserReservedConnections ?? DEFAULT_SUPERUSER_RESERVED;
  const bins = opts.bins ?? findBinaries({ install: opts.install ?? false, log: opts.log });
  const runAs = resolveRunAs();
  if (typeof process.getuid === 'function' && process.getuid() === 0 && runAs === null) {
    throw new InfrastructureError(
      'running as root, and there is no unprivileged `postgres` OS user to run PostgreSQL and PgBouncer as (create one: useradd --system postgres)',
    );
  }
  if (opts.reapOrphans ?? true) await reapOrphanedStacks({ log: opts.log });
  const baseDir = fs.mkdtempSync(path.join(os.tmpdir(), STACK_DIR_PREFIX));
  let owner: StackOwner = currentOwner(runAs?.user ?? null);
  let postgres: PostgresCluster | null = null;
  let pgbouncer: Pgbouncer;
  try {
    // At once, so a reaper never takes this directory for an ownerless leftover.
    writeOwnerFile(baseDir, owner);
    fs.chmodSync(baseDir, 0o755); // the server user must reach its subdirectories
    postgres = await startPostgres({
      bins,
      baseDir,
      runAs,
      maxConnections,
      superuserReservedConnections: reserved,
      dataTemplate: opts.dataTemplate ?? null,
    });
    owner = { ...owner, postgres: { pid: postgres.pid, dataDir: postgres.dataDir } };
    writeOwnerFile(baseDir, owner);
    pgbouncer = await startPgbouncer({
      bins,
      baseDir,
      runAs,
      server: postgres,
      poolPercent,
      processes: opts.poolerProcesses ?? 1,
    });
    owner = {
      ...owner,
      pgbouncer: {
        pid: pgbouncer.pid,
        pidFile: path.join(path.dirname(pgbouncer.iniFile), 'pgbouncer.pid'),
        iniFile: pgbouncer.iniFile,
        others: pgbouncer.processes.slice(1).map((p) => ({ pid: p.pid, pidFile: p.pidFile })),
      },
    };
    writeOwnerFile(baseDir, owner);
  } catch (e) {
    if (postgres) await postgres.stop();
    fs.rmSync(baseDir, { recursive: true, force: true });
    throw e;
  }
  return makeStack(
    bins,
    runAs,
    baseDir,
    postgres,
    pgbouncer,
    { maxConnections, poolPercent, reserved },
    owner,
  );
}

/**
 * A running stack from its phases: targets, pool control, the servers' watch, the exit safety net,
 * environment, settings, connection help (each a function below).
 */
function makeStack(
  bins: LocalBinaries,
  runAs: RunAs | null,
  baseDir: string,
  pg: PostgresCluster,
  pgb: Pgbouncer,
  cfg: { maxConnections: number; poolPercent: number; reserved: number },
  owner: StackOwner,
): LocalStack {
  const targets = localTargets(pg, pgb);
  const executor = new LocalPgbenchExecutor({
    pgbench: bins.pgbench,
    workRoot: path.join(baseDir, 'pgbench'),
  });
  const life: Lifecycle = { stopped: false };
  const infrastructure = watchServers(pg, pgb, life);
  const onExit = killOnExit(pg, pgb, baseDir);
  const superuser = pg.superuserTarget(BENCH_DB);
  const serverConnections = new PgServerConnections({
    connection: {
      host: superuser.host,
      port: superuser.port,
      user: superuser.user,
      dbname: superuser.dbname,
      sslmode: 'disable',
    },
  });
  return {
    serverConnections,
    bins,
    runAs,
    baseDir,
    postgres: pg,
    pgbouncer: pgb,
    targets,
    pool: localPoolControl(pg, pgb),
    executor,
    get pids() {
      return [pg.pid, ...pgb.processes.map((p) => p.pid)];
    },
    infrastructure,
    environment: localEnvironment(bins, pg, pgb),
    descriptors: targets.map((t) => t.descriptor).filter((d): d is TargetDescriptor => d !== undefined),
    settings: localSettings(pg, pgb, cfg),
    target: (name) => {
      const t = targets.find((x) => x.ref.name === name);
      if (!t) throw new InfrastructureError(`the local stack has no ${name} target`);
      return t;
    },
    createSampler: (intervalMs) =>
      new LocalMetricsSampler({
        admins: pgb.processes.map((p) => p.admin),
        pgbouncerPids: pgb.processes.map((p) => p.pid),
        pgbouncerTargets: targets
          .filter((t) => t.descriptor?.pooler === LOCAL_POOLER_PRODUCT)
          .map((t) => t.ref.name),
        server: pg.superuserTarget(BENCH_DB),
        datname: BENCH_DB,
        pools: LOCAL_POOLS,
        intervalMs,
      }),
    connectionHelp: () => connectionHelp(pg, pgb, baseDir),
    release: () => {
      life.stopped = true;
      void serverConnections.close();
      // Kept on purpose: a later `proxylab local` must not reap it once this process has exited.
      writeOwnerFile(baseDir, { ...owner, kept: true });
      process.removeListener('exit', onExit);
      pgb.release();
      pg.release();
    },
    stop: async ({ keepFiles = false } = {}) => {
      if (life.stopped) return;
      life.stopped = true;
      try {
        await serverConnections.close();
        await pgb.stop();
        await pg.stop();
      } finally {
        process.removeListener('exit', onExit);
      }
      if (!keepFiles) fs.rmSync(baseDir, { recursive: true, force: true });
    },
  };
}

/** Set once stop() or release() has begun: a server ending after that is not a failure. */
interface Lifecycle {
  stopped: boolean;
}

/**
 * `direct`, `pgbouncer-transaction`, `pgbouncer-session`: the adapter says what it probed for each,
 * the target registry what that means.
 */
function localTargets(pg: PostgresCluster, pgb: Pgbouncer): Target[] {
  const target = (ref: TargetRef, port: number, dbname: string, version: string): Target => ({
    ref,
    descriptor: describeTarget(ref, {
      version,
      maxPreparedStatements: pgb.initialMaxPreparedStatements,
      placement: 'local',
      processes: pgb.processes.length, // kept for the PgBouncer targets only (describeTarget)
    }),
    connection: (): ConnectionInfo => ({
      host: '127.0.0.1',
      port,
      user: BENCH_USER,
      dbname,
      sslmode: 'disable',
      env: {},
    }),
    maxConnections: () => Promise.resolve(pg.maxConnections),
    // Server connections one pool may open: each process's default_pool_size, times the processes.
    poolSize: () => Promise.resolve(port === pg.port ? null : pgb.totalPoolSize()),
  });
  return [
    target(directTarget(), pg.port, BENCH_DB, pg.serverVersion),
    target(
      poolerTarget(LOCAL_POOLER_PRODUCT, LOCAL_POOLER, 'transaction'),
      pgb.port,
      TRANSACTION_DB,
      pgb.version,
    ),
    target(poolerTarget(LOCAL_POOLER_PRODUCT, LOCAL_POOLER, 'session'), pgb.port, SESSION_DB, pgb.version),
  ];
}

function localPoolControl(pg: PostgresCluster, pgb: Pgbouncer): PoolControl {
  return {
    // Every pool, whatever the step's target: idle server connections held by one pool take
    // max_connections slots from the next step (a direct step would be refused early).
    reset: async () => pgb.reset(),
    // The engine asks only targets whose descriptor has a resizable pool.
    setPoolPercent: async (_ref, percent) => {
      await pgb.setPoolSize(processPoolSize(percent, pg.maxConnections, pgb.processes.length));
    },
    // Global in PgBouncer: the engine applies each step's value before the step.
    setMaxPreparedStatements: async (_ref, value) => {
      if (pgb.maxPreparedStatements() !== value) await pgb.setMaxPreparedStatements(value);
    },
    restore: async () => {
      if (pgb.poolSize() !== pgb.initialPoolSize) await pgb.setPoolSize(pgb.initialPoolSize);
      const mps = pgb.initialMaxPreparedStatements;
      if (mps !== null && pgb.maxPreparedStatements() !== mps) await pgb.setMaxPreparedStatements(mps);
    },
  };
}

/**
 * How long a server stopped on purpose (a disruption) may stay down before the watch calls it a
 * failure: the disruption expects it back; its staying down is the infrastructure failing.
 */
export const PLANNED_DOWN_LIMIT_MS = 60_000;

/**
 * A server that ends before stop() died under the run: say which and how, and abort the step now.
 * A stop a disruption causes (PostgresCluster.stopPlanned, a pooler's rolling restart) is expected
 * and not a failure — unless the server stays down longer than PLANNED_DOWN_LIMIT_MS.
 */
function watchServers(pg: PostgresCluster, pgb: Pgbouncer, life: Lifecycle): InfrastructureWatch {
  const down = new AbortController();
  let failure: string | null = null;
  const watch = (name: string, pid: () => number, exited: Promise<string>): void => {
    void exited.then((how) => {
      if (life.stopped || failure !== null) return;
      failure = `${name} (pid ${pid()}) ${how}`;
      down.abort();
    });
  };
  watch('PostgreSQL', () => pg.pid, pg.exited);
  watch('PgBouncer', () => pgb.pid, pgb.exited);
  const liveness = nodeReapSystem();
  /** Down on purpose for too long, or null. */
  const downTooLong = (): string | null => {
    const planned = pg.plannedDown();
    if (planned === null || Date.now() - planned.sinceMs <= PLANNED_DOWN_LIMIT_MS) return null;
    return `PostgreSQL was stopped on purpose (${planned.why}) ${Math.round((Date.now() - planned.sinceMs) / 1000)} s ago and is still down`;
  };
  /** Asked right after each pgbench: the exit event may not have arrived yet, /proc already knows (zombies too). */
  const currentFailure = (): string | null => {
    if (failure === null && !life.stopped) {
      const stuck = downTooLong();
      if (stuck !== null) {
        failure = stuck;
        down.abort();
        return failure;
      }
      for (const [name, pid] of [
        ...(pg.plannedDown() === null ? [['PostgreSQL', pg.pid] as const] : []),
        ...pgb.processes.map(
          (p) =>
            [pgb.processes.length > 1 ? `PgBouncer process ${p.index + 1}` : 'PgBouncer', p.pid] as const,
        ),
      ]) {
        if (!liveness.isAlive(pid)) {
          failure = `${name} (pid ${pid}) is no longer running`;
          down.abort();
          break;
        }
      }
    }
    return failure;
  };
  /**
   * After a pgbench that failed: do the servers still accept connections? A killed postmaster's
   * (or PgBouncer's) listening socket is closed at once, even while /proc and the exit event lag.
   */
  const confirmFailure = async (): Promise<string | null> => {
    for (const [name, pid, port] of [
      ...(pg.plannedDown() === null ? [['PostgreSQL', pg.pid, pg.port] as const] : []),
      ['PgBouncer', pgb.pid, pgb.port] as const,
    ]) {
      if (currentFailure() !== null) break;
      if (!life.stopped && (await probePort(port)) === 'refused') {
        failure ??= `${name} (pid ${pid}) is no longer running (127.0.0.1:${port} refuses connections)`;
        down.abort();
      }
    }
    return currentFailure();
  };
  return { failure: currentFailure, confirm: confirmFailure, signal: down.signal };
}

/**
 * Safety net: if this process ends without stop() (an uncaught exception), take the servers down
 * with it rather than leave orphans. Synchronous, as 'exit' handlers must be. Returns the listener
 * (stop and release remove it).
 */
function killOnExit(pg: PostgresCluster, pgb: Pgbouncer, baseDir: string): () => void {
  const onExit = (): void => {
    for (const pid of [...pgb.processes.map((p) => p.pid), pg.pid]) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    fs.rmSync(baseDir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  return onExit;
}

function localEnvironment(bins: LocalBinaries, pg: PostgresCluster, pgb: Pgbouncer): RunEnvironment {
  return {
    database: { engine: 'local', instanceClass: null },
    maxConnections: pg.maxConnections,
    serverVersion: pg.serverVersion,
    pgbenchVersion: bins.pgbenchVersion,
    poolerVersion: pgb.version,
    cpus: os.cpus().length || null,
    maxPreparedStatements: pgb.initialMaxPreparedStatements,
    // One machine: no zones, and nothing is billed (the report says "not priced (local run)").
    zones: null,
    targetPrices: null,
  };
}

/** Settings for the manifest (no secrets: trust auth, nothing to hide). */
function localSettings(
  pg: PostgresCluster,
  pgb: Pgbouncer,
  cfg: { poolPercent: number; reserved: number },
): Record<string, unknown> {
  return {
    server: `PostgreSQL ${pg.serverVersion} (throwaway cluster, trust auth on 127.0.0.1)`,
    maxConnections: pg.maxConnections,
    superuserReservedConnections: cfg.reserved,
    benchRole: `${BENCH_USER} (not a superuser)`,
    pooler: `PgBouncer ${pgb.version}`,
    maxPreparedStatements:
      pgb.initialMaxPreparedStatements === null
        ? `none (PgBouncer ${pgb.version} < ${pgbouncerDriver.preparedStatementsSince})`
        : pgb.initialMaxPreparedStatements,
    poolPercent: cfg.poolPercent,
    poolSize: pgb.initialPoolSize * pgb.processes.length,
    poolerProcesses: pgb.processes.length,
    serverLoginRetry: `${LOCAL_SERVER_LOGIN_RETRY_SEC} s (PgBouncer's default: 15 s)`,
    ...(pgb.processes.length > 1 ? { poolSizePerProcess: pgb.initialPoolSize } : {}),
    pools: LOCAL_POOLS,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpuModel: os.cpus()[0]?.model ?? null,
  };
}

/** How to connect by hand (for --keep). */
function connectionHelp(pg: PostgresCluster, pgb: Pgbouncer, baseDir: string): string {
  const many = pgb.processes.length > 1;
  return [
    `PostgreSQL ${pg.serverVersion}: psql -h 127.0.0.1 -p ${pg.port} -U ${BENCH_USER} ${BENCH_DB}   (superuser: -U postgres; trust auth, no password)`,
    `PgBouncer transaction pool: psql -h 127.0.0.1 -p ${pgb.port} -U ${BENCH_USER} ${TRANSACTION_DB}`,
    `PgBouncer session pool:     psql -h 127.0.0.1 -p ${pgb.port} -U ${BENCH_USER} ${SESSION_DB}`,
    ...pgb.processes.map(
      (p) =>
        `PgBouncer admin console${many ? ` ${p.index + 1}` : ''}:${many ? '  ' : '    '}psql -h ${p.admin.host} -p ${pgb.port} -U postgres ${pgbouncerDriver.adminDatabase}`,
    ),
    `Stop them:                  kill ${pgb.processes.map((p) => p.pid).join(' ')} ${pg.pid}; rm -rf ${baseDir}`,
  ].join('\n');
}
