/**
 * PgDoorman for the integration tests, found the way `proxylab local` and the preflight find it
 * ($PROXYLAB_PGDOORMAN, PATH, the usual places, ../shared/tools/pg_doorman-<version>/; CI has
 * ../shared). A missing one stops `npm test` in scripts/preflight.ts before jest, naming the tests
 * that call this helper; here it fails the test with the same advice (never a skip).
 */
import { findPoolerBinary } from '../../lib/local/binaries';
import { pgdoormanDriver } from '../../lib/poolers/pgdoorman/driver';

/** The PgDoorman binary and its version; throws naming who needs it and how to get it. */
export function pgdoorman(neededBy: string): { file: string; version: string } {
  const found = findPoolerBinary(pgdoormanDriver);
  if (found !== null) return found;
  throw new Error(
    `PgDoorman not found ($PROXYLAB_PGDOORMAN, PATH, ../shared/tools/pg_doorman-*/pg_doorman). ${neededBy} needs it. ` +
      (pgdoormanDriver.localBinary.howToGet ?? []).join('; '),
  );
}
