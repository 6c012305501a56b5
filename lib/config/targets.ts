/**
 * A lab's targets, listed once: the writer (`direct`), one target per RDS Proxy and one per
 * self-hosted pooler × pool mode. The run-duration estimate (lib/operator/run-window.ts) and the
 * runner's targets (lib/runner/targets.ts, lib/runner/pooler-targets.ts, the pooler sampler in
 * lib/runner/runner.ts) all list them through here, so none of them can leave a target out.
 *
 * It takes only what it needs of a lab (proxy names; pooler names and pool modes), so the lab
 * config and the runner's arguments (which carry the same names from the stack outputs) both fit.
 */
import type { PgbouncerPoolMode } from '../poolers/pgbouncer/layout';
import { poolerTargetName } from '../poolers/pgbouncer/layout';
import { fallbackDescriptor, TARGET_KIND_NAMES } from '../suite/targets';
import type { TargetKind, TargetRef } from '../suite/types';

/** What `labTargets` reads of a proxy. */
export interface NamedProxy {
  readonly name: string;
}

/** What `labTargets` reads of a self-hosted pooler. */
export interface PoolerModes {
  readonly name: string;
  readonly poolModes: readonly PgbouncerPoolMode[];
}

export type LabTarget<P extends NamedProxy = NamedProxy, Q extends PoolerModes = PoolerModes> =
  | { readonly ref: TargetRef; readonly role: 'writer' }
  | { readonly ref: TargetRef; readonly role: 'proxy'; readonly proxy: P }
  | {
      readonly ref: TargetRef;
      readonly role: 'pooler';
      readonly pooler: Q;
      readonly mode: PgbouncerPoolMode;
    };

/** The target kind of a PgBouncer pool in `mode`, as the target registry (lib/suite/targets.ts) describes it. */
export function pgbouncerTargetKind(mode: PgbouncerPoolMode): TargetKind {
  const kind = TARGET_KIND_NAMES.find((k) => {
    const d = fallbackDescriptor({ kind: k, name: k });
    return d.pooler === 'pgbouncer' && d.poolMode === mode;
  });
  if (kind === undefined)
    throw new Error(`no target kind for a PgBouncer ${mode} pool in lib/suite/targets.ts (KINDS)`);
  return kind;
}

/** A pooler's targets: one per pool mode, named `<pooler>-<mode>`. */
export function poolerTargets<Q extends PoolerModes>(
  pooler: Q,
): Array<Extract<LabTarget<NamedProxy, Q>, { role: 'pooler' }>> {
  return pooler.poolModes.map((mode) => ({
    ref: { kind: pgbouncerTargetKind(mode), name: poolerTargetName(pooler.name, mode) },
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
  proxyKind: TargetKind = 'rds-proxy',
): Array<LabTarget<P, Q>> {
  return [
    { ref: { kind: 'direct', name: 'direct' }, role: 'writer' },
    ...lab.proxies.map((proxy) => ({
      ref: { kind: proxyKind, name: proxy.name },
      role: 'proxy' as const,
      proxy,
    })),
    ...lab.poolers.flatMap((pooler) => poolerTargets(pooler)),
  ];
}
