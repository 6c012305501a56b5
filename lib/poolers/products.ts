/**
 * The self-hosted pooler products proxylab can deploy: the one list the lab schema, the stack
 * output and the run request validate against, and the keys of the driver registry
 * (lib/poolers/registry.ts), which must have a driver for each (a compile error otherwise).
 * Derived from the target kinds (lib/products/kinds.ts: a product with a kind AWS does not run), so a
 * product's kinds and its place here cannot disagree. lib/products/kinds.ts has no imports, so every
 * layer that may import lib/poolers can read this without pulling a driver.
 */
import { SELF_HOSTED_POOLERS, type SelfHostedPooler } from '../products/kinds';

export const POOLER_PRODUCTS = SELF_HOSTED_POOLERS;
export type PoolerProduct = SelfHostedPooler;

/**
 * Pool modes proxylab deploys and measures (each is a target `<pooler>-<mode>`): the list in
 * lib/products/kinds.ts. A product that cannot serve one says so in its driver's `poolModes`.
 */
export { POOL_MODES, type PoolMode } from '../products/kinds';

/** Where a self-hosted pooler runs: its own EC2 host, or on every runner at 127.0.0.1. */
export const POOLER_PLACEMENTS = ['dedicated', 'on-runners'] as const;
export type PoolerPlacement = (typeof POOLER_PLACEMENTS)[number];
