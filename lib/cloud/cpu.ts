/**
 * Runner CPU guard: samples /proc/stat while pgbench runs and reports the busiest interval, so
 * the engine can flag a step whose load generator was saturated (the E1 write-up's laptop: 7–16 s
 * of schedule lag, i.e. the client was measured, not the proxy).
 */
import { readFile } from 'node:fs/promises';
import type { PgbenchExecutor, PgbenchInvocation, PgbenchOutcome } from '../engine/ports';

export interface CpuTimes {
  readonly busy: number;
  readonly total: number;
}

/** Parse the aggregate `cpu` line of /proc/stat. Busy = everything but idle and iowait. */
export function parseProcStat(text: string): CpuTimes | null {
  const line = text.split('\n').find((l) => /^cpu\s/.test(l));
  if (!line) return null;
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  if (fields.length < 4 || fields.some((f) => !Number.isFinite(f))) return null;
  // user nice system idle iowait irq softirq steal (guest, guest_nice are already in user/nice)
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  const total = user + nice + system + idle + iowait + irq + softirq + steal;
  return { busy: total - idle - iowait, total };
}

/** CPU busy % between two samples; null when no time passed. */
export function cpuPercent(before: CpuTimes, after: CpuTimes): number | null {
  const total = after.total - before.total;
  if (total <= 0) return null;
  return Math.max(0, Math.min(100, ((after.busy - before.busy) / total) * 100));
}

export type ProcStatReader = () => Promise<string | null>;

export const readProcStat: ProcStatReader = async () => {
  try {
    return await readFile('/proc/stat', 'utf8');
  } catch {
    return null; // not Linux: CPU is unknown, not 0
  }
};

/** Samples CPU every `intervalMs` until stopped; `stop()` gives the max busy % seen (null if unknown). */
export class CpuSampler {
  private timer: NodeJS.Timeout | null = null;
  private last: CpuTimes | null = null;
  private max: number | null = null;
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly read: ProcStatReader = readProcStat,
    private readonly intervalMs = 1000,
  ) {}

  async start(): Promise<void> {
    this.last = await this.sample();
    this.timer = setInterval(() => {
      this.pending = this.tick();
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<number | null> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.pending;
    await this.tick(); // the tail since the last tick
    return this.max;
  }

  private async sample(): Promise<CpuTimes | null> {
    const text = await this.read();
    return text === null ? null : parseProcStat(text);
  }

  private async tick(): Promise<void> {
    const now = await this.sample();
    if (this.last && now) {
      const pct = cpuPercent(this.last, now);
      if (pct !== null) this.max = this.max === null ? pct : Math.max(this.max, pct);
    }
    if (now) this.last = now;
  }
}

/**
 * Wraps an executor: samples this machine's CPU (all cores, from /proc/stat: 100 = every core
 * busy) during each pgbench run. The outcome's `cpuMaxPercent` is the higher of that and the inner
 * executor's own figure (the pgbench process, 100 = one core): either reaching the engine's 90 %
 * threshold means the load generator, not the target, was the limit — the whole runner busy, or
 * pgbench's threads using up what they can.
 */
export class CpuGuardExecutor implements PgbenchExecutor {
  constructor(
    private readonly inner: PgbenchExecutor,
    private readonly newSampler: () => CpuSampler = () => new CpuSampler(),
  ) {}

  workDir(name: string): Promise<string> {
    return this.inner.workDir(name);
  }

  async removeWorkDir(dir: string): Promise<void> {
    await this.inner.removeWorkDir?.(dir);
  }

  async run(invocation: PgbenchInvocation): Promise<PgbenchOutcome> {
    const sampler = this.newSampler();
    await sampler.start();
    let outcome: PgbenchOutcome;
    try {
      outcome = await this.inner.run(invocation);
    } catch (err) {
      await sampler.stop(); // never leave the timer running
      throw err;
    }
    const stopped = await sampler.stop();
    const machine = stopped === null ? null : Math.round(stopped * 10) / 10;
    const own = outcome.cpuMaxPercent ?? null;
    const cpuMaxPercent = own === null ? machine : machine === null ? own : Math.max(own, machine);
    return { ...outcome, cpuMaxPercent };
  }
}
