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
import { startOnFreePort } from './port-retry';
import { delay, isAlive, runCommand, startServer, type RunAs, type ServerProcess } from '../exec/process';
import { psqlExec, psqlQueryOne, type PsqlTarget } from '../exec/psql';
import { nodeReapSystem } from './reap';

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
  /** The postmaster running now (a restart starts a new one). */
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
  /**
   * Resolves when a postmaster ends that we did not stop on purpose (a crash, a kill), saying how
   * (`killed by SIGKILL`, `exited with code 1`). A planned stop (`stopPlanned`, `restart`) is not one.
   */
  readonly exited: Promise<string>;
  /**
   * A stop we cause (a disruption): SIGINT (fast) or SIGQUIT (immediate) to the postmaster, resolved
   * once it exited. Until `start()` brings it back, `plannedDown()` says since when and why.
   */
  stopPlanned(mode: 'fast' | 'immediate'): Promise<void>;
  /**
   * Start the postmaster again on the same port and data directory; resolves once it answers.
   * `postgres`: another server binary of the same major (the local stand-in of a minor upgrade);
   * absent: the stack's own.
   */
  start(timeoutMs?: number, postgres?: string): Promise<void>;
  /** Since when (Date.now() ms) and why the server is down on purpose, or null when it runs. */
  plannedDown(): { readonly sinceMs: number; readonly why: string } | null;
}

function chownTree(dir: string, runAs: RunAs | null): void {
  if (!runAs) return;
  fs.chownSync(dir, runAs.uid, runAs.gid);
}

/**
 * A cluster's directory `root` (mode 0700) with its socket directory and an empty log, owned by the
 * server's OS user; the data directory's path (initdb, a template copy or pg_basebackup fills it).
 */
function clusterDirs(
  root: string,
  runAs: RunAs | null,
): { dataDir: string; sockDir: string; logFile: string } {
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  chownTree(root, runAs);
  const sockDir = path.join(root, 'sock');
  fs.mkdirSync(sockDir, { mode: 0o700 });
  chownTree(sockDir, runAs);
  const logFile = path.join(root, 'postgres.log');
  fs.writeFileSync(logFile, '');
  chownTree(logFile, runAs);
  return { dataDir: path.join(root, 'data'), sockDir, logFile };
}

export async function startPostgres(opts: PostgresOptions): Promise<PostgresCluster> {
  const root = path.join(opts.baseDir, 'pg');
  const { dataDir, sockDir, logFile } = clusterDirs(root, opts.runAs);

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

  const policy = {
    server: 'PostgreSQL',
    tries: 5,
    portTaken: (failed: string) =>
      /could not (bind|create listen socket)|Address already in use/i.test(failed),
    exclude: opts.excludePorts,
  };
  return startOnFreePort<PostgresCluster>(policy, async (port) => {
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
    const launch = (postgres?: string): ServerProcess =>
      launchPostmaster(opts, dataDir, logFile, root, settings, postgres);
    const server = launch();
    const superuser = superuserAt(opts.bins.psql, port);
    const ready = await waitReady(server, superuser, dataDir, 30000);
    if (!ready) {
      await server.stop('SIGINT', 5000);
      return { failed: tail(fs.readFileSync(logFile, 'utf8')) };
    }
    try {
      await psqlExec(superuser, [
        `CREATE ROLE ${BENCH_USER} LOGIN`,
        `CREATE DATABASE ${BENCH_DB} OWNER ${BENCH_USER}`,
      ]);
      const rows = await psqlQueryOne(superuser, 'SHOW server_version');
      const reported = rows[0]?.server_version ?? opts.bins.serverVersion;
      const serverVersion = reported.split(' ')[0] ?? reported;
      return { started: makeCluster(server, launch, port, dataDir, logFile, opts, settings, serverVersion) };
    } catch (e) {
      await server.stop('SIGINT', 10000);
      throw new InfrastructureError(`PostgreSQL started but could not be prepared: ${(e as Error).message}`, {
        cause: e,
      });
    }
  });
}

/** The superuser's connection to a server of this stack on 127.0.0.1:`port` (its postgres database). */
function superuserAt(psql: string, port: number): PsqlTarget {
  return { psql, host: '127.0.0.1', port, user: SUPERUSER, dbname: 'postgres' };
}

