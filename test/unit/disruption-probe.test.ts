/**
 * The disruption probe (lib/exec/disruption-probe.ts) and its figures (lib/suite/disruption-figures.ts):
 * the figures on hand-made attempts, and the runner's clients on virtual time against a fake server
 * that goes away at T0 and comes back — no real sleeps, no real server (those are in
 * test/integration/local-disruptions.test.ts).
 */
import {
  disruptionProbeRunner,
  type DisruptionSession,
  type DisruptionWorld,
} from '../../lib/exec/disruption-probe';
import {
  ProbeError,
  type LedgerRow,
  type ProbeConnection,
  type ProbeConnector,
  type ProbeEndpoint,
} from '../../lib/exec/pg-probe';
import type { Clock, ProbeRun, Target } from '../../lib/engine/ports';
import { disruptionResultSchema } from '../../lib/results/probe-schemas';
import type { DisruptionProbe } from '../../lib/suite/disruption';
import {
  classifyProbeFailure,
  disruptionFigures,
  reconcile,
  writeFate,
  type AttemptRecord,
  type ProbeFailure,
} from '../../lib/suite/disruption-figures';
import { expandSuite, type PlannedStep } from '../../lib/suite/expand';
import { DIRECT } from '../../lib/suite/experiments/common';
import { SELECT_1 } from '../../lib/suite/experiments/common';
import { describeTarget } from '../../lib/suite/targets';
import { VirtualClock } from '../helpers/virtual-clock';

function failure(p: Partial<ProbeFailure>): ProbeFailure {
  return { sqlstate: null, code: null, message: '', severity: null, phase: 'write', ...p };
}

describe('classifyProbeFailure and writeFate', () => {
  test.each<[string, Partial<ProbeFailure>, string, 'failed' | 'unknown']>([
    ['fast shutdown (57P01, FATAL)', { sqlstate: '57P01', severity: 'FATAL' }, 'server-stopped', 'unknown'],
    [
      'starting up (57P03) at connect',
      { sqlstate: '57P03', severity: 'FATAL', phase: 'connect' },
      'server-stopped',
      'failed',
    ],
    [
      'crash of another backend (57P02)',
      { sqlstate: '57P02', severity: 'FATAL' },
      'server-stopped',
      'unknown',
    ],
    ['read-only standby (25006, ERROR)', { sqlstate: '25006', severity: 'ERROR' }, 'read-only', 'failed'],
    [
      'too many clients (53300)',
      { sqlstate: '53300', severity: 'FATAL', phase: 'connect' },
      'too-many-connections',
      'failed',
    ],
    ['refused at connect', { code: 'ECONNREFUSED', phase: 'connect' }, 'connection-failed', 'failed'],
    ['reset under a write', { code: 'ECONNRESET' }, 'backend-died', 'unknown'],
    [
      'terminated unexpectedly under a write',
      { message: 'Connection terminated unexpectedly' },
      'backend-died',
      'unknown',
    ],
    // the client's own timeout: the client gave up, the server said nothing wrong
    [
      'write outlived the client timeout',
      { code: 'timeout', message: 'no answer' },
      'client-timeout',
      'unknown',
    ],
    [
      'connect outlived the client timeout',
      { code: 'timeout', phase: 'connect' },
      'client-timeout',
      'failed',
    ],
    // a timeout the server imposed is the server's error
    [
      'statement_timeout (57014)',
      { sqlstate: '57014', severity: 'ERROR', message: 'canceling statement due to statement timeout' },
      'timeout',
      'failed',
    ],
    [
      'PgBouncer shutting down (08P01)',
      { sqlstate: '08P01', message: 'pooler is shutting down', severity: 'FATAL' },
      'server-stopped',
      'unknown',
    ],
    [
      'PgBouncer server login retry (08P01)',
      {
        sqlstate: '08P01',
        message: 'server login has been failing, try again later (server_login_retry)',
        severity: 'FATAL',
        phase: 'connect',
      },
      'connection-failed',
      'failed',
    ],
    [
      'PgBouncer query_wait_timeout',
      { sqlstate: '08P01', message: 'query_wait_timeout', severity: 'FATAL' },
      'timeout',
      // queued in the pooler, never forwarded to a server
      'failed',
    ],
    [
      'anything else',
      { sqlstate: '42P01', severity: 'ERROR', message: 'relation does not exist' },
      'other',
      'failed',
    ],
  ])('%s', (_what, f, cls, fate) => {
    // GIVEN a failure WHEN classified THEN
    expect(classifyProbeFailure(failure(f))).toBe(cls);
    expect(writeFate(failure(f))).toBe(fate);
  });
});

