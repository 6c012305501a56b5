/**
 * One pooler sampler for local and cloud runs: the driver's stats statements (PgBouncer: SHOW POOLS /
 * SHOW STATS, parsed by lib/poolers/pgbouncer/driver.ts into PoolSample) on every process's admin
 * console (through a small port: local runs psql over each process's unix socket, the cloud over
 * TCP to the agent's admin relay ports) and each process's CPU (local: /proc/<pid>/stat; cloud: the
 * pooler agent's stats port), into the same MetricSeries shape.
 *
 * Processes are SUMMED into one series per database: gauges (cl_active, cl_waiting, sv_*) add up,
 * maxwait is the longest wait of any process, counters (total_xact_count, total_wait_time) add up
 * before the per-second rate. A poll in which any process did not answer records nothing for the
 * pools (a partial sum would read as a drop, and the next full one as a burst) and counts as failed.
 * CPU is kept PER PROCESS: `process_cpu_percent` {pooler, process}, percent of one core — a
 * single-threaded PgBouncer process is saturated at 100 whatever the host's core count; a
 * multithreaded one (PgDoorman) at 100 × its worker threads (the snapshot's coresPerProcess), and
 * its threads get `thread_cpu_percent` {pooler, process, thread} series too.
 */
import { busiestWindowMean, type SampledInterval } from '../core/stats';
import type { AdminRow, PoolSample, PoolerDriver } from '../poolers/driver';
import { POOL_GAUGES } from '../poolers/driver';
import type { MetricSeries, TargetRef } from '../suite/types';
import { PollLoop } from './poll-loop';
import type { MetricsSampler, PoolerSaturation } from './ports';
import { CPU_SATURATION_PERCENT } from '../suite/verdict';

export type { AdminRow } from '../poolers/driver';

/** "Run these admin console statements on process i": one row set per statement. */
export interface PoolerAdminPort {
  readonly processes: number;
  query(processIndex: number, statements: readonly string[], timeoutMs: number): Promise<AdminRow[][]>;
  close(): Promise<void>;
}

/** What the pooler agent's stats port answers (and the local /proc reader returns). */
export interface PoolerCpuSnapshot {
  readonly at: string;
  readonly clockTicksPerSecond: number;
  /**
   * Cores one process can keep busy (the driver's coresPerProcess: 1 for PgBouncer, PgDoorman's
   * worker threads). Absent: 1 (agents before multithreaded products).
   */
  readonly coresPerProcess?: number;
  readonly processes: ReadonlyArray<{
    readonly index: number;
    readonly pid: number;
    readonly cpuTicks: number;
    /** Each thread's ticks (/proc/<pid>/task/<tid>/stat), for a multithreaded product; absent otherwise. */
    readonly threads?: ReadonlyArray<{
      readonly tid: number;
      readonly name: string;
      readonly cpuTicks: number;
    }>;
  }>;
}

export type PoolerCpuReader = () => Promise<PoolerCpuSnapshot | null>;

export interface PoolerMetricsOptions {
  /** The pooler's name (dimension `pooler`). */
  readonly pooler: string;
  readonly admin: PoolerAdminPort;
  /** The product's stats statements and their parser (PoolerDriver['stats']). */
  readonly stats: PoolerDriver['stats'];
  /** The product (its driver's), the `source` of every series this pooler yields. */
  readonly product: PoolerDriver['product'];
  readonly cpu?: PoolerCpuReader;
  /** Pooler database → pool mode (dimension `pool_mode`). */
  readonly pools: Readonly<Record<string, string>>;
  /** Names of the targets this pooler serves (for poolerCpuPercent). */
  readonly targets: readonly string[];
  readonly now?: () => number;
  readonly timeoutMs?: number;
}

interface Acc {
  readonly source: MetricSeries['source'];
  readonly name: string;
  readonly stat: string;
  readonly unit: string | null;
  readonly dimensions: Readonly<Record<string, string>>;
  readonly points: Array<readonly [string, number]>;
}

/** Series under construction: gauges as read, counters as per-second rates between two reads. */
export class SeriesAccumulator {
  private readonly acc = new Map<string, Acc>();
  private readonly lastCounters = new Map<string, { at: number; value: number }>();

