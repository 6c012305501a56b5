/**
 * E3: connection churn (pgbench -C) — a new connection per transaction costs most of the
 * throughput; a pooler in front is the fix. Scaled down for `quick` and `smoke`.
 */
import type { Experiment, Scenario } from '../scenario';
import {
  SELECT_1,
  TPCB,
  DIRECT,
  MANAGED_POOL,
  SELF_HOSTED_TRANSACTION_POOL,
  SESSION_POOL,
  LOCAL_AND_CLOUD,
  UNPOOLED,
  PGBOUNCER,
  RDS_PROXY,
  DIRECT_ABOVE_REFUSED,
  DIRECT_NEAR_ANY,
  DIRECT_BELOW_SUCCEEDS,
  PGBOUNCER_SESSION_OVER_POOL,
  POOLED_SUCCEEDS,
} from './common';

const E3: Scenario = {
  name: 'e3',
  experiment: 'E3',
  title: 'Connection churn (-C)',
  finding:
    'A new connection per transaction (-C) costs about 18 × the throughput (8.2 vs 156 tps on Aurora); a pooler in front is the fix.',
  script: TPCB,
  protocols: ['simple'],
  connects: ['per-transaction', 'persistent'],
  clients: [20],
  jobs: 20,
  durationSec: 60,
  scale: 50,
  initFlags: [],
  repetitions: 1,
  targets: [DIRECT, MANAGED_POOL, SELF_HOSTED_TRANSACTION_POOL, SESSION_POOL],
  expectations: [
    DIRECT_ABOVE_REFUSED,
    DIRECT_NEAR_ANY,
    DIRECT_BELOW_SUCCEEDS,
    PGBOUNCER_SESSION_OVER_POOL,
    POOLED_SUCCEEDS,
  ],
  comparisons: [
    {
      id: 'direct-persistent-vs-churn',
      description: 'direct: persistent connections ≥ 3 × the tps of a new connection per transaction',
      numerator: { target: UNPOOLED, connect: 'persistent' },
      denominator: { target: UNPOOLED, connect: 'per-transaction' },
      minRatio: 3,
      published: '≈ 18 × (156 vs 8.2 tps)',
    },
    {
      id: 'pgbouncer-churn-vs-direct-churn',
      description: '-C through PgBouncer ≥ 3 × the tps of -C direct',
      numerator: { target: PGBOUNCER, connect: 'per-transaction' },
      denominator: { target: UNPOOLED, connect: 'per-transaction' },
      minRatio: 3,
    },
    {
      id: 'rds-proxy-churn-vs-direct-churn',
      description:
        '-C through RDS Proxy relative to -C direct (each new client connection still pays TLS to the proxy)',
      numerator: { target: RDS_PROXY, connect: 'per-transaction' },
      denominator: { target: UNPOOLED, connect: 'per-transaction' },
      minRatio: null,
    },
  ],
  note: 'Turn on log_connections / log_disconnections; Performance Insights counters xact_commit, total_auth_attempts, numbackends.',
};

const QUICK_E3: Scenario = {
  ...E3,
  name: 'quick-e3',
  title: 'E3 scaled down: connection churn (-C) direct vs through PgBouncer',
  script: SELECT_1,
  // as many clients as the pool has server connections, so persistent session pooling does not queue forever
  clients: [{ times: 1, of: 'poolSize' }],
  jobs: 2,
  durationSec: 10,
  scale: 1,
  targets: [...LOCAL_AND_CLOUD, SESSION_POOL],
  note: 'SELECT 1 instead of TPC-B so connection cost dominates on a 2-core machine (measured 7–22 × locally).',
};

const SMOKE_CHURN: Scenario = {
  ...QUICK_E3,
  name: 'smoke-churn',
  title: '-C churn several times faster through the pooler than direct',
  clients: [5],
  connects: ['per-transaction'],
  durationSec: 3,
  targets: LOCAL_AND_CLOUD,
  comparisons: (QUICK_E3.comparisons ?? []).filter(
    (c) => c.id === 'pgbouncer-churn-vs-direct-churn' || c.id === 'rds-proxy-churn-vs-direct-churn',
  ),
};

export const E3_EXPERIMENT: Experiment = {
  id: 'E3',
  source: {
    title: 'Managing Aurora PostgreSQL connection churn with pooling (Amazon Aurora User Guide)',
    publisher: 'AWS',
    date: null,
    url: 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraPostgreSQL.BestPractices.connection_pooling.html',
    note: 'a living page of the user guide, undated',
  },
  suite: {
    name: 'e3',
    description: 'E3 at published scale: connection churn, TPC-B -T 60 -c 20 with and without -C.',
    scenarios: [E3],
  },
  quick: [QUICK_E3],
  smoke: [SMOKE_CHURN],
};
