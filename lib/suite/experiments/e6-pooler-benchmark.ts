/**
 * E6: PgDoorman's published pgbench comparison (its documentation's benchmarks page,
 * documentation/en/src/benchmarks.md, "Last updated: 2026-04-27"), re-run with its workload and its
 * shape — and with the counterpart it leaves out.
 *
 * Published setup: Ubicloud standard-60 (60 vCPU), PostgreSQL 14.22, pg_doorman 3.6.1 with 30
 * workers vs PgBouncer 1.25.1 (ONE process) vs Odyssey 1.4.1 (30 workers), a transaction pool of 40
 * server connections, `\set aid random(1, 100000)` / `SELECT :aid`, 60 s per run (the page's
 * caveat says 30 s; its bench.feature runs -T 30), simple / extended / prepared protocol, 1, 40, 120,
 * 500 and 10 000 clients, with and without `--connect`, with and without TLS. Its ratios
 * (pg_doorman tps / pgbouncer tps), without TLS:
 *
 *   clients        simple  extended  prepared   simple -C  extended -C  prepared -C
 *   1              ≈0 %    ≈0 %      ≈0 %       -14 %      -16 %        -9 %
 *   40             x2.9    x3.0      x3.4       x1.6       x1.7         x1.6
 *   120            x9.9    x10.4     x12.0      x1.7       x1.6         x1.7
 *   500            x6.6    x7.4      x8.5       x1.7       x1.7         x1.8
 *   10 000         x4.7    x5.2      x6.2       +41 %      +41 %        +40 %
 *
 * and p99/p50 at 10 000 simple-protocol clients: pg_doorman 1.1× (59.9 → 64.5 ms), pgbouncer 1.4×
 * (276 → 387 ms). "All three poolers use vendor defaults plus pool_size = 40. Tuning specific knobs
 * (pgbouncer so_reuseport, odyssey workers) will move the curves."
 *
 * What the lab judges: the DIRECTION the page states — PgDoorman's throughput at least PgBouncer's
 * (one process) from 1 × the pool up, persistent and -C — and that prepared statements through
 * PgDoorman's transaction pool succeed. The ratios themselves depend on the machine: they are
 * reported, not judged. The fair counterpart the page leaves out, PgBouncer with as many processes
 * as the host has cores (so_reuseport), and RDS Proxy and direct where the lab has them, are
 * reported beside it. Targets are chosen by capability: a lab with both a one-process and an
 * N-process PgBouncer gets both comparisons.
 */
import type { Comparison, ExpectationRule, Experiment, Scenario, Suite } from '../scenario';
import type { TargetMatch } from '../targets';
import {
  DIRECT,
  DIRECT_ABOVE_REFUSED,
  DIRECT_BELOW_SUCCEEDS,
  DIRECT_NEAR_ANY,
  MANAGED_POOL,
  MULTIPLEXED_PREPARED_FAILS,
  POOLED_SUCCEEDS,
  SELF_HOSTED_TRANSACTION_POOL,
  UNPOOLED,
} from './common';

/** PgDoorman's benchmark script: one indexed-free SELECT of a random number, pure pooler overhead. */
export const SELECT_AID = {
  parts: [{ file: { name: 'select-aid.sql', sql: '\\set aid random(1, 100000)\nSELECT :aid;\n' } }],
} as const;

const PGDOORMAN_TX: TargetMatch = { pooler: ['pgdoorman'], multiplexes: true };
/** The page's PgBouncer: one process. */
const PGBOUNCER_ONE: TargetMatch = { pooler: ['pgbouncer'], multiplexes: true, multiProcess: false };
/** The counterpart: PgBouncer processes sharing the port (so_reuseport), one per core. */
const PGBOUNCER_MANY: TargetMatch = { pooler: ['pgbouncer'], multiplexes: true, multiProcess: true };
const RDS_PROXY: TargetMatch = { pooler: ['rds-proxy'] };

const SOURCE = 'PgDoorman documentation, benchmarks page (2026-04-27)';

const PGDOORMAN_PREPARED_SUCCEEDS: ExpectationRule = {
  when: { target: { ...PGDOORMAN_TX, carriesPreparedStatements: ['yes'] }, protocols: ['prepared'] },
  outcome: 'succeeds',
  published: `${SOURCE}: prepared protocol through a 40-connection transaction pool, 1–10 000 clients, peak x12.0 vs PgBouncer at 120`,
  note: 'PgDoorman carries prepared statements through transaction pooling (its pool-level cache, prepared_statements on)',
};

