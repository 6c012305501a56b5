/**
 * Phase 4 of a local run (./run-local.ts): the throwaway PostgreSQL and the run's poolers started,
 * with a line saying what starts and one saying what runs where.
 */
import { totalPoolSize, processPoolSize } from '../poolers/pool-size';
import { poolerDriver } from '../poolers/registry';
import type { TargetPrice } from '../suite/types';
import type { LocalPoolerSpec } from './pooler';
import type { RunStopper } from './run-stopper';
import { startLocalStack, type LocalStack } from './stack';

/** What starting the stack reads of the run's options. */
export interface StackRunOptions {
  readonly maxConnections: number;
  readonly poolPercent: number;
  readonly poolerProcesses: number;
  readonly poolers: readonly LocalPoolerSpec[];
  readonly superuserReservedConnections: number;
  readonly install: boolean;
  readonly dataTemplate: string | null;
  /** `--price-region`'s prices for the run's environment; null: not priced. */
  readonly targetPrices: readonly TargetPrice[] | null;
}

/** Phase 4: the throwaway PostgreSQL + PgBouncer; an interrupt while they start is the run's end. */
export async function startStack(
  opts: StackRunOptions,
  log: (line: string) => void,
  stopper: RunStopper,
): Promise<LocalStack> {
  const pool = `pools of ${totalPoolSize(opts.poolPercent, opts.maxConnections)} = ${opts.poolPercent} %`;
  const what = opts.poolers.map((p) => {
    const name = `${poolerDriver(p.product).displayName}${p.instance !== p.product ? ` ${p.instance}` : ''}`;
    const split =
      p.processes > 1
        ? `${p.processes} processes of ${processPoolSize(opts.poolPercent, opts.maxConnections, p.processes)} each`
        : '';
    return opts.poolers.length === 1
      ? `${name} (${pool}${split ? `, ${split}` : ''})`
      : split
        ? `${name} (${split})`
        : name;
  });
  log(
    `Starting PostgreSQL (max_connections ${opts.maxConnections}) and ${what.join(', ') || 'no pooler'}${opts.poolers.length > 1 ? ` (${pool} each)` : ''}…`,
  );
  let stack: LocalStack;
  try {
    stack = await startLocalStack({
      maxConnections: opts.maxConnections,
      poolPercent: opts.poolPercent,
      poolerProcesses: opts.poolerProcesses,
      poolers: opts.poolers,
      superuserReservedConnections: opts.superuserReservedConnections,
      install: opts.install,
      dataTemplate: opts.dataTemplate,
      targetPrices: opts.targetPrices,
      log,
    });
  } catch (e) {
    // Ctrl-C on a terminal reaches initdb / pg_ctl too, which then fail: that is the interrupt.
    if (stopper.interruptedBy !== null) throw stopper.interrupted(e);
    throw e;
  }
  log(
    `  PostgreSQL ${stack.postgres.serverVersion} on 127.0.0.1:${stack.postgres.port}, ${stack.poolers.map(poolerLine).join(', ') || 'no pooler'}` +
      `${stack.runAs ? ` (as OS user ${stack.runAs.user})` : ''}, files in ${stack.baseDir}`,
  );
  return stack;
}

/** `PgBouncer 1.25.2 on 127.0.0.1:24914 (2 processes, so_reuseport)`, `PgDoorman 3.10.7 on … (2 worker threads)`. */
function poolerLine(p: LocalStack['poolers'][number]): string {
  const name = `${poolerDriver(p.product).displayName}${p.instance !== p.product ? ` ${p.instance}` : ''}`;
  const head = `${name} ${p.version} on 127.0.0.1:${p.port}`;
  if (p.workerThreads !== null) return `${head} (${p.workerThreads} worker threads)`;
  return p.processes.length > 1 ? `${head} (${p.processes.length} processes, so_reuseport)` : head;
}
