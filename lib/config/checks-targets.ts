/**
 * Rules between the proxies' and poolers' fields: unique names, idle ≤ max, the pooler's release,
 * placement and the share of max_connections, and each one's `settings` against its product's catalogue.
 */
import { DEFAULTS } from './defaults';
import { poolerDriver } from '../poolers/registry';
import { POOLER_PRODUCTS } from '../poolers/products';
import { POOLER_ADMIN_PORT_BASE, POOLER_STATS_PORT, poolerDeployments } from '../poolers/endpoint';
import { totalPoolSize } from '../poolers/pool-size';
import { settingsProblems } from './settings';
import type { LabProblem } from './types';
import { formatValue, asRecord } from './problems';
import { isIntIn } from './checks-database';

export function checkProxies(proxies: unknown, out: LabProblem[]): void {
  if (!Array.isArray(proxies)) return;
  const seen = new Map<string, number>();
  proxies.forEach((p: unknown, i: number) => {
    const proxy = asRecord(p);
    if (!proxy) return;
    const name = proxy.name;
    if (typeof name === 'string') {
      const key = name.toLowerCase();
      const first = seen.get(key);
      if (first !== undefined) {
        out.push({
          path: `proxies[${i}].name`,
          value: name,
          message: `must be unique (case-insensitive): proxies[${first}] is already named ${formatValue(proxies[first] && asRecord(proxies[first])?.name)}, got ${formatValue(name)}`,
        });
      } else seen.set(key, i);
    }
    const max = proxy.maxConnectionsPercent ?? DEFAULTS.proxy.maxConnectionsPercent;
    const idle = proxy.maxIdleConnectionsPercent;
    if (isIntIn(max, 1, 100) && isIntIn(idle, 0, 100) && idle > max) {
      out.push({
        path: `proxies[${i}].maxIdleConnectionsPercent`,
        value: idle,
        message: `must be an integer 0–${max} (≤ maxConnectionsPercent ${max}), got ${formatValue(idle)}`,
      });
    }
  });
}

/**
 * Poolers: names unique among proxies AND poolers (case-insensitive: both become target names),
 * `instanceType` exactly when the placement is dedicated, at most one pooler on the runners (they
 * would share its ports), and a version proxylab has a checksum for.
 */
/** What a pooler's share is taken from: max_connections when the lab sets it, and the runner count. */
export interface PoolerBudget {
  readonly maxConnections: number | null;
  readonly runnerCount: number;
}

export function poolerBudgetOf(root: Record<string, unknown>): PoolerBudget {
  const db = asRecord(root.postgres) ?? asRecord(root.aurora);
  const max = db?.maxConnections;
  const count = asRecord(root.runners)?.count;
  return {
    maxConnections: typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : null,
    runnerCount:
      typeof count === 'number' && Number.isInteger(count) && count > 0 ? count : DEFAULTS.runners.count,
  };
}

