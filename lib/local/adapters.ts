/**
 * The local adapter of each self-hosted pooler product, keyed by product: where its binary comes
 * from (for the version a lab pins, when this machine has it) and how one pooler of it is started.
 * The stack (./stack.ts) asks this map and never compares a product's name; a new product is a
 * compile error here until it has an adapter (`Record<PoolerProduct, …>`).
 *
 * Which binary runs a spec that pins a version (`local --lab`): one that reports exactly that
 * version — PgBouncer's found one ($PROXYLAB_PGBOUNCER, PATH, the OS package) or a build in the
 * proxylab cache (`npm run preflight` builds Debian's source package of 1.24.1, or with
 * PROXYLAB_PGBOUNCER_SOURCE=upstream the pinned upstream release, into
 * `${XDG_CACHE_HOME:-~/.cache}/proxylab/pgbouncer-<version>/bin/pgbouncer`, /var/cache/proxylab/… as
 * root) —, else the one given by $PROXYLAB_PGBOUNCER, else the newest there is; the run then says
 * which version ran instead and which cells that changes (`versionChange`).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KINDS } from '../products/kinds';
import { productEntry } from '../products';
import { versionAtLeast } from '../products/version';
import { poolerDriver } from '../poolers/registry';
import type { PoolerProduct } from '../poolers/products';
import type { RunAs } from '../exec/process';
import { findPoolerBinary, parseToolVersion, type LocalBinaries } from './binaries';
import { startPgbouncer } from './pgbouncer';
import { startPgdoorman } from './pgdoorman';
import type { LocalPooler, LocalPoolerSpec } from './pooler';
import type { PostgresCluster } from './postgres';

/** A binary and the version it reports. */
export interface PoolerBinary {
  readonly file: string;
  readonly version: string;
}

/** What starting one pooler needs besides its spec. */
export interface StartContext {
  readonly bins: LocalBinaries;
  readonly binary: PoolerBinary;
  readonly baseDir: string;
  readonly runAs: RunAs | null;
  readonly server: PostgresCluster;
  readonly poolPercent: number;
  readonly excludePorts: Set<number>;
}

export interface LocalAdapter {
  /** Its binary comes from the OS packages PostgreSQL's come from (lib/local/binaries.ts findBinaries). */
  readonly withPostgres: boolean;
  /** Binaries of it beside the one found with PostgreSQL's: the proxylab cache's builds. */
  cached(): PoolerBinary[];
  start(spec: LocalPoolerSpec, o: StartContext): Promise<LocalPooler>;
}

/**
 * The proxylab cache root, as scripts/pgbouncer-cache.ts `proxylabCacheRoot` places builds:
 * $XDG_CACHE_HOME/proxylab (absolute only), as root /var/cache/proxylab (the servers run as the
 * unprivileged `postgres` user, who cannot enter /root), else ~/.cache/proxylab.
 */
export function cacheRoots(
  env: NodeJS.ProcessEnv = process.env,
  uid: number | null = typeof process.getuid === 'function' ? process.getuid() : null,
): string[] {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && path.isAbsolute(xdg)) return [path.join(xdg, 'proxylab')];
  return [uid === 0 ? '/var/cache/proxylab' : path.join(os.homedir(), '.cache', 'proxylab')];
}

/**
 * `<root>/pgbouncer-<version>/bin/pgbouncer` builds that answer `--version` with their directory's
 * version; a link, or a file others may write, is not trusted.
 */
export function cachedPgbouncers(roots: readonly string[] = cacheRoots()): PoolerBinary[] {
  const out: PoolerBinary[] = [];
  for (const root of roots) {
    let entries: string[];
    try {
      entries = fs.readdirSync(root);
    } catch {
      continue;
    }
    for (const e of entries) {
      const m = /^pgbouncer-(\d+\.\d+\.\d+)$/.exec(e);
      if (!m) continue;
      const file = path.join(root, e, 'bin', 'pgbouncer');
      try {
        const st = fs.lstatSync(file);
        if (!st.isFile() || (st.mode & 0o022) !== 0) continue;
      } catch {
        continue;
      }
      const res = spawnSync(file, ['--version'], { encoding: 'utf8', timeout: 10000 });
      const version = res.status === 0 ? parseToolVersion(`${res.stdout}\n${res.stderr}`) : null;
      if (version === m[1]) out.push({ file, version });
    }
  }
  return out;
}

