/**
 * The disruption probe, world-neutral: the `ProbeRunner` of kind `disruption` (lib/engine/ports.ts)
 * both `proxylab local` and the cloud runner use. A world (lib/local/disruptions.ts,
 * lib/runner/disruptions.ts) says how to reach each target and the ledger, and how to inject the
 * disruption; this module runs the clients, times everything on one monotonic clock, reconciles the
 * ledger and turns the attempts into each step's result (lib/suite/disruption-figures.ts).
 *
 * One execution = one group (a repetition): the floor on each target (SELECT 1, and pgbench's where
 * the world can run it), then every step's clients (N per step, persistent ones reconnecting,
 * per-transaction ones connecting for each write) write at the interval, staggered across it; at
 * T0 = start + warm-up the world injects the disruption (concurrently: clients keep writing), and
 * the clients stop at T0 + the recovery window. Bounded: no attempt starts after the window, each
 * is given up at the client's own timeouts (the scenario's `clientTimeouts`: connect, statement) —
 * a `client-timeout` — or, still waiting 1 s after the window ended, abandoned then (`open`: the
 * wait was not over in the window); a client makes at most window / interval + 1 attempts.
 */
import { setMaxListeners } from 'node:events';
import { percentile } from '../core/stats';
import type {
  Clock,
  PgbenchExecutor,
  ProbeRun,
  ProbeRunner,
  ProbeStepOutcome,
  Target,
} from '../engine/ports';
import { clientTimeoutsText, describeDisruption } from '../suite/disruption-verdict';
import type { DisruptionEvent, DisruptionProbe, DisruptionResult } from '../suite/disruption';
import {
  disruptionFigures,
  errorCounts,
  eventsFromT0,
  failedButCommitted,
  jitter,
  reconcile,
  serversOf,
  timeline,
  warmupOf,
  WINDOW_END_CODE,
  writeFate,
  type AttemptRecord,
  type ProbeFailure,
  type FigureWindow,
} from '../suite/disruption-figures';
import type { PlannedStep } from '../suite/expand';
import { describeLoad } from '../suite/disruption-load';
import { prepareGroupLoads, type GroupLoads } from './background-load';

export { pgbenchSelectFloor } from './pgbench-floor';
import {
  ProbeError,
  probeFailureOf,
  type ProbeConnection,
  type ProbeConnector,
  type ProbeEndpoint,
} from './pg-probe';

/** A monotonic clock in ms (performance.now locally), and waiting until a moment on it. */
export interface ProbeClock {
  now(): number;
  /** Resolves at `ms` (at once when it has passed) or when `signal` aborts. */
  sleepUntil(ms: number, signal: AbortSignal): Promise<void>;
}

export const realProbeClock: ProbeClock = {
  now: () => performance.now(),
  sleepUntil: (ms, signal) =>
    new Promise((resolve) => {
      const wait = ms - performance.now();
      if (wait <= 0 || signal.aborted) return resolve();
      const timer = setTimeout(done, wait);
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    }),
};

/**
 * An event of the disruption, stamped on the probe clock when it is said — or, given `at` (a wall
 * time someone else stamped: an RDS event's Date, a poll's answer), placed on the probe clock from it
 * (the run clock's now less how long ago `at` was).
 */
export type EventSink = (
  name: string,
  source: DisruptionEvent['source'],
  detail?: string | null,
  at?: Date,
) => void;

/** What a world does around and at T0. */
export interface DisruptionSession {
  /** The endpoint each probe client of `step` connects to (a direct client during a failover: every node, read-write). */
  endpoint(step: PlannedStep, target: Target): ProbeEndpoint;
  /** Where the ledger is created before and read after (the primary at that moment). */
  ledgerEndpoint(): ProbeEndpoint;
  /** The disruption itself, at T0; resolves when it is over (the server back, the standby promoted). */
  inject(event: EventSink, signal: AbortSignal): Promise<void>;
  /**
   * After the window (not measured): put things back for the next group (a failed-over stack back
   * on its first primary). Throws when it cannot: the infrastructure is then down.
   */
  restore(): Promise<void>;
  /**
   * After `restore`: why the group's server-side events may be incomplete (a cloud world's RDS events
   * still arriving after its last read), or null. Absent: the world says its events as they happen.
   */
  timelineNote?(): string | null;
  /** pgbench's SELECT 1 p50 on a target (ms), where the world can run pgbench; null otherwise. */
  pgbenchFloor?(target: Target): Promise<number | null>;
}

