/**
 * A moto server (AWS API stand-in) for integration tests: S3, CloudWatch and the rest of what moto
 * implements, on 127.0.0.1 at a free port in 20000–32000 (below the kernel's ephemeral range,
 * chosen at random because other test runs start servers too).
 *
 *   const moto = await startMoto();
 *   try { ...clients with { endpoint: moto.endpoint, forcePathStyle: true, ...MOTO_CLIENT_CONFIG } }
 *   finally { await moto.stop(); }
 *
 * Child processes (the real CLI) get `motoEnv(moto)`: AWS_ENDPOINT_URL, dummy credentials, region.
 *
 * **One server per jest run.** Under jest's integration project (its globalSetup sets
 * $PROXYLAB_TEST_MOTO_DIR, test/helpers/integration-global.ts), the first test file that calls
 * `startMoto()` starts the server and every other file uses it, also while it runs at the same time
 * in the other worker; `stop()` leaves it running and the globalTeardown stops it after the last
 * file. A moto_server start costs ≈ 1 CPU-s of Python, and more for each service's first request
 * (bench/README.md "npm test time"). So a file keeps its state apart by naming: **its own bucket,
 * secret, schedule, stack, DB identifiers, metric dimensions and run ids**, names no other file uses
 * (the ten files that use moto do), and it never resets the server or lists what it did not name.
 * Outside jest (no $PROXYLAB_TEST_MOTO_DIR) each call starts a server of its own, which `stop()`
 * stops.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findFreePort } from '../../lib/local/ports-free';

export interface MotoServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** Stop a server of this file's own and wait for it to exit; the run's shared one stays up. */
  stop(): Promise<void>;
}

/** The directory through which the test files of one jest run share a moto server (set by globalSetup). */
export const SHARED_MOTO_DIR_ENV = 'PROXYLAB_TEST_MOTO_DIR';

export const MOTO_REGION = 'us-east-1';
export const MOTO_CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' } as const;
/** SDK client config for talking to moto in-process (add `forcePathStyle: true` for S3). */
export function motoClientConfig(moto: MotoServer): {
  region: string;
  endpoint: string;
  credentials: typeof MOTO_CREDENTIALS;
} {
  return { region: MOTO_REGION, endpoint: moto.endpoint, credentials: MOTO_CREDENTIALS };
}

/** Environment for a child process (the real CLI) that must reach moto and nothing else. */
export function motoEnv(moto: MotoServer, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const key of Object.keys(env)) {
    if (key.startsWith('AWS_')) delete env[key];
  }
  return {
    ...env,
    AWS_ENDPOINT_URL: moto.endpoint,
    AWS_ACCESS_KEY_ID: MOTO_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: MOTO_CREDENTIALS.secretAccessKey,
    AWS_REGION: MOTO_REGION,
    // no shared config/credentials files from the developer's machine
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

export function findMotoServer(): string {
  const found = spawnSync('sh', ['-c', 'command -v moto_server'], { encoding: 'utf8' });
  const bin = found.stdout.trim();
  if (found.status !== 0 || bin === '') {
    throw new Error('moto_server not found on PATH: pip install "moto[server]" (CI installs it)');
  }
  return bin;
}

interface StartOptions {
  readonly startTimeoutMs?: number;
  readonly attempts?: number;
}

/** A server started here: the process and what it wrote to stderr so far (for errors). */
interface Launched {
  readonly child: ChildProcess;
  readonly stderr: () => string;
}

/**
 * The run's shared server (started by the first file that asks) under jest's integration project,
 * else a server of the caller's own.
 */
export function startMoto(options: StartOptions = {}): Promise<MotoServer> {
  const shared = process.env[SHARED_MOTO_DIR_ENV];
  return shared ? sharedMoto(shared, options) : ownMoto(options);
}

async function ownMoto(options: StartOptions): Promise<MotoServer> {
  const bin = findMotoServer();
  const { child, port } = await startAttempts(options, (port) => {
    const child = spawn(bin, ['-p', String(port), '-H', '127.0.0.1'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4000);
    });
    return { child, stderr: () => stderr };
  });
  return { port, endpoint: endpointOf(port), stop: () => stopChild(child) };
}

async function startAttempts(
  options: StartOptions,
  launch: (port: number) => Launched,
): Promise<{ child: ChildProcess; port: number }> {
  const attempts = options.attempts ?? 5;
  let lastError: unknown = null;
  for (let i = 0; i < attempts; i++) {
    const port = await findFreePort();
    const { child, stderr } = launch(port);
    try {
      await waitUntilServing(child, port, options.startTimeoutMs ?? 30_000, stderr);
      return { child, port };
    } catch (err) {
      lastError = err;
      await stopChild(child);
    }
  }
  throw new Error(
    `moto_server did not start after ${attempts} attempts: ${lastError instanceof Error ? lastError.message : String(lastError)}`,
  );
}

function endpointOf(port: number): string {
  return `http://127.0.0.1:${port}`;
}

/** What the starting file writes for the others (and for the globalTeardown), in the shared directory. */
interface SharedState {
  readonly port: number;
  readonly pid: number;
  /** ms since the epoch */
  readonly startedAt: number;
}

const SHARED = {
  /** made (mkdir: atomic) by the one file that starts the server */
  lock: 'starting',
  /** SharedState, written (by rename: whole) once the server answers */
  server: 'server.json',
  /** why the start failed: every file that asks after that fails with it */
  failed: 'failed.txt',
  /** the pid of every moto_server started, one a line (the teardown stops any still running) */
  pids: 'pids',
  /** the server's stdout and stderr */
  log: 'moto.log',
} as const;

