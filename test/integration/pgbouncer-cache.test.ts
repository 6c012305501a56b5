/**
 * The preflight's build of PgBouncer 1.25.2 into the per-user cache (scripts/pgbouncer-cache.ts),
 * and its stop when it cannot build: against a local HTTP server on 127.0.0.1 serving a tarball
 * made here — a tiny source tree whose configure and Makefile produce a script that prints
 * "PgBouncer <version>" — with its checksum (or a wrong one). The real default (the pinned
 * upstream URL and published SHA-256) is checked in test/unit/preflight.test.ts; nothing here
 * reaches the internet.
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
  type BuildOptions,
} from '../../scripts/pgbouncer-cache';
import { pgbouncer125Tool, preflight, testsUsing } from '../../scripts/preflight';
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

/** Serve `body` on 127.0.0.1 (or hold every request unanswered when body is 'hang'). */
async function serve(body: Buffer | 'hang'): Promise<Served> {
  let count = 0;
  const held: http.ServerResponse[] = [];
  const server = http.createServer((_req, res) => {
    count++;
    if (body === 'hang') held.push(res);
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
async function served(body: Buffer | 'hang'): Promise<Served> {
  const s = await serve(body);
  servers.push(s);
  return s;
}

describe('building PgBouncer 1.25.2 into the cache', () => {
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

describe('the preflight with no PgBouncer 1.25.2 anywhere', () => {
  const inCache = (root: string) => (): string | null => {
    const file = cachedPgbouncer(VERSION, root);
    return fs.existsSync(file) ? file : null;
  };
  // The files the preflight finds for the 1.25.2 entry (test/unit/preflight.test.ts pins that list).
  const tool125 = pgbouncer125Tool();
  const tests125 = testsUsing(['unit', 'cdk', 'integration'], [tool125]).get(tool125) ?? [];
  test('the 1.25.2 entry is used by some tests (the message below names them)', () => {
    expect(tests125).toContain('test/integration/local-smoke.test.ts');
  });

  test('stops before any test, naming the tests that need it, why it was not built and how to get it', async () => {
    // GIVEN a download that cannot connect (a port nothing listens on)
    const gone = await serve(Buffer.from(''));
    await gone.close();
    const root = path.join(scratchDir('cache-'), 'proxylab');
    const tool = pgbouncer125Tool(
      { release: release(gone.url, sha256(Buffer.from('x'))), root },
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
    expect(message).toContain('✗ PgBouncer 1.25.2: prepared statements through a transaction pool');
    expect(message).toContain(`needed by ${tests125.join(', ')}`);
    expect(message).toMatch(
      new RegExp(
        `not built: download of ${gone.url.replace(/\./g, '\\.')} failed: fetch failed \\(ECONNREFUSED`,
      ),
    );
    expect(message).toContain('export PROXYLAB_PGBOUNCER_1_25=/path/to/pgbouncer');
    expect(message).toContain(`./configure --prefix=`);
    expect(listing(root)).toEqual([]);
  });

  test('report only (--no-install) downloads nothing', async () => {
    // GIVEN
    const tarball = fakeSourceTarball(`PgBouncer ${VERSION}`, path.join(scratchDir('configure-ran-'), 'log'));
    const server = await served(tarball);
    const root = path.join(scratchDir('cache-'), 'proxylab');
    const tool = pgbouncer125Tool({ release: release(server.url, sha256(tarball)), root }, inCache(root));
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
    const tool = pgbouncer125Tool(
      { release: release(server.url, sha256(tarball)), root, missingDeps: () => [] },
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
    expect(log).toContain(`preflight: built PgBouncer ${VERSION}: ${cachedPgbouncer(VERSION, root)}`);
  });
});