/** A managed proxy's prepared statements are measured, not predicted (see E1). */
const MANAGED_PREPARED_MEASURED: ExpectationRule = {
  when: { target: { ...MANAGED_POOL, carriesPreparedStatements: ['measured'] }, protocols: ['prepared'] },
  outcome: 'any',
  note: 'RDS Proxy: whether named statements survive multiplexing is measured (E1), not predicted',
};

const EXPECTATIONS: readonly ExpectationRule[] = [
  DIRECT_ABOVE_REFUSED,
  DIRECT_NEAR_ANY,
  DIRECT_BELOW_SUCCEEDS,
  PGDOORMAN_PREPARED_SUCCEEDS,
  MULTIPLEXED_PREPARED_FAILS,
  MANAGED_PREPARED_MEASURED,
  POOLED_SUCCEEDS,
];

const PUBLISHED_RATIOS =
  'simple x2.9 / x9.9 / x6.6 / x4.7, extended x3.0 / x10.4 / x7.4 / x5.2, prepared x3.4 / x12.0 / x8.5 / x6.2 at 40 / 120 / 500 / 10 000 clients; with --connect x1.6–1.8 (+40 % at 10 000)';

/** The page's comparison, its direction judged (`minRatio` 1) or only reported (null). */
function comparisons(directionRatio: number | null): Comparison[] {
  return [
    {
      id: 'pgdoorman-vs-pgbouncer-one-process',
      description:
        directionRatio === null
          ? 'PgDoorman (worker threads) vs PgBouncer with one process, the published comparison'
          : 'PgDoorman (worker threads) at least PgBouncer with one process, the direction the page states',
      numerator: { target: PGDOORMAN_TX },
      denominator: { target: PGBOUNCER_ONE },
      minRatio: directionRatio,
      published: `${SOURCE}: ${PUBLISHED_RATIOS}`,
    },
    {
      id: 'pgdoorman-vs-pgbouncer-processes',
      description:
        'PgDoorman vs PgBouncer with several processes on one port (so_reuseport): the counterpart the page leaves out',
      numerator: { target: PGDOORMAN_TX },
      denominator: { target: PGBOUNCER_MANY },
      minRatio: null,
    },
    {
      id: 'pgbouncer-processes-vs-one-process',
      description: 'PgBouncer with several processes vs one: what so_reuseport buys on this host',
      numerator: { target: PGBOUNCER_MANY },
      denominator: { target: PGBOUNCER_ONE },
      minRatio: null,
    },
    {
      id: 'pgdoorman-vs-rds-proxy',
      description: 'PgDoorman vs RDS Proxy with the same clients',
      numerator: { target: PGDOORMAN_TX },
      denominator: { target: RDS_PROXY },
      minRatio: null,
    },
    {
      id: 'pgdoorman-vs-direct',
      description: 'PgDoorman vs connecting to the server directly',
      numerator: { target: PGDOORMAN_TX },
      denominator: { target: UNPOOLED },
      minRatio: null,
    },
  ];
}

const TARGETS: readonly TargetMatch[] = [DIRECT, SELF_HOSTED_TRANSACTION_POOL, MANAGED_POOL];

/** 40, 120, 500 and 10 000 clients on the page's pool of 40: 1, 3, 12.5 and 250 × the pool. */
const E6: Scenario = {
  name: 'e6',
  experiment: 'E6',
  title:
    "PgDoorman's published benchmark: a transaction pool, 1–250 × its size, three protocols, with and without -C",
  finding:
    'PgDoorman (30 worker threads) outran a single PgBouncer process on every protocol from 40 clients on a 40-connection transaction pool: x2.9–x12.0 persistent, x1.6–x1.8 with --connect; prepared statements work through its transaction pool.',
  script: SELECT_AID,
  protocols: ['simple', 'extended', 'prepared'],
  connects: ['persistent', 'per-transaction'],
  clients: [
    { times: 1, of: 'poolSize' },
    { times: 3, of: 'poolSize' },
    { times: 12.5, of: 'poolSize' },
    { times: 250, of: 'poolSize' },
  ],
  jobs: 16,
  durationSec: 60,
  scale: 1,
  initFlags: [],
  repetitions: 1,
  targets: TARGETS,
  expectations: EXPECTATIONS,
  comparisons: comparisons(1),
  note: "Give the pooler its own host (placement dedicated) and size the pool to 40 server connections with poolPercent (labs/e6-poolers.json). 250 × the pool (10 000 clients) needs pgbench -j high enough and the runners' open-file limit above 10 000.",
};

