/**
 * The PgBouncer releases a lab may pin (`poolers[].version`): the upstream release tarball and its
 * SHA-256. The pooler host (and each runner, for `on-runners`) downloads exactly this tarball and
 * refuses to build it unless `sha256sum -c` matches, so a deploy installs the release the lab
 * names, not whatever a distribution ships.
 *
 * Every checksum here is a PUBLISHED one, copied from packaging that pins the same upstream URL —
 * never computed here, never guessed. A release whose checksum we could not find is left out.
 *  - 1.26.0: Homebrew formula `Formula/p/pgbouncer.rb` (homebrew-core, revision 1 of 1.26.0); the same
 *    value is pinned by independent Dockerfiles building from pgbouncer.org.
 *  - 1.25.2: Homebrew formula `Formula/p/pgbouncer.rb` (homebrew-core at 1.25.2); the same value in
 *    several independent builds from https://www.pgbouncer.org/downloads/files/1.25.2/.
 *  - 1.24.1: Homebrew formula `Formula/p/pgbouncer.rb` (homebrew-core at 1.24.1).
 * Checked against the search index on 2026-11-22. To add a release: take its sha256 from such a
 * source (or from the GitHub release page), add it here with the source, and run the tests.
 *
 * Pure data: no I/O (lib/config is read by the CDK app, the CLI and the docs generator).
 */

import type { TarballRelease } from '../driver';

export type PgbouncerRelease = TarballRelease;

const HOMEBREW = 'Homebrew homebrew-core Formula/p/pgbouncer.rb';

function release(version: string, sha256: string, checksumSource: string): PgbouncerRelease {
  return {
    product: 'pgbouncer',
    version,
    url: `https://www.pgbouncer.org/downloads/files/${version}/pgbouncer-${version}.tar.gz`,
    sha256,
    checksumSource,
  };
}

/** Newest first. */
export const PGBOUNCER_RELEASES: readonly PgbouncerRelease[] = [
  release('1.26.0', 'afd25dd61ee6775d37b40629b87ce08736b3e6955f3057bb212e410fbf21c71d', HOMEBREW),
  release('1.25.2', '924ad35113fd0a71c8e2dbe85b5d03445532e2b7b37a9f8a48983beea238b332', HOMEBREW),
  release('1.24.1', 'da72a3aba13072876d055a3e58dd4aba4a5de4ed6148e73033185245598fd3e0', HOMEBREW),
];

/** The release a cloud pooler host gets when the lab names none (the local integration tests run Debian's 1.24.1 build and 1.18). */
export const DEFAULT_PGBOUNCER_VERSION = '1.25.2';

export function findPgbouncerRelease(version: string): PgbouncerRelease | undefined {
  return PGBOUNCER_RELEASES.find((r) => r.version === version);
}
