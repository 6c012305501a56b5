/**
 * Every way a server stops under a step is infrastructure, never a finding (issue 21), end to end
 * against real PostgreSQL and PgBouncer through the real CLI: a smart, fast or immediate shutdown of
 * the postmaster, a `pg_ctl restart`, and PgBouncer told to shut down (Debian's 1.18 and the
 * current one, ≥ 1.21, that test/helpers/pgbouncer-versions.ts finds, whose signals may mean
 * different things: 1.18 SIGINT = wait for servers, SIGTERM = exit now; 1.23+ SIGTERM = wait for
 * clients, SIGINT = wait for servers). Whatever the version, each run must end `failed`, exit 1,
 * with the step not measured and no broken verdict; the same run id then measures what was not
 * measured.
 * The SIGKILL cases are in local-infra-failure.test.ts. The run is the test-only one made to be
 * interrupted (RUN_TO_INTERRUPT: slow transactions, step 3 through PgBouncer): what is checked is
 * the run's life cycle, not a finding.
 */
import { expect } from '@jest/globals';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveRunAs, runCommand } from '../../lib/exec/process';
import type { RunManifest, StepRecord } from '../../lib/suite/types';
import {
  assertStackGone,
  exitedAs,
  parseStackLine,
  pgCtlRestart,
  pidsMentioning,
  RUN_TO_INTERRUPT,
  spawnCli,
  stackServerPid,
  type StackLine,
} from '../helpers/local-stack';
import { lookUp } from '../helpers/looked-up';
import { envWithPgbouncer, pgbouncerModern } from '../helpers/pgbouncer-versions';
import { scratchDir } from '../helpers/scratch';

const outDir = scratchDir('proxylab-server-stop-');

/** The current PgBouncer, looked up as the file loads: its version names its describe. */
const modern = lookUp(() => pgbouncerModern('local-server-stop.test.ts'));

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}

function allSteps(runDir: string): StepRecord[] {
  const dir = path.join(runDir, 'steps');
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => readJson<StepRecord>(path.join(dir, f)));
}

/** `pg_ctl restart -m fast` of the stack's cluster, as the OS user the server runs as. */
async function restartStackServer(stack: StackLine): Promise<void> {
  const postmaster = stackServerPid(stack.baseDir, 'pg');
  const pgCtl = path.join(path.dirname(fs.readlinkSync(`/proc/${postmaster}/exe`)), 'pg_ctl');
  const pgDir = path.join(stack.baseDir, 'pg');
  const res = await pgCtlRestart(pgCtl, path.join(pgDir, 'data'), resolveRunAs());
  // The run may stop the stack (and remove its directory) while the new server starts: either way
  // pg_ctl ran; what matters is what proxylab recorded and that nothing is left running.
  if (res.exitCode === null) throw new Error(`pg_ctl restart did not finish: ${res.stderr}`);
}

/** pg_terminate_backend() of every `bench` session (PgBouncer's server connections): 57P01 while the server stays up. */
async function terminateBenchBackends(stack: StackLine): Promise<void> {
  const postmaster = stackServerPid(stack.baseDir, 'pg');
  const psql = path.join(path.dirname(fs.readlinkSync(`/proc/${postmaster}/exe`)), 'psql');
  const res = await runCommand(psql, [
    ...['-h', '127.0.0.1', '-p', String(stack.postgresPort), '-U', 'postgres', '-d', 'postgres', '-At'],
    ...['-c', "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'bench'"],
  ]);
  if (res.exitCode !== 0 || !(Number(res.stdout.trim()) > 0))
    throw new Error(
      `pg_terminate_backend terminated nothing (exit ${res.exitCode}): ${res.stdout} ${res.stderr}`,
    );
}

type Disrupt = (stack: StackLine) => Promise<void>;

const signal =
  (part: 'pg' | 'pgbouncer', sig: NodeJS.Signals): Disrupt =>
  (stack) => {
    process.kill(stackServerPid(stack.baseDir, part), sig);
    return Promise.resolve();
  };

/** Printed on step 3's start event, before the pool reset: the signal waits for pgbench. */
const RUNNING_STEP = RUN_TO_INTERRUPT.started(3);
let attempt = 0;

