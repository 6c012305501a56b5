/**
 * PgDoorman for the integration tests that start a real one, found the way `proxylab local` finds
 * it ($PROXYLAB_PGDOORMAN, PATH, the usual places). PgDoorman is on no package registry this
 * machine reaches (not crates.io, not Debian), so these tests are the one announced exception to
 * "nothing is skipped": without a binary, describeWithPgdoorman's tests do not run, and
 * scripts/preflight.ts and `npm test` print one line naming each such file and why (the preflight
 * finds them by this helper's name). Its config, admin parsing, driver and host code keep their
 * unit and CDK tests either way.
 */
import { findPoolerBinary } from '../../lib/local/binaries';
import { pgdoormanDriver } from '../../lib/poolers/pgdoorman/driver';

export interface FoundPgdoorman {
  readonly file: string;
  readonly version: string;
}

/**
 * jest's describe over `body` when a PgDoorman binary is given; describe.skip otherwise (its title
 * says why). `body` gets the binary (a placeholder with '' fields when none: only the skipped
 * tests' definitions read it).
 */
export function describeWithPgdoorman(neededBy: string, body: (bin: FoundPgdoorman) => void): void {
  const found = findPoolerBinary(pgdoormanDriver);
  if (found !== null) {
    describe(`${neededBy} (PgDoorman ${found.version}: ${found.file})`, () => body(found));
    return;
  }
  describe.skip(
    `${neededBy} — not run: no PgDoorman binary ($${pgdoormanDriver.localBinary.envVar}, PATH); ` +
      'PgDoorman is on no package registry this machine reaches',
    () => body({ file: '', version: '' }),
  );
}
