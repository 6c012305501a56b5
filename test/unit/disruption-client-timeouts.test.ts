/**
 * The clients' own timeouts in a disruption (issue 39): a write that waits and then succeeds is a
 * stall, never an error; one that outlives the client's timeout is a `client-timeout`, its own class;
 * one still waiting when the window ends leaves the window open. On hand-made attempts (the figures)
 * and on virtual time (the runner against a fake pool that holds its clients after T0, as PgBouncer
 * does through server_login_retry) — no real sleeps, no real server.
 */
import {
  disruptionProbeRunner,
  type DisruptionWorld,
  type ProbeClock,
} from '../../lib/exec/disruption-probe';
import {
  ProbeError,
  type ProbeConnection,
  type ProbeConnector,
  type ProbeEndpoint,
} from '../../lib/exec/pg-probe';
import type { Clock, ProbeRun, Target } from '../../lib/engine/ports';
import { pgConfig } from '../../lib/exec/session-program';
import {
  disruptionProbeSchema,
  disruptionResultSchema,
  sessionStateProbeSchema,
} from '../../lib/results/probe-schemas';
import {
  defaultClientTimeouts,
  validateDisruptionProbe,
  type ClientTimeouts,
  type DisruptionProbe,
  type DisruptionResult,
} from '../../lib/suite/disruption';
import {
  attemptKind,
  disruptionFigures,
  errorCounts,
  timeline,
  type AttemptRecord,
  type ProbeFailure,
} from '../../lib/suite/disruption-figures';
import { downtimeRows } from '../../lib/suite/disruption-summary';
import { judgeDisruption } from '../../lib/suite/disruption-verdict';
import { expandSuite, type PlannedStep } from '../../lib/suite/expand';
import { DIRECT, SELECT_1 } from '../../lib/suite/experiments/common';
import { LOCAL_DISRUPTIONS } from '../../lib/suite/experiments/disruptions';
import {
  SESSION_CLIENT_TIMEOUTS,
  validateSessionStateProbe,
  type SessionStateProbe,
} from '../../lib/suite/session-state';
import { describeTarget } from '../../lib/suite/targets';
import { disruptionResult } from '../helpers/disruption-result';
import { stepRecordWith } from '../helpers/run-files';
import { VirtualClock } from '../helpers/virtual-clock';

function attempt(
  startMs: number,
  endMs: number | null,
  outcome: AttemptRecord['outcome'],
  failure: Partial<ProbeFailure> | null = null,
): AttemptRecord {
  return {
    id: `a${startMs}`,
    client: 0,
    scheduledMs: startMs,
    startMs,
    endMs,
    outcome,
    failure:
      failure === null
        ? null
        : { sqlstate: null, code: null, message: 'm', severity: null, phase: 'write', ...failure },
    server: null,
    connected: false,
  };
}

/** A steady 1 ms write every 100 ms from 0 to `until` (the warm-up p99 is 1 ms: stalls are > 10 ms). */
function steady(from: number, until: number): AttemptRecord[] {
  const out: AttemptRecord[] = [];
  for (let t = from; t < until; t += 100) out.push(attempt(t, t + 1, 'ok'));
  return out;
}

const W = { t0Ms: 1000, warmupStartMs: 0, endMs: 5000 };

