/**
 * Runs one session-state program (lib/suite/session-state.ts) against a real server with two
 * node-postgres clients, A and B, and records what every step saw. Used by the local stack and by
 * the cloud runner alike (the adapters decide how both clients come to share one server connection
 * and pass it in `sharing`; this module only connects, runs and records).
 *
 * - `interleaved` (a direct connection, a transaction pool, RDS Proxy): A and B are connected
 *   together and the steps run in the program's order.
 * - `sequential` (a session pool narrowed to one server connection): A runs its steps and
 *   disconnects, then B connects and runs its own — B can only get that server connection after A
 *   left, which is the only way a session pool shares one.
 *
 * A statement that fails with an SQLSTATE is recorded (the `errors` outcome); a connection that
 * cannot be made or is lost (SQLSTATE class 08 or 57, a socket error) is an InfrastructureError: the
 * step is not a measurement. Protocol-level named statements go through node-postgres' `{ name, text }`
 * queries: Parse (named) + Bind + Execute on a client's first use, Bind + Execute after that. The
 * clients and each kind of program step are ./session-program.ts.
 */
import { InfrastructureError } from '../core/errors';
import type { Clock, ProbeRunner, ProbeStepOutcome } from '../engine/ports';
import type { ClientTimeouts } from '../suite/client-timeouts';
import type { PlannedStep } from '../suite/expand';
import {
  classifySession,
  describeSessionResult,
  expectSession,
  judgeSession,
  probeOrder,
  sessionFeature,
  SESSION_CLIENT_TIMEOUTS,
  type PinWatch,
  type ProbeStepSpec,
  type SessionFeature,
  type SessionFeatureResult,
  type SessionStateResult,
} from '../suite/session-state';
import { sessionHandling, type TargetDescriptor } from '../suite/targets';
import type { ConnectionInfo } from '../suite/types';
import { SessionProgram } from './session-program';

export interface SessionProbeConnections {
  /** The target under test: both clients connect here. */
  readonly target: ConnectionInfo;
  /**
   * The database itself, as a role that may create roles (the feature's setup) and send NOTIFY:
   * a superuser locally, the lab's master user in the cloud.
   */
  readonly admin: ConnectionInfo;
}

export interface SessionProbeOptions {
  readonly feature: SessionFeature;
  /** The target as the step runs it: decides the order, the hold for a pinning metric and the expectation. */
  readonly descriptor: TargetDescriptor;
  /** How the adapter made A and B share a server connection, in words (recorded as is). */
  readonly sharing: string;
  /** key1 of the advisory locks (`:lock_key`): per run, so two runs on one server never wait on each other. */
  readonly lockKey: number;
  readonly clock: Clock;
  /**
   * Where the target's pinning metric is (RDS Proxy: DatabaseConnectionsCurrentlySessionPinned by
   * ProxyName). For a target that pins, the clients keep their state until a whole aligned metric
   * period has passed after the first statement, so the per-minute metric sees it. null: no hold.
   */
  readonly pinMetric?: {
    readonly metric: string;
    readonly dimensions: Readonly<Record<string, string>>;
  } | null;
  /** After a NOTIFY, how long the server gets to deliver it. @default 300 */
  readonly deliveryPauseMs?: number;
  /** How long a check waits for a notification. @default 1000 */
  readonly notificationWaitMs?: number;
  /**
   * The clients' own timeouts (the scenario's `probe.clientTimeouts`): a statement with no answer
   * within its timeout is recorded as a failed statement; a connect that times out makes the step
   * an infrastructure error. @default SESSION_CLIENT_TIMEOUTS (connect 10 s, statement 30 s)
   */
  readonly clientTimeouts?: ClientTimeouts;
  /** The metric's period; the hold covers one whole period. @default 60 */
  readonly metricPeriodSec?: number;
}