/** Attempts of one client every 100 ms from 0 to 2000, with latencies and outcomes by start time. */
function attempts(outcomeAt: (t: number) => { ok: boolean; ms: number; unknown?: boolean }): AttemptRecord[] {
  const out: AttemptRecord[] = [];
  for (let t = 0; t < 2000; t += 100) {
    const o = outcomeAt(t);
    out.push({
      id: `a${t}`,
      client: 0,
      scheduledMs: t,
      startMs: t,
      endMs: t + o.ms,
      outcome: o.ok ? 'ok' : o.unknown ? 'unknown' : 'failed',
      failure: o.ok
        ? null
        : failure({
            code: o.unknown ? 'ECONNRESET' : 'ECONNREFUSED',
            phase: o.unknown ? 'write' : 'connect',
          }),
      server: o.ok ? '127.0.0.1' : null,
      connected: t === 0 || (t === 1300 && !o.ok) || t === 1300,
    });
  }
  return out;
}

describe('disruptionFigures', () => {
  const W = { t0Ms: 1000, warmupStartMs: 0, endMs: 2000 };

  test('errors from 1100 to 1200, success again at 1300: first error, error window, recovery, dip', () => {
    // GIVEN 1 ms writes, failing (refused, 2 ms) for the attempts starting at 1100 and 1200
    const a = attempts((t) => (t === 1100 || t === 1200 ? { ok: false, ms: 2 } : { ok: true, ms: 1 }));
    // WHEN
    const f = disruptionFigures(a, W);
    // THEN times are when each was seen (its end)
    expect(f.timeToFirstErrorMs).toBe(102); // 1102 - 1000
    expect(f.errorWindowMs).toBe(1301 - 1102);
    expect(f.stallThresholdMs).toBe(10); // 10 × warm-up p99 of 1 ms
    expect(f.stallWindowMs).toBe(0);
    expect(f.maxLatencyMs).toBe(1);
    expect(f.recoveryMs).toBe(301); // the first success after the last error, rolling p99 fine from there
    expect(f.throughputDip).toBe(2); // 10/s in the warm-up, 8 of 10 after T0
    expect(f.recovered).toBe(true);
    expect(f.reconnects).toBe(1); // the attempt at 1300 reconnected
  });

  test('a stall instead of errors: the window spans the slow successes, recovery follows them', () => {
    // GIVEN writes that take 400 ms from 1100 to 1300 (no errors)
    const a = attempts((t) => (t >= 1100 && t <= 1300 ? { ok: true, ms: 400 } : { ok: true, ms: 1 }));
    // WHEN
    const f = disruptionFigures(a, W);
    // THEN
    expect(f.timeToFirstErrorMs).toBeNull();
    expect(f.errorWindowMs).toBeNull();
    expect(f.stallWindowMs).toBe(1700 - 1100);
    expect(f.maxLatencyMs).toBe(400);
    // the last 1-second window holding a 400 ms success ends at 1700 + 1000 > the window: not recovered in time
    expect(f.recoveryMs).toBeNull();
    expect(f.recovered).toBe(true);
  });

  test('no T0 (never disrupted): nothing after it is measured', () => {
    // GIVEN / WHEN
    const f = disruptionFigures(
      attempts(() => ({ ok: true, ms: 1 })),
      { ...W, t0Ms: null },
    );
    // THEN
    expect(f).toMatchObject({
      timeToFirstErrorMs: null,
      recoveryMs: null,
      throughputDip: null,
      recovered: false,
    });
  });

  test('errors until the window ends: no error window, not recovered', () => {
    // GIVEN
    const a = attempts((t) => (t >= 1100 ? { ok: false, ms: 2 } : { ok: true, ms: 1 }));
    // WHEN
    const f = disruptionFigures(a, W);
    // THEN
    expect(f.errorWindowMs).toBeNull();
    expect(f.recovered).toBe(false);
  });
});