  push(
    source: MetricSeries['source'],
    name: string,
    stat: string,
    unit: string | null,
    dimensions: Record<string, string>,
    at: string,
    value: number,
  ): void {
    const key = `${source}|${name}|${stat}|${JSON.stringify(dimensions)}`;
    let a = this.acc.get(key);
    if (!a) {
      a = { source, name, stat, unit, dimensions, points: [] };
      this.acc.set(key, a);
    }
    a.points.push([at, Math.round(value * 1000) / 1000]);
  }

  /** Counter → per-second rate since the previous read (none on the first read or after a reset). */
  rate(
    source: MetricSeries['source'],
    name: string,
    dimensions: Record<string, string>,
    atMs: number,
    value: number,
    unit = 'count/s',
  ): void {
    const key = `${source}|${name}|${JSON.stringify(dimensions)}`;
    const prev = this.lastCounters.get(key);
    this.lastCounters.set(key, { at: atMs, value });
    if (!prev || value < prev.value || atMs <= prev.at) return;
    this.push(
      source,
      name,
      'rate',
      unit,
      dimensions,
      new Date(atMs).toISOString(),
      (value - prev.value) / ((atMs - prev.at) / 1000),
    );
  }

  has(source: MetricSeries['source']): boolean {
    return [...this.acc.values()].some((a) => a.source === source);
  }

  series(): MetricSeries[] {
    return [...this.acc.values()].map((a) => ({
      ...a,
      points: [...a.points],
      status: a.points.length > 0 ? ('ok' as const) : ('no-data' as const),
    }));
  }
}

/**
 * CPU % of one core per thread between two snapshots (processes that report threads); a thread that
 * is new, or a process whose pid changed, is skipped.
 */
export function threadCpuPercents(
  before: PoolerCpuSnapshot,
  after: PoolerCpuSnapshot,
): Array<{ index: number; tid: number; name: string; percent: number }> {
  const seconds = (Date.parse(after.at) - Date.parse(before.at)) / 1000;
  if (!(seconds > 0) || !(after.clockTicksPerSecond > 0)) return [];
  const out: Array<{ index: number; tid: number; name: string; percent: number }> = [];
  for (const p of after.processes) {
    const b = before.processes.find((x) => x.index === p.index && x.pid === p.pid);
    for (const t of p.threads ?? []) {
      const bt = b?.threads?.find((x) => x.tid === t.tid);
      if (!bt || t.cpuTicks < bt.cpuTicks) continue;
      out.push({
        index: p.index,
        tid: t.tid,
        name: t.name,
        percent: ((t.cpuTicks - bt.cpuTicks) / after.clockTicksPerSecond / seconds) * 100,
      });
    }
  }
  return out;
}

/** CPU % of one core per process between two snapshots; a process whose pid changed is skipped. */
export function processCpuPercents(
  before: PoolerCpuSnapshot,
  after: PoolerCpuSnapshot,
): Array<{ index: number; percent: number }> {
  const seconds = (Date.parse(after.at) - Date.parse(before.at)) / 1000;
  if (!(seconds > 0) || !(after.clockTicksPerSecond > 0)) return [];
  const out: Array<{ index: number; percent: number }> = [];
  for (const p of after.processes) {
    const b = before.processes.find((x) => x.index === p.index && x.pid === p.pid);
    if (!b || p.cpuTicks < b.cpuTicks) continue;
    out.push({
      index: p.index,
      percent: ((p.cpuTicks - b.cpuTicks) / after.clockTicksPerSecond / seconds) * 100,
    });
  }
  return out;
}

/** SHOW POOLS/STATS of every process summed per database, CPU per process. */
export class PoolerMetrics {
  private readonly acc = new SeriesAccumulator();
  /** Per process: percent of one core between two snapshots. */
  private readonly cpuIntervals = new Map<number, SampledInterval[]>();
  /** End of the last CPU interval (ms); null before the second snapshot. */
  private cpuCoveredToMs: number | null = null;
  private lastCpu: PoolerCpuSnapshot | null = null;
  private polls = 0;
  private failures = 0;
  private lastError = '';
  private cpuFailures = 0;
  private cpuLastError = '';
  /** Cores one process can keep busy, as the last CPU snapshot said (1 until one says more). */
  private cores = 1;

  constructor(private readonly opts: PoolerMetricsOptions) {}