describe('a wait, an error, a client timeout, an open attempt (the figures)', () => {
  test('a write held 1.5 s that then succeeds is a stall, never an error; the window closes after it', () => {
    // GIVEN a client whose write at 1000 waits until 2500, then steady writes again
    const a = [...steady(0, 1000), attempt(1000, 2500, 'ok'), ...steady(2600, 5000)];
    // WHEN
    const f = disruptionFigures(a, W);
    // THEN no error, a stall of the wait, nothing given up, over in the window
    expect(a.map(attemptKind).every((k) => k === 'ok')).toBe(true);
    expect(f).toMatchObject({
      timeToFirstErrorMs: null,
      errorWindowMs: null,
      stallWindowMs: 1500,
      clientTimeouts: 0,
      openAtEnd: 0,
      windowClosed: true,
      recovered: true,
    });
    expect(errorCounts(a)).toEqual([]);
  });

  test('attempts that outlive the client timeout are client-timeouts: counted apart, not in the error window', () => {
    // GIVEN a client that gives up twice at 500 ms (the pool still holding it), then writes again
    const gaveUp = { code: 'timeout', message: 'write: no answer within 500 ms' };
    const a = [
      ...steady(0, 1000),
      attempt(1000, 1500, 'unknown', gaveUp),
      attempt(1500, 2000, 'unknown', gaveUp),
      ...steady(2000, 5000),
    ];
    // WHEN
    const f = disruptionFigures(a, W);
    // THEN
    expect(a.map(attemptKind).filter((k) => k === 'client-timeout')).toHaveLength(2);
    expect(f).toMatchObject({
      timeToFirstErrorMs: null,
      errorWindowMs: null,
      clientTimeouts: 2,
      windowClosed: true,
      recovered: true,
    });
    expect(errorCounts(a)).toEqual([
      { class: 'client-timeout', sqlstate: null, code: 'timeout', count: 2, sample: gaveUp.message },
    ]);
  });

  test("the server's errors make the error window; a client timeout among them does not stretch it", () => {
    // GIVEN refused connects at 1100 and 1200, a client timeout at 1300 (ends 1800), success from 1900
    const a = [
      ...steady(0, 1100),
      attempt(1100, 1102, 'failed', { code: 'ECONNREFUSED', phase: 'connect' }),
      attempt(1200, 1202, 'failed', { code: 'ECONNREFUSED', phase: 'connect' }),
      attempt(1300, 1800, 'failed', { code: 'timeout', phase: 'connect' }),
      ...steady(1900, 5000),
    ];
    // WHEN
    const f = disruptionFigures(a, W);
    // THEN the error window is first error → first success after the last error (1202 → 1901)
    expect(f.timeToFirstErrorMs).toBe(102);
    expect(f.errorWindowMs).toBe(1901 - 1102);
    expect(f.clientTimeouts).toBe(1);
    expect(f.windowClosed).toBe(true);
  });

  test('an attempt still waiting when the window ends leaves it open: not over, not recovered', () => {
    // GIVEN a client stalled from 4000 past the end (abandoned: no answer, endMs null)
    const a = [
      ...steady(0, 4000),
      attempt(4000, null, 'unknown', { code: 'window-end', message: 'still waiting' }),
    ];
    // WHEN
    const f = disruptionFigures(a, W);
    // THEN
    expect(f).toMatchObject({ openAtEnd: 1, windowClosed: false, recovered: false, clientTimeouts: 0 });
    expect(errorCounts(a)).toEqual([]);
    expect(timeline(a, W).at(-1)).toEqual([3000, null, 'open', null]);
  });

  test('a stall still going at the end (waiting longer than a stall when the window ended) leaves it open', () => {
    // GIVEN slow successes, the last one waiting from 3000 and answered after the end (5000)
    const a = [...steady(0, 1000), attempt(1000, 3000, 'ok'), attempt(3000, 5600, 'ok')];
    // WHEN
    const f = disruptionFigures(a, W);
    // THEN
    expect(f.stallWindowMs).toBe(4600);
    expect(f.windowClosed).toBe(false);
    expect(f.recovered).toBe(true);
  });

  test.each([
    ['a stall that ended inside the window', attempt(3000, 4990, 'ok')],
    ['a write answered just after the end, not yet a stall when the window ended', attempt(4995, 5050, 'ok')],
  ])('%s: over in the window', (_what, lastOne) => {
    // GIVEN / WHEN
    const f = disruptionFigures([...steady(0, 1000), attempt(1000, 3000, 'ok'), lastOne], W);
    // THEN
    expect(f.windowClosed).toBe(true);
  });
});

// ------------------------------------------------------------------------------------------------
// The runner on virtual time, against a pool that holds its clients for `holdMs` after T0.

const EP: ProbeEndpoint = {
  hosts: [{ host: '127.0.0.1', port: 1 }],
  user: 'u',
  dbname: 'd',
  sslmode: 'disable',
  targetSessionAttrs: 'any',
  label: 'fake pool',
};

/** Like PgBouncer through server_login_retry: from T0 every write waits until the hold ends; each call honours its timeout. */
class HoldingPool {
  holdUntil = 0;
  readonly ledger = new Map<string, number>();
  constructor(readonly clock: VirtualClock) {}

