/**
 * pgbench's SELECT 1 floor on a target (the disruption probe's `floor.pgbenchSelectP50Ms`), run
 * through a world's PgbenchExecutor; lib/exec/disruption-probe.ts re-exports it.
 */
import type { PgbenchExecutor, Target } from '../engine/ports';
import { summarizeStepLogs } from '../engine/step-logs';
import { buildPgbenchEnv } from '../suite/argv';

/** SELECT 1 transactions of pgbench's floor run. */
const PGBENCH_FLOOR_TRANSACTIONS = 200;

/**
 * pgbench's SELECT 1 p50 on a target (ms): one client, extended protocol, per-transaction log, run
 * through the world's pgbench executor (the local stack's, the runner's). null when pgbench failed.
 */
export async function pgbenchSelectFloor(executor: PgbenchExecutor, target: Target): Promise<number | null> {
  const conn = target.connection();
  const dir = await executor.workDir(`floor-${target.ref.name}`);
  try {
    const out = await executor.run({
      argv: [
        'pgbench',
        '-n',
        '-c',
        '1',
        '-j',
        '1',
        '-t',
        String(PGBENCH_FLOOR_TRANSACTIONS),
        '-M',
        'extended',
        '-f',
        `${dir}/select-1.sql`,
        '--log',
        '--log-prefix',
        `${dir}/floor`,
        '-h',
        conn.host,
        '-p',
        String(conn.port),
        '-U',
        conn.user,
        conn.dbname,
      ],
      env: buildPgbenchEnv(conn),
      timeoutMs: 30000,
      logDir: dir,
      files: [{ path: `${dir}/select-1.sql`, content: 'SELECT 1;\n' }],
    });
    if (out.exitCode !== 0) return null;
    return summarizeStepLogs(out.logFiles, { samplingRate: null, throttled: false }).latencyP50Ms;
  } finally {
    await executor.removeWorkDir?.(dir);
  }
}
