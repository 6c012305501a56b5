/**
 * Database sampling and hung steps (issue 40, items 1–2): one sample read from the sampler query's
 * JSON (unknown never 0), the words for what the database showed, when a step is hung on locks
 * (lib/engine/hung.ts), the watch that samples each second without ever blocking the step, and the
 * engine recording a step the hung check stopped as `hung` — with its database activity, the wait
 * and the blocking session in the note — and going on with the run.
 */
import * as path from 'node:path';
import { HungCheck, HUNG_GRACE_SEC, HUNG_LOCK_SAMPLES } from '../../lib/engine/hung';
import type {
  Clock,
  PgbenchExecutor,
  PgbenchOutcome,
  ServerConnectionsProbe,
  Target,
} from '../../lib/engine/ports';
import { runSuite } from '../../lib/engine/run-suite';
import { SampledServerConnections } from '../../lib/exec/server-connections';
import { FileSystemSink } from '../../lib/local/fs-sink';
import { stepRecordSchema } from '../../lib/results/schemas';
import {
  describeActivity,
  sampleFromRow,
  stuckOnLocks,
  unknownSample,
  type DbActivitySample,
} from '../../lib/suite/db-activity';
import { expandSuite, type PlannedStep } from '../../lib/suite/expand';
import { getTestSuite } from '../../lib/suite/test-suites';
import type { TargetKind } from '../../lib/suite/types';
import { defined } from '../helpers/defined';
import { scratchDir } from '../helpers/scratch';

const AT = '2026-11-28T10:00:00.000Z';

/** The sampler query's row for `waiters` clients waiting on an advisory lock held by an idle backend. */
function lockedRow(waiters: number): Record<string, unknown> {
  return {
    clients: waiters + 2,
    hidden: 0,
    bench_clients: waiters + 1,
    active: waiters,
    idle: 2,
    idle_in_transaction: 0,
    waits: [
      { type: 'Client', event: 'ClientRead', count: 1 },
      { type: 'Lock', event: 'advisory', count: waiters },
    ],
    locks_waiting: waiters,
    locks_held: 7,
    oldest_xact_sec: 12.34,
    oldest_query_sec: '11.2',
    blocker: {
      pid: 4242,
      state: 'idle',
      backend_type: 'client backend',
      application_name: 'pgbench',
      state_sec: 41.26,
      xact_sec: null,
      blocking: waiters,
    },
  };
}

const locked = (waiters: number): DbActivitySample => sampleFromRow(AT, lockedRow(waiters));
const calm = (): DbActivitySample => sampleFromRow(AT, { ...lockedRow(0), waits: [], blocker: null });

describe('one database sample', () => {
  test('read from the query’s JSON: counts, wait events most common first, ages, the blocker', () => {
    const s = locked(14);
    expect(s).toMatchObject({
      ok: true,
      clients: 16,
      benchClients: 15,
      locksWaiting: 14,
      locksHeld: 7,
      oldestXactSec: 12.3,
      oldestQuerySec: 11.2,
    });
    expect(s.waits?.map((w) => `${w.type}/${w.event} ${w.count}`)).toEqual([
      'Lock/advisory 14',
      'Client/ClientRead 1',
    ]);
    expect(s.blocker).toEqual({
      pid: 4242,
      state: 'idle',
      backendType: 'client backend',
      applicationName: 'pgbench',
      stateSec: 41.3,
      xactSec: null,
      blocking: 14,
    });
    // and what the engine stores passes the step file's schema
    expect(
      stepRecordSchema.shape.databaseActivity.safeParse({ intervalMs: 1000, samples: [s] }).success,
    ).toBe(true);
  });

  test.each([
    ['a negative count', { clients: -1 }, 'clients'],
    ['a count that is not a number', { locks_waiting: 'many' }, 'locksWaiting'],
    ['a missing figure', { locks_held: undefined }, 'locksHeld'],
    ['an age that is not finite', { oldest_xact_sec: 'NaN' }, 'oldestXactSec'],
  ] as const)('%s is unknown (null), never 0', (_what, patch, field) => {
    expect(sampleFromRow(AT, { ...lockedRow(3), ...patch })[field]).toBeNull();
  });

  test('backends whose state the role may not see: states, waits and ages unknown, not zero', () => {
    const s = sampleFromRow(AT, { ...lockedRow(3), hidden: 2 });
    expect([s.active, s.idle, s.waits, s.oldestXactSec]).toEqual([null, null, null, null]);
    expect([s.clients, s.locksWaiting]).toEqual([5, 3]);
    expect(stuckOnLocks([s, s, s], 3)).toBe(false);
  });

  test('a row that is not an object, or a failed sample: every figure unknown', () => {
    const s = sampleFromRow(AT, null);
    expect(s).toEqual(unknownSample(AT));
    expect(s.ok).toBe(false);
    expect(s.waits).toBeNull();
    expect(s.locksWaiting).toBeNull();
  });
});