async function sharedMoto(dir: string, options: StartOptions): Promise<MotoServer> {
  const at = (name: string): string => path.join(dir, name);
  let starter = false;
  try {
    fs.mkdirSync(at(SHARED.lock));
    starter = true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  if (starter) {
    try {
      const bin = findMotoServer();
      const { child, port } = await startAttempts(options, (port) => {
        // Output to a file, not a pipe: the server outlives this test file and may outlive this
        // worker; unref'd, so the worker can exit before the globalTeardown stops it.
        const log = fs.openSync(at(SHARED.log), 'a');
        const child = spawn(bin, ['-p', String(port), '-H', '127.0.0.1'], { stdio: ['ignore', log, log] });
        fs.closeSync(log);
        if (child.pid !== undefined) fs.appendFileSync(at(SHARED.pids), `${child.pid}\n`);
        child.unref();
        return { child, stderr: () => logTail(at(SHARED.log)) };
      });
      const state: SharedState = { port, pid: child.pid ?? 0, startedAt: Date.now() };
      fs.writeFileSync(at(`${SHARED.server}.part`), JSON.stringify(state));
      fs.renameSync(at(`${SHARED.server}.part`), at(SHARED.server));
    } catch (err) {
      fs.writeFileSync(at(SHARED.failed), err instanceof Error ? err.message : String(err));
      throw err;
    }
  }
  const state = await waitForShared(dir, (options.startTimeoutMs ?? 30_000) * (options.attempts ?? 5));
  // A server that died since would fail this file's calls one by one: say it once, here.
  const problem = await fetch(`${endpointOf(state.port)}/moto-api/`, {
    signal: AbortSignal.timeout(10_000),
  }).then(
    (res) => (res.status < 500 ? null : `HTTP ${res.status}`),
    (err: unknown) => (err instanceof Error ? err.message : String(err)),
  );
  if (problem !== null)
    throw new Error(
      `the run's shared moto_server (pid ${state.pid}, port ${state.port}) does not answer (${problem}): ${logTail(at(SHARED.log))}`,
    );
  return { port: state.port, endpoint: endpointOf(state.port), stop: () => Promise.resolve() };
}

async function waitForShared(dir: string, timeoutMs: number): Promise<SharedState> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return JSON.parse(fs.readFileSync(path.join(dir, SHARED.server), 'utf8')) as SharedState;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (fs.existsSync(path.join(dir, SHARED.failed)))
      throw new Error(
        `the run's shared moto_server did not start (another test file tried): ${fs.readFileSync(path.join(dir, SHARED.failed), 'utf8')}`,
      );
    if (Date.now() > deadline)
      throw new Error(`the run's shared moto_server was not serving after ${timeoutMs} ms (${dir})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function logTail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').slice(-4000).trim();
  } catch {
    return '';
  }
}

/** The CPU a process used (its own and its reaped children's), from Linux's /proc; null elsewhere. */
export interface ProcessCpu {
  readonly user: number;
  readonly sys: number;
  readonly cuser: number;
  readonly csys: number;
}

function processCpu(pid: number): ProcessCpu | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the fields after the ")" that ends the command name: utime is field 14 … cstime 17
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = (i: number): number => Number(f[i - 3]) / 100; // USER_HZ
    return { user: ticks(14), sys: ticks(15), cuser: ticks(16), csys: ticks(17) };
  } catch {
    return null;
  }
}

/**
 * The globalTeardown's half: stop the run's shared server (and any start attempt still running),
 * wait for each to exit, and remove the directory. Only processes whose command line is
 * moto_server's are signalled (a pid reused since by something else is left alone). Returns the
 * shared server's CPU and how long it ran (for bench/jest-cpu-env.js's log: once no worker is its
 * parent, nobody reaps it into a test file's figures), or null when no file started one.
 */
export async function stopSharedMoto(
  dir: string,
): Promise<{ readonly cpu: ProcessCpu | null; readonly wallSec: number } | null> {
  let pids: number[] = [];
  try {
    pids = fs
      .readFileSync(path.join(dir, SHARED.pids), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map(Number);
  } catch {
    // no file asked for moto in this run
  }
  let server: (SharedState & { readonly cpu: ProcessCpu | null }) | null = null;
  try {
    const state = JSON.parse(fs.readFileSync(path.join(dir, SHARED.server), 'utf8')) as SharedState;
    server = { ...state, cpu: processCpu(state.pid) };
  } catch {
    // none serving
  }
  await Promise.all(pids.filter(isMotoServer).map((pid) => stopPid(pid)));
  fs.rmSync(dir, { recursive: true, force: true });
  return server === null ? null : { cpu: server.cpu, wallSec: (Date.now() - server.startedAt) / 1000 };
}

function isMotoServer(pid: number): boolean {
  const ps = spawnSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' });
  return ps.status === 0 && ps.stdout.includes('moto_server');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // exited meanwhile
  }
}

async function stopPid(pid: number): Promise<void> {
  signal(pid, 'SIGTERM');
  const deadline = Date.now() + 5000;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (alive(pid)) signal(pid, 'SIGKILL');
  while (alive(pid) && Date.now() < deadline + 5000) await new Promise((r) => setTimeout(r, 50));
}
async function waitUntilServing(
  child: ChildProcess,
  port: number,
  timeoutMs: number,
  stderr: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `moto_server exited (${child.exitCode ?? child.signalCode}) on port ${port}: ${stderr().trim()}`,
      );
    }
    try {
      const res = await fetch(`http://127.0.0.1:${port}/moto-api/`, { signal: AbortSignal.timeout(1000) });
      if (res.status < 500) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`moto_server not serving on port ${port} after ${timeoutMs} ms: ${stderr().trim()}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
