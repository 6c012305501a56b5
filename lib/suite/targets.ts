/**
 * The target registry (pure): what each kind of target IS — its pooler, pool mode, where it runs —
 * and what it CAN do, as capabilities. This is the one module that reads a target kind string:
 * expectations, comparisons, the engine, pool control, the report and cost ask a descriptor.
 *
 * Adding a kind = one entry in KINDS (./kinds.ts, the data every kind list follows from); its
 * references are built by `directTarget`, `managedProxyTarget(name, kind)` or
 * `poolerTarget(product, instance, mode)` below, and its capabilities are decided here from the
 * entry's fields (a new pooler product adds its rules to `capabilitiesOf`). Scenarios
 * choose targets by capability (`TargetMatch`), so the catalog needs no change; what a descriptor
 * stores is in every plan.json, so a new kind adds no field to it: product and instance are derived
 * from the kind and name (`targetProduct`, `targetInstance`).
 *
 * Prepared statements across server connections (`carriesPreparedStatements`):
 * - no pooler, or a session pool: `yes` (a client keeps its server connection);
 * - PgBouncer transaction pool: `yes` only on PgBouncer ≥ 1.21 with `max_prepared_statements` > 0
 *   (PgBouncer's doc/config.md: 0 disables the support; the default is 200 since 1.24, and the
 *   admin console `SET max_prepared_statements = N` changes it at run time — SHOW CONFIG says
 *   `changeable: yes`; checked against 1.25.2). PgBouncer 1.18 has no such setting: `no`;
 * - PgDoorman transaction pool: `yes` while `prepared_statements` is on (its pool-level cache of
 *   `prepared_statements_cache_size` > 0; on by default), in every release proxylab knows;
 * - RDS Proxy: `measured` — AWS documents that it keeps multiplexing extended-protocol connections
 *   (2023-11-10) but not whether named statements survive; the run records the outcome and
 *   DatabaseConnectionsCurrentlySessionPinned, it does not predict it.
 */
import {
  KINDS,
  PRODUCTS,
  TARGET_KIND_NAMES,
  type ManagedProxyKind,
  type Placement,
  type Pooler,
  type PoolMode,
  type SelfHostedPooler,
  type TargetKind,
  type TargetProduct,
} from './kinds';
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
} from './kinds';

export type PreparedSupport = 'yes' | 'no' | 'measured';
/** How a pool is resized at run time (the results schema's list). */
export const POOL_RESIZES = ['rds-api', 'pgbouncer-admin', 'pgdoorman-reload'] as const;
export type PoolResize = (typeof POOL_RESIZES)[number];
/** How the prepared-statement support is switched per step (the results schema's list). */
export const PREPARED_SWITCHES = ['pgbouncer-admin'] as const;
export type PreparedSwitch = (typeof PREPARED_SWITCHES)[number];

/**
 * What a pooler's old process does in a rolling restart (a new process already listens on the same
 * port with so_reuseport): `stops-listening` — it stops accepting and leaves once its clients have
 * (PgBouncer ≥ 1.23, SIGTERM); `keeps-listening` — its shutdown keeps the listening socket while it
 * waits (PgBouncer < 1.23, SIGINT: pgbouncer/pgbouncer#902).
 */
export const ROLLING_RESTARTS = ['stops-listening', 'keeps-listening'] as const;
export type RollingRestart = (typeof ROLLING_RESTARTS)[number];
/** First PgBouncer release whose SIGTERM retires a process for a rolling restart (changelog 1.23.0). */
export const PGBOUNCER_ROLLING_RESTART_SINCE = '1.23';

/** PgBouncer's own default since 1.24; what `on` sets. */
export const PGBOUNCER_MAX_PREPARED_STATEMENTS_ON = 200;
/** First PgBouncer release with max_prepared_statements. */
export const PGBOUNCER_PREPARED_SINCE = '1.21';
/**
 * PgDoorman carries prepared statements through transaction pooling with `prepared_statements`
 * (a pool-level cache; on by default): already in 1.7.7, the oldest release in its changelog.
 */
export const PGDOORMAN_PREPARED_SINCE = '1.7.7';
/**
 * Parameters PgBouncer restores per client whatever its version (doc/config.md, track_extra_parameters:
 * "By default, PgBouncer tracks client_encoding, datestyle, timezone, standard_conforming_strings and
 * application_name parameters per client"), lowercase as PostgreSQL reports them.
 */
export const PGBOUNCER_TRACKED_PARAMETERS = [
  'client_encoding',
  'datestyle',
  'timezone',
  'standard_conforming_strings',
  'application_name',
] as const;
/**
 * First PgBouncer release with `track_extra_parameters`, whose default (`IntervalStyle`) adds that
 * parameter to the tracked ones (NEWS.md, 1.20.0: "Now PgBouncer also tracks IntervalStyle by default").
 */
export const PGBOUNCER_TRACK_EXTRA_SINCE = '1.20';
/** track_extra_parameters' default (doc/config.md: "Default: IntervalStyle"). */
export const PGBOUNCER_TRACK_EXTRA_DEFAULT = ['intervalstyle'] as const;