  get name(): string {
    return this.opts.pooler;
  }

  /** The product (the driver's) and the cores one of its processes can use, for the saturation note. */
  get cpuScale(): { readonly product: PoolerDriver['product']; readonly cores: number } {
    return { product: this.opts.product, cores: this.cores };
  }

  serves(target: TargetRef): boolean {
    return this.opts.targets.includes(target.name);
  }

  async poll(): Promise<void> {
    this.polls++;
    const now = this.opts.now ?? Date.now;
    const atMs = now();
    const at = new Date(atMs).toISOString();
    const timeout = this.opts.timeoutMs ?? 5000;
    const [answers] = await Promise.all([
      Promise.allSettled(
        Array.from({ length: this.opts.admin.processes }, (_, i) =>
          this.opts.admin.query(i, this.opts.stats.statements, timeout),
        ),
      ),
      this.pollCpu(),
    ]);
    const failed = answers.find((a): a is PromiseRejectedResult => a.status === 'rejected');
    if (failed) {
      this.failures++;
      this.lastError = failed.reason instanceof Error ? failed.reason.message : String(failed.reason);
      return;
    }
    const perProcess = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
    this.record(this.opts.stats.parse(perProcess, Object.keys(this.opts.pools)), at, atMs);
  }

  /** Read CPU now (every poll does; poolerSaturation once more when a step ended after the last read). */
  async pollCpu(): Promise<void> {
    if (!this.opts.cpu) return;
    let snap: PoolerCpuSnapshot | null;
    try {
      snap = await this.opts.cpu();
    } catch (err) {
      this.cpuFailures++;
      this.cpuLastError = err instanceof Error ? err.message : String(err);
      return;
    }
    if (snap === null) {
      this.cpuFailures++;
      this.cpuLastError = 'no CPU figures (process gone or not readable)';
      return;
    }
    if (this.lastCpu) {
      const fromMs = Date.parse(this.lastCpu.at);
      const toMs = Date.parse(snap.at);
      // saturation is judged per core a process can use (a multithreaded process: its worker threads)
      const cores = Math.max(1, snap.coresPerProcess ?? 1);
      this.cores = cores;
      for (const p of processCpuPercents(this.lastCpu, snap)) {
        const list = this.cpuIntervals.get(p.index) ?? [];
        list.push({ fromMs, toMs, value: p.percent / cores });
        this.cpuIntervals.set(p.index, list);
        this.cpuCoveredToMs = toMs;
        this.acc.push(
          this.opts.product,
          'process_cpu_percent',
          'value',
          'percent',
          { pooler: this.opts.pooler, process: String(p.index) },
          snap.at,
          p.percent,
        );
      }
      for (const t of threadCpuPercents(this.lastCpu, snap))
        this.acc.push(
          this.opts.product,
          'thread_cpu_percent',
          'value',
          'percent',
          { pooler: this.opts.pooler, process: String(t.index), thread: `${t.name}-${t.tid}` },
          snap.at,
          t.percent,
        );
    }
    this.lastCpu = snap;
  }

  private record(samples: readonly PoolSample[], at: string, atMs: number): void {
    for (const sample of samples) {
      const mode = this.opts.pools[sample.database];
      if (mode === undefined) continue;
      const dims = { pooler: this.opts.pooler, database: sample.database, pool_mode: mode };
      for (const g of POOL_GAUGES)
        this.acc.push(this.opts.product, g, 'value', 'count', dims, at, sample.gauges[g] ?? 0);
      this.acc.push(this.opts.product, 'maxwait', 'value', 'ms', dims, at, sample.maxWaitMs);
      if (sample.transactions !== null)
        this.acc.rate(this.opts.product, 'total_xact_count', dims, atMs, sample.transactions);
      // microseconds clients spent waiting, per second of wall time (not a count)
      if (sample.waitTimeUs !== null)
        this.acc.rate(this.opts.product, 'total_wait_time_us', dims, atMs, sample.waitTimeUs, 'us/s');
    }
  }

  /**
   * The busiest process's average CPU over [start, end] (percent of the cores it can use: one core
   * for a single-threaded product, its worker threads for a multithreaded one): windowMean of its
   * sampled intervals (weighted by overlap; an interval mostly outside the step left out); null
   * when no interval qualifies (a step shorter than half a sampling interval: unknown, not 0).
   */
  cpuAverage(start: string, end: string): number | null {
    return busiestWindowMean(this.cpuIntervals.values(), Date.parse(start), Date.parse(end));
  }

