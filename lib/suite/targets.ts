/**
 * Targets (pure): references a run's adapters build (`directTarget`, `managedProxyTarget`,
 * `poolerTarget`), the descriptor of each (`describeTarget`: what the kind IS, and what its product's
 * entry says it CAN do at this version and with these settings — lib/products), and the matching
 * scenarios select targets by (`TargetMatch`: capabilities, never kind names). What a descriptor
 * stores is in every plan.json, so a new kind adds no field to it: product and instance are derived
 * from the kind and name (`targetProduct`, `targetInstance`).
 *
 * Prepared statements across server connections (`carriesPreparedStatements`) and every other
 * product fact are the product entries' (lib/products/<product>/entry.ts), with their sources.
 */
import { productEntry } from '../products';
import {
  KINDS,
  TARGET_KIND_NAMES,
  type ManagedProxyKind,
  type Placement,
  type Pooler,
  type PoolMode,
  type SelfHostedPooler,
  type TargetKind,
  type TargetProduct,
} from '../products/kinds';
import { effectiveSettings, type EffectiveSetting } from '../products/settings';
import type {
  PreparedSupport,
  RollingRestart,
  SessionHandling,
  SettingValue,
  TargetCapabilities,
} from '../products/types';
import type { PreparedStatementsMode, TargetRef } from './types';

export type { PreparedStatementsMode } from './types';
export {
  MANAGED_PROXY_KINDS,
  PLACEMENTS,
  POOL_MODES,
  POOLERS,
  PROXY_TARGET_KINDS,
  SELF_HOSTED_POOLERS,
  TARGET_KIND_NAMES,
  type ManagedProxyKind,
  type Placement,
  type Pooler,
  type PoolMode,
  type ProxyTargetKind,
  type SelfHostedPooler,
  type TargetKind,
  type TargetProduct,
} from '../products/kinds';
export {
  POOL_RESIZES,
  PREPARED_SWITCHES,
  ROLLING_RESTARTS,
  SESSION_CLEANUPS,
  type PoolResize,
  type PreparedSupport,
  type PreparedSwitch,
  type RollingRestart,
  type SessionCleanup,
  type SessionHandling,
  type TargetCapabilities,
} from '../products/types';
export { versionAtLeast } from '../products/version';

export interface TargetSettings {
  /** PgBouncer max_prepared_statements in effect; null when the pooler has no such setting. */
  readonly maxPreparedStatements: number | null;
  /**
   * PgBouncer processes sharing the port (so_reuseport): a single process tops out on one core.
   * Absent for other poolers and in plans written before it was recorded.
   */
  readonly processes?: number;
  /** Worker threads of each process of a multithreaded pooler (PgDoorman). Absent for others. */
  readonly workerThreads?: number;
  /**
   * Every catalogued setting of the product at this version as the target ran it: the lab's value,
   * the kit's, or the product's default (lib/products/settings.ts `effectiveSettings`). Absent: a
   * product without a catalogue (direct), or a plan written before settings were recorded.
   */
  readonly effective?: Readonly<Record<string, EffectiveSetting>>;
}

export interface TargetDescriptor {
  readonly kind: TargetKind;
  /** Unique in a run: `direct`, a proxy's lab name, `pgbouncer-transaction`. */
  readonly name: string;
  readonly pooler: Pooler;
  readonly poolMode: PoolMode | null;
  readonly placement: Placement;
  /** The pooler's version as probed at run time (`1.25.2`), the server's for direct; null unknown. */
  readonly version: string | null;
  readonly settings: TargetSettings;
  readonly capabilities: TargetCapabilities;
}

/**
 * What a scenario's target list, a catalog rule or a comparison side asks of a target; absent fields
 * match anything. Capabilities, never kind names.
 */
export interface TargetMatch {
  readonly pooled?: boolean;
  /** Multiplexes at transaction level: server connections are handed out per transaction. */
  readonly multiplexes?: boolean;
  /** AWS runs it (RDS Proxy; the RDS database itself for direct), rather than a host of the lab. */
  readonly managed?: boolean;
  /** A self-hosted pooler on its own host, not beside the load (nor on this machine). */
  readonly dedicatedHost?: boolean;
  readonly pooler?: readonly Pooler[];
  /**
   * true: targets that serve reads only; false: targets that take writes. Absent: any in a rule or
   * comparison, but a scenario's target list (`selectTargets`) selects read-only targets only when
   * it asks for them — a write script through a read-only endpoint fails every transaction.
   */
  readonly readOnly?: boolean;
  /** Protocol-level prepared statements survive the pool (in transaction mode: the pooler carries them). */
  readonly carriesPreparedStatements?: readonly PreparedSupport[];
  /** How a rolling restart retires the old process (TargetCapabilities.rollingRestart). */
  readonly rollingRestart?: readonly RollingRestart[];
  /**
   * true: a pooler running several processes on one port (PgBouncer with so_reuseport); false: one
   * process (a single PgBouncer, PgDoorman's one multithreaded process). Absent: either.
   */
  readonly multiProcess?: boolean;
}

