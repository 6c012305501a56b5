/**
 * MetricsSampler for the local stand-in: once a second, PgBouncer's admin console (`SHOW POOLS`,
 * `SHOW STATS`), the server's `pg_stat_database` row for the bench database, and this machine's
 * CPU (/proc/stat). Gauges are stored as read; counters become per-second rates between two polls.
 * Polls never overlap; a failed poll is counted and the series says so when it has no points.
 */
import * as fs from 'node:fs';
import type { MetricsSampler, StepWindow } from '../engine/ports';
import type { MetricSeries } from '../suite/types';
import { PsqlSession, type PsqlTarget, type Row } from './psql';

export interface LocalSamplerOptions {
  /** PgBouncer admin console. */
  readonly admin: PsqlTarget;
  /** Superuser connection to the server (uses a reserved slot, so it works while bench is refused). */
  readonly server: PsqlTarget;
  /** Database name in pg_stat_database. */
  readonly datname: string;
  /** PgBouncer database → pool mode, for dimensions. */
  readonly pools: Readonly<Record<string, string>>;
  readonly intervalMs?: number;
}

type Key = string;

interface Acc {
  readonly source: MetricSeries['source'];
  readonly name: string;
  readonly stat: string;
  readonly unit: string | null;
  readonly dimensions: Readonly<Record<string, string>>;
  readonly points: Array<readonly [string, number]>;
}

const POOL_GAUGES = ['cl_active', 'cl_waiting', 'sv_active', 'sv_idle', 'sv_used', 'sv_login'] as const;

function num(v: string | undefined): number | null {
  if (v === undefined || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
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

export class LocalMetricsSampler implements MetricsSampler {
  private readonly acc = new Map<Key, Acc>();
  private readonly lastCounters = new Map<Key, { at: number; value: number }>();
  private readonly marks: Array<{ stepId: string; phase: 'start' | 'end'; at: string }> = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | null = null;
  private lastCpu: { busy: number; total: number } | null = null;
  private errors = { pgbouncer: 0, pg_stat_database: 0 };
  private lastError: { pgbouncer: string; pg_stat_database: string } = {
    pgbouncer: '',
    pg_stat_database: '',
  };
  private polls = 0;
  private readonly adminSession: PsqlSession;
  private readonly serverSession: PsqlSession;

  constructor(private readonly opts: LocalSamplerOptions) {
    // Long-lived connections: a new psql process and server backend every second costs the
    // benchmark it is watching (measured: ~13 % tps on 2 cores for a select-only run).
    this.adminSession = new PsqlSession(opts.admin);
    this.serverSession = new PsqlSession(opts.server);
  }

  async start(): Promise<void> {
    this.lastCpu = readMachineCpu();
    await this.poll();
    this.timer = setInterval(() => {
      if (this.inFlight) return; // a slow poll: skip this tick rather than pile up
      this.inFlight = this.poll().finally(() => {
        this.inFlight = null;
      });
    }, this.opts.intervalMs ?? 1000);
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
    const series: MetricSeries[] = [];
    for (const a of this.acc.values()) {
      series.push({ ...a, points: [...a.points], status: a.points.length > 0 ? 'ok' : 'no-data' });
    }
    for (const source of ['pgbouncer', 'pg_stat_database'] as const) {
      if (this.errors[source] > 0 && ![...this.acc.values()].some((a) => a.source === source)) {
        series.push({
          source,
          name: 'poll',
          stat: 'error',
          unit: null,
          dimensions: {},
          points: [],
          status: 'error',
          reason: `${this.errors[source]} of ${this.polls} polls failed: ${this.lastError[source]}`,
        });
      }
    }
    return series;
  }

  async stop(): Promise<MetricSeries[]> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.inFlight) await this.inFlight;
    await Promise.all([this.adminSession.close(), this.serverSession.close()]);
    return this.snapshot();
  }

  private push(
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

  /** Counter → per-second rate since the previous poll (none on the first poll or after a reset). */
  private rate(
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

  private async poll(): Promise<void> {
    this.polls++;
    const atMs = Date.now();
    const at = new Date(atMs).toISOString();
    const [bouncer, server] = await Promise.allSettled([
      this.adminSession.query(['SHOW POOLS', 'SHOW STATS'], 5000),
      this.serverSession.query(
        [
          `SELECT numbackends, xact_commit, xact_rollback FROM pg_stat_database WHERE datname = '${this.opts.datname.replace(/'/g, "''")}'`,
        ],
        5000,
      ),
    ]);
    if (bouncer.status === 'fulfilled')
      this.recordPgbouncer(bouncer.value[0] ?? [], bouncer.value[1] ?? [], at, atMs);
    else {
      this.errors.pgbouncer++;
      this.lastError.pgbouncer = String((bouncer.reason as Error).message ?? bouncer.reason);
    }
    if (server.status === 'fulfilled') {
      const row = server.value[0]?.[0];
      if (row) {
        const dims = { datname: this.opts.datname };
        const backends = num(row.numbackends);
        if (backends !== null)
          this.push('pg_stat_database', 'numbackends', 'value', 'count', dims, at, backends);
        const commit = num(row.xact_commit);
        if (commit !== null) this.rate('pg_stat_database', 'xact_commit', dims, atMs, commit);
        const rollback = num(row.xact_rollback);
        if (rollback !== null) this.rate('pg_stat_database', 'xact_rollback', dims, atMs, rollback);
      }
    } else {
      this.errors.pg_stat_database++;
      this.lastError.pg_stat_database = String((server.reason as Error).message ?? server.reason);
    }
    const cpu = readMachineCpu();
    if (cpu && this.lastCpu && cpu.total > this.lastCpu.total) {
      this.push(
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

  private recordPgbouncer(pools: readonly Row[], stats: readonly Row[], at: string, atMs: number): void {
    for (const [db, mode] of Object.entries(this.opts.pools)) {
      const dims = { database: db, pool_mode: mode };
      // A pool appears in SHOW POOLS only once used; before that every gauge is truly 0.
      const rows = pools.filter((r) => r.database === db);
      for (const g of POOL_GAUGES) {
        const values = rows.map((r) => num(r[g])).filter((v): v is number => v !== null);
        this.push(
          'pgbouncer',
          g,
          'value',
          'count',
          dims,
          at,
          values.reduce((a, b) => a + b, 0),
        );
      }
      const waits = rows.map((r) => (num(r.maxwait) ?? 0) * 1000 + (num(r.maxwait_us) ?? 0) / 1000);
      this.push('pgbouncer', 'maxwait', 'value', 'ms', dims, at, waits.length ? Math.max(...waits) : 0);
      const st = stats.find((r) => r.database === db);
      if (st) {
        const xacts = num(st.total_xact_count);
        if (xacts !== null) this.rate('pgbouncer', 'total_xact_count', dims, atMs, xacts);
        const waitUs = num(st.total_wait_time);
        // microseconds clients spent waiting, per second of wall time (not a count)
        if (waitUs !== null) this.rate('pgbouncer', 'total_wait_time_us', dims, atMs, waitUs, 'us/s');
      }
    }
  }
}
