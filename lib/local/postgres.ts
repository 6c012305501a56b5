/**
 * A throwaway PostgreSQL cluster: initdb into a temporary directory, started on 127.0.0.1 on a
 * free port below 32768, trust authentication (reachable from this machine only), a small
 * max_connections, and a non-superuser `bench` role owning database `bench` (so a refusal reads
 * `remaining connection slots are reserved…`, as for application roles on RDS).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InfrastructureError } from '../core/errors';
import type { LocalBinaries } from './binaries';
import { findFreePort } from './ports-free';
import { delay, isAlive, runCommand, startServer, type RunAs, type ServerProcess } from '../exec/process';
import { psqlExec, psqlQueryOne, type PsqlTarget } from '../exec/psql';

export const BENCH_USER = 'bench';
export const BENCH_DB = 'bench';
export const SUPERUSER = 'postgres';

export interface PostgresOptions {
  readonly bins: LocalBinaries;
  /** A directory we own; the cluster lives in `<baseDir>/pg`. */
  readonly baseDir: string;
  readonly runAs: RunAs | null;
  readonly maxConnections: number;
  readonly superuserReservedConnections: number;
  readonly excludePorts?: ReadonlySet<number>;
  /** More `-c` settings (tests: `ssl=on` with a throwaway certificate). */
  readonly extraSettings?: Readonly<Record<string, string>>;
  /**
   * Test-only: a data directory that `initdb` made with these binaries and INITDB_ARGS, copied
   * (`cp -a`, as the server's user) instead of running initdb — half the CPU and a second or two
   * less (test/helpers/pg-template.ts). Its PG_VERSION must be the binaries' major version.
   */
  readonly dataTemplate?: string | null;
}

/** initdb's arguments after `-D DATADIR` (a template for `dataTemplate` is made with the same). */
export const INITDB_ARGS: readonly string[] = [
  '-U',
  SUPERUSER,
  '-A',
  'trust',
  '-E',
  'UTF8',
  '--locale=C',
  '--no-sync',
];

/** Why `dir` cannot stand in for initdb's output with `bins`, or null when it can. */
export function dataTemplateProblem(dir: string, serverVersion: string): string | null {
  let version: string;
  try {
    version = fs.readFileSync(path.join(dir, 'PG_VERSION'), 'utf8').trim();
  } catch (e) {
    return `${dir} is not a PostgreSQL data directory (no readable PG_VERSION: ${(e as Error).message})`;
  }
  const major = serverVersion.split('.')[0] ?? serverVersion;
  return version === major
    ? null
    : `${dir} is a PostgreSQL ${version} data directory, the server is ${serverVersion}`;
}

export interface PostgresCluster {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly dataDir: string;
  readonly logFile: string;
  readonly pid: number;
  readonly maxConnections: number;
  /** `SHOW server_version`, e.g. `15.18 (Debian 15.18-0+deb12u1)` trimmed to `15.18`. */
  readonly serverVersion: string;
  /** Settings passed to the server (no secrets: trust auth). */
  readonly settings: Readonly<Record<string, string>>;
  superuserTarget(dbname?: string): PsqlTarget;
  benchTarget(): PsqlTarget;
  stop(): Promise<void>;
  /** Leave the server running after proxylab exits (--keep). */
  release(): void;
  /** Resolves when the server process ends, saying how (`killed by SIGKILL`, `exited with code 1`). */
  readonly exited: Promise<string>;
}

function chownTree(dir: string, runAs: RunAs | null): void {
  if (!runAs) return;
  fs.chownSync(dir, runAs.uid, runAs.gid);
}

export async function startPostgres(opts: PostgresOptions): Promise<PostgresCluster> {
  const root = path.join(opts.baseDir, 'pg');
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  chownTree(root, opts.runAs);
  const dataDir = path.join(root, 'data');
  const sockDir = path.join(root, 'sock');
  fs.mkdirSync(sockDir, { mode: 0o700 });
  chownTree(sockDir, opts.runAs);
  const logFile = path.join(root, 'postgres.log');
  fs.writeFileSync(logFile, '');
  chownTree(logFile, opts.runAs);

  const template = opts.dataTemplate ?? null;
  if (template !== null) {
    const problem = dataTemplateProblem(template, opts.bins.serverVersion);
    if (problem !== null) throw new InfrastructureError(`data directory template: ${problem}`);
  }
  const init =
    template === null
      ? await runCommand(opts.bins.initdb, ['-D', dataDir, ...INITDB_ARGS], {
          runAs: opts.runAs,
          cwd: root,
          timeoutMs: 120000,
        })
      : await runCommand('cp', ['-a', template, dataDir], {
          runAs: opts.runAs,
          cwd: root,
          timeoutMs: 120000,
        });
  if (init.exitCode !== 0) {
    throw new InfrastructureError(
      `${template === null ? 'initdb' : `copying the data directory template ${template}`} failed (exit ${init.exitCode ?? init.signal}): ${tail(init.stderr || init.stdout)}`,
    );
  }

  const excluded = new Set(opts.excludePorts ?? []);
  let lastError = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await findFreePort(excluded);
    excluded.add(port);
    const settings: Record<string, string> = {
      listen_addresses: '127.0.0.1',
      port: String(port),
      unix_socket_directories: sockDir,
      max_connections: String(opts.maxConnections),
      superuser_reserved_connections: String(opts.superuserReservedConnections),
      log_min_messages: 'warning',
      log_connections: 'off',
      ...(opts.extraSettings ?? {}),
    };
    const args = ['-D', dataDir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
    const server = startServer('postgres', opts.bins.postgres, args, {
      runAs: opts.runAs,
      logFile,
      cwd: root,
    });
    const superuser: PsqlTarget = {
      psql: opts.bins.psql,
      host: '127.0.0.1',
      port,
      user: SUPERUSER,
      dbname: 'postgres',
    };
    const ready = await waitReady(server, superuser, dataDir, 30000);
    if (!ready) {
      await server.stop('SIGINT', 5000);
      lastError = tail(fs.readFileSync(logFile, 'utf8'));
      if (/could not (bind|create listen socket)|Address already in use/i.test(lastError)) continue;
      throw new InfrastructureError(`PostgreSQL did not start on port ${port}: ${lastError}`);
    }
    try {
      await psqlExec(superuser, [
        `CREATE ROLE ${BENCH_USER} LOGIN`,
        `CREATE DATABASE ${BENCH_DB} OWNER ${BENCH_USER}`,
      ]);
      const rows = await psqlQueryOne(superuser, 'SHOW server_version');
      const reported = rows[0]?.server_version ?? opts.bins.serverVersion;
      const serverVersion = reported.split(' ')[0] ?? reported;
      return makeCluster(server, port, dataDir, logFile, opts, settings, serverVersion);
    } catch (e) {
      await server.stop('SIGINT', 10000);
      throw new InfrastructureError(`PostgreSQL started but could not be prepared: ${(e as Error).message}`, {
        cause: e,
      });
    }
  }
  throw new InfrastructureError(`PostgreSQL could not bind a free port after 5 attempts: ${lastError}`);
}

