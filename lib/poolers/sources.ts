/**
 * Where `proxylab deploy` keeps the pooler release archives it staged for labs without internet
 * egress (lib/operator/pooler-sources.ts downloads each from its upstream URL and keeps it only if
 * its SHA-256 is the published one), and where the CDK app finds them to ship as assets
 * (lib/constructs/pooler-sources.ts):
 *
 *   ${XDG_CACHE_HOME:-~/.cache}/proxylab/pooler-sources/<product>-<version>.tar.gz
 *
 * (the per-user cache the preflight's PgBouncer build uses too; XDG_CACHE_HOME only when absolute,
 * as the XDG Base Directory spec says). `PROXYLAB_POOLER_SOURCES` names another directory.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import type { PoolerRelease } from './driver';

/** The directory staged archives live in. */
export function poolerSourcesDir(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.PROXYLAB_POOLER_SOURCES;
  if (override !== undefined && override !== '') return path.resolve(override);
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'proxylab', 'pooler-sources');
}

/** The file name of `release`'s staged archive (the upstream URL's last segment is the same tarball). */
export function poolerSourceFileName(release: Pick<PoolerRelease, 'product' | 'version'>): string {
  return `${release.product}-${release.version}.tar.gz`;
}

/** Where `release`'s staged archive is (or will be). */
export function poolerSourcePath(release: PoolerRelease, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(poolerSourcesDir(env), poolerSourceFileName(release));
}
