/**
 * The pooler matrix: when a run measured targets of several poolers / placements (direct, RDS
 * Proxy, PgBouncer on a dedicated host, PgBouncer co-located with the load, a local PgBouncer),
 * they are shown side by side per client count — TPS, p95 latency, the pooler's CPU and whether
 * the pooler was saturated. Pure: a loaded run in, rows out; the renderers only draw them.
 *
 * Pooler CPU (the contract of issue 12): metric series of a self-hosted pooler's source
 * (`pgbouncer`, `pgdoorman`), name `process_cpu_percent`, dimensions `{ pooler, process }`, percent
 * of ONE core per process. A step's figure is, per process, the mean of the points inside the
 * step's window, then the busiest process (a single-threaded PgBouncer tops out at one core
 * whatever the others do; PgDoorman's one process at 100 × its worker threads).
 * A repeated cell shows the busiest repetition. No points: unknown (null), never 0.
 */
import { busiestWindowMean, intervalsOfPoints } from '../core/stats';
import type { ErrorClass, MetricSeries, StepRecord, TargetRef } from '../suite/types';
import { SELF_HOSTED_POOLERS, targetInstance, targetProduct, type TargetDescriptor } from '../suite/targets';
import { type Cell, type Spread, uniqueInOrder } from './cells';
import type { LoadedRun } from './load';
import { fmtNumber, fmtSpread } from './format';

export const POOLER_CPU_METRIC = 'process_cpu_percent';

/** A series a self-hosted pooler yielded (its source is the pooler's product). */
function isPoolerSource(source: string): boolean {
  return (SELF_HOSTED_POOLERS as readonly string[]).includes(source);
}

/** One target of the matrix, labelled by what it is and where it runs. */
export interface PoolerColumn {
  readonly targetName: string;
  /** `direct`, `RDS Proxy`, `PgBouncer · dedicated host`, `PgBouncer · co-located`, `PgBouncer · local`. */
  readonly placementLabel: string;
  /** Session / transaction for PgBouncer; null otherwise. */
  readonly poolMode: string | null;
  /** PgBouncer processes sharing the port, when the run recorded it; null otherwise. */
  readonly processes: number | null;
  /** Worker threads of a multithreaded pooler's one process (PgDoorman), when recorded; null otherwise. */
  readonly workerThreads: number | null;
}

export interface PoolerMatrixCell {
  readonly tps: Spread | null;
  readonly latencyP95Ms: Spread | null;
  /** Busiest pooler process's mean CPU over the step (% of one core); null when not measured. */
  readonly poolerCpuPercent: number | null;
  /** true: some repetition's pooler was CPU-bound; false: measured and never; null: unknown / no pooler. */
  readonly poolerSaturated: boolean | null;
  readonly troubled: boolean;
  /** Error classes the step(s) recorded (summed over repetitions), e.g. `too-many-connections`. */
  readonly errorClasses: readonly ErrorClass[];
}

export interface PoolerMatrixRow {
  readonly clients: number;
  /** One per column; null where that target has no cell at this client count. */
  readonly cells: ReadonlyArray<PoolerMatrixCell | null>;
}

export interface PoolerMatrix {
  readonly scenario: string;
  /** protocol · connect · script (and pool %) when they distinguish several matrices of a scenario. */
  readonly variant: string;
  readonly columns: readonly PoolerColumn[];
  readonly rows: readonly PoolerMatrixRow[];
}

/** What kind of pooler sits where: the label a column carries. */
export function placementLabel(d: Pick<TargetDescriptor, 'kind' | 'placement' | 'capabilities'>): string {
  if (!d.capabilities.pooled) return 'direct';
  const product = targetProduct(d).label;
  const where: Record<Exclude<TargetDescriptor['placement'], 'managed'>, string> = {
    'dedicated-host': 'dedicated host',
    'co-located': 'co-located',
    local: 'local',
  };
  return d.placement === 'managed' ? product : `${product} · ${where[d.placement]}`;
}

/** A self-hosted pooler publishes its processes' CPU; a managed one (RDS Proxy) publishes none. */
function hasPoolerCpu(d: Pick<TargetDescriptor, 'placement' | 'capabilities'>): boolean {
  return d.capabilities.pooled && d.placement !== 'managed';
}

/** The pooler CPU series of the run (every metrics file). */
function poolerCpuSeries(run: LoadedRun): MetricSeries[] {
  return run.metrics.flatMap((m) =>
    m.file.series.filter(
      (s) => isPoolerSource(s.source) && s.name === POOLER_CPU_METRIC && s.points.length > 0,
    ),
  );
}

/**
 * Which series belong to a target: those whose `pooler` dimension is the target's instance, so a
 * series with `pooler: bouncer` belongs to `bouncer-session` and `bouncer-transaction`.
 */
function seriesOfTarget(series: readonly MetricSeries[], target: TargetRef): MetricSeries[] {
  const instance = targetInstance(target);
  return series.filter((s) => s.dimensions.pooler === instance);
}

/**
 * Busiest process's mean CPU over the step's window: each point stands for the interval since the
 * one before, weighted by its overlap with the step (windowMean, as the runner judges
 * poolerSaturated); null when no interval lies mostly inside the step — unknown, never 0.
 */
export function stepPoolerCpu(
  series: readonly MetricSeries[],
  step: Pick<StepRecord, 'startedAt' | 'endedAt'>,
) {
  const start = Date.parse(step.startedAt);
  const end = Date.parse(step.endedAt);
  if (!Number.isFinite(start) || !Number.isFinite(end)) return null;
  return busiestWindowMean(
    series.map((s) => intervalsOfPoints(s.points)),
    start,
    end,
  );
}