export function checkPoolers(
  poolers: unknown,
  proxies: unknown,
  out: LabProblem[],
  budget: PoolerBudget,
): void {
  if (!Array.isArray(poolers)) return;
  const taken = new Map<string, string>();
  let firstOnRunners: number | null = null;
  if (Array.isArray(proxies)) {
    proxies.forEach((p: unknown, i: number) => {
      const name = asRecord(p)?.name;
      if (typeof name === 'string' && !taken.has(name.toLowerCase()))
        taken.set(name.toLowerCase(), `proxies[${i}]`);
    });
  }
  poolers.forEach((p: unknown, i: number) => {
    const pooler = asRecord(p);
    if (!pooler) return;
    const at = (key: string): string => `poolers[${i}].${key}`;
    const name = pooler.name;
    if (typeof name === 'string') {
      const first = taken.get(name.toLowerCase());
      if (first !== undefined) {
        out.push({
          path: at('name'),
          value: name,
          message: `must be unique among proxies and poolers (case-insensitive): ${first} is already named like it, got ${formatValue(name)}`,
        });
      } else taken.set(name.toLowerCase(), `poolers[${i}]`);
    }
    const placement = pooler.placement;
    if (placement === 'dedicated' && pooler.instanceType === undefined) {
      out.push({
        path: at('instanceType'),
        value: undefined,
        message:
          'is required for placement "dedicated": must be an EC2 instance type such as "c7g.xlarge" (the pooler host)',
      });
    }
    if (placement === 'on-runners' && pooler.instanceType !== undefined) {
      out.push({
        path: at('instanceType'),
        value: pooler.instanceType,
        message: `must not be given for placement "on-runners" (the pooler runs on the runners, runners.instanceType), got ${formatValue(pooler.instanceType)}`,
      });
    }
    // The driver of a known kind (its data port, its name in messages); null: the schema's error.
    const kindDriver = (POOLER_PRODUCTS as readonly unknown[]).includes(pooler.kind)
      ? poolerDriver(pooler.kind as string)
      : null;
    if (placement === 'on-runners') {
      if (firstOnRunners === null) firstOnRunners = i;
      else
        out.push({
          path: at('placement'),
          value: placement,
          message: `must not be "on-runners" twice: poolers[${firstOnRunners}] already runs on the runners, and both would need ports ${kindDriver ? `${kindDriver.host.dataPort}, ` : ''}${POOLER_STATS_PORT} and ${POOLER_ADMIN_PORT_BASE}+ there; got ${formatValue(placement)}`,
        });
    }
    // Every process opens at least one server connection: more processes (× runners, on-runners)
    // than the share of max_connections would break "poolPercent is the share in total". Known
    // only when the lab sets max_connections (else the engine's formula decides at deploy time).
    const processes = pooler.processes ?? DEFAULTS.pooler.processes;
    const percent = pooler.poolPercent ?? DEFAULTS.pooler.poolPercent;
    if (
      budget.maxConnections !== null &&
      (placement === 'dedicated' || placement === 'on-runners') &&
      typeof processes === 'number' &&
      Number.isInteger(processes) &&
      processes >= 1 &&
      typeof percent === 'number' &&
      percent >= 1 &&
      percent <= 100
    ) {
      const deployments = poolerDeployments(placement, budget.runnerCount);
      const share = totalPoolSize(percent, budget.maxConnections);
      if (processes * deployments > share)
        out.push({
          path: at('processes'),
          value: processes,
          message: `must leave each ${kindDriver?.displayName ?? 'pooler'} process at least one server connection: ${processes} process(es)${deployments > 1 ? ` × ${deployments} runners` : ''} > the pooler's share, ${percent} % of max_connections ${budget.maxConnections} = ${share}; got ${formatValue(processes)}`,
        });
    }
    // A multithreaded product scales inside one process (its worker threads); a single-threaded one
    // across processes. Each knob belongs to one kind of product.
    if (kindDriver) {
      const multithreaded = !kindDriver.capabilities(
        typeof pooler.version === 'string' ? pooler.version : kindDriver.defaultVersion,
      ).singleThreaded;
      if (multithreaded && typeof processes === 'number' && processes !== 1)
        out.push({
          path: at('processes'),
          value: processes,
          message: `must be 1 for ${kindDriver.displayName}: it runs one multithreaded process (set workerThreads for more cores); got ${formatValue(processes)}`,
        });
      if (!multithreaded && pooler.workerThreads !== undefined)
        out.push({
          path: at('workerThreads'),
          value: pooler.workerThreads,
          message: `must not be given for ${kindDriver.displayName}: each process has one thread (set processes for more cores); got ${formatValue(pooler.workerThreads)}`,
        });
    }
    const version = pooler.version;
    // The releases are the driver's; an unknown kind is the schema's error, not this one.
    const driver = kindDriver;
    if (typeof version === 'string' && driver && !driver.releases.some((r) => r.version === version)) {
      out.push({
        path: at('version'),
        value: version,
        message: `must be a ${driver.displayName} release proxylab has pinned (lib/poolers/${driver.product}/releases.ts): ${driver.releases.map((r) => r.version).join(', ')}; got ${formatValue(version)}`,
      });
    }
  });
}

/**
 * Each proxy's and pooler's `settings` against its product's catalogue, for the version it pins (a
 * pooler's `version`, else its driver's default; RDS Proxy has none). A pooler of an unknown kind or
 * version is left to the checks that name those.
 */
export function checkSettingsOf(root: Record<string, unknown>, out: LabProblem[]): void {
  if (Array.isArray(root.proxies))
    root.proxies.forEach((p: unknown, i: number) => {
      const r = asRecord(p);
      if (r) out.push(...settingsProblems('rds-proxy', null, r.settings, `proxies[${i}].settings`));
    });
  if (Array.isArray(root.poolers))
    root.poolers.forEach((p: unknown, i: number) => {
      const r = asRecord(p);
      if (!r || typeof r.kind !== 'string' || !(POOLER_PRODUCTS as readonly string[]).includes(r.kind))
        return;
      const driver = poolerDriver(r.kind);
      const version = typeof r.version === 'string' ? r.version : driver.defaultVersion;
      if (!driver.releases.some((x) => x.version === version)) return;
      out.push(...settingsProblems(r.kind, version, r.settings, `poolers[${i}].settings`));
    });
}
