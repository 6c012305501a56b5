/**
 * One session-state program as it runs (./session-probe.ts decides the order and what to record
 * around it): the node-postgres clients A, B, `setup` and `notifier` with the scenario's client
 * timeouts, and each kind of program step (lib/suite/session-state.ts `ProbeStepSpec`) run and
 * recorded. A statement that fails with an SQLSTATE is recorded; a lost connection is an
 * InfrastructureError (the step is not a measurement).
 */
import { Client, type ClientConfig, type Notification } from 'pg';
import { InfrastructureError } from '../core/errors';
import type { Clock } from '../engine/ports';
import type { ClientTimeouts } from '../suite/client-timeouts';
import {
  isInfrastructureSqlstate,
  type ProbeClient,
  type ProbeStepSpec,
  type SessionFeature,
  type SessionProbeStep,
} from '../suite/session-state';
import type { ConnectionInfo } from '../suite/types';
import { connectWithSslmode } from './pg-sslmode';

/** One client of the probe, with the notifications it received. */
interface ProbeConn {
  readonly name: string;
  readonly client: Client;
  readonly notifications: Notification[];
}

/** A literal longer than this is shortened in the record (the long-statement feature). */
const MAX_RECORDED_SQL = 400;

/**
 * node-postgres configuration for a ConnectionInfo (password from its env), the client's timeouts
 * and one attempt's `ssl` (./pg-sslmode.ts: TLS without verification as libpq's `require`; `prefer`
 * tries TLS, then plain).
 */
export function pgConfig(
  conn: ConnectionInfo,
  timeouts: ClientTimeouts,
  ssl: ClientConfig['ssl'],
): ClientConfig {
  return {
    host: conn.host,
    port: conn.port,
    user: conn.user,
    database: conn.dbname,
    ...(conn.env?.PGPASSWORD !== undefined ? { password: conn.env.PGPASSWORD } : {}),
    ssl,
    connectionTimeoutMillis: timeouts.connectTimeoutMs,
    query_timeout: timeouts.statementTimeoutMs,
    application_name: 'proxylab-session-probe',
  };
}

/** What node-postgres threw: a server error with its SQLSTATE, or a connection problem. */
function errorOf(e: unknown): { sqlstate: string | null; message: string; connection: boolean } {
  const err = e as { code?: unknown; message?: unknown; severity?: unknown };
  const raw = typeof err.message === 'string' ? err.message : String(e);
  const code = typeof err.code === 'string' ? err.code : null;
  const sqlstate = code !== null && /^[0-9A-Z]{5}$/.test(code) && err.severity !== undefined ? code : null;
  const connection =
    isInfrastructureSqlstate(sqlstate) ||
    (sqlstate === null &&
      (/^E[A-Z]+$/.test(code ?? '') ||
        /Connection terminated|connection is not open|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
          raw,
        )));
  // node-postgres' query_timeout: the client gave up on the statement, the server said nothing
  const message = sqlstate === null && /Query read timeout/i.test(raw) ? `client-timeout: ${raw}` : raw;
  return { sqlstate, message, connection };
}

function shortSql(sql: string): string {
  const oneLine = sql.replace(/\s+/g, ' ').trim();
  return oneLine.length <= MAX_RECORDED_SQL
    ? oneLine
    : `${oneLine.slice(0, 120)}… (${oneLine.length} characters)`;
}