/** The product behind a target, for code that names it or decides by it. */
export interface ProductInfo {
  readonly id: TargetProduct;
  /** The product's name in words (`PgBouncer`). */
  readonly label: string;
  /** Whether a run can probe its version (RDS Proxy reports none). */
  readonly versioned: boolean;
}

// ---------------------------------------------------------------------------------------------
// References: the adapters build a target's kind and name only through these.

/** The database itself (the writer in a lab, the throwaway server locally). */
export function directTarget(): TargetRef {
  return { kind: 'direct', name: 'direct' };
}

/**
 * An RDS Proxy of the lab, by its name in the lab file: its default endpoint (`rds-proxy`, named as
 * the proxy), or another endpoint of it by that endpoint's kind (named with the kind's suffix).
 */
export function managedProxyTarget(name: string, kind: ManagedProxyKind = 'rds-proxy'): TargetRef {
  const suffix: string | null = KINDS[kind].nameSuffix;
  return { kind, name: `${name}${suffix ?? ''}` };
}

/**
 * One pool mode of a self-hosted pooler `instance` (its name in the lab; `pgbouncer` for the local
 * one): named `<instance>-<mode>`, the name lib/poolers/pgbouncer/layout.ts `poolerTargetName` gives.
 */
export function poolerTarget(product: SelfHostedPooler, instance: string, mode: PoolMode): TargetRef {
  const kind = TARGET_KIND_NAMES.find((k) => KINDS[k].product === product && KINDS[k].poolMode === mode);
  if (kind === undefined) throw new RangeError(`no target kind for ${product} in ${mode} mode`);
  const suffix: string | null = KINDS[kind].nameSuffix;
  return { kind, name: `${instance}${suffix ?? ''}` };
}

/** What product a target is (`pgbouncer`, `PgBouncer`). */
export function targetProduct(d: Pick<TargetRef, 'kind'>): ProductInfo {
  const e = productEntry(KINDS[d.kind].product);
  return { id: e.id, label: e.label, versioned: e.versioned };
}

/**
 * The lab's name for the thing a target reaches: the proxy's or pooler's name (`bouncer` for the
 * targets `bouncer-transaction` and `bouncer-session`; `pgbouncer` locally), `direct` for the database.
 * A pooler's metric series carry it as their `pooler` dimension.
 */
export function targetInstance(d: TargetRef): string {
  const suffix: string | null = KINDS[d.kind].nameSuffix;
  return suffix !== null && d.name.endsWith(suffix) && d.name.length > suffix.length
    ? d.name.slice(0, -suffix.length)
    : d.name;
}

/** `PgBouncer 1.25.2`, `PgBouncer unknown`, `RDS Proxy (managed, no version)`: what a run measured. */
export function productVersionLabel(d: Pick<TargetDescriptor, 'kind' | 'version'>): string {
  const p = targetProduct(d);
  return p.versioned ? `${p.label} ${d.version ?? 'unknown'}` : `${p.label} (managed, no version)`;
}

export interface TargetProbe {
  /** Pooler version (PgBouncer `1.25.2`), server version for direct; null unknown. */
  readonly version: string | null;
  /** max_prepared_statements as SHOW CONFIG reported it; null when absent (PgBouncer < 1.21). */
  readonly maxPreparedStatements?: number | null;
  /** Overrides the kind's usual placement (a PgBouncer on a dedicated host). */
  readonly placement?: Placement;
  /** Pooler processes sharing the port (a self-hosted pooler's target only). */
  readonly processes?: number;
  /** Worker threads of a multithreaded pooler's process (a PgDoorman target only). */
  readonly workerThreads?: number;
  /** This adapter cannot resize the pool at run time, and why (capabilities.fixedPoolReason). */
  readonly poolResizeUnavailable?: string;
  /** The lab's `settings` of this target's pooler or proxy (checked against its product's catalogue). */
  readonly settings?: Readonly<Record<string, SettingValue>>;
  /** Settings the kit set for its own measurement or from a lab field (their effective value). */
  readonly kitSettings?: Readonly<Record<string, SettingValue | null>>;
}