/** A world: opens a session for one group, or says why it cannot run a step. */
export interface DisruptionWorld {
  /** Why this world cannot disrupt `step` (its action, its target), or null. */
  unavailable(step: PlannedStep, spec: DisruptionProbe): string | null;
  /** Prepares the group's disruption (not measured: a standby started, say). */
  open(
    spec: DisruptionProbe,
    steps: readonly PlannedStep[],
    targets: ReadonlyMap<string, Target>,
    log: (line: string) => void,
  ): Promise<DisruptionSession>;
}

export interface DisruptionRunnerDeps {
  readonly world: DisruptionWorld;
  readonly connector: ProbeConnector;
  readonly clock?: ProbeClock;
  /** SELECT 1 round trips for the floor per target. @default 30 */
  readonly floorQueries?: number;
  /** How long the ledger may take to answer after the window (a server still starting). @default 30000 */
  readonly ledgerWaitMs?: number;
  /** The world's pgbench, for a scenario's background load (./background-load.ts); absent: recorded not run. */
  readonly pgbench?: PgbenchExecutor;
}

/** The disruption ProbeRunner over a world. */
export function disruptionProbeRunner(deps: DisruptionRunnerDeps): ProbeRunner<'disruption'> {
  // The floor of a target is measured once per run (its first group), not before every repetition.
  const floors = new Map<string, Floor>();
  // The background load's tables are loaded once per run and scale.
  const loadedScales = new Set<number>();
  return {
    unavailable: (step) =>
      step.probe?.spec.kind === 'disruption' ? deps.world.unavailable(step, step.probe.spec) : null,
    run: (run) => runGroup(run, deps, floors, loadedScales),
  };
}

/** An attempt still unanswered this long after the window ended is abandoned (`open`). */
export const ABANDON_AFTER_WINDOW_MS = 1000;
/** Creating and reading the ledger, the floor's SELECT 1: not measured, each given this long. */
const SETUP_TIMEOUT_MS = 10_000;

interface ClientPlan {
  readonly step: PlannedStep;
  readonly client: number;
  readonly endpoint: ProbeEndpoint;
  readonly persistent: boolean;
  /** Stagger within the interval. */
  readonly offsetMs: number;
}

interface Floor {
  selectP50Ms: number | null;
  selectP99Ms: number | null;
  pgbenchSelectP50Ms: number | null;
}

