/**
 * The probe's PostgreSQL client on node-postgres (`pg`): one connection to an endpoint that may list
 * several hosts, the ledger write, SELECT 1, and every failure turned into a `ProbeFailure` (SQLSTATE
 * and severity from the server's error response, the socket's code, or `timeout`).
 *
 * Several hosts and `targetSessionAttrs: 'read-write'` follow libpq's documented semantics
 * (PostgreSQL docs, libpq "Connection Strings": with several hosts "each host is tried in turn until
 * a connection is successfully established"; target_session_attrs=read-write "the session must
 * accept read-write transactions by default (that is, the server must not be in hot standby mode
 * and the default_transaction_read_only parameter must be off)"): node-postgres connects to one host
 * only, so the hosts are tried here in order, and a session that reports `transaction_read_only =
 * on` is closed and the next host tried — what libpq does after connecting. `sslmode=prefer` is
 * libpq's too (TLS, then plain when the server has none: ./pg-sslmode.ts), so a pooler without TLS
 * is reached.
 */
import { Client, type ClientConfig, DatabaseError } from 'pg';
import type { ProbeFailure } from '../suite/disruption-figures';
import { connectWithSslmode } from './pg-sslmode';

export interface ProbeHost {
  readonly host: string;
  readonly port: number;
}

/** Where a probe client connects (no secrets in what is logged: `label`). */
export interface ProbeEndpoint {
  /** Tried in order (libpq multi-host). */
  readonly hosts: readonly ProbeHost[];
  readonly user: string;
  readonly dbname: string;
  readonly password?: string;
  readonly sslmode: 'disable' | 'prefer' | 'require';
  /** `read-write`: skip a host whose session is read-only (a standby). */
  readonly targetSessionAttrs: 'any' | 'read-write';
  /** `direct 127.0.0.1:5432,127.0.0.1:5433 (read-write)`: for transcripts. */
  readonly label: string;
}

/** What a write returned. */
export interface WriteAnswer {
  /** inet_server_addr() as text; null over a unix socket. */
  readonly server: string | null;
  readonly inRecovery: boolean | null;
}

/** One open probe connection. */
export interface ProbeConnection {
  /** INSERT one ledger row; rejects with a ProbeError. */
  write(row: LedgerRow, timeoutMs: number): Promise<WriteAnswer>;
  /** SELECT 1 (the floor). */
  select1(timeoutMs: number): Promise<void>;
  /** Read the ledger's ids of one group with how often each is there. */
  ledger(runId: string, group: string, timeoutMs: number): Promise<Map<string, number>>;
  /** Create the ledger table if it is not there. */
  ensureLedger(timeoutMs: number): Promise<void>;
  /** Close (politely; a broken connection is destroyed). Never rejects. */
  close(): Promise<void>;
}

export interface LedgerRow {
  readonly runId: string;
  readonly group: string;
  readonly id: string;
}

/** Opens one connection; rejects with a ProbeError of phase `connect`. */
export type ProbeConnector = (endpoint: ProbeEndpoint, timeoutMs: number) => Promise<ProbeConnection>;

/** A failed probe operation, with what the client library said in the probe's terms. */
export class ProbeError extends Error {
  constructor(readonly failure: ProbeFailure) {
    super(failure.message);
  }
}

/** The ledger every disruption write goes to (created by the probe, in the bench database). */
export const LEDGER_TABLE = 'proxylab_probe_ledger';

const LEDGER_DDL = `CREATE TABLE IF NOT EXISTS ${LEDGER_TABLE} (run_id text NOT NULL, grp text NOT NULL, id text NOT NULL, written_at timestamptz NOT NULL DEFAULT clock_timestamp()); CREATE INDEX IF NOT EXISTS ${LEDGER_TABLE}_grp ON ${LEDGER_TABLE} (run_id, grp)`;
// No unique key on purpose: a write applied twice must show up as a duplicate, not be refused.
const LEDGER_INSERT = `INSERT INTO ${LEDGER_TABLE} (run_id, grp, id) VALUES ($1, $2, $3) RETURNING host(inet_server_addr()) AS server, pg_is_in_recovery() AS in_recovery`;

/** The failure a pg error (or a timeout) stands for. */
export function probeFailureOf(err: unknown, phase: ProbeFailure['phase']): ProbeFailure {
  if (err instanceof ProbeError) return { ...err.failure, phase };
  if (err instanceof DatabaseError)
    return {
      sqlstate: err.code ?? null,
      code: null,
      message: err.message,
      severity: err.severity ?? null,
      phase,
    };
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return { sqlstate: null, code, message, severity: null, phase };
}

function timeoutFailure(what: string, ms: number, phase: ProbeFailure['phase']): ProbeError {
  return new ProbeError({
    sqlstate: null,
    code: 'timeout',
    message: `${what}: no answer within ${ms} ms`,
    severity: null,
    phase,
  });
}

/** Runs `op` on `client` under a timer that destroys the connection when it fires. */
async function timed<T>(
  client: Client,
  ms: number,
  what: string,
  phase: ProbeFailure['phase'],
  op: () => Promise<T>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      destroy(client);
      reject(timeoutFailure(what, ms, phase));
    }, ms);
  });
  try {
    return await Promise.race([op(), timeout]);
  } catch (err) {
    throw new ProbeError(probeFailureOf(err, phase));
  } finally {
    if (timer) clearTimeout(timer);
  }
}