  private async answer(timeoutMs: number, what: string, phase: ProbeFailure['phase']): Promise<void> {
    const start = this.clock.now();
    await this.clock.sleepUntil(Math.max(start + 1, Math.min(this.holdUntil, start + timeoutMs)));
    if (this.clock.now() < this.holdUntil)
      throw new ProbeError({
        sqlstate: null,
        code: 'timeout',
        message: `${what}: no answer within ${timeoutMs} ms`,
        severity: null,
        phase,
      });
  }

  connector: ProbeConnector = async (_ep, timeoutMs) => {
    await this.answer(timeoutMs, 'connect', 'connect');
    const conn: ProbeConnection = {
      write: async (row, ms) => {
        await this.answer(ms, 'write', 'write');
        this.ledger.set(row.id, (this.ledger.get(row.id) ?? 0) + 1);
        return { server: '127.0.0.1', inRecovery: false };
      },
      select1: () => this.clock.sleep(1),
      ledger: () => Promise.resolve(new Map(this.ledger)),
      ensureLedger: () => Promise.resolve(),
      close: () => Promise.resolve(),
    };
    return conn;
  };

  world(holdMs: number): DisruptionWorld {
    return {
      unavailable: () => null,
      open: () =>
        Promise.resolve({
          endpoint: () => EP,
          ledgerEndpoint: () => EP,
          inject: (event) => {
            event('stop-issued', 'local');
            this.holdUntil = this.clock.now() + holdMs;
            return Promise.resolve();
          },
          restore: () => Promise.resolve(),
        }),
    };
  }
}

function specWith(clientTimeouts: ClientTimeouts): DisruptionProbe {
  return {
    kind: 'disruption',
    disruption: { action: 'postgres-restart', shutdown: 'fast' },
    intervalMs: 100,
    warmupSec: 1,
    recoverySec: 3,
    clientTimeouts,
  };
}

function planned(spec: DisruptionProbe): PlannedStep[] {
  return expandSuite(
    {
      name: 't',
      description: 'd',
      scenarios: [
        {
          name: 'hold',
          experiment: 'DISRUPT',
          title: 't',
          finding: 'f',
          script: SELECT_1,
          protocols: ['extended'],
          connects: ['persistent'],
          clients: [1],
          jobs: 1,
          durationSec: 4,
          scale: 1,
          initFlags: [],
          repetitions: 1,
          targets: [DIRECT],
          probe: spec,
          expectations: [],
        },
      ],
    },
    [
      {
        ref: { kind: 'direct', name: 'direct' },
        descriptor: describeTarget({ kind: 'direct', name: 'direct' }, { version: '15' }),
        maxConnections: 40,
        poolSize: null,
      },
    ],
  );
}

/** A probe clock whose wake-ups after `lateFrom` come `byMs` late once (an event loop busy elsewhere). */
function lateOnce(clock: VirtualClock, lateFrom: number, byMs: number): ProbeClock {
  let late = false;
  return {
    now: () => clock.now(),
    sleepUntil: (ms, signal) => {
      if (late || ms < lateFrom) return clock.sleepUntil(ms, signal);
      late = true;
      return clock.sleepUntil(ms + byMs, signal);
    },
  };
}

async function runHeld(
  holdMs: number,
  timeouts: ClientTimeouts,
  probeClock?: (c: VirtualClock) => ProbeClock,
): Promise<DisruptionResult> {
  const clock = new VirtualClock();
  const pool = new HoldingPool(clock);
  const spec = specWith(timeouts);
  const runner = disruptionProbeRunner({
    world: pool.world(holdMs),
    connector: pool.connector,
    clock: probeClock ? probeClock(clock) : clock,
    floorQueries: 1,
  });
  const target: Target = {
    ref: { kind: 'direct', name: 'direct' },
    connection: () => ({ host: '127.0.0.1', port: 1, user: 'u', dbname: 'd' }),
    maxConnections: () => Promise.resolve(40),
    poolSize: () => Promise.resolve(null),
  };
  let t = Date.parse('2026-11-28T10:00:00Z');
  const wall: Clock = { now: () => new Date((t += 10)), sleep: () => Promise.resolve() };
  const run: ProbeRun<'disruption'> = {
    runId: 'r',
    steps: planned(spec),
    spec,
    targets: new Map([['direct', target]]),
    clock: wall,
    signal: new AbortController().signal,
    log: () => undefined,
  };
  const [outcome] = await runner.run(run);
  if (!outcome?.result) throw new Error(`no result: ${outcome?.note ?? ''}`);
  // what is stored is what the run-file schema reads back
  expect(disruptionResultSchema.parse(outcome.result)).toEqual(outcome.result);
  return outcome.result;
}

