/**
 * Build the current PgBouncer the tests need from Debian's source package (DEBIAN_PGBOUNCER in
 * scripts/pgbouncer-cache.ts) into the per-user cache — the preflight's default way to one.
 *
 * apt does the fetching and the verifying, in a private configuration under the build's temporary
 * directory (never the system's sources, lists or cache):
 *  - sources.list: one `deb-src [signed-by=<Debian's archive keyring>] <archive> <suite> <component>`
 *    line, on the Debian archive the machine's own apt sources name (else deb.debian.org);
 *  - `apt-get update --error-on=any`: the suite's InRelease must verify against that keyring, and
 *    every error fails (apt-get(8): "-eany, --error-on=any: Fail the update command if any error
 *    occured, even a transient one"); `Acquire::http::Timeout` and no retries bound a silent archive;
 *  - `apt-get source --download-only pgbouncer=<version>`: each file is checked against the signed
 *    Sources index; the .dsc must also have the SHA-256 pinned in DEBIAN_PGBOUNCER;
 *  - `dpkg-source -x`: checks the tarballs against the .dsc and applies Debian's patches.
 * Then `./configure --without-cares` and `make pgbouncer` (c-ares is optional: without it PgBouncer
 * resolves with libevent's evdns), and the binary must report the pinned upstream version.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  BUILD_DEPS,
  type BuildOptions,
  type BuildResult,
  cacheProblem,
  cachedPgbouncer,
  DEBIAN_PGBOUNCER,
  DEBIAN_SOURCE_DEPS,
  ensureBuildDeps,
  fileSha256,
  installIntoCache,
  proxylabCacheRoot,
  step,
  tail,
} from './pgbouncer-cache';

/** Debian's archive keyring (package debian-archive-keyring): it signs every release's InRelease. */
export const DEBIAN_KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';
/** The archive when the machine's apt sources name none (Debian's own redirector). */
export const DEFAULT_DEBIAN_ARCHIVE = 'http://deb.debian.org/debian';
/** A Debian mirror to use instead of the one the machine's apt sources name. */
export const DEBIAN_ARCHIVE_ENV = 'PROXYLAB_DEBIAN_ARCHIVE';

/** apt's connect/read timeout (s) and each apt step's whole limit: a dead archive stops well under a minute. */
const APT_HTTP_TIMEOUT_S = 20;
const APT_STEP_TIMEOUT_MS = 50_000;

/**
 * The Debian archive URIs apt `sources` text names (one-line `deb …` entries and deb822 `URIs:`
 * fields), the security archive left out: the archive the private configuration fetches from.
 */
export function debianArchives(sourcesText: string): string[] {
  const uris: string[] = [];
  for (const raw of sourcesText.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    const oneLine = /^deb(?:-src)?\s+(?:\[[^\]]*\]\s+)?(\S+)/.exec(line);
    const deb822 = /^URIs:\s*(.+)$/i.exec(line);
    const found = oneLine ? [oneLine[1] ?? ''] : deb822 ? (deb822[1] ?? '').split(/\s+/) : [];
    for (const uri of found) {
      const u = uri.replace(/\/+$/, '');
      if (/^https?:\/\/[^\s]+\/debian$/.test(u) && !uris.includes(u)) uris.push(u);
    }
  }
  return uris;
}

