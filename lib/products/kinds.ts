/**
 * The target kinds and the products behind them, as data (no imports): the one list every kind
 * union, enum and schema follows from. `TargetKind` (re-exported by ./types), the results schema's
 * kind and pooler enums (lib/results/schemas.ts), the proxy kinds a run request may name
 * (`PROXY_TARGET_KINDS`, ./targets) and the self-hosted pooler products the lab schema, the stack
 * output and the driver registry accept (lib/poolers/products.ts) are all derived from `KINDS`.
 *
 * Adding a kind = one entry in `KINDS` (and, for a new product, its id in `PRODUCT_IDS` and its entry
 * in ./index.ts). What a kind can do is its product entry's (`capabilities`); the kind strings are stored in
 * every plan.json and result, so an existing kind is never renamed.
 */

/** Pool modes proxylab deploys and measures (each is a target `<pooler>-<mode>`). */
export const POOL_MODES = ['transaction', 'session'] as const;
export type PoolMode = (typeof POOL_MODES)[number];

/** managed: AWS runs it; dedicated-host: its own EC2; co-located: on the load generator; local: this machine. */
export const PLACEMENTS = ['managed', 'dedicated-host', 'co-located', 'local'] as const;
export type Placement = (typeof PLACEMENTS)[number];

/**
 * The product a target is: `postgres` (direct to the server), `rds-proxy`, or a self-hosted pooler
 * by the name its driver is registered under (lib/poolers/<product>). What each is and can do is its
 * entry's (lib/products/<product>/entry.ts, registered in ./index.ts).
 */
export const PRODUCT_IDS = ['postgres', 'rds-proxy', 'pgbouncer', 'pgdoorman'] as const;
export type TargetProduct = (typeof PRODUCT_IDS)[number];

export interface KindSpec {
  /** The pooler in the descriptor (`none` for the database itself); a product's id otherwise. */
  readonly pooler: string;
  readonly poolMode: PoolMode | null;
  /** The usual placement (a run's probe may override it: a PgBouncer on a dedicated host). */
  readonly placement: Placement;
  readonly product: TargetProduct;
  /**
   * What a target's name adds to its instance's (`-transaction`: `bouncer` → `bouncer-transaction`);
   * null: the name is the instance's.
   */
  readonly nameSuffix: string | null;
  /**
   * It takes writes. false: it serves reads only (an RDS Proxy read-only endpoint goes to the
   * readers), so a scenario's target list selects it only when it asks for `readOnly` targets.
   */
  readonly writes: boolean;
}

/** Every kind, once. */
export const KINDS = {
  direct: {
    pooler: 'none',
    poolMode: null,
    placement: 'managed',
    product: 'postgres',
    nameSuffix: null,
    writes: true,
  },
  'rds-proxy': {
    pooler: 'rds-proxy',
    poolMode: 'transaction',
    placement: 'managed',
    product: 'rds-proxy',
    nameSuffix: null,
    writes: true,
  },
  'pgbouncer-transaction': {
    pooler: 'pgbouncer',
    poolMode: 'transaction',
    placement: 'local',
    product: 'pgbouncer',
    nameSuffix: '-transaction',
    writes: true,
  },
  'pgbouncer-session': {
    pooler: 'pgbouncer',
    poolMode: 'session',
    placement: 'local',
    product: 'pgbouncer',
    nameSuffix: '-session',
    writes: true,
  },
  'pgdoorman-transaction': {
    pooler: 'pgdoorman',
    poolMode: 'transaction',
    placement: 'local',
    product: 'pgdoorman',
    nameSuffix: '-transaction',
    writes: true,
  },
  'pgdoorman-session': {
    pooler: 'pgdoorman',
    poolMode: 'session',
    placement: 'local',
    product: 'pgdoorman',
    nameSuffix: '-session',
    writes: true,
  },
} as const satisfies Record<string, KindSpec>;

/**
 * What a step talks to. `rds-proxy` is each named proxy of a lab; pgbouncer-* and pgdoorman-* are a
 * self-hosted PgBouncer's or PgDoorman's pools.
 */
export type TargetKind = keyof typeof KINDS;
type Kinds = typeof KINDS;

export type Pooler = Kinds[TargetKind]['pooler'];

/** A self-hosted pooler product (one with a driver in lib/poolers): a product with a kind not run by AWS. */
export type SelfHostedPooler = {
  [K in TargetKind]: Kinds[K]['placement'] extends 'managed' ? never : Kinds[K]['product'];
}[TargetKind];

/** A kind a lab's proxy or pooler gives its targets (every kind but the database itself). */
export type ProxyTargetKind = {
  [K in TargetKind]: Kinds[K]['pooler'] extends 'none' ? never : K;
}[TargetKind];

/**
 * A kind AWS runs in front of the database: an endpoint of an RDS Proxy (`rds-proxy` is its default
 * endpoint). A lab proxy's other endpoints are listed by these kinds (lib/aws/runner-args.ts ProxySpec).
 */
export type ManagedProxyKind = {
  [K in TargetKind]: Kinds[K]['placement'] extends 'managed'
    ? Kinds[K]['pooler'] extends 'none'
      ? never
      : K
    : never;
}[TargetKind];

/** Every kind in registry order (the order the docs and schema list them). */
export const TARGET_KIND_NAMES = Object.keys(KINDS) as [TargetKind, ...TargetKind[]];

function distinct<T>(xs: readonly T[]): T[] {
  return xs.filter((x, i) => xs.indexOf(x) === i);
}

/** Every pooler a descriptor may name, in registry order. */
export const POOLERS = distinct(TARGET_KIND_NAMES.map((k) => KINDS[k].pooler)) as [Pooler, ...Pooler[]];

/** The self-hosted pooler products, in registry order. */
export const SELF_HOSTED_POOLERS = distinct(
  TARGET_KIND_NAMES.filter((k) => KINDS[k].placement !== 'managed').map((k) => KINDS[k].product),
) as [SelfHostedPooler, ...SelfHostedPooler[]];

/** The kinds a run request may name for its proxy targets (all but direct): test stand-ins included. */
export const PROXY_TARGET_KINDS = TARGET_KIND_NAMES.filter((k) => KINDS[k].pooler !== 'none') as [
  ProxyTargetKind,
  ...ProxyTargetKind[],
];

/** The endpoints' kinds an RDS Proxy's targets may have, in registry order. */
export const MANAGED_PROXY_KINDS = TARGET_KIND_NAMES.filter(
  (k) => KINDS[k].placement === 'managed' && KINDS[k].pooler !== 'none',
) as [ManagedProxyKind, ...ManagedProxyKind[]];
