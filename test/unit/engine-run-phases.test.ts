/**
 * runSuite's phases on their own (lib/engine/run-suite.ts): the pool settings a step asks of its
 * target, applied only when they change and per target; what the step loop does with a step (stop,
 * skip, record as unavailable, run) and with what the sink stored; a step's status; and how a run
 * that threw ends (status and the cause named).
 */
import { FileWriteError } from '../../lib/core/atomic-write';
import type { PoolControl, Target } from '../../lib/engine/ports';
import {
  checkMeasured,
  runEndOf,
  stepAction,
  stepStatusOf,
  TargetSettings,
} from '../../lib/engine/run-suite';
import { stepRecordWith } from '../helpers/run-files';
import type { PlannedStep } from '../../lib/suite/expand';
import { getSuite } from '../../lib/suite/catalog';
import { expandSuite } from '../../lib/suite/expand';
import { describeTarget } from '../../lib/suite/targets';
import type { TargetRef } from '../../lib/suite/types';

const PROXY_A: TargetRef = { kind: 'rds-proxy', name: 'proxy-a' };
const PROXY_B: TargetRef = { kind: 'rds-proxy', name: 'proxy-b' };
const PGB: TargetRef = { kind: 'pgbouncer-transaction', name: 'pgbouncer-transaction' };

/** A planned step of the smoke suite, moved to `ref` with the given pool percent / prepared setting. */
function stepOn(ref: TargetRef, poolPercent: number | null, mps: number | null = null): PlannedStep {
  const descriptor = describeTarget(ref, { version: '1.25.2', maxPreparedStatements: mps });
  const [base] = expandSuite(getSuite('smoke'), [{ ref, descriptor, maxConnections: 40, poolSize: 10 }]);
  if (!base) throw new Error('smoke has no step');
  return { ...base, target: ref, descriptor, params: { ...base.params, poolPercent } };
}

function target(ref: TargetRef): Target {
  return { ref } as Target;
}

class RecordingPool implements PoolControl {
  readonly calls: string[] = [];
  reset(): Promise<void> {
    return Promise.resolve();
  }
  setPoolPercent(t: TargetRef, percent: number): Promise<void> {
    this.calls.push(`${t.name} pool ${percent}`);
    return Promise.resolve();
  }
  setMaxPreparedStatements(t: TargetRef, value: number): Promise<void> {
    this.calls.push(`${t.name} mps ${value}`);
    return Promise.resolve();
  }
  restore(): Promise<void> {
    return Promise.resolve();
  }
}

describe('TargetSettings (per step)', () => {
  test('a pool percent is applied when it changes, tracked per target', async () => {
    // GIVEN a sweep over two proxies: A 25, A 25, B 25, A 50, B 25
    const pool = new RecordingPool();
    const settings = new TargetSettings(pool);
    // WHEN
    for (const [ref, pct] of [
      [PROXY_A, 25],
      [PROXY_A, 25],
      [PROXY_B, 25],
      [PROXY_A, 50],
      [PROXY_B, 25],
    ] as const)
      await settings.apply(stepOn(ref, pct), target(ref));
    // THEN B is resized for its first step although A already had 25; repeats are not
    expect(pool.calls).toEqual(['proxy-a pool 25', 'proxy-b pool 25', 'proxy-a pool 50']);
  });

  test('a step without a pool percent, or on a target that cannot be resized, resizes nothing', async () => {
    const pool = new RecordingPool();
    const settings = new TargetSettings(pool);
    await settings.apply(stepOn(PROXY_A, null), target(PROXY_A));
    await settings.apply(
      stepOn({ kind: 'direct', name: 'direct' }, 30),
      target({ kind: 'direct', name: 'direct' }),
    );
    expect(pool.calls).toEqual([]);
  });

  test('max_prepared_statements follows each step of a switchable target (no step inherits a ps-off 0)', async () => {
    // GIVEN PgBouncer 1.25.2 steps at 200, 0, 0, 200
    const pool = new RecordingPool();
    const settings = new TargetSettings(pool);
    // WHEN
    for (const mps of [200, 0, 0, 200]) await settings.apply(stepOn(PGB, null, mps), target(PGB));
    // THEN
    expect(pool.calls).toEqual([
      'pgbouncer-transaction mps 200',
      'pgbouncer-transaction mps 0',
      'pgbouncer-transaction mps 200',
    ]);
  });

  test('a pool control that cannot set max_prepared_statements fails the step, naming it', async () => {
    const pool: PoolControl = {
      reset: () => Promise.resolve(),
      setPoolPercent: () => Promise.resolve(),
      restore: () => Promise.resolve(),
    };
    const step = stepOn(PGB, null, 200);
    await expect(new TargetSettings(pool).apply(step, target(PGB))).rejects.toThrow(
      `step ${step.stepId}: this run's pool control cannot set max_prepared_statements`,
    );
  });
});

