/**
 * The contract between the lab file, the stack, the pooler host and the runners for a self-hosted
 * PgBouncer (pure: types and constants, no I/O). The stack (lib/constructs) renders these values
 * into user data and a stack output; the pooler bootstrap and agent (lib/cloud) read them on the
 * host; the runner builds pooler targets from the stack output; `proxylab local` uses the same
 * configuration module (lib/poolers/pgbouncer/config.ts) for its throwaway PgBouncer.
 *
 * Process layout: `processes` PgBouncer processes share the data port with `so_reuseport` (the
 * kernel spreads new connections across them), so a 4-vCPU host is not capped at one core. Each
 * process has its own unix socket directory; its admin console is reachable from the runners on
 * `adminPortOf(i)` through the pooler agent's relay (TCP → that process's unix socket). The agent
 * also answers on `POOLER_STATS_PORT` with one JSON line of per-process CPU ticks.
 */

/** PgBouncer pool modes proxylab deploys. */
export type PgbouncerPoolMode = 'transaction' | 'session';
export type PoolerPlacement = 'dedicated' | 'on-runners';

/** The data port every PgBouncer process listens on (so_reuseport). */
export const PGBOUNCER_PORT = 6432;
/** The agent's per-process CPU endpoint (one JSON line, then close). */
export const POOLER_STATS_PORT = 6439;
/** First admin relay port; process i (0-based) is at adminPortOf(i). */
export const POOLER_ADMIN_PORT_BASE = 6440;
/** At most this many processes (ports 6440–6471 are reserved for the relays). */
export const POOLER_PROCESSES_MAX = 32;

/**
 * How many PgBouncer deployments share one pooler's `poolPercent`: a dedicated host is one; a
 * pooler placed on the runners runs once per runner, and together they open the share (so the lab's
 * percentage means the same — a share of max_connections in total — wherever the pooler runs).
 */
export function poolerDeployments(placement: PoolerPlacement, runnerCount: number): number {
  return placement === 'dedicated' ? 1 : Math.max(1, runnerCount);
}

export function adminPortOf(processIndex: number): number {
  return POOLER_ADMIN_PORT_BASE + processIndex;
}

/** The PgBouncer database alias a pool mode is served under: transaction = the db name itself. */
export function poolDatabaseAlias(dbname: string, mode: PgbouncerPoolMode): string {
  return mode === 'transaction' ? dbname : `${dbname}_session`;
}

/**
 * One deployed pooler as the stack output `PoolerEndpoints` carries it (JSON: name → this). No
 * secrets: the admin user's password is in the secret `PoolerAdminSecretArn` names.
 */
export interface PoolerEndpoint {
  readonly name: string;
  readonly placement: PoolerPlacement;
  /** Private IP of the dedicated host; `127.0.0.1` for on-runners. */
  readonly host: string;
  readonly port: number;
  /** adminPortOf(i) for each process, in process order. */
  readonly adminPorts: readonly number[];
  readonly statsPort: number;
  readonly poolModes: readonly PgbouncerPoolMode[];
  readonly processes: number;
  /** Share of max_connections the pooler opens in total, split across processes. */
  readonly poolPercent: number;
  readonly maxPreparedStatements: number;
  /** The pinned PgBouncer release, e.g. `1.25.2`. */
  readonly version: string;
  /** Clients must use TLS (client_tls_sslmode = require). */
  readonly tls: boolean;
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

/** A pooler target's name: the lab's pooler name and the pool mode. */
export function poolerTargetName(pooler: string, mode: PgbouncerPoolMode): string {
  return `${pooler}-${mode}`;
}
