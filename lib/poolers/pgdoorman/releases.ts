/**
 * The PgDoorman releases a lab may pin (`poolers[].version` with `kind: "pgdoorman"`), and how each
 * is verified before anything from it runs. Pure data.
 *
 * Route (read from the upstream release workflow and installation guide at v3.10.7, and AL2023's
 * packages):
 * - The release assets are deb/rpm packages for Ubuntu, Debian, Rocky and Alma (none for Amazon Linux),
 *   a static musl binary for x86-64 only (`pg_doorman-linux-amd64-static`; the runners and pooler
 *   hosts are Graviton) and `vendor.tar.gz` with `vendor-sha256sum.txt`
 *   (.github/workflows/build-packages.yaml). documentation/en/src/tutorials/installation.md names a
 *   `pg_doorman-TARGET.sha256` beside each binary, but the v3.10.7 workflow uploads none; the PPA and
 *   COPR packages are "built without TLS support", and RDS needs TLS to the server. The guide's
 *   recommended route is a source build: "Build from source (recommended) … Rust 1.87 or newer".
 * - AL2023's own `rust` package was 1.84 in March 2025 (amazonlinux/amazon-linux-2023#576), below
 *   the 1.87 PgDoorman's Cargo.toml (`rust-version`) and rust-toolchain.toml pin.
 * So the host builds the tag from source: `git clone --branch <tag>`, then `git rev-parse HEAD` must be
 * the commit below (a content address of the whole tree) before anything is built; `cargo build
 * --release --locked` then checks every crate against the SHA-256 in the tree's Cargo.lock. The
 * toolchain comes from rustup-init, whose published SHA-256 per architecture is checked first
 * (rust-lang/docker-rust pins the same file in its Rust 1.87.0 image); rustup then installs the
 * 1.87.0 toolchain rust-toolchain.toml names, checking each component against its channel manifest.
 *
 * The commit id is the tag's in the upstream repository (`git rev-parse v3.10.7^{commit}`, read
 * 2026-11-26); the PgDoorman 3.10.7 the integration tests ran when a binary was given was built from
 * the same commit. No checksum of a PgDoorman artifact is published, so the pin is that commit: only
 * a real deploy shows the build completing on AL2023 within the host's boot timeout.
 */
import type { GitRelease, PinnedDownload } from '../driver';

const RUSTUP_SOURCE =
  'rust-lang/docker-rust stable/bookworm/slim/Dockerfile at dfb10b7de9b61ced7cd6eb3907815cadbc6f16c3 ("Bump to rust version 1.87.0"): rustupSha256 per arch';

/** The toolchain installer, rustup 1.28.2, per architecture (`uname -m`). */
export const RUSTUP_INIT: readonly PinnedDownload[] = [
  {
    name: 'rustup-init 1.28.2',
    arch: 'x86_64',
    url: 'https://static.rust-lang.org/rustup/archive/1.28.2/x86_64-unknown-linux-gnu/rustup-init',
    sha256: '20a06e644b0d9bd2fbdbfd52d42540bdde820ea7df86e92e533c073da0cdd43c',
    checksumSource: RUSTUP_SOURCE,
  },
  {
    name: 'rustup-init 1.28.2',
    arch: 'aarch64',
    url: 'https://static.rust-lang.org/rustup/archive/1.28.2/aarch64-unknown-linux-gnu/rustup-init',
    sha256: 'e3853c5a252fca15252d07cb23a1bdd9377a8c6f3efa01531109281ae47f841c',
    checksumSource: RUSTUP_SOURCE,
  },
];

/** The Rust toolchain the tag's rust-toolchain.toml names (its minimum, Cargo.toml `rust-version`). */
export const PGDOORMAN_RUST_TOOLCHAIN = '1.87.0';

/** Newest first. */
export const PGDOORMAN_RELEASES: readonly GitRelease[] = [
  {
    product: 'pgdoorman',
    version: '3.10.7',
    url: 'https://github.com/ozontech/pg_doorman.git',
    tag: 'v3.10.7',
    gitCommit: '9b8ba27ee0846947febd65c3c1b05839207696fc',
    checksumSource:
      'the v3.10.7 tag of ozontech/pg_doorman (git rev-parse v3.10.7^{commit}); no published checksum of a source archive or binary exists for it',
    buildInputs: RUSTUP_INIT,
  },
];

/** The release a PgDoorman pooler gets when the lab names none: the one the integration tests run. */
export const DEFAULT_PGDOORMAN_VERSION = '3.10.7';