/** Runs a probe program; see the module comment. */
export async function runSessionProbe(
  conns: SessionProbeConnections,
  opts: SessionProbeOptions,
): Promise<SessionFeatureResult> {
  const feature = sessionFeature(opts.feature);
  const order = probeOrder(opts.descriptor);
  const hold = sessionHandling(opts.descriptor).pinsSessions ? (opts.pinMetric ?? null) : null;
  const clock = opts.clock;
  const started = clock.now();
  const program = new SessionProgram(conns, {
    feature: opts.feature,
    lockKey: opts.lockKey,
    clock,
    timeouts: opts.clientTimeouts ?? SESSION_CLIENT_TIMEOUTS,
    deliveryPauseMs: opts.deliveryPauseMs ?? 300,
    notificationWaitMs: opts.notificationWaitMs ?? 1000,
  });
  await program.setup(feature.setup ?? []);

  let firstAt: Date | undefined;
  let endAt: Date;
  try {
    const isB = (s: ProbeStepSpec): boolean => 'client' in s && s.client === 'B';
    if (order === 'interleaved') {
      await program.use('A');
      if (feature.steps.some(isB)) await program.use('B');
      firstAt = clock.now();
      for (const step of feature.steps) await program.run(step);
      await holdForMetric(opts, hold !== null, firstAt);
    } else {
      firstAt = clock.now();
      for (const step of feature.steps.filter((s) => !isB(s))) await program.run(step);
      await holdForMetric(opts, hold !== null, firstAt);
      await program.disconnect('A');
      for (const step of feature.steps.filter(isB)) await program.run(step);
    }
  } finally {
    await program.closeAll();
    endAt = clock.now();
  }

  const pinWatch: PinWatch | null = hold
    ? {
        metric: hold.metric,
        dimensions: hold.dimensions,
        periodSec: opts.metricPeriodSec ?? 60,
        start: (firstAt ?? started).toISOString(),
        end: endAt.toISOString(),
      }
    : null;
  return {
    feature: opts.feature,
    expected: expectSession(opts.feature, opts.descriptor),
    ...classifySession(program.steps),
    steps: program.steps,
    pinWatch,
  };
}

export interface SessionStateOptions extends Omit<SessionProbeOptions, 'feature'> {
  readonly features: readonly SessionFeature[];
  /**
   * Before each feature: leave no state of the previous one on the pool's server connections (a
   * transaction pool keeps it: PgBouncer KILL + RESUME). Absent: nothing to clear (direct, RDS Proxy,
   * whose sessions end with their clients).
   */
  readonly beforeEach?: () => Promise<void>;
  /** Stops between features (Ctrl-C, the step's time is up): what was measured so far is returned. */
  readonly signal?: AbortSignal;
}

/** Every feature's program on one target, one after the other (a session-state step). */
export async function runSessionState(
  conns: SessionProbeConnections,
  opts: SessionStateOptions,
): Promise<SessionStateResult> {
  const features: SessionFeatureResult[] = [];
  for (const feature of opts.features) {
    if (opts.signal?.aborted) break;
    await opts.beforeEach?.();
    features.push(await runSessionProbe(conns, { ...opts, feature }));
  }
  return {
    kind: 'session-state',
    order: probeOrder(opts.descriptor),
    sharing: opts.sharing,
    clientTimeouts: opts.clientTimeouts ?? SESSION_CLIENT_TIMEOUTS,
    features,
  };
}

/**
 * Waits until a whole metric period that started after the first statement has ended, so the
 * per-minute metric has a datapoint whose whole period saw the state (the report reads only such
 * periods). No-op for a target that does not pin.
 */
async function holdForMetric(opts: SessionProbeOptions, hold: boolean, firstAt: Date): Promise<void> {
  if (!hold) return;
  const periodMs = (opts.metricPeriodSec ?? 60) * 1000;
  const boundary = Math.ceil(firstAt.getTime() / periodMs) * periodMs;
  // A little past the period's end, so its datapoint is the state's (at most 2 s, less for short test periods).
  const until = boundary + periodMs + Math.min(2000, periodMs);
  const wait = until - opts.clock.now().getTime();
  if (wait > 0) await opts.clock.sleep(wait);
}

// ---------------------------------------------------------------------------------------------
// The probe runner (ProbeRunner 'session-state'), for the local stack and the cloud runner alike

/** How one world (the local stack, a cloud runner) runs session-state steps. */
export interface SessionProbeWorld {
  /** The database itself, for the setup and NOTIFY (see SessionProbeConnections.admin). */
  readonly admin: ConnectionInfo;
  /**
   * Makes the step's two clients share a server connection where the target allows it: what was
   * done in words, what clears the pool between features, and what undoes it after the step.
   */
  share(step: PlannedStep): Promise<{
    readonly sharing: string;
    readonly beforeEach?: () => Promise<void>;
    readonly restore?: () => Promise<void>;
  }>;
  /** Where the step's target publishes its pinning metric (RDS Proxy), else null. */
  pinMetric?(
    step: PlannedStep,
  ): { readonly metric: string; readonly dimensions: Readonly<Record<string, string>> } | null;
  /** Overrides the spec's pin period (s) — test-only stand-ins for RDS Proxy. */
  readonly pinPeriodSec?: number | null;
  /** Why this world cannot measure a step (it is then recorded not-available), or null. */
  unavailable?(step: PlannedStep): string | null;
}

