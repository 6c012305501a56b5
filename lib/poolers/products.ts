/**
 * The self-hosted pooler products proxylab can deploy: the one list the lab schema, the stack
 * output and the run request validate against, and the keys of the driver registry
 * (lib/poolers/registry.ts), which must have a driver for each (a compile error otherwise).
 * No imports, so every layer that may import lib/poolers can read it without pulling a driver.
 */
export const POOLER_PRODUCTS = ['pgbouncer'] as const;
export type PoolerProduct = (typeof POOLER_PRODUCTS)[number];

/**
 * Pool modes proxylab deploys and measures (each is a target `<pooler>-<mode>`). A product that
 * cannot serve one says so in its driver's `poolModes`.
 */
export const POOL_MODES = ['transaction', 'session'] as const;
export type PoolMode = (typeof POOL_MODES)[number];

/** Where a self-hosted pooler runs: its own EC2 host, or on every runner at 127.0.0.1. */
export const POOLER_PLACEMENTS = ['dedicated', 'on-runners'] as const;
export type PoolerPlacement = (typeof POOLER_PLACEMENTS)[number];
