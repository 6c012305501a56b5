/**
 * The contract between the lab file, the stack, the pooler host and the runners for a self-hosted
 * PgBouncer (pure: types and constants, no I/O). The stack (lib/constructs) renders these values
 * into user data and a stack output; the pooler bootstrap and agent (lib/pooler-host) read them on the
 * host; the runner builds pooler targets from the stack output; `proxylab local` uses the same
 * configuration module (lib/poolers/pgbouncer/config.ts) for its throwaway PgBouncer.
 *
 * Process layout: `processes` PgBouncer processes share the data port with `so_reuseport` (the
 * kernel spreads new connections across them), so a 4-vCPU host is not capped at one core. The
 * product-neutral endpoint (ports, the stack output's schema) is lib/poolers/endpoint.ts.
 */

import type { PoolMode, PoolerPlacement } from '../products';
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

/**
 * What user data writes to /etc/proxylab/pooler-<name>.json on a pooler host (or a runner, for
 * on-runners) before `node /opt/proxylab/pooler.js bootstrap --config <that file>` runs. No secrets:
 * the bootstrap reads them from Secrets Manager.
 */
export interface PoolerHostConfig {
  readonly name: string;
  readonly placement: PoolerPlacement;
  readonly region: string;
  /** Master credentials of the database (JSON secret: username, password, dbname, host, port). */
  readonly dbSecretArn: string;
  /** The pooler admin/stats user (JSON secret: username, password). */
  readonly adminSecretArn: string;
  /** The database writer (Aurora writer endpoint or the RDS instance endpoint). */
  readonly serverHost: string;
  readonly serverPort: number;
  /** `0.0.0.0` on a dedicated host, `127.0.0.1` on runners. */
  readonly listenAddr: string;
  readonly poolModes: readonly PgbouncerPoolMode[];
  readonly processes: number;
  /** The lab's share of max_connections for this pooler in total (not divided). */
  readonly poolPercent: number;
  /** Deployments that split poolPercent: poolerDeployments(placement, runner count). */
  readonly sharedBy: number;
  readonly maxPreparedStatements: number;
  readonly tls: boolean;
  /** The installed binary (from the pinned release). */
  readonly pgbouncerPath: string;
  readonly version: string;
}