/** A postmaster on `dataDir` with `settings` (its port among them), output appended to `logFile`. */
function launchPostmaster(
  opts: Pick<PostgresOptions, 'bins' | 'runAs'>,
  dataDir: string,
  logFile: string,
  cwd: string,
  settings: Readonly<Record<string, string>>,
  postgres: string = opts.bins.postgres,
): ServerProcess {
  const args = ['-D', dataDir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  return startServer('postgres', postgres, args, { runAs: opts.runAs, logFile, cwd });
}

/** The planned stop of `stop()`: the stack's end, not a disruption's. */
const STOPPED_WITH_STACK = 'stopped with the stack';

/** How long a planned stop may wait for the postmaster before its process group is killed. */
const PLANNED_STOP_GRACE_MS = 15000;

function makeCluster(
  first: ServerProcess,
  launch: (postgres?: string) => ServerProcess,
  port: number,
  dataDir: string,
  logFile: string,
  opts: PostgresOptions,
  settings: Readonly<Record<string, string>>,
  serverVersion: string,
): PostgresCluster {
  let server = first;
  let planned: { sinceMs: number; why: string } | null = null;
  let unexpected: (how: string) => void = () => undefined;
  const exited = new Promise<string>((resolve) => (unexpected = resolve));
  // Only the running postmaster's end counts, and only when we did not stop it.
  const arm = (s: ServerProcess): void => {
    void howExited(s).then((how) => {
      if (s === server && planned === null) unexpected(how);
    });
  };
  arm(first);
  const superuserTarget = (dbname = 'postgres'): PsqlTarget => ({
    psql: opts.bins.psql,
    host: '127.0.0.1',
    port,
    user: SUPERUSER,
    dbname,
  });
  return {
    host: '127.0.0.1',
    port,
    dataDir,
    logFile,
    get pid() {
      return server.pid;
    },
    maxConnections: opts.maxConnections,
    serverVersion,
    settings,
    superuserTarget,
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
      const shutDownUnderUs = server.exited() && server.child.exitCode === 0 && planned === null;
      planned = { sinceMs: Date.now(), why: STOPPED_WITH_STACK };
      await server.stop('SIGINT', 15000);
      await stopSuccessor(dataDir, server.pid, shutDownUnderUs ? SUCCESSOR_WAIT_MS : 0);
    },
    exited,
    plannedDown: () => planned,
    stopPlanned: async (mode) => {
      planned = { sinceMs: Date.now(), why: `${mode} shutdown` };
      // PostgreSQL's shutdown modes: SIGINT fast, SIGQUIT immediate (docs: "Shutting Down the Server").
      await server.stop(mode === 'fast' ? 'SIGINT' : 'SIGQUIT', PLANNED_STOP_GRACE_MS);
    },
    start: async (timeoutMs = 60000, postgres?: string) => {
      const next = launch(postgres);
      server = next;
      arm(next);
      const outcome = await pollOutcome(next, timeoutMs, isOurServer(superuserTarget(), dataDir));
      if (outcome !== 'ready') {
        // A stop while it started (the stack's, on Ctrl-C) says so; the log's tail says the rest.
        const stoppedBy = planned?.why === STOPPED_WITH_STACK ? STOPPED_WITH_STACK : null;
        const why = await notStartedReason(next, outcome, port, timeoutMs, stoppedBy);
        const log = tail(readLog(logFile));
        throw new InfrastructureError(
          `PostgreSQL did not start again on port ${port}: ${why}${log ? `; its log ends: ${log}` : ''}`,
        );
      }
      planned = null;
    },
  };
}

function readLog(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** How long a cleanly shut down server's restart may take to write its pid file. */
const SUCCESSOR_WAIT_MS = 5000;
/**
 * How long past SUCCESSOR_WAIT_MS to keep looking while a process still names our data directory
 * (the `pg_ctl restart` that drives it, or the new postmaster before its pid file): on a loaded
 * machine a restart took longer than 5 s to write the file, and the new postmaster outlived the stack.
 */
const SUCCESSOR_RESTARTING_MS = 30_000;

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
  const restarting = (): boolean =>
    waitMs > 0 &&
    Date.now() < waitUntil + SUCCESSOR_RESTARTING_MS &&
    nodeReapSystem()
      .processesMentioning(dataDir)
      .some((pid) => pid !== ourPid);
  let found = successor();
  while (found === null && (Date.now() < waitUntil || restarting())) {
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
  return (await pollOutcome(server, timeoutMs, isOurServer(target, dataDir))) === 'ready';
}

function isOurServer(target: PsqlTarget, dataDir: string): () => Promise<boolean> {
  return async () => {
    const rows = await psqlQueryOne(target, 'SHOW data_directory', 5000);
    return rows[0]?.data_directory === dataDir;
  };
}

/** How a wait for a server ended: it answered, its process ended, another server answered, or time ran out. */
type PollOutcome = 'ready' | 'exited' | 'not-ours' | 'timed-out';

/**
 * Polls `isOurs` every 100 ms until it answers (it throws while the server does not accept
 * connections yet): `ready` when it says the server that answered is ours and our process is still
 * up; else why not — our process `exited` (a bad setting, or a stop while it started), `isOurs`
 * said another server took the port (`not-ours`), or `timeoutMs` ran out (`timed-out`).
 */
async function pollOutcome(
  server: ServerProcess,
  timeoutMs: number,
  isOurs: () => Promise<boolean>,
): Promise<PollOutcome> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.exited()) return 'exited';
    try {
      const ours = await isOurs();
      return server.exited() ? 'exited' : ours ? 'ready' : 'not-ours';
    } catch {
      await delay(100);
    }
  }
  return server.exited() ? 'exited' : 'timed-out';
}

