/**
 * What a product entry is (lib/products/<product>/entry.ts): the one place that knows a product —
 * PostgreSQL itself (direct), RDS Proxy, PgBouncer, PgDoorman — its label, its target kinds, what a
 * target of it can do by version and settings, how it undergoes each disruption, its settings
 * catalogue and where each fact comes from. Code elsewhere asks an entry (`productEntry(id)`,
 * ./index.ts) and never compares a product's name (eslint: `no-restricted-syntax`, "product-name
 * branch").
 *
 * Capabilities travel with the descriptor of every target (`TargetDescriptor.capabilities`, stored
 * in plan.json), as aws-cdk's engine versions carry their features: variation lives on the object
 * that varies.
 */
import type { KindSpec, TargetKind, TargetProduct } from './kinds';

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

/**
 * Session state a pooler resets, when the client changed it, as a server connection goes back to the
 * pool (PgDoorman's `cleanup_server_connections`): `role` RESET ROLE, `settings` RESET ALL, `prepared`
 * DEALLOCATE ALL, `cursors` CLOSE ALL. Less than DISCARD ALL: temporary objects, advisory locks and
 * LISTEN stay.
 */
export const SESSION_CLEANUPS = ['role', 'settings', 'prepared', 'cursors'] as const;
export type SessionCleanup = (typeof SESSION_CLEANUPS)[number];

/** How a target treats session state between a client's transactions and between its clients. */
export interface SessionHandling {
  /**
   * The pooler resets a server connection before another client gets it: PgBouncer in session pooling
   * runs `server_reset_query` (`DISCARD ALL` by default) on release; in transaction pooling it does not
   * (doc/config.md: "When transaction pooling is used, the server_reset_query is not used" — unless
   * `server_reset_query_always` is on).
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

/** One kind's facts (lib/products/kinds.ts `KINDS`). */
export type KindFacts = KindSpec;

// ---------------------------------------------------------------------------------------------
// Settings catalogue

/** A setting's value as a lab file gives it and a plan records it. */
export type SettingValue = number | boolean | string | readonly string[];

/** What a setting bears on: the report groups the effective settings by it. */
export const SETTING_AREAS = ['pool', 'failure', 'timeouts', 'session', 'network', 'auth'] as const;
export type SettingArea = (typeof SETTING_AREAS)[number];

/**
 * One documented setting of a product: its type, unit, range, default by version, the release it
 * appeared in, and its source. A lab's `settings` object is checked against these for the version it
 * pins (lib/products/settings.ts `checkSettings`); the effective value of every setting (the lab's or
 * the default) is recorded in plan.json.
 */
export interface SettingSpec {
  readonly name: string;
  /**
   * `integer`/`number`: a JSON number in [min, max]; `boolean`; `enum`: one of `values`; `text`: one
   * line of printable ASCII (no line break, no quote that could end the value); `list`: strings each one
   * of `values` when given, else a name (letters, digits, `_`).
   */
  readonly type: 'integer' | 'number' | 'boolean' | 'enum' | 'text' | 'list';
  /** The unit of a number, as the product reads it. null: none. */
  readonly unit: 'seconds' | 'milliseconds' | 'connections' | 'percent' | 'statements' | null;
  readonly min?: number;
  readonly max?: number;
  readonly values?: readonly string[];
  /**
   * The product's default, by the release it took effect in (oldest first; `since: null` = every
   * release proxylab knows). `value: null`: not set (the product's built-in behaviour, in `summary`).
   */
  readonly defaults: ReadonlyArray<{ readonly since: string | null; readonly value: SettingValue | null }>;
  /** The first release with the setting; null: in every release proxylab knows. */
  readonly since: string | null;
  readonly area: SettingArea;
  /** One line: what it does to pooling, failures or session state. */
  readonly summary: string;
  /** Where the facts are (the product's docs, the AWS API reference). */
  readonly source: string;
  /**
   * The kit sets it from a lab field or for its own measurement, and a lab's `settings` may not: the
   * field to use instead, or why. Its effective value is still recorded.
   */
  readonly setBy?: string;
  /** Not accepted for a PostgreSQL target at all, and why (RDS Proxy's SessionPinningFilters). */
  readonly refused?: string;
  /**
   * Where it goes in the product's configuration when that has sections (PgDoorman: `general` or
   * each `pool`). Absent: the one place there is.
   */
  readonly section?: string;
}

export interface SettingsCatalogue {
  /** `PgBouncer` — the product the names belong to. */
  readonly product: string;
  /** How a name is spelled there (`server_login_retry`, `InitQuery`). */
  readonly settings: readonly SettingSpec[];
}

// ---------------------------------------------------------------------------------------------
// The entry

/** What a run probed or configured for one target: the input of `capabilities`. */
export interface ProductSettings {
  /** max_prepared_statements (PgBouncer) / prepared_statements_cache_size (PgDoorman); null: none. */
  readonly maxPreparedStatements: number | null;
}

/**
 * How a product undergoes a disruption action (by the action's name, lib/suite/disruption.ts): `how`
 * it is done to a target of it, or why it cannot be (`unavailable`).
 */
export type DisruptionSupport = { readonly how: string } | { readonly unavailable: string };

export interface ProductEntry {
  readonly id: TargetProduct;
  /** The product's name in words (`PgBouncer`). */
  readonly label: string;
  /** Whether a run can probe its version (RDS Proxy reports none). */
  readonly versioned: boolean;
  /** Its target kinds (lib/products/kinds.ts), one per pool mode for a pooler. */
  readonly kinds: readonly TargetKind[];
  /** What a target of this kind, version and settings can do. */
  capabilities(kind: KindFacts, version: string | null, settings: ProductSettings): TargetCapabilities;
  /** What it does with session state, by version (read for plans stored before `capabilities.session`). */
  session(kind: KindFacts, version: string | null): SessionHandling;
  /**
   * Prepared statements through a transaction pool: the first release that can carry them, the value
   * that turns the support on (PgBouncer's max_prepared_statements = 200), null when not switchable.
   */
  readonly prepared: { readonly since: string | null; readonly onValue: number | null } | null;
  /** How each disruption action is done to a target of it (absent: the action does not act on it). */
  readonly disruptions: Readonly<Record<string, DisruptionSupport>>;
  /** Its documented settings; null: none a lab can set (PostgreSQL itself: server settings are the database's). */
  readonly settings: SettingsCatalogue | null;
  /**
   * How long, at most, a target of it may keep its clients waiting or failing after the server is
   * back (a restart refused its connects at once), in ms, from its effective settings (the values a
   * plan records, `TargetSettings.effective`): PgBouncer's `server_login_retry` (15 s by default: the
   * pause after a failed server login). A disruption's recovery window must be longer to see the wait
   * end (`proxylab local` sizes its windows from it). Absent or null: nothing beyond the server's own
   * outage (direct) or not known.
   */
  recoveryBoundMs?(
    settings: Readonly<Record<string, { readonly value: SettingValue | null }>>,
  ): number | null;
  /** Where the facts of this entry come from. */
  readonly sources: readonly string[];
}