async function stopMidStepThenResume(
  name: string,
  disrupt: Disrupt,
  cause: RegExp,
  recorded: 'always' | 'maybe',
  env: Record<string, string> = {},
): Promise<void> {
  const runId = `${name}-${++attempt}`;
  const args = RUN_TO_INTERRUPT.args(outDir, runId);
  const runDir = path.join(outDir, runId);
  // GIVEN a run whose third step's pgbench (through PgBouncer) is running
  const first = spawnCli(args, env);
  await first.waitForStdout(RUNNING_STEP, 90_000);
  const stack = parseStackLine(first.stdout());
  if (!stack) throw new Error(`no stack line in ${first.stdout()}`);
  const deadline = Date.now() + 30_000;
  while (pidsMentioning(path.join(stack.baseDir, 'pgbench')).length === 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));

  // WHEN the server is stopped under it
  await disrupt(stack);

  // THEN the run failed (exit 1) with an infrastructure cause: resumable, not `completed`
  expect(await exitedAs(first, 1)).toEqual({ code: 1 });
  const m = readJson<RunManifest>(path.join(runDir, 'manifest.json'));
  expect(m.status).toBe('failed');
  expect(m.error).toMatch(/^infrastructure failure/);
  expect(m.error).toMatch(cause);
  // AND the step it stopped under is not measured, and no verdict broke because of it. (A pooler
  // that exits between two steps fails the run before the next one starts: then no step is recorded.)
  const steps = allSteps(runDir);
  const unmeasured = steps.filter((r) => r.status === 'infrastructure-error');
  if (recorded === 'always') expect(unmeasured).toHaveLength(1);
  else expect(unmeasured.length).toBeLessThanOrEqual(1);
  for (const r of unmeasured) expect(r.verdict.held).toBeNull();
  if (unmeasured.length > 0)
    expect(first.stdout()).toMatch(
      new RegExp(`! \\[\\d/${RUN_TO_INTERRUPT.steps}\\] \\S+ {2}NOT MEASURED, infrastructure failure: `),
    );
  expect(steps.filter((r) => r.verdict.held === false).map((r) => r.stepId)).toEqual([]);
  expect(first.stdout()).not.toMatch(/^✗ /m);
  expect(first.stdout()).not.toMatch(/verdict\(s\) did not hold/);
  // AND every server is gone: a restarted postmaster (no child of proxylab's) too
  await assertStackGone(stack);

  // WHEN the same run id runs again
  const second = spawnCli(args, env);
  // THEN it measures the unmeasured step and the rest, and completes with every verdict held
  expect(await exitedAs(second, 0)).toEqual({ code: 0 });
  expect(second.stdout()).toMatch(/Resuming run /);
  expect(second.stdout()).not.toMatch(/already complete; nothing to run/);
  const finished = new Set(steps.filter((r) => r.status !== 'infrastructure-error').map((r) => r.stepId));
  const next = m.stepIds.find((id) => !finished.has(id));
  expect(next).toBeDefined();
  expect(second.stdout()).toContain(`] ${next ?? '?'}`);
  expect(readJson<RunManifest>(path.join(runDir, 'manifest.json'))).toMatchObject({
    status: 'completed',
    stepsCompleted: RUN_TO_INTERRUPT.steps,
  });
  expect(allSteps(runDir).filter((r) => r.status !== 'completed' && r.status !== 'not-available')).toEqual(
    [],
  );
}

// Every case starts its own stack (own ports, own directory, own run id) through its own CLI, and
// most of its time is pgbench's fixed -T on slow transactions: the cases run side by side (test.concurrent,
// at most jest's maxConcurrency at once) instead of one after the other.
describe('PostgreSQL stopped during a step', () => {
  test.concurrent.each([
    // smart: sessions go on, new connections are refused with 57P03 (a later step sees it)
    [
      'smart shutdown (SIGTERM)',
      'pg-smart',
      signal('pg', 'SIGTERM'),
      /server-stopped|PostgreSQL \(pid \d+\)/,
    ],
    // fast: every backend is terminated with 57P01
    ['fast shutdown (SIGINT)', 'pg-fast', signal('pg', 'SIGINT'), /server-stopped|PostgreSQL \(pid \d+\)/],
    [
      'immediate shutdown (SIGQUIT)',
      'pg-immediate',
      signal('pg', 'SIGQUIT'),
      /server-stopped|PostgreSQL \(pid \d+\)/,
    ],
    ['pg_ctl restart -m fast', 'pg-restart', restartStackServer, /server-stopped|PostgreSQL \(pid \d+\)/],
    // the server stays up: only what pgbench's clients were told shows it (no process watch can)
    [
      'pg_terminate_backend() of the bench sessions',
      'pg-terminate',
      terminateBenchBackends,
      /server-stopped ×\d+: .*SQLSTATE 57P01/,
    ],
  ] as const)(
    '%s: not measured, run failed with exit 1, a resume measures it',
    async (_what, name, disrupt, cause) => {
      await stopMidStepThenResume(name, disrupt, cause, 'always');
    },
    300_000,
  );
});

describe.each([
  ['1.18 (Debian)', 'b118', {}],
  [modern.value?.version ?? '≥ 1.21 (none found)', 'bmodern', null],
] as const)('PgBouncer %s stopped during a step', (_version, tag, fixedEnv) => {
  const env = (): Record<string, string> => fixedEnv ?? envWithPgbouncer(modern.get().file);
  test.concurrent.each([
    ['SIGINT', /server-stopped|PgBouncer \(pid \d+\)/],
    ['SIGTERM', /server-stopped|PgBouncer \(pid \d+\)/],
  ] as const)(
    '%s: not measured, run failed with exit 1, a resume measures it',
    async (sig, cause) => {
      await stopMidStepThenResume(
        `${tag}-${sig.toLowerCase()}`,
        signal('pgbouncer', sig),
        cause,
        'maybe',
        env(),
      );
    },
    300_000,
  );
});
