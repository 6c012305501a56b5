/**
 * The database engines, named once. A lab deploys one of `DATABASE_ENGINES` (the RDS engine name,
 * as the stack output DatabaseEngine, the run request, the collector event and the runner
 * arguments carry it); a run's results may also say `local` (proxylab local's throwaway
 * PostgreSQL). Every other layer imports these (lib/config re-exports `DatabaseEngine`).
 */

/** Aurora PostgreSQL and RDS for PostgreSQL. */
export const DATABASE_ENGINES = ['aurora-postgresql', 'postgres'] as const;
export type DatabaseEngine = (typeof DATABASE_ENGINES)[number];

/** Each engine in words. */
export const DATABASE_ENGINE_NAMES: Readonly<Record<DatabaseEngine, string>> = {
  'aurora-postgresql': 'Aurora PostgreSQL',
  postgres: 'RDS for PostgreSQL',
};

/** What a run's environment records: a lab's engine, or `local`. */
export const RUN_DATABASE_ENGINES = [...DATABASE_ENGINES, 'local'] as const;
export type RunDatabaseEngine = (typeof RUN_DATABASE_ENGINES)[number];

/** `v` is one of DATABASE_ENGINES. */
export function isDatabaseEngine(v: string): v is DatabaseEngine {
  return (DATABASE_ENGINES as readonly string[]).includes(v);
}