async function runGroup(
  run: ProbeRun<'disruption'>,
  deps: DisruptionRunnerDeps,
  knownFloors: Map<string, Floor>,
  loadedScales: Set<number>,
): Promise<ProbeStepOutcome<'disruption'>[]> {
  const clock = deps.clock ?? realProbeClock;
  const spec = run.spec;
  const startedAt = run.clock.now().toISOString();
  const fail = (note: string): ProbeStepOutcome<'disruption'>[] =>
    run.steps.map((s) => ({
      stepId: s.stepId,
      status: 'infrastructure-error',
      result: null,
      startedAt,
      endedAt: run.clock.now().toISOString(),
      transcript: `${note}\n`,
      note,
    }));
  let session: DisruptionSession;
  try {
    session = await deps.world.open(spec, run.steps, run.targets, run.log);
  } catch (err) {
    return fail(`could not prepare ${spec.disruption.action}: ${(err as Error).message}`);
  }
  try {
    await withConnection(deps.connector, session.ledgerEndpoint(), SETUP_TIMEOUT_MS, (c) =>
      c.ensureLedger(SETUP_TIMEOUT_MS),
    );
  } catch (err) {
    await session.restore().catch(() => undefined);
    return fail(`could not create the ledger table: ${(err as Error).message}`);
  }
  const floors = await measureFloors(run, session, deps, spec, knownFloors);
  const loads = await groupLoads(run, deps.pgbench, session, clock, loadedScales);
  const plans = clientPlans(run, session, spec);
  // Every client waits on the run's signal: one abort listener each.
  setMaxListeners(plans.length + 16, run.signal);
  const events: Array<Omit<DisruptionEvent, 'atMs'> & { atClockMs: number }> = [];
  const sink: EventSink = (name, source, detail = null, at) => {
    const atClockMs =
      at === undefined ? clock.now() : clock.now() - (run.clock.now().getTime() - at.getTime());
    events.push({ name, source, detail, atClockMs });
    run.log(`${name}${detail ? `: ${detail}` : ''}`);
  };
  const startMs = clock.now() + 50;
  const t0Planned = startMs + spec.warmupSec * 1000;
  const endMs = t0Planned + spec.recoverySec * 1000;
  const window = { startMs, endMs };
  loads?.start(endMs);
  const clients = plans.map((p) => runClient(p, window, run, deps.connector, clock, spec));
  const { t0Ms, injectError } = await injectAtT0(run, session, clock, t0Planned, sink);
  const attemptsByClient = await Promise.all(clients);
  const wallOf = (ms: number): number => run.clock.now().getTime() - (clock.now() - ms);
  const loadOf = await loads?.results(wallOf(t0Ms ?? t0Planned), spec.recoverySec * 1000);
  const ledger = await readLedger(deps, session, run);
  let restoreError: string | null = null;
  try {
    await session.restore();
  } catch (err) {
    restoreError = (err as Error).message;
  }
  const timelineNote = session.timelineNote?.() ?? null;
  if (timelineNote !== null) run.log(timelineNote);
  const endedAt = run.clock.now().toISOString();
  return run.steps.map((step) => {
    const own = plans.flatMap((p, i) => (p.step === step ? (attemptsByClient[i] ?? []) : []));
    const fw: FigureWindow = { t0Ms, warmupStartMs: startMs, endMs };
    const result: DisruptionResult = {
      ...resultOf(
        step,
        spec,
        own,
        fw,
        ledger.ids,
        floors.get(step.target.name) ?? null,
        eventsFromT0(events, t0Ms),
        wallT0(run.clock, clock, t0Ms),
      ),
      ...(timelineNote !== null ? { timelineNote } : {}),
      ...(loadOf?.has(step.target.name) ? { load: loadOf.get(step.target.name) } : {}),
    };
    const problems = [
      injectError && `the disruption failed: ${injectError}`,
      restoreError && `the stack could not be put back after the window: ${restoreError}`,
      ledger.error && `the ledger could not be read: ${ledger.error}`,
    ].filter((x): x is string => typeof x === 'string');
    const phantom = ledger.ids ? failedButCommitted(own, ledger.ids) : 0;
    const transcript = transcriptOf(
      step,
      plans.filter((p) => p.step === step),
      result,
      events,
      t0Ms,
      problems,
      phantom,
    );
    const down = injectError !== null || restoreError !== null;
    return {
      stepId: step.stepId,
      status: down ? 'infrastructure-error' : run.signal.aborted ? 'timeout' : 'completed',
      result,
      startedAt,
      endedAt,
      transcript,
      ...(problems.length > 0 || phantom > 0
        ? {
            note: [
              ...problems,
              ...(phantom > 0 ? [`${phantom} write(s) reported failed are in the ledger`] : []),
            ].join('; '),
          }
        : {}),
    };
  });
}

/** The group's background load, prepared (tables, capacity), or null when the scenario has none. */
async function groupLoads(
  run: ProbeRun<'disruption'>,
  executor: PgbenchExecutor | undefined,
  session: DisruptionSession,
  clock: ProbeClock,
  loadedScales: Set<number>,
): Promise<GroupLoads | null> {
  const load = run.spec.load;
  if (load === undefined) return null;
  return await prepareGroupLoads({
    load,
    executor,
    steps: run.steps,
    targets: run.targets,
    endpoint: (s, t) => session.endpoint(s, t),
    ledger: session.ledgerEndpoint(),
    clock,
    signal: run.signal,
    loadedScales,
    log: run.log,
  });
}

/**
 * Wait for the planned T0 and inject the disruption then (nothing when the run was aborted first):
 * T0 on the probe clock (null: not reached) and the injection's error, if any (also an event).
 */
