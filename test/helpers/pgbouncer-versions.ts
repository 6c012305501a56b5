/**
 * The two PgBouncers the integration tests run against, found the way the preflight finds them
 * (scripts/preflight.ts): Debian's 1.18 (no max_prepared_statements) and a current one, ≥ 1.21
 * ($PROXYLAB_PGBOUNCER_MODERN, the preflight's build of Debian's source package in the per-user
 * cache — 1.24.1 —, or a ≥ 1.21 on PATH). A missing one fails the test that needs it with this
 * message; nothing is skipped.
 *
 * A test's expectations follow what the version it got can do (lib/poolers/pgbouncer's capability
 * checks: max_prepared_statements since 1.21, SIGTERM's super-safe shutdown since 1.23, …), never
 * one version's number written down.
 *
 * pgbouncerModern() and pgbouncer118() are the ONLY way a test gets either: the preflight finds the
 * tests that need them by these names (called from a test file or a jest setup file, never from
 * another helper), and test/unit/preflight.test.ts fails on any other route.
 */
import * as path from 'node:path';
import {
  findPgbouncer118,
  findPgbouncerModern,
  PGBOUNCER_1_18_ENV,
  PGBOUNCER_MODERN_ENV,
} from '../../scripts/preflight';
import { cachedPgbouncer, DEBIAN_PGBOUNCER } from '../../scripts/pgbouncer-cache';

/** A current PgBouncer (≥ 1.21): its absolute path and the version it reports (`1.24.1`). */
export interface FoundPgbouncer {
  readonly file: string;
  readonly version: string;
}

/** A PgBouncer ≥ 1.21 and its version; throws a message naming who needs it and where to get it. */
export function pgbouncerModern(neededBy: string): FoundPgbouncer {
  const found = findPgbouncerModern();
  if (found !== null) return found;
  throw new Error(
    `No PgBouncer ≥ 1.21 found (${PGBOUNCER_MODERN_ENV}, ${cachedPgbouncer(DEBIAN_PGBOUNCER.upstreamVersion)}, PATH). ` +
      `${neededBy} needs it (prepared statements through a transaction pool with max_prepared_statements). ` +
      `\`npm run preflight\` builds Debian's source package of PgBouncer ${DEBIAN_PGBOUNCER.upstreamVersion} into ` +
      `that cache (or says why it cannot); else point ${PGBOUNCER_MODERN_ENV} at a PgBouncer ≥ 1.21.`,
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
