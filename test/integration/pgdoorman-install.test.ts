/**
 * The PgDoorman install lines the pooler host's user data runs, run for real by bash under
 * `set -euo pipefail` with the network and package tools replaced by stubs (dnf, curl, git, uname on
 * PATH): a wrong toolchain installer stops before it runs, and a clone whose commit is not the
 * pinned one stops before anything in it is built. Nothing leaves the scratch directory.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GitRelease } from '../../lib/poolers/driver';
import { pgdoormanInstallCommands } from '../../lib/poolers/pgdoorman/install';
import { PGDOORMAN_RELEASES } from '../../lib/poolers/pgdoorman/releases';
import { scratchDir } from '../helpers/scratch';

const pinned = PGDOORMAN_RELEASES[0] as GitRelease;
/** What the stub curl "downloads" as rustup-init: it leaves a mark when it runs. */
const RUSTUP_STUB = '#!/bin/sh\ntouch "$STUB_DIR/rustup-init-ran"\n';
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

function stubs(dir: string, cloneCommit: string): string {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  const write = (name: string, body: string): void =>
    fs.writeFileSync(
      path.join(bin, name),
      `#!/bin/sh\necho "${name} $*" >> "$STUB_DIR/calls.log"\n${body}\n`,
      {
        mode: 0o755,
      },
    );
  fs.writeFileSync(path.join(dir, 'rustup-init.download'), RUSTUP_STUB);
  write('dnf', 'exit 0');
  write('uname', 'echo x86_64');
  // curl … --output FILE URL: the stub's rustup-init
  write(
    'curl',
    'while [ $# -gt 0 ]; do if [ "$1" = "--output" ]; then out="$2"; shift; fi; shift; done\ncp "$STUB_DIR/rustup-init.download" "$out"',
  );
  // git clone … DIR: an empty tree; git -C DIR rev-parse HEAD: the commit this case clones
  write(
    'git',
    `if [ "$1" = "clone" ]; then for a in "$@"; do last="$a"; done; mkdir -p "$last"; exit 0; fi\nif [ "$3" = "rev-parse" ]; then echo ${cloneCommit}; exit 0; fi\nexit 2`,
  );
  return bin;
}

function runInstall(release: GitRelease, cloneCommit: string) {
  const dir = scratchDir('proxylab-pgd-install-');
  const bin = stubs(dir, cloneCommit);
  // the build root the host uses is /var/tmp (PGDOORMAN_BUILD_ROOT); here the scratch directory
  const script = ['set -euo pipefail', ...pgdoormanInstallCommands(release, { kind: 'upstream' }, dir)].join(
    '\n',
  );
  const res = spawnSync('bash', ['-c', script], {
    encoding: 'utf8',
    // stdin not a socket: bash would read ~/.bashrc as if started by rshd
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: `${bin}:/usr/bin:/bin`, STUB_DIR: dir, TMPDIR: dir },
    timeout: 30_000,
  });
  const calls = fs.existsSync(path.join(dir, 'calls.log'))
    ? fs.readFileSync(path.join(dir, 'calls.log'), 'utf8').trim().split('\n')
    : [];
  return {
    status: res.status,
    stderr: res.stderr,
    rustupRan: fs.existsSync(path.join(dir, 'rustup-init-ran')),
    calls: calls.map((c) => c.split(' ')[0]),
    // what mktemp made under the build root (the script stopped before its rm -rf)
    buildDirs: fs
      .readdirSync(dir)
      .filter((f) => f.startsWith('proxylab-pgdoorman.'))
      .map((f) => fs.readdirSync(path.join(dir, f)).sort()),
  };
}

/** The pinned release with the stub's checksum in place of rustup's (the x86_64 entry only). */
const withStubInstaller: GitRelease = {
  ...pinned,
  buildInputs: [
    {
      name: 'rustup-init stub',
      arch: 'x86_64',
      url: 'https://static.rust-lang.org/rustup/archive/stub/rustup-init',
      sha256: sha256(RUSTUP_STUB),
      checksumSource: 'this test',
    },
  ],
};

test('a toolchain installer whose SHA-256 is not the published one never runs, and nothing is cloned', () => {
  // GIVEN the pinned checksums (the stub download is not rustup 1.28.2)
  // WHEN
  const r = runInstall(pinned, pinned.gitCommit);
  // THEN
  expect(r.status).not.toBe(0);
  expect(r.stderr).toMatch(/computed checksum did NOT match/);
  expect(r.rustupRan).toBe(false);
  expect(r.calls).toEqual(['dnf', 'uname', 'curl']);
});

test('a clone whose commit is not the pinned one stops before the build', () => {
  // GIVEN an installer that passes its check, and a tag that now points elsewhere
  const moved = 'f'.repeat(40);
  // WHEN
  const r = runInstall(withStubInstaller, moved);
  // THEN the installer ran (it was checked), the commit check stopped the script before cargo
  expect(r.rustupRan).toBe(true);
  expect(r.status).toBe(1);
  expect(r.stderr).toContain(
    `PgDoorman ${pinned.tag} is commit ${moved}, not the pinned ${pinned.gitCommit}`,
  );
  expect(r.calls).toEqual(['dnf', 'uname', 'curl', 'git', 'git']);
  // AND it worked in one directory under the build root, with the compilers' TMPDIR inside
  expect(r.buildDirs).toEqual([['pg_doorman', 'rustup-init', 'tmp']]);
});

test('with both checks passing it goes on to the build (here: no cargo, so it stops there)', () => {
  // WHEN the installer and the commit are the expected ones
  const r = runInstall(withStubInstaller, pinned.gitCommit);
  // THEN past both checks: the next thing it runs is the pinned toolchain's cargo, which the stub never installed
  expect(r.rustupRan).toBe(true);
  expect(r.stderr).not.toContain('not the pinned');
  expect(r.stderr).toMatch(/\/opt\/proxylab\/rust\/cargo\/bin\/cargo: No such file or directory/);
  expect(r.status).toBe(127);
});
