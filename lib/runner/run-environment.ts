/** What a cloud run records of itself (./runner.ts): its environment, its zones and its settings. */
import * as os from 'node:os';
import type { Target } from '../engine/ports';
import type { ComponentZone, RunEnvironment } from '../suite/types';
import { productVersionLabel } from '../suite/targets';
import type { RunnerArgs } from '../aws/runner-args';
import type { RunnerDeps } from './runner-deps';
import type { LabTargets, ProbedTargets } from './lab-targets';

/** `RDS Proxy (managed, no version)`, `PgBouncer 1.25.2`, or both; null for direct only. */
function poolerVersionOf(targets: readonly Target[]): string | null {
  const names = new Set<string>();
  for (const t of targets) {
    if (t.descriptor?.capabilities.pooled) names.add(productVersionLabel(t.descriptor));
  }
  return names.size > 0 ? [...names].join('; ') : null;
}

/** The run's environment as this runner measured it (recorded in the plan and the manifest). */
export async function cloudEnvironment(
  args: RunnerArgs,
  deps: RunnerDeps,
  lab: LabTargets,
  probed: ProbedTargets,
): Promise<RunEnvironment> {
  return {
    database: args.database ?? null,
    maxConnections: probed.maxConnections,
    serverVersion: probed.serverVersion,
    pgbenchVersion: (await deps.pgbenchVersion?.()) ?? null,
    poolerVersion: poolerVersionOf(lab.targets),
    cpus: deps.cpus ?? os.cpus().length,
    maxPreparedStatements: lab.poolers.maxPreparedStatements,
    zones: runZones(args, (await deps.ownZone?.()) ?? null),
    targetPrices: args.targetPrices ?? null,
  };
}

/**
 * The run's zones: the stack outputs' (carried in the request), with this runner's own from IMDS in
 * place of its `runner-<i>` entry; null when neither says anything.
 */
export function runZones(
  args: Pick<RunnerArgs, 'zones' | 'runnerIndex'>,
  own: string | null,
): ComponentZone[] | null {
  const me = `runner-${args.runnerIndex}`;
  const listed = [...(args.zones ?? [])];
  if (own !== null) {
    const i = listed.findIndex((z) => z.component === me);
    if (i >= 0) listed[i] = { component: me, zone: own };
    else listed.push({ component: me, zone: own });
  }
  return listed.length > 0 ? listed : null;
}

/** The manifest's settings of a cloud run: the lab as the runner saw it. Never credentials. */
export function runSettings(
  args: RunnerArgs,
  suite: string,
  maxConnections: number,
): Readonly<Record<string, unknown>> {
  return {
    suite,
    runnerCount: args.runnerCount,
    writerEndpoint: args.writerEndpoint.host,
    proxies: args.proxies.map((p) => ({
      name: p.name,
      dbProxyName: p.dbProxyName,
      endpoint: p.endpoint.host,
      lab: p.lab,
    })),
    poolers: args.poolers.map((p) => ({
      name: p.name,
      placement: p.placement,
      host: p.host,
      processes: p.processes,
      poolPercent: p.poolPercent,
      version: p.version,
      tls: p.tls,
    })),
    region: args.region,
    sslmode: args.sslmode,
    maxConnections,
  };
}
