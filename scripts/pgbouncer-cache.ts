/**
 * A current PgBouncer (≥ 1.21) for the tests, built by the preflight (scripts/preflight.ts) into a
 * per-user cache when neither $PROXYLAB_PGBOUNCER_MODERN nor the cache has one:
 *
 *   ${XDG_CACHE_HOME:-~/.cache}/proxylab/pgbouncer-1.24.1/bin/pgbouncer   (+ build.json beside bin/)
 *   (as root: /var/cache/proxylab/…, which the unprivileged user that runs the servers can reach)
 *
 * From **Debian's source package** (DEBIAN_PGBOUNCER, the one place its version is pinned), fetched
 * with `apt-get source` through a PRIVATE apt configuration — its own sources.list with one
 * `deb-src` line for the release that ships it, on the archive the machine's own apt sources name and
 * with Debian's archive keyring, its own lists and cache directories — so the system's sources are
 * never touched. apt verifies the Sources index against the release's signed InRelease and each
 * file against the index; the .dsc must also have the SHA-256 pinned here; dpkg-source checks the
 * tarballs against the .dsc and applies Debian's patches (its security fixes). Then
 * `./configure --without-cares && make pgbouncer` (libevent, OpenSSL, pkg-config), and the binary
 * must say `PgBouncer <version>`. Its build.json records where it came from and the binary's
 * SHA-256: a cache whose binary no longer matches, reports another version, or is a symlink is not
 * trusted (rebuilt, or refused when it is a link).
 *
 * `PROXYLAB_PGBOUNCER_SOURCE=upstream` builds the pinned upstream release instead (the tarball URL
 * and published SHA-256 the pooler host builds, lib/poolers/pgbouncer/releases.ts): needs the
 * internet beyond the package registries.
 *
 * Everything is built in a temporary directory beside the cache and renamed into place only when
 * it runs, so a half-built cache is never found.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { findPgbouncerRelease, type PgbouncerRelease } from '../lib/poolers/pgbouncer/releases';
import { parseToolVersion, type PackageManager } from '../lib/local/binaries';

/**
 * The current PgBouncer the integration tests run besides Debian's 1.18: Debian's source package,
 * pinned here and nowhere else. Debian 13 "trixie" ships 1.24.1 with Debian's security patches
 * (deb13u2); it builds on Debian 12. Its .orig.tar.gz is upstream's release tarball: the same
 * SHA-256 (da72a3ab…) as PGBOUNCER_RELEASES' 1.24.1 from Homebrew's formula.
 * The .dsc's SHA-256 is the one trixie's signed Sources index lists for this version.
 */
export const DEBIAN_PGBOUNCER = {
  sourcePackage: 'pgbouncer',
  debianVersion: '1.24.1-1+deb13u2',
  upstreamVersion: '1.24.1',
  /** The Debian release whose `deb-src` line the private apt configuration holds. */
  suite: 'trixie',
  component: 'main',
  dsc: 'pgbouncer_1.24.1-1+deb13u2.dsc',
  dscSha256: 'dc1bc121e10a7ac2da987e72bb13798c94a7ff162ddc480d93a3f93c19b637a7',
} as const;

/** The pinned upstream release `PROXYLAB_PGBOUNCER_SOURCE=upstream` builds (the cloud hosts' default). */
export const PGBOUNCER_UPSTREAM_VERSION = '1.25.2';

/** Which source the preflight builds: Debian's source package unless this says `upstream`. */
export const PGBOUNCER_SOURCE_ENV = 'PROXYLAB_PGBOUNCER_SOURCE';

/** The pinned release (URL and published SHA-256) from the one table the pooler host uses too. */
export function pinnedRelease(version: string = PGBOUNCER_UPSTREAM_VERSION): PgbouncerRelease {
  const release = findPgbouncerRelease(version);
  if (release === undefined)
    throw new Error(`PgBouncer ${version} is not in lib/poolers/pgbouncer/releases.ts (PGBOUNCER_RELEASES)`);
  return release;
}

