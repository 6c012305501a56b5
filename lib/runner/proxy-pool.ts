/**
 * PoolControl for RDS Proxy: pool-percent sweeps without redeploying.
 *
 *  - setPoolPercent: `ModifyDBProxyTargetGroup` (target group `default`) with
 *    MaxConnectionsPercent = percent and MaxIdleConnectionsPercent = min(lab idle %, percent)
 *    (idle must not exceed max), then polls `DescribeDBProxyTargetGroups` until the target group
 *    reports exactly those values (AWS documents the change as applied without interruption, but
 *    not as synchronous).
 *  - restore: puts back the lab's values (given, or the values read before the first change) for
 *    every proxy this run changed, waits for each, and reports every failure at once. The runner
 *    calls it in a `finally`, so a failing step still restores.
 *  - isolate (before each step): every proxy that is not the step's target gets
 *    MaxIdleConnectionsPercent 0 (its MaxConnectionsPercent unchanged) until its own next step, when
 *    its values come back. RDS Proxy has no call that closes its server connections; what AWS offers
 *    is this setting, which "controls how actively the proxy closes idle database connections in the
 *    connection pool … A low value causes the proxy to close more idle connections and return them to
 *    the database" (RDS API reference, ConnectionPoolConfiguration.MaxIdleConnectionsPercent: 0 to
 *    MaxConnectionsPercent). How fast the proxy then closes them is not documented, so nothing waits
 *    for it: each step records the connections still held on the database (serverConnections.before),
 *    which shows whether a proxy's leftovers were there. Two target-group changes per switch away from
 *    and back to a proxy, each waited for like a sweep's.
 *  - reset: RDS Proxy has no API to drop its server connections. Nothing can be reset; the proxy
 *    cleans up session state itself when it reuses a connection (and pins what it cannot). We
 *    optionally wait `settleMs` so idle connections from the previous step can be reclaimed, and
 *    say so in docs/aws.md. Prepared-statement leakage between steps is therefore NOT ruled out on
 *    the proxy the way it is for PgBouncer (RECONNECT).
 */
import {
  DescribeDBProxyTargetGroupsCommand,
  ModifyDBProxyTargetGroupCommand,
  type RDSClient,
} from '@aws-sdk/client-rds';
import { InfrastructureError, UsageError } from '../core/errors';
import type { Clock, PoolControl } from '../engine/ports';
import { targetInstance } from '../suite/targets';
import type { TargetRef } from '../suite/types';
import type { PoolPercents } from '../aws/runner-args';

const PROXY_TARGET_GROUP = 'default';

export interface RdsProxyPoolControlOptions {
  /** Lab proxy name (a target's instance, `targetInstance`) → DBProxyName. */
  readonly proxyNames: Readonly<Record<string, string>>;
  /** The lab's values per lab proxy name; when absent, read before the first change. */
  readonly labValues?: Readonly<Record<string, PoolPercents>>;
  readonly clock: Clock;
  /** How long to wait for the target group to report a change. @default 300 000 ms */
  readonly waitTimeoutMs?: number;
  /** Poll interval. @default 5 000 ms */
  readonly pollIntervalMs?: number;
  /** Wait after a step on a proxy before the next one (reset has nothing to reset). @default 0 */
  readonly settleMs?: number;
  readonly log?: (line: string) => void;
}

export class RdsProxyPoolControl implements PoolControl {
  /** Lab values of the proxies this control changed, by lab proxy name. */
  private readonly changed = new Map<string, PoolPercents>();
  /** Current percent per lab proxy name (what Targets use for poolSize). */
  private readonly current = new Map<string, PoolPercents>();
  /** Proxies isolate() set to MaxIdleConnectionsPercent 0, with the values to give back. */
  private readonly drained = new Map<string, PoolPercents>();

  constructor(
    private readonly rds: RDSClient,
    private readonly options: RdsProxyPoolControlOptions,
  ) {}

  /** The pool % currently in effect for a proxy, if this control knows it. */
  currentPercent(proxyName: string): PoolPercents | null {
    return this.current.get(proxyName) ?? this.options.labValues?.[proxyName] ?? null;
  }

  /**
   * Whether this control manages the target (it reaches one of the lab's proxies), rather than
   * testing a kind. A proxy's pool is its target group's, whichever of its endpoints the target is.
   */
  private manages(target: TargetRef): boolean {
    return Object.prototype.hasOwnProperty.call(this.options.proxyNames, targetInstance(target));
  }

  /**
   * Before a step on `target`: every other proxy closes its idle server connections (idle % 0), and
   * `target`'s own proxy, if an earlier step drained it, gets its values back. Changed proxies are
   * put back by restore().
   */
  async isolate(target: TargetRef): Promise<void> {
    const measured = this.manages(target) ? targetInstance(target) : null;
    // The others first: their connections go back before the measured proxy may open its own.
    for (const name of Object.keys(this.options.proxyNames)) {
      const dbProxyName = this.dbProxyName(name);
      if (name === measured || this.drained.has(name)) continue;
      const now =
        this.current.get(name) ?? this.options.labValues?.[name] ?? (await this.describe(dbProxyName));
      const values = {
        maxConnectionsPercent: now.maxConnectionsPercent,
        maxIdleConnectionsPercent: now.maxIdleConnectionsPercent,
      };
      if (!this.changed.has(name)) this.changed.set(name, this.options.labValues?.[name] ?? values);
      this.drained.set(name, values);
      if (values.maxIdleConnectionsPercent === 0) continue; // keeps nothing idle already
      this.options.log?.(
        `proxy ${name}: releasing its idle server connections while another target is measured`,
      );
      await this.apply(name, dbProxyName, { ...values, maxIdleConnectionsPercent: 0 });
    }
    const back = measured === null ? undefined : this.drained.get(measured);
    if (measured !== null && back) {
      await this.apply(measured, this.dbProxyName(measured), back);
      this.drained.delete(measured);
    }
  }

