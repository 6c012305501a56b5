/**
 * The added-latency table (pure): for the LATENCY scenarios (lib/suite/experiments/latency.ts),
 * each target's p50 and p99 minus direct's, repetition by repetition — repetition r of a target ran
 * right after repetition r of direct, same protocol, same run — then the median and the range of
 * those differences. Milliseconds, shown in µs below 1 ms. In the cloud, the run's zones beside it
 * (RunEnvironment.zones): a runner in another zone than the writer pays the hop on every target.
 */
import { orderStats } from '../core/stats';
import type { ComponentZone, Protocol, StepRecord } from '../suite/types';
import { spreadOf, type Spread, uniqueInOrder } from './cells';
import type { LoadedRun } from './load';
import { placementLabel } from './pooler-matrix';

export interface LatencyRow {
  readonly scenario: string;
  /** `back to back` or `500/s`. */
  readonly mode: string;
  readonly protocol: Protocol;
  readonly target: string;
  /** What the target is (`PgBouncer · local`, `RDS Proxy`), with its pool mode. */
  readonly what: string;
  readonly directP50Ms: Spread | null;
  readonly directP99Ms: Spread | null;
  readonly p50Ms: Spread | null;
  readonly p99Ms: Spread | null;
  /** Target minus direct per repetition; best = the smallest addition. null: no repetition with both. */
  readonly addedP50Ms: Spread | null;
  readonly addedP99Ms: Spread | null;
  /** Some repetition of either side did not complete cleanly (its figures are left out). */
  readonly troubled: boolean;
}

export interface LatencyTable {
  readonly rows: readonly LatencyRow[];
  /** The run's zones (cloud), null when it recorded none. */
  readonly zones: readonly ComponentZone[] | null;
  /** A sentence when the runner and the writer are in different zones, else null. */
  readonly zoneNote: string | null;
}

/** `84 µs`, `1.27 ms`, `+84 µs`; unknown `?`. */
export function fmtLatency(ms: number | null | undefined, signed = false): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '?';
  const sign = signed && ms > 0 ? '+' : '';
  if (Math.abs(ms) < 1) return `${sign}${Math.round(ms * 1000)} µs`;
  return `${sign}${ms.toFixed(2)} ms`;
}

/** `+84 µs (+70 … +95 µs, n=3)`, or the value alone with one repetition. */
export function fmtAdded(s: Spread | null): string {
  if (!s) return '?';
  if (s.n < 2) return fmtLatency(s.median, true);
  return `${fmtLatency(s.median, true)} (${fmtLatency(s.best, true)} … ${fmtLatency(s.worst, true)}, n=${s.n})`;
}

/** A value's median with its range: `212 µs (198 … 240 µs, n=3)`. */
export function fmtLatencySpread(s: Spread | null): string {
  if (!s) return '?';
  if (s.n < 2) return fmtLatency(s.median);
  return `${fmtLatency(s.median)} (${fmtLatency(s.best)} … ${fmtLatency(s.worst)}, n=${s.n})`;
}

function clean(r: StepRecord): boolean {
  return r.status === 'completed' && r.result !== null && r.result.complete && r.result.errors.length === 0;
}

