/**
 * The one user-data builder for a self-hosted PgBouncer, used by the dedicated pooler host
 * (pooler-host.ts) and by every runner for `on-runners` (runner-fleet.ts): build the pinned release
 * from its upstream tarball after `sha256sum -c` against the published checksum, create the
 * `pgbouncer` system user, write the host config (PoolerHostConfig, no secrets) and run the
 * bootstrap (/opt/proxylab/pooler.js, from the runner bundle), which writes the PgBouncer
 * configuration, reads the secrets, starts the processes and returns non-zero unless PgBouncer
 * answers. The script runs under `set -euo pipefail` with a cfn-signal exit trap, so any failure
 * here fails the deploy.
 *
 * Plain bash lines (no CDK): test/integration/cloud-runner-userdata.test.ts renders them from the
 * synthesized template and runs shellcheck on the result.
 */
import type { PgbouncerRelease } from '../poolers/pgbouncer/releases';
import type { PoolerHostConfig } from '../poolers/pgbouncer/layout';

/** Where the runner bundle's pooler entry lands (unpacked beside runner.js). */
export const POOLER_INSTALL_PATH = '/opt/proxylab/pooler.js';
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

export function poolerConfigPath(name: string): string {
  return `/etc/proxylab/pooler-${name}.json`;
}

/**
 * Download, verify, build and install `release`; create the `pgbouncer` user. Fails (set -e) on a
 * download error, a checksum mismatch, a build error, or a binary that is not this version.
 */
export function pgbouncerInstallCommands(release: PgbouncerRelease): string[] {
  const { version, url, sha256 } = release;
  // The values come from lib/poolers/pgbouncer/releases.ts (digits, dots, hex, a fixed URL): safe in
  // single quotes, checked here so a bad table entry cannot inject shell.
  if (!/^\d+\.\d+\.\d+$/.test(version) || !/^[0-9a-f]{64}$/.test(sha256) || !/^https:\/\/[\w./-]+$/.test(url))
    throw new Error(`PgBouncer release entry is malformed: ${JSON.stringify(release)}`);
  const tarball = `pgbouncer-${version}.tar.gz`;
  return [
    `# PgBouncer ${version} from the upstream release; its published SHA-256 is checked before anything is built`,
    `dnf install -y ${PGBOUNCER_BUILD_PACKAGES.join(' ')}`,
    'pgbouncer_src=$(mktemp -d)',
    `curl --fail --silent --show-error --location --retry 5 --retry-delay 5 --output "\${pgbouncer_src}/${tarball}" '${url}'`,
    `echo '${sha256}  ${tarball}' > "\${pgbouncer_src}/SHA256SUMS"`,
    '(cd "${pgbouncer_src}" && sha256sum -c --strict SHA256SUMS)',
    `tar -xzf "\${pgbouncer_src}/${tarball}" -C "\${pgbouncer_src}"`,
    `(cd "\${pgbouncer_src}/pgbouncer-${version}" && ./configure --prefix=${PGBOUNCER_PREFIX} && make -j"$(nproc)" && make install)`,
    `${PGBOUNCER_BIN} --version | grep -F 'PgBouncer ${version}'`,
    'rm -rf "${pgbouncer_src}"',
    `id -u ${PGBOUNCER_USER} >/dev/null 2>&1 || useradd --system --no-create-home --shell /sbin/nologin ${PGBOUNCER_USER}`,
  ];
}

/**
 * Write the host config and run the bootstrap. `config` may hold CDK tokens (secret ARNs, the
 * writer endpoint, the region): they resolve inside the user data, and none of them is a secret.
 */
export function poolerBootstrapCommands(config: PoolerHostConfig): string[] {
  if (!/^[a-z][a-z0-9-]*$/.test(config.name)) throw new Error(`pooler name ${config.name} is not file-safe`);
  const file = poolerConfigPath(config.name);
  const marker = 'PROXYLAB_POOLER_CONFIG';
  return [
    `# pooler ${config.name}: its config (no secrets: the bootstrap reads them from Secrets Manager), then start it and wait until it answers`,
    'mkdir -p /etc/proxylab',
    `cat > ${file} <<'${marker}'`,
    JSON.stringify(config, null, 2),
    marker,
    `chmod 0644 ${file}`,
    `node ${POOLER_INSTALL_PATH} bootstrap --config ${file}`,
  ];
}

/** Install the release and bootstrap the pooler: what a pooler host and each runner run. */
export function poolerUserDataCommands(release: PgbouncerRelease, config: PoolerHostConfig): string[] {
  if (release.version !== config.version)
    throw new Error(`pooler ${config.name}: release ${release.version} is not its version ${config.version}`);
  return [...pgbouncerInstallCommands(release), ...poolerBootstrapCommands(config)];
}
