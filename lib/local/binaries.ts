/**
 * Find PostgreSQL (>= 14: initdb, postgres, pgbench, psql) and PgBouncer on this machine; install
 * them with the OS package manager when allowed and possible, otherwise say exactly what to run.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InfrastructureError } from '../core/errors';
import type { PoolerDriver } from '../poolers/driver';
import { pgbouncerDriver } from '../poolers/pgbouncer/driver';

export const MIN_POSTGRES_MAJOR = 14;

export interface LocalBinaries {
  /** Directory holding initdb, postgres, pgbench, psql. */
  readonly bindir: string;
  readonly initdb: string;
  readonly postgres: string;
  readonly pgbench: string;
  readonly psql: string;
  /** '' when the run needs no PgBouncer and none was found. */
  readonly pgbouncer: string;
  /** `15.18` */
  readonly serverVersion: string;
  readonly pgbenchVersion: string;
  /** PgBouncer's version; '' with no PgBouncer. */
  readonly poolerVersion: string;
}

/**
 * A pooler product's binary that is not installed from OS packages (PgDoorman): $<envVar>, PATH,
 * then the usual places its driver lists. Returns null when none runs and names a version.
 */
export function findPoolerBinary(
  driver: Pick<PoolerDriver, 'localBinary'>,
  platform: NodeJS.Platform = process.platform,
): { file: string; version: string } | null {
  const bin = driver.localBinary;
  const fromEnv = process.env[bin.envVar];
  const files: string[] = [];
  if (typeof fromEnv === 'string' && fromEnv !== '') files.push(fromEnv);
  else {
    for (const d of (process.env.PATH ?? '').split(path.delimiter))
      if (d !== '') files.push(path.join(d, bin.executable));
    files.push(...bin.searchPaths(platform));
  }
  for (const file of new Set(files)) {
    if (!isExecutable(file)) continue;
    const res = spawnSync(file, ['--version'], { encoding: 'utf8', timeout: 10000 });
    const version = res.status === 0 ? bin.parseVersion(`${res.stdout}\n${res.stderr}`) : null;
    if (version !== null) return { file, version };
  }
  return null;
}

export interface FindOptions {
  /** Install missing packages with the OS package manager (root or passwordless sudo only). */
  readonly install: boolean;
  /** The run starts a PgBouncer (a missing one is an error, or installed). @default true */
  readonly needPgbouncer?: boolean;
  readonly log?: (line: string) => void;
  readonly platform?: NodeJS.Platform;
  /** Look only here (tests): PostgreSQL bin directories and PgBouncer binaries. */
  readonly searchPaths?: {
    readonly postgresDirs: readonly string[];
    readonly pgbouncerFiles: readonly string[];
  };
}

const PG_TOOLS = ['initdb', 'postgres', 'pgbench', 'psql'] as const;

/** `postgres (PostgreSQL) 15.18 (Debian …)` → `15.18`; PgBouncer's `PgBouncer 1.18.0` → `1.18.0`. */
export function parseToolVersion(text: string): string | null {
  const m = /(?:PostgreSQL\)|PgBouncer|pgbouncer)\s+(\d+(?:\.\d+)*)/i.exec(text);
  return m?.[1] ?? null;
}