export interface TargetCapabilities {
  /** Clients share a pool of server connections. */
  readonly pooled: boolean;
  /** Server connections are handed out per transaction (not held for a client's session). */
  readonly multiplexes: boolean;
  readonly carriesPreparedStatements: PreparedSupport;
  /** null: the pool size is fixed (or there is no pool). */
  readonly resizablePool: PoolResize | null;
  /**
   * Why a pool whose product can be resized cannot be here (PgDoorman on a pooler host: it resizes by
   * rewriting its configuration file, which the runners cannot); a pool-percent sweep's cells on it
   * are planned as not available with this reason. Absent: resizable, or no pool.
   */
  readonly fixedPoolReason?: string;
  /**
   * The prepared-statement support can be switched per step (PgBouncer transaction pool), with
   * `available: false` and the reason when this version cannot (PgBouncer < 1.21). null: no switch.
   */
  readonly preparedStatementsSwitch: {
    readonly how: PreparedSwitch;
    readonly available: boolean;
    readonly reason: string | null;
  } | null;
  /**
   * How a rolling restart retires its old process (a self-hosted pooler, by version); null: not a
   * pooler that restarts that way (or its version is unknown). Absent in plans written before it.
   */
  readonly rollingRestart?: RollingRestart | null;
  /**
   * What the target does with a client's session state (SET, temporary tables, advisory locks…), which
   * the session-state probes (lib/suite/session-state.ts) judge. Absent in plans written before it
   * existed: `sessionHandling(descriptor)` reads it from the kind then.
   */
  readonly session?: SessionHandling;
}

/**
 * Session state a pooler resets, when the client changed it, as a server connection goes back to the
 * pool (PgDoorman's `cleanup_server_connections`): `role` RESET ROLE, `settings` RESET ALL, `prepared`
 * DEALLOCATE ALL, `cursors` CLOSE ALL. Less than DISCARD ALL: temporary objects, advisory locks and
 * LISTEN stay.
 */
export const SESSION_CLEANUPS = ['role', 'settings', 'prepared', 'cursors'] as const;
export type SessionCleanup = (typeof SESSION_CLEANUPS)[number];

/**
 * PgDoorman's `cleanup_server_connections` (a pool setting, default true; proxylab leaves it): "When
 * enabled and the session was modified, pg_doorman sends: `RESET ROLE`, plus conditionally `RESET
 * ALL` (if SET was used), `DEALLOCATE ALL` (if PREPARE was used), `CLOSE ALL` (if cursors were
 * opened)" — "Prevents state leaking between clients in transaction mode" (the configuration
 * reference pg_doorman 3.10.7 carries; its 3.12.0 changelog turns the setting into off / adaptive /
 * always modes, not pinned here).
 */
export const PGDOORMAN_CLEANUP: readonly SessionCleanup[] = ['role', 'settings', 'prepared', 'cursors'];

/** How a target treats session state between a client's transactions and between its clients. */
export interface SessionHandling {
  /**
   * The pooler resets a server connection before another client gets it: PgBouncer in session pooling
   * runs `server_reset_query` (`DISCARD ALL` by default) on release; in transaction pooling it does not
   * (doc/config.md: "When transaction pooling is used, the server_reset_query is not used";
   * `server_reset_query_always` is off by default and proxylab leaves it off).
   */
  readonly resetsOnRelease: boolean;
  /**
   * Parameters the pooler restores for each client when it hands it a server connection (PgBouncer's
   * tracked parameters; IntervalStyle from 1.20), lowercase. Empty: none (direct needs none).
   */
  readonly trackedParameters: readonly string[];
  /**
   * The pooler pins a client to its server connection when the client changes session state, as AWS
   * documents for RDS Proxy ("Avoiding pinning an RDS Proxy"): which features pin is the catalog's,
   * whether they did is measured (DatabaseConnectionsCurrentlySessionPinned).
   */
  readonly pinsSessions: boolean;
  /**
   * What the pooler resets (when changed) as a server connection returns to the pool, in either pool
   * mode: after each transaction in transaction pooling, at disconnect in session pooling. Absent
   * (plans written before PgDoorman) or empty: nothing beyond `resetsOnRelease`.
   */
  readonly cleansOnRelease?: readonly SessionCleanup[];
}

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

type KindEntry = (typeof KINDS)[TargetKind];

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
  const id = KINDS[d.kind].product;
  return { id, ...PRODUCTS[id] };
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

/** `1.25.2` ≥ `1.21`; false when the version is unknown. */
export function versionAtLeast(version: string | null, min: string): boolean {
  if (version === null) return false;
  const a = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version.trim());
  const b = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(min);
  if (!a || !b) return false;
  for (let i = 1; i <= 3; i++) {
    const x = Number(a[i] ?? 0);
    const y = Number(b[i] ?? 0);
    if (x !== y) return x > y;
  }
  return true;
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
}