describe('what the database showed, in words', () => {
  test('the top wait and the session that holds it', () => {
    expect(describeActivity({ intervalMs: 1000, samples: [calm(), locked(14), calm()] })).toBe(
      '14 clients waiting on Lock/advisory held by a backend of pgbench (pid 4242) idle for 41 s; ' +
        '1 on Client/ClientRead (pg_locks: 14 waiting, 7 held)',
    );
  });

  test('unknown samples are said, never read as no waiters', () => {
    const samples = [locked(3), unknownSample(AT), unknownSample(AT)];
    expect(describeActivity({ intervalMs: 1000, samples })).toMatch(
      /^3 clients waiting .* \(2 of 3 samples unknown\)$/,
    );
    expect(describeActivity({ intervalMs: 1000, samples: [unknownSample(AT)] })).toBe(
      'the database could not be sampled (1 of 1 samples unknown)',
    );
    expect(describeActivity(undefined)).toBe('the database was not sampled');
  });

  test('lock waits in each of the last n samples make a stuck step; an unknown sample breaks the run', () => {
    expect(stuckOnLocks([calm(), locked(2), locked(1), locked(5)], 3)).toBe(true);
    expect(stuckOnLocks([locked(2), calm(), locked(5)], 3)).toBe(false);
    expect(stuckOnLocks([locked(2), unknownSample(AT), locked(5)], 3)).toBe(false);
    expect(stuckOnLocks([locked(2), locked(5)], 3)).toBe(false);
  });
});

/** A clock the test moves by hand. */
function manualClock(): Clock & { advance(sec: number): void } {
  let t = Date.parse(AT);
  return {
    now: () => new Date(t),
    sleep: (ms) => {
      t += ms;
      return Promise.resolve();
    },
    advance: (sec) => {
      t += sec * 1000;
    },
  };
}

function shortSteps(kinds: readonly TargetKind[]): PlannedStep[] {
  const suite = defined(getTestSuite('test-steps-short'), 'the test-steps-short suite');
  return expandSuite(
    suite,
    kinds.map((kind) => ({
      ref: { kind, name: kind },
      maxConnections: 40,
      poolSize: kind === 'direct' ? null : 10,
    })),
  );
}

describe('the hung check', () => {
  const step = defined(
    shortSteps(['direct', 'pgbouncer-transaction']).find((s) => s.params.durationSec !== null),
    'a -T step',
  );
  const planned = defined(step.params.durationSec, 'its duration');
  const stuck = Array.from({ length: HUNG_LOCK_SAMPLES }, () => locked(4));

  test('lock waits within the duration plus the grace: not hung', () => {
    const clock = manualClock();
    const check = new HungCheck(step, clock, clock.now());
    clock.advance(planned + HUNG_GRACE_SEC - 1);
    check.onSample(stuck);
    expect(check.signal.aborted).toBe(false);
  });

  test('past the grace with lock waits in the last samples: stopped, and why is stated', () => {
    const clock = manualClock();
    const check = new HungCheck(step, clock, clock.now());
    clock.advance(planned + HUNG_GRACE_SEC);
    check.onSample([calm(), ...stuck.slice(1)]);
    expect(check.signal.aborted).toBe(false);
    check.onSample(stuck);
    expect(check.signal.aborted).toBe(true);
    expect(check.reason).toBe(
      `still running ${planned + HUNG_GRACE_SEC} s into a ${planned}-s step with clients waiting on a lock for ${HUNG_LOCK_SAMPLES} s (grace ${HUNG_GRACE_SEC} s)`,
    );
  });

  test('a step of a number of transactions (-t) has no duration: only the step timeout stops it', () => {
    const clock = manualClock();
    const tStep: PlannedStep = {
      ...step,
      params: { ...step.params, durationSec: null, transactionsPerClient: 5 },
    };
    const check = new HungCheck(tStep, clock, clock.now());
    clock.advance(3600);
    check.onSample(stuck);
    expect(check.signal.aborted).toBe(false);
  });
});

