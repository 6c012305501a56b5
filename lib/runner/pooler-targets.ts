/**
 * Self-hosted poolers (PgBouncer, PgDoorman) in the cloud lab, as the runner sees them: each pooler
 * × pool mode is a target (`<pooler>-<mode>`, of its product's kinds (lib/config/targets.ts
 * poolerTargets), placement dedicated-host or co-located), probed through the admin console of
 * process 0 (the driver's probe; PgBouncer: SHOW VERSION, SHOW CONFIG's max_prepared_statements);
 * pool sweeps and the prepared-statement switch go to the admin console of EVERY process (the
 * driver's statements; PgBouncer: `SET default_pool_size`, `SET max_prepared_statements`), like
 * ModifyDBProxyTargetGroup for RDS Proxy; and the shared sampler (lib/engine/pooler-metrics.ts)
 * reads SHOW POOLS / SHOW STATS through the same admin ports and CPU from the agent's stats port.
 *
 * Admin connections go to the agent's relay (adminPortOf(i) → process i's unix socket) with
 * sslmode=prefer: the relay ends at a unix socket, where PgBouncer offers no TLS (and does not
 * demand it: client_tls_sslmode applies to TCP clients); the admin password is never sent in clear
 * (scram-sha-256). Data connections use sslmode=require when the pooler has `tls`.
 *
 * Who touches a pooler: a dedicated host is shared by every runner, so only runner 0 resizes and
 * resets it (before the fleet's step barrier, as for RDS Proxy) and samples it; an on-runners
 * pooler is each runner's own pooler at 127.0.0.1, so every runner applies the change to its own.
 */
import { InfrastructureError, UsageError } from '../core/errors';
import { parsePsqlResults, psqlStatementArgs } from '../core/psql-text';
import type { PoolerAdminPort } from '../engine/pooler-metrics';
import type { PoolControl, Target } from '../engine/ports';
import {
  applyOnEveryProcess,
  type AdminOp,
  type AdminRow,
  type AdminRun,
  type PoolerProbe,
} from '../poolers/driver';
import { poolerDeployments, type PoolerEndpoint } from '../poolers/endpoint';
import { processPoolSize } from '../poolers/pool-size';
import { poolerDriver } from '../poolers/registry';
import { describeTarget, type TargetDescriptor } from '../suite/targets';
import { poolerTargets } from '../config/targets';
import type { ConnectionInfo, TargetRef } from '../suite/types';
import type { AdminCredentials, DbCredentials } from '../aws/secrets';
import { type WriterInfo } from './targets';
import { runPsql } from '../exec/libpq';
import { KINDS } from '../products/kinds';
import type { PoolerSpec } from '../aws/runner-args';
import { poolerKitSettings } from '../config/kit-settings';

/** Runs admin console statements on one connection; one row set per statement. */
export type AdminRowsQuery = (
  conn: ConnectionInfo,
  statements: readonly string[],
  timeoutMs: number,
) => Promise<AdminRow[][]>;

/** `psql` with the connection in PG* variables (the password never in argv). */
export function psqlAdminRows(psqlPath = 'psql'): AdminRowsQuery {
  return async (conn, statements, timeoutMs) =>
    parsePsqlResults(
      await runPsql(psqlPath, conn, psqlStatementArgs(statements), timeoutMs, 'PgBouncer admin'),
    );
}

/** The admin console connection of process i of a pooler. */
export function adminConnection(p: PoolerEndpoint, i: number, admin: AdminCredentials): ConnectionInfo {
  const port = p.adminPorts[i];
  if (port === undefined) throw new UsageError(`pooler ${p.name} has no process ${i + 1}`);
  return {
    host: p.host,
    port,
    user: admin.username,
    dbname: poolerDriver(p.product).adminDatabase,
    // PgBouncer's unix socket answers a TLS request with "no", PgDoorman's with an error (the driver says)
    sslmode: poolerDriver(p.product).admin.relaySslmode,
    env: { PGPASSWORD: admin.password },
  };
}

