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
 * queries: Parse (named) + Bind + Execute on a client's first use, Bind + Execute after that.
 */
import { Client, type ClientConfig, type Notification } from 'pg';
import { InfrastructureError } from '../core/errors';
import type { Clock, ProbeRunner, ProbeStepOutcome } from '../engine/ports';
import type { PlannedStep } from '../suite/expand';
import {
  classifySession,
  describeSessionResult,
  expectSession,
  judgeSession,
  isInfrastructureSqlstate,
  probeOrder,
  sessionFeature,
  type PinWatch,
  type ProbeClient,
  type ProbeStepSpec,
  type SessionFeature,
  type SessionFeatureResult,
  type SessionStateResult,
  type SessionProbeStep,
} from '../suite/session-state';
import { sessionHandling, type TargetDescriptor } from '../suite/targets';
import type { ConnectionInfo } from '../suite/types';
import { connectWithSslmode } from './pg-sslmode';

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
  /** No answer within this is recorded as a failed statement. @default 30000 */
  readonly statementTimeoutMs?: number;
  /** The metric's period; the hold covers one whole period. @default 60 */
  readonly metricPeriodSec?: number;
}

/** One client of the probe, with the notifications it received. */
interface ProbeConn {
  readonly name: string;
  readonly client: Client;
  readonly notifications: Notification[];
}

const CONNECT_TIMEOUT_MS = 10_000;
/** A literal longer than this is shortened in the record (the long-statement feature). */
const MAX_RECORDED_SQL = 400;

/**
 * node-postgres configuration for a ConnectionInfo (password from its env) and one attempt's `ssl`
 * (./pg-sslmode.ts: TLS without verification as libpq's `require`; `prefer` tries TLS, then plain).
 */
export function pgConfig(
  conn: ConnectionInfo,
  queryTimeoutMs: number,
  ssl: ClientConfig['ssl'],
): ClientConfig {
  return {
    host: conn.host,
    port: conn.port,
    user: conn.user,
    database: conn.dbname,
    ...(conn.env?.PGPASSWORD !== undefined ? { password: conn.env.PGPASSWORD } : {}),
    ssl,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: queryTimeoutMs,
    application_name: 'proxylab-session-probe',
  };
}

/** What node-postgres threw: a server error with its SQLSTATE, or a connection problem. */
function errorOf(e: unknown): { sqlstate: string | null; message: string; connection: boolean } {
  const err = e as { code?: unknown; message?: unknown; severity?: unknown };
  const message = typeof err.message === 'string' ? err.message : String(e);
  const code = typeof err.code === 'string' ? err.code : null;
  const sqlstate = code !== null && /^[0-9A-Z]{5}$/.test(code) && err.severity !== undefined ? code : null;
  const connection =
    isInfrastructureSqlstate(sqlstate) ||
    (sqlstate === null &&
      (/^E[A-Z]+$/.test(code ?? '') ||
        /Connection terminated|connection is not open|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
          message,
        )));
  return { sqlstate, message, connection };
}

function shortSql(sql: string): string {
  const oneLine = sql.replace(/\s+/g, ' ').trim();
  return oneLine.length <= MAX_RECORDED_SQL
    ? oneLine
    : `${oneLine.slice(0, 120)}… (${oneLine.length} characters)`;
}

function withParams(sql: string, lockKey: number): string {
  return sql.replace(/:lock_key\b/g, String(lockKey));
}

async function connect(name: string, conn: ConnectionInfo, timeoutMs: number): Promise<ProbeConn> {
  const notifications: Notification[] = [];
  let client: Client;
  try {
    client = await connectWithSslmode(conn.sslmode ?? 'disable', async (ssl) => {
      const c = new Client(pgConfig(conn, timeoutMs, ssl));
      c.on('notification', (n) => notifications.push(n));
      // An error on an idle client (the server went away) must not crash the process; the next query fails.
      c.on('error', () => undefined);
      await c.connect();
      return c;
    });
  } catch (e) {
    const { message } = errorOf(e);
    throw new InfrastructureError(
      `session probe: client ${name} could not connect to ${conn.host}:${conn.port}/${conn.dbname}: ${message}`,
      { cause: e },
    );
  }
  return { name, client, notifications };
}