export const LOCAL_ADAPTERS: Readonly<Record<PoolerProduct, LocalAdapter>> = {
  pgbouncer: {
    withPostgres: true,
    cached: () => cachedPgbouncers(),
    start: (spec, o) =>
      startPgbouncer({
        bins: o.bins,
        binary: o.binary,
        baseDir: o.baseDir,
        runAs: o.runAs,
        server: o.server,
        poolPercent: o.poolPercent,
        instance: spec.instance,
        excludePorts: o.excludePorts,
        processes: spec.processes,
        settings: spec.settings ?? {},
      }),
  },
  pgdoorman: {
    withPostgres: false,
    cached: () => [],
    start: (spec, o) =>
      startPgdoorman({
        binary: o.binary,
        psql: o.bins.psql,
        baseDir: o.baseDir,
        runAs: o.runAs,
        server: o.server,
        poolPercent: o.poolPercent,
        instance: spec.instance,
        excludePorts: o.excludePorts,
        settings: spec.settings ?? {},
      }),
  },
};

/**
 * The binary that runs `spec`: one reporting the version it pins if any candidate does; else the
 * one its product's variable names (the user's choice), else the newest candidate. null: none.
 */
export function chooseBinary(
  spec: Pick<LocalPoolerSpec, 'product' | 'version'>,
  found: PoolerBinary | null,
  cached: readonly PoolerBinary[],
  env: NodeJS.ProcessEnv = process.env,
): PoolerBinary | null {
  const all = [...(found ? [found] : []), ...cached];
  if (spec.version === undefined) return found ?? newest(all);
  const exact = all.find((b) => b.version === spec.version);
  if (exact) return exact;
  const named = env[poolerDriver(spec.product).localBinary.envVar];
  if (found !== null && named !== undefined && named !== '') return found;
  return newest(all);
}

function newest(all: readonly PoolerBinary[]): PoolerBinary | null {
  let best: PoolerBinary | null = null;
  for (const b of all)
    if (best === null || (b.version !== best.version && versionAtLeast(b.version, best.version))) best = b;
  return best;
}

/**
 * What running `ran` instead of the `asked` version changes, per capability of the product's kinds
 * (its entry's): `prepared statements: not available on PgBouncer 1.18.0 (needs ≥ 1.21)`. Empty: the
 * same version, or nothing a cell depends on.
 */
export function versionChange(product: PoolerProduct, asked: string, ran: string): string[] {
  if (asked === ran) return [];
  const entry = productEntry(product);
  const out = new Set<string>();
  for (const kind of entry.kinds) {
    const k = KINDS[kind];
    const s = { maxPreparedStatements: entry.prepared?.onValue ?? null };
    const a = entry.capabilities(k, asked, s);
    const r = entry.capabilities(k, ran, s);
    if (a.preparedStatementsSwitch?.available !== r.preparedStatementsSwitch?.available)
      out.add(
        `prepared-statement cells: ${r.preparedStatementsSwitch?.reason ?? `available on ${entry.label} ${ran}`}`,
      );
    if ((a.rollingRestart ?? null) !== (r.rollingRestart ?? null))
      out.add(
        `pooler-restart: its old process ${r.rollingRestart ?? 'unknown'} (${asked}: ${a.rollingRestart})`,
      );
    const ta = entry.session(k, asked).trackedParameters.join(',');
    const tr = entry.session(k, ran).trackedParameters.join(',');
    if (ta !== tr) out.add(`session-state cells: tracked parameters ${tr} (${asked}: ${ta})`);
  }
  return [...out];
}

