/**
 * The processes of one local PgBouncer (lib/local/pgbouncer.ts): their files, their admin consoles,
 * and the set a rolling restart swaps one process of at a time (a new process on the port with its
 * own socket directory, the old one signalled, then the first files back).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InfrastructureError } from '../core/errors';
import { howExited, pollUntilAnswered, SUPERUSER } from './postgres';
import type { ServerProcess } from '../exec/process';
import { psqlQueryOne, type PsqlTarget, type Row } from '../exec/psql';
import { pgbouncerDriver } from '../poolers/pgbouncer/driver';
import { rollingStopSignal } from '../poolers/pgbouncer/signals';
import { reuseportCloseBehaviour } from '../exec/procfs';
import type { SettingValue } from '../products/types';

export const ADMIN_USER = SUPERUSER;

export interface ProcessFiles {
  readonly ini: string;
  readonly pid: string;
  readonly log: string;
  readonly out: string;
  readonly sock: string;
}

/**
 * Files of process i: process 0 keeps the names of a single-process pooler. `rolled`: the files of
 * the process a rolling restart starts beside it (its own socket directory and pid file).
 */
export function processFiles(root: string, i: number, rolled = false): ProcessFiles {
  const base = `${i === 0 ? 'pgbouncer' : `pgbouncer-${i}`}${rolled ? '-r' : ''}`;
  return {
    ini: path.join(root, `${base}.ini`),
    pid: path.join(root, `${base}.pid`),
    log: path.join(root, `${base}.log`),
    out: path.join(root, `stdout${i === 0 ? '' : `-${i}`}${rolled ? '-r' : ''}.log`),
    // Short: a unix socket path must fit in 107 bytes (sun_path).
    sock: path.join(root, `s${i}${rolled ? 'r' : ''}`),
  };
}

/** The admin console of ONE process: its own unix socket (the TCP port is shared by all). */
export function adminTarget(psql: string, f: ProcessFiles, port: number): PsqlTarget {
  return {
    psql,
    host: f.sock,
    port,
    user: ADMIN_USER,
    dbname: 'pgbouncer',
  };
}

/** What a running pooler needs to re-render and restart its processes. */
export interface PgbouncerLayout {
  readonly root: string;
  readonly files: readonly ProcessFiles[];
  readonly render: (i: number, serverPort: number, socketDirs: readonly string[], f: ProcessFiles) => string;
  readonly start: (f: ProcessFiles) => ServerProcess;
  readonly own: (file: string) => void;
  readonly serverPort: number;
  readonly psql: string;
  readonly settings: Readonly<Record<string, SettingValue>>;
  readonly kitSettings: Readonly<Record<string, SettingValue | null>>;
}

/**
 * The live processes of one pooler: process i's server and admin console (the arrays are changed in
 * place when a rolling restart swaps a process), which of them were retired on purpose, and the
 * `exited` promise that a process leaving otherwise resolves.
 */
export interface ProcessSet {
  readonly servers: ServerProcess[];
  readonly admins: PsqlTarget[];
  // Processes a rolling restart retired (signalled; they leave when their clients do).
  readonly retiring: Set<ServerProcess>;
  /** Retired by rollingRestart, not yet stopped by restoreAfterRoll. */
  readonly retired: Array<{ index: number; old: ServerProcess }>;
  readonly exited: Promise<string>;
  socketDirs(): string[];
  writeIni(i: number, f: ProcessFiles, dirs: readonly string[]): void;
  /** Start process i on files `f` (its socket directory in `dirs`), ready on its admin console. */
  startOn(
    i: number,
    f: ProcessFiles,
    dirs: readonly string[],
  ): Promise<{ server: ServerProcess; admin: PsqlTarget }>;
  /** Replace process i by `next` (its exit becomes a failure; the old one's does not). */
  swap(i: number, next: ServerProcess, admin: PsqlTarget): ServerProcess;
}

export function processSet(
  firstServers: readonly ServerProcess[],
  firstAdmins: readonly PsqlTarget[],
  port: number,
  layout: PgbouncerLayout,
  serverPort: () => number,
): ProcessSet {
  const servers = [...firstServers];
  const retiring = new Set<ServerProcess>();
  const admins: PsqlTarget[] = [...firstAdmins];
  let unexpected: (how: string) => void = () => undefined;
  const exited = new Promise<string>((resolve) => (unexpected = resolve));
  const arm = (s: ServerProcess, index: number): void => {
    void howExited(s).then((how) => {
      if (retiring.has(s) || !servers.includes(s)) return;
      unexpected(servers.length > 1 ? `process ${index + 1} (pid ${s.pid}) ${how}` : how);
    });
  };
  servers.forEach((s, i) => arm(s, i));
  const writeIni = (i: number, f: ProcessFiles, dirs: readonly string[]): void => {
    fs.writeFileSync(f.ini, layout.render(i, serverPort(), dirs, f));
    layout.own(f.ini);
  };
  return {
    servers,
    admins,
    retiring,
    retired: [],
    exited,
    socketDirs: () => admins.map((a) => a.host),
    writeIni,
    async startOn(i, f, dirs) {
      fs.mkdirSync(f.sock, { recursive: true, mode: 0o700 });
      layout.own(f.sock);
      writeIni(i, f, dirs);
      const server = layout.start(f);
      const admin = adminTarget(layout.psql, f, port);
      if (!(await waitAdminReady(server, admin, f.ini, 15000))) {
        await server.stop('SIGKILL', 2000);
        throw new InfrastructureError(
          `PgBouncer (${f.ini}) did not start: ${readTail(f.log) || readTail(f.out)}`,
        );
      }
      return { server, admin };
    },
    swap(i, next, admin) {
      const old = servers[i] as ServerProcess;
      retiring.add(old);
      servers[i] = next;
      admins[i] = admin;
      arm(next, i);
      return old;
    },
  };
}

