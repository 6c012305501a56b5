/**
 * The local stand-in as one object: binaries found (or installed), a throwaway PostgreSQL, one or
 * more self-hosted poolers (PgBouncer by default; `poolers` lists them: PgBouncer with 1 and 2
 * processes and PgDoorman side by side, say), each with a transaction and a session pool in front
 * of it, and the engine ports bound to them (targets, pool control, pgbench executor, metrics sampler). `stop()` ends every process we
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
import {
  describeTarget,
  directTarget,
  poolerTarget,
  targetInstance,
  targetProduct,
  type TargetDescriptor,
} from '../suite/targets';
import type { RunEnvironment, TargetPrice, TargetRef } from '../suite/types';
import { findBinaries, type LocalBinaries } from './binaries';
import { availablePoolers, LOCAL_ADAPTERS } from './adapters';
import { LocalPgbenchExecutor } from '../exec/pgbench-executor';
import { processPoolSize } from '../poolers/pgbouncer/config';
import { pgbouncerDriver } from '../poolers/pgbouncer/driver';
import { poolerDriver } from '../poolers/registry';
import type { PoolerProduct } from '../poolers/products';
import { asPgbouncer, type Pgbouncer } from './pgbouncer';
import type { LocalPooler, LocalPoolerSpec } from './pooler';
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
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_POOL_PERCENT } from './defaults';

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
  /**
   * The poolers to start, in order (lib/local/pooler.ts parsePoolerSpecs). A product whose binary
   * is not found is left out with a line saying how to get it (PgBouncer is installed or required
   * as before). @default one PgBouncer named `pgbouncer` with `poolerProcesses` processes
   */
  readonly poolers?: readonly LocalPoolerSpec[];
  /** Already found binaries by product (tests; no cache lookup then). @default found (lib/local/adapters.ts) */
  readonly poolerBinaries?: Partial<Record<PoolerProduct, { file: string; version: string } | null>>;
  /** Install missing PostgreSQL/PgBouncer with the OS package manager. @default false */
  readonly install?: boolean;
  /** Already found binaries (skips the search). */
  readonly bins?: LocalBinaries;
  /** Test-only: copy this data directory instead of running initdb (lib/local/postgres.ts `dataTemplate`). */
  readonly dataTemplate?: string | null;
  readonly log?: (line: string) => void;
  /** First stop stacks left by dead proxylab processes (one log line each). @default true */
  readonly reapOrphans?: boolean;
  /** `--price-region`: the targets at a cloud region's prices, for the run's environment. @default null */
  readonly targetPrices?: readonly TargetPrice[] | null;
}

