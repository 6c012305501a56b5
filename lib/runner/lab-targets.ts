/**
 * Phases 1 to 3 of the cloud runner (./runner.ts): the DB secret, the lab's targets as this runner
 * reaches them with one pool control over all of them, and what the probes of them found.
 */
import { UsageError } from '../core/errors';
import type { PoolControl, Target } from '../engine/ports';
import type { TargetCapacity } from '../suite/expand';
import { NoopPoolControl, RdsProxyPoolControl } from './proxy-pool';
import type { PoolPercents, RunnerArgs } from '../aws/runner-args';
import { readDbCredentials, type DbCredentials, type Logger } from '../aws/secrets';
import { buildCloudTargets, type WriterInfo } from './targets';
import { CompositePoolControl } from './pooler-targets';
import type { RunnerDeps } from './runner-deps';
import { setUpPoolers, type RunnerPoolers } from './runner-poolers';

/** Phase 1: the DB secret, its password (as written and as inside a JSON string) added to what is scrubbed. */
export async function readDbSecret(
  args: RunnerArgs,
  deps: RunnerDeps,
  secrets: string[],
): Promise<DbCredentials> {
  const credentials = await readDbCredentials(deps.secrets, args.secretArn);
  // the password as written in text, and as it appears inside a JSON string (quotes, backslashes)
  const jsonForm = JSON.stringify(credentials.password).slice(1, -1);
  secrets.push(...new Set([jsonForm, credentials.password]));
  return credentials;
}

/** Pool control of this runner: only runner 0 touches the proxies. */
function poolControlFor(
  args: RunnerArgs,
  deps: RunnerDeps,
  log: Logger,
): PoolControl & { currentPercent(name: string): PoolPercents | null } {
  const labValues: Record<string, PoolPercents> = {};
  for (const p of args.proxies) if (p.lab) labValues[p.name] = p.lab;
  if (args.poolControl && args.runnerIndex === 0) {
    return new RdsProxyPoolControl(deps.rds, {
      proxyNames: Object.fromEntries(args.proxies.map((p) => [p.name, p.dbProxyName])),
      labValues,
      clock: deps.clock,
      ...(deps.pollMs !== undefined ? { pollIntervalMs: deps.pollMs } : {}),
      log: (l) => log.info(l),
    });
  }
  const noop = new NoopPoolControl();
  const refuse = !args.poolControl;
  return {
    reset: () => noop.reset(),
    restore: () => noop.restore(),
    setPoolPercent: (target, percent) => {
      if (refuse) {
        return Promise.reject(
          new UsageError(
            `pool sweep (${target.name} → ${percent} %) needs pool control; this runner was started with --no-pool-control`,
          ),
        );
      }
      // runners other than 0: runner 0 applies it before it reaches the step barrier
      return Promise.resolve();
    },
    currentPercent: (name) => labValues[name] ?? null,
  };
}

/** The lab's targets as this runner reaches them, and the pool control over all of them. */
export interface LabTargets {
  readonly targets: Target[];
  readonly pool: PoolControl;
  readonly writer: WriterInfo;
  readonly poolers: RunnerPoolers;
}

/**
 * Phase 2: the writer and each proxy as targets, the lab's PgBouncers (probed on their admin
 * consoles: one that does not answer ends the run naming it), and one pool control over both.
 */
export async function connectTargets(
  args: RunnerArgs,
  deps: RunnerDeps,
  credentials: DbCredentials,
  secrets: string[],
  log: Logger,
  me: string,
): Promise<LabTargets> {
  const proxyPool = poolControlFor(args, deps, log);
  const { targets: proxyTargets, writer } = buildCloudTargets({
    credentials,
    writer: args.writerEndpoint,
    proxies: args.proxies,
    sslmode: args.sslmode,
    query: deps.query,
    poolPercent: (name) => proxyPool.currentPercent(name),
    proxyKind: args.proxyTargetKind,
  });
  const poolers = await setUpPoolers(args, deps, credentials, writer, secrets, log, me);
  const pool: PoolControl = poolers.control
    ? new CompositePoolControl(proxyPool, poolers.control)
    : proxyPool;
  return { targets: [...proxyTargets, ...poolers.targets], pool, writer, poolers };
}

/** What the probes found: the writer's max_connections and version, each target's capacity. */
export interface ProbedTargets {
  readonly maxConnections: number;
  /** null when the writer did not say (the run goes on: it is only recorded). */
  readonly serverVersion: string | null;
  readonly capacities: TargetCapacity[];
}

/**
 * Phase 3: what the plan is made against. max_connections must be read (a writer that does not
 * answer ends the run, before anything is planned), and so must each target's pool size (a proxy
 * or pooler whose pool cannot be read likewise); an unknown server version is recorded as null.
 */
export async function probeTargets(
  targets: readonly Target[],
  writer: Pick<WriterInfo, 'maxConnections' | 'serverVersion'>,
  log: Logger,
  me: string,
): Promise<ProbedTargets> {
  const maxConnections = await writer.maxConnections();
  const serverVersion = await writer.serverVersion().catch(() => null);
  log.info(`${me}: max_connections ${maxConnections}, server ${serverVersion ?? 'unknown'}`);
  const capacities: TargetCapacity[] = [];
  for (const t of targets)
    capacities.push({ ref: t.ref, descriptor: t.descriptor, maxConnections, poolSize: await t.poolSize() });
  return { maxConnections, serverVersion, capacities };
}