/** The sampler's port onto one pooler's admin consoles. */
export function poolerAdminPort(
  p: PoolerEndpoint,
  admin: AdminCredentials,
  query: AdminRowsQuery,
): PoolerAdminPort {
  return {
    processes: p.processes,
    query: (i, statements, timeoutMs) => query(adminConnection(p, i, admin), statements, timeoutMs),
    close: () => Promise.resolve(),
  };
}

export type { PoolerProbe } from '../poolers/driver';

/** The driver's probe (PgBouncer: SHOW VERSION and SHOW CONFIG) on process 0. */
export async function probePooler(
  p: PoolerEndpoint,
  admin: AdminCredentials,
  query: AdminRowsQuery,
): Promise<PoolerProbe> {
  const { probe } = poolerDriver(p.product).admin;
  return probe.parse(await query(adminConnection(p, 0, admin), probe.statements, 30_000));
}

export class PoolerTarget implements Target {
  readonly descriptor: TargetDescriptor;
  constructor(
    readonly ref: TargetRef,
    readonly pooler: PoolerSpec,
    private readonly conn: ConnectionInfo,
    private readonly writer: WriterInfo,
    /** The pooler's pool % now (sweeps change it). */
    private readonly poolPercent: () => number,
    probe: PoolerProbe,
    /** PgBouncer deployments splitting the % (the runners, for a pooler placed on them). */
    private readonly sharedBy = 1,
  ) {
    const driver = poolerDriver(pooler.product);
    // a console that does not report it (PgDoorman): the size the lab configured
    const maxPreparedStatements = driver.admin.probe.preparedStatementsFromConfig
      ? probe.version === null
        ? null
        : pooler.maxPreparedStatements
      : probe.maxPreparedStatements;
    const mode = KINDS[ref.kind].poolMode;
    this.descriptor = describeTarget(ref, {
      version: probe.version,
      maxPreparedStatements,
      // every catalogued setting's effective value: the lab's, proxylab's (as the host wrote it), the default
      settings: pooler.settings ?? {},
      ...(mode !== null ? { kitSettings: poolerKitSettings(pooler, mode, maxPreparedStatements) } : {}),
      placement: pooler.placement === 'dedicated' ? 'dedicated-host' : 'co-located',
      processes: pooler.processes,
      ...(driver.capabilities(probe.version).runtimePoolResize === 'config-reload'
        ? {
            poolResizeUnavailable: `${driver.displayName} resizes a pool by rewriting its configuration file and RELOAD; the runners reach only its admin console`,
          }
        : {}),
    });
  }

  connection(): ConnectionInfo {
    return this.conn;
  }

  maxConnections(): Promise<number> {
    return this.writer.maxConnections();
  }

  /**
   * Server connections this pool may open: each process's default_pool_size × processes, × the
   * deployments sharing it (every runner's own PgBouncer, for on-runners).
   */
  async poolSize(): Promise<number> {
    const max = await this.writer.maxConnections();
    const n = this.pooler.processes * this.sharedBy;
    return processPoolSize(this.poolPercent(), max, this.pooler.processes, this.sharedBy) * n;
  }
}

/** One target per pooler × pool mode. */
export function buildPoolerTargets(input: {
  readonly poolers: readonly PoolerSpec[];
  readonly probes: ReadonlyMap<string, PoolerProbe>;
  readonly credentials: DbCredentials;
  readonly writer: WriterInfo;
  readonly poolPercent: (pooler: string) => number;
  /** Runners in the fleet: a pooler on the runners splits its share across them. */
  readonly runnerCount: number;
}): PoolerTarget[] {
  return input.poolers.flatMap((p) =>
    poolerTargets(p).map(
      ({ ref, mode }) =>
        new PoolerTarget(
          ref,
          p,
          {
            host: p.host,
            port: p.port,
            user: input.credentials.username,
            dbname: poolerDriver(p.product).poolDatabaseAlias(input.credentials.dbname, mode),
            sslmode: p.tls ? 'require' : 'prefer',
            env: { PGPASSWORD: input.credentials.password },
          },
          input.writer,
          () => input.poolPercent(p.name),
          input.probes.get(p.name) ?? { version: null, maxPreparedStatements: null },
          poolerDeployments(p.placement, input.runnerCount),
        ),
    ),
  );
}

