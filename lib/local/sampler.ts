/**
 * MetricsSampler for the local stand-in: once a second, every pooler's (each PgBouncer process's,
 * PgDoorman's) admin console (`SHOW POOLS`, `SHOW STATS`) and CPU through the shared pooler sampler (lib/engine/pooler-metrics.ts:
 * pools summed across processes, CPU per process from /proc/<pid>/stat), the server's
 * `pg_stat_database` row for the bench database, and this machine's CPU (/proc/stat). Gauges are
 * stored as read; counters become per-second rates between two polls. Polls never overlap; a failed
 * poll is counted and the series says so when it has no points.
 */
import * as fs from 'node:fs';
import { numericCell as num } from '../core/psql-text';
import {
  PoolerMetrics,
  poolerSaturation,
  SeriesAccumulator,
  type PoolerCpuSnapshot,
} from '../engine/pooler-metrics';
import { PollLoop } from '../engine/poll-loop';
import type { MetricsSampler, PoolerSaturation, StepWindow } from '../engine/ports';
import { LINUX_CLOCK_TICKS_PER_SECOND, processCpuTicks } from '../core/proc-stat';
import type { MetricSeries, TargetRef } from '../suite/types';
import { PsqlSession, type PsqlTarget } from '../exec/psql';
import type { PoolerProduct } from '../poolers/products';
import { poolerDriver } from '../poolers/registry';

/** One pooler of the stack, as the sampler reads it. */
export interface LocalSamplerPooler {
  /** Its instance name (the series' `pooler` dimension). */
  readonly name: string;
  readonly product: PoolerProduct;
  /** Admin console of each process (its unix socket), in process order. */
  readonly admins: readonly PsqlTarget[];
  /** Process ids, in process order (CPU from /proc/<pid>/stat). */
  readonly pids: readonly number[];
  /** Targets it serves (poolerSaturated is judged for their steps). */
  readonly targets: readonly string[];
  /** Pooler database → pool mode, for dimensions. */
  readonly pools: Readonly<Record<string, string>>;
  /** Cores one process can keep busy (the driver's coresPerProcess). @default 1 */
  readonly coresPerProcess?: number;
  /** Read each thread's CPU too (a multithreaded product). @default false */
  readonly threads?: boolean;
}

export interface LocalSamplerOptions {
  readonly poolers: readonly LocalSamplerPooler[];
  /** Superuser connection to the server (uses a reserved slot, so it works while bench is refused). */
  readonly server: PsqlTarget;
  /** Database name in pg_stat_database. */
  readonly datname: string;
  readonly intervalMs?: number;
}

/** Machine CPU busy ticks and total ticks from /proc/stat; null when unavailable. */
function readMachineCpu(): { busy: number; total: number } | null {
  let text: string;
  try {
    text = fs.readFileSync('/proc/stat', 'utf8');
  } catch {
    return null;
  }
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return null;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  const total = f.slice(0, 8).reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
  return { busy: total - idle, total };
}

