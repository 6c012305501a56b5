/** A PoolerEndpoint as the stack output carries it: a two-process dedicated PgBouncer 1.25.2 with TLS. */
import type { PoolerEndpoint } from '../../lib/poolers/pgbouncer/layout';

export function poolerEndpoint(over: Partial<PoolerEndpoint> = {}): PoolerEndpoint {
  return {
    name: 'bouncer',
    product: 'pgbouncer',
    placement: 'dedicated',
    host: '10.0.1.5',
    port: 6432,
    adminPorts: [6440, 6441],
    statsPort: 6439,
    poolModes: ['transaction', 'session'],
    processes: 2,
    poolPercent: 90,
    maxPreparedStatements: 200,
    version: '1.25.2',
    tls: true,
    ...over,
  };
}