export interface PoolerPoolControlOptions {
  readonly poolers: readonly PoolerEndpoint[];
  readonly admin: AdminCredentials;
  readonly query: AdminRowsQuery;
  readonly maxConnections: () => Promise<number>;
  /** The database the aliases are made from (the DB secret's dbname). */
  readonly dbname: string;
  /** Does this runner change this pooler? (dedicated: runner 0 only; on-runners: every runner, its own) */
  readonly applies: (p: PoolerEndpoint) => boolean;
  /** max_prepared_statements as probed at start (what restore puts back); null: none. */
  readonly initialMaxPreparedStatements: (pooler: string) => number | null;
  /** Runners in the fleet: a pooler on the runners splits its share across them. */
  readonly runnerCount: number;
  readonly log?: (line: string) => void;
}

/**
 * PoolControl for the lab's self-hosted poolers, PgBouncer and PgDoorman alike (each product's admin
 * statements come from its driver). The pool size is pooler-wide (PgBouncer's `SET
 * default_pool_size`): a sweep on `<pooler>-transaction` resizes `<pooler>-session` too, so the
 * current % is kept per pooler.
 */
export class PoolerPoolControl implements PoolControl {
  private readonly percent = new Map<string, number>();
  private readonly mps = new Map<string, number>();
  private readonly changed = new Set<string>();

  constructor(private readonly o: PoolerPoolControlOptions) {}

  manages(target: TargetRef): boolean {
    return this.poolerOf(target) !== null;
  }

  currentPercent(pooler: string): number {
    return this.percent.get(pooler) ?? this.o.poolers.find((p) => p.name === pooler)?.poolPercent ?? 100;
  }

  private poolerOf(target: TargetRef): PoolerEndpoint | null {
    return this.o.poolers.find((p) => poolerTargets(p).some((t) => t.ref.name === target.name)) ?? null;
  }

  /** Runs a driver's admin operation on every process of `p`, checking each answer. */
  private apply(p: PoolerEndpoint, op: AdminOp): Promise<void> {
    const run: AdminRun = (i, statements) =>
      this.o.query(adminConnection(p, i, this.o.admin), statements, 30_000);
    return applyOnEveryProcess(run, p.processes, op, (i) => `pooler ${p.name} process ${i + 1}`);
  }

  private aliases(p: PoolerEndpoint): string[] {
    const driver = poolerDriver(p.product);
    return p.poolModes.map((m) => driver.poolDatabaseAlias(this.o.dbname, m));
  }

  /**
   * KILL + RESUME every pool of every pooler this runner changes, whatever the step's target (as
   * `proxylab local` does): no state (prepared statements) leaks between steps, and idle server
   * connections a pooler kept from the previous step do not take max_connections slots from this one.
   */
  async reset(): Promise<void> {
    for (const p of this.o.poolers) {
      if (!this.o.applies(p)) continue;
      await this.apply(p, poolerDriver(p.product).admin.reset(this.aliases(p)));
    }
  }

  async setPoolPercent(target: TargetRef, percent: number): Promise<void> {
    const p = this.poolerOf(target);
    if (!p) throw new UsageError(`${target.name} is not a pooler target of this lab`);
    if (!Number.isInteger(percent) || percent < 1 || percent > 100)
      throw new UsageError(`pool percent must be an integer 1–100, got ${percent}`);
    if (this.o.applies(p)) await this.applyPercent(p, percent);
    this.percent.set(p.name, percent);
    this.changed.add(p.name);
  }

  private async applyPercent(p: PoolerEndpoint, percent: number): Promise<void> {
    const sharedBy = poolerDeployments(p.placement, this.o.runnerCount);
    const size = processPoolSize(percent, await this.o.maxConnections(), p.processes, sharedBy);
    this.o.log?.(
      `pooler ${p.name}: default_pool_size ${size} on each of ${p.processes} process(es) (${percent} %)`,
    );
    await this.apply(p, poolerDriver(p.product).admin.setPoolSize(size, this.aliases(p)));
  }