async function close(c: ProbeConn | null): Promise<void> {
  if (c === null) return;
  try {
    await c.client.end();
  } catch {
    /* already gone */
  }
}

interface Row {
  readonly value: string | null;
  readonly present: boolean | null;
  readonly pid: number | null;
}

function rowOf(rows: ReadonlyArray<Record<string, unknown>>): Row {
  const r = rows[0] ?? {};
  const pid = r.pid;
  return {
    value: typeof r.value === 'string' ? r.value : r.value == null ? null : JSON.stringify(r.value),
    present: typeof r.present === 'boolean' ? r.present : null,
    pid: typeof pid === 'number' ? pid : typeof pid === 'string' && /^\d+$/.test(pid) ? Number(pid) : null,
  };
}

/** Runs a probe program; see the module comment. */
export async function runSessionProbe(
  conns: SessionProbeConnections,
  opts: SessionProbeOptions,
): Promise<SessionFeatureResult> {
  const feature = sessionFeature(opts.feature);
  const order = probeOrder(opts.descriptor);
  const hold = sessionHandling(opts.descriptor).pinsSessions ? (opts.pinMetric ?? null) : null;
  const timeoutMs = opts.statementTimeoutMs ?? 30_000;
  const steps: SessionProbeStep[] = [];
  const clock = opts.clock;
  const started = clock.now();

  const record = (s: Omit<SessionProbeStep, 'ms'>, t0: number): void => {
    steps.push({ ...s, ms: Math.max(0, clock.now().getTime() - t0) });
  };
  /** Runs `work`, recording a failed statement; a lost connection ends the probe as infrastructure. */
  const attempt = async (
    head: Pick<SessionProbeStep, 'client' | 'kind' | 'role' | 'sql'>,
    work: () => Promise<Row | null>,
  ): Promise<void> => {
    const t0 = clock.now().getTime();
    try {
      const row = await work();
      record(
        {
          ...head,
          backendPid: row?.pid ?? null,
          value: row?.value ?? null,
          present: head.role !== null ? (row?.present ?? null) : null,
          sqlstate: null,
          error: null,
        },
        t0,
      );
    } catch (e) {
      const err = errorOf(e);
      if (err.connection)
        throw new InfrastructureError(
          `session probe ${opts.feature}: ${head.client} lost its connection during ${head.kind}: ${err.message}`,
          { cause: e },
        );
      record(
        { ...head, backendPid: null, value: null, present: null, sqlstate: err.sqlstate, error: err.message },
        t0,
      );
    }
  };

  // Setup (roles) on the database itself, before any client connects.
  if (feature.setup && feature.setup.length > 0) {
    const admin = await connect('setup', conns.admin, timeoutMs);
    try {
      for (const sql of feature.setup) {
        const text = sql.replace(/:probe_user_literal\b/g, admin.client.escapeLiteral(conns.target.user));
        await attempt({ client: 'setup', kind: 'setup', role: null, sql: shortSql(text) }, async () => {
          await admin.client.query(text);
          return null;
        });
      }
    } finally {
      await close(admin);
    }
  }

  const clients: Record<ProbeClient, ProbeConn | null> = { A: null, B: null };
  const use = async (who: ProbeClient): Promise<ProbeConn> => {
    const existing = clients[who];
    if (existing) return existing;
    const c = await connect(who, conns.target, timeoutMs);
    clients[who] = c;
    return c;
  };

  const runStep = async (step: ProbeStepSpec): Promise<void> => {
    switch (step.kind) {
      case 'apply': {
        const c = await use(step.client);
        const sql = withParams(step.sql, opts.lockKey);
        await attempt({ client: step.client, kind: step.kind, role: null, sql: shortSql(sql) }, async () => {
          await c.client.query(sql);
          return null;
        });
        return;
      }
      case 'apply-prepared':
      case 'check-prepared': {
        const c = await use(step.client);
        await attempt(
          {
            client: step.client,
            kind: step.kind,
            role: step.kind === 'check-prepared' ? step.role : null,
            sql: `${step.kind === 'apply-prepared' ? 'Parse' : 'Bind/Execute'} "${step.name}": ${step.text}`,
          },
          async () => rowOf((await c.client.query({ name: step.name, text: step.text })).rows),
        );
        return;
      }
      case 'check': {
        const c = await use(step.client);
        const sql = withParams(step.sql, opts.lockKey);
        await attempt(
          { client: step.client, kind: step.kind, role: step.role, sql: shortSql(sql) },
          async () => rowOf((await c.client.query(sql)).rows),
        );
        return;
      }
      case 'transaction': {
        const c = await use(step.client);
        const sql = step.sql.map((s) => withParams(s, opts.lockKey));
        const check = withParams(step.check, opts.lockKey);
        await attempt(
          {
            client: step.client,
            kind: step.kind,
            role: step.role,
            sql: shortSql(['BEGIN', ...sql, check, 'COMMIT'].join('; ')),
          },
          async () => {
            await c.client.query('BEGIN');
            try {
              for (const s of sql) await c.client.query(s);
              const row = rowOf((await c.client.query(check)).rows);
              await c.client.query('COMMIT');
              return row;
            } catch (e) {
              await c.client.query('ROLLBACK').catch(() => undefined);
              throw e;
            }
          },
        );
        return;
      }
      case 'notify': {
        const notifier = await connect('notifier', conns.admin, timeoutMs);
        try {
          await attempt(
            {
              client: 'notifier',
              kind: step.kind,
              role: null,
              sql: `NOTIFY ${step.channel}, '${step.payload}'`,
            },
            async () => {
              await notifier.client.query('SELECT pg_notify($1, $2)', [step.channel, step.payload]);
              return null;
            },
          );
        } finally {
          await close(notifier);
        }
        await clock.sleep(opts.deliveryPauseMs ?? 300);
        return;
      }
      case 'check-notification': {
        const c = await use(step.client);
        await attempt(
          {
            client: step.client,
            kind: step.kind,
            role: step.role,
            sql: `SELECT pg_backend_pid() AS pid; wait for a notification on ${step.channel}`,
          },
          async () => {
            const row = rowOf((await c.client.query('SELECT pg_backend_pid() AS pid')).rows);
            const got = (): Notification | undefined =>
              c.notifications.find((n) => n.channel === step.channel);
            const deadline = clock.now().getTime() + (opts.notificationWaitMs ?? 1000);
            while (got() === undefined && clock.now().getTime() < deadline) await clock.sleep(25);
            const n = got();
            return {
              value: n ? `${n.channel}: ${n.payload ?? ''}` : null,
              present: n !== undefined,
              pid: row.pid,
            };
          },
        );
        return;
      }
    }
  };

  let firstAt: Date | undefined;
  let endAt: Date;
  try {
    const program = feature.steps;
    const isB = (s: ProbeStepSpec): boolean => 'client' in s && s.client === 'B';
    if (order === 'interleaved') {
      await use('A');
      if (program.some(isB)) await use('B');
      firstAt = clock.now();
      for (const step of program) await runStep(step);
      await holdForMetric(opts, hold !== null, firstAt);
    } else {
      firstAt = clock.now();
      for (const step of program.filter((s) => !isB(s))) await runStep(step);
      await holdForMetric(opts, hold !== null, firstAt);
      await close(clients.A);
      clients.A = null;
      for (const step of program.filter(isB)) await runStep(step);
    }
  } finally {
    await close(clients.A);
    await close(clients.B);
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
    ...classifySession(steps),
    steps,
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
  return { kind: 'session-state', order: probeOrder(opts.descriptor), sharing: opts.sharing, features };
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
  const lines = [`order: ${r.order}; sharing: ${r.sharing}`];
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