export interface LocalStack {
  readonly bins: LocalBinaries;
  readonly runAs: RunAs | null;
  /** Temporary directory holding the cluster, PgBouncer's files and pgbench work dirs. */
  readonly baseDir: string;
  readonly postgres: PostgresCluster;
  /** Every pooler started, in the order asked. */
  readonly poolers: readonly LocalPooler[];
  /** Poolers asked for but not started (no binary), with what was said about them. */
  readonly skippedPoolers: readonly { readonly spec: LocalPoolerSpec; readonly why: string }[];
  /** The first PgBouncer (throws when the stack runs none). */
  readonly pgbouncer: Pgbouncer;
  /** The pooler behind a target (`pgdoorman-transaction` → PgDoorman); null for direct. */
  poolerFor(target: TargetRef): LocalPooler | null;
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
  const asked: readonly LocalPoolerSpec[] = opts.poolers ?? [
    { product: 'pgbouncer', processes: opts.poolerProcesses ?? 1, instance: LOCAL_POOLER },
  ];
  const log = opts.log ?? (() => undefined);
  const bins =
    opts.bins ??
    findBinaries({
      install: opts.install ?? false,
      log: opts.log,
      needPgbouncer: asked.some((p) => LOCAL_ADAPTERS[p.product].withPostgres),
    });
  const { specs, skipped, binaries } = availablePoolers(asked, bins, opts.poolerBinaries, log);
  const runAs = resolveRunAs();
  if (typeof process.getuid === 'function' && process.getuid() === 0 && runAs === null) {
    throw new InfrastructureError(
      'running as root, and there is no unprivileged `postgres` OS user to run PostgreSQL and the poolers as (create one: useradd --system postgres)',
    );
  }
  if (opts.reapOrphans ?? true) await reapOrphanedStacks({ log: opts.log });
  const baseDir = fs.mkdtempSync(path.join(os.tmpdir(), STACK_DIR_PREFIX));
  let owner: StackOwner = currentOwner(runAs?.user ?? null);
  let postgres: PostgresCluster | null = null;
  const poolers: LocalPooler[] = [];
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
    const excludePorts = new Set<number>();
    for (const spec of specs) {
      const binary = binaries.get(spec.instance);
      if (binary === undefined) throw new Error(`no binary for ${spec.instance}`);
      const pooler = await LOCAL_ADAPTERS[spec.product].start(spec, {
        bins,
        binary,
        baseDir,
        runAs,
        server: postgres,
        poolPercent,
        excludePorts,
      });
      poolers.push(pooler);
      excludePorts.add(pooler.port);
      owner = withPoolers(owner, poolers);
      writeOwnerFile(baseDir, owner);
    }
  } catch (e) {
    for (const p of poolers) await p.stop();
    if (postgres) await postgres.stop();
    fs.rmSync(baseDir, { recursive: true, force: true });
    throw e;
  }
  return makeStack(
    bins,
    runAs,
    baseDir,
    postgres,
    poolers,
    skipped,
    { maxConnections, poolPercent, reserved, targetPrices: opts.targetPrices ?? null },
    owner,
  );
}

/** The owner record with every started pooler (the first PgBouncer also under `pgbouncer`, as older reapers read). */
function withPoolers(owner: StackOwner, poolers: readonly LocalPooler[]): StackOwner {
  const first = poolers.map(asPgbouncer).find((p): p is Pgbouncer => p !== null);
  return {
    ...owner,
    pgbouncer: first
      ? {
          pid: first.pid,
          pidFile: first.processes[0]?.pidFile ?? path.join(path.dirname(first.iniFile), 'pgbouncer.pid'),
          iniFile: first.iniFile,
          others: first.processes.slice(1).map((p) => ({ pid: p.pid, pidFile: p.pidFile })),
        }
      : null,
    poolers: poolers.map((p) => ({
      product: p.product,
      instance: p.instance,
      processes: p.processes.map((x) => ({ pid: x.pid, pidFile: x.pidFile })),
    })),
  };
}