describe('the runner: the client timeouts decide between a stall and a client-timeout', () => {
  test('held 1.5 s with the default timeouts (the window): one long stall, no error, over in the window', async () => {
    // GIVEN / WHEN
    const r = await runHeld(1500, defaultClientTimeouts(3));
    // THEN
    expect(r.clientTimeouts).toEqual({ connectTimeoutMs: 3000, statementTimeoutMs: 3000 });
    expect(r.errors).toEqual([]);
    expect(r.figures.maxLatencyMs).toBeGreaterThanOrEqual(1400);
    expect(r.figures.stallWindowMs).toBeGreaterThanOrEqual(1400);
    expect(r.figures).toMatchObject({ clientTimeouts: 0, openAtEnd: 0, windowClosed: true });
    expect(
      judgeDisruption({ outcome: 'succeeds', errorClasses: [], published: null, note: null }, r).held,
    ).toBe(true);
  });

  test('held 1.5 s with a 500 ms statement timeout: the client gives up (client-timeout), then writes again', async () => {
    // GIVEN / WHEN
    const r = await runHeld(1500, { connectTimeoutMs: 500, statementTimeoutMs: 500 });
    // THEN its own class, no server error, the window closed
    expect(r.errors.map((e) => e.class)).toEqual(['client-timeout']);
    expect(r.errors[0]?.count).toBeGreaterThanOrEqual(2);
    expect(r.figures.errorWindowMs).toBeNull();
    expect(r.figures.clientTimeouts).toBe(r.errors[0]?.count);
    expect(r.figures.windowClosed).toBe(true);
    // "without an error" does not hold: the client did not get through
    expect(
      judgeDisruption({ outcome: 'succeeds', errorClasses: [], published: null, note: null }, r).held,
    ).toBe(false);
  });

  test('held past the end of the window: the attempt is abandoned 1 s after it, open — never "held"', async () => {
    // GIVEN / WHEN a hold of 10 s against a 3 s window and 30 s timeouts
    const r = await runHeld(10_000, { connectTimeoutMs: 30_000, statementTimeoutMs: 30_000 });
    // THEN
    expect(r.errors).toEqual([]);
    expect(r.figures).toMatchObject({ openAtEnd: 1, windowClosed: false, recovered: false });
    expect(r.attempts.at(-1)?.[1]).toBeNull();
    expect(r.attempts.at(-1)?.[2]).toBe('open');
    const v = judgeDisruption({ outcome: 'succeeds', errorClasses: [], published: null, note: null }, r);
    expect(v.held).toBe(false);
    expect(v.observed).toContain('not over in the window, 1 still waiting at the end');
  });
});

test('a slot woken after the window (a busy event loop) starts no attempt: nothing left open', async () => {
  // GIVEN a clock whose first wake-up 2.5 s after T0 (the window is 3 s) comes 4 s late
  // (the virtual clock starts at 1000; the first slot is 50 ms later; T0 1 s after it)
  const t0 = 1000 + 50 + 1000;
  // WHEN
  const r = await runHeld(0, defaultClientTimeouts(3), (c) => lateOnce(c, t0 + 2500, 4000));
  // THEN every attempt started inside the window, and the window closed
  expect(Math.max(...r.attempts.map((a) => a[0]))).toBeLessThan(3000);
  expect(r.figures).toMatchObject({ openAtEnd: 0, windowClosed: true });
});

