/**
 * How a pooler host (and each runner, for `on-runners`) builds a pinned PgDoorman release: plain bash
 * lines for the user data (lib/constructs/pooler-user-data.ts runs them before the bootstrap, under
 * `set -euo pipefail`). The route and why are in ./releases.ts: the tag cloned and its commit id
 * checked before anything in it is built or run; the toolchain installer checked against its
 * published SHA-256 before it runs; every crate checked by cargo against the tree's Cargo.lock.
 * Pure text, no CDK.
 */
import type { PoolerRelease, PoolerSourceLocation } from '../driver';
import { PGDOORMAN_RUST_TOOLCHAIN } from './releases';

/** Where the binary is installed. */
export const PGDOORMAN_BIN = '/usr/local/bin/pg_doorman';
/** The system user PgDoorman runs as. */
export const PGDOORMAN_USER = 'pgdoorman';
/** The pinned toolchain lives here (root-owned), not in a home directory. */
export const PGDOORMAN_RUST_ROOT = '/opt/proxylab/rust';

/**
 * Where the build happens: a fresh directory on the root volume, never /tmp. AL2023 mounts /tmp as
 * tmpfs "with a size limit of 50% of RAM" and says "For larger temporary files, /var/tmp should be
 * used instead" (Amazon Linux 2023 User Guide, "/tmp (small temporary files)",
 * https://docs.aws.amazon.com/linux/al2023/ug/filesystem-slash-tmp.html). Under /tmp the clone,
 * cargo's target directory (every crate's objects and the bitcode the link-time optimization reads)
 * and the compilers' own temporary files (TMPDIR) would sit in RAM, capped at half of it, and take
 * the memory the build itself needs. /var/tmp is on the root volume (a 16 GiB gp3 volume:
 * DEFAULTS.stack.poolerRootVolumeGib and runnerRootVolumeGib).
 */
export const PGDOORMAN_BUILD_ROOT = '/var/tmp';

/**
 * The least memory, in GiB, of a host that builds PgDoorman: lab validation refuses a smaller pooler
 * host (or runner, for `on-runners`) by the memory the price table gives its type
 * (lib/cost/price-check.ts).
 *
 * No published figure exists: PgDoorman's installation guide gives memory only for running it ("a
 * few MB per pool"), and rustc's documentation gives none for compiling. What is known: the pinned
 * tag's release profile is `lto = true` with `codegen-units = 1` (Cargo.toml at commit 9b8ba27e),
 * that is "fat" LTO, which "attempts to perform optimizations across all crates within the
 * dependency graph" (The rustc book, "Codegen options", `lto`): the 421 packages of its Cargo.lock
 * optimized as one LLVM module by one rustc process at the end of the build, after cargo has run up
 * to one rustc per vCPU. Public reports of fat-LTO release builds killed for memory start at 1 GiB
 * machines (zeroclaw-labs/zeroclaw#404, "cargo build --release being killed with SIGKILL on
 * Raspberry Pi 3 (1GB RAM)") and reach tens of GiB for much larger dependency graphs
 * (openai/codex#21826); neither is this crate. So this is a conservative floor, not a measurement:
 * 4 GiB, twice the 2 GiB of the smallest Graviton size (c7g.medium), which must also hold the OS,
 * the SSM agent and cloud-init. Replace it with a measured peak (`/usr/bin/time -v` around the cargo
 * line on a real host) once one is taken.
 */
export const PGDOORMAN_BUILD_MIN_MEMORY_GIB = 4;

/**
 * Build packages on AL2023: git for the tag; a C/C++ compiler, make, cmake, clang and perl/patch for
 * the crates that compile C (jemalloc, ring; upstream's deb build installs the same:
 * .github/workflows/build-packages.yaml); OpenSSL headers and pkg-config for native-tls.
 */
export const PGDOORMAN_BUILD_PACKAGES: readonly string[] = [
  'git',
  'gcc',
  'gcc-c++',
  'make',
  'cmake',
  'clang',
  'perl',
  'patch',
  'openssl-devel',
  'pkgconf-pkg-config',
];

const HEX40 = /^[0-9a-f]{40}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const URL_SAFE = /^https:\/\/[\w./-]+$/;
const ABSOLUTE_PATH = /^\/[\w./-]*$/;

/**
 * What the build fetches from the internet, none of it one archive with a published SHA-256 that
 * `proxylab deploy` could stage for a host without internet (lib/operator/pooler-sources.ts): lab
 * validation names it when a lab without internet asks for PgDoorman.
 */
export const PGDOORMAN_NEEDS_INTERNET =
  'its host builds the pinned tag from source and fetches github.com (the tag, checked by commit), static.rust-lang.org (rustup-init, checked by SHA-256, and the Rust toolchain) and index.crates.io / static.crates.io (its crates, checked against Cargo.lock); no PgDoorman archive with a published SHA-256 exists for deploy to stage';