function makeCluster(
  server: ServerProcess,
  port: number,
  dataDir: string,
  logFile: string,
  opts: PostgresOptions,
  settings: Readonly<Record<string, string>>,
  serverVersion: string,
): PostgresCluster {
  return {
    host: '127.0.0.1',
    port,
    dataDir,
    logFile,
    pid: server.pid,
    maxConnections: opts.maxConnections,
    serverVersion,
    settings,
    superuserTarget: (dbname = 'postgres') => ({
      psql: opts.bins.psql,
      host: '127.0.0.1',
      port,
      user: SUPERUSER,
      dbname,
    }),
    benchTarget: () => ({
      psql: opts.bins.psql,
      host: '127.0.0.1',
      port,
      user: BENCH_USER,
      dbname: BENCH_DB,
    }),
    // SIGINT = fast shutdown (disconnect clients, checkpoint); the process group is killed after the grace.
    release: () => server.release(),
    stop: async () => {
      // Shut down cleanly before we asked: maybe a restart (`pg_ctl restart`), whose new postmaster
      // may not have written its pid file yet.
      const shutDownUnderUs = server.exited() && server.child.exitCode === 0;
      await server.stop('SIGINT', 15000);
      await stopSuccessor(dataDir, server.pid, shutDownUnderUs ? SUCCESSOR_WAIT_MS : 0);
    },
    exited: howExited(server),
  };
}

/** How long a cleanly shut down server's restart may take to write its pid file. */
const SUCCESSOR_WAIT_MS = 5000;

/**
 * A postmaster that is not the one we started but runs our data directory: someone restarted the
 * server (`pg_ctl restart`), so the new postmaster is no child of ours and `server.stop` cannot see
 * it. Its pid is in `postmaster.pid` (looked for up to `waitMs`, as a restart writes it a moment
 * after the old one exits); it is stopped like ours (fast shutdown, then SIGKILL), and only when its
 * command line names our data directory (a reused pid is left alone).
 */
async function stopSuccessor(
  dataDir: string,
  ourPid: number,
  waitMs: number,
  graceMs = 15000,
): Promise<void> {
  const successor = (): number | null => {
    try {
      const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return Number.isInteger(pid) && pid > 0 && pid !== ourPid && isAlive(pid) ? pid : null;
    } catch {
      return null; // no pid file: no postmaster runs this directory
    }
  };
  const waitUntil = Date.now() + waitMs;
  let found = successor();
  while (found === null && Date.now() < waitUntil) {
    await delay(100);
    found = successor();
  }
  if (found === null) return;
  const pid = found;
  try {
    if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dataDir)) return;
  } catch {
    return; // gone meanwhile, or no /proc: nothing we can check, so nothing we signal
  }
  const signal = (sig: NodeJS.Signals): void => {
    try {
      process.kill(pid, sig);
    } catch {
      /* already gone */
    }
  };
  signal('SIGINT');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await delay(100);
  if (isAlive(pid)) signal('SIGKILL');
}

/** How a server process ended, once it has. */
export function howExited(server: ServerProcess): Promise<string> {
  return server.exit.then((code) =>
    server.child.signalCode ? `was killed by ${server.child.signalCode}` : `exited with code ${code ?? '?'}`,
  );
}

/** Ready when our server (not another one that took the port) answers: data_directory must match. */
async function waitReady(
  server: ServerProcess,
  target: PsqlTarget,
  dataDir: string,
  timeoutMs: number,
): Promise<boolean> {
  return pollUntilAnswered(server, timeoutMs, async () => {
    const rows = await psqlQueryOne(target, 'SHOW data_directory', 5000);
    return rows[0]?.data_directory === dataDir;
  });
}

/**
 * Polls `isOurs` every 100 ms until it answers (it throws while the server does not accept
 * connections yet): true when it says the server that answered is ours and our process is still up,
 * false when our process exited, `isOurs` says another server took the port, or time ran out.
 */
export async function pollUntilAnswered(
  server: ServerProcess,
  timeoutMs: number,
  isOurs: () => Promise<boolean>,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.exited()) return false;
    try {
      return (await isOurs()) && !server.exited();
    } catch {
      await delay(100);
    }
  }
  return false;
}

function tail(text: string, lines = 3): string {
  return text.trim().split('\n').slice(-lines).join(' | ');
}