/** key1 of the probe's advisory locks: from the run id, so two runs on one server never wait on each other. */
export function lockKeyOf(runId: string): number {
  let h = 0;
  for (const ch of runId) h = (Math.imul(h, 31) + ch.charCodeAt(0)) | 0;
  return (Math.abs(h) % 2_000_000_000) + 1;
}

/** A transcript of a step: one line per feature, then its statements (stored as the step's .stdout). */
export function sessionTranscript(r: SessionStateResult): string {
  const t = r.clientTimeouts;
  const timeouts = t
    ? `; client timeouts: connect ${t.connectTimeoutMs} ms, statement ${t.statementTimeoutMs} ms`
    : '';
  const lines = [`order: ${r.order}; sharing: ${r.sharing}${timeouts}`];
  for (const f of r.features) {
    const v = judgeSession(f.expected, f);
    lines.push(
      `${v.held === true ? '✓' : v.held === false ? '✗' : '–'} ${f.feature}: ${describeSessionResult(f)}`,
    );
    lines.push(`    expected: ${v.expected}`);
    for (const s of f.steps)
      lines.push(
        `    ${s.client} ${s.kind}${s.role ? ` (${s.role})` : ''}: ${s.sql}` +
          `${s.backendPid !== null ? ` [pid ${s.backendPid}]` : ''}` +
          `${s.present !== null ? ` → ${s.present ? 'present' : 'absent'} (${s.value ?? 'null'})` : ''}` +
          `${s.error !== null ? ` → ${s.sqlstate ?? 'error'}: ${s.error}` : ''}`,
      );
    if (f.pinWatch)
      lines.push(
        `    pin watch: ${f.pinWatch.metric} ${JSON.stringify(f.pinWatch.dimensions)} ${f.pinWatch.start} – ${f.pinWatch.end}`,
      );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The session-state probe runner: each step (one target) runs every feature of the spec, the pool
 * shared as the world arranges; a lost connection makes the step `infrastructure-error`, a step
 * stopped before its last feature `timeout`.
 */
export function sessionProbeRunner(world: SessionProbeWorld): ProbeRunner<'session-state'> {
  return {
    ...(world.unavailable ? { unavailable: (step: PlannedStep) => world.unavailable?.(step) ?? null } : {}),
    async run(run) {
      const outcomes: Array<ProbeStepOutcome<'session-state'>> = [];
      for (const step of run.steps) {
        const startedAt = run.clock.now().toISOString();
        const target = run.targets.get(step.target.name);
        if (!target)
          throw new InfrastructureError(`session probe: no target ${step.target.name} in this run`);
        let restore: (() => Promise<void>) | undefined;
        try {
          const shared = await world.share(step);
          restore = shared.restore;
          const pinMetric = world.pinMetric?.(step) ?? null;
          const result = await runSessionState(
            { target: target.connection(), admin: world.admin },
            {
              features: run.spec.features,
              descriptor: step.descriptor,
              sharing: shared.sharing,
              lockKey: lockKeyOf(run.runId),
              clock: run.clock,
              signal: run.signal,
              metricPeriodSec: world.pinPeriodSec ?? run.spec.pinPeriodSec,
              ...(run.spec.clientTimeouts ? { clientTimeouts: run.spec.clientTimeouts } : {}),
              ...(pinMetric ? { pinMetric } : {}),
              ...(shared.beforeEach ? { beforeEach: shared.beforeEach } : {}),
            },
          );
          const complete = result.features.length === run.spec.features.length;
          outcomes.push({
            stepId: step.stepId,
            status: complete ? 'completed' : 'timeout',
            result,
            startedAt,
            endedAt: run.clock.now().toISOString(),
            transcript: sessionTranscript(result),
            ...(complete
              ? {}
              : { note: `stopped after ${result.features.length} of ${run.spec.features.length} features` }),
          });
        } catch (e) {
          if (!(e instanceof InfrastructureError)) throw e;
          outcomes.push({
            stepId: step.stepId,
            status: 'infrastructure-error',
            result: null,
            startedAt,
            endedAt: run.clock.now().toISOString(),
            transcript: '',
            note: e.message,
          });
        } finally {
          await restore?.();
        }
      }
      return outcomes;
    },
  };
}
