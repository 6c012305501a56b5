/**
 * psql against a remote server (the runner's targets, the pooler host's database): the connection in
 * libpq's PG* environment variables, the password never in argv.
 */
import { spawn } from 'node:child_process';
import { InfrastructureError } from '../core/errors';
import type { ConnectionInfo } from '../suite/types';

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