/** Where root's builds go: /root is 0700, and the servers run as the unprivileged `postgres` user. */
export const ROOT_CACHE_ROOT = '/var/cache/proxylab';

/**
 * `${XDG_CACHE_HOME:-~/.cache}/proxylab` (XDG_CACHE_HOME only when absolute, as the spec says); as
 * root without XDG_CACHE_HOME, /var/cache/proxylab: root's tests start PgBouncer as the `postgres`
 * user (PostgreSQL refuses root), who cannot enter root's 0700 home to run a binary there.
 */
export function proxylabCacheRoot(
  env: NodeJS.ProcessEnv = process.env,
  uid: number | null = typeof process.getuid === 'function' ? process.getuid() : null,
): string {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, 'proxylab');
  if (uid === 0) return ROOT_CACHE_ROOT;
  return path.join(os.homedir(), '.cache', 'proxylab');
}

/** Where the build of `version` lives: `<root>/pgbouncer-<version>/bin/pgbouncer`. */
export function cachedPgbouncer(
  version: string = DEBIAN_PGBOUNCER.upstreamVersion,
  root = proxylabCacheRoot(),
): string {
  return path.join(root, `pgbouncer-${version}`, 'bin', 'pgbouncer');
}

/** One thing the build needs, how to tell it is here, and the OS package that provides it. */
export interface BuildDep {
  readonly name: string;
  /** argv that exits 0 when it is here. */
  readonly probe: readonly string[];
  readonly packages: Readonly<Record<PackageManager, string | null>>;
}

/** PgBouncer's build requirements (its README: GNU Make, libevent 2, pkg-config, OpenSSL), plus cc and tar. */
export const BUILD_DEPS: readonly BuildDep[] = [
  {
    name: 'a C compiler (cc)',
    probe: ['cc', '--version'],
    packages: { 'apt-get': 'gcc', dnf: 'gcc', yum: 'gcc', brew: null },
  },
  {
    name: 'make',
    probe: ['make', '--version'],
    packages: { 'apt-get': 'make', dnf: 'make', yum: 'make', brew: null },
  },
  {
    name: 'pkg-config',
    probe: ['pkg-config', '--version'],
    packages: {
      'apt-get': 'pkg-config',
      dnf: 'pkgconf-pkg-config',
      yum: 'pkgconfig',
      brew: 'pkg-config',
    },
  },
  {
    name: 'libevent headers (pkg-config libevent)',
    probe: ['pkg-config', '--exists', 'libevent'],
    packages: { 'apt-get': 'libevent-dev', dnf: 'libevent-devel', yum: 'libevent-devel', brew: 'libevent' },
  },
  {
    name: 'OpenSSL headers (pkg-config openssl)',
    probe: ['pkg-config', '--exists', 'openssl'],
    packages: { 'apt-get': 'libssl-dev', dnf: 'openssl-devel', yum: 'openssl-devel', brew: 'openssl@3' },
  },
  {
    name: 'tar',
    probe: ['tar', '--version'],
    packages: { 'apt-get': 'tar', dnf: 'tar', yum: 'tar', brew: null },
  },
];

/** What building Debian's source package needs besides BUILD_DEPS: apt-get to fetch it, dpkg-source to unpack it. */
export const DEBIAN_SOURCE_DEPS: readonly BuildDep[] = [
  {
    name: 'apt-get',
    probe: ['apt-get', '--version'],
    packages: { 'apt-get': 'apt', dnf: null, yum: null, brew: null },
  },
  {
    name: 'dpkg-source (dpkg-dev)',
    probe: ['dpkg-source', '--version'],
    packages: { 'apt-get': 'dpkg-dev', dnf: null, yum: null, brew: null },
  },
  {
    name: 'xz',
    probe: ['xz', '--version'],
    packages: { 'apt-get': 'xz-utils', dnf: 'xz', yum: 'xz', brew: 'xz' },
  },
];