  /** Covered up to `end`? (else the caller polls CPU once more before judging the step). */
  cpuCovers(end: string): boolean {
    return this.cpuCoveredToMs !== null && this.cpuCoveredToMs >= Date.parse(end);
  }

  series(): MetricSeries[] {
    const out = this.acc.series();
    const dims = { pooler: this.opts.pooler };
    if (this.failures > 0 && !out.some((s) => s.name !== 'process_cpu_percent')) {
      out.push({
        source: this.opts.product,
        name: 'poll',
        stat: 'error',
        unit: null,
        dimensions: dims,
        points: [],
        status: 'error',
        reason: `${this.failures} of ${this.polls} polls failed: ${this.lastError}`,
      });
    }
    if (this.opts.cpu && this.cpuFailures > 0 && !out.some((s) => s.name === 'process_cpu_percent')) {
      out.push({
        source: this.opts.product,
        name: 'process_cpu_percent',
        stat: 'value',
        unit: 'percent',
        dimensions: dims,
        points: [],
        status: 'error',
        reason: `${this.cpuFailures} of ${this.polls} CPU reads failed: ${this.cpuLastError}`,
      });
    }
    return out;
  }

  close(): Promise<void> {
    return this.opts.admin.close();
  }
}

/**
 * poolerSaturated for a step on `target`: true when the busiest process of the pooler serving it
 * averaged ≥ CPU_SATURATION_PERCENT (the load generator's threshold) of the cores it can use over
 * the step (one for PgBouncer, its worker threads for PgDoorman: `cores`), false below, null when
 * no pooler serves the target or its CPU was not measured.
 */
export async function poolerSaturation(
  poolers: readonly PoolerMetrics[],
  target: TargetRef,
  start: string,
  end: string,
): Promise<PoolerSaturation> {
  const p = poolers.find((x) => x.serves(target));
  if (!p) return { saturated: null, percent: null };
  if (!p.cpuCovers(end)) await p.pollCpu();
  const percent = p.cpuAverage(start, end);
  if (percent === null) return { saturated: null, percent: null };
  return {
    saturated: percent >= CPU_SATURATION_PERCENT,
    percent: Math.round(percent * 10) / 10,
    ...p.cpuScale,
  };
}

/**
 * A MetricsSampler over one or more poolers (the cloud runner's; local folds PoolerMetrics into its
 * own sampler): polls every `intervalMs`, never overlapping.
 */
export class PoolerSampler {
  private readonly loop: PollLoop;

  constructor(
    readonly poolers: readonly PoolerMetrics[],
    intervalMs = 1000,
  ) {
    this.loop = new PollLoop(() => this.pollAll(), intervalMs, true);
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  markStep(): void {
    // step windows come from the step records
  }

  poolerSaturation(target: TargetRef, start: string, end: string): ReturnType<typeof poolerSaturation> {
    return poolerSaturation(this.poolers, target, start, end);
  }

  snapshot(): MetricSeries[] {
    return this.poolers.flatMap((p) => p.series());
  }

  async stop(): Promise<MetricSeries[]> {
    await this.loop.stop();
    await Promise.all(this.poolers.map((p) => p.close().catch(() => undefined)));
    return this.snapshot();
  }

  private async pollAll(): Promise<void> {
    await Promise.all(this.poolers.map((p) => p.poll()));
  }
}

/** A sampler that is `base` plus the poolers' series and their saturation judgement. */
export function withPoolerSampler(base: MetricsSampler, poolers: PoolerSampler | null): MetricsSampler {
  if (poolers === null || poolers.poolers.length === 0) return base;
  return {
    start: async () => {
      await base.start();
      await poolers.start();
    },
    markStep: (stepId, phase) => base.markStep(stepId, phase),
    snapshot: () => [...(base.snapshot?.() ?? []), ...poolers.snapshot()],
    poolerSaturation: (target, start, end) => poolers.poolerSaturation(target, start, end),
    stop: async () => {
      const [a, b] = await Promise.all([base.stop(), poolers.stop()]);
      return [...a, ...b];
    },
  };
}
