/**
 * Targets on AWS: the Aurora writer (`direct`) and each RDS Proxy (`rds-proxy`, named as in the
 * lab). Both use TLS (`sslmode=require`: RDS Proxy requires it, Aurora PostgreSQL 15+ forces it);
 * credentials come from the cluster secret and reach libpq only through PGPASSWORD.
 * `max_connections` is read at run time (`SHOW max_connections` on the writer), never assumed
 * from the instance class: the E1 write-up read 394 where AWS's table says 405.
 */
import { spawn } from 'node:child_process';
import { InfrastructureError, UsageError } from '../core/errors';
import type { Target } from '../engine/ports';
import type { ConnectionInfo } from '../suite/types';
import { describeTarget, type TargetDescriptor, type TargetProbe } from '../suite/targets';
import type { TargetKind, TargetRef } from '../suite/types';
import type { DbCredentials } from './secrets';
import type { PoolPercents } from './proxy-pool';

export type SslMode = NonNullable<ConnectionInfo['sslmode']>;

/** Runs one SQL statement and returns its single value as text. */
export type ScalarQuery = (conn: ConnectionInfo, sql: string) => Promise<string>;

/**
 * Runs psql with `args` and the connection in PG* environment variables (the password never in
 * argv): stdout on exit 0, else an InfrastructureError `<what> host:port: <last stderr line>`.
 * Killed after `timeoutMs`.
 */
export function runPsql(
  psqlPath: string,
  conn: ConnectionInfo,
  args: readonly string[],
  timeoutMs: number,
  what = 'psql',
): Promise<string> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...libpqEnv(conn) };
    const child = spawn(psqlPath, [...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new InfrastructureError(`could not run ${psqlPath}: ${err.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else
        reject(
          new InfrastructureError(
            `${what} ${conn.host}:${conn.port}${what === 'psql' ? `/${conn.dbname}` : ''}: ${stderr.trim().split('\n').slice(-1)[0] ?? `exit ${code}`}`,
          ),
        );
    });
  });
}

/** `psql -XAtc SQL`: the single value as text. */
export function psqlScalarQuery(psqlPath = 'psql', timeoutMs = 30_000): ScalarQuery {
  return async (conn, sql) =>
    (await runPsql(psqlPath, conn, ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql], timeoutMs)).trim();
}

/** libpq environment for a connection: host, port, user, database, sslmode and PGPASSWORD. */
function libpqEnv(conn: ConnectionInfo): Record<string, string> {
  return {
    PGHOST: conn.host,
    PGPORT: String(conn.port),
    PGUSER: conn.user,
    PGDATABASE: conn.dbname,
    ...(conn.sslmode ? { PGSSLMODE: conn.sslmode } : {}),
    PGCONNECT_TIMEOUT: '10',
    ...(conn.env ?? {}),
  };
}

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

/** `host` or `host:port` (default port 5432). */
export function parseEndpoint(text: string, what: string): Endpoint {
  const m = /^([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(text.trim());
  if (!m) throw new UsageError(`${what}: expected host or host:port, got "${text}"`);
  const port = m[2] === undefined ? 5432 : Number(m[2]);
  if (port < 1 || port > 65535) throw new UsageError(`${what}: port must be 1–65535, got ${port}`);
  return { host: m[1] as string, port };
}

/** The server behind every target: one writer, read once per run. */
export class WriterInfo {
  private maxConnectionsPromise: Promise<number> | null = null;

  constructor(
    private readonly writer: ConnectionInfo,
    private readonly query: ScalarQuery,
  ) {}

  maxConnections(): Promise<number> {
    if (!this.maxConnectionsPromise) {
      this.maxConnectionsPromise = this.query(this.writer, 'SHOW max_connections').then((text) => {
        const n = Number.parseInt(text, 10);
        if (!Number.isInteger(n) || n <= 0)
          throw new InfrastructureError(`SHOW max_connections returned "${text}"`);
        return n;
      });
      this.maxConnectionsPromise.catch(() => {
        this.maxConnectionsPromise = null; // let a later call retry
      });
    }
    return this.maxConnectionsPromise;
  }

  serverVersion(): Promise<string> {
    return this.query(this.writer, 'SHOW server_version');
  }
}

export class CloudTarget implements Target {
  readonly descriptor: TargetDescriptor;
  constructor(
    readonly ref: TargetRef,
    private readonly conn: ConnectionInfo,
    private readonly writer: WriterInfo,
    /** Current pool % of a proxy (null for direct / unknown). */
    private readonly poolPercent: () => PoolPercents | null,
    probe: TargetProbe = { version: null },
  ) {
    this.descriptor = describeTarget(ref, probe);
  }

  connection(): ConnectionInfo {
    return this.conn;
  }

  maxConnections(): Promise<number> {
    return this.writer.maxConnections();
  }

  /** RDS Proxy's pool: MaxConnectionsPercent of max_connections (rounded down); null for direct. */
  async poolSize(): Promise<number | null> {
    if (!this.descriptor.capabilities.pooled) return null;
    const pct = this.poolPercent();
    if (pct === null) return null;
    return Math.floor(((await this.writer.maxConnections()) * pct.maxConnectionsPercent) / 100);
  }
}

export interface CloudTargetsInput {
  readonly credentials: DbCredentials;
  readonly writer: Endpoint;
  /** Lab proxy name → endpoint. */
  readonly proxies: Readonly<Record<string, Endpoint>>;
  /** @default 'require' (test-only override: 'disable' to stand PgBouncer in for a proxy locally). */
  readonly sslmode?: SslMode;
  readonly query: ScalarQuery;
  readonly poolPercent: (proxyName: string) => PoolPercents | null;
  /** Kind of the proxy targets. @default 'rds-proxy' (others: test-only local stand-ins) */
  readonly proxyKind?: TargetKind;
}

/** `direct` (the writer) plus one `rds-proxy` target per proxy. */
export function buildCloudTargets(input: CloudTargetsInput): { targets: CloudTarget[]; writer: WriterInfo } {
  const sslmode = input.sslmode ?? 'require';
  const conn = (ep: Endpoint): ConnectionInfo => ({
    host: ep.host,
    port: ep.port,
    user: input.credentials.username,
    dbname: input.credentials.dbname,
    sslmode,
    env: { PGPASSWORD: input.credentials.password },
  });
  const writerConn = conn(input.writer);
  const writer = new WriterInfo(writerConn, input.query);
  const targets = [
    new CloudTarget({ kind: 'direct', name: 'direct' }, writerConn, writer, () => null),
    ...Object.entries(input.proxies).map(
      ([name, ep]) =>
        new CloudTarget({ kind: input.proxyKind ?? 'rds-proxy', name }, conn(ep), writer, () =>
          input.poolPercent(name),
        ),
    ),
  ];
  return { targets, writer };
}