function runs(argv: readonly string[]): boolean {
  const [file, ...args] = argv;
  if (file === undefined) return false;
  return spawnSync(file, args, { stdio: 'ignore', timeout: 10000 }).status === 0;
}

/** The build requirements that are not here (`probe` runs each dep's probe argv). */
export function missingBuildDeps(
  deps: readonly BuildDep[] = BUILD_DEPS,
  probe: (argv: readonly string[]) => boolean = runs,
): BuildDep[] {
  return deps.filter((d) => !probe(d.probe));
}

/** The OS packages that provide `deps` (deduplicated), and the deps no package of `pm` provides. */
export function buildDepPackages(
  deps: readonly BuildDep[],
  pm: PackageManager | null,
): { packages: string[]; unpackaged: BuildDep[] } {
  const packages: string[] = [];
  const unpackaged: BuildDep[] = [];
  for (const d of deps) {
    const pkg = pm === null ? null : d.packages[pm];
    if (pkg === null) unpackaged.push(d);
    else if (!packages.includes(pkg)) packages.push(pkg);
  }
  return { packages, unpackaged };
}

export interface BuildOptions {
  /** Default: the pinned 1.25.2 (pinnedRelease()); tests pass a local URL and its checksum. */
  readonly release?: PgbouncerRelease;
  /** Default: proxylabCacheRoot(). */
  readonly root?: string;
  /** Whole download, from the request to the last byte. */
  readonly downloadTimeoutMs?: number;
  readonly log: (line: string) => void;
  /**
   * Installs the OS packages for missing build requirements (true when it did), or null when we
   * may not (no root / passwordless sudo, or report-only): then the missing ones are the reason.
   */
  readonly installPackages: ((packages: readonly string[]) => boolean) | null;
  readonly packageManager: PackageManager | null;
  /** Default: BUILD_DEPS and running their probes (tests pass their own). */
  readonly missingDeps?: () => BuildDep[];
}

export type BuildResult =
  { readonly ok: true; readonly file: string } | { readonly ok: false; readonly reason: string };

const DEFAULT_DOWNLOAD_TIMEOUT_MS = 120_000;
const BUILD_STEP_TIMEOUT_MS = 15 * 60_000;

/** name, message, code and cause of a thrown value (duck-typed: under jest it is another realm's Error). */
function errorParts(err: unknown): { name?: string; message?: string; code?: string; cause?: unknown } {
  if (typeof err !== 'object' || err === null) return { message: String(err) };
  const e = err as Record<string, unknown>;
  const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  return { name: text(e.name), message: text(e.message), code: text(e.code), cause: e.cause };
}

function describeFetchError(err: unknown, timeoutMs: number): string {
  const e = errorParts(err);
  if (e.name === 'TimeoutError' || e.name === 'AbortError')
    return `no complete answer within ${timeoutMs / 1000} s`;
  const c = e.cause === undefined ? null : errorParts(e.cause);
  const detail =
    c === null ? '' : ` (${[c.code ?? c.name, c.message].filter((x) => x !== undefined).join(': ')})`;
  return `${e.message ?? String(err)}${detail}`;
}

async function download(url: string, timeoutMs: number): Promise<Buffer | string> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
    if (!res.ok) return `HTTP ${res.status} ${res.statusText}`;
    return Buffer.from(await res.arrayBuffer());
  } catch (err) {
    return describeFetchError(err, timeoutMs);
  }
}

/**
 * Run one build step with its output in `logFile`; null when it exited 0, else why not (`label`
 * names it there instead of its whole argv). Asynchronous: the event loop goes on meanwhile.
 */
