/** E4: pool size as a share of max_connections, swept under a mixed read/write workload. */
import type { Experiment, Scenario } from '../scenario';
import { MIXED_READ_WRITE, MANAGED_POOL, SELF_HOSTED_TRANSACTION_POOL, MULTIPLEXING_POOL } from './common';

const E4: Scenario = {
  name: 'e4',
  experiment: 'E4',
  title: 'Pool size as a share of max_connections',
  finding:
    'Two proxies at MaxConnectionsPercent 50 % and 25 % drove a smaller instance out of memory (restart); the larger ' +
    'instance was stable. Re-run as a pool-percent sweep under a mixed read/write workload; watch FreeableMemory, ' +
    'CPU, DatabaseConnections and restarts per step.',
  script: MIXED_READ_WRITE,
  protocols: ['simple'],
  connects: ['persistent'],
  clients: [{ times: 1.5, of: 'maxConnections' }],
  jobs: 20,
  durationSec: 120,
  scale: 50,
  initFlags: [],
  repetitions: 1,
  targets: [MANAGED_POOL, SELF_HOSTED_TRANSACTION_POOL],
  poolPercents: [25, 50, 75, 100],
  // The published finding is the database restarting (out of memory) under the load: that restart's
  // errors are the measurement here, and break the `succeeds` rule below.
  serverStops: 'measured',
  expectations: [
    {
      when: { target: MULTIPLEXING_POOL },
      outcome: 'succeeds',
      note: 'clients queue for the pool at every percent; a restart of the database (out of memory) breaks this',
    },
  ],
  comparisons: [
    {
      id: 'pool50-vs-pool25',
      description: 'tps at pool 50 % relative to 25 %',
      numerator: { target: MULTIPLEXING_POOL, poolPercent: 50 },
      denominator: { target: MULTIPLEXING_POOL, poolPercent: 25 },
      minRatio: null,
    },
    {
      id: 'pool100-vs-pool25',
      description: 'tps at pool 100 % relative to 25 %',
      numerator: { target: MULTIPLEXING_POOL, poolPercent: 100 },
      denominator: { target: MULTIPLEXING_POOL, poolPercent: 25 },
      minRatio: null,
    },
  ],
  note: 'The published case was a real application; this sweep is its reproducible stand-in. Locally the percent sizes PgBouncer pools.',
};

export const E4_EXPERIMENT: Experiment = {
  id: 'E4',
  source: {
    title:
      'Two RDS Proxies (MaxConnectionsPercent 50 % and 25 %) in front of one Aurora cluster, a production application',
    publisher: null,
    date: null,
    url: null,
    note: 'not public: a team report of a real application; no public write-up could be confirmed',
  },
  suite: {
    name: 'e4',
    description: 'E4: pool-percent sweep (25/50/75/100 %) under a mixed read/write workload.',
    scenarios: [E4],
  },
};
