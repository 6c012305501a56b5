/**
 * The ServerConnectionsProbe both worlds use (lib/engine/ports.ts): ONE PostgreSQL session, opened
 * with node-postgres when the first step is watched and kept for the run, counts the client backends
 * in pg_stat_activity (its own excluded) before each step, every `sampleMs` while pgbench runs, and
 * after it. One long-lived session rather than a connection per sample: a sample must not itself take
 * a slot at the moment a step probes max_connections. It does hold one slot for the whole run, the
 * same in every step: locally it is the superuser's (superuser_reserved_connections, never a slot the
 * bench role can use); in the cloud it is the master user's, inside the reserved margin the catalog
 * already leaves near max_connections (MaxConnectionsBand `near`: max(3, 5 %)).
 *
 * Never throws into the engine: a count that fails is null (unknown), the session is dropped and
 * opened again for the next count, and the first failure is logged once.
 *
 * While a step runs, each sample is the database sampler's statement (./db-activity-sql.ts, issue 40):
 * the same count plus pg_stat_activity's states and wait events, pg_locks, and the blocking session,
 * kept per step as its `databaseActivity`. A sample that fails is stored as unknown for that second;
 * a sample still running when the next is due makes that one skip (never two at once, never blocking
 * the step).
 */
import { Client } from 'pg';
import type {
  ServerConnectionsProbe,
  ServerConnectionsWatch,
  ServerConnectionsWatchOptions,
} from '../engine/ports';
import { sampleFromRow, unknownSample, type DbActivitySample } from '../suite/db-activity';
import type { ConnectionInfo, ServerConnections } from '../suite/types';
import { DB_ACTIVITY_SQL } from './db-activity-sql';
import { connectWithSslmode } from './pg-sslmode';

/**
 * Client backends (backend_type since PostgreSQL 10: not autovacuum, walwriter, …) other than this
 * session. Other users' rows are listed to every role; only their query text and state are hidden.
 */
export const SERVER_CONNECTIONS_SQL =
  "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()";

/** Counts once; null when it could not. */
export type ConnectionCounter = () => Promise<number | null>;

/** Samples the database once (never throws: a failed sample is `unknownSample`). */
export type ActivitySampler = () => Promise<DbActivitySample>;

export interface PgServerConnectionsOptions {
  /** Where to count (the database itself, never a pooler). */
  readonly connection: ConnectionInfo;
  /** How often to sample while a step runs. @default 1000 ms */
  readonly sampleMs?: number;
  /** Told once, the first time a count fails. */
  readonly log?: (line: string) => void;
}

/**
 * Watches around each step with `count`: before, the peak of the samples taken meanwhile, after.
 * With `sample`, each sample taken meanwhile is the database's activity (its `clients` feed the peak).
 */
export class SampledServerConnections implements ServerConnectionsProbe {
  constructor(
    private readonly count: ConnectionCounter,
    private readonly sampleMs = 1000,
    private readonly sample?: ActivitySampler,
  ) {}

  async watch(opts: ServerConnectionsWatchOptions = {}): Promise<ServerConnectionsWatch> {
    const before = await this.count();
    let peak = before;
    const seen = (n: number | null): void => {
      if (n !== null) peak = peak === null ? n : Math.max(peak, n);
    };
    const samples: DbActivitySample[] = [];
    const { sample } = this;
    const once = sample
      ? async (): Promise<void> => {
          const s = await sample();
          samples.push(s);
          seen(s.clients);
          opts.onSample?.(samples);
        }
      : async (): Promise<void> => seen(await this.count());
    let inFlight: Promise<void> | null = null;
    const timer = setInterval(() => {
      if (inFlight) return;
      inFlight = once()
        .catch(() => undefined)
        .finally(() => {
          inFlight = null;
        });
    }, this.sampleMs);
    timer.unref();
    let stopped: Promise<ServerConnections> | null = null;
    return {
      stop: () => {
        stopped ??= (async () => {
          clearInterval(timer);
          if (inFlight) await inFlight;
          const after = await this.count();
          seen(after);
          return { before, peak, after };
        })();
        return stopped;
      },
      ...(sample ? { activity: () => ({ intervalMs: this.sampleMs, samples: [...samples] }) } : {}),
    };
  }
}

/** The cloud's and the local stack's probe: SampledServerConnections over one node-postgres session. */
export class PgServerConnections extends SampledServerConnections {
  private readonly session: PgSession;

  constructor(opts: PgServerConnectionsOptions) {
    const session = new PgSession(opts.connection, opts.log);
    super(
      () => session.count(),
      opts.sampleMs,
      () => session.sample(),
    );
    this.session = session;
  }

  /** Ends the session (after the run). */
  close(): Promise<void> {
    return this.session.close();
  }
}

class PgSession {
  private client: Client | null = null;
  private warned = false;

  constructor(
    private readonly conn: ConnectionInfo,
    private readonly log?: (line: string) => void,
  ) {}

  async count(): Promise<number | null> {
    try {
      const client = await this.open();
      const res = await client.query<{ n: number }>(SERVER_CONNECTIONS_SQL);
      const n = res.rows[0]?.n;
      return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : null;
    } catch (err) {
      await this.drop();
      this.warn('count', err);
      return null;
    }
  }

  /** The database's activity now; a failure is an unknown sample (and the session is reopened next time). */
  async sample(): Promise<DbActivitySample> {
    const at = new Date().toISOString();
    try {
      const client = await this.open();
      const res = await client.query<{ sample: unknown }>(DB_ACTIVITY_SQL);
      return sampleFromRow(at, res.rows[0]?.sample);
    } catch (err) {
      await this.drop();
      this.warn('sample the database', err);
      return unknownSample(at);
    }
  }

  private warn(what: string, err: unknown): void {
    if (this.warned) return;
    this.warned = true;
    this.log?.(
      `server connections: could not ${what} on ${this.conn.host}:${this.conn.port} (${err instanceof Error ? err.message : String(err)}); recorded as unknown`,
    );
  }

  private async open(): Promise<Client> {
    if (this.client) return this.client;
    const c = this.conn;
    // libpq's sslmode (./pg-sslmode.ts): `require` encrypts without verifying the certificate,
    // `prefer` tries TLS and goes plain only when the server has none.
    const client = await connectWithSslmode(c.sslmode ?? 'disable', async (ssl) => {
      const attempt = new Client({
        host: c.host,
        port: c.port,
        user: c.user,
        database: c.dbname,
        ...(c.env?.PGPASSWORD !== undefined ? { password: c.env.PGPASSWORD } : {}),
        ssl,
        application_name: 'proxylab-connection-probe',
        connectionTimeoutMillis: 10_000,
        query_timeout: 10_000,
      });
      // A session the server ends (a restart) must not crash the process: the next count reopens it.
      attempt.on('error', () => {
        if (this.client === attempt) this.client = null;
      });
      await attempt.connect();
      return attempt;
    });
    this.client = client;
    return client;
  }

  private async drop(): Promise<void> {
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
  }

  close(): Promise<void> {
    return this.drop();
  }
}
