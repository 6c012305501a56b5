/**
 * What a PgBouncer starts with when its ini leaves a setting alone, by version, for the tests that
 * expect it (the local stack leaves max_prepared_statements at PgBouncer's own default).
 */
import { supportsMaxPreparedStatements } from '../../lib/poolers/pgbouncer/config';
import { PGBOUNCER_MAX_PREPARED_STATEMENTS_ON } from '../../lib/products/pgbouncer/entry';
import { versionAtLeast } from '../../lib/products/version';

/**
 * The first release whose own max_prepared_statements default is on: NEWS.md, 1.24.0, "Enable
 * prepared statement support by default, `max_prepared_statements` is now set to 200 by default"
 * (pgbouncer/pgbouncer#1144). From 1.21, where the setting appeared, to 1.23 it defaults to 0.
 */
export const MAX_PREPARED_STATEMENTS_ON_BY_DEFAULT_SINCE = '1.24';

/** max_prepared_statements as PgBouncer `version` starts with it by default; null: no such setting (< 1.21). */
export function defaultMaxPreparedStatements(version: string): number | null {
  if (!supportsMaxPreparedStatements(version)) return null;
  return versionAtLeast(version, MAX_PREPARED_STATEMENTS_ON_BY_DEFAULT_SINCE)
    ? PGBOUNCER_MAX_PREPARED_STATEMENTS_ON
    : 0;
}
