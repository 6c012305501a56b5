/** The lab's self-hosted poolers as one runner sets them up before a run (./runner.ts, phase 2). */
import { InfrastructureError, UsageError } from '../core/errors';
import type { RunnerArgs } from '../aws/runner-args';
import { poolerTargets } from '../config/targets';
import { readAdminCredentials, type AdminCredentials, type DbCredentials, type Logger } from '../aws/secrets';
import { controlKey } from '../poolers/control';
import type { PoolerRollDeps } from './pooler-roll';
import type { WriterInfo } from './targets';
import { fetchPoolerCpu } from '../aws/pooler-agent-client';
import {
  buildPoolerTargets,
  PoolerPoolControl,
  poolerAdminPort,
  probePooler,
  psqlAdminRows,
  type PoolerProbe,
  type PoolerTarget,
} from './pooler-targets';
import { PoolerMetrics, PoolerSampler } from '../engine/pooler-metrics';
import type { PoolerEndpoint } from '../poolers/endpoint';
import { poolerDriver } from '../poolers/registry';
import type { RunnerDeps } from './runner-deps';

export interface RunnerPoolers {
  readonly targets: PoolerTarget[];
  readonly control: PoolerPoolControl | null;
  readonly sampler: PoolerSampler | null;
  readonly maxPreparedStatements: number | null;
}

/**
 * The lab's self-hosted poolers (PgBouncer, PgDoorman) on this runner: admin secret, probe (version,
 * max_prepared_statements) of each pooler through process 0's admin console, its targets, its pool
 * control and its sampler. A dedicated host is changed and sampled by runner 0 only; an on-runners
 * pooler by every runner (its own, at 127.0.0.1).
 */
export async function setUpPoolers(
  args: RunnerArgs,
  deps: RunnerDeps,
  credentials: DbCredentials,
  writer: WriterInfo,
  secrets: string[],
  log: Logger,
  me: string,
): Promise<RunnerPoolers> {
  if (args.poolers.length === 0)
    return { targets: [], control: null, sampler: null, maxPreparedStatements: null };
  if (args.poolerAdminSecretArn === null)
    throw new UsageError('the lab has self-hosted poolers but no PoolerAdminSecretArn output; redeploy');
  const admin = await readAdminCredentials(deps.secrets, args.poolerAdminSecretArn);
  secrets.push(admin.password, JSON.stringify(admin.password).slice(1, -1));
  const query = deps.adminQuery ?? psqlAdminRows();
  const probes = new Map<string, PoolerProbe>();
  for (const p of args.poolers) {
    const probe = await probePooler(p, admin, query).catch((err: unknown) => {
      throw new InfrastructureError(
        `${me}: pooler ${p.name} (${p.host}:${p.adminPorts[0] ?? '?'}) did not answer on its admin console: ${err instanceof Error ? err.message : String(err)}`,
      );
    });
    probes.set(p.name, probe);
    log.info(
      `${me}: pooler ${p.name} (${p.placement}, ${p.processes} process(es)): ${poolerDriver(p.product).displayName} ${probe.version ?? 'unknown'}, max_prepared_statements ${probe.maxPreparedStatements ?? 'none'}`,
    );
  }
  const applies = (p: PoolerEndpoint): boolean => p.placement === 'on-runners' || args.runnerIndex === 0;
  const control = new PoolerPoolControl({
    poolers: args.poolers,
    admin,
    query,
    maxConnections: () => writer.maxConnections(),
    dbname: credentials.dbname,
    applies,
    initialMaxPreparedStatements: (name) => probes.get(name)?.maxPreparedStatements ?? null,
    runnerCount: args.runnerCount,
    log: (l) => log.info(`${me}: ${l}`),
  });
  const targets = buildPoolerTargets({
    poolers: args.poolers,
    probes,
    credentials,
    writer,
    poolPercent: (name) => control.currentPercent(name),
    runnerCount: args.runnerCount,
  });
  const sampled = args.poolers.filter(applies).map(
    (p) =>
      new PoolerMetrics({
        pooler: p.name,
        admin: poolerAdminPort(p, admin, query),
        product: p.product,
        stats: poolerDriver(p.product).stats,
        cpu: () => fetchPoolerCpu(p.host, p.statsPort),
        pools: Object.fromEntries(
          p.poolModes.map((m) => [poolerDriver(p.product).poolDatabaseAlias(credentials.dbname, m), m]),
        ),
        targets: poolerTargets(p).map((t) => t.ref.name),
      }),
  );
  const first = args.poolers[0];
  return {
    targets,
    control,
    sampler: sampled.length > 0 ? new PoolerSampler(sampled, deps.poolerSampleMs ?? 2000) : null,
    maxPreparedStatements: first ? (probes.get(first.name)?.maxPreparedStatements ?? null) : null,
  };
}

/**
 * What `pooler-restart` needs on this lab (./pooler-roll.ts): the poolers and each one's control
 * key, derived from the pooler admin secret when the group asks (read once; never logged).
 */
export function poolerRollOf(args: RunnerArgs, deps: RunnerDeps): { poolerRoll?: PoolerRollDeps } {
  const arn = args.poolerAdminSecretArn;
  if (args.poolers.length === 0 || arn === null) return {};
  let admin: Promise<AdminCredentials> | null = null;
  return {
    poolerRoll: {
      poolers: args.poolers,
      key: async (p) =>
        controlKey((await (admin ??= readAdminCredentials(deps.secrets, arn))).password, p.name),
    },
  };
}