async function injectAtT0(
  run: ProbeRun<'disruption'>,
  session: DisruptionSession,
  clock: ProbeClock,
  t0Planned: number,
  sink: EventSink,
): Promise<{ t0Ms: number | null; injectError: string | null }> {
  await clock.sleepUntil(t0Planned, run.signal);
  if (run.signal.aborted) return { t0Ms: null, injectError: null };
  const t0Ms = clock.now();
  const { action, shutdown } = run.spec.disruption;
  run.log(`T0: ${action}${shutdown ? ` (${shutdown})` : ''}`);
  try {
    await session.inject(sink, run.signal);
    return { t0Ms, injectError: null };
  } catch (err) {
    const injectError = (err as Error).message;
    sink('disruption-failed', 'local', injectError);
    return { t0Ms, injectError };
  }
}

/** The wall time of T0: the run clock's now, less how long ago T0 was on the probe clock. */
function wallT0(runClock: Clock, clock: ProbeClock, t0Ms: number | null): string | null {
  if (t0Ms === null) return null;
  return new Date(runClock.now().getTime() - (clock.now() - t0Ms)).toISOString();
}

async function withConnection<T>(
  connector: ProbeConnector,
  ep: ProbeEndpoint,
  timeoutMs: number,
  f: (c: ProbeConnection) => Promise<T>,
): Promise<T> {
  const c = await connector(ep, timeoutMs);
  try {
    return await f(c);
  } finally {
    await c.close();
  }
}

/** SELECT 1 latencies per target (and pgbench's), before the warm-up. */
async function measureFloors(
  run: ProbeRun<'disruption'>,
  session: DisruptionSession,
  deps: DisruptionRunnerDeps,
  spec: DisruptionProbe,
  out: Map<string, Floor>,
): Promise<Map<string, Floor>> {
  const clock = deps.clock ?? realProbeClock;
  for (const step of run.steps) {
    const name = step.target.name;
    if (out.has(name)) continue;
    const target = run.targets.get(name);
    if (!target) continue;
    const times: number[] = [];
    try {
      await withConnection(deps.connector, session.endpoint(step, target), SETUP_TIMEOUT_MS, async (c) => {
        for (let i = 0; i < (deps.floorQueries ?? 30); i++) {
          const t = clock.now();
          await c.select1(SETUP_TIMEOUT_MS);
          times.push(clock.now() - t);
        }
      });
    } catch {
      /* no floor: unknown */
    }
    const pgbench = session.pgbenchFloor ? await session.pgbenchFloor(target).catch(() => null) : null;
    out.set(name, {
      selectP50Ms: round(percentile(times, 50)),
      selectP99Ms: round(percentile(times, 99)),
      pgbenchSelectP50Ms: pgbench === null ? null : round(pgbench),
    });
  }
  return out;
}

function clientPlans(
  run: ProbeRun<'disruption'>,
  session: DisruptionSession,
  spec: DisruptionProbe,
): ClientPlan[] {
  const plans: Array<Omit<ClientPlan, 'offsetMs'>> = [];
  for (const step of run.steps) {
    const target = run.targets.get(step.target.name);
    if (!target) continue;
    for (let c = 0; c < step.params.clients; c++)
      plans.push({
        step,
        client: c,
        endpoint: session.endpoint(step, target),
        persistent: step.params.connect === 'persistent',
      });
  }
  // Spread over the interval so the writes do not all start at once.
  return plans.map((p, i) => ({ ...p, offsetMs: (i * spec.intervalMs) / Math.max(1, plans.length) }));
}

/**
 * The failure of an attempt in the probe's terms; a timeout that fired because the window was over
 * (not the client's own) is `window-end`: the attempt was still waiting then.
 */
function failureOf(err: unknown, phase: 'connect' | 'write', byWindow: boolean): ProbeFailure {
  const f =
    err instanceof ProbeError
      ? { ...err.failure, phase: err.failure.phase === 'connect' ? 'connect' : phase }
      : probeFailureOf(err, phase);
  return byWindow && f.code === 'timeout'
    ? { ...f, code: WINDOW_END_CODE, message: `still waiting when the recovery window ended (${f.message})` }
    : f;
}

