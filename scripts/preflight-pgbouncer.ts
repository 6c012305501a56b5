/**
 * The preflight's two PgBouncer entries (scripts/preflight.ts TOOLS): how the tests find Debian's
 * 1.18 and a current one (≥ 1.21), and how the current one is built when missing (Debian's source
 * package, scripts/pgbouncer-debian.ts; or the pinned upstream release, scripts/pgbouncer-cache.ts).
 */
import { findPgbouncer } from '../lib/local/binaries';
import { supportsMaxPreparedStatements } from '../lib/poolers/pgbouncer/config';
import {
  BUILD_DEPS,
  buildDepPackages,
  buildPgbouncer,
  cachedPgbouncer,
  checkCachedPgbouncer,
  DEBIAN_PGBOUNCER,
  DEBIAN_SOURCE_DEPS,
  manualBuildCommands,
  PGBOUNCER_SOURCE_ENV,
  PGBOUNCER_UPSTREAM_VERSION,
  pinnedRelease,
  type BuildOptions,
} from './pgbouncer-cache';
import { buildFromDebianSource, type DebianBuildOptions } from './pgbouncer-debian';
import type { Tool } from './preflight-tool';

/** Where the tests look for a current PgBouncer (≥ 1.21) before the preflight's build of it. */
export const PGBOUNCER_MODERN_ENV = 'PROXYLAB_PGBOUNCER_MODERN';
/** Where the tests look for Debian's PgBouncer 1.18 when it is not found on PATH or in /usr/sbin. */
export const PGBOUNCER_1_18_ENV = 'PROXYLAB_PGBOUNCER_1_18';

/**
 * A current PgBouncer (≥ 1.21, the first with max_prepared_statements): $PROXYLAB_PGBOUNCER_MODERN
 * (and only it, when set), else the preflight's build of Debian's source package in the per-user
 * cache (checked: not a link, the version and SHA-256 its build recorded), else the pinned upstream
 * release built there by `PROXYLAB_PGBOUNCER_SOURCE=upstream`, else a ≥ 1.21 on PATH or in the
 * usual places. The version is what the binary reports: tests expect what that version can do.
 */
export function findPgbouncerModern(): { file: string; version: string } | null {
  const fromEnv = process.env[PGBOUNCER_MODERN_ENV];
  if (fromEnv !== undefined && fromEnv !== '')
    return findPgbouncer(process.platform, [fromEnv], supportsMaxPreparedStatements);
  const cached = checkCachedPgbouncer();
  if (cached.ok) return { file: cached.file, version: cached.version };
  return (
    findPgbouncer(
      process.platform,
      [cachedPgbouncer(PGBOUNCER_UPSTREAM_VERSION)],
      supportsMaxPreparedStatements,
    ) ?? findPgbouncer(process.platform, undefined, supportsMaxPreparedStatements)
  );
}

/** Debian's PgBouncer 1.18 (no max_prepared_statements): $PROXYLAB_PGBOUNCER_1_18, else on PATH or in /usr/sbin. */
export function findPgbouncer118(): string | null {
  const accept = (v: string): boolean => v.startsWith('1.18.');
  const fromEnv = process.env[PGBOUNCER_1_18_ENV];
  if (fromEnv !== undefined && fromEnv !== '')
    return findPgbouncer(process.platform, [fromEnv], accept)?.file ?? null;
  return findPgbouncer(process.platform, undefined, accept)?.file ?? null;
}

/**
 * A test needs a pinned PgBouncer when it imports its helper from test/helpers/pgbouncer-versions.ts
 * (the only way to one: test/unit/preflight.test.ts checks that). Matching the import, not the bare
 * name, keeps a capture file named `pgbouncer125-…` from counting as a user.
 */
export function importsHelper(name: string): RegExp {
  return new RegExp(`import\\s*\\{[^}]*\\b${name}\\b[^}]*\\}\\s*from\\s*['"][^'"]*pgbouncer-versions['"]`);
}

/** Options of the current-PgBouncer entry's build (tests pass a local archive, a cache and short timeouts). */
export type ModernBuild = Pick<DebianBuildOptions, 'root' | 'archive' | 'aptTimeoutMs' | 'missingDeps'> &
  Pick<BuildOptions, 'release' | 'downloadTimeoutMs'> & {
    /** Default: `upstream` when $PROXYLAB_PGBOUNCER_SOURCE says so, else Debian's source package. */
    readonly source?: 'debian' | 'upstream';
  };

/**
 * The current-PgBouncer entry (≥ 1.21): found as findPgbouncerModern() does; when missing, built
 * from Debian's source package (scripts/pgbouncer-debian.ts) into the cache, or from the pinned
 * upstream release with PROXYLAB_PGBOUNCER_SOURCE=upstream (scripts/pgbouncer-cache.ts).
 */
export function pgbouncerModernTool(
  build: ModernBuild = {},
  find: () => string | null = () => {
    const f = findPgbouncerModern();
    return f === null ? null : `${f.file} (PgBouncer ${f.version}${describeCachedBuild(f.file)})`;
  },
): Tool {
  const d = DEBIAN_PGBOUNCER;
  const cached = cachedPgbouncer(d.upstreamVersion, build.root);
  const upstream =
    (build.source ?? (process.env[PGBOUNCER_SOURCE_ENV] === 'upstream' ? 'upstream' : 'debian')) ===
    'upstream';
  return {
    name: 'PgBouncer ≥ 1.21',
    purpose: 'prepared statements through a transaction pool (max_prepared_statements), rolling restarts',
    usedBy: importsHelper('pgbouncerModern'),
    find,
    install: {
      kind: 'build',
      build: async (ctx) => {
        const before = checkCachedPgbouncer(
          upstream ? PGBOUNCER_UPSTREAM_VERSION : d.upstreamVersion,
          build.root,
        );
        if (!before.ok && !before.absent)
          ctx.log(`preflight: the cached build is not trusted (${before.reason}): building it again`);
        const res = upstream
          ? await buildPgbouncer({ ...build, ...ctx, release: build.release ?? pinnedRelease() })
          : await buildFromDebianSource({ ...build, ...ctx });
        return res.ok ? null : res.reason;
      },
      how: [
        `any one of:`,
        `let the preflight build Debian's source package ${d.sourcePackage} ${d.debianVersion} into ${cached}`,
        `  (needs Debian's archive and ${buildDepPackages([...DEBIAN_SOURCE_DEPS, ...BUILD_DEPS], 'apt-get').packages.join(', ')})`,
        `export ${PGBOUNCER_MODERN_ENV}=/path/to/pgbouncer (any PgBouncer ≥ 1.21)`,
        `install a distribution package of PgBouncer ≥ 1.21 (Debian 13, Ubuntu 24.04, PGDG, Homebrew) on PATH`,
        `with the internet: ${PGBOUNCER_SOURCE_ENV}=upstream npm run preflight builds the pinned upstream ${PGBOUNCER_UPSTREAM_VERSION}, or by hand:`,
        `  ${manualBuildCommands(pinnedRelease())}`,
      ].join('\n        '),
    },
    requiredInCi: true,
  };
}

/** `, built from <source> on <date>` for a binary in the cache, else ''. */
function describeCachedBuild(file: string): string {
  const state = checkCachedPgbouncer();
  return state.ok && state.file === file
    ? `, built from ${state.manifest.source} on ${state.manifest.builtAt.slice(0, 10)}`
    : '';
}