/** One client: the page reports a tie (≈0 %, -9…-16 % with --connect); no direction to judge. */
const E6_ONE_CLIENT: Scenario = {
  ...E6,
  name: 'e6-one-client',
  title: "PgDoorman's published benchmark with one client (a tie on the page)",
  finding:
    'With one client the page reports a tie (≈0 %) and PgBouncer slightly ahead with --connect (-9 to -16 %).',
  clients: [1],
  jobs: 1,
  comparisons: comparisons(null),
};

/**
 * ≤ 3 min on 2 cores: the local stand-in's pool (25 % of 40 = 10) at 3 × its size, the page's peak
 * (120 clients on 40), three protocols persistent; and -C at 1 × the pool. pgbench, PostgreSQL and
 * three poolers share two cores, so the page's ratios, measured on 60 cores with a pooler on its
 * own, cannot be: the comparisons are reported, and what is judged is that every pooled step
 * succeeds and that prepared statements through PgDoorman's transaction pool do.
 */
const E6_LOCAL: Scenario = {
  ...E6,
  name: 'e6-local',
  title: 'E6 scaled down: PgDoorman beside PgBouncer with 1 and 2 processes, 3 × the pool, three protocols',
  finding:
    'Scaled down to two shared cores, E6 checks what does not depend on the machine: every pooled step succeeds and prepared statements go through PgDoorman’s transaction pool. The page’s throughput ratios (x2.9–x12.0 on 60 vCPU) are reported beside PgBouncer with 1 and 2 processes, not judged.',
  protocols: ['simple', 'extended', 'prepared'],
  connects: ['persistent'],
  clients: [{ times: 3, of: 'poolSize' }],
  jobs: 2,
  durationSec: 5,
  comparisons: comparisons(null),
  note: 'Ratios reported, not judged: pgbench, PostgreSQL and three poolers share the same two cores.',
};

const E6_LOCAL_CONNECT: Scenario = {
  ...E6_LOCAL,
  name: 'e6-local-connect',
  title: 'E6 scaled down: a new connection per transaction (-C) through each pooler, 1 × the pool',
  finding:
    'Scaled down, a new connection per transaction (-C) through each pooler succeeds; the page’s -C ratios (x1.6–x1.8) are reported, not judged.',
  protocols: ['simple'],
  connects: ['per-transaction'],
  clients: [{ times: 1, of: 'poolSize' }],
};

/** The poolers e6-local starts: PgBouncer with one process and with two (so_reuseport), PgDoorman. */
export const E6_LOCAL_POOLERS = 'pgbouncer,pgbouncer:2,pgdoorman';

const E6_LOCAL_SUITE: Suite = {
  name: 'e6-local',
  description:
    'E6 scaled down (≈ 2 min on 2 cores): PgDoorman beside PgBouncer with 1 and 2 processes, SELECT :aid at 3 × the pool (simple/extended/prepared) and -C.',
  scenarios: [E6_LOCAL, E6_LOCAL_CONNECT],
  localPoolers: E6_LOCAL_POOLERS,
};

export const E6_EXPERIMENT: Experiment = {
  id: 'E6',
  source: {
    title: 'PgDoorman benchmarks (documentation/en/src/benchmarks.md)',
    publisher: 'ozontech/pg_doorman',
    date: '2026-04-27',
    url: 'https://github.com/ozontech/pg_doorman/blob/master/documentation/en/src/benchmarks.md',
  },
  suite: {
    name: 'e6',
    description:
      "E6 at published scale: PgDoorman's benchmark (SELECT :aid, 1–250 × a pool of 40, three protocols, ±-C) vs PgBouncer with 1 and N processes, RDS Proxy, direct.",
    scenarios: [E6, E6_ONE_CLIENT],
  },
  extraSuites: [E6_LOCAL_SUITE],
};
