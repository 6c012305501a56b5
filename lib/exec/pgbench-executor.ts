/**
 * PgbenchExecutor for this machine: spawns pgbench with an argv (no shell), kills it on timeout
 * (SIGTERM, then SIGKILL after a grace) or abort, samples its CPU from /proc/<pid>/stat once a
 * second (Linux; null elsewhere), and returns the log files it wrote in the step's work dir.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PgbenchExecutor, PgbenchInvocation, PgbenchOutcome } from '../engine/ports';
import { LINUX_CLOCK_TICKS_PER_SECOND, processCpuTicks } from '../core/proc-stat';
import { childEnv } from './process';

export interface LocalExecutorOptions {
  /** The pgbench binary. */
  readonly pgbench: string;
  /** Parent of per-step work dirs (created if missing). */
  readonly workRoot: string;
  /** Between SIGTERM and SIGKILL. @default 3000 */
  readonly killGraceMs?: number;
  /** CPU sampling period. @default 1000 */
  readonly cpuSampleMs?: number;
}

/** utime + stime (clock ticks) from /proc/<pid>/stat, or null when unreadable (not Linux, gone). */
function readProcessCpuTicks(pid: number): number | null {
  try {
    return processCpuTicks(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

export class LocalPgbenchExecutor implements PgbenchExecutor {
  private readonly killGraceMs: number;
  private readonly cpuSampleMs: number;

  constructor(private readonly opts: LocalExecutorOptions) {
    this.killGraceMs = opts.killGraceMs ?? 3000;
    this.cpuSampleMs = opts.cpuSampleMs ?? 1000;
  }

  async workDir(name: string): Promise<string> {
    await fs.promises.mkdir(this.opts.workRoot, { recursive: true });
    return await fs.promises.mkdtemp(path.join(this.opts.workRoot, `${name.slice(0, 80)}-`));
  }

  async removeWorkDir(dir: string): Promise<void> {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }

  run(inv: PgbenchInvocation): Promise<PgbenchOutcome> {
    const [program, ...args] = inv.argv;
    if (program === undefined) return Promise.reject(new Error('pgbench invocation has an empty argv'));
    for (const f of inv.files ?? []) {
      fs.mkdirSync(path.dirname(f.path), { recursive: true });
      fs.writeFileSync(f.path, f.content);
    }
    fs.mkdirSync(inv.logDir, { recursive: true });
    const before = new Set(fs.readdirSync(inv.logDir));
    const file = program === 'pgbench' ? this.opts.pgbench : program;
    const started = Date.now();
    return new Promise((resolve, reject) => {
      if (inv.signal?.aborted) {
        resolve({
          stdout: '',
          stderr: '',
          exitCode: null,
          timedOut: false,
          logFiles: [],
          cpuMaxPercent: null,
          aborted: true,
          wallMs: 0,
        });
        return;
      }
      const child = spawn(file, args, {
        cwd: inv.logDir,
        env: childEnv(null, inv.env),
        // Own process group: a terminal Ctrl-C reaches proxylab, which then stops pgbench itself.
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // If proxylab itself dies mid-step, do not leave pgbench running.
      const onExit = (): void => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      };
      process.once('exit', onExit);
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout?.on('data', (b: Buffer) => out.push(b));
      child.stderr?.on('data', (b: Buffer) => err.push(b));
      let timedOut = false;
      let aborted = false;
      let killTimer: NodeJS.Timeout | undefined;
      const kill = (): void => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        killTimer = setTimeout(() => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        }, this.killGraceMs);
      };
      const timeout = setTimeout(() => {
        timedOut = true;
        kill();
      }, inv.timeoutMs);
      const onAbort = (): void => {
        aborted = true;
        kill();
      };
      inv.signal?.addEventListener('abort', onAbort, { once: true });

      // CPU of the pgbench process (all its threads), percent of one core.
      let cpuMax: number | null = null;
      let lastTicks = child.pid ? readProcessCpuTicks(child.pid) : null;
      let lastAt = Date.now();
      const cpuTimer = setInterval(() => {
        if (!child.pid || lastTicks === null) return;
        const ticks = readProcessCpuTicks(child.pid);
        const now = Date.now();
        if (ticks === null) return;
        const pct = ((ticks - lastTicks) / LINUX_CLOCK_TICKS_PER_SECOND / ((now - lastAt) / 1000)) * 100;
        cpuMax = cpuMax === null ? pct : Math.max(cpuMax, pct);
        lastTicks = ticks;
        lastAt = now;
      }, this.cpuSampleMs);

      child.on('error', (e) => {
        process.removeListener('exit', onExit);
        clearTimeout(timeout);
        clearInterval(cpuTimer);
        inv.signal?.removeEventListener('abort', onAbort);
        reject(e);
      });
      child.on('close', (code, signal) => {
        process.removeListener('exit', onExit);
        clearTimeout(timeout);
        if (killTimer) clearTimeout(killTimer);
        clearInterval(cpuTimer);
        inv.signal?.removeEventListener('abort', onAbort);
        const logFiles = fs
          .readdirSync(inv.logDir)
          .filter((n) => !before.has(n) && isPgbenchLog(n))
          .sort(compareLogNames)
          .map((n) => fs.readFileSync(path.join(inv.logDir, n), 'utf8'));
        resolve({
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
          exitCode: code,
          signal,
          timedOut,
          logFiles,
          cpuMaxPercent: cpuMax === null ? null : Math.round(cpuMax * 10) / 10,
          aborted,
          wallMs: Date.now() - started,
        });
      });
    });
  }
}

/** pgbench names its logs `<prefix>.<pid>` and `<prefix>.<pid>.<thread>`. */
function isPgbenchLog(name: string): boolean {
  return /\.\d+(\.\d+)?$/.test(name);
}

/** Thread 0 (`x.123`) before thread 1 (`x.123.1`), numerically. */
function compareLogNames(a: string, b: string): number {
  const ta = /\.\d+\.(\d+)$/.exec(a);
  const tb = /\.\d+\.(\d+)$/.exec(b);
  return (ta ? Number(ta[1]) : 0) - (tb ? Number(tb[1]) : 0) || a.localeCompare(b);
}
