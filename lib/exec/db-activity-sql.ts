/**
 * The database sampler's one statement (issue 40, item 1), run once a second on the session that
 * already counts server connections (./server-connections.ts): pg_stat_activity's client backends
 * (the sampler's own excluded) by state, the wait events of those not idle, the oldest transaction
 * and query, pg_locks' waiting and held counts, and the backend blocking the most of (at most five)
 * lock waiters by pg_blocking_pids, which PostgreSQL advises against calling often: five per
 * second, only while clients wait on a heavyweight lock. One row, one JSON object, read by
 * lib/suite/db-activity.ts's sampleFromRow. PostgreSQL ≥ 10 (backend_type). `hidden` counts the
 * backends whose state this role may not see (another role's, without pg_read_all_stats): their
 * waits are then unknown, not absent.
 */
export const DB_ACTIVITY_SQL = `WITH a AS (
  SELECT pid, state, wait_event_type, wait_event, application_name,
         extract(epoch FROM now() - xact_start) AS xact_sec,
         extract(epoch FROM now() - query_start) AS query_sec
  FROM pg_stat_activity
  WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
), w AS (
  SELECT wait_event_type AS type, wait_event AS event, count(*) AS count
  FROM a WHERE state IS DISTINCT FROM 'idle' AND wait_event IS NOT NULL
  GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 5
), l AS (
  SELECT count(*) FILTER (WHERE NOT granted) AS waiting, count(*) FILTER (WHERE granted) AS held
  FROM pg_locks WHERE pid IS DISTINCT FROM pg_backend_pid()
), b AS (
  SELECT blocker, count(*) AS blocking
  FROM (SELECT pid FROM a WHERE wait_event_type = 'Lock' LIMIT 5) t, unnest(pg_blocking_pids(t.pid)) AS blocker
  GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1
)
SELECT json_build_object(
  'clients', (SELECT count(*) FROM a),
  'hidden', (SELECT count(*) FROM a WHERE state IS NULL),
  'bench_clients', (SELECT count(*) FROM a WHERE application_name = 'pgbench'),
  'active', (SELECT count(*) FROM a WHERE state = 'active'),
  'idle', (SELECT count(*) FROM a WHERE state = 'idle'),
  'idle_in_transaction', (SELECT count(*) FROM a WHERE state LIKE 'idle in transaction%'),
  'waits', (SELECT coalesce(json_agg(w), '[]'::json) FROM w),
  'locks_waiting', (SELECT waiting FROM l),
  'locks_held', (SELECT held FROM l),
  'oldest_xact_sec', (SELECT max(xact_sec) FROM a),
  'oldest_query_sec', (SELECT max(query_sec) FROM a WHERE state = 'active'),
  'blocker', (SELECT json_build_object(
      'pid', b.blocker, 'state', s.state, 'backend_type', s.backend_type,
      'application_name', s.application_name,
      'state_sec', extract(epoch FROM now() - s.state_change),
      'xact_sec', extract(epoch FROM now() - s.xact_start), 'blocking', b.blocking)
    FROM b LEFT JOIN pg_stat_activity s ON s.pid = b.blocker)
) AS sample`;
