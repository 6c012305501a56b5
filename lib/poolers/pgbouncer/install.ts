/**
 * How a pooler host (and each runner, for `on-runners`) installs a pinned PgBouncer release: plain
 * bash lines for the user data (lib/constructs/pooler-user-data.ts runs them before the bootstrap).
 * Pure text, no CDK.
 */
import type { PoolerRelease, PoolerSourceLocation } from '../driver';

/** Prefix the release is installed under: the binary is /usr/local/bin/pgbouncer. */
export const PGBOUNCER_PREFIX = '/usr/local';
export const PGBOUNCER_BIN = `${PGBOUNCER_PREFIX}/bin/pgbouncer`;
/** The system user PgBouncer runs as. */
export const PGBOUNCER_USER = 'pgbouncer';

/**
 * Build packages on AL2023: a C compiler and make, libevent and OpenSSL headers (PgBouncer's
 * configure finds both with pkg-config), tar/gzip for the tarball. PgBouncer's README lists these
 * as its build requirements; c-ares, PAM and systemd are optional and left out.
 */
export const PGBOUNCER_BUILD_PACKAGES: readonly string[] = [
  'gcc',
  'make',
  'libevent-devel',
  'openssl-devel',
  'pkgconf-pkg-config',
  'tar',
  'gzip',
];

/**
 * Download, verify, build and install `release`; create the `pgbouncer` user. Fails (set -e) on a
 * download error, a checksum mismatch, a build error, or a binary that is not this version.
 */
export function pgbouncerInstallCommands(
  release: PoolerRelease,
  source: PoolerSourceLocation = { kind: 'upstream' },
): string[] {
  if (release.sha256 === undefined)
    throw new Error(`PgBouncer releases are tarballs pinned by SHA-256: ${JSON.stringify(release)}`);
  const { version, url, sha256 } = release;
  // The values come from lib/poolers/pgbouncer/releases.ts (digits, dots, hex, a fixed URL): safe in
  // single quotes, checked here so a bad table entry cannot inject shell.
  if (!/^\d+\.\d+\.\d+$/.test(version) || !/^[0-9a-f]{64}$/.test(sha256) || !/^https:\/\/[\w./-]+$/.test(url))
    throw new Error(`PgBouncer release entry is malformed: ${JSON.stringify(release)}`);
  // An S3 URI may carry CDK tokens (`${Token[…]}`, rendered into the bucket name at synth): no quotes or spaces.
  if (source.kind === 's3' && !/^s3:\/\/[^\s'"]+$/.test(source.uri))
    throw new Error(`PgBouncer source URI is malformed: ${JSON.stringify(source.uri)}`);
  const tarball = `pgbouncer-${version}.tar.gz`;
  const fetch =
    source.kind === 'upstream'
      ? `curl --fail --silent --show-error --location --retry 5 --retry-delay 5 --output "\${pgbouncer_src}/${tarball}" '${url}'`
      : // the copy `proxylab deploy` staged (the same bytes: it checked the published SHA-256 first), through the S3 gateway endpoint
        `aws s3 cp '${source.uri}' "\${pgbouncer_src}/${tarball}"`;
  return [
    `# PgBouncer ${version} from ${source.kind === 'upstream' ? 'the upstream release' : 'the staged copy of the upstream release'}; its published SHA-256 is checked before anything is built`,
    `dnf install -y ${PGBOUNCER_BUILD_PACKAGES.join(' ')}`,
    'pgbouncer_src=$(mktemp -d)',
    fetch,
    `echo '${sha256}  ${tarball}' > "\${pgbouncer_src}/SHA256SUMS"`,
    '(cd "${pgbouncer_src}" && sha256sum -c --strict SHA256SUMS)',
    `tar -xzf "\${pgbouncer_src}/${tarball}" -C "\${pgbouncer_src}"`,
    `(cd "\${pgbouncer_src}/pgbouncer-${version}" && ./configure --prefix=${PGBOUNCER_PREFIX} && make -j"$(nproc)" && make install)`,
    `${PGBOUNCER_BIN} --version | grep -F 'PgBouncer ${version}'`,
    'rm -rf "${pgbouncer_src}"',
    `id -u ${PGBOUNCER_USER} >/dev/null 2>&1 || useradd --system --no-create-home --shell /sbin/nologin ${PGBOUNCER_USER}`,
  ];
}