export async function step(
  argv: readonly string[],
  cwd: string,
  logFile: string,
  timeoutMs: number = BUILD_STEP_TIMEOUT_MS,
  label: string = argv.join(' '),
): Promise<string | null> {
  const [file, ...args] = argv;
  if (file === undefined) return 'empty command';
  fs.appendFileSync(logFile, `\n$ ${argv.join(' ')}\n`);
  const fd = fs.openSync(logFile, 'a');
  try {
    return await new Promise<string | null>((resolve) => {
      const child = spawn(file, args, { cwd, stdio: ['ignore', fd, fd] });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, timeoutMs);
      child.on('error', (err) => {
        clearTimeout(timer);
        resolve(`\`${label}\` did not run: ${err.message}`);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (timedOut) resolve(`\`${label}\` did not finish within ${timeoutMs / 1000} s`);
        else if (code === 0) resolve(null);
        else resolve(`\`${label}\` exited with ${code ?? `signal ${String(signal)}`}`);
      });
    });
  } finally {
    fs.closeSync(fd);
  }
}

export function tail(file: string, lines: number): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** The version `bin --version` reports, or null when it does not run. */
export function reportedVersion(bin: string): string | null {
  const res = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 10000 });
  if (res.status !== 0) return null;
  return parseToolVersion(`${res.stdout}\n${res.stderr}`);
}

/**
 * The build requirements `deps` that are missing, installed first when `opts` may: null when all
 * are here, else the reason naming them and their packages.
 */
export function ensureBuildDeps(
  opts: Pick<BuildOptions, 'missingDeps' | 'installPackages' | 'packageManager' | 'log'>,
  deps: readonly BuildDep[],
): string | null {
  const check = opts.missingDeps ?? (() => missingBuildDeps(deps));
  let missing = check();
  if (missing.length === 0) return null;
  const { packages, unpackaged } = buildDepPackages(missing, opts.packageManager);
  if (opts.installPackages !== null && packages.length > 0 && unpackaged.length === 0) {
    opts.log(`preflight: installing the build requirements ${packages.join(', ')}`);
    opts.installPackages(packages);
    missing = check();
  }
  if (missing.length === 0) return null;
  const after = buildDepPackages(missing, opts.packageManager);
  const pkgs = after.packages.length > 0 ? `; packages: ${after.packages.join(' ')}` : '';
  return `the build needs ${missing.map((d) => d.name).join(', ')}${pkgs}`;
}

/**
 * Why the cache cannot take a build of `version`: its root (or the root's parent) is a symlink, not
 * a directory or not writable, or the version's own directory is a symlink; null when it can.
 */
export function cacheProblem(root: string, version: string): string | null {
  const dir = path.dirname(path.dirname(cachedPgbouncer(version, root)));
  try {
    if (fs.lstatSync(dir).isSymbolicLink())
      return `${dir} is a symbolic link: not trusted as a cached build (remove it)`;
  } catch {
    // absent: fine
  }
  return cacheRootProblem(root);
}

/** Why the cache root cannot be trusted or written (a symlink, not a directory, not writable), or null. */
function cacheRootProblem(root: string): string | null {
  for (const dir of [root, path.dirname(root)]) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(dir);
    } catch {
      continue; // made below
    }
    if (st.isSymbolicLink()) return `${dir} is a symbolic link: not trusted as the build cache (remove it)`;
    if (!st.isDirectory()) return `${dir} is not a directory`;
    try {
      fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
    } catch {
      return `${dir} is not writable by this user`;
    }
    return null;
  }
  return null;
}

/** build.json beside a cached build's bin/: where it came from and what the binary's SHA-256 was. */
const CacheManifestSchema = z.strictObject({
  version: z.string().regex(/^\d+\.\d+\.\d+$/),
  /** `Debian source package pgbouncer 1.24.1-1+deb13u2 (trixie, …)` or the upstream URL */
  source: z.string().max(1000),
  binarySha256: z.string().regex(/^[0-9a-f]{64}$/),
  builtAt: z.iso.datetime(),
  buildSeconds: z.number().nonnegative(),
});
export type CacheManifest = z.infer<typeof CacheManifestSchema>;

export const MANIFEST_FILE = 'build.json';

export const fileSha256 = (file: string): string =>
  createHash('sha256').update(fs.readFileSync(file)).digest('hex');

export type CacheState =
  | { readonly ok: true; readonly file: string; readonly version: string; readonly manifest: CacheManifest }
  | { readonly ok: false; readonly absent: boolean; readonly reason: string };