function versionOf(file: string): string | null {
  const res = spawnSync(file, ['--version'], { encoding: 'utf8', timeout: 10000 });
  if (res.status !== 0) return null;
  return parseToolVersion(`${res.stdout}\n${res.stderr}`);
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function majorOf(version: string): number {
  return Number.parseInt(version.split('.')[0] ?? '', 10);
}

function globVersionDirs(parent: string, pattern: RegExp, suffix: string): string[] {
  let entries: string[];
  try {
    entries = fs.readdirSync(parent);
  } catch {
    return [];
  }
  return entries
    .filter((e) => pattern.test(e))
    .sort((a, b) => versionKey(b) - versionKey(a))
    .map((e) => path.join(parent, e, suffix));
}

function versionKey(name: string): number {
  const m = /(\d+)(?:\.(\d+))?/.exec(name);
  return m ? Number(m[1]) * 1000 + Number(m[2] ?? 0) : 0;
}

/** Directories that may hold the PostgreSQL server binaries, most preferred first. */
function postgresCandidateDirs(platform: NodeJS.Platform = process.platform): string[] {
  const dirs: string[] = [];
  const fromEnv = process.env.PROXYLAB_PG_BINDIR;
  if (typeof fromEnv === 'string' && fromEnv !== '') dirs.push(fromEnv);
  const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8', timeout: 10000 });
  if (pgConfig.status === 0 && pgConfig.stdout.trim() !== '') dirs.push(pgConfig.stdout.trim());
  dirs.push(...globVersionDirs('/usr/lib/postgresql', /^\d+$/, 'bin')); // Debian / Ubuntu
  dirs.push(...globVersionDirs('/usr', /^pgsql-\d+$/, 'bin')); // PGDG RPMs
  if (platform === 'darwin') {
    for (const prefix of ['/opt/homebrew/opt', '/usr/local/opt']) {
      dirs.push(...globVersionDirs(prefix, /^postgresql@\d+$/, 'bin'));
      dirs.push(path.join(prefix, 'postgresql', 'bin'));
    }
    dirs.push('/Applications/Postgres.app/Contents/Versions/latest/bin');
  }
  // Absolute: a relative PATH entry (`PATH=../tools/…:$PATH`) would be resolved again against
  // the servers' own working directory, where it names nothing.
  dirs.push(
    ...(process.env.PATH ?? '')
      .split(path.delimiter)
      .filter((d) => d !== '')
      .map((d) => path.resolve(d)),
  );
  dirs.push('/usr/bin', '/usr/local/bin', '/usr/local/pgsql/bin');
  return [...new Set(dirs)];
}

/** Another PostgreSQL server build on this machine: its bin directory and `postgres --version`. */
export interface PostgresBuild {
  readonly bindir: string;
  readonly version: string;
}

/**
 * Where another minor build of the stack's PostgreSQL major may be (the local stand-in of
 * `minor-upgrade`): $PROXYLAB_PG_MINOR_BIN first (a bin directory), then every place the stack's own
 * PostgreSQL is looked for. Debian and Ubuntu install one build per major
 * (/usr/lib/postgresql/<major>/bin), so a second one is usually a source build named by the variable.
 */
export function minorBuildCandidateDirs(platform: NodeJS.Platform = process.platform): string[] {
  const fromEnv = process.env.PROXYLAB_PG_MINOR_BIN;
  const first = typeof fromEnv === 'string' && fromEnv !== '' ? [path.resolve(fromEnv)] : [];
  return [...new Set([...first, ...postgresCandidateDirs(platform)])];
}

/**
 * The first `postgres` among `dirs` of the same major as `current` with another version (another
 * minor build), or null. The stack's own binary (by its real path) is skipped.
 */
export function findOtherMinorBuild(
  current: PostgresBuild,
  dirs: readonly string[] = minorBuildCandidateDirs(),
): PostgresBuild | null {
  const realOf = (file: string): string => {
    try {
      return fs.realpathSync(file);
    } catch {
      return file;
    }
  };
  const own = realOf(path.join(current.bindir, 'postgres'));
  for (const dir of dirs) {
    const file = path.join(dir, 'postgres');
    if (!isExecutable(file) || realOf(file) === own) continue;
    const version = versionOf(file);
    if (version !== null && majorOf(version) === majorOf(current.version) && version !== current.version)
      return { bindir: dir, version };
  }
  return null;
}

/** The pooler's binary: $<envVar>, PATH, then the usual places its driver lists. */
function poolerCandidates(platform: NodeJS.Platform = process.platform): string[] {
  const bin = pgbouncerDriver.localBinary;
  const files: string[] = [];
  const fromEnv = process.env[bin.envVar];
  if (typeof fromEnv === 'string' && fromEnv !== '') files.push(path.resolve(fromEnv));
  // Absolute (see postgresCandidateDirs): PgBouncer runs in its own working directory.
  for (const d of (process.env.PATH ?? '').split(path.delimiter))
    if (d !== '') files.push(path.resolve(d, bin.executable));
  files.push(...bin.searchPaths(platform));
  return [...new Set(files)];
}

interface PgFound {
  readonly bindir: string;
  readonly version: string;
}

/** The newest PostgreSQL (>= MIN_POSTGRES_MAJOR) with all of PG_TOOLS, and the too-old ones seen. */
export function findPostgres(
  platform: NodeJS.Platform,
  dirs?: readonly string[],
): { found: PgFound | null; tooOld: string[] } {
  const tooOld: string[] = [];
  for (const dir of dirs ?? postgresCandidateDirs(platform)) {
    if (!PG_TOOLS.every((t) => isExecutable(path.join(dir, t)))) continue;
    const version = versionOf(path.join(dir, 'postgres'));
    if (version === null) continue;
    if (majorOf(version) < MIN_POSTGRES_MAJOR) {
      tooOld.push(`${dir} (PostgreSQL ${version})`);
      continue;
    }
    return { found: { bindir: dir, version }, tooOld };
  }
  return { found: null, tooOld };
}

/**
 * The first PgBouncer among `files` (default: $PROXYLAB_PGBOUNCER, PATH, the usual directories)
 * whose version `accept`s (default: any).
 */
export function findPgbouncer(
  platform: NodeJS.Platform,
  files?: readonly string[],
  accept: (version: string) => boolean = () => true,
): { file: string; version: string } | null {
  for (const file of files ?? poolerCandidates(platform)) {
    if (!isExecutable(file)) continue;
    const version = versionOf(file);
    if (version !== null && accept(version)) return { file, version };
  }
  return null;
}

export type PackageManager = 'apt-get' | 'dnf' | 'yum' | 'brew';

/** OS package names for the PostgreSQL server tools and PgBouncer, per package manager. */
export function postgresPackages(
  pm: PackageManager,
  missing: { postgres: boolean; pgbouncer: boolean },
): string[] {
  const pkgs: string[] = [];
  switch (pm) {
    case 'apt-get':
      if (missing.postgres) pkgs.push('postgresql', 'postgresql-contrib');
      break;
    case 'dnf':
    case 'yum':
      if (missing.postgres) pkgs.push('postgresql-server', 'postgresql-contrib', 'postgresql');
      break;
    case 'brew':
      if (missing.postgres) pkgs.push('postgresql@16');
      break;
  }
  const poolerPackage = pgbouncerDriver.localBinary.packages[pm];
  if (missing.pgbouncer && poolerPackage !== undefined) pkgs.push(poolerPackage);
  return pkgs;
}

/** `apt-get install -y --no-install-recommends PKGS…` and its dnf/yum/brew equivalents. */
export function packageInstallCommand(pm: PackageManager, packages: readonly string[]): string[] {
  switch (pm) {
    case 'apt-get':
      return ['apt-get', 'install', '-y', '--no-install-recommends', ...packages];
    case 'dnf':
    case 'yum':
      return [pm, 'install', '-y', ...packages];
    case 'brew':
      return ['brew', 'install', ...packages];
  }
}

/** The exact command that installs what is missing, for this package manager. */
export function installCommand(
  pm: PackageManager,
  missing: { postgres: boolean; pgbouncer: boolean },
): string[] {
  return packageInstallCommand(pm, postgresPackages(pm, missing));
}

function onPath(file: string): boolean {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((d) => d !== '' && isExecutable(path.join(d, file)));
}

export function detectPackageManager(platform: NodeJS.Platform = process.platform): PackageManager | null {
  if (platform === 'darwin') return onPath('brew') ? 'brew' : null;
  for (const pm of ['apt-get', 'dnf', 'yum'] as const) if (onPath(pm)) return pm;
  return null;
}

/** How to run an install: directly as root, via passwordless sudo, or not at all. brew never as root. */
export function privilegePrefix(pm: PackageManager): string[] | null {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (pm === 'brew') return isRoot ? null : [];
  if (isRoot) return [];
  const sudo = spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore', timeout: 10000 });
  return sudo.status === 0 ? ['sudo', '-n'] : null;
}

function spawnArgv(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  const [file, ...args] = argv;
  if (file === undefined) return false;
  return spawnSync(file, args, { stdio: 'inherit', env }).status === 0;
}

/** Run an install command (after `apt-get update` for apt) with the prefix from privilegePrefix(). */
export function runInstall(
  prefix: readonly string[],
  cmd: readonly string[],
  log: (line: string) => void,
): boolean {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (cmd[0] === 'apt-get') {
    log(`installing: ${[...prefix, 'apt-get', 'update'].join(' ')}`);
    if (!spawnArgv([...prefix, 'apt-get', 'update'], env)) return false;
  }
  log(`installing: ${[...prefix, ...cmd].join(' ')}`);
  return spawnArgv([...prefix, ...cmd], env);
}

/**
 * Find the binaries; when something is missing install it (if allowed and we have the rights),
 * then look again. Throws InfrastructureError naming the exact command otherwise.
 */
export function findBinaries(opts: FindOptions): LocalBinaries {
  const platform = opts.platform ?? process.platform;
  const log = opts.log ?? (() => undefined);
  const search = opts.searchPaths;
  const needPgbouncer = opts.needPgbouncer ?? true;
  let pg = findPostgres(platform, search?.postgresDirs);
  let bouncer = findPgbouncer(platform, search?.pgbouncerFiles);
  if ((pg.found === null || (bouncer === null && needPgbouncer)) && opts.install) {
    const pm = detectPackageManager(platform);
    const prefix = pm ? privilegePrefix(pm) : null;
    if (pm && prefix) {
      const cmd = installCommand(pm, {
        postgres: pg.found === null,
        pgbouncer: bouncer === null && needPgbouncer,
      });
      if (!runInstall(prefix, cmd, log)) log(`install command failed: ${[...prefix, ...cmd].join(' ')}`);
      pg = findPostgres(platform, search?.postgresDirs);
      bouncer = findPgbouncer(platform, search?.pgbouncerFiles);
    }
  }
  if (pg.found === null || (bouncer === null && needPgbouncer)) {
    const missing = { postgres: pg.found === null, pgbouncer: bouncer === null && needPgbouncer };
    const what = [
      missing.postgres ? `PostgreSQL >= ${MIN_POSTGRES_MAJOR} (initdb, postgres, pgbench, psql)` : null,
      missing.pgbouncer ? 'PgBouncer' : null,
    ]
      .filter((x): x is string => x !== null)
      .join(' and ');
    const pm = detectPackageManager(platform);
    const hint = pm
      ? `install with: ${pm === 'brew' ? '' : 'sudo '}${installCommand(pm, missing).join(' ')}`
      : 'install them with your package manager';
    const old = pg.tooOld.length ? ` Found too old: ${pg.tooOld.join(', ')}.` : '';
    const why = opts.install ? '' : ' (--no-install given)';
    throw new InfrastructureError(
      `${what} not found${why}.${old} ${hint}; or point PROXYLAB_PG_BINDIR / PROXYLAB_PGBOUNCER at them.`,
    );
  }
  const dir = pg.found.bindir;
  const pgbenchVersion = versionOf(path.join(dir, 'pgbench')) ?? pg.found.version;
  return {
    bindir: dir,
    initdb: path.join(dir, 'initdb'),
    postgres: path.join(dir, 'postgres'),
    pgbench: path.join(dir, 'pgbench'),
    psql: path.join(dir, 'psql'),
    pgbouncer: bouncer?.file ?? '',
    serverVersion: pg.found.version,
    pgbenchVersion,
    poolerVersion: bouncer?.version ?? '',
  };
}