describe('reconcile', () => {
  const a = attempts((t) =>
    t === 1100
      ? { ok: false, ms: 2, unknown: true }
      : t === 1200
        ? { ok: false, ms: 2, unknown: true }
        : t === 1300
          ? { ok: false, ms: 2 }
          : { ok: true, ms: 1 },
  );

  test('every acknowledged write found, unknowns resolved from the ledger, duplicates counted', () => {
    // GIVEN a ledger with every ok write, the unknown at 1100 (twice), not the one at 1200
    const ledger = new Map(a.filter((x) => x.outcome === 'ok').map((x) => [x.id, 1]));
    ledger.set('a1100', 2);
    // WHEN
    const w = reconcile(a, ledger);
    // THEN
    expect(w).toEqual({
      acknowledged: 17,
      failed: 1,
      unknown: 2,
      unknownCommitted: 1,
      unknownNotCommitted: 1,
      acknowledgedMissing: 0,
      duplicates: 1,
      reconciled: true,
    });
  });

  test('an acknowledged write missing from the ledger is counted, an unreadable ledger is unknown', () => {
    // GIVEN a ledger without a0
    const ledger = new Map(a.filter((x) => x.outcome === 'ok' && x.id !== 'a0').map((x) => [x.id, 1]));
    // WHEN / THEN
    expect(reconcile(a, ledger).acknowledgedMissing).toBe(1);
    expect(reconcile(a, null)).toMatchObject({
      acknowledgedMissing: null,
      duplicates: null,
      reconciled: false,
    });
  });
});

// ------------------------------------------------------------------------------------------------
// The runner on virtual time.

const SPEC: DisruptionProbe = {
  kind: 'disruption',
  disruption: { action: 'postgres-restart', shutdown: 'fast' },
  intervalMs: 100,
  warmupSec: 1,
  recoverySec: 2,
  clientTimeouts: { connectTimeoutMs: 500, statementTimeoutMs: 500 },
};

/** A fake server: writes take 1 ms; from T0 for `downMs` it refuses connections and kills open ones. */
class FakeServer {
  down = false;
  generation = 0;
  readonly ledger = new Map<string, number>();
  /** Writes the server committed but whose answer it never sent (lost with the connection). */
  commitThenDrop = false;
  constructor(readonly clock: VirtualClock) {}

  private self(): FakeServer {
    return this;
  }

  connector: ProbeConnector = async (_ep: ProbeEndpoint) => {
    await this.clock.sleep(1);
    if (this.down)
      throw new ProbeError(failure({ code: 'ECONNREFUSED', phase: 'connect', message: 'refused' }));
    const gen = this.generation;
    const server: FakeServer = this.self();
    const conn: ProbeConnection = {
      async write(row: LedgerRow) {
        await server.clock.sleep(1);
        if (server.generation !== gen || server.down) {
          if (server.commitThenDrop) server.ledger.set(row.id, (server.ledger.get(row.id) ?? 0) + 1);
          throw new ProbeError(
            failure({
              sqlstate: '57P01',
              severity: 'FATAL',
              message: 'terminating connection due to administrator command',
            }),
          );
        }
        server.ledger.set(row.id, (server.ledger.get(row.id) ?? 0) + 1);
        return { server: '127.0.0.1', inRecovery: false };
      },
      select1: () => server.clock.sleep(1),
      ledger: () => Promise.resolve(new Map(server.ledger)),
      ensureLedger: () => Promise.resolve(),
      close: () => Promise.resolve(),
    };
    return conn;
  };
}

