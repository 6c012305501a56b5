/**
 * PgBouncer's side of the pooler contract (pure: types and constants, no I/O): its data port and
 * database aliases. The product-neutral host config is lib/poolers/host-config.ts; `proxylab local`
 * uses the same configuration module (lib/poolers/pgbouncer/config.ts) for its throwaway PgBouncer.
 *
 * Process layout: `processes` PgBouncer processes share the data port with `so_reuseport` (the
 * kernel spreads new connections across them), so a 4-vCPU host is not capped at one core. The
 * product-neutral endpoint (ports, the stack output's schema) is lib/poolers/endpoint.ts.
 */

import type { PoolMode } from '../products';
export type { PoolerPlacement } from '../products';
export {
  adminPortOf,
  POOLER_ADMIN_PORT_BASE,
  POOLER_PROCESSES_MAX,
  POOLER_STATS_PORT,
  poolerDeployments,
  poolerTargetName,
  type PoolerEndpoint,
} from '../endpoint';

/** The pool modes PgBouncer serves (all of proxylab's: lib/poolers/products.ts). */
export type PgbouncerPoolMode = PoolMode;

/** The data port every PgBouncer process listens on (so_reuseport). */
export const PGBOUNCER_PORT = 6432;

/** The PgBouncer database alias a pool mode is served under: transaction = the db name itself. */
export function poolDatabaseAlias(dbname: string, mode: PgbouncerPoolMode): string {
  return mode === 'transaction' ? dbname : `${dbname}_session`;
}

/** The product-neutral host config (lib/poolers/host-config.ts), re-exported for older imports. */
export type { PoolerHostConfig } from '../host-config';