/**
 * Clone, verify, build and install `release` in a fresh directory under `buildRoot` (the compilers'
 * TMPDIR too); create the `pgdoorman` user. Fails (set -e) on a download error, a checksum or commit
 * mismatch, a build error, or a binary that is not this version.
 */
export function pgdoormanInstallCommands(
  release: PoolerRelease,
  source: PoolerSourceLocation = { kind: 'upstream' },
  buildRoot: string = PGDOORMAN_BUILD_ROOT,
): string[] {
  if (release.gitCommit === undefined)
    throw new Error(`PgDoorman releases are git tags pinned by commit: ${JSON.stringify(release)}`);
  if (source.kind !== 'upstream')
    throw new Error(
      `PgDoorman ${release.version} cannot be installed from a staged archive (${source.uri}): ${PGDOORMAN_NEEDS_INTERNET}`,
    );
  const { version, url, tag, gitCommit, buildInputs } = release;
  // The values come from ./releases.ts; checked here so a bad table entry cannot inject shell.
  if (
    !/^\d+\.\d+\.\d+$/.test(version) ||
    !/^v\d+\.\d+\.\d+$/.test(tag) ||
    !HEX40.test(gitCommit) ||
    !URL_SAFE.test(url) ||
    buildInputs.length === 0 ||
    buildInputs.some((b) => !HEX64.test(b.sha256) || !URL_SAFE.test(b.url) || !/^[a-z0-9_]+$/.test(b.arch))
  )
    throw new Error(`PgDoorman release entry is malformed: ${JSON.stringify(release)}`);
  if (!ABSOLUTE_PATH.test(buildRoot))
    throw new Error(
      `PgDoorman build root must be an absolute path of [A-Za-z0-9_./-]: ${JSON.stringify(buildRoot)}`,
    );
  const cases = buildInputs.map((b) => `  ${b.arch}) rustup_url='${b.url}'; rustup_sha256='${b.sha256}' ;;`);
  return [
    `# PgDoorman ${version} from the upstream tag ${tag}: its commit is checked before anything in it is built or run`,
    `dnf install -y ${PGDOORMAN_BUILD_PACKAGES.join(' ')}`,
    // on the root volume, not AL2023's tmpfs /tmp (PGDOORMAN_BUILD_ROOT); the compilers' temporary files too
    `pgdoorman_src=$(mktemp -d '${buildRoot}/proxylab-pgdoorman.XXXXXXXX')`,
    'mkdir "${pgdoorman_src}/tmp"',
    'case "$(uname -m)" in',
    ...cases,
    '  *) echo "no pinned rustup-init for $(uname -m)" >&2; exit 1 ;;',
    'esac',
    'curl --fail --silent --show-error --location --retry 5 --retry-delay 5 --output "${pgdoorman_src}/rustup-init" "${rustup_url}"',
    'echo "${rustup_sha256}  ${pgdoorman_src}/rustup-init" | sha256sum -c --strict -',
    'chmod 0755 "${pgdoorman_src}/rustup-init"',
    `export RUSTUP_HOME=${PGDOORMAN_RUST_ROOT}/rustup CARGO_HOME=${PGDOORMAN_RUST_ROOT}/cargo`,
    `TMPDIR="\${pgdoorman_src}/tmp" "\${pgdoorman_src}/rustup-init" -y --no-modify-path --profile minimal --default-toolchain ${PGDOORMAN_RUST_TOOLCHAIN}`,
    `git clone --quiet --depth 1 --branch '${tag}' '${url}' "\${pgdoorman_src}/pg_doorman"`,
    'pgdoorman_commit=$(git -C "${pgdoorman_src}/pg_doorman" rev-parse HEAD)',
    `if [ "\${pgdoorman_commit}" != '${gitCommit}' ]; then echo "PgDoorman ${tag} is commit \${pgdoorman_commit}, not the pinned ${gitCommit}" >&2; exit 1; fi`,
    `(cd "\${pgdoorman_src}/pg_doorman" && TMPDIR="\${pgdoorman_src}/tmp" "\${CARGO_HOME}/bin/cargo" build --release --locked --bin pg_doorman)`,
    `install -m 0755 "\${pgdoorman_src}/pg_doorman/target/release/pg_doorman" ${PGDOORMAN_BIN}`,
    `${PGDOORMAN_BIN} --version | grep -F 'pg_doorman ${version}'`,
    'rm -rf "${pgdoorman_src}"',
    `id -u ${PGDOORMAN_USER} >/dev/null 2>&1 || useradd --system --no-create-home --shell /sbin/nologin ${PGDOORMAN_USER}`,
  ];
}