/** One probe client from the first slot to the end of the window. */
async function runClient(
  plan: ClientPlan,
  window: { startMs: number; endMs: number },
  run: ProbeRun<'disruption'>,
  connector: ProbeConnector,
  clock: ProbeClock,
  spec: DisruptionProbe,
): Promise<AttemptRecord[]> {
  const attempts: AttemptRecord[] = [];
  const max = Math.floor((window.endMs - window.startMs) / spec.intervalMs) + 1;
  const group = plan.step.probe?.group ?? plan.step.stepId;
  let conn: ProbeConnection | null = null;
  let slot = window.startMs + plan.offsetMs;
  const { connectTimeoutMs, statementTimeoutMs } = spec.clientTimeouts;
  const abandonAt = window.endMs + ABANDON_AFTER_WINDOW_MS;
  // The client's timeout, or what is left until the attempt is abandoned after the window if that is sooner.
  const limit = (clientMs: number): { ms: number; byWindow: boolean } => {
    const left = abandonAt - clock.now();
    return left < clientMs ? { ms: Math.max(1, left), byWindow: true } : { ms: clientMs, byWindow: false };
  };
  for (let seq = 0; seq < max && slot < window.endMs && !run.signal.aborted; seq++) {
    await clock.sleepUntil(slot, run.signal);
    // No attempt starts after the window, even when its slot's wake-up came late (a busy event loop).
    if (run.signal.aborted || clock.now() >= window.endMs) break;
    const startMs = clock.now();
    const id = `${plan.step.stepId}#${plan.client}#${seq}`;
    let connected = false;
    let outcome: AttemptRecord['outcome'] = 'ok';
    let failure: AttemptRecord['failure'] = null;
    let server: string | null = null;
    let phase: 'connect' | 'write' = 'connect';
    let bound = { ms: connectTimeoutMs, byWindow: false };
    try {
      if (conn === null) {
        bound = limit(connectTimeoutMs);
        conn = await connector(plan.endpoint, bound.ms);
        connected = plan.persistent;
      }
      phase = 'write';
      bound = limit(statementTimeoutMs);
      server = (await conn.write({ runId: run.runId, group, id }, bound.ms)).server;
    } catch (err) {
      failure = failureOf(err, phase, bound.byWindow);
      outcome = writeFate(failure);
      // A failed connection is not reused: the next attempt reconnects.
      if (conn !== null) await conn.close();
      conn = null;
    }
    // Abandoned after the window: no answer came (its latency is unknown, not the time waited).
    const endMs = failure?.code === WINDOW_END_CODE ? null : clock.now();
    if (!plan.persistent && conn !== null) {
      const c = conn;
      conn = null;
      void c.close();
    }
    attempts.push({
      id,
      client: plan.client,
      scheduledMs: slot,
      startMs,
      endMs,
      outcome,
      failure,
      server,
      connected,
    });
    // The next slot not yet passed: a stalled attempt skips the slots it overran.
    slot += spec.intervalMs;
    const now = clock.now();
    if (now > slot) slot += Math.ceil((now - slot) / spec.intervalMs) * spec.intervalMs;
  }
  if (conn !== null) await conn.close();
  return attempts;
}

async function readLedger(
  deps: DisruptionRunnerDeps,
  session: DisruptionSession,
  run: ProbeRun<'disruption'>,
): Promise<{ ids: Map<string, number> | null; error: string | null }> {
  const group = run.steps[0]?.probe?.group ?? '';
  const deadline = Date.now() + (deps.ledgerWaitMs ?? 30_000);
  let error: string;
  for (;;) {
    try {
      const ids = await withConnection(deps.connector, session.ledgerEndpoint(), SETUP_TIMEOUT_MS, (c) =>
        c.ledger(run.runId, group, SETUP_TIMEOUT_MS),
      );
      return { ids, error: null };
    } catch (err) {
      error = (err as Error).message;
    }
    if (Date.now() >= deadline) return { ids: null, error };
    await new Promise((r) => setTimeout(r, 250));
  }
}