function world(
  server: FakeServer,
  clock: VirtualClock,
  downMs: number,
  opts: { restoreFails?: boolean; timelineNote?: string } = {},
): DisruptionWorld {
  const ep: ProbeEndpoint = {
    hosts: [{ host: '127.0.0.1', port: 1 }],
    user: 'u',
    dbname: 'd',
    sslmode: 'disable',
    targetSessionAttrs: 'any',
    label: 'fake',
  };
  const session: DisruptionSession = {
    endpoint: () => ep,
    ledgerEndpoint: () => ep,
    inject: async (event) => {
      event('stop-issued', 'local');
      server.down = true;
      server.generation++;
      await clock.sleep(downMs);
      server.down = false;
      event('server-up', 'local');
    },
    restore: () =>
      opts.restoreFails ? Promise.reject(new Error('PostgreSQL did not start')) : Promise.resolve(),
    pgbenchFloor: () => Promise.resolve(0.25),
    ...(opts.timelineNote !== undefined ? { timelineNote: () => opts.timelineNote ?? null } : {}),
  };
  return {
    unavailable: (step) => (step.target.kind === 'direct' ? null : 'only direct here'),
    open: () => Promise.resolve(session),
  };
}

function steps(): PlannedStep[] {
  return expandSuite(
    {
      name: 't',
      description: 'd',
      scenarios: [
        {
          name: 'restart',
          experiment: 'E1',
          title: 't',
          finding: 'f',
          script: SELECT_1,
          protocols: ['extended'],
          connects: ['persistent', 'per-transaction'],
          clients: [2],
          jobs: 1,
          durationSec: 3,
          scale: 1,
          initFlags: [],
          repetitions: 1,
          targets: [DIRECT],
          probe: SPEC,
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

function probeRun(s: readonly PlannedStep[], signal = new AbortController().signal): ProbeRun<'disruption'> {
  const target: Target = {
    ref: { kind: 'direct', name: 'direct' },
    connection: () => ({ host: '127.0.0.1', port: 1, user: 'u', dbname: 'd' }),
    maxConnections: () => Promise.resolve(40),
    poolSize: () => Promise.resolve(null),
  };
  let t = Date.parse('2026-11-21T10:00:00Z');
  const clock: Clock = { now: () => new Date((t += 10)), sleep: () => Promise.resolve() };
  return {
    runId: 'r',
    steps: s,
    spec: SPEC,
    targets: new Map([['direct', target]]),
    clock,
    signal,
    log: () => undefined,
  };
}

describe('disruptionProbeRunner on virtual time', () => {
  test('a server away for 500 ms: both modes see errors, then recover; every write reconciled, bounded', async () => {
    // GIVEN a fake server that goes away at T0 for 500 ms
    const clock = new VirtualClock();
    const server = new FakeServer(clock);
    const runner = disruptionProbeRunner({
      world: world(server, clock, 500),
      connector: server.connector,
      clock,
      floorQueries: 5,
    });
    const planned = steps();
    // WHEN
    const outcomes = await runner.run(probeRun(planned));
    // THEN one completed outcome per step
    expect(outcomes.map((o) => [o.stepId, o.status])).toEqual(planned.map((s) => [s.stepId, 'completed']));
    for (const o of outcomes) {
      const r = o.result;
      if (r === null) throw new Error('no result');
      // bounded: 2 clients × at most 3 s / 100 ms + 1 attempts
      expect(r.attempts.length).toBeLessThanOrEqual(2 * 31);
      expect(r.attempts.length).toBeGreaterThanOrEqual(2 * 29);
      expect(r.figures.timeToFirstErrorMs).not.toBeNull();
      // errors last about as long as the server was away (within two intervals and the staggering)
      expect(r.figures.errorWindowMs).toBeGreaterThan(300);
      expect(r.figures.errorWindowMs).toBeLessThan(800);
      expect(r.figures.recovered).toBe(true);
      expect(r.writes).toMatchObject({ acknowledgedMissing: 0, duplicates: 0, reconciled: true });
      expect(r.writes.acknowledged + r.writes.failed + r.writes.unknown).toBe(r.attempts.length);
      expect(r.floor.pgbenchSelectP50Ms).toBe(0.25);
      expect(r.floor.selectP50Ms).toBe(1);
      expect(r.events.map((e) => e.name)).toEqual(['stop-issued', 'server-up']);
      expect(r.events[1]?.atMs).toBe(500);
      expect(o.transcript).toMatch(/T0 20\d\d-/);
    }
    const persistent = outcomes.find((o) => o.stepId.includes('/persistent/'))?.result;
    const perTx = outcomes.find((o) => o.stepId.includes('/per-transaction/'))?.result;
    // a persistent client loses its connection (57P01 under a write: unknown), then is refused while reconnecting
    expect(persistent?.errors.map((e) => e.class).sort()).toEqual(['connection-failed', 'server-stopped']);
    expect(persistent?.figures.reconnects).toBeGreaterThanOrEqual(2);
    // a client connecting for every write is only ever refused
    expect(perTx?.errors.map((e) => e.class)).toEqual(['connection-failed']);
    expect(perTx?.writes.unknown).toBe(0);
  });

  test('writes the server committed before dropping the connection come back as unknown-but-committed', async () => {
    // GIVEN a server that commits the write in flight when it goes away
    const clock = new VirtualClock();
    const server = new FakeServer(clock);
    server.commitThenDrop = true;
    const runner = disruptionProbeRunner({
      world: world(server, clock, 300),
      connector: server.connector,
      clock,
      floorQueries: 1,
    });
    // WHEN
    const outcomes = await runner.run(probeRun(steps()));
    // THEN
    const w = outcomes.find((o) => o.stepId.includes('/persistent/'))?.result?.writes;
    expect(w?.unknown).toBeGreaterThan(0);
    expect(w?.unknownCommitted).toBe(w?.unknown);
    expect(w?.acknowledgedMissing).toBe(0);
  });

  test('a stack that cannot be put back makes every step an infrastructure error, with the cause', async () => {
    // GIVEN a world whose restore fails
    const clock = new VirtualClock();
    const server = new FakeServer(clock);
    const runner = disruptionProbeRunner({
      world: world(server, clock, 100, { restoreFails: true }),
      connector: server.connector,
      clock,
      floorQueries: 1,
    });
    // WHEN
    const outcomes = await runner.run(probeRun(steps()));
    // THEN
    expect(outcomes.every((o) => o.status === 'infrastructure-error')).toBe(true);
    expect(outcomes[0]?.note).toMatch(/could not be put back after the window: PostgreSQL did not start/);
  });

  test.each([
    [
      'says its timeline may be incomplete',
      'timeline may be incomplete: RDS events still arriving after 4 reads',
    ],
    ['has nothing to add', undefined],
  ])(
    'a world that %s: the note is in every step of the group, its transcript, and read back',
    async (_w, note) => {
      // GIVEN a world whose session may say, after restore, that its events may be incomplete
      const clock = new VirtualClock();
      const server = new FakeServer(clock);
      const runner = disruptionProbeRunner({
        world: world(server, clock, 100, note !== undefined ? { timelineNote: note } : {}),
        connector: server.connector,
        clock,
        floorQueries: 1,
      });
      // WHEN
      const outcomes = await runner.run(probeRun(steps()));
      // THEN
      expect(outcomes.length).toBeGreaterThan(0);
      for (const o of outcomes) {
        expect(o.status).toBe('completed');
        if (note === undefined) expect(o.result).not.toHaveProperty('timelineNote');
        else {
          expect(o.result?.timelineNote).toBe(note);
          expect(o.transcript).toContain(`(${note})`);
        }
        // what is stored is what the run-file schema reads back (an old result has no note: still read)
        expect(disruptionResultSchema.parse(o.result)).toEqual(o.result);
      }
    },
  );

  test('the world says which steps it cannot disrupt', () => {
    // GIVEN / WHEN / THEN
    const clock = new VirtualClock();
    const server = new FakeServer(clock);
    const runner = disruptionProbeRunner({
      world: world(server, clock, 1),
      connector: server.connector,
      clock,
    });
    const s = steps()[0] as PlannedStep;
    expect(runner.unavailable?.(s)).toBeNull();
    expect(runner.unavailable?.({ ...s, target: { kind: 'pgbouncer-transaction', name: 'p' } })).toBe(
      'only direct here',
    );
  });
});