/**
 * The cached build of `version` under `root`, when it can be trusted: a real directory (no link on
 * the way), a regular binary whose SHA-256 is the one its build.json recorded and which reports
 * `version`. Otherwise why not (`absent` when nothing is there).
 */
export function checkCachedPgbouncer(
  version: string = DEBIAN_PGBOUNCER.upstreamVersion,
  root = proxylabCacheRoot(),
): CacheState {
  const file = cachedPgbouncer(version, root);
  const dir = path.dirname(path.dirname(file));
  const no = (reason: string, absent = false): CacheState => ({ ok: false, absent, reason });
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch {
    return no(`${dir} does not exist`, true);
  }
  if (st.isSymbolicLink()) return no(`${dir} is a symbolic link: not trusted`);
  for (const f of [path.dirname(file), file]) {
    try {
      const s = fs.lstatSync(f);
      if (s.isSymbolicLink()) return no(`${f} is a symbolic link: not trusted`);
    } catch {
      return no(`${f} is missing`);
    }
  }
  if (!fs.lstatSync(file).isFile()) return no(`${file} is not a regular file`);
  const manifestFile = path.join(dir, MANIFEST_FILE);
  let manifest: CacheManifest;
  try {
    const st = fs.lstatSync(manifestFile);
    if (!st.isFile()) return no(`${manifestFile} is not a regular file`);
    if (st.size > 64 * 1024) return no(`${manifestFile} is too large`);
    const parsed = CacheManifestSchema.safeParse(JSON.parse(fs.readFileSync(manifestFile, 'utf8')));
    if (!parsed.success)
      return no(`${manifestFile} is not a build record: ${parsed.error.issues[0]?.message ?? ''}`);
    manifest = parsed.data;
  } catch {
    return no(`${manifestFile} is missing or not JSON`);
  }
  if (manifest.binarySha256 !== fileSha256(file))
    return no(`${file} is not the binary its ${MANIFEST_FILE} recorded (SHA-256 differs)`);
  const reported = reportedVersion(file);
  if (reported !== version)
    return no(`${file} reports ${reported ?? 'no version'}, not PgBouncer ${version}`);
  return { ok: true, file, version, manifest };
}

/**
 * Move a verified build from `staging` (holding bin/pgbouncer) to the cache as `version`, with its
 * build.json; an untrusted cache of the same version there is removed first. The result, or why not.
 */
