/**
 * `proxylab deploy` of a lab without internet egress (`network.egress: "vpc-endpoints"`): its hosts
 * cannot download a pooler release from upstream, so the operator's machine does it first. For
 * every release the lab's poolers pin: download its upstream tarball (the URL in the driver's
 * release table), keep it only if its SHA-256 is the PUBLISHED one (the same check the host runs
 * again), and put it where the CDK app ships it from as an asset keyed by that hash
 * (lib/poolers/sources.ts, lib/constructs/pooler-sources.ts). A file already there with the right
 * hash is kept; one with another hash is replaced. Nothing unverified is ever left at that path:
 * the download goes to a temporary file beside it and is renamed only after the check.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from '../core/atomic-write';
import { InfrastructureError } from '../core/errors';
import type { LabConfig } from '../config/types';
import type { TarballRelease } from '../poolers/driver';
import { poolerDriver } from '../poolers/registry';
import { poolerSourcePath } from '../poolers/sources';

export interface StagedPoolerSource {
  readonly release: TarballRelease;
  readonly file: string;
  /** `downloaded` now, or `kept`: already there with the published SHA-256. */
  readonly action: 'downloaded' | 'kept';
  readonly bytes: number;
}

export interface StageOptions {
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** @default process.env (where the staged archives live: lib/poolers/sources.ts) */
  readonly env?: NodeJS.ProcessEnv;
  /** Per download. @default 120 000 */
  readonly timeoutMs?: number;
  /** Release → its upstream URL (tests serve it from 127.0.0.1). @default release.url */
  readonly urlOf?: (release: TarballRelease) => string;
}

/** The releases a lab's poolers pin, once each: tarballs with a published SHA-256, the only kind deploy stages. */
export function labPoolerReleases(lab: LabConfig): TarballRelease[] {
  const out = new Map<string, TarballRelease>();
  for (const p of lab.poolers) {
    const driver = poolerDriver(p.kind);
    const release = driver.releases.find((r) => r.version === p.version);
    if (!release)
      throw new InfrastructureError(
        `pooler ${p.name}: ${p.kind} ${p.version} has no release entry (validate the lab first)`,
      );
    // Lab validation refuses such a pooler without internet; reached only with an unvalidated lab.
    if (release.sha256 === undefined)
      throw new InfrastructureError(
        `pooler ${p.name}: ${driver.displayName} ${p.version} cannot be staged for hosts without internet: ${driver.host.needsInternet ?? 'its release has no published SHA-256'}`,
        { code: 'pooler-source-not-stageable' },
      );
    out.set(`${release.product}-${release.version}`, release);
  }
  return [...out.values()];
}

/** The lab's hosts have no internet path: their pooler sources must be staged. */
export function needsStagedPoolerSources(lab: LabConfig): boolean {
  return lab.network.mode === 'existing' && lab.network.egress === 'vpc-endpoints' && lab.poolers.length > 0;
}

function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Downloads (or keeps) every pooler release `lab` pins, each checked against its published SHA-256. */
export async function stagePoolerSources(
  lab: LabConfig,
  opts: StageOptions = {},
): Promise<StagedPoolerSource[]> {
  return stageReleases(labPoolerReleases(lab), opts);
}

/** Downloads (or keeps) each release, checked against its published SHA-256. */
export async function stageReleases(
  releases: readonly TarballRelease[],
  opts: StageOptions = {},
): Promise<StagedPoolerSource[]> {
  const fetchFn = opts.fetch ?? globalThis.fetch;
  const staged: StagedPoolerSource[] = [];
  for (const release of releases) {
    const file = poolerSourcePath(release, opts.env);
    if (existsSync(file)) {
      const bytes = readFileSync(file);
      if (sha256Of(bytes) === release.sha256) {
        staged.push({ release, file, action: 'kept', bytes: bytes.length });
        continue;
      }
    }
    const url = opts.urlOf?.(release) ?? release.url;
    let body: Uint8Array;
    try {
      const res = await fetchFn(url, { signal: AbortSignal.timeout(opts.timeoutMs ?? 120_000) });
      if (!res.ok) throw new Error(`HTTP ${res.status} ${res.statusText}`);
      body = new Uint8Array(await res.arrayBuffer());
    } catch (err) {
      throw new InfrastructureError(
        `cannot download ${release.product} ${release.version} from ${url} to stage it for the lab's hosts (they have no internet): ${err instanceof Error ? err.message : String(err)}; ` +
          `or put the release's tarball at ${file} yourself (its SHA-256 must be ${release.sha256})`,
        { code: 'pooler-source-download-failed', cause: err },
      );
    }
    const got = sha256Of(body);
    if (got !== release.sha256)
      throw new InfrastructureError(
        `${release.product} ${release.version} from ${url} has SHA-256 ${got}, not the published ${release.sha256} (${release.checksumSource}): not staged, not deployed`,
        { code: 'pooler-source-checksum-mismatch' },
      );
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileAtomic(file, body);
    staged.push({ release, file, action: 'downloaded', bytes: body.length });
  }
  return staged;
}
