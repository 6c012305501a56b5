/**
 * E2: a client sweep, direct vs pooled — direct tps falls as clients grow and fails above
 * max_connections; through a pool clients queue instead. Scaled down for `quick` and `smoke`.
 */
import type { Experiment, Scenario } from '../scenario';
import {
  SELECT_1,
  SELECT_ONLY,
  DIRECT,
  MANAGED_POOL,
  SELF_HOSTED_TRANSACTION_POOL,
  LOCAL_AND_CLOUD,
  POOLED,
  UNPOOLED,
  DIRECT_ABOVE_REFUSED,
  DIRECT_NEAR_ANY,
  DIRECT_BELOW_SUCCEEDS,
  POOLED_SUCCEEDS,
} from './common';

const E2: Scenario = {
  name: 'e2',
  experiment: 'E2',
  title: 'Client sweep, direct vs proxy',
  finding:
    'Direct tps falls as clients grow (3056 → 358 for 100..500) and fails above max_connections; through the proxy ' +
    'tps is lower at few clients but stable, and clients beyond max_connections queue instead of failing.',
  script: SELECT_ONLY,
  protocols: ['simple'],
  connects: ['persistent'],
  // published: 100..700 clients on max_connections 550 (≈ 0.18 .. 1.27 ×)
  clients: [0.2, 0.4, 0.6, 0.8, 0.9, 1.1, 1.3].map((times) => ({ times, of: 'maxConnections' as const })),
  jobs: 20,
  transactionsPerClient: 10,
  scale: 4,
  initFlags: ['--unlogged-tables', '--foreign-keys'],
  repetitions: 1,
  targets: [DIRECT, MANAGED_POOL, SELF_HOSTED_TRANSACTION_POOL],
  expectations: [DIRECT_ABOVE_REFUSED, DIRECT_NEAR_ANY, DIRECT_BELOW_SUCCEEDS, POOLED_SUCCEEDS],
  comparisons: [
    {
      id: 'proxy-vs-direct-tps',
      description: 'tps through the pooler relative to direct at the same clients',
      numerator: { target: POOLED },
      denominator: { target: UNPOOLED },
      minRatio: null,
      published: '0.33 × at 100 clients, 1.5 – 3.7 × at 200..500 clients',
    },
  ],
};

const QUICK_E2: Scenario = {
  ...E2,
  name: 'quick-e2',
  title: 'E2 scaled down: direct vs pooled below and above max_connections',
  clients: [
    { times: 0.5, of: 'maxConnections' },
    { times: 1.5, of: 'maxConnections' },
  ],
  jobs: 2,
  transactionsPerClient: 500,
  scale: 1,
  initFlags: [],
  targets: LOCAL_AND_CLOUD,
};

const SMOKE_MAX_CONNECTIONS: Scenario = {
  ...QUICK_E2,
  name: 'smoke-max-connections',
  title: 'Direct above max_connections is refused, pooled with the same clients succeeds',
  script: SELECT_1,
  clients: [{ times: 1.5, of: 'maxConnections' }],
  transactionsPerClient: undefined,
  durationSec: 3,
  targets: LOCAL_AND_CLOUD,
  comparisons: [],
};

export const E2_EXPERIMENT: Experiment = {
  id: 'E2',
  source: {
    title:
      'Client sweep, direct vs RDS Proxy: pgbench 14.1 -S -t 10 against RDS for PostgreSQL 11.10 on db.t2.micro',
    publisher: null,
    date: null,
    url: null,
    note: 'not public: known from its published pgbench captures (test/fixtures/pgbench/pg14-rds/); no public address could be confirmed',
  },
  suite: {
    name: 'e2',
    description: 'E2 at published scale: client sweep direct vs proxy, -S -t 10.',
    scenarios: [E2],
  },
  quick: [QUICK_E2],
  smoke: [SMOKE_MAX_CONNECTIONS],
};