/** The descriptor of one target of a run, from its kind, name and what was probed at run time. */
export function describeTarget(ref: TargetRef, probe: TargetProbe): TargetDescriptor {
  const k = KINDS[ref.kind];
  const entry = productEntry(k.product);
  const mps = entry.prepared !== null ? (probe.maxPreparedStatements ?? null) : null;
  const caps = entry.capabilities(k, probe.version, { maxPreparedStatements: mps });
  const fixed = caps.resizablePool !== null ? probe.poolResizeUnavailable : undefined;
  const selfHosted = k.placement !== 'managed';
  const effective =
    entry.settings !== null && (probe.settings !== undefined || probe.kitSettings !== undefined)
      ? effectiveSettings(entry.settings, probe.version, probe.settings ?? {}, probe.kitSettings ?? {})
      : undefined;
  return {
    kind: ref.kind,
    name: ref.name,
    pooler: k.pooler,
    poolMode: k.poolMode,
    placement: probe.placement ?? k.placement,
    version: probe.version,
    settings: {
      maxPreparedStatements: mps,
      ...(selfHosted && probe.processes !== undefined ? { processes: probe.processes } : {}),
      ...(selfHosted && probe.workerThreads !== undefined ? { workerThreads: probe.workerThreads } : {}),
      ...(effective !== undefined ? { effective } : {}),
    },
    capabilities: fixed === undefined ? caps : { ...caps, resizablePool: null, fixedPoolReason: fixed },
  };
}

/** A descriptor's session handling; for a plan stored before it was recorded, from the kind and version. */
export function sessionHandling(
  d: Pick<TargetDescriptor, 'kind' | 'version' | 'capabilities'>,
): SessionHandling {
  const k = KINDS[d.kind];
  return d.capabilities.session ?? productEntry(k.product).session(k, d.version);
}

/**
 * The descriptor a step runs against with the prepared-statement dimension applied, or the reason
 * this target cannot run that cell.
 */
export function withPreparedStatements(
  d: TargetDescriptor,
  mode: PreparedStatementsMode,
): { descriptor: TargetDescriptor; unavailable: string | null } {
  const sw = d.capabilities.preparedStatementsSwitch;
  if (sw === null) return { descriptor: d, unavailable: null };
  // Without the setting (PgBouncer < 1.21) the pool behaves as `off`: that cell runs, `on` cannot.
  if (!sw.available) return { descriptor: d, unavailable: mode === 'on' ? sw.reason : null };
  const k = KINDS[d.kind];
  const entry = productEntry(k.product);
  const mps = mode === 'on' ? (entry.prepared?.onValue ?? 0) : 0;
  return {
    descriptor: {
      ...d,
      settings: { ...d.settings, maxPreparedStatements: mps },
      capabilities: entry.capabilities(k, d.version, { maxPreparedStatements: mps }),
    },
    unavailable: null,
  };
}

export function matchesTarget(d: TargetDescriptor, m: TargetMatch | undefined): boolean {
  if (m === undefined) return true;
  const c = d.capabilities;
  if (m.pooled !== undefined && c.pooled !== m.pooled) return false;
  if (m.multiplexes !== undefined && c.multiplexes !== m.multiplexes) return false;
  if (m.managed !== undefined && (d.placement === 'managed') !== m.managed) return false;
  if (m.dedicatedHost !== undefined && (d.placement === 'dedicated-host') !== m.dedicatedHost) return false;
  if (m.pooler !== undefined && !m.pooler.includes(d.pooler)) return false;
  if (m.readOnly !== undefined && !KINDS[d.kind].writes !== m.readOnly) return false;
  if (
    m.carriesPreparedStatements !== undefined &&
    !m.carriesPreparedStatements.includes(c.carriesPreparedStatements)
  )
    return false;
  if (m.rollingRestart !== undefined && !m.rollingRestart.includes(c.rollingRestart as RollingRestart))
    return false;
  if (m.multiProcess !== undefined && (d.settings.processes ?? 1) > 1 !== m.multiProcess) return false;
  return true;
}

/**
 * The targets a scenario's list selects among those present: for each match in order, the present
 * targets it matches (in their order), each target once (at its first match); read-only targets
 * only for a match that asks for them (`readOnly: true`).
 */
export function selectTargets<T extends { readonly descriptor: TargetDescriptor }>(
  matches: readonly TargetMatch[],
  present: readonly T[],
): T[] {
  const out: T[] = [];
  for (const m of matches)
    for (const t of present)
      if (matchesTarget(t.descriptor, { ...m, readOnly: m.readOnly ?? false }) && !out.includes(t))
        out.push(t);
  return out;
}

/**
 * The kinds a scenario's target list selects, in its order (a target of each kind with its usual
 * placement, version unknown): what the docs list for it.
 */
export function kindsSelected(matches: readonly TargetMatch[]): TargetKind[] {
  return selectTargets(
    matches,
    TARGET_KIND_NAMES.map((kind) => ({ kind, descriptor: fallbackDescriptor({ kind, name: kind }) })),
  ).map((t) => t.kind);
}

/**
 * A descriptor for a run that did not store one (older releases): from the kind alone, version
 * unknown — so a PgBouncer transaction pool reads as not carrying prepared statements, as the
 * catalog of those releases assumed.
 */
export function fallbackDescriptor(ref: TargetRef): TargetDescriptor {
  return describeTarget(ref, { version: null });
}
