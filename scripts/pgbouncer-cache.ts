/**
 * PgBouncer 1.25.2 for the tests when neither PATH, $PROXYLAB_PGBOUNCER_1_25 nor
 * ../shared/tools has it: the preflight (scripts/preflight.ts) builds the pinned upstream release —
 * the same tarball URL and published SHA-256 the pooler host builds (lib/poolers/pgbouncer/releases.ts,
 * lib/constructs/pooler-user-data.ts) — into a per-user cache:
 *
 *   ${XDG_CACHE_HOME:-~/.cache}/proxylab/pgbouncer-1.25.2/bin/pgbouncer
 *
 * Download with a timeout, SHA-256 checked BEFORE anything is unpacked, then the build the
 * upstream README gives (`./configure --prefix=… && make && make install`; needs a C compiler,
 * make, pkg-config, libevent and OpenSSL headers), and the result must say `PgBouncer 1.25.2`.
 * It lands in the cache only when all of that holds (built in a temporary directory beside it,
 * then renamed), so a half-built cache is never found.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findPgbouncerRelease, type PgbouncerRelease } from '../lib/poolers/pgbouncer/releases';
import { parseToolVersion, type PackageManager } from '../lib/local/binaries';

/** The PgBouncer release the integration tests run besides Debian's 1.18. */
export const PGBOUNCER_TEST_VERSION = '1.25.2';

/** The pinned release (URL and published SHA-256) from the one table the pooler host uses too. */
export function pinnedRelease(version: string = PGBOUNCER_TEST_VERSION): PgbouncerRelease {
  const release = findPgbouncerRelease(version);
  if (release === undefined)
    throw new Error(`PgBouncer ${version} is not in lib/poolers/pgbouncer/releases.ts (PGBOUNCER_RELEASES)`);
  return release;
}

/** `${XDG_CACHE_HOME:-~/.cache}/proxylab` (XDG_CACHE_HOME only when absolute, as the spec says). */
export function proxylabCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'proxylab');
}

/** Where the build of `version` lives: `<root>/pgbouncer-<version>/bin/pgbouncer`. */
export function cachedPgbouncer(
  version: string = PGBOUNCER_TEST_VERSION,
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

/** Run one build step with its output in `logFile`; null when it exited 0, else why not. */
function step(argv: readonly string[], cwd: string, logFile: string): string | null {
  const [file, ...args] = argv;
  if (file === undefined) return 'empty command';
  fs.appendFileSync(logFile, `\n$ ${argv.join(' ')}\n`);
  const fd = fs.openSync(logFile, 'a');
  try {
    const res = spawnSync(file, args, { cwd, stdio: ['ignore', fd, fd], timeout: BUILD_STEP_TIMEOUT_MS });
    if (res.error) return `\`${argv.join(' ')}\` did not run: ${res.error.message}`;
    if (res.status !== 0)
      return `\`${argv.join(' ')}\` exited with ${res.status ?? `signal ${String(res.signal)}`}`;
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

function tail(file: string, lines: number): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** The version `bin --version` reports, or null when it does not run. */
function reportedVersion(bin: string): string | null {
  const res = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 10000 });
  if (res.status !== 0) return null;
  return parseToolVersion(`${res.stdout}\n${res.stderr}`);
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

  let missing = (opts.missingDeps ?? (() => missingBuildDeps()))();
  if (missing.length > 0) {
    const { packages, unpackaged } = buildDepPackages(missing, opts.packageManager);
    if (opts.installPackages !== null && packages.length > 0 && unpackaged.length === 0) {
      opts.log(`preflight: installing the build requirements ${packages.join(', ')}`);
      opts.installPackages(packages);
      missing = (opts.missingDeps ?? (() => missingBuildDeps()))();
    }
    if (missing.length > 0) {
      const after = buildDepPackages(missing, opts.packageManager);
      const pkgs = after.packages.length > 0 ? `; packages: ${after.packages.join(' ')}` : '';
      return {
        ok: false,
        reason: `the build needs ${missing.map((d) => d.name).join(', ')}${pkgs}`,
      };
    }
  }

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
      const failed = step(argv, cwd, logFile);
      if (failed !== null) {
        fs.copyFileSync(logFile, keptLog);
        return { ok: false, reason: `${failed}; log: ${keptLog}\n${tail(logFile, 15)}` };
      }
    }
    const built = path.join(staging, 'bin', 'pgbouncer');
    const reported = reportedVersion(built);
    if (reported !== version)
      return {
        ok: false,
        reason: `the build's ${built} --version reports ${reported ?? 'nothing (it does not run)'}, not PgBouncer ${version}`,
      };
    try {
      fs.renameSync(staging, targetDir);
    } catch (err) {
      // Another preflight finished first: use its build when it is the right one.
      if (reportedVersion(target) !== version)
        return { ok: false, reason: `could not move the build to ${targetDir}: ${String(err)}` };
    }
    fs.rmSync(keptLog, { force: true });
    opts.log(`preflight: built PgBouncer ${version}: ${target}`);
    return { ok: true, file: target };
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