/**
 * How long a retired process may take to leave after the window before it is stopped at once. The
 * probes' clients are gone by then; what keeps a SIGTERM'd ≥ 1.23 process waiting is an admin
 * console session (the metrics sampler's), which counts as a client too.
 */
const RETIRE_WAIT_MS = 1500;

export { reuseportCloseBehaviour, TCP_MIGRATE_REQ } from '../exec/procfs';

/**
 * The rolling restart of every process in turn: a new process on the port (so_reuseport) with its
 * own socket directory, then the old one signalled as PgBouncer `version` documents.
 */
export async function rollEveryProcess(
  set: ProcessSet,
  procs: readonly { readonly index: number }[],
  root: string,
  port: number,
  version: string,
  event: (name: string, detail: string) => void,
): Promise<void> {
  const { signal, does } = rollingStopSignal(version);
  for (const p of procs) {
    const i = p.index;
    const files = processFiles(root, i, true);
    const dirs = set.socketDirs().map((d, j) => (j === i ? files.sock : d));
    const { server, admin } = await set.startOn(i, files, dirs);
    event('new-process-up', `PgBouncer process ${i + 1}: pid ${server.pid} on port ${port} (so_reuseport)`);
    const old = set.swap(i, server, admin);
    set.retired.push({ index: i, old });
    try {
      old.child.kill(signal);
    } catch {
      /* already gone */
    }
    event('old-process-signalled', `pid ${old.pid} sent ${signal}: ${does}; ${reuseportCloseBehaviour()}`);
    void old.exit.then(() => event('old-process-exited', `pid ${old.pid}`));
  }
}

/** After the window: each retired process gone, its process started again on its first files. */
export async function restoreEveryProcess(
  set: ProcessSet,
  firstFiles: readonly ProcessFiles[],
  version: string,
): Promise<void> {
  for (const { index: i, old } of set.retired.splice(0)) {
    // The probes' clients are gone: the old process leaves now; if not, it is stopped at once.
    if (!old.exited()) {
      const left = await Promise.race([
        old.exit.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), RETIRE_WAIT_MS)),
      ]);
      if (!left) await stopImmediately([old], version, 5000);
    }
    const files = firstFiles[i] as ProcessFiles;
    const dirs = set.socketDirs().map((d, j) => (j === i ? files.sock : d));
    const { server, admin } = await set.startOn(i, files, dirs);
    const rolled = set.swap(i, server, admin);
    await stopImmediately([rolled], version, 5000);
  }
}

/**
 * Stops every process with PgBouncer `version`'s immediate-shutdown signal(s); a process still
 * there after `graceMs` is killed with its process group (ServerProcess.stop).
 */
export async function stopImmediately(
  servers: readonly ServerProcess[],
  version: string,
  graceMs: number,
): Promise<void> {
  const signals = pgbouncerDriver.immediateStopSignals(version);
  const last = signals[signals.length - 1] as NodeJS.Signals;
  await Promise.all(
    servers.map((s) => {
      for (const sig of signals.slice(0, -1)) {
        try {
          if (!s.exited()) s.child.kill(sig);
        } catch {
          /* already gone */
        }
      }
      return s.stop(last, graceMs);
    }),
  );
}

export async function waitAdminReady(
  server: ServerProcess,
  admin: PsqlTarget,
  iniFile: string,
  timeoutMs: number,
): Promise<boolean> {
  return pollUntilAnswered(server, timeoutMs, async () => {
    // SHOW CONFIG names the ini file: make sure we reached our PgBouncer, not another on that port.
    const rows = await psqlQueryOne(admin, 'SHOW CONFIG', 5000);
    return rows.find((r) => r.key === 'conffile')?.value === iniFile;
  });
}

/**
 * SHOW CONFIG through 127.0.0.1:port when it reaches one of these processes (its conffile is one
 * of their ini files); null when another process answers there, or nothing does.
 */
export async function tcpConfigIfOurs(
  port: number,
  procs: readonly { readonly iniFile: string; readonly admin: PsqlTarget }[],
): Promise<Row[] | null> {
  const first = procs[0];
  if (first === undefined) return null;
  try {
    const rows = await psqlQueryOne({ ...first.admin, host: '127.0.0.1', port }, 'SHOW CONFIG', 5000);
    const conf = rows.find((r) => r.key === 'conffile')?.value;
    return procs.some((p) => p.iniFile === conf) ? rows : null;
  } catch {
    return null;
  }
}

export function readTail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-3).join(' | ');
  } catch {
    return '';
  }
}
