/**
 * The two PgBouncers the integration tests run against, found the way the preflight finds them
 * (scripts/preflight.ts): Debian's 1.18 (no max_prepared_statements) and 1.25.2
 * ($PROXYLAB_PGBOUNCER_1_25, ../shared/tools, the preflight's build in the per-user cache, or a 1.25
 * on PATH). A missing one fails the test that needs it with this message; nothing is skipped.
 *
 * pgbouncer125() and pgbouncer118() are the ONLY way a test gets either: the preflight finds the
 * tests that need them by these names (called from a test file or a jest setup file, never from
 * another helper), and test/unit/preflight.test.ts fails on any other route.
 */
import * as path from 'node:path';
import {
  findPgbouncer118,
  findPgbouncer125,
  PGBOUNCER_1_18_ENV,
  PGBOUNCER_1_25_ENV,
} from '../../scripts/preflight';
import { cachedPgbouncer } from '../../scripts/pgbouncer-cache';

/** Absolute path of PgBouncer 1.25.x; throws a message naming who needs it and where to get it. */
export function pgbouncer125(neededBy: string): string {
  const file = findPgbouncer125();
  if (file !== null) return file;
  throw new Error(
    `PgBouncer 1.25.2 not found (${PGBOUNCER_1_25_ENV}, ../shared/tools/pgbouncer-1.25.2/pgbouncer, ` +
      `${cachedPgbouncer()}, PATH). ${neededBy} needs it (prepared statements through a transaction pool ` +
      `with max_prepared_statements 0 and on). \`npm run preflight\` builds the pinned release into that cache ` +
      `(or says why it cannot); else point ${PGBOUNCER_1_25_ENV} at a 1.25.x binary or put its directory first in PATH.`,
  );
}

/** Absolute path of PgBouncer 1.18.x (Debian 12's package); throws naming who needs it. */
export function pgbouncer118(neededBy: string): string {
  const file = findPgbouncer118();
  if (file !== null) return file;
  throw new Error(
    `PgBouncer 1.18 not found (${PGBOUNCER_1_18_ENV}, PATH, /usr/sbin). ${neededBy} needs it (the behaviour ` +
      `without max_prepared_statements). Debian 12: apt-get install pgbouncer; elsewhere set ${PGBOUNCER_1_18_ENV}.`,
  );
}

/**
 * Environment that makes proxylab run `bin`: $PROXYLAB_PGBOUNCER (which proxylab reads before PATH)
 * and its directory first on PATH.
 */
export function envWithPgbouncer(bin: string): Record<string, string> {
  return {
    PROXYLAB_PGBOUNCER: bin,
    PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH ?? ''}`,
  };
}
