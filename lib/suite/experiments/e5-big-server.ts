/**
 * E5: PgBouncer in front of a big server — 50..1000 clients relative to max_connections, with and
 * without -C, best of three, and 10-minute runs.
 */
import type { ClientsSpec, Comparison, ExpectationRule, Experiment, Scenario } from '../scenario';
import {
  TPCB,
  DIRECT,
  MANAGED_POOL,
  SESSION_POOL,
  UNPOOLED,
  PGBOUNCER,
  RDS_PROXY,
  DIRECT_ABOVE_REFUSED,
  DIRECT_NEAR_ANY,
  DIRECT_BELOW_SUCCEEDS,
  PGBOUNCER_SESSION_OVER_POOL,
  POOLED_SUCCEEDS,
} from './common';

/** k/24 × max_connections, k = 1..20: 50..1000 clients on E5's max_connections = 1200. */
const E5_CLIENTS: readonly ClientsSpec[] = Array.from({ length: 20 }, (_, i) => ({
  times: (i + 1) / 24,
  of: 'maxConnections' as const,
}));

const E5_EXPECTATIONS: readonly ExpectationRule[] = [
  DIRECT_ABOVE_REFUSED,
  DIRECT_NEAR_ANY,
  DIRECT_BELOW_SUCCEEDS,
  PGBOUNCER_SESSION_OVER_POOL,
  POOLED_SUCCEEDS,
];
const E5_COMPARISONS: readonly Comparison[] = [
  {
    id: 'pooler-churn-vs-direct-churn',
    description: 'with connection overhead (-C): PgBouncer ≥ 2 × direct tps',
    numerator: { target: PGBOUNCER, connect: 'per-transaction' },
    denominator: { target: UNPOOLED, connect: 'per-transaction' },
    minRatio: 2,
    published: '> 750 tps through PgBouncer vs ≈ 200 direct at high clients',
  },
  {
    id: 'pooler-vs-direct-persistent',
    description: 'without connection overhead: PgBouncer relative to direct',
    numerator: { target: PGBOUNCER, connect: 'persistent' },
    denominator: { target: UNPOOLED, connect: 'persistent' },
    minRatio: null,
    published: 'direct wins up to ≈ 200–300 clients',
  },
  {
    id: 'rds-proxy-churn-vs-direct-churn',
    description:
      'with connection overhead (-C): RDS Proxy relative to direct (the cloud stand-in for the published PgBouncer)',
    numerator: { target: RDS_PROXY, connect: 'per-transaction' },
    denominator: { target: UNPOOLED, connect: 'per-transaction' },
    minRatio: null,
  },
];

const E5_SHORT: Scenario = {
  name: 'e5-short',
  experiment: 'E5',
  title: 'PgBouncer in front of a big server: short bursts, best of three',
  finding:
    'With connection overhead the pooler holds > 750 tps while direct falls to ≈ 200; without it direct wins up to ' +
    '≈ 200–300 clients; a pooler on its own host beats one on the database host.',
  script: TPCB,
  protocols: ['simple'],
  connects: ['persistent', 'per-transaction'],
  clients: E5_CLIENTS,
  jobs: 20,
  durationSec: 60,
  scale: 100,
  initFlags: [],
  repetitions: 3,
  targets: [DIRECT, SESSION_POOL, MANAGED_POOL],
  expectations: E5_EXPECTATIONS,
  comparisons: E5_COMPARISONS,
  note: 'Published: caches flushed and server restarted between runs; the lab resets the pool but does not restart the server.',
};

const E5_LONG: Scenario = {
  ...E5_SHORT,
  name: 'e5-long',
  title: 'PgBouncer in front of a big server: 10-minute runs',
  clients: [4, 8, 16].map((k) => ({ times: k / 24, of: 'maxConnections' as const })),
  durationSec: 600,
  repetitions: 1,
};

export const E5_EXPERIMENT: Experiment = {
  id: 'E5',
  // Published 2023-08-22; a revised version of the same post is dated 2023-08-29 (enterprisedb.com/node/1263321).
  source: {
    title: 'EDB Postgres Advanced Server 15 TPS Benchmark',
    publisher: 'EDB (EnterpriseDB blog)',
    date: '2023-08-22',
    url: 'https://www.enterprisedb.com/node/1263271',
  },
  suite: {
    name: 'e5',
    description:
      'E5: TPC-B 50..1000 clients (relative to max_connections), best of three, with and without -C.',
    scenarios: [E5_SHORT, E5_LONG],
  },
};
