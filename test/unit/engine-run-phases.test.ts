/**
 * runSuite's phases on their own (lib/engine/run-suite.ts): the pool settings a step asks of its
 * target, applied only when they change and per target; and how a run that threw ends (status and
 * the cause named).
 */
import { FileWriteError } from '../../lib/core/atomic-write';
import type { PoolControl, Target } from '../../lib/engine/ports';
import { runEndOf, TargetSettings } from '../../lib/engine/run-suite';
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
