/**
 * What every self-hosted pooler deployment looks like from the outside, whatever its product: the
 * stack output `PoolerEndpoints` (name → endpoint), which the run request carries to the runners.
 * One zod schema, the type inferred from it: lib/config/stack-outputs.ts parses the output with it,
 * lib/aws/run-request.ts embeds it, lib/constructs renders values of its type.
 *
 * Process layout: `processes` pooler processes share the data port (PgBouncer: so_reuseport). Each
 * process's admin console is reachable from the runners on `adminPortOf(i)` through the pooler
 * agent's relay (TCP → that process's unix socket); the agent also answers on `POOLER_STATS_PORT`
 * with one JSON line of per-process CPU ticks, and on `POOLER_CONTROL_PORT` to a runner's request to
 * restart one process (a rolling restart, ./control.ts).
 */
import { z } from 'zod';
import {
  POOL_MODES,
  POOLER_PLACEMENTS,
  POOLER_PRODUCTS,
  type PoolMode,
  type PoolerPlacement,
} from './products';

/**
 * The agent's control channel (lib/pooler-host/control.ts, protocol ./control.ts): a rolling restart
 * of one process on request, authenticated by a key derived from the admin secret; reachable only
 * from the runners' security group, like the stats and admin ports.
 */
export const POOLER_CONTROL_PORT = 6438;
/** The agent's per-process CPU endpoint (one JSON line, then close). */
export const POOLER_STATS_PORT = 6439;
/** First admin relay port; process i (0-based) is at adminPortOf(i). */
export const POOLER_ADMIN_PORT_BASE = 6440;
/** At most this many processes (ports 6440–6471 are reserved for the relays). */
export const POOLER_PROCESSES_MAX = 32;
/** At most this many worker threads in one process of a multithreaded pooler (PgDoorman). */
export const POOLER_WORKER_THREADS_MAX = 128;

export function adminPortOf(processIndex: number): number {
  return POOLER_ADMIN_PORT_BASE + processIndex;
}

/**
 * How many deployments share one pooler's `poolPercent`: a dedicated host is one; a pooler placed
 * on the runners runs once per runner, and together they open the share (so the lab's percentage
 * means the same — a share of max_connections in total — wherever the pooler runs).
 */
export function poolerDeployments(placement: PoolerPlacement, runnerCount: number): number {
  return placement === 'dedicated' ? 1 : Math.max(1, runnerCount);
}

/** A pooler target's name: the lab's pooler name and the pool mode. */
export function poolerTargetName(pooler: string, mode: PoolMode): string {
  return `${pooler}-${mode}`;
}

const port = z.number().int().min(1).max(65535);

/**
 * One deployed pooler as the stack output `PoolerEndpoints` carries it. No secrets: the admin
 * user's password is in the secret `PoolerAdminSecretArn` names.
 */
export const poolerEndpointSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z][A-Za-z0-9-]*$/),
    /** The product (lib/poolers/registry.ts); outputs written before there was a choice are PgBouncer. */
    product: z.enum(POOLER_PRODUCTS).default('pgbouncer'),
    placement: z.enum(POOLER_PLACEMENTS),
    /** Private IP of the dedicated host; `127.0.0.1` for on-runners. */
    host: z.string().min(1),
    port,
    /** adminPortOf(i) for each process, in process order. */
    adminPorts: z.array(port).min(1).readonly(),
    statsPort: port,
    /** The agent's control channel (POOLER_CONTROL_PORT); absent: a host deployed before it (no rolling restart). */
    controlPort: port.optional(),
    poolModes: z.array(z.enum(POOL_MODES)).min(1).readonly(),
    processes: z.number().int().min(1).max(POOLER_PROCESSES_MAX),
    /** Share of max_connections the pooler opens in total, split across processes. */
    poolPercent: z.number().int().min(1).max(100),
    maxPreparedStatements: z.number().int().min(0).max(2_147_483_647),
    /** The pinned release, e.g. `1.25.2`. */
    version: z.string().min(1),
    /** Clients must use TLS (PgBouncer: client_tls_sslmode = require). */
    tls: z.boolean(),
  })
  .refine((e) => e.adminPorts.length === e.processes, {
    error: 'one admin port per process',
    path: ['adminPorts'],
  })
  .readonly();

export type PoolerEndpoint = z.output<typeof poolerEndpointSchema>;
/** What a writer (the construct) gives: the product may be left to its default. */
export type PoolerEndpointInput = z.input<typeof poolerEndpointSchema>;