function p(r: StepRecord | undefined, which: 'latencyP50Ms' | 'latencyP99Ms'): number | null {
  if (!r || !clean(r)) return null;
  const v = r.result?.[which];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function values(xs: ReadonlyArray<number | null>): number[] {
  return xs.filter((x): x is number => x !== null);
}

/** Differences target − direct over the repetitions both sides measured. */
function added(
  direct: ReadonlyMap<number, StepRecord>,
  through: ReadonlyMap<number, StepRecord>,
  which: 'latencyP50Ms' | 'latencyP99Ms',
): Spread | null {
  const diffs: number[] = [];
  for (const [rep, t] of through) {
    const a = p(t, which);
    const b = p(direct.get(rep), which);
    if (a !== null && b !== null) diffs.push(a - b);
  }
  return spreadOf(diffs, false);
}

function byRepetition(steps: readonly StepRecord[]): Map<number, StepRecord> {
  return new Map(steps.map((s) => [s.params.repetition, s] as const));
}

export function zoneNote(zones: readonly ComponentZone[] | null | undefined): string | null {
  if (!zones || zones.length === 0) return null;
  const writer = zones.find((z) => z.component === 'writer')?.zone ?? null;
  const runners = zones.filter((z) => z.component.startsWith('runner') && z.zone !== null);
  const away = runners.filter((z) => writer !== null && z.zone !== writer);
  if (writer === null || away.length === 0) return null;
  return `${away.map((z) => `${z.component} (${z.zone ?? '?'})`).join(', ')} ${away.length === 1 ? 'is' : 'are'} not in the writer's zone (${writer}): every figure, direct's too, includes a cross-zone round trip`;
}

/**
 * The table for a run: one row per latency scenario × protocol × target other than direct.
 * `isLatency` says which scenarios are latency scenarios (the plan's or the catalog's experiment).
 */
export function latencyTable(run: LoadedRun, isLatency: (scenario: string) => boolean): LatencyTable {
  const steps = run.steps.filter((s) => isLatency(s.scenario));
  const rows: LatencyRow[] = [];
  for (const scenario of uniqueInOrder(steps.map((s) => s.scenario))) {
    const mine = steps.filter((s) => s.scenario === scenario);
    for (const protocol of uniqueInOrder(mine.map((s) => s.params.protocol))) {
      const cell = mine.filter((s) => s.params.protocol === protocol);
      const directSteps = cell.filter((s) => !run.descriptorOf(s).capabilities.pooled);
      const direct = byRepetition(directSteps);
      for (const target of uniqueInOrder(cell.map((s) => s.target.name))) {
        const through = cell.filter((s) => s.target.name === target);
        const first = through[0];
        if (!first || !run.descriptorOf(first).capabilities.pooled) continue;
        const d = run.descriptorOf(first);
        const rate = first.params.rate;
        const reps = byRepetition(through);
        rows.push({
          scenario,
          mode: rate === null ? 'back to back' : `${rate}/s`,
          protocol,
          target,
          what: `${placementLabel(d)}${d.poolMode ? ` (${d.poolMode})` : ''}`,
          directP50Ms: spreadOf(values(directSteps.map((s) => p(s, 'latencyP50Ms'))), false),
          directP99Ms: spreadOf(values(directSteps.map((s) => p(s, 'latencyP99Ms'))), false),
          p50Ms: spreadOf(values(through.map((s) => p(s, 'latencyP50Ms'))), false),
          p99Ms: spreadOf(values(through.map((s) => p(s, 'latencyP99Ms'))), false),
          addedP50Ms: added(direct, reps, 'latencyP50Ms'),
          addedP99Ms: added(direct, reps, 'latencyP99Ms'),
          troubled: [...through, ...directSteps].some((s) => !clean(s)),
        });
      }
    }
  }
  const zones = run.manifest.environment.zones ?? null;
  return { rows, zones, zoneNote: zoneNote(zones) };
}

/** One row of `compare`: the same scenario × protocol × target in both runs, added p50/p99 A → B. */
export interface LatencyCompareRow {
  readonly key: string;
  readonly a: LatencyRow;
  readonly b: LatencyRow;
  /** The change of the added p50 (B − A), and whether it exceeds both runs' ranges. */
  readonly p50Change: number | null;
  readonly beyondSpread: boolean | null;
}

function rowKey(r: LatencyRow): string {
  return `${r.scenario} · ${r.protocol} · ${r.target}`;
}

function width(s: Spread | null): number | null {
  return s && s.n >= 2 ? Math.abs(s.worst - s.best) : null;
}

export function compareLatency(a: LatencyTable, b: LatencyTable): LatencyCompareRow[] {
  const byKey = new Map(b.rows.map((r) => [rowKey(r), r] as const));
  const out: LatencyCompareRow[] = [];
  for (const ra of a.rows) {
    const rb = byKey.get(rowKey(ra));
    if (!rb) continue;
    const ma = ra.addedP50Ms?.median ?? null;
    const mb = rb.addedP50Ms?.median ?? null;
    const change = ma !== null && mb !== null ? mb - ma : null;
    const wa = width(ra.addedP50Ms);
    const wb = width(rb.addedP50Ms);
    out.push({
      key: rowKey(ra),
      a: ra,
      b: rb,
      p50Change: change,
      beyondSpread:
        change === null || wa === null || wb === null ? null : Math.abs(change) > Math.max(wa, wb),
    });
  }
  return out;
}

/** Median of a list, for summaries; null when empty. */
export function medianOf(xs: readonly number[]): number | null {
  return orderStats(xs)?.median ?? null;
}