/**
 * The specs this machine can run, each with its binary (chooseBinary), and one line per pooler saying
 * what runs: the version the lab asked and the one run (with what that changes), and the lab's
 * settings. A product with no binary at all is left out with a line saying how to get it.
 */
export function availablePoolers(
  asked: readonly LocalPoolerSpec[],
  bins: LocalBinaries,
  given: Partial<Record<PoolerProduct, PoolerBinary | null>> | undefined,
  log: (line: string) => void,
): {
  specs: LocalPoolerSpec[];
  skipped: Array<{ spec: LocalPoolerSpec; why: string }>;
  binaries: Map<string, PoolerBinary>;
} {
  const binaries = new Map<string, PoolerBinary>();
  const specs: LocalPoolerSpec[] = [];
  const skipped: Array<{ spec: LocalPoolerSpec; why: string }> = [];
  const cache = new Map<PoolerProduct, PoolerBinary[]>();
  for (const spec of asked) {
    const adapter = LOCAL_ADAPTERS[spec.product];
    const driver = poolerDriver(spec.product);
    const found =
      given !== undefined && spec.product in given
        ? (given[spec.product] ?? null)
        : adapter.withPostgres
          ? bins.pgbouncer !== ''
            ? { file: bins.pgbouncer, version: bins.poolerVersion }
            : null
          : findPoolerBinary(driver);
    // the cache is looked at only for a lab's pinned version (a given binary is the tests' choice)
    if (spec.version !== undefined && given === undefined && !cache.has(spec.product))
      cache.set(spec.product, adapter.cached());
    const binary = chooseBinary(spec, found, cache.get(spec.product) ?? []);
    if (binary !== null) {
      binaries.set(spec.instance, binary);
      specs.push(spec);
      const line = poolerRunLine(spec, binary);
      if (line !== null) log(line);
      continue;
    }
    const how = driver.localBinary.howToGet ?? [];
    const named = process.env[driver.localBinary.envVar];
    const where =
      named !== undefined && named !== ''
        ? `$${driver.localBinary.envVar}=${named} is not a ${driver.displayName} that answers --version`
        : `$${driver.localBinary.envVar}, PATH`;
    const why =
      `${driver.displayName} not found (${where}): running without ${spec.instance}.` +
      (how.length > 0 ? ` To get it:\n    ${how.join('\n    ')}` : '');
    log(why);
    skipped.push({ spec, why });
  }
  return { specs, skipped, binaries };
}

/**
 * `  bouncer-fast-retry: PgBouncer 1.24.1 (the lab pins 1.25.2, not on this machine: …); settings
 * server_login_retry = 2` — null for a spec that pins nothing and sets nothing (`proxylab local`
 * without --lab says what it runs as before).
 */
export function poolerRunLine(spec: LocalPoolerSpec, binary: PoolerBinary): string | null {
  const settings = Object.entries(spec.settings ?? {});
  if (spec.version === undefined && settings.length === 0) return null;
  const name = poolerDriver(spec.product).displayName;
  const changes = spec.version !== undefined ? versionChange(spec.product, spec.version, binary.version) : [];
  const version =
    spec.version === undefined || spec.version === binary.version
      ? `${name} ${binary.version}${spec.version !== undefined ? ' (the version the lab pins)' : ''}`
      : `${name} ${binary.version} instead of ${spec.version} (the lab's; not on this machine: \`npm run preflight\` builds one into the proxylab cache, or set $${poolerDriver(spec.product).localBinary.envVar})` +
        (changes.length > 0
          ? `; that changes: ${changes.join('; ')}`
          : '; no cell depends on the difference');
  const set =
    settings.length > 0
      ? `settings ${settings.map(([k, v]) => `${k} = ${Array.isArray(v) ? v.join(',') : String(v)}`).join(', ')}`
      : "settings: the product's defaults";
  return `  ${spec.instance}: ${version}; ${set}`;
}