function destroy(client: Client): void {
  // The socket, at once: end() waits for the server, which may never answer.
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/**
 * The client configuration of one attempt; `ssl` from the endpoint's sslmode (./pg-sslmode.ts:
 * RDS Proxy and RDS require TLS, and the lab does not pin the CA, as pgbench's sslmode=require;
 * `prefer` tries TLS, then plain when the server has none, as libpq does).
 */
function configFor(ep: ProbeEndpoint, h: ProbeHost, ssl: ClientConfig['ssl']): ClientConfig {
  return {
    host: h.host,
    port: h.port,
    user: ep.user,
    database: ep.dbname,
    ...(ep.password !== undefined ? { password: ep.password } : {}),
    ssl,
    application_name: 'proxylab-probe',
  };
}

/**
 * Why an idle connection broke (the server's FATAL, a reset), kept from its 'error' event: node-
 * postgres then refuses every query with "Client has encountered a connection error and is not
 * queryable", so the next operation reports this cause instead, as not sent.
 */
const brokenBy = new WeakMap<Client, unknown>();

/** One client to `h`, connected with `ssl` within the deadline; rejects with a ProbeError. */
async function openClient(
  ep: ProbeEndpoint,
  h: ProbeHost,
  ssl: ClientConfig['ssl'],
  deadline: number,
): Promise<Client> {
  const client = new Client(configFor(ep, h, ssl));
  // A lost connection emits 'error' on an idle client: kept, reported by the next operation.
  client.on('error', (err) => {
    if (!brokenBy.has(client)) brokenBy.set(client, err);
  });
  client.on('end', () => {
    if (!brokenBy.has(client))
      brokenBy.set(
        client,
        Object.assign(new Error('the server closed the connection'), { code: 'ECONNRESET' }),
      );
  });
  const left = Math.max(1, deadline - Date.now());
  await timed(client, left, `connect to ${h.host}:${h.port}`, 'connect', () => client.connect());
  return client;
}

async function connectOne(ep: ProbeEndpoint, h: ProbeHost, deadline: number): Promise<Client> {
  const client = await connectWithSslmode(ep.sslmode, (ssl) => openClient(ep, h, ssl, deadline));
  if (ep.targetSessionAttrs === 'read-write') {
    const res = await timed(
      client,
      Math.max(1, deadline - Date.now()),
      'SHOW transaction_read_only',
      'connect',
      () => client.query<{ transaction_read_only: string }>('SHOW transaction_read_only'),
    );
    if (res.rows[0]?.transaction_read_only !== 'off') {
      destroy(client);
      throw new ProbeError({
        sqlstate: '25006',
        code: null,
        message: `${h.host}:${h.port} accepts only read-only transactions (target_session_attrs=read-write)`,
        severity: null,
        phase: 'connect',
      });
    }
  }
  return client;
}

/** The node-postgres connector: hosts in order, the first that connects (and accepts writes, when asked). */
export const pgConnector: ProbeConnector = async (ep, timeoutMs) => {
  const deadline = Date.now() + timeoutMs;
  let last: ProbeError | null = null;
  for (const h of ep.hosts) {
    try {
      return wrap(await connectOne(ep, h, deadline));
    } catch (err) {
      last = err instanceof ProbeError ? err : new ProbeError(probeFailureOf(err, 'connect'));
      if (Date.now() >= deadline) break;
    }
  }
  throw (
    last ??
    new ProbeError({
      sqlstate: null,
      code: null,
      message: `${ep.label}: no host to connect to`,
      severity: null,
      phase: 'connect',
    })
  );
};

/** An operation on a connection that broke while idle: it fails as never sent, with the cause. */
function notSentIfBroken(client: Client): void {
  const cause = brokenBy.get(client);
  if (cause !== undefined) throw new ProbeError({ ...probeFailureOf(cause, 'connect'), phase: 'connect' });
}

function wrap(client: Client): ProbeConnection {
  return {
    async write(row, timeoutMs) {
      notSentIfBroken(client);
      const res = await timed(client, timeoutMs, 'ledger write', 'write', () =>
        client.query<{ server: string | null; in_recovery: boolean | null }>(LEDGER_INSERT, [
          row.runId,
          row.group,
          row.id,
        ]),
      );
      const r = res.rows[0];
      return { server: r?.server ?? null, inRecovery: r?.in_recovery ?? null };
    },
    async select1(timeoutMs) {
      notSentIfBroken(client);
      await timed(client, timeoutMs, 'SELECT 1', 'write', () => client.query('SELECT 1'));
    },
    async ensureLedger(timeoutMs) {
      await timed(client, timeoutMs, 'create the ledger', 'write', () => client.query(LEDGER_DDL));
    },
    async ledger(runId, group, timeoutMs) {
      const res = await timed(client, timeoutMs, 'read the ledger', 'write', () =>
        client.query<{ id: string; n: string }>(
          `SELECT id, count(*) AS n FROM ${LEDGER_TABLE} WHERE run_id = $1 AND grp = $2 GROUP BY id`,
          [runId, group],
        ),
      );
      return new Map(res.rows.map((r) => [r.id, Number(r.n)]));
    },
    async close() {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          client.end(),
          new Promise<void>((resolve) => {
            timer = setTimeout(() => {
              destroy(client);
              resolve();
            }, 1000);
          }),
        ]);
      } catch {
        destroy(client);
      } finally {
        if (timer) clearTimeout(timer);
      }
    },
  };
}