describe('runEndOf (a run that threw)', () => {
  const aborted = (): AbortSignal => {
    const c = new AbortController();
    c.abort();
    return c.signal;
  };

  test.each([
    [
      'an abort',
      new Error('pgbench killed'),
      { signal: aborted() },
      'interrupted',
      /^interrupted before the run finished/,
    ],
    ['an error', new Error('boom'), {}, 'failed', /^boom$/],
    [
      'an error while a server is down',
      new Error('pool reset failed'),
      { infrastructure: { failure: () => 'PostgreSQL exited (code 1)', signal: aborted() } },
      'failed',
      /^infrastructure failure: PostgreSQL exited \(code 1\) \(pool reset failed\)$/,
    ],
    [
      'a pooler shutting down under a pool reset',
      new Error('ERROR: pooler is shutting down'),
      {},
      'failed',
      /^infrastructure failure \(server-stopped\): ERROR: pooler is shutting down$/,
    ],
    [
      // PgBouncer < 1.25 removes its unix sockets when a SIGTERM/SIGINT shutdown starts, while it
      // still runs for its clients: the next admin command finds no socket (seen with 1.24.1)
      'a pooler whose admin socket is gone under a pool check',
      new Error(
        'psql -c SHOW POOLS: psql: error: connection to server on socket "/tmp/p/pgbouncer/s0/.s.PGSQL.24910" failed: No such file or directory',
      ),
      {},
      'failed',
      /^infrastructure failure \(server-stopped\): the socket \/tmp\/p\/pgbouncer\/s0\/\.s\.PGSQL\.24910 is gone: its server or pooler stopped listening \(shutting down\): psql -c SHOW POOLS/,
    ],
    [
      'a failed write',
      new FileWriteError('/runs/r1/steps/x.json', new Error('ENOSPC')),
      { resumeCommand: 'proxylab local --run-id r1' },
      'failed',
      /ENOSPC; finished steps are kept: free space \(or fix the directory\) and resume with proxylab local --run-id r1$/,
    ],
  ] as const)('%s', (_what, err, opts, status, error) => {
    const end = runEndOf(err, opts);
    expect(end.status).toBe(status);
    expect(end.error).toMatch(error);
  });
});

/** What a phase threw, as the run ends with it. */
function endOfThrown(
  fn: () => unknown,
  opts: Parameters<typeof runEndOf>[1] = {},
): ReturnType<typeof runEndOf> {
  try {
    fn();
  } catch (e) {
    return runEndOf(e, opts);
  }
  throw new Error('expected the phase to throw');
}

describe('stepAction (the step loop, before each step)', () => {
  const step = stepOn(PROXY_A, null);
  const watch = (failure: string | null) => ({
    failure: () => failure,
    signal: new AbortController().signal,
  });

  test.each([
    ['new, runnable', new Set<string>(), step, 'run'],
    ['finished by an earlier part', new Set([step.stepId]), step, 'skip'],
    [
      'not available on this target',
      new Set<string>(),
      { ...step, unavailable: 'needs PgBouncer 1.21' },
      'unavailable',
    ],
    // A finished step stays skipped even if it is now marked unavailable: it is not recorded twice.
    ['finished and unavailable', new Set([step.stepId]), { ...step, unavailable: 'x' }, 'skip'],
  ])('%s', (_what, done, s, expected) => {
    // GIVEN no abort and a healthy stack WHEN / THEN
    expect(stepAction(s, done, { infrastructure: watch(null) })).toBe(expected);
  });

  test('an aborted run stops before the step, even one already finished, and ends interrupted', () => {
    // GIVEN an aborted signal
    const abort = new AbortController();
    abort.abort();
    // WHEN / THEN
    const end = endOfThrown(() => stepAction(step, new Set([step.stepId]), { signal: abort.signal }), {
      signal: abort.signal,
    });
    expect(end.status).toBe('interrupted');
  });

  test('a server that died since the last step fails the run with the death as its cause', () => {
    // GIVEN a watch that saw PostgreSQL exit
    const infrastructure = watch('PostgreSQL exited (code 1)');
    // WHEN / THEN: the cause is named once, not wrapped a second time by runEndOf
    const end = endOfThrown(() => stepAction(step, new Set(), { infrastructure }), { infrastructure });
    expect(end).toEqual({ status: 'failed', error: 'infrastructure failure: PostgreSQL exited (code 1)' });
  });
});

describe('checkMeasured (what the sink stored)', () => {
  test.each(['completed', 'hung', 'timeout', 'not-available'] as const)('%s is a finished step', (status) => {
    expect(() => checkMeasured(stepRecordWith({ status }))).not.toThrow();
  });

  test('an infrastructure error is not finished: the run fails naming the step and its note', () => {
    // GIVEN a stored step whose server stopped under it
    const stored = stepRecordWith({
      stepId: 'quick/s1',
      status: 'infrastructure-error',
      note: 'server-stopped',
    });
    // WHEN / THEN
    expect(endOfThrown(() => checkMeasured(stored))).toEqual({
      status: 'failed',
      error: 'infrastructure failure: step quick/s1 was not measured: server-stopped',
    });
  });

  test('an infrastructure error without a note says the cause is unknown', () => {
    const stored = stepRecordWith({ stepId: 'quick/s2', status: 'infrastructure-error', note: undefined });
    expect(endOfThrown(() => checkMeasured(stored)).error).toBe(
      'infrastructure failure: step quick/s2 was not measured: unknown cause',
    );
  });
});

describe('stepStatusOf', () => {
  test.each([
    [null, null, false, 'completed'],
    [null, null, true, 'hung'],
    ['PostgreSQL exited', null, false, 'infrastructure-error'],
    [
      null,
      'server-stopped: terminating connection due to administrator command',
      false,
      'infrastructure-error',
    ],
    // A server that died under a step that then ran into its timeout: the death, not the timeout.
    ['PgBouncer exited', null, true, 'infrastructure-error'],
    [null, 'server-stopped', true, 'infrastructure-error'],
  ] as const)('died %s, stopped %s, timed out %s → %s', (infra, stopped, timedOut, expected) => {
    expect(stepStatusOf(infra, stopped, timedOut)).toBe(expected);
  });
});