/** The descriptor of one target of a run, from its kind, name and what was probed at run time. */
export function describeTarget(ref: TargetRef, probe: TargetProbe): TargetDescriptor {
  const k = KINDS[ref.kind];
  const selfHosted = k.pooler === 'pgbouncer' || k.pooler === 'pgdoorman';
  const mps = selfHosted ? (probe.maxPreparedStatements ?? null) : null;
  const caps = capabilitiesOf(k, probe.version, mps);
  const fixed = caps.resizablePool !== null ? probe.poolResizeUnavailable : undefined;
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
      ...(k.pooler === 'pgdoorman' && probe.workerThreads !== undefined
        ? { workerThreads: probe.workerThreads }
        : {}),
    },
    capabilities: fixed === undefined ? caps : { ...caps, resizablePool: null, fixedPoolReason: fixed },
  };
}

function capabilitiesOf(k: KindEntry, version: string | null, mps: number | null): TargetCapabilities {
  const pooled = k.pooler !== 'none';
  const multiplexes = k.poolMode === 'transaction';
  let carries: PreparedSupport = 'yes';
  if (k.pooler === 'rds-proxy') carries = 'measured';
  else if (k.pooler === 'pgbouncer' && multiplexes)
    carries = versionAtLeast(version, PGBOUNCER_PREPARED_SINCE) && mps !== null && mps > 0 ? 'yes' : 'no';
  // PgDoorman: its pool-level cache carries them while `prepared_statements` is on (cache size > 0)
  else if (k.pooler === 'pgdoorman' && multiplexes)
    carries = versionAtLeast(version, PGDOORMAN_PREPARED_SINCE) && mps !== null && mps > 0 ? 'yes' : 'no';
  const resizablePool: PoolResize | null =
    k.pooler === 'rds-proxy'
      ? 'rds-api'
      : k.pooler === 'pgbouncer'
        ? 'pgbouncer-admin'
        : k.pooler === 'pgdoorman'
          ? 'pgdoorman-reload'
          : null;
  // PgDoorman reads prepared_statements at start: no per-step switch (the target runs each cell once)
  const switchable = k.pooler === 'pgbouncer' && multiplexes;
  const available = versionAtLeast(version, PGBOUNCER_PREPARED_SINCE);
  const rollingRestart: RollingRestart | null =
    k.pooler !== 'pgbouncer' || version === null
      ? null
      : versionAtLeast(version, PGBOUNCER_ROLLING_RESTART_SINCE)
        ? 'stops-listening'
        : 'keeps-listening';
  return {
    pooled,
    rollingRestart,
    multiplexes,
    carriesPreparedStatements: carries,
    resizablePool,
    session: sessionHandlingOf(k, version),
    preparedStatementsSwitch: switchable
      ? {
          how: 'pgbouncer-admin',
          available,
          reason: available
            ? null
            : `not available on ${PRODUCTS[k.product].label} ${version ?? '(version unknown)'} (needs ≥ ${PGBOUNCER_PREPARED_SINCE})`,
        }
      : null,
  };
}

/**
 * What a kind does with session state, by product and version (see SessionHandling). A PgBouncer of
 * unknown version is read as the oldest (no IntervalStyle tracking), as for prepared statements.
 */
function sessionHandlingOf(k: KindEntry, version: string | null): SessionHandling {
  if (k.pooler === 'pgbouncer')
    return {
      resetsOnRelease: k.poolMode === 'session',
      trackedParameters: [
        ...PGBOUNCER_TRACKED_PARAMETERS,
        ...(versionAtLeast(version, PGBOUNCER_TRACK_EXTRA_SINCE) ? PGBOUNCER_TRACK_EXTRA_DEFAULT : []),
      ],
      pinsSessions: false,
    };
  // PgDoorman tracks no parameter a client SETs (sync_server_parameters is off by default) but cleans up.
  if (k.pooler === 'pgdoorman')
    return {
      resetsOnRelease: false,
      trackedParameters: [],
      pinsSessions: false,
      cleansOnRelease: PGDOORMAN_CLEANUP,
    };
  // RDS Proxy tracks no PostgreSQL parameter: "for PostgreSQL setting a variable leads to session pinning".
  if (k.pooler === 'rds-proxy') return { resetsOnRelease: false, trackedParameters: [], pinsSessions: true };
  return { resetsOnRelease: false, trackedParameters: [], pinsSessions: false };
}

/** A descriptor's session handling; for a plan stored before it was recorded, from the kind and version. */
export function sessionHandling(
  d: Pick<TargetDescriptor, 'kind' | 'version' | 'capabilities'>,
): SessionHandling {
  return d.capabilities.session ?? sessionHandlingOf(KINDS[d.kind], d.version);
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
  const mps = mode === 'on' ? PGBOUNCER_MAX_PREPARED_STATEMENTS_ON : 0;
  const k = KINDS[d.kind];
  return {
    descriptor: {
      ...d,
      settings: { ...d.settings, maxPreparedStatements: mps },
      capabilities: capabilitiesOf(k, d.version, mps),
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