describe('the database watch around a step', () => {
  test('samples each interval, feeds the peak, tells the listener, keeps failed samples as unknown', async () => {
    // GIVEN counts 2 (before) and 3 (after), and samples: 9 clients, then a failure, then a throw
    jest.useFakeTimers();
    try {
      const counts = [2, 3];
      const samples: Array<() => Promise<DbActivitySample>> = [
        () => Promise.resolve(sampleFromRow(AT, { ...lockedRow(7), clients: 9 })),
        () => Promise.resolve(unknownSample(AT)),
        () => Promise.reject(new Error('server restarting')),
      ];
      const probe = new SampledServerConnections(
        () => Promise.resolve(counts.shift() ?? null),
        100,
        () => defined(samples.shift(), 'a sample')(),
      );
      const seen: number[] = [];
      // WHEN a step is watched for three intervals
      const watch = await probe.watch({ onSample: (all) => seen.push(all.length) });
      await jest.advanceTimersByTimeAsync(300);
      const held = await watch.stop();
      // THEN the peak came from a sample, the listener heard each stored sample, the failure is unknown
      expect(held).toEqual({ before: 2, peak: 9, after: 3 });
      expect(seen).toEqual([1, 2]);
      const activity = defined(watch.activity?.(), 'activity');
      expect(activity.intervalMs).toBe(100);
      expect(activity.samples.map((s) => s.ok)).toEqual([true, false]);
      expect(activity.samples[1]?.locksWaiting).toBeNull();
    } finally {
      jest.useRealTimers();
    }
  });

  test('a sample still running when the next is due: that one is skipped, the step never waits on it', async () => {
    jest.useFakeTimers();
    try {
      let started = 0;
      let release: (s: DbActivitySample) => void = () => undefined;
      const probe = new SampledServerConnections(
        () => Promise.resolve(1),
        100,
        () => {
          started++;
          return new Promise<DbActivitySample>((resolve) => {
            release = resolve;
          });
        },
      );
      const watch = await probe.watch();
      await jest.advanceTimersByTimeAsync(500);
      expect(started).toBe(1);
      release(locked(1));
      expect(await watch.stop()).toEqual({ before: 1, peak: 3, after: 1 });
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('a step the hung check stops', () => {
  test('is recorded hung with the wait and the blocker named; the run goes on and completes', async () => {
    // GIVEN the transaction pool's step never ends by itself (pgbench waits for clients stuck on a
    // leaked lock) and the database shows 4 clients waiting on it every second
    const kinds: TargetKind[] = ['direct', 'pgbouncer-transaction'];
    const steps = shortSteps(kinds).filter((s) => s.params.durationSec !== null);
    const suite = defined(getTestSuite('test-steps-short'), 'suite');
    const dir = scratchDir('proxylab-hung-');
    const clock = manualClock();
    const pooled = (name: string): boolean => name.includes('pgbouncer-transaction');
    const executor: PgbenchExecutor = {
      workDir: (name) => Promise.resolve(path.join(dir, 'work', name)),
      run: (inv) =>
        new Promise<PgbenchOutcome>((resolve) => {
          const ok: PgbenchOutcome = {
            stdout:
              'number of transactions actually processed: 100\ntps = 100.0 (without initial connection time)\n',
            stderr: '',
            exitCode: 0,
            timedOut: false,
            logFiles: [],
          };
          if (inv.argv.includes('-i') || !pooled(inv.logDir)) return resolve(ok);
          inv.signal?.addEventListener('abort', () =>
            resolve({ stdout: '', stderr: '', exitCode: null, timedOut: false, logFiles: [], aborted: true }),
          );
        }),
    };
    const serverConnections: ServerConnectionsProbe = {
      watch: ({ onSample } = {}) => {
        const samples: DbActivitySample[] = [];
        // the step's clock runs past the duration and its grace; the sampler sees the lock each second
        const timer = setInterval(() => {
          clock.advance(5);
          samples.push(locked(4));
          onSample?.(samples);
        }, 5);
        return Promise.resolve({
          stop: () => {
            clearInterval(timer);
            return Promise.resolve({ before: 0, peak: 6, after: 0 });
          },
          activity: () => ({ intervalMs: 1000, samples: [...samples] }),
        });
      },
    };
    const targets: Target[] = kinds.map((kind, i) => ({
      ref: { kind, name: kind },
      connection: () => ({ host: '127.0.0.1', port: 20000 + i, user: 'bench', dbname: 'bench' }),
      maxConnections: () => Promise.resolve(40),
      poolSize: () => Promise.resolve(kind === 'direct' ? null : 10),
    }));
    // WHEN the run runs
    const result = await runSuite({
      runId: 'r1',
      suite,
      steps,
      targets,
      executor,
      pool: {
        reset: () => Promise.resolve(),
        setPoolPercent: () => Promise.resolve(),
        restore: () => Promise.resolve(),
      },
      sink: new FileSystemSink(path.join(dir, 'run')),
      clock,
      mode: 'local',
      environment: {
        maxConnections: 40,
        serverVersion: '15.18',
        pgbenchVersion: '15.18',
        poolerVersion: '1.18.0',
        cpus: 2,
      },
      settings: {},
      serverConnections,
    });
    // THEN the run completed; every pooled step is hung, every direct one completed
    expect(result.manifest.status).toBe('completed');
    for (const r of result.records) {
      expect(r.status).toBe(pooled(r.stepId) ? 'hung' : 'completed');
      expect(r.databaseActivity?.intervalMs).toBe(1000);
    }
    const hung = defined(
      result.records.find((r) => r.status === 'hung'),
      'a hung step',
    );
    expect(hung.note).toMatch(/^hung: still running \d+ s into a \d+-s step with clients waiting on a lock/);
    expect(hung.note).toContain(
      'database when stopped: 4 clients waiting on Lock/advisory held by a backend of pgbench (pid 4242) idle for 41 s',
    );
    expect(hung.databaseActivity?.samples.length).toBeGreaterThanOrEqual(HUNG_LOCK_SAMPLES);
    expect(hung.verdict.held).not.toBe(true);
    expect(hung.result?.errors.find((e) => e.class === 'timeout')?.count).toBe(hung.params.clients);
  });
});
