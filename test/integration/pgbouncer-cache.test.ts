/**
 * The preflight's builds of a current PgBouncer into the per-user cache, and its stop when it
 * cannot build:
 *  - from Debian's source package (scripts/pgbouncer-debian.ts, the default): an archive on
 *    127.0.0.1 that answers 404 or nothing at all stops it in seconds, naming why, with nothing
 *    half-built left; a cache that is a link, holds another version or a binary its build.json does
 *    not name is never trusted. (The real build from Debian's archive is what the preflight does
 *    before every `npm test` on a fresh machine; its result is checked at the end of this file.)
 *  - from the pinned upstream release (PROXYLAB_PGBOUNCER_SOURCE=upstream,
 *    scripts/pgbouncer-cache.ts): against a local HTTP server serving a tarball made here — a tiny
 *    source tree whose configure and Makefile produce a script that prints "PgBouncer <version>" —
 *    with its checksum (or a wrong one).
 * The real defaults (Debian's pinned version and .dsc checksum, the upstream URL and published
 * SHA-256) are checked in test/unit/preflight.test.ts; nothing here reaches the internet.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { PgbouncerRelease } from '../../lib/poolers/pgbouncer/releases';
import {
  BUILD_DEPS,
  buildPgbouncer,
  cachedPgbouncer,
  checkCachedPgbouncer,
  DEBIAN_PGBOUNCER,
  installIntoCache,
  MANIFEST_FILE,
  type BuildOptions,
} from '../../scripts/pgbouncer-cache';
import { buildFromDebianSource, type DebianBuildOptions } from '../../scripts/pgbouncer-debian';
import { findPgbouncerModern, pgbouncerModernTool, preflight, testsUsing } from '../../scripts/preflight';
import { scratchDir } from '../helpers/scratch';

const VERSION = '1.25.2';

/** A gzipped tarball of `pgbouncer-<VERSION>/` whose build makes a `pgbouncer` printing `prints`. */
function fakeSourceTarball(prints: string, configureRan: string): Buffer {
  const dir = scratchDir('fake-pgbouncer-src-');
  const src = path.join(dir, `pgbouncer-${VERSION}`);
  fs.mkdirSync(src);
  fs.writeFileSync(
    path.join(src, 'configure'),
    [
      '#!/bin/sh',
      'prefix=',
      'for a in "$@"; do case "$a" in --prefix=*) prefix="${a#--prefix=}";; esac; done',
      '[ -n "$prefix" ] || { echo "configure: no --prefix" >&2; exit 1; }',
      `echo "$prefix" >> '${configureRan}'`,
      'printf "PREFIX = %s\\n" "$prefix" > config.mk',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  fs.writeFileSync(
    path.join(src, 'Makefile'),
    [
      'include config.mk',
      'all: pgbouncer',
      'pgbouncer: pgbouncer.in',
      '\tcp pgbouncer.in pgbouncer && chmod +x pgbouncer',
      'install: pgbouncer',
      '\tmkdir -p $(PREFIX)/bin && cp pgbouncer $(PREFIX)/bin/pgbouncer',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(src, 'pgbouncer.in'),
    `#!/bin/sh\necho "${prints}"\necho "libevent 2.1.12-stable"\n`,
  );
  const out = path.join(dir, 'pgbouncer.tar.gz');
  const tar = spawnSync('tar', ['-czf', out, '-C', dir, `pgbouncer-${VERSION}`], { encoding: 'utf8' });
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  return fs.readFileSync(out);
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

interface Served {
  readonly url: string;
  readonly requests: () => number;
  readonly close: () => Promise<void>;
}

/** Serve `body` on 127.0.0.1 (or hold every request unanswered for 'hang', or answer 404 for 'not-found'). */
async function serve(body: Buffer | 'hang' | 'not-found'): Promise<Served> {
  let count = 0;
  const held: http.ServerResponse[] = [];
  const server = http.createServer((_req, res) => {
    count++;
    if (body === 'hang') held.push(res);
    else if (body === 'not-found') res.writeHead(404).end('not here');
    else res.writeHead(200, { 'content-type': 'application/gzip' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/downloads/files/${VERSION}/pgbouncer-${VERSION}.tar.gz`,
    requests: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const release = (url: string, sum: string): PgbouncerRelease => ({
  product: 'pgbouncer',
  version: VERSION,
  url,
  sha256: sum,
  checksumSource: 'made by this test',
});

function options(root: string, rel: PgbouncerRelease, over: Partial<BuildOptions> = {}): BuildOptions {
  return {
    release: rel,
    root,
    log: () => undefined,
    installPackages: null,
    packageManager: 'apt-get',
    missingDeps: () => [],
    ...over,
  };
}

/** What the cache root holds (build directories included). */
const listing = (root: string): string[] => (fs.existsSync(root) ? fs.readdirSync(root).sort() : []);

const servers: Served[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
async function served(body: Buffer | 'hang' | 'not-found'): Promise<Served> {
  const s = await serve(body);
  servers.push(s);
  return s;
}

describe('building the pinned upstream PgBouncer 1.25.2 into the cache', () => {
  test('downloads, checks the SHA-256, configures with the cache prefix, builds, checks the version', async () => {
    // GIVEN a tarball and its checksum on a local server
    const ran = path.join(scratchDir('configure-ran-'), 'log');
    const tarball = fakeSourceTarball(`PgBouncer ${VERSION}`, ran);
    const server = await served(tarball);
    const root = path.join(scratchDir('cache-'), 'proxylab');
    // WHEN
    const res = await buildPgbouncer(options(root, release(server.url, sha256(tarball))));
    // THEN the binary is in the cache, reports the version, and nothing else is left there
    const file = cachedPgbouncer(VERSION, root);
    expect(res).toEqual({ ok: true, file });
    expect(spawnSync(file, ['--version'], { encoding: 'utf8' }).stdout).toContain(`PgBouncer ${VERSION}`);
    expect(server.requests()).toBe(1);
    expect(fs.readFileSync(ran, 'utf8').trim()).toMatch(/^\/.*\/\.build-pgbouncer-1\.25\.2-\w+\/install$/);
    expect(listing(root)).toEqual([`pgbouncer-${VERSION}`]);
  });

  test('a tarball whose SHA-256 is not the pinned one is refused before anything is unpacked', async () => {
    // GIVEN the server sends a tarball the release does not pin
    const ran = path.join(scratchDir('configure-ran-'), 'log');
    const tarball = fakeSourceTarball(`PgBouncer ${VERSION}`, ran);
    const server = await served(tarball);
    const pinned = sha256(Buffer.from('some other tarball'));
    const root = path.join(scratchDir('cache-'), 'proxylab');
    // WHEN
    const res = await buildPgbouncer(options(root, release(server.url, pinned)));
    // THEN refused, naming both checksums; configure never ran and the cache is empty
    expect(res.ok).toBe(false);
    const reason = res.ok ? '' : res.reason;
    expect(reason).toContain(`refused ${server.url}: its SHA-256 is ${sha256(tarball)}`);
    expect(reason).toContain(`pins ${pinned}; nothing was unpacked or built`);
    expect(fs.existsSync(ran)).toBe(false);
    expect(listing(root)).toEqual([]);
  });

  test('a build that reports another version is not put in the cache', async () => {
    // GIVEN a tarball (with its right checksum) that builds a PgBouncer saying 1.24.1
    const tarball = fakeSourceTarball('PgBouncer 1.24.1', path.join(scratchDir('configure-ran-'), 'log'));
    const server = await served(tarball);
    const root = path.join(scratchDir('cache-'), 'proxylab');
    // WHEN
    const res = await buildPgbouncer(options(root, release(server.url, sha256(tarball))));
    // THEN
    expect(res.ok ? '' : res.reason).toMatch(/--version reports 1\.24\.1, not PgBouncer 1\.25\.2$/);
    expect(listing(root)).toEqual([]);
  });

  test('a server that never answers fails the download at the timeout', async () => {
    // GIVEN
    const server = await served('hang');
    const root = path.join(scratchDir('cache-'), 'proxylab');
    const started = Date.now();
    // WHEN
    const res = await buildPgbouncer({
      ...options(root, release(server.url, sha256(Buffer.from('x')))),
      downloadTimeoutMs: 300,
    });
    // THEN
    expect(res.ok ? '' : res.reason).toBe(
      `download of ${server.url} failed: no complete answer within 0.3 s`,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(listing(root)).toEqual([]);
  });

  test('missing build requirements: named with their packages, or installed when allowed and the build goes on', async () => {
    // GIVEN libevent's headers are missing (until installed)
    const tarball = fakeSourceTarball(`PgBouncer ${VERSION}`, path.join(scratchDir('configure-ran-'), 'log'));
    const server = await served(tarball);
    const libevent = BUILD_DEPS.filter((d) => d.probe.includes('libevent'));
    let installed = false;
    const missingDeps = () => (installed ? [] : libevent);
    const rel = release(server.url, sha256(tarball));
    // WHEN we may not install
    const refused = await buildPgbouncer(options(path.join(scratchDir('cache-'), 'p'), rel, { missingDeps }));
    // THEN
    expect(refused).toEqual({
      ok: false,
      reason: 'the build needs libevent headers (pkg-config libevent); packages: libevent-dev',
    });
    // WHEN we may
    const calls: (readonly string[])[] = [];
    const root = path.join(scratchDir('cache-'), 'proxylab');
    const built = await buildPgbouncer(
      options(root, rel, {
        missingDeps,
        installPackages: (pkgs) => {
          calls.push(pkgs);
          installed = true;
          return true;
        },
      }),
    );
    // THEN
    expect(calls).toEqual([['libevent-dev']]);
    expect(built).toEqual({ ok: true, file: cachedPgbouncer(VERSION, root) });
  });
});

/** Options of a Debian build against `archive` into `root`, with short apt limits. */
function debianOptions(
  root: string,
  archive: string,
  over: Partial<DebianBuildOptions> = {},
): DebianBuildOptions {
  return {
    root,
    archive,
    aptTimeoutMs: 5000,
    log: () => undefined,
    installPackages: null,
    packageManager: 'apt-get',
    missingDeps: () => [],
    ...over,
  };
}

/** A Debian archive on 127.0.0.1 that answers every request with 404 (or holds it, for 'hang'). */
async function archive(mode: '404' | 'hang'): Promise<{ url: string; requests: () => number }> {
  const s = await served(mode === '404' ? 'not-found' : 'hang');
  return { url: `${new URL(s.url).origin}/debian`, requests: s.requests };
}

/** A fake cached build of `version` under `root` printing `prints`, with a build.json naming it. */
function fakeCachedBuild(root: string, version: string, prints: string): string {
  const staging = path.join(scratchDir('staging-'), 'install');
  fs.mkdirSync(path.join(staging, 'bin'), { recursive: true });
  fs.writeFileSync(path.join(staging, 'bin', 'pgbouncer'), `#!/bin/sh\necho "${prints}"\n`, { mode: 0o755 });
  const res = installIntoCache(staging, version, 'made by this test', Date.now(), root);
  if (!res.ok) throw new Error(res.reason);
  return res.file;
}

describe("building from Debian's source package: what stops it, and a cache that is not trusted", () => {
  const VERSION_D = DEBIAN_PGBOUNCER.upstreamVersion;

  test.each(['404', 'hang'] as const)(
    'an archive that answers %s stops the build in seconds with the reason, leaving nothing half-built',
    async (mode) => {
      // GIVEN
      const served404 = await archive(mode);
      const root = path.join(scratchDir('cache-'), 'proxylab');
      const started = Date.now();
      // WHEN
      const res = await buildFromDebianSource(debianOptions(root, served404.url));
      // THEN
      const reason = res.ok ? '' : res.reason;
      expect(reason).toContain(`${served404.url}: \`apt-get update\``);
      expect(reason).toMatch(
        mode === '404' ? /`apt-get update` exited with 100/ : /did not finish within 5 s/,
      );
      if (mode === '404') expect(reason).toMatch(/404/);
      expect(served404.requests()).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(60_000);
      // only the failed step's log is kept beside the cache: no build directory, no half-built cache
      expect(listing(root)).toEqual([`pgbouncer-${VERSION_D}-build.log`]);
      expect(checkCachedPgbouncer(VERSION_D, root)).toMatchObject({ ok: false, absent: true });
    },
    30_000,
  );

  test('a cache root or build directory that is a symbolic link is refused, naming it', async () => {
    // GIVEN
    const dir = scratchDir('cache-');
    fs.mkdirSync(path.join(dir, 'elsewhere'));
    fs.symlinkSync(path.join(dir, 'elsewhere'), path.join(dir, 'proxylab'));
    // WHEN
    const res = await buildFromDebianSource(
      debianOptions(path.join(dir, 'proxylab'), 'http://127.0.0.1:9/debian'),
    );
    // THEN
    expect(res).toEqual({
      ok: false,
      reason: `${path.join(dir, 'proxylab')} is a symbolic link: not trusted as the build cache (remove it)`,
    });
    expect(fs.readdirSync(path.join(dir, 'elsewhere'))).toEqual([]);
    // GIVEN a real root whose build directory is a link
    const root = path.join(dir, 'real');
    fs.mkdirSync(root);
    fs.symlinkSync(
      path.join(dir, 'elsewhere'),
      path.join(root, `pgbouncer-${DEBIAN_PGBOUNCER.upstreamVersion}`),
    );
    // WHEN / THEN refused before anything is fetched
    expect(await buildFromDebianSource(debianOptions(root, 'http://127.0.0.1:9/debian'))).toEqual({
      ok: false,
      reason: `${path.join(root, `pgbouncer-${DEBIAN_PGBOUNCER.upstreamVersion}`)} is a symbolic link: not trusted as a cached build (remove it)`,
    });
    expect(fs.readdirSync(root)).toEqual([`pgbouncer-${DEBIAN_PGBOUNCER.upstreamVersion}`]);
  });

  test('a cached build is trusted only while it is the binary its build.json names, reporting its version', () => {
    // GIVEN a good build
    const root = path.join(scratchDir('cache-'), 'proxylab');
    const file = fakeCachedBuild(root, VERSION_D, `PgBouncer ${VERSION_D}`);
    // THEN
    const good = checkCachedPgbouncer(VERSION_D, root);
    expect(good).toMatchObject({ ok: true, file, version: VERSION_D });
    const goodManifest = good.ok ? good.manifest : null;
    // WHEN the binary is replaced by one reporting another version
    fs.writeFileSync(file, '#!/bin/sh\necho "PgBouncer 1.18.0"\n');
    // THEN its checksum no longer matches
    expect(checkCachedPgbouncer(VERSION_D, root)).toMatchObject({
      ok: false,
      absent: false,
      reason: `${file} is not the binary its ${MANIFEST_FILE} recorded (SHA-256 differs)`,
    });
    // WHEN a build.json names (by its checksum) a binary that reports another version
    const otherRoot = path.join(scratchDir('cache-'), 'p');
    const other = cachedPgbouncer(VERSION_D, otherRoot);
    fs.mkdirSync(path.dirname(other), { recursive: true });
    fs.writeFileSync(other, '#!/bin/sh\necho "PgBouncer 1.18.0"\n', { mode: 0o755 });
    const manifest = { ...goodManifest, binarySha256: sha256(fs.readFileSync(other)) };
    fs.writeFileSync(path.join(path.dirname(path.dirname(other)), MANIFEST_FILE), JSON.stringify(manifest));
    // THEN
    expect(checkCachedPgbouncer(VERSION_D, otherRoot)).toMatchObject({
      ok: false,
      reason: `${other} reports 1.18.0, not PgBouncer ${VERSION_D}`,
    });
    // WHEN the build's directory is a link to a good build
    const linked = path.join(scratchDir('cache-'), 'proxylab');
    fs.mkdirSync(linked);
    fs.symlinkSync(path.dirname(path.dirname(file)), path.join(linked, `pgbouncer-${VERSION_D}`));
    // THEN it is not trusted either
    expect(checkCachedPgbouncer(VERSION_D, linked)).toMatchObject({
      ok: false,
      reason: `${path.join(linked, `pgbouncer-${VERSION_D}`)} is a symbolic link: not trusted`,
    });
  });

  test('a new build replaces an untrusted cache of the same version', () => {
    // GIVEN a cache whose binary was tampered with
    const root = path.join(scratchDir('cache-'), 'proxylab');
    const file = fakeCachedBuild(root, VERSION_D, `PgBouncer ${VERSION_D}`);
    fs.appendFileSync(file, '# changed\n');
    expect(checkCachedPgbouncer(VERSION_D, root).ok).toBe(false);
    // WHEN a good build is installed
    fakeCachedBuild(root, VERSION_D, `PgBouncer ${VERSION_D}`);
    // THEN
    expect(checkCachedPgbouncer(VERSION_D, root)).toMatchObject({ ok: true, file });
    expect(fs.readFileSync(file, 'utf8')).not.toContain('# changed');
  });

  test('the preflight stops before any test when the archive refuses, naming the tests, why, and the other ways', async () => {
    // GIVEN
    const refusing = await archive('404');
    const root = path.join(scratchDir('cache-'), 'proxylab');
    const tool = pgbouncerModernTool(
      { root, archive: refusing.url, aptTimeoutMs: 5000, missingDeps: () => [] },
      () => (checkCachedPgbouncer(VERSION_D, root).ok ? 'cached' : null),
    );
    const users = testsUsing(['integration'], [tool]).get(tool) ?? [];
    // WHEN
    const message = await preflight({
      install: 'auto',
      projects: ['integration'],
      log: () => undefined,
      tools: [tool],
    });
    // THEN
    expect(users).toContain('test/integration/local-smoke.test.ts');
    expect(message).toContain('✗ PgBouncer ≥ 1.21: prepared statements through a transaction pool');
    expect(message).toContain(`needed by ${users.join(', ')}`);
    expect(message).toContain(`not built: ${refusing.url}: \`apt-get update\` exited with 100`);
    expect(message).toContain('export PROXYLAB_PGBOUNCER_MODERN=/path/to/pgbouncer');
    expect(message).toContain('PROXYLAB_PGBOUNCER_SOURCE=upstream');
  }, 30_000);

  test('the PgBouncer the tests run: when it is the cached Debian build, that build is trusted and says where it came from', () => {
    // GIVEN what the preflight found or built before this run
    const found = findPgbouncerModern();
    const cached = checkCachedPgbouncer();
    // THEN a current PgBouncer is there (the preflight stops otherwise), and the cache is either
    // not the one used (PROXYLAB_PGBOUNCER_MODERN or PATH) or a trusted build of Debian's package
    expect(found).not.toBeNull();
    if (found !== null && cached.ok && found.file === cached.file)
      expect(cached.manifest.source).toContain(
        `Debian source package pgbouncer ${DEBIAN_PGBOUNCER.debianVersion}`,
      );
  });
});

describe('the preflight with no PgBouncer 1.25.2 anywhere (PROXYLAB_PGBOUNCER_SOURCE=upstream)', () => {
  const inCache = (root: string) => (): string | null => {
    const file = cachedPgbouncer(VERSION, root);
    return fs.existsSync(file) ? file : null;
  };
  // The files the preflight finds for the current-PgBouncer entry (test/unit/preflight.test.ts pins that list).
  const tool125 = pgbouncerModernTool({ source: 'upstream' });
  const tests125 = testsUsing(['unit', 'cdk', 'integration'], [tool125]).get(tool125) ?? [];
  test('the entry is used by some tests (the message below names them)', () => {
    expect(tests125).toContain('test/integration/local-smoke.test.ts');
  });

  test('stops before any test, naming the tests that need it, why it was not built and how to get it', async () => {
    // GIVEN a download that cannot connect (a port nothing listens on)
    const gone = await serve(Buffer.from(''));
    await gone.close();
    const root = path.join(scratchDir('cache-'), 'proxylab');
    const tool = pgbouncerModernTool(
      { source: 'upstream', release: release(gone.url, sha256(Buffer.from('x'))), root },
      inCache(root),
    );
    // WHEN
    const message = await preflight({
      install: 'auto',
      projects: ['integration'],
      log: () => undefined,
      tools: [tool],
    });
    // THEN
    expect(message).toContain(
      'The tests need tools that are missing (a build did not succeed, see "not built"):',
    );
    expect(message).toContain('✗ PgBouncer ≥ 1.21: prepared statements through a transaction pool');
    expect(message).toContain(`needed by ${tests125.join(', ')}`);
    expect(message).toMatch(
      new RegExp(
        `not built: download of ${gone.url.replace(/\./g, '\\.')} failed: fetch failed \\(ECONNREFUSED`,
      ),
    );
    expect(message).toContain('export PROXYLAB_PGBOUNCER_MODERN=/path/to/pgbouncer');
    expect(message).toContain(`./configure --prefix=`);
    expect(listing(root)).toEqual([]);
  });

  test('report only (--no-install) downloads nothing', async () => {
    // GIVEN
    const tarball = fakeSourceTarball(`PgBouncer ${VERSION}`, path.join(scratchDir('configure-ran-'), 'log'));
    const server = await served(tarball);
    const root = path.join(scratchDir('cache-'), 'proxylab');
    const tool = pgbouncerModernTool(
      { source: 'upstream', release: release(server.url, sha256(tarball)), root },
      inCache(root),
    );
    // WHEN
    const message = await preflight({
      install: false,
      projects: ['integration'],
      log: () => undefined,
      tools: [tool],
    });
    // THEN
    expect(message).toContain(`needed by ${tests125.join(', ')}`);
    expect(server.requests()).toBe(0);
  });

  test('builds it into the cache and lets the tests run', async () => {
    // GIVEN the release is reachable
    const tarball = fakeSourceTarball(`PgBouncer ${VERSION}`, path.join(scratchDir('configure-ran-'), 'log'));
    const server = await served(tarball);
    const root = path.join(scratchDir('cache-'), 'proxylab');
    const tool = pgbouncerModernTool(
      { source: 'upstream', release: release(server.url, sha256(tarball)), root, missingDeps: () => [] },
      inCache(root),
    );
    const log: string[] = [];
    // WHEN
    const message = await preflight({
      install: 'auto',
      projects: ['integration'],
      log: (l) => log.push(l),
      tools: [tool],
    });
    // THEN
    expect(message).toBeNull();
    expect(inCache(root)()).toBe(cachedPgbouncer(VERSION, root));
    expect(log).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^preflight: built PgBouncer ${VERSION} from ${server.url} in \\d+ s: ${cachedPgbouncer(VERSION, root)}$`,
        ),
      ),
    );
    expect(checkCachedPgbouncer(VERSION, root)).toMatchObject({ ok: true, manifest: { source: server.url } });
  });
});