function saturatedOf(steps: readonly StepRecord[]): boolean | null {
  const flags = steps.map((s) => s.poolerSaturated ?? null);
  if (flags.some((f) => f === true)) return true;
  if (flags.some((f) => f === false)) return false;
  return null;
}

function matrixCell(cell: Cell, series: readonly MetricSeries[]): PoolerMatrixCell {
  const cpus = cell.steps.map((s) => stepPoolerCpu(series, s)).filter((v): v is number => v !== null);
  return {
    tps: cell.tps,
    latencyP95Ms: cell.latencyP95Ms,
    poolerCpuPercent: cpus.length > 0 ? Math.max(...cpus) : null,
    poolerSaturated: saturatedOf(cell.steps),
    troubled: cell.troubled,
    errorClasses: cell.errors.map((e) => e.class),
  };
}

/**
 * One matrix per scenario × protocol × connect × script × pool % in which targets of at least two
 * different poolers or placements were measured; none when the run has only one kind of target.
 */
export function poolerMatrices(run: LoadedRun, cells: readonly Cell[]): PoolerMatrix[] {
  const descriptor = (c: Cell) =>
    run.descriptorOf({ stepId: c.steps[0]?.stepId ?? '', target: c.key.target });
  const kinds = new Set(cells.map((c) => placementLabel(descriptor(c))));
  if (kinds.size < 2) return [];
  const series = poolerCpuSeries(run);
  const variantOf = (c: Cell) =>
    [
      c.key.protocol,
      c.key.connect === 'per-transaction' ? '-C' : 'persistent',
      c.key.script,
      ...(c.key.poolPercent !== null ? [`pool ${c.key.poolPercent}%`] : []),
      ...(c.key.preparedStatements !== null ? [`max_prepared_statements ${c.key.preparedStatements}`] : []),
    ].join(' · ');
  const out: PoolerMatrix[] = [];
  for (const scenario of uniqueInOrder(cells.map((c) => c.key.scenario))) {
    const inScenario = cells.filter((c) => c.key.scenario === scenario);
    for (const variant of uniqueInOrder(inScenario.map(variantOf))) {
      const own = inScenario.filter((c) => variantOf(c) === variant);
      const targets = uniqueInOrder(own.map((c) => c.key.target.name));
      const firsts = targets.map((name) => own.find((c) => c.key.target.name === name) as Cell);
      const columns = firsts.map((first): PoolerColumn => {
        const d = descriptor(first);
        return {
          targetName: first.key.target.name,
          placementLabel: placementLabel(d),
          poolMode: d.poolMode,
          processes: d.settings.processes ?? null,
          workerThreads: d.settings.workerThreads ?? null,
        };
      });
      if (new Set(columns.map((c) => c.placementLabel)).size < 2) continue;
      const clients = uniqueInOrder(own.map((c) => c.key.clients)).sort((a, b) => a - b);
      // only a self-hosted pooler has CPU series (RDS Proxy exposes none; direct has no pooler)
      const seriesOf = firsts.map((first) =>
        hasPoolerCpu(descriptor(first)) ? seriesOfTarget(series, first.key.target) : [],
      );
      const rows = clients.map((n) => ({
        clients: n,
        cells: targets.map((name, i) => {
          const cell = own.find((c) => c.key.clients === n && c.key.target.name === name);
          return cell ? matrixCell(cell, seriesOf[i] ?? []) : null;
        }),
      }));
      out.push({ scenario, variant, columns, rows });
    }
  }
  return out;
}

/**
 * A column head: `bouncer-session` + `PgBouncer · dedicated host, 4 processes, session pool`;
 * a multithreaded pooler's one process by its threads: `PgDoorman · local, 2 worker threads, …`.
 */
export function columnTitle(c: PoolerColumn): { name: string; what: string } {
  const processes =
    c.workerThreads !== null
      ? `, ${c.workerThreads} worker thread${c.workerThreads === 1 ? '' : 's'}`
      : c.processes === null
        ? ''
        : `, ${c.processes} process${c.processes === 1 ? '' : 'es'}`;
  return {
    name: c.targetName,
    what: `${c.placementLabel}${processes}${c.poolMode ? `, ${c.poolMode} pool` : ''}`,
  };
}

/** A Markdown column head: `bouncer-session (PgBouncer · dedicated host, session pool)`; `direct` alone. */
export function columnHeading(c: PoolerColumn): string {
  const { name, what } = columnTitle(c);
  return what === name ? name : `${name} (${what})`;
}

/**
 * A cell with no tps whose steps recorded errors: what happened instead of `? tps · p95 ? ms`.
 * `refused (too-many-connections)` for direct over max_connections; other classes `failed (…)`.
 * null when the cell has a tps or recorded no error (then it is shown as measured / unknown).
 */
export function noTpsOutcome(cell: PoolerMatrixCell): string | null {
  if (cell.tps !== null || cell.errorClasses.length === 0) return null;
  return cell.errorClasses.includes('too-many-connections')
    ? 'refused (too-many-connections)'
    : `failed (${cell.errorClasses.join(', ')})`;
}

/** `1,234 tps · p95 3.2 ms · CPU 87 % · saturated` (the parts that are known). */
export function cellText(cell: PoolerMatrixCell | null): string {
  if (cell === null) return '–';
  const outcome = noTpsOutcome(cell);
  if (outcome !== null) return outcome;
  const parts = [`${fmtSpread(cell.tps, 1)} tps`, `p95 ${fmtSpread(cell.latencyP95Ms)} ms`];
  if (cell.poolerCpuPercent !== null) parts.push(`pooler CPU ${fmtNumber(cell.poolerCpuPercent, 0)} %`);
  if (cell.poolerSaturated === true) parts.push('pooler saturated');
  else if (cell.poolerSaturated === false) parts.push('not saturated');
  return parts.join(' · ');
}