/** $PROXYLAB_DEBIAN_ARCHIVE, else the first Debian archive the machine's apt sources name, else deb.debian.org. */
export function debianArchive(env: NodeJS.ProcessEnv = process.env, etcApt = '/etc/apt'): string {
  const fromEnv = env[DEBIAN_ARCHIVE_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv.replace(/\/+$/, '');
  const files = [path.join(etcApt, 'sources.list')];
  try {
    for (const f of fs.readdirSync(path.join(etcApt, 'sources.list.d')).sort())
      if (f.endsWith('.list') || f.endsWith('.sources')) files.push(path.join(etcApt, 'sources.list.d', f));
  } catch {
    // no sources.list.d
  }
  for (const f of files) {
    try {
      const found = debianArchives(fs.readFileSync(f, 'utf8'))[0];
      if (found !== undefined) return found;
    } catch {
      // unreadable or absent
    }
  }
  return DEFAULT_DEBIAN_ARCHIVE;
}

/** The private sources.list: one deb-src line for the release that ships the pinned version. */
export function privateSourcesList(archive: string, keyring: string = DEBIAN_KEYRING): string {
  const { suite, component } = DEBIAN_PGBOUNCER;
  return `deb-src [signed-by=${keyring}] ${archive} ${suite} ${component}\n`;
}

/** apt-get's options for a private configuration rooted at `aptDir` (never the system's sources). */
export function privateAptOptions(aptDir: string, isRoot: boolean): string[] {
  const o = (kv: string): string[] => ['-o', kv];
  return [
    ...o(`Dir::Etc::SourceList=${path.join(aptDir, 'sources.list')}`),
    ...o(`Dir::Etc::SourceParts=${path.join(aptDir, 'sources.list.d')}`),
    ...o(`Dir::State::Lists=${path.join(aptDir, 'lists')}`),
    ...o(`Dir::Cache=${path.join(aptDir, 'cache')}`),
    ...o(`Acquire::http::Timeout=${APT_HTTP_TIMEOUT_S}`),
    ...o(`Acquire::https::Timeout=${APT_HTTP_TIMEOUT_S}`),
    ...o('Acquire::Retries=0'),
    ...o('Acquire::Languages=none'),
    // As root apt downloads as _apt, which cannot write into this user's private directories.
    ...(isRoot ? o('APT::Sandbox::User=root') : []),
  ];
}

/** Make the private apt directories and its sources.list under `aptDir`. */
function preparePrivateApt(aptDir: string, archive: string): void {
  for (const d of ['sources.list.d', 'lists/partial', 'cache/archives/partial'])
    fs.mkdirSync(path.join(aptDir, d), { recursive: true });
  fs.writeFileSync(path.join(aptDir, 'sources.list'), privateSourcesList(archive));
}

/** What the preflight says for the build's source (also the build.json `source`). */
export function debianSourceLabel(archive: string): string {
  const d = DEBIAN_PGBOUNCER;
  return `Debian source package ${d.sourcePackage} ${d.debianVersion} (${d.suite}, ${archive})`;
}

export type DebianBuildOptions = Omit<BuildOptions, 'release' | 'downloadTimeoutMs'> & {
  /** Default: debianArchive(). */
  readonly archive?: string;
  /** Each apt step's whole limit (default 50 s). */
  readonly aptTimeoutMs?: number;
};

/**
 * Build DEBIAN_PGBOUNCER into the cache: `{ ok: true, file }`, or why not (archive unreachable or
 * refusing, signature or checksum wrong, build requirements missing, build failed, wrong version).
 * Nothing is left in the cache on failure; the log of a failed step is kept beside it.
 */
export async function buildFromDebianSource(opts: DebianBuildOptions): Promise<BuildResult> {
  const d = DEBIAN_PGBOUNCER;
  const root = opts.root ?? proxylabCacheRoot();
  const archive = opts.archive ?? debianArchive();
  const version = d.upstreamVersion;
  const target = cachedPgbouncer(version, root);
  const started = Date.now();
  const aptTimeout = opts.aptTimeoutMs ?? APT_STEP_TIMEOUT_MS;
  const untrusted = cacheProblem(root, version);
  if (untrusted !== null) return { ok: false, reason: untrusted };
  if (!fs.existsSync(DEBIAN_KEYRING))
    return { ok: false, reason: `${DEBIAN_KEYRING} is missing (package debian-archive-keyring)` };
  const needs = ensureBuildDeps(opts, [...DEBIAN_SOURCE_DEPS, ...BUILD_DEPS]);
  if (needs !== null) return { ok: false, reason: needs };

  opts.log(`preflight: building PgBouncer ${version} from ${debianSourceLabel(archive)} into ${target}`);
  fs.mkdirSync(root, { recursive: true });
  const work = fs.mkdtempSync(path.join(root, `.build-pgbouncer-${version}-`));
  const logFile = path.join(work, 'build.log');
  const keptLog = path.join(root, `pgbouncer-${version}-build.log`);
  const aptDir = path.join(work, 'apt');
  const dl = path.join(work, 'source');
  const srcDir = path.join(work, 'src');
  const staging = path.join(work, 'install');
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const apt = ['apt-get', '-q', ...privateAptOptions(aptDir, isRoot)];
  const jobs = Math.max(1, Math.min(4, os.availableParallelism()));
  const failed = (why: string): BuildResult => {
    fs.copyFileSync(logFile, keptLog);
    return { ok: false, reason: `${why}; log: ${keptLog}\n${tail(logFile, 12)}` };
  };
  try {
    preparePrivateApt(aptDir, archive);
    fs.mkdirSync(dl);
    fs.writeFileSync(logFile, '');
    const fetchSteps: [readonly string[], string, string][] = [
      [[...apt, 'update', '--error-on=any'], work, 'apt-get update'],
      [[...apt, 'source', '--download-only', `${d.sourcePackage}=${d.debianVersion}`], dl, 'apt-get source'],
    ];
    for (const [argv, cwd, label] of fetchSteps) {
      opts.log(`preflight: ${label} (private configuration: ${path.join(aptDir, 'sources.list')})`);
      const why = await step(argv, cwd, logFile, aptTimeout, label);
      if (why !== null) return failed(`${archive}: ${why}`);
    }
    const dsc = path.join(dl, d.dsc);
    const dscSum = fs.existsSync(dsc) ? fileSha256(dsc) : 'missing';
    if (dscSum !== d.dscSha256)
      return failed(
        `refused ${d.dsc}: its SHA-256 is ${dscSum}, but scripts/pgbouncer-cache.ts pins ${d.dscSha256}`,
      );
    const buildSteps: [readonly string[], string][] = [
      [['dpkg-source', '-x', dsc, srcDir], dl],
      [['./configure', '--without-cares', `--prefix=${staging}`], srcDir],
      [['make', `-j${jobs}`, 'pgbouncer'], srcDir],
    ];
    for (const [argv, cwd] of buildSteps) {
      opts.log(`preflight: ${argv[0] === 'dpkg-source' ? `dpkg-source -x ${d.dsc}` : argv.join(' ')}`);
      const why = await step(argv, cwd, logFile);
      if (why !== null) return failed(why);
    }
    fs.mkdirSync(path.join(staging, 'bin'), { recursive: true });
    fs.copyFileSync(path.join(srcDir, 'pgbouncer'), path.join(staging, 'bin', 'pgbouncer'));
    fs.chmodSync(path.join(staging, 'bin', 'pgbouncer'), 0o755);
    const res = installIntoCache(staging, version, debianSourceLabel(archive), started, root);
    if (!res.ok) return res;
    fs.rmSync(keptLog, { force: true });
    opts.log(
      `preflight: built PgBouncer ${version} from Debian's source package ${d.debianVersion} in ` +
        `${((Date.now() - started) / 1000).toFixed(0)} s: ${res.file}`,
    );
    return res;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