  async reset(target: TargetRef): Promise<void> {
    if (!this.manages(target)) return;
    const settle = this.options.settleMs ?? 0;
    if (settle > 0) await this.options.clock.sleep(settle);
  }

  async setPoolPercent(target: TargetRef, percent: number): Promise<void> {
    if (!this.manages(target)) {
      throw new UsageError(
        `unknown proxy "${target.name}"; this lab has: ${Object.keys(this.options.proxyNames).join(', ') || 'none'} (pool percent applies to the lab's RDS proxies only; any other target has no pool to resize)`,
      );
    }
    if (!Number.isInteger(percent) || percent < 1 || percent > 100) {
      throw new UsageError(`maxConnectionsPercent must be an integer 1–100, got ${percent}`);
    }
    const proxy = targetInstance(target);
    const dbProxyName = this.dbProxyName(proxy);
    if (!this.changed.has(proxy)) {
      const lab = this.options.labValues?.[proxy] ?? (await this.describe(dbProxyName));
      this.changed.set(proxy, lab);
    }
    const lab = this.changed.get(proxy) as PoolPercents;
    const wanted = {
      maxConnectionsPercent: percent,
      maxIdleConnectionsPercent: Math.min(lab.maxIdleConnectionsPercent, percent),
    };
    await this.apply(proxy, dbProxyName, wanted);
  }

  async restore(): Promise<void> {
    const failures: string[] = [];
    for (const [name, lab] of this.changed) {
      try {
        await this.apply(name, this.dbProxyName(name), lab);
        this.changed.delete(name);
        this.drained.delete(name);
      } catch (err) {
        failures.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (failures.length > 0) {
      throw new InfrastructureError(
        `could not restore the lab's pool settings (run \`aws rds modify-db-proxy-target-group\` by hand): ${failures.join('; ')}`,
      );
    }
  }

  private dbProxyName(name: string): string {
    const dbProxyName = this.options.proxyNames[name];
    if (!dbProxyName)
      throw new UsageError(
        `unknown proxy "${name}"; this lab has: ${Object.keys(this.options.proxyNames).join(', ') || 'none'}`,
      );
    return dbProxyName;
  }

  private async describe(dbProxyName: string): Promise<PoolPercents & { status: string | null }> {
    const res = await this.rds.send(
      new DescribeDBProxyTargetGroupsCommand({
        DBProxyName: dbProxyName,
        TargetGroupName: PROXY_TARGET_GROUP,
      }),
    );
    const group = (res.TargetGroups ?? [])[0];
    const cfg = group?.ConnectionPoolConfig;
    if (!group || cfg?.MaxConnectionsPercent === undefined || cfg.MaxIdleConnectionsPercent === undefined) {
      throw new InfrastructureError(
        `proxy ${dbProxyName}: DescribeDBProxyTargetGroups returned no connection pool config`,
      );
    }
    return {
      maxConnectionsPercent: cfg.MaxConnectionsPercent,
      maxIdleConnectionsPercent: cfg.MaxIdleConnectionsPercent,
      status: group.Status ?? null,
    };
  }

  private async apply(name: string, dbProxyName: string, wanted: PoolPercents): Promise<void> {
    this.options.log?.(
      `proxy ${name}: MaxConnectionsPercent=${wanted.maxConnectionsPercent} MaxIdleConnectionsPercent=${wanted.maxIdleConnectionsPercent}`,
    );
    await this.rds.send(
      new ModifyDBProxyTargetGroupCommand({
        DBProxyName: dbProxyName,
        TargetGroupName: PROXY_TARGET_GROUP,
        ConnectionPoolConfig: {
          MaxConnectionsPercent: wanted.maxConnectionsPercent,
          MaxIdleConnectionsPercent: wanted.maxIdleConnectionsPercent,
        },
      }),
    );
    const timeoutMs = this.options.waitTimeoutMs ?? 300_000;
    const pollMs = this.options.pollIntervalMs ?? 5_000;
    const deadline = this.options.clock.now().getTime() + timeoutMs;
    for (;;) {
      const seen = await this.describe(dbProxyName);
      const inEffect =
        seen.maxConnectionsPercent === wanted.maxConnectionsPercent &&
        seen.maxIdleConnectionsPercent === wanted.maxIdleConnectionsPercent &&
        (seen.status === null || seen.status === 'available');
      if (inEffect) break;
      if (this.options.clock.now().getTime() >= deadline) {
        throw new InfrastructureError(
          `proxy ${dbProxyName}: target group still reports ${seen.maxConnectionsPercent}/${seen.maxIdleConnectionsPercent} % ` +
            `(status ${seen.status ?? 'unknown'}) after ${Math.round(timeoutMs / 1000)} s; wanted ` +
            `${wanted.maxConnectionsPercent}/${wanted.maxIdleConnectionsPercent} %`,
        );
      }
      await this.options.clock.sleep(pollMs);
    }
    this.current.set(name, wanted);
  }
}

/** PoolControl for runners that must not touch the proxies (fleet runners other than 0, tests). */
export class NoopPoolControl implements PoolControl {
  async reset(): Promise<void> {}
  async setPoolPercent(): Promise<void> {}
  async restore(): Promise<void> {}
}
