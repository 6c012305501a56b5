/**
 * LATENCY: what a pooler adds to every statement. The figure people quote ("1–3 ms") has no source;
 * this measures it on the user's own setup: `SELECT 1` from one client, through every target and
 * direct in the same run, back to back (unthrottled) and at a fixed low rate, with the simple and the
 * extended protocol, repeated so the spread is known. The report takes each target's p50 and p99
 * minus direct's, repetition by repetition (a repetition runs every target one after the other), and
 * shows the median and the range of those differences (lib/report/latency.ts); in the cloud beside
 * the zones of the runner, the proxy and the writer (RunEnvironment.zones), since a zone hop is part
 * of the answer.
 *
 * Percentiles come from pgbench's per-transaction log (exact, µs resolution). At a fixed rate pgbench
 * measures each transaction from its scheduled start, so its latencies include the schedule lag and
 * the client's wake-up (about 0.2 ms on a loaded 2-core machine) — the same on every target of the
 * run, so the difference stays the pooler's; the unthrottled runs have neither.
 */
import type { Experiment, Scenario } from '../scenario';
import {
  DIRECT,
  DIRECT_ABOVE_REFUSED,
  DIRECT_BELOW_SUCCEEDS,
  DIRECT_NEAR_ANY,
  MANAGED_POOL,
  POOLED_SUCCEEDS,
  SELECT_1,
  SELF_HOSTED_TRANSACTION_POOL,
  SESSION_POOL,
} from './common';

/** One client, one statement after the other: the round trip through each target. */
export const LATENCY_SINGLE: Scenario = {
  name: 'latency-single',
  experiment: 'LATENCY',
  title: 'Added latency per statement: one client, back to back',
  finding:
    'A pooler adds latency to every statement; quoted as "1–3 ms" without a source. Measured here: p50 and p99 of ' +
    'SELECT 1 through each target minus direct on the same run, repetition by repetition.',
  script: SELECT_1,
  protocols: ['simple', 'extended'],
  connects: ['persistent'],
  clients: [1],
  jobs: 1,
  durationSec: 3,
  scale: 1,
  initFlags: [],
  repetitions: 3,
  targets: [DIRECT, SELF_HOSTED_TRANSACTION_POOL, SESSION_POOL, MANAGED_POOL],
  expectations: [DIRECT_ABOVE_REFUSED, DIRECT_NEAR_ANY, DIRECT_BELOW_SUCCEEDS, POOLED_SUCCEEDS],
  note: 'Thousands of statements per step even on a laptop: enough for a stable p99 of each repetition.',
};

/** One client at a fixed, low rate: each statement arrives at an idle path, as in a lightly loaded application. */
export const LATENCY_RATED: Scenario = {
  ...LATENCY_SINGLE,
  name: 'latency-rated',
  title: 'Added latency per statement: one client at 500 statements per second',
  rate: 500,
  durationSec: 5,
  note: 'pgbench -R 500: 2 500 statements per step; latencies include the schedule lag, the same on every target.',
};

export const LATENCY_EXPERIMENT: Experiment = {
  id: 'LATENCY',
  suite: {
    name: 'latency',
    description:
      'Added latency per statement (≈ 2.5 min locally): SELECT 1 from one client through every target and direct, back to back and at 500/s, simple and extended protocol, 3 repetitions.',
    scenarios: [LATENCY_SINGLE, LATENCY_RATED],
  },
};
