/**
 * SHOW POOLS / SHOW STATS in PgBouncer's columns, which PgDoorman's admin console answers with too
 * (its SHOW POOLS: database, user, cl_active, cl_waiting, sv_active, sv_idle, sv_used, sv_login,
 * maxwait in seconds plus maxwait_us; its SHOW STATS: total_xact_count, total_wait_time in µs —
 * src/stats/pool.rs and src/stats/address.rs at v3.10.7, checked against the 3.10.7 binary). One
 * parser for every product whose console speaks them, into the one PoolSample shape.
 *
 * Pure (no I/O).
 */
import { numericCell as num } from '../core/psql-text';
import type { AdminRow, PoolSample } from './driver';
import { POOL_GAUGES } from './driver';

/**
 * SHOW POOLS / SHOW STATS of every process, summed per database: gauges add up, maxwait is the
 * longest of any process, counters add up (null when any process lacks the column).
 */
export function parsePoolsAndStats(
  perProcess: readonly (readonly (readonly AdminRow[])[])[],
  databases: readonly string[],
): PoolSample[] {
  const pools = perProcess.flatMap((a) => a[0] ?? []);
  const stats = perProcess.flatMap((a) => a[1] ?? []);
  return databases.map((db) => {
    // A pool appears in SHOW POOLS only once used; before that every gauge is truly 0.
    const rows = pools.filter((r) => r.database === db);
    const gauges: Record<string, number> = {};
    for (const g of POOL_GAUGES)
      gauges[g] = rows
        .map((r) => num(r[g]))
        .filter((v): v is number => v !== null)
        .reduce((a, b) => a + b, 0);
    const waits = rows.map((r) => (num(r.maxwait) ?? 0) * 1000 + (num(r.maxwait_us) ?? 0) / 1000);
    const st = stats.filter((r) => r.database === db);
    const sum = (col: string): number | null => {
      const vs = st.map((r) => num(r[col]));
      if (vs.length === 0 || vs.some((v) => v === null)) return null;
      return (vs as number[]).reduce((a, b) => a + b, 0);
    };
    return {
      database: db,
      gauges,
      maxWaitMs: waits.length ? Math.max(...waits) : 0,
      transactions: sum('total_xact_count'),
      waitTimeUs: sum('total_wait_time'),
    };
  });
}