/** `pollOutcome`, as a yes or no. */
export async function pollUntilAnswered(
  server: ServerProcess,
  timeoutMs: number,
  isOurs: () => Promise<boolean>,
): Promise<boolean> {
  return (await pollOutcome(server, timeoutMs, isOurs)) === 'ready';
}

/**
 * Why a server we started again is not up, in words: what happened to its process (its exit code
 * or signal, and who stopped it when we did), another server on its port, or the time that ran out
 * — only when it did.
 */
async function notStartedReason(
  server: ServerProcess,
  outcome: Exclude<PollOutcome, 'ready'>,
  port: number,
  timeoutMs: number,
  stoppedBy: string | null,
): Promise<string> {
  if (outcome === 'exited')
    return `the postmaster (pid ${server.pid}) ${await howExited(server)} before it accepted connections${stoppedBy !== null ? ` (${stoppedBy})` : ''}`;
  if (outcome === 'not-ours') return `another server answers on port ${port}`;
  return `no answer within ${timeoutMs} ms (the postmaster, pid ${server.pid}, is still running)`;
}

function tail(text: string, lines = 3): string {
  return text.trim().split('\n').slice(-lines).join(' | ');
}

/**
 * A streaming standby of `primary` (the local primary-failover disruption): `pg_basebackup -R -X
 * stream` of the primary into `<baseDir>/<name>/data` (the -R writes primary_conninfo and
 * standby.signal: PostgreSQL docs, pg_basebackup), started on a free port with the primary's
 * settings, hot_standby (the default) so it answers read-only connections. Resolves once the
 * primary reports it streaming. Promote it with `promote()`.
 */
export async function startStandby(
  opts: PostgresOptions & { readonly primary: PostgresCluster; readonly name: string },
): Promise<PostgresCluster & { promote(timeoutSec?: number): Promise<void> }> {
  const root = path.join(opts.baseDir, opts.name);
  fs.rmSync(root, { recursive: true, force: true });
  const { dataDir, sockDir, logFile } = clusterDirs(root, opts.runAs);
  const basebackup = path.join(opts.bins.bindir, 'pg_basebackup');
  const copy = await runCommand(
    basebackup,
    [
      '-h',
      '127.0.0.1',
      '-p',
      String(opts.primary.port),
      '-U',
      SUPERUSER,
      '-D',
      dataDir,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ],
    { runAs: opts.runAs, cwd: root, timeoutMs: 120000 },
  );
  if (copy.exitCode !== 0)
    throw new InfrastructureError(
      `pg_basebackup of the primary failed (exit ${copy.exitCode ?? copy.signal}): ${tail(copy.stderr || copy.stdout)}`,
    );
  const excluded = new Set([opts.primary.port, ...(opts.excludePorts ?? [])]);
  const port = await findFreePort(excluded);
  const settings = { ...opts.primary.settings, port: String(port), unix_socket_directories: sockDir };
  const launch = (postgres?: string): ServerProcess =>
    launchPostmaster(opts, dataDir, logFile, root, settings, postgres);
  const server = launch();
  const superuser = superuserAt(opts.bins.psql, port);
  if (!(await waitReady(server, superuser, dataDir, 30000))) {
    await server.stop('SIGINT', 5000);
    throw new InfrastructureError(`the standby did not start on port ${port}: ${tail(readLog(logFile))}`);
  }
  const deadline = Date.now() + 30000;
  for (;;) {
    const rows = await psqlQueryOne(
      opts.primary.superuserTarget(),
      "SELECT count(*) AS n FROM pg_stat_replication WHERE state = 'streaming'",
      5000,
    );
    if (Number(rows[0]?.n ?? 0) >= 1) break;
    if (Date.now() > deadline) {
      await server.stop('SIGINT', 5000);
      throw new InfrastructureError(`the standby on port ${port} did not start streaming within 30 s`);
    }
    await delay(100);
  }
  const cluster = makeCluster(
    server,
    launch,
    port,
    dataDir,
    logFile,
    opts,
    settings,
    opts.primary.serverVersion,
  );
  return Object.assign(cluster, {
    // pg_promote(wait, wait_seconds) returns true once the promotion completed (PostgreSQL ≥ 12).
    promote: async (timeoutSec = 30): Promise<void> => {
      const rows = await psqlQueryOne(
        superuser,
        `SELECT pg_promote(true, ${timeoutSec}) AS promoted`,
        (timeoutSec + 5) * 1000,
      );
      if (rows[0]?.promoted !== 't')
        throw new InfrastructureError(`the standby on port ${port} was not promoted within ${timeoutSec} s`);
    },
  });
}