async function connect(name: string, conn: ConnectionInfo, timeouts: ClientTimeouts): Promise<ProbeConn> {
  const notifications: Notification[] = [];
  let client: Client;
  try {
    client = await connectWithSslmode(conn.sslmode ?? 'disable', async (ssl) => {
      const c = new Client(pgConfig(conn, timeouts, ssl));
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

type StepHead = Pick<SessionProbeStep, 'client' | 'kind' | 'role' | 'sql'>;

export interface SessionProgramOptions {
  readonly feature: SessionFeature;
  /** key1 of the advisory locks (`:lock_key`). */
  readonly lockKey: number;
  readonly clock: Clock;
  readonly timeouts: ClientTimeouts;
  /** After a NOTIFY, how long the server gets to deliver it (ms). */
  readonly deliveryPauseMs: number;
  /** How long a check waits for a notification (ms). */
  readonly notificationWaitMs: number;
}

/** The clients of one feature's program and what each of its steps saw (`steps`, in order). */
export class SessionProgram {
  readonly steps: SessionProbeStep[] = [];
  private readonly clients: Record<ProbeClient, ProbeConn | null> = { A: null, B: null };

  constructor(
    private readonly conns: { readonly target: ConnectionInfo; readonly admin: ConnectionInfo },
    private readonly opts: SessionProgramOptions,
  ) {}

  /** The setup statements (roles) on the database itself, before any client connects. */
  async setup(statements: readonly string[]): Promise<void> {
    if (statements.length === 0) return;
    const admin = await connect('setup', this.conns.admin, this.opts.timeouts);
    try {
      for (const sql of statements) {
        const text = sql.replace(
          /:probe_user_literal\b/g,
          admin.client.escapeLiteral(this.conns.target.user),
        );
        await this.attempt({ client: 'setup', kind: 'setup', role: null, sql: shortSql(text) }, async () => {
          await admin.client.query(text);
          return null;
        });
      }
    } finally {
      await close(admin);
    }
  }

  /** A's or B's connection, opened on first use. */
  async use(who: ProbeClient): Promise<void> {
    await this.conn(who);
  }

  /** Disconnects a client (the next use connects again). */
  async disconnect(who: ProbeClient): Promise<void> {
    await close(this.clients[who]);
    this.clients[who] = null;
  }

  async closeAll(): Promise<void> {
    await this.disconnect('A');
    await this.disconnect('B');
  }

  /** One step of the program, recorded. */
  async run(step: ProbeStepSpec): Promise<void> {
    switch (step.kind) {
      case 'apply':
      case 'check':
        return this.statement(step.client, step.kind, step.kind === 'check' ? step.role : null, step.sql);
      case 'apply-prepared':
      case 'check-prepared': {
        const c = await this.conn(step.client);
        const head: StepHead = {
          client: step.client,
          kind: step.kind,
          role: step.kind === 'check-prepared' ? step.role : null,
          sql: `${step.kind === 'apply-prepared' ? 'Parse' : 'Bind/Execute'} "${step.name}": ${step.text}`,
        };
        return this.attempt(head, async () =>
          rowOf((await c.client.query({ name: step.name, text: step.text })).rows),
        );
      }
      case 'transaction':
        return this.transaction(step);
      case 'notify':
        return this.notify(step.channel, step.payload);
      case 'check-notification':
        return this.checkNotification(step);
    }
  }

  private async conn(who: ProbeClient): Promise<ProbeConn> {
    const existing = this.clients[who];
    if (existing) return existing;
    const c = await connect(who, this.conns.target, this.opts.timeouts);
    this.clients[who] = c;
    return c;
  }

  private withParams(sql: string): string {
    return sql.replace(/:lock_key\b/g, String(this.opts.lockKey));
  }

  private record(s: Omit<SessionProbeStep, 'ms'>, t0: number): void {
    this.steps.push({ ...s, ms: Math.max(0, this.opts.clock.now().getTime() - t0) });
  }

  /** Runs `work`, recording a failed statement; a lost connection ends the probe as infrastructure. */
  private async attempt(head: StepHead, work: () => Promise<Row | null>): Promise<void> {
    const t0 = this.opts.clock.now().getTime();
    try {
      const row = await work();
      this.record(
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
          `session probe ${this.opts.feature}: ${head.client} lost its connection during ${head.kind}: ${err.message}`,
          { cause: e },
        );
      this.record(
        { ...head, backendPid: null, value: null, present: null, sqlstate: err.sqlstate, error: err.message },
        t0,
      );
    }
  }

  private async statement(
    client: ProbeClient,
    kind: 'apply' | 'check',
    role: SessionProbeStep['role'],
    text: string,
  ): Promise<void> {
    const c = await this.conn(client);
    const sql = this.withParams(text);
    await this.attempt({ client, kind, role, sql: shortSql(sql) }, async () => {
      const res = await c.client.query(sql);
      return kind === 'check' ? rowOf(res.rows) : null;
    });
  }

  private async transaction(step: Extract<ProbeStepSpec, { kind: 'transaction' }>): Promise<void> {
    const c = await this.conn(step.client);
    const sql = step.sql.map((s) => this.withParams(s));
    const check = this.withParams(step.check);
    const head: StepHead = {
      client: step.client,
      kind: step.kind,
      role: step.role,
      sql: shortSql(['BEGIN', ...sql, check, 'COMMIT'].join('; ')),
    };
    await this.attempt(head, async () => {
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
    });
  }

  /** NOTIFY from a client of its own on the database, then a pause for the delivery. */
  private async notify(channel: string, payload: string): Promise<void> {
    const notifier = await connect('notifier', this.conns.admin, this.opts.timeouts);
    try {
      const head: StepHead = {
        client: 'notifier',
        kind: 'notify',
        role: null,
        sql: `NOTIFY ${channel}, '${payload}'`,
      };
      await this.attempt(head, async () => {
        await notifier.client.query('SELECT pg_notify($1, $2)', [channel, payload]);
        return null;
      });
    } finally {
      await close(notifier);
    }
    await this.opts.clock.sleep(this.opts.deliveryPauseMs);
  }

  private async checkNotification(
    step: Extract<ProbeStepSpec, { kind: 'check-notification' }>,
  ): Promise<void> {
    const c = await this.conn(step.client);
    const clock = this.opts.clock;
    const head: StepHead = {
      client: step.client,
      kind: step.kind,
      role: step.role,
      sql: `SELECT pg_backend_pid() AS pid; wait for a notification on ${step.channel}`,
    };
    await this.attempt(head, async () => {
      const row = rowOf((await c.client.query('SELECT pg_backend_pid() AS pid')).rows);
      const got = (): Notification | undefined => c.notifications.find((n) => n.channel === step.channel);
      const deadline = clock.now().getTime() + this.opts.notificationWaitMs;
      while (got() === undefined && clock.now().getTime() < deadline) await clock.sleep(25);
      const n = got();
      return { value: n ? `${n.channel}: ${n.payload ?? ''}` : null, present: n !== undefined, pid: row.pid };
    });
  }
}