export function installIntoCache(
  staging: string,
  version: string,
  source: string,
  started: number,
  root: string,
): BuildResult {
  const built = path.join(staging, 'bin', 'pgbouncer');
  const reported = reportedVersion(built);
  if (reported !== version)
    return {
      ok: false,
      reason: `the build's ${built} --version reports ${reported ?? 'nothing (it does not run)'}, not PgBouncer ${version}`,
    };
  const manifest: CacheManifest = {
    version,
    source,
    binarySha256: fileSha256(built),
    builtAt: new Date().toISOString(),
    buildSeconds: Math.round((Date.now() - started) / 100) / 10,
  };
  fs.writeFileSync(path.join(staging, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  const target = cachedPgbouncer(version, root);
  const targetDir = path.dirname(path.dirname(target));
  fs.mkdirSync(root, { recursive: true });
  const before = checkCachedPgbouncer(version, root);
  if (!before.ok && !before.absent && !fs.lstatSync(targetDir).isSymbolicLink())
    fs.rmSync(targetDir, { recursive: true, force: true });
  try {
    fs.renameSync(staging, targetDir);
  } catch (err) {
    // Another preflight finished first: use its build when it is a trusted one.
    const other = checkCachedPgbouncer(version, root);
    if (!other.ok) return { ok: false, reason: `could not move the build to ${targetDir}: ${String(err)}` };
  }
  return { ok: true, file: target };
}

/**
 * Build `release` into the cache; `{ ok: true, file }` with the binary, or the reason it was not
 * built (download failed, checksum mismatch — nothing unpacked then —, build requirements missing,
 * build failed, or the result reports another version). Nothing is left in the cache on failure.
 */
export async function buildPgbouncer(opts: BuildOptions): Promise<BuildResult> {
  const release = opts.release ?? pinnedRelease();
  const root = opts.root ?? proxylabCacheRoot();
  const timeoutMs = opts.downloadTimeoutMs ?? DEFAULT_DOWNLOAD_TIMEOUT_MS;
  const { version, url, sha256 } = release;
  const target = cachedPgbouncer(version, root);
  const targetDir = path.dirname(path.dirname(target));
  const started = Date.now();

  opts.log(`preflight: building PgBouncer ${version} into ${targetDir} (from ${url})`);
  const body = await download(url, timeoutMs);
  if (typeof body === 'string') return { ok: false, reason: `download of ${url} failed: ${body}` };
  const actual = createHash('sha256').update(body).digest('hex');
  if (actual !== sha256)
    return {
      ok: false,
      reason:
        `refused ${url}: its SHA-256 is ${actual}, but lib/poolers/pgbouncer/releases.ts pins ${sha256}; ` +
        `nothing was unpacked or built`,
    };
  opts.log(`preflight: ${path.basename(new URL(url).pathname)} matches its pinned SHA-256 ${sha256}`);

  const needs = ensureBuildDeps(opts, BUILD_DEPS);
  if (needs !== null) return { ok: false, reason: needs };
  const untrusted = cacheProblem(root, version);
  if (untrusted !== null) return { ok: false, reason: untrusted };

  fs.mkdirSync(root, { recursive: true });
  const work = fs.mkdtempSync(path.join(root, `.build-pgbouncer-${version}-`));
  const logFile = path.join(work, 'build.log');
  const keptLog = path.join(root, `pgbouncer-${version}-build.log`);
  try {
    const tarball = path.join(work, `pgbouncer-${version}.tar.gz`);
    fs.writeFileSync(tarball, body);
    const src = path.join(work, 'src');
    fs.mkdirSync(src);
    const staging = path.join(work, 'install');
    const jobs = Math.max(1, Math.min(4, os.availableParallelism()));
    const srcDir = path.join(src, `pgbouncer-${version}`);
    const steps: [readonly string[], string][] = [
      [['tar', '-xzf', tarball, '-C', src], work],
      [['./configure', `--prefix=${staging}`], srcDir],
      [['make', `-j${jobs}`], srcDir],
      [['make', 'install'], srcDir],
    ];
    for (const [argv, cwd] of steps) {
      if (argv[0] === './configure' && !fs.existsSync(path.join(srcDir, 'configure')))
        return { ok: false, reason: `${url} has no pgbouncer-${version}/configure` };
      opts.log(`preflight: ${argv.join(' ')}`);
      const failed = await step(argv, cwd, logFile);
      if (failed !== null) {
        fs.copyFileSync(logFile, keptLog);
        return { ok: false, reason: `${failed}; log: ${keptLog}\n${tail(logFile, 15)}` };
      }
    }
    const res = installIntoCache(staging, version, url, started, root);
    if (!res.ok) return res;
    fs.rmSync(keptLog, { force: true });
    opts.log(
      `preflight: built PgBouncer ${version} from ${url} in ${((Date.now() - started) / 1000).toFixed(0)} s: ${target}`,
    );
    return res;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The same build by hand (for the message when the preflight cannot do it). */
export function manualBuildCommands(
  release: PgbouncerRelease = pinnedRelease(),
  root = '"${XDG_CACHE_HOME:-$HOME/.cache}/proxylab"',
): string {
  const tarball = `pgbouncer-${release.version}.tar.gz`;
  return [
    `curl -fLO ${release.url}`,
    `echo '${release.sha256}  ${tarball}' | sha256sum -c`,
    `tar -xzf ${tarball}`,
    `cd pgbouncer-${release.version}`,
    `./configure --prefix=${root}/pgbouncer-${release.version}`,
    'make',
    'make install',
  ].join(' && ');
}