/** `PgBouncer` for an instance named after its product (the messages of a single-PgBouncer stack), else `PgBouncer bouncer-fast-retry`. */
function poolerLabel(p: LocalPooler): string {
  const name = poolerDriver(p.product).displayName;
  return p.instance === p.product ? name : `${name} ${p.instance}`;
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
  poolers: readonly LocalPooler[],
  skippedPoolers: ReadonlyArray<{ spec: LocalPoolerSpec; why: string }>,
  cfg: {
    maxConnections: number;
    poolPercent: number;
    reserved: number;
    targetPrices: readonly TargetPrice[] | null;
  },
  owner: StackOwner,
): LocalStack {
  const targets = localTargets(pg, poolers);
  const executor = new LocalPgbenchExecutor({
    pgbench: bins.pgbench,
    workRoot: path.join(baseDir, 'pgbench'),
  });
  const life: Lifecycle = { stopped: false };
  const infrastructure = watchServers(pg, poolers, life);
  const onExit = killOnExit(pg, poolers, baseDir);
  const firstBouncer = poolers.map(asPgbouncer).find((p): p is Pgbouncer => p !== null);
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
    poolers,
    skippedPoolers,
    get pgbouncer(): Pgbouncer {
      if (!firstBouncer) throw new InfrastructureError('this local stack runs no PgBouncer');
      return firstBouncer;
    },
    poolerFor: (ref) => poolerOf({ ref }, poolers),
    targets,
    pool: localPoolControl(pg, poolers, targets),
    executor,
    get pids() {
      return [pg.pid, ...poolers.flatMap((p) => p.processes.map((x) => x.pid))];
    },
    infrastructure,
    environment: localEnvironment(bins, pg, poolers, cfg.targetPrices),
    descriptors: targets.map((t) => t.descriptor).filter((d): d is TargetDescriptor => d !== undefined),
    settings: localSettings(pg, poolers, cfg),
    target: (name) => {
      const t = targets.find((x) => x.ref.name === name);
      if (!t) throw new InfrastructureError(`the local stack has no ${name} target`);
      return t;
    },
    createSampler: (intervalMs) =>
      new LocalMetricsSampler({
        poolers: poolers.map((p) => ({
          name: p.instance,
          product: p.product,
          admins: p.processes.map((x) => x.admin),
          pids: p.processes.map((x) => x.pid),
          targets: targets.filter((t) => poolerOf(t, poolers) === p).map((t) => t.ref.name),
          pools: p.pools,
          coresPerProcess: poolerDriver(p.product).coresPerProcess(p.workerThreads),
          threads: p.workerThreads !== null,
        })),
        server: pg.superuserTarget(BENCH_DB),
        datname: BENCH_DB,
        intervalMs,
      }),
    connectionHelp: () => connectionHelp(pg, poolers, baseDir),
    release: () => {
      life.stopped = true;
      void serverConnections.close();
      // Kept on purpose: a later `proxylab local` must not reap it once this process has exited.
      writeOwnerFile(baseDir, { ...owner, kept: true });
      process.removeListener('exit', onExit);
      for (const p of poolers) p.release();
      pg.release();
    },
    stop: async ({ keepFiles = false } = {}) => {
      if (life.stopped) return;
      life.stopped = true;
      try {
        await serverConnections.close();
        for (const p of poolers) await p.stop();
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
 * `direct`, then `<instance>-transaction` and `<instance>-session` of every pooler: the adapter says
 * what it probed for each, the target registry what that means.
 */
function localTargets(pg: PostgresCluster, poolers: readonly LocalPooler[]): Target[] {
  const direct: Target = {
    ref: directTarget(),
    descriptor: describeTarget(directTarget(), { version: pg.serverVersion, placement: 'local' }),
    connection: (): ConnectionInfo => ({
      host: '127.0.0.1',
      port: pg.port,
      user: BENCH_USER,
      dbname: BENCH_DB,
      sslmode: 'disable',
      env: {},
    }),
    maxConnections: () => Promise.resolve(pg.maxConnections),
    poolSize: () => Promise.resolve(null),
  };
  const pooled = poolers.flatMap((p) =>
    Object.entries(p.pools).map(([dbname, mode]): Target => {
      const ref = poolerTarget(p.product, p.instance, mode);
      return {
        ref,
        descriptor: describeTarget(ref, {
          version: p.version,
          maxPreparedStatements: p.initialMaxPreparedStatements,
          placement: 'local',
          settings: p.settings,
          kitSettings: p.kitSettings,
          processes: p.processes.length,
          ...(p.workerThreads !== null ? { workerThreads: p.workerThreads } : {}),
        }),
        connection: (): ConnectionInfo => ({
          host: '127.0.0.1',
          port: p.port,
          user: BENCH_USER,
          dbname,
          sslmode: 'disable',
          env: {},
        }),
        maxConnections: () => Promise.resolve(pg.maxConnections),
        // Server connections one pool may open: each process's pool size, times the processes.
        poolSize: () => Promise.resolve(p.totalPoolSize()),
      };
    }),
  );
  return [direct, ...pooled];
}

/** The pooler serving a target (null for direct). */
function poolerOf(t: Pick<Target, 'ref'>, poolers: readonly LocalPooler[]): LocalPooler | null {
  const instance = targetInstance(t.ref);
  return poolers.find((p) => p.instance === instance && p.product === targetProduct(t.ref).id) ?? null;
}

function localPoolControl(
  pg: PostgresCluster,
  poolers: readonly LocalPooler[],
  targets: readonly Target[],
): PoolControl {
  const of = (ref: TargetRef): LocalPooler => {
    const p = poolerOf({ ref }, poolers);
    if (!p) throw new InfrastructureError(`${ref.name} is not a pooler target of the local stack`);
    return p;
  };
  void targets;
  return {
    // Every pool of every pooler, whatever the step's target: idle server connections held by one
    // pool take max_connections slots from the next step (a direct step would be refused early).
    reset: async () => {
      for (const p of poolers) await p.reset();
    },
    // The engine asks only targets whose descriptor has a resizable pool.
    setPoolPercent: async (ref, percent) => {
      const p = of(ref);
      await p.setPoolSize(processPoolSize(percent, pg.maxConnections, p.processes.length));
    },
    // Global in PgBouncer: the engine applies each step's value before the step.
    setMaxPreparedStatements: async (ref, value) => {
      const p = of(ref);
      if (p.maxPreparedStatements() !== value) await p.setMaxPreparedStatements(value);
    },
    restore: async () => {
      for (const p of poolers) {
        if (p.poolSize() !== p.initialPoolSize) await p.setPoolSize(p.initialPoolSize);
        const mps = p.initialMaxPreparedStatements;
        if (mps !== null && p.maxPreparedStatements() !== mps) await p.setMaxPreparedStatements(mps);
      }
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
function watchServers(
  pg: PostgresCluster,
  poolers: readonly LocalPooler[],
  life: Lifecycle,
): InfrastructureWatch {
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
  for (const p of poolers) watch(poolerLabel(p), () => p.pid, p.exited);
  const liveness = nodeReapSystem();
  /** Down on purpose for too long, or null. */
  const downTooLong = (): string | null => {
    const planned = pg.plannedDown();
    if (planned === null || Date.now() - planned.sinceMs <= PLANNED_DOWN_LIMIT_MS) return null;
    return `PostgreSQL was stopped on purpose (${planned.why}) ${Math.round((Date.now() - planned.sinceMs) / 1000)} s ago and is still down`;
  };
  /** The processes that must be running now: a disruption replaces pids (a restart, a rolling restart). */
  const processes = (): Array<readonly [string, number]> => [
    ...(pg.plannedDown() === null ? [['PostgreSQL', pg.pid] as const] : []),
    ...poolers.flatMap((p) =>
      p.processes.map(
        (x) =>
          [
            p.processes.length > 1 ? `${poolerLabel(p)} process ${x.index + 1}` : poolerLabel(p),
            x.pid,
          ] as const,
      ),
    ),
  ];
  /** Asked right after each pgbench: the exit event may not have arrived yet, /proc already knows (zombies too). */
  const currentFailure = (): string | null => {
    if (failure === null && !life.stopped) {
      const stuck = downTooLong();
      if (stuck !== null) {
        failure = stuck;
        down.abort();
        return failure;
      }
      for (const [name, pid] of processes()) {
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
   * (or pooler's) listening socket is closed at once, even while /proc and the exit event lag.
   */
  const confirmFailure = async (): Promise<string | null> => {
    for (const [name, pid, port] of [
      ...(pg.plannedDown() === null ? [['PostgreSQL', pg.pid, pg.port] as const] : []),
      ...poolers.map((p) => [poolerLabel(p), p.pid, p.port] as const),
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
function killOnExit(pg: PostgresCluster, poolers: readonly LocalPooler[], baseDir: string): () => void {
  const onExit = (): void => {
    for (const pid of [...poolers.flatMap((p) => p.processes.map((x) => x.pid)), pg.pid]) {
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

function localEnvironment(
  bins: LocalBinaries,
  pg: PostgresCluster,
  poolers: readonly LocalPooler[],
  targetPrices: readonly TargetPrice[] | null,
): RunEnvironment {
  const first = poolers[0];
  return {
    database: { engine: 'local', instanceClass: null },
    maxConnections: pg.maxConnections,
    serverVersion: pg.serverVersion,
    pgbenchVersion: bins.pgbenchVersion,
    // the first pooler's (each target's descriptor carries its own)
    poolerVersion: first?.version ?? null,
    cpus: os.cpus().length || null,
    maxPreparedStatements: first?.initialMaxPreparedStatements ?? null,
    // One machine: no zones. Nothing is billed: the targets are priced only at a cloud region's
    // prices with --price-region (lib/cost/local-prices.ts), else the report says "not priced".
    zones: null,
    targetPrices,
  };
}

/** `PgBouncer 1.25.2`, `PgBouncer 1.25.2 (2 processes, so_reuseport)`, `PgDoorman 3.10.7 (2 worker threads)`. */
export function describeLocalPooler(p: LocalPooler): string {
  const base = `${poolerDriver(p.product).displayName} ${p.version}`;
  if (p.workerThreads !== null) return `${base} (${p.workerThreads} worker threads)`;
  return p.processes.length > 1 ? `${base} (${p.processes.length} processes, so_reuseport)` : base;
}

/** Settings for the manifest (no secrets: trust auth, nothing to hide). */
function localSettings(
  pg: PostgresCluster,
  poolers: readonly LocalPooler[],
  cfg: { poolPercent: number; reserved: number },
): Record<string, unknown> {
  const first = poolers[0];
  const firstDriver = first ? poolerDriver(first.product) : pgbouncerDriver;
  return {
    server: `PostgreSQL ${pg.serverVersion} (throwaway cluster, trust auth on 127.0.0.1)`,
    maxConnections: pg.maxConnections,
    superuserReservedConnections: cfg.reserved,
    benchRole: `${BENCH_USER} (not a superuser)`,
    pooler: poolers.map(describeLocalPooler).join(', ') || 'none',
    maxPreparedStatements:
      first === undefined
        ? null
        : first.initialMaxPreparedStatements === null
          ? `none (${firstDriver.displayName} ${first.version} < ${firstDriver.preparedStatementsSince})`
          : first.initialMaxPreparedStatements,
    poolPercent: cfg.poolPercent,
    poolSize: first ? first.totalPoolSize() : null,
    poolerProcesses: first ? first.processes.length : null,
    ...(first && first.processes.length > 1 ? { poolSizePerProcess: first.initialPoolSize } : {}),
    pools: first ? first.pools : {},
    ...(poolers.length > 1 || first?.instance !== LOCAL_POOLER
      ? {
          poolerInstances: Object.fromEntries(
            poolers.map((p) => [
              p.instance,
              {
                pooler: describeLocalPooler(p),
                poolSize: p.totalPoolSize(),
                pools: p.pools,
                // the lab's settings (every other one at the product's default: plan.json has them all)
                settings: p.settings,
              },
            ]),
          ),
        }
      : {}),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpuModel: os.cpus()[0]?.model ?? null,
  };
}

/** How to connect by hand (for --keep). */
function connectionHelp(pg: PostgresCluster, poolers: readonly LocalPooler[], baseDir: string): string {
  const lines = [
    `PostgreSQL ${pg.serverVersion}: psql -h 127.0.0.1 -p ${pg.port} -U ${BENCH_USER} ${BENCH_DB}   (superuser: -U postgres; trust auth, no password)`,
  ];
  for (const p of poolers) {
    const label = poolerLabel(p);
    const many = p.processes.length > 1;
    for (const [dbname, mode] of Object.entries(p.pools))
      lines.push(
        `${`${label} ${mode} pool:`.padEnd(28)}psql -h 127.0.0.1 -p ${p.port} -U ${BENCH_USER} ${dbname}`,
      );
    for (const x of p.processes)
      lines.push(
        `${`${label} admin console${many ? ` ${x.index + 1}` : ''}:`.padEnd(28)}psql -h ${x.admin.host} -p ${p.port} -U ${x.admin.user} ${poolerDriver(p.product).adminDatabase}`,
      );
  }
  lines.push(
    `${'Stop them:'.padEnd(28)}kill ${poolers.flatMap((p) => p.processes.map((x) => x.pid)).join(' ')} ${pg.pid}; rm -rf ${baseDir}`,
  );
  return lines.join('\n');
}
