/**
 * Child-process helpers for the local stand-in: run a binary to completion (argv, no shell),
 * start a long-running server in its own process group (so a terminal Ctrl-C reaches only us, and
 * we stop it in order), and drop root privileges to an unprivileged OS user where needed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';

/** The OS identity servers run as. null: run as the current user (we are not root). */
export interface RunAs {
  readonly user: string;
  readonly uid: number;
  readonly gid: number;
  readonly home: string;
}

export interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface RunOptions {
  readonly runAs?: RunAs | null;
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly timeoutMs?: number;
  readonly input?: string;
}

/** Root cannot run PostgreSQL or PgBouncer: find the `postgres` OS user (or another candidate). */
export function resolveRunAs(candidates: readonly string[] = ['postgres']): RunAs | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  for (const user of candidates) {
    const res = spawnSync('id', ['-u', user], { encoding: 'utf8' });
    const gidRes = spawnSync('id', ['-g', user], { encoding: 'utf8' });
    const uid = Number.parseInt(res.stdout, 10);
    const gid = Number.parseInt(gidRes.stdout, 10);
    if (res.status === 0 && Number.isInteger(uid) && Number.isInteger(gid) && uid !== 0) {
      return { user, uid, gid, home: `/tmp` };
    }
  }
  return null;
}

/** Environment for a child: ours minus libpq variables that could redirect it, plus extras. */
export function childEnv(
  runAs: RunAs | null | undefined,
  extra?: Readonly<Record<string, string>>,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith('PG')) continue;
    env[k] = v;
  }
  env.LC_ALL = 'C';
  env.LANG = 'C';
  if (runAs) {
    env.HOME = runAs.home;
    env.USER = runAs.user;
    env.LOGNAME = runAs.user;
  }
  return { ...env, ...(extra ?? {}) };
}

function identity(runAs: RunAs | null | undefined): { uid?: number; gid?: number } {
  return runAs ? { uid: runAs.uid, gid: runAs.gid } : {};
}

/** Run a binary to completion; never throws for a non-zero exit (the caller decides). */
export function runCommand(file: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, [...args], {
      ...identity(opts.runAs),
      env: childEnv(opts.runAs, opts.env),
      cwd: opts.cwd ?? os.tmpdir(),
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    let timer: NodeJS.Timeout | undefined;
    if (opts.timeoutMs !== undefined) {
      timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    }
    child.on('error', (e) => {
      if (timer) clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        exitCode: code,
        signal,
      });
    });
    if (child.stdin) {
      // The child may exit before reading its input (EPIPE): its exit code tells what happened.
      child.stdin.on('error', () => undefined);
      child.stdin.end(opts.input);
    }
  });
}

/** A server process we started; stop() is idempotent and resolves once it has exited. */
export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  exited(): boolean;
  /** Resolves with the exit code (null when killed by a signal) once the process ended. */
  readonly exit: Promise<number | null>;
  stop(signal: NodeJS.Signals, graceMs: number): Promise<void>;
  /** Let node exit while the server keeps running (--keep). */
  release(): void;
}

/**
 * Start a server in its own process group (detached) with output to a log file. It is not
 * unref'd: we keep the handle and must stop it.
 */
export function startServer(
  name: string,
  file: string,
  args: readonly string[],
  opts: { runAs?: RunAs | null; logFile: string; cwd: string; env?: Readonly<Record<string, string>> },
): ServerProcess {
  const fd = fs.openSync(opts.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(file, [...args], {
      ...identity(opts.runAs),
      env: childEnv(opts.runAs, opts.env),
      cwd: opts.cwd,
      detached: true,
      stdio: ['ignore', fd, fd],
    });
  } finally {
    fs.closeSync(fd);
  }
  let done = false;
  const exit = new Promise<number | null>((resolve) => {
    child.on('error', () => {
      done = true;
      resolve(null);
    });
    child.on('exit', (code) => {
      done = true;
      resolve(code);
    });
  });
  return {
    name,
    pid: child.pid ?? -1,
    child,
    exited: () => done,
    exit,
    release: () => child.unref(),
    async stop(signal, graceMs) {
      if (done) return;
      try {
        child.kill(signal);
      } catch {
        /* already gone */
      }
      const timedOut = await raceTimeout(exit, graceMs);
      if (timedOut && !done) {
        try {
          // The whole process group: a postmaster's children too.
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
        await raceTimeout(exit, 5000);
      }
    },
  };
}

/** Wait for `p` at most `ms`; true when the time ran out. The timer never outlives the wait. */
async function raceTimeout(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), ms);
  });
  try {
    return await Promise.race([p.then(() => false), timeout]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Is a process still alive? (signal 0). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