function resultOf(
  step: PlannedStep,
  spec: DisruptionProbe,
  attempts: readonly AttemptRecord[],
  w: FigureWindow,
  ledger: ReadonlyMap<string, number> | null,
  floor: Floor | null,
  events: DisruptionEvent[],
  t0: string | null,
): DisruptionResult {
  const j = jitter(attempts);
  return {
    kind: 'disruption',
    disruption: spec.disruption,
    mode: step.params.connect,
    clients: step.params.clients,
    intervalMs: spec.intervalMs,
    clientTimeouts: spec.clientTimeouts,
    t0,
    events,
    warmup: warmupOf(attempts, w),
    floor: {
      selectP50Ms: floor?.selectP50Ms ?? null,
      selectP99Ms: floor?.selectP99Ms ?? null,
      pgbenchSelectP50Ms: floor?.pgbenchSelectP50Ms ?? null,
      jitterP50Ms: j.p50Ms,
      jitterP99Ms: j.p99Ms,
      jitterMaxMs: j.maxMs,
    },
    figures: disruptionFigures(attempts, w),
    errors: errorCounts(attempts),
    writes: reconcile(attempts, ledger),
    servers: serversOf(attempts),
    attempts: timeline(attempts, w),
  };
}

function transcriptOf(
  step: PlannedStep,
  plans: readonly ClientPlan[],
  r: DisruptionResult,
  events: ReadonlyArray<{ name: string; source: string; detail: string | null; atClockMs: number }>,
  t0Ms: number | null,
  problems: readonly string[],
  phantom: number,
): string {
  const ep = plans[0]?.endpoint.label ?? step.target.name;
  const lines = [
    `${r.clients} ${r.mode} probe client(s) on ${step.target.name} (${ep}), one write every ${r.intervalMs} ms, ${clientTimeoutsText(r.clientTimeouts)}`,
    `floor: SELECT 1 p50 ${fmt(r.floor.selectP50Ms)} ms, p99 ${fmt(r.floor.selectP99Ms)} ms; pgbench p50 ${fmt(r.floor.pgbenchSelectP50Ms)} ms; interval jitter p50 ${fmt(r.floor.jitterP50Ms)} ms, p99 ${fmt(r.floor.jitterP99Ms)} ms, max ${fmt(r.floor.jitterMaxMs)} ms`,
    `warm-up: ${r.warmup.attempts} attempts, p50 ${fmt(r.warmup.p50Ms)} ms, p99 ${fmt(r.warmup.p99Ms)} ms, ${fmt(r.warmup.successPerSec)} writes/s`,
    `T0 ${r.t0 ?? 'never'}`,
    ...events.map(
      (e) =>
        `  ${fmt(t0Ms === null ? null : e.atClockMs - t0Ms)} ms  ${e.name} (${e.source})${e.detail ? `: ${e.detail}` : ''}`,
    ),
    ...(r.timelineNote !== undefined ? [`  (${r.timelineNote})`] : []),
    `result: ${describeDisruption(r)}`,
    `figures: ${JSON.stringify(r.figures)}`,
    ...r.errors.map((e) => `  ${e.class} ${e.sqlstate ?? e.code ?? ''} ×${e.count}: ${e.sample}`),
    ...(r.load ? [`background load: ${describeLoad(r.load)}`] : []),
    ...(phantom > 0 ? [`${phantom} write(s) the client was told failed are in the ledger`] : []),
    ...problems,
  ];
  return `${lines.join('\n')}\n`;
}

function fmt(v: number | null): string {
  return v === null ? '?' : String(Math.round(v * 100) / 100);
}

function round(v: number | null): number | null {
  return v === null ? null : Math.round(v * 100) / 100;
}

/**
 * A probe endpoint for a target as the world's pgbench reaches it: its host and port, user and
 * database, sslmode (RDS and RDS Proxy require TLS) and password (PGPASSWORD of its libpq
 * environment, never logged: the label has none).
 */
export function targetProbeEndpoint(target: Target): ProbeEndpoint {
  const c = target.connection();
  const password = c.env?.PGPASSWORD;
  return {
    hosts: [{ host: c.host, port: c.port }],
    user: c.user,
    dbname: c.dbname,
    ...(password !== undefined ? { password } : {}),
    sslmode: c.sslmode ?? 'disable',
    targetSessionAttrs: 'any',
    label: `${c.host}:${c.port}/${c.dbname}${c.sslmode ? ` sslmode=${c.sslmode}` : ''}`,
  };
}
