/**
 * Suites for proxylab's own tests, never for users: not in the catalog (lib/suite/catalog.ts), so
 * not in SUITE_NAMES, `--help`, the generated docs, `--suite`'s error message or `proxylab run`.
 * Only `proxylab local --test-suite <name>` (a hidden flag) and a runner started with the test-only
 * `--test-suites on` (RunnerTestSettings, lib/aws/runner-args.ts: never in a run request, off in
 * PRODUCTION_RUNNER_SETTINGS) run them, through the same CLI or runner, stack and engine as any
 * suite (CONTRIBUTING.md "Test time").
 *
 * `test-steps` is the run the tests interrupt, kill, signal, race and resume (SIGINT/SIGTERM/
 * SIGHUP, a server stopped or SIGKILLed mid-step, two runs on one directory, a reaped stack):
 * what they check is the run's life cycle, not a finding, so its steps hold each other's shape
 * (pgbench `-T 3` on the same targets as smoke, `pgbench -i` at scale 1 making the tables) without
 * pgbench at full speed: a script that waits 50 ms in the server keeps a query in flight (as at full
 * speed) at a few percent of a core, where a smoke step takes both (bench/README.md "npm test time"). Step 1 runs direct, steps 2–4 through the PgBouncer
 * transaction pool: step 3 goes through PgBouncer as smoke's does, so a test that stops PgBouncer
 * "during step 3" stops the step's own pooler, and step 4 sees a stop that step 3 outlived.
 */
import { getSuite } from './catalog';
import type { Scenario, ScriptSpec, Suite } from './scenario';
import {
  DIRECT,
  DIRECT_BELOW_SUCCEEDS,
  POOLED_SUCCEEDS,
  SELF_HOSTED_TRANSACTION_POOL,
} from './experiments/common';

/**
 * Each transaction waits 50 ms in the server: a query is in flight nearly all the time (a server
 * connection terminated under a step is one a client is using, as at full speed), at ≈ 20
 * transactions per second per client instead of thousands.
 */
const SLEEP_50MS: ScriptSpec = {
  parts: [{ file: { name: 'sleep-50ms.sql', sql: 'SELECT pg_sleep(0.05);\n' } }],
};

const TEST_STEPS: Scenario = {
  name: 'test-steps',
  // E2's shape (direct and pooled at a few clients, both succeed); no finding is judged from it
  experiment: 'E2',
  title: 'Test-only: slow-transaction steps to interrupt, kill and resume',
  finding: 'None: a run for proxylab’s own tests of interrupts, server stops and resumes.',
  script: SLEEP_50MS,
  protocols: ['simple'],
  connects: ['persistent'],
  clients: [2],
  jobs: 1,
  durationSec: 3,
  scale: 1,
  // the script reads no table: the tables made, no rows loaded (pgbench -i's generate, vacuum and
  // primary keys are ≈ 0.3 CPU-s per stack, some 40 stacks per npm test)
  initFlags: ['--init-steps=dt'],
  repetitions: 1,
  targets: [DIRECT],
  expectations: [DIRECT_BELOW_SUCCEEDS, POOLED_SUCCEEDS],
};

/**
 * Steps 2–4, all through PgBouncer: a stop of either server during step 3 is seen by step 3 or by
 * step 4, whose pool reset needs new server connections (a smart shutdown refuses them) and whose
 * clients need PgBouncer (one told to shut down refuses them).
 */
const TEST_STEPS_POOLED: Scenario = {
  ...TEST_STEPS,
  name: 'test-steps-pooled',
  clients: [2, 3, 4],
  targets: [SELF_HOSTED_TRANSACTION_POOL],
};

/**
 * smoke's own scenarios (the catalog's objects, their expectations and comparisons unchanged) at
 * pgbench -T 1 instead of -T 3: the same steps and the same findings — prepared statements failing
 * through a transaction pool that does not carry them, direct refused above max_connections while
 * the pool queues, -C several times faster through the pooler — at about 40 % of the full-speed
 * CPU (9.7 CPU-s a run against 22.7). None of these findings depends on the step's length: they are
 * error classes, refusals and a throughput ratio of 7–22 × against the 3 × judged (EXPERIMENTS.md
 * E3; a 1 s step still counts hundreds of -C transactions direct and thousands pooled; measured at
 * -T 1: 27.5–31.6 ×). For tests whose point is the findings
 * through something else (a fleet of runners, PgDoorman, the current PgBouncer with two processes);
 * local-smoke.test.ts runs `--suite smoke` itself, at -T 3, as users do.
 */
const SMOKE_SHORT: readonly Scenario[] = getSuite('smoke').scenarios.map((s) => ({ ...s, durationSec: 1 }));

/**
 * smoke's own churn scenario at -T 1 (SMOKE_SHORT's): -C direct and -C through the transaction pool
 * at full speed, and the comparison between them — for a test about that comparison (one that
 * breaks when the "pooler" is the server itself) without smoke's other six steps.
 */
const SMOKE_CHURN: readonly Scenario[] = SMOKE_SHORT.filter((s) => s.name === 'smoke-churn');

/**
 * test-steps' own two scenarios (the objects above, not copies) at pgbench -T 1: the same four steps
 * in a third of the time, for a run that only has to complete, or that is interrupted before its
 * steps or at a step's start (a reaped stack's successor, a fresh start after an interrupt, SIGHUP
 * as step 3 starts) — never one whose server is stopped *inside* a step's window (those keep -T 3).
 */
const SHORT_STEPS: readonly Scenario[] = [TEST_STEPS, TEST_STEPS_POOLED].map((s) => ({
  ...s,
  durationSec: 1,
}));

const TEST_SUITES: readonly Suite[] = [
  {
    name: 'test-steps',
    description:
      'Test-only (proxylab’s own tests): four pgbench -T 3 steps of SELECT pg_sleep(0.05), direct then PgBouncer.',
    scenarios: [TEST_STEPS, TEST_STEPS_POOLED],
  },
  {
    name: 'test-steps-short',
    description: 'Test-only (proxylab’s own tests): test-steps at pgbench -T 1.',
    scenarios: SHORT_STEPS,
  },
  {
    name: 'test-smoke-short',
    description: 'Test-only (proxylab’s own tests): smoke’s scenarios and findings at pgbench -T 1.',
    scenarios: SMOKE_SHORT,
  },
  {
    name: 'test-smoke-churn',
    description:
      'Test-only (proxylab’s own tests): smoke’s connection-churn scenario alone, at -T 1, full speed.',
    scenarios: SMOKE_CHURN,
  },
];

export const TEST_SUITE_NAMES: readonly string[] = TEST_SUITES.map((s) => s.name);

/** The test-only suite of that name, or null. */
export function getTestSuite(name: string): Suite | null {
  return TEST_SUITES.find((s) => s.name === name) ?? null;
}

/** Whether a suite is one of these (its resume command names it with `--test-suite`). */
export function isTestSuite(suite: Pick<Suite, 'name'>): boolean {
  return TEST_SUITE_NAMES.includes(suite.name);
}