describe('client timeouts as settings of the scenario', () => {
  test('the catalog: every local disruption has client timeouts no shorter than its recovery window', () => {
    for (const s of LOCAL_DISRUPTIONS) {
      const p = s.probe;
      if (p?.kind !== 'disruption') throw new Error(`${s.name}: not a disruption`);
      expect({
        s: s.name,
        ok:
          Math.min(p.clientTimeouts.connectTimeoutMs, p.clientTimeouts.statementTimeoutMs) >=
          p.recoverySec * 1000,
      }).toEqual({ s: s.name, ok: true });
    }
  });

  test.each<[string, unknown, string]>([
    [
      'missing',
      undefined,
      'probe.clientTimeouts must be { connectTimeoutMs, statementTimeoutMs }, got undefined',
    ],
    [
      'a connect timeout too short',
      { connectTimeoutMs: 50, statementTimeoutMs: 1000 },
      'probe.clientTimeouts.connectTimeoutMs must be an integer 100–3600000, got 50',
    ],
    [
      'a statement timeout not an integer',
      { connectTimeoutMs: 1000, statementTimeoutMs: 1000.5 },
      'probe.clientTimeouts.statementTimeoutMs must be an integer 100–3600000, got 1000.5',
    ],
  ])('validation names the field, the value and what is allowed: %s', (_what, t, problem) => {
    // GIVEN / WHEN
    const spec = { ...specWith(defaultClientTimeouts(3)), clientTimeouts: t } as DisruptionProbe;
    // THEN
    expect(validateDisruptionProbe('s', spec)).toEqual([`s: ${problem}`]);
  });

  test('a plan written before the setting (attemptTimeoutMs) reads as both timeouts; a new one as it is', () => {
    // GIVEN an older plan's probe spec and a new one
    const { clientTimeouts: _t, ...rest } = specWith(defaultClientTimeouts(3));
    const older = { ...rest, attemptTimeoutMs: 2000 };
    // WHEN / THEN
    expect(disruptionProbeSchema.parse(older)).toEqual({
      ...rest,
      clientTimeouts: { connectTimeoutMs: 2000, statementTimeoutMs: 2000 },
    });
    expect(disruptionProbeSchema.parse(specWith(defaultClientTimeouts(3)))).toEqual(
      specWith(defaultClientTimeouts(3)),
    );
    expect(disruptionProbeSchema.safeParse(rest).success).toBe(false);
  });
});

describe('a step recorded before the client timeouts (an older run directory)', () => {
  test('reads back without them; its figures are unknown, not 0', () => {
    // GIVEN a result without clientTimeouts and without the new figures
    const now = disruptionResult({ errors: [] });
    const { clientTimeouts: _t, ...rest } = now;
    const { clientTimeouts: _c, openAtEnd: _o, windowClosed: _w, ...figures } = now.figures;
    const older = { ...rest, figures };
    // WHEN read and summed up
    const parsed = disruptionResultSchema.parse(JSON.parse(JSON.stringify(older)));
    const [row] = downtimeRows([stepRecordWith({ status: 'completed', probe: parsed })]);
    // THEN nothing is made up
    expect(parsed).toEqual(older);
    expect(row).toMatchObject({ clientTimeoutSettings: [], clientTimeouts: null, notOver: 0 });
  });
});

describe('the session steps: client timeouts as a setting too', () => {
  const SPEC: SessionStateProbe = { kind: 'session-state', features: ['set-session'], pinPeriodSec: 60 };

  test('node-postgres gets the scenario’s connect and statement timeouts', () => {
    // GIVEN / WHEN
    const cfg = pgConfig(
      { host: 'h', port: 1, user: 'u', dbname: 'd' },
      { connectTimeoutMs: 1500, statementTimeoutMs: 2500 },
      false,
    );
    // THEN
    expect({ connect: cfg.connectionTimeoutMillis, statement: cfg.query_timeout }).toEqual({
      connect: 1500,
      statement: 2500,
    });
    expect(SESSION_CLIENT_TIMEOUTS).toEqual({ connectTimeoutMs: 10_000, statementTimeoutMs: 30_000 });
  });

  test('a session spec without them is valid (the default applies); a bad one is named', () => {
    expect(validateSessionStateProbe('s', SPEC)).toEqual([]);
    expect(
      validateSessionStateProbe('s', {
        ...SPEC,
        clientTimeouts: { connectTimeoutMs: 10, statementTimeoutMs: 1000 },
      }),
    ).toEqual(['s: probe.clientTimeouts.connectTimeoutMs must be an integer 100–3600000, got 10']);
    expect(sessionStateProbeSchema.parse(SPEC)).toEqual(SPEC);
  });
});