/** Each thread of `pid`: ticks and name (/proc/<pid>/task); [] when unreadable. */
function readThreads(pid: number): Array<{ tid: number; name: string; cpuTicks: number }> {
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tids.flatMap((t) => {
    try {
      const ticks = processCpuTicks(fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8'));
      const name = fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim();
      return ticks === null ? [] : [{ tid: Number(t), name, cpuTicks: ticks }];
    } catch {
      return []; // gone meanwhile
    }
  });
}

/** CPU ticks of each pooler process (and thread) from /proc; null when none could be read (not Linux). */
function readLocalPoolerCpu(
  p: Pick<LocalSamplerPooler, 'pids' | 'coresPerProcess' | 'threads'>,
  now: () => Date = () => new Date(),
): PoolerCpuSnapshot | null {
  const processes: Array<PoolerCpuSnapshot['processes'][number]> = [];
  p.pids.forEach((pid, index) => {
    try {
      const ticks = processCpuTicks(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
      if (ticks !== null)
        processes.push({ index, pid, cpuTicks: ticks, ...(p.threads ? { threads: readThreads(pid) } : {}) });
    } catch {
      /* gone or not Linux: this process is unknown */
    }
  });
  if (processes.length === 0) return null;
  return {
    at: now().toISOString(),
    clockTicksPerSecond: LINUX_CLOCK_TICKS_PER_SECOND,
    ...(p.coresPerProcess !== undefined ? { coresPerProcess: p.coresPerProcess } : {}),
    processes,
  };
}

export class LocalMetricsSampler implements MetricsSampler {
  private readonly acc = new SeriesAccumulator();
  private readonly marks: Array<{ stepId: string; phase: 'start' | 'end'; at: string }> = [];
  private readonly loop: PollLoop;
  private lastCpu: { busy: number; total: number } | null = null;
  private errors = 0;
  private lastError = '';
  private polls = 0;
  private readonly serverSession: PsqlSession;
  readonly poolers: readonly PoolerMetrics[];

  constructor(private readonly opts: LocalSamplerOptions) {
    this.poolers = opts.poolers.map((p) => {
      // Long-lived connections: a new psql process and server backend every second costs the
      // benchmark it is watching (measured: ~13 % tps on 2 cores for a select-only run).
      const sessions = p.admins.map((a) => new PsqlSession(a));
      const driver = poolerDriver(p.product);
      return new PoolerMetrics({
        pooler: p.name,
        product: driver.product,
        stats: driver.stats,
        admin: {
          processes: sessions.length,
          query: (i, statements, timeoutMs) => {
            const session = sessions[i];
            if (!session) return Promise.reject(new Error(`no ${driver.displayName} process ${i}`));
            return session.query(statements, timeoutMs);
          },
          close: async () => {
            await Promise.all(sessions.map((x) => x.close()));
          },
        },
        cpu: () => Promise.resolve(readLocalPoolerCpu(p)),
        pools: p.pools,
        targets: p.targets,
      });
    });
    this.serverSession = new PsqlSession(opts.server);
    this.loop = new PollLoop(() => this.poll(), opts.intervalMs ?? 1000);
  }

  poolerSaturation(target: TargetRef, start: string, end: string): Promise<PoolerSaturation> {
    return poolerSaturation(this.poolers, target, start, end);
  }

  async start(): Promise<void> {
    this.lastCpu = readMachineCpu();
    await this.loop.start();
  }

  markStep(stepId: string, phase: 'start' | 'end'): void {
    this.marks.push({ stepId, phase, at: new Date().toISOString() });
  }

  /** Step windows from the marks (start/end pairs). */
  windows(describe: (stepId: string) => { scenario: string; target: string }): StepWindow[] {
    const out: StepWindow[] = [];
    const open = new Map<string, string>();
    for (const m of this.marks) {
      if (m.phase === 'start') open.set(m.stepId, m.at);
      else {
        const start = open.get(m.stepId);
        if (start) out.push({ stepId: m.stepId, ...describe(m.stepId), start, end: m.at });
      }
    }
    return out;
  }

  snapshot(): MetricSeries[] {
    const series = [...this.poolers.flatMap((p) => p.series()), ...this.acc.series()];
    if (this.errors > 0 && !this.acc.has('pg_stat_database')) {
      series.push({
        source: 'pg_stat_database',
        name: 'poll',
        stat: 'error',
        unit: null,
        dimensions: {},
        points: [],
        status: 'error',
        reason: `${this.errors} of ${this.polls} polls failed: ${this.lastError}`,
      });
    }
    return series;
  }

  async stop(): Promise<MetricSeries[]> {
    await this.loop.stop();
    await Promise.all([...this.poolers.map((p) => p.close()), this.serverSession.close()]);
    return this.snapshot();
  }

  private async poll(): Promise<void> {
    this.polls++;
    const atMs = Date.now();
    const at = new Date(atMs).toISOString();
    const [, server] = await Promise.allSettled([
      Promise.all(this.poolers.map((p) => p.poll())),
      this.serverSession.query(
        [
          `SELECT numbackends, xact_commit, xact_rollback FROM pg_stat_database WHERE datname = '${this.opts.datname.replace(/'/g, "''")}'`,
        ],
        5000,
      ),
    ]);
    if (server.status === 'fulfilled') {
      const row = server.value[0]?.[0];
      if (row) {
        const dims = { datname: this.opts.datname };
        const backends = num(row.numbackends);
        if (backends !== null)
          this.acc.push('pg_stat_database', 'numbackends', 'value', 'count', dims, at, backends);
        const commit = num(row.xact_commit);
        if (commit !== null) this.acc.rate('pg_stat_database', 'xact_commit', dims, atMs, commit);
        const rollback = num(row.xact_rollback);
        if (rollback !== null) this.acc.rate('pg_stat_database', 'xact_rollback', dims, atMs, rollback);
      }
    } else {
      this.errors++;
      this.lastError = String((server.reason as Error).message ?? server.reason);
    }
    const cpu = readMachineCpu();
    if (cpu && this.lastCpu && cpu.total > this.lastCpu.total) {
      this.acc.push(
        'runner',
        'cpu_percent',
        'value',
        'percent',
        { host: 'local' },
        at,
        ((cpu.busy - this.lastCpu.busy) / (cpu.total - this.lastCpu.total)) * 100,
      );
    }
    this.lastCpu = cpu;
  }
}
