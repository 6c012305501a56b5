/**
 * The session-state probe runner of `proxylab local` (lib/exec/session-probe.ts sessionProbeRunner):
 * for a PgBouncer target the pool is narrowed to ONE server connection for the step
 * (`default_pool_size = 1` and `max_user_connections = 1` on every process's admin console — the
 * probe's user is the only one) and put back afterwards, and every feature starts on a reset pool
 * (KILL + RESUME), so one feature's state never meets the next. Direct needs nothing: each client is
 * its own session. Setup (the SET ROLE feature's roles) and NOTIFY go through the local superuser on
 * the server itself.
 */
import type { ProbeRunner } from '../engine/ports';
import type { PsqlTarget } from '../exec/psql';
import { sessionProbeRunner } from '../exec/session-probe';

/** What the runner needs of the local stack. */
export interface SessionProbeStack {
  readonly pgbouncer: {
    readonly processes: readonly unknown[];
    poolSize(): number;
    setPoolSize(size: number): Promise<void>;
    reset(): Promise<void>;
  };
  readonly postgres: { superuserTarget(dbname?: string): PsqlTarget };
}

export function localSessionProbeRunner(
  stack: SessionProbeStack,
  dbname: string,
): ProbeRunner<'session-state'> {
  const su = stack.postgres.superuserTarget(dbname);
  const pgb = stack.pgbouncer;
  return sessionProbeRunner({
    admin: { host: su.host, port: su.port, user: su.user, dbname, sslmode: 'disable', env: {} },
    share: async (step) => {
      if (!step.descriptor.capabilities.pooled)
        return { sharing: 'none needed: each client is its own session on the server' };
      const before = pgb.poolSize();
      const n = pgb.processes.length;
      await pgb.setPoolSize(1);
      return {
        sharing:
          'PgBouncer default_pool_size = 1 and max_user_connections = 1 for the step' +
          (n > 1 ? ` on each of ${n} processes (clients may land on different ones)` : '') +
          '; the pool reset before each feature',
        beforeEach: () => pgb.reset(),
        restore: async () => {
          if (pgb.poolSize() !== before) await pgb.setPoolSize(before);
        },
      };
    },
  });
}