  /**
   * Narrows `target`'s pooler to one server connection per process (`default_pool_size` and
   * `max_user_connections` 1 on every process's admin console), so the two clients of a session-state
   * probe share one; `restore` puts the current pool percent back. null: not a pooler of this lab, or
   * one this runner does not change.
   */
  async narrowToOne(target: TargetRef): Promise<{ sharing: string; restore: () => Promise<void> } | null> {
    const p = this.poolerOf(target);
    if (!p || !this.o.applies(p)) return null;
    const driver = poolerDriver(p.product);
    await this.apply(p, driver.admin.setPoolSize(1, this.aliases(p)));
    return {
      sharing:
        `${driver.displayName} ${p.name}: ${driver.poolSizeSettings.map((x) => `${x} = 1`).join(' and ')} for the step` +
        (p.processes > 1 ? ` on each of ${p.processes} processes (clients may land on different ones)` : '') +
        '; the pool reset before each feature',
      restore: () => this.applyPercent(p, this.currentPercent(p.name)),
    };
  }

  async setMaxPreparedStatements(target: TargetRef, value: number): Promise<void> {
    const p = this.poolerOf(target);
    if (!p) throw new UsageError(`${target.name} is not a pooler target of this lab`);
    if (!Number.isInteger(value) || value < 0)
      throw new UsageError(`max_prepared_statements must be an integer ≥ 0, got ${value}`);
    if (this.o.applies(p) && this.mps.get(p.name) !== value) await this.applyMps(p, value);
    this.mps.set(p.name, value);
    this.changed.add(p.name);
  }

  private async applyMps(p: PoolerEndpoint, value: number): Promise<void> {
    await this.apply(p, poolerDriver(p.product).admin.setMaxPreparedStatements(value));
  }

  async restore(): Promise<void> {
    const failures: string[] = [];
    for (const name of this.changed) {
      const p = this.o.poolers.find((x) => x.name === name);
      if (!p) continue;
      try {
        if (this.o.applies(p)) {
          if (this.percent.has(name) && this.percent.get(name) !== p.poolPercent)
            await this.applyPercent(p, p.poolPercent);
          const initial = this.o.initialMaxPreparedStatements(name);
          if (initial !== null && this.mps.has(name) && this.mps.get(name) !== initial)
            await this.applyMps(p, initial);
        }
        this.percent.delete(name);
        this.mps.delete(name);
        this.changed.delete(name);
      } catch (err) {
        failures.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (failures.length > 0)
      throw new InfrastructureError(`could not restore the lab's pooler settings: ${failures.join('; ')}`);
  }
}

/**
 * Pool control over the RDS proxies and the self-hosted poolers: each target goes to the control
 * that manages it (the RDS control refuses names it does not know).
 */
export class CompositePoolControl implements PoolControl {
  constructor(
    private readonly proxies: PoolControl,
    private readonly poolers: PoolerPoolControl,
  ) {}

  async reset(target: TargetRef): Promise<void> {
    await this.poolers.reset();
    if (!this.poolers.manages(target)) await this.proxies.reset(target);
  }

  /** Pooler pools are drained by reset() before every step; the proxies drain their own. */
  async isolate(target: TargetRef): Promise<void> {
    await this.proxies.isolate?.(target);
  }

  setPoolPercent(target: TargetRef, percent: number): Promise<void> {
    return this.poolers.manages(target)
      ? this.poolers.setPoolPercent(target, percent)
      : this.proxies.setPoolPercent(target, percent);
  }

  setMaxPreparedStatements(target: TargetRef, value: number): Promise<void> {
    if (this.poolers.manages(target)) return this.poolers.setMaxPreparedStatements(target, value);
    if (this.proxies.setMaxPreparedStatements) return this.proxies.setMaxPreparedStatements(target, value);
    return Promise.reject(new UsageError(`${target.name} has no max_prepared_statements to set`));
  }

  async restore(): Promise<void> {
    const results = await Promise.allSettled([this.proxies.restore(), this.poolers.restore()]);
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length > 0)
      throw new InfrastructureError(
        failed.map((f) => (f.reason instanceof Error ? f.reason.message : String(f.reason))).join('; '),
      );
  }
}
