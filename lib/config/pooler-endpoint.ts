/**
 * A lab pooler as the stack output `PoolerEndpoints` describes it (lib/poolers/endpoint.ts): what
 * the stack writes once the pooler is deployed (lib/constructs/pooler-host.ts, lib/lab-stack.ts),
 * and what `run --dry-run` shows before it is (lib/operator/outputs.ts). Everything but the host
 * follows from the lab file and the product's driver.
 */
import {
  adminPortOf,
  POOLER_CONTROL_PORT,
  POOLER_STATS_PORT,
  type PoolerEndpoint,
} from '../poolers/endpoint';
import { poolerDriver } from '../poolers/registry';
import type { PoolerConfig } from './types';

/** The stack output entry for `pooler` reached at `host`. */
export function poolerEndpointOf(pooler: PoolerConfig, host: string): PoolerEndpoint {
  return {
    name: pooler.name,
    product: pooler.kind,
    placement: pooler.placement,
    host,
    port: poolerDriver(pooler.kind).host.dataPort,
    adminPorts: Array.from({ length: pooler.processes }, (_, i) => adminPortOf(i)),
    statsPort: POOLER_STATS_PORT,
    controlPort: POOLER_CONTROL_PORT,
    poolModes: pooler.poolModes,
    processes: pooler.processes,
    poolPercent: pooler.poolPercent,
    maxPreparedStatements: pooler.maxPreparedStatements,
    version: pooler.version,
    tls: pooler.tls,
  };
}
