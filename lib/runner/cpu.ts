/**
 * Runner CPU guard: samples /proc/stat while pgbench runs and reports the busiest interval, so
 * the engine can flag a step whose load generator was saturated (the E1 write-up's laptop: 7–16 s
 * of schedule lag, i.e. the client was measured, not the proxy).
 */
import { readFile } from 'node:fs/promises';
import type { MetricsSampler, PgbenchExecutor, PgbenchInvocation, PgbenchOutcome } from '../engine/ports';
import type { MetricSeries } from '../suite/types';

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

const readProcStat: ProcStatReader = async () => {
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

/**
 * MetricsSampler for the runner itself: whole-machine CPU % every `intervalMs`, as one
 * `source: 'runner'` series (metrics/runner.json; other fleet runners write runner-runner-<i>.json),
 * so the report can show the load generator next to the database.
 */
export class RunnerCpuMetricsSampler implements MetricsSampler {
  private timer: NodeJS.Timeout | null = null;
  private last: CpuTimes | null = null;
  private readonly points: Array<readonly [string, number]> = [];

  constructor(
    private readonly runnerId: string,
    private readonly read: ProcStatReader = readProcStat,
    private readonly intervalMs = 5000,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async start(): Promise<void> {
    this.last = await this.sample();
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  markStep(): void {
    // step windows come from the step records; nothing to mark on a CPU series
  }

  snapshot(): MetricSeries[] {
    return [this.series()];
  }

  async stop(): Promise<MetricSeries[]> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.tick();
    return [this.series()];
  }

  private series(): MetricSeries {
    const base = {
      source: 'runner' as const,
      name: 'CPUUtilization',
      stat: 'Average',
      unit: 'Percent',
      dimensions: { runner: this.runnerId },
    };
    return this.points.length > 0
      ? { ...base, points: [...this.points], status: 'ok' }
      : { ...base, points: [], status: 'no-data', reason: '/proc/stat unreadable or no interval elapsed' };
  }

  private async sample(): Promise<CpuTimes | null> {
    const text = await this.read();
    return text === null ? null : parseProcStat(text);
  }

  private async tick(): Promise<void> {
    const cur = await this.sample();
    if (this.last && cur) {
      const pct = cpuPercent(this.last, cur);
      if (pct !== null) this.points.push([this.now().toISOString(), Math.round(pct * 10) / 10]);
    }
    if (cur) this.last = cur;
  }
}
