/**
 * The session-state probe runner of `proxylab local` (ProbeRunner 'session-state', lib/engine/ports.ts):
 * each step runs every feature's two-client program (lib/exec/session-probe.ts) on its target.
 *
 * Sharing a server connection: for a PgBouncer target the pool is narrowed to ONE server connection
 * for the step (`default_pool_size = 1` and `max_user_connections = 1` on every process's admin
 * console — the probe's user is the only one) and put back afterwards, and every feature starts on
 * a reset pool (KILL + RESUME), so one feature's state never meets the next. Direct needs nothing:
 * each client is its own session. Setup (the SET ROLE feature's roles) and NOTIFY go through the
 * local superuser on the server itself.
 */
import { InfrastructureError } from '../core/errors';
import type { ProbeRunner, ProbeStepOutcome } from '../engine/ports';
import { runSessionState } from '../exec/session-probe';
import { describeSessionResult, judgeSession, type SessionStateResult } from '../suite/session-state';
import type { ConnectionInfo } from '../suite/types';
import type { PsqlTarget } from '../exec/psql';

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

/** key1 of the probe's advisory locks: from the run id, so two runs on one server never wait on each other. */
export function lockKeyOf(runId: string): number {
  let h = 0;
  for (const ch of runId) h = (Math.imul(h, 31) + ch.charCodeAt(0)) | 0;
  return (Math.abs(h) % 2_000_000_000) + 1;
}

/** A transcript of a step: one line per feature, then its statements (stored as the step's .stdout). */
export function sessionTranscript(r: SessionStateResult): string {
  const lines = [`order: ${r.order}; sharing: ${r.sharing}`];
  for (const f of r.features) {
    const v = judgeSession(f.expected, f);
    lines.push(
      `${v.held === true ? '✓' : v.held === false ? '✗' : '–'} ${f.feature}: ${describeSessionResult(f)}`,
    );
    lines.push(`    expected: ${v.expected}`);
    for (const s of f.steps)
      lines.push(
        `    ${s.client} ${s.kind}${s.role ? ` (${s.role})` : ''}: ${s.sql}` +
          `${s.backendPid !== null ? ` [pid ${s.backendPid}]` : ''}` +
          `${s.present !== null ? ` → ${s.present ? 'present' : 'absent'} (${s.value ?? 'null'})` : ''}` +
          `${s.error !== null ? ` → ${s.sqlstate ?? 'error'}: ${s.error}` : ''}`,
      );
  }
  return `${lines.join('\n')}\n`;
}

export function localSessionProbeRunner(
  stack: SessionProbeStack,
  dbname: string,
): ProbeRunner<'session-state'> {
  const su = stack.postgres.superuserTarget(dbname);
  const admin: ConnectionInfo = {
    host: su.host,
    port: su.port,
    user: su.user,
    dbname,
    sslmode: 'disable',
    env: {},
  };
  return {
    async run(run) {
      const outcomes: Array<ProbeStepOutcome<'session-state'>> = [];
      for (const step of run.steps) {
        const startedAt = run.clock.now().toISOString();
        const target = run.targets.get(step.target.name);
        if (!target)
          throw new InfrastructureError(`session probe: no target ${step.target.name} in this run`);
        const pooler = step.descriptor.capabilities.pooled;
        const before = stack.pgbouncer.poolSize();
        const processes = stack.pgbouncer.processes.length;
        const sharing = pooler
          ? `PgBouncer default_pool_size = 1 and max_user_connections = 1 for the step${processes > 1 ? ` on each of ${processes} processes (clients may land on different ones)` : ''}; the pool reset before each feature`
          : 'none needed: each client is its own session on the server';
        try {
          if (pooler) await stack.pgbouncer.setPoolSize(1);
          const result = await runSessionState(
            { target: target.connection(), admin },
            {
              features: run.spec.features,
              descriptor: step.descriptor,
              sharing,
              lockKey: lockKeyOf(run.runId),
              clock: run.clock,
              signal: run.signal,
              metricPeriodSec: run.spec.pinPeriodSec,
              ...(pooler ? { beforeEach: () => stack.pgbouncer.reset() } : {}),
            },
          );
          const complete = result.features.length === run.spec.features.length;
          outcomes.push({
            stepId: step.stepId,
            status: complete ? 'completed' : 'timeout',
            result,
            startedAt,
            endedAt: run.clock.now().toISOString(),
            transcript: sessionTranscript(result),
            ...(complete
              ? {}
              : { note: `stopped after ${result.features.length} of ${run.spec.features.length} features` }),
          });
        } catch (e) {
          if (!(e instanceof InfrastructureError)) throw e;
          outcomes.push({
            stepId: step.stepId,
            status: 'infrastructure-error',
            result: null,
            startedAt,
            endedAt: run.clock.now().toISOString(),
            transcript: '',
            note: e.message,
          });
        } finally {
          if (pooler && stack.pgbouncer.poolSize() !== before) await stack.pgbouncer.setPoolSize(before);
        }
      }
      return outcomes;
    },
  };
}
