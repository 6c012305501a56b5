/**
 * A lab's targets, listed once: the writer (`direct`), one target per RDS Proxy endpoint and one per
 * self-hosted pooler × pool mode. The run-duration estimate (lib/operator/run-window.ts) and the
 * runner's targets (lib/runner/targets.ts, lib/runner/pooler-targets.ts, the pooler sampler in
 * lib/runner/runner.ts) all list them through here, so none of them can leave a target out.
 *
 * It takes only what it needs of a lab (proxy names; pooler names and pool modes), so the lab
 * config and the runner's arguments (which carry the same names from the stack outputs) both fit.
 */
import {
  describeTarget,
  directTarget,
  MANAGED_PROXY_KINDS,
  managedProxyTarget,
  type ManagedProxyKind,
  poolerTarget,
  type PoolMode,
  type ProxyTargetKind,
  type SelfHostedPooler,
} from '../suite/targets';
import type { TargetRef } from '../suite/types';
import type { TargetCapacity } from '../suite/expand';
import { poolerDeployments } from '../poolers/endpoint';
import { processPoolSize } from '../poolers/pool-size';
import type { LabConfig } from './types';

/** What `labTargets` reads of a proxy. */
export interface NamedProxy {
  readonly name: string;
  /**
   * Its endpoints besides the default one, by the kind of their targets (lib/aws/runner-args.ts
   * ProxySpec); each is one more target of the proxy.
   */
  readonly endpoints?: Readonly<Partial<Record<ManagedProxyKind, unknown>>>;
}

/** The kinds of a proxy's endpoints besides its default one, in registry order. */
export function extraEndpointKinds(proxy: NamedProxy): ManagedProxyKind[] {
  return MANAGED_PROXY_KINDS.filter((k) => k !== 'rds-proxy' && proxy.endpoints?.[k] !== undefined);
}

/**
 * What `labTargets` reads of a self-hosted pooler: its name, pool modes and product — `kind` in the
 * lab file's pooler (lib/config/types.ts PoolerConfig), `product` in its stack output
 * (lib/poolers/endpoint.ts PoolerEndpoint).
 */
export type PoolerModes = {
  readonly name: string;
  readonly poolModes: readonly PoolMode[];
} & ({ readonly product: SelfHostedPooler } | { readonly kind: SelfHostedPooler });

/** The product of a lab-file pooler (`kind`) or of a deployed one (`product`). */
export function poolerProduct(pooler: PoolerModes): SelfHostedPooler {
  return 'product' in pooler ? pooler.product : pooler.kind;
}

export type LabTarget<P extends NamedProxy = NamedProxy, Q extends PoolerModes = PoolerModes> =
  | { readonly ref: TargetRef; readonly role: 'writer' }
  | { readonly ref: TargetRef; readonly role: 'proxy'; readonly proxy: P }
  | {
      readonly ref: TargetRef;
      readonly role: 'pooler';
      readonly pooler: Q;
      readonly mode: PoolMode;
    };

/** A pooler's targets: one per pool mode, named `<pooler>-<mode>`, of its product's kinds. */
export function poolerTargets<Q extends PoolerModes>(
  pooler: Q,
): Array<Extract<LabTarget<NamedProxy, Q>, { role: 'pooler' }>> {
  return pooler.poolModes.map((mode) => ({
    ref: poolerTarget(poolerProduct(pooler), pooler.name, mode),
    role: 'pooler' as const,
    pooler,
    mode,
  }));
}

/**
 * Every target of a lab, in the order runs list them: `direct`, the proxies, the poolers' pools.
 * `proxyKind`: what the proxies are (`rds-proxy`; a test stands a local PgBouncer in for them).
 */
export function labTargets<P extends NamedProxy, Q extends PoolerModes>(
  lab: { readonly proxies: readonly P[]; readonly poolers: readonly Q[] },
  proxyKind: ProxyTargetKind = 'rds-proxy',
): Array<LabTarget<P, Q>> {
  return [
    { ref: directTarget(), role: 'writer' },
    ...lab.proxies.flatMap((proxy) =>
      [
        proxyKind === 'rds-proxy' ? managedProxyTarget(proxy.name) : { kind: proxyKind, name: proxy.name },
        ...extraEndpointKinds(proxy).map((kind) => managedProxyTarget(proxy.name, kind)),
      ].map((ref) => ({ ref, role: 'proxy' as const, proxy })),
    ),
    ...lab.poolers.flatMap((pooler) => poolerTargets(pooler)),
  ];
}

/**
 * The targets the runners will measure on `lab`, with the capacities expansion needs: the writer,
 * every proxy and every pooler × pool mode, sized as the runner sizes them (lib/runner/runner.ts,
 * with PoolerTarget.poolSize) against `maxConnections` — the one figure the lab's plan, `deploy`'s
 * runner check and the cost of a run share (lib/cost/guards.ts `labMaxConnections`).
 */
export function labTargetCapacities(lab: LabConfig, maxConnections: number): TargetCapacity[] {
  return labTargets(lab).map((t): TargetCapacity => {
    switch (t.role) {
      case 'writer':
        return {
          ref: t.ref,
          descriptor: describeTarget(t.ref, { version: lab.database.engineVersion }),
          maxConnections,
          poolSize: null,
        };
      case 'proxy':
        return {
          ref: t.ref,
          descriptor: describeTarget(t.ref, { version: null }),
          maxConnections,
          poolSize: Math.floor((maxConnections * t.proxy.maxConnectionsPercent) / 100),
        };
      case 'pooler': {
        const p = t.pooler;
        const sharedBy = poolerDeployments(p.placement, lab.runners.count);
        const poolSize =
          processPoolSize(p.poolPercent, maxConnections, p.processes, sharedBy) * p.processes * sharedBy;
        // As the lab pins it (the runner probes the real one): release, setting, placement, processes.
        const descriptor = describeTarget(t.ref, {
          version: p.version,
          maxPreparedStatements: p.maxPreparedStatements,
          placement: p.placement === 'dedicated' ? 'dedicated-host' : 'co-located',
          processes: p.processes,
        });
        return { ref: t.ref, descriptor, maxConnections, poolSize };
      }
    }
  });
}
