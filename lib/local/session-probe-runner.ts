/**
 * The session-state probe runner of `proxylab local` (lib/exec/session-probe.ts sessionProbeRunner):
 * for a pooled target, the pool of THE POOLER BEHIND IT (a local run may start several: PgBouncer
 * with 1 and 2 processes, PgDoorman) is narrowed to ONE server connection for the step — PgBouncer
 * `default_pool_size = 1` and `max_user_connections = 1` on every process's admin console (the
 * probe's user is the only one), PgDoorman `pool_size = 1` by file and RELOAD — and put back
 * afterwards, and every feature starts on a reset pool (PgBouncer KILL + RESUME, PgDoorman
 * RECONNECT), so one feature's state never meets the next. Direct needs nothing: each client is
 * its own session. Setup (the SET ROLE feature's roles) and NOTIFY go through the local superuser on
 * the server itself.
 */
import type { ProbeRunner } from '../engine/ports';
import type { PsqlTarget } from '../exec/psql';
import { sessionProbeRunner } from '../exec/session-probe';
import type { TargetRef } from '../suite/types';
import { poolerDriver } from '../poolers/registry';
import type { LocalPooler } from './pooler';

/** What the runner needs of a local pooler (PgBouncer or PgDoorman: lib/local/pooler.ts). */
export type SessionProbePooler = Pick<
  LocalPooler,
  'product' | 'processes' | 'poolSize' | 'setPoolSize' | 'reset'
>;

/** What the runner needs of the local stack. */
export interface SessionProbeStack {
  /** The pooler behind a target (each local pooler has its own targets); null: direct. */
  poolerFor(target: TargetRef): SessionProbePooler | null;
  readonly postgres: { superuserTarget(dbname?: string): PsqlTarget };
}

export function localSessionProbeRunner(
  stack: SessionProbeStack,
  dbname: string,
): ProbeRunner<'session-state'> {
  const su = stack.postgres.superuserTarget(dbname);
  return sessionProbeRunner({
    admin: { host: su.host, port: su.port, user: su.user, dbname, sslmode: 'disable', env: {} },
    share: async (step) => {
      const pooler = step.descriptor.capabilities.pooled ? stack.poolerFor(step.target) : null;
      if (!pooler) return { sharing: 'none needed: each client is its own session on the server' };
      const driver = poolerDriver(pooler.product);
      const before = pooler.poolSize();
      const n = pooler.processes.length;
      await pooler.setPoolSize(1);
      return {
        sharing:
          `${driver.displayName} ${driver.poolSizeSettings.map((x) => `${x} = 1`).join(' and ')} for the step` +
          (n > 1 ? ` on each of ${n} processes (clients may land on different ones)` : '') +
          '; the pool reset before each feature',
        beforeEach: () => pooler.reset(),
        restore: async () => {
          if (pooler.poolSize() !== before) await pooler.setPoolSize(before);
        },
      };
    },
  });
}
