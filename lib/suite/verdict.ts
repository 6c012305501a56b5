/**
 * Verdicts (pure): did a step do what the catalog expected, did a scenario's comparisons hold,
 * and was the load generator the bottleneck.
 *
 * Step outcomes:
 * - `succeeds`: pgbench ran, printed a full summary (`complete`), no client aborted, tps known.
 * - `refused`: not started by the pre-check, or the run was incomplete and carried one of the
 *   expected connection error classes (e.g. too-many-connections) — the predicted failure holds.
 * - `errors`: at least one of the expected error classes appeared (any one is enough; with no
 *   classes listed, any error or aborted client).
 * - `any`: nothing expected → held is null (informational).
 * A harness timeout holds only for `any` (null) or an `errors` expectation that lists `timeout`;
 * an infrastructure error never holds.
 */
import type { Comparison, CellSelector, Scenario } from './catalog';
import type { PlannedStep, StepExpectation } from './expand';
import { fallbackDescriptor, matchesTarget, type TargetDescriptor } from './targets';
import type { ErrorClass, StepMeasurement, StepRecord, StepStatus, Verdict } from './types';
import { orderStats } from '../core/stats';

export function describeExpectation(e: StepExpectation): string {
  const classes = e.errorClasses.length > 0 ? `: ${e.errorClasses.join(' | ')}` : '';
  const base = e.outcome === 'succeeds' || e.outcome === 'any' ? e.outcome : `${e.outcome}${classes}`;
  return e.published && e.outcome === 'any' ? `${base} (published: ${e.published})` : base;
}

function describeErrors(m: StepMeasurement): string {
  if (m.errors.length === 0) return 'no errors';
  return m.errors.map((e) => `${e.class} ×${e.count}`).join(', ');
}

export function describeObserved(status: StepStatus, m: StepMeasurement | null): string {
  if (status === 'not-available') return 'not available on this target';
  if (status === 'infrastructure-error') return 'not measured: the infrastructure failed during the step';
  if (status === 'timeout') return `timed out${m ? ` (${describeErrors(m)})` : ''}`;
  if (status === 'hung') return `hung: stopped by the harness${m ? ` (${describeErrors(m)})` : ''}`;
  if (!m) return 'no result';
  const tps = m.tps === null ? 'tps unknown' : `${m.tps.toFixed(1)} tps`;
  const state = m.complete ? 'complete' : `incomplete (exit ${m.exitCode ?? '?'})`;
  const aborted = m.abortedClients > 0 ? `, ${m.abortedClients} clients aborted` : '';
  return `${state}, ${tps}${aborted}, ${describeErrors(m)}`;
}

function hasClass(m: StepMeasurement | null, classes: readonly ErrorClass[]): boolean {
  if (!m) return false;
  return m.errors.some((e) => e.count > 0 && classes.includes(e.class));
}

export function judgeStep(step: PlannedStep, status: StepStatus, m: StepMeasurement | null): Verdict {
  const e = step.expectation;
  const expected = describeExpectation(e);
  const observed = describeObserved(status, m);
  let held: boolean | null;
  if (status === 'not-available') return { expected, observed: step.unavailable ?? observed, held: null };
  // A dead server is not a finding: no verdict either way.
  if (status === 'infrastructure-error') return { expected, observed, held: null };
  if (e.outcome === 'any') held = null;
  // A harness stop holds only where the catalog expects it (an `errors` expectation listing `timeout`).
  else if (status === 'timeout' || status === 'hung')
    held = e.outcome === 'errors' && e.errorClasses.includes('timeout');
  else {
    switch (e.outcome) {
      case 'succeeds':
        held = m !== null && m.complete && m.abortedClients === 0 && m.tps !== null;
        break;
      case 'refused': {
        const classes: readonly ErrorClass[] =
          e.errorClasses.length > 0
            ? e.errorClasses
            : ['too-many-connections', 'connection-failed', 'auth-failed'];
        held = m !== null && !m.complete && hasClass(m, classes);
        break;
      }
      case 'errors':
        held =
          m !== null &&
          (e.errorClasses.length > 0
            ? hasClass(m, e.errorClasses)
            : m.errors.some((x) => x.count > 0) || m.abortedClients > 0);
        break;
    }
  }
  return { expected, observed, held };
}

/** CPU at or above this (percent of the load generator) counts as saturated. */
export const CPU_SATURATION_PERCENT = 90;
/** With --rate: schedule lag above this many ms and above 2 × the mean latency counts as saturated. */
const LAG_SATURATION_MS = 100;

export function detectSaturation(
  step: PlannedStep,
  m: StepMeasurement | null,
  cpuMaxPercent?: number | null,
): { saturated: boolean; reason: string | null } {
  const reasons: string[] = [];
  if (step.params.rate !== null && m !== null && m.scheduleLagAvgMs !== null) {
    const lag = m.scheduleLagAvgMs;
    const latency = m.latencyAvgMs ?? 0;
    if (lag > LAG_SATURATION_MS && lag > 2 * latency) {
      reasons.push(
        `--rate ${step.params.rate}: schedule lag avg ${lag.toFixed(1)} ms vs latency avg ${m.latencyAvgMs === null ? '?' : m.latencyAvgMs.toFixed(1)} ms — the client could not keep up with its schedule`,
      );
    }
  }
  if (cpuMaxPercent !== undefined && cpuMaxPercent !== null && cpuMaxPercent >= CPU_SATURATION_PERCENT) {
    // A PgBouncer co-located on the runner competes with pgbench for the same cores by design.
    const colocated =
      step.descriptor.placement === 'co-located'
        ? " — this runner's CPU includes the co-located PgBouncer's"
        : '';
    reasons.push(
      `load generator CPU peaked at ${cpuMaxPercent.toFixed(0)} % (≥ ${CPU_SATURATION_PERCENT} %)${colocated}`,
    );
  }
  return { saturated: reasons.length > 0, reason: reasons.length > 0 ? reasons.join('; ') : null };
}

export interface RepetitionSummary {
  readonly best: number | null;
  readonly median: number | null;
  readonly worst: number | null;
  readonly n: number;
}

/** best = highest, worst = lowest (for tps); median of the sorted values (mean of the middle two when even). */
export function summarizeRepetitions(values: readonly number[]): RepetitionSummary {
  const s = orderStats(values);
  if (!s) return { best: null, median: null, worst: null, n: 0 };
  return { best: s.max, median: s.median, worst: s.min, n: s.n };
}

/** The descriptor a step record ran against (from the run's plan). */
export type DescriptorOf = (r: StepRecord) => TargetDescriptor;

function selects(sel: CellSelector, r: StepRecord, describe: DescriptorOf): boolean {
  if (!matchesTarget(describe(r), sel.target)) return false;
  if (sel.connect !== undefined && r.params.connect !== sel.connect) return false;
  if (sel.protocol !== undefined && r.params.protocol !== sel.protocol) return false;
  if (sel.poolPercent !== undefined && r.params.poolPercent !== sel.poolPercent) return false;
  return true;
}

function cellKey(c: Comparison, r: StepRecord): string {
  const parts = [`c${r.params.clients}`];
  if (c.numerator.protocol === undefined && c.denominator.protocol === undefined)
    parts.push(r.params.protocol);
  if (c.numerator.connect === undefined && c.denominator.connect === undefined) parts.push(r.params.connect);
  if (r.params.preparedStatements != null) parts.push(`ps-${r.params.preparedStatements}`);
  const bothPooled = [c.numerator.target, c.denominator.target].every(
    (m) => m.pooled === true || (m.pooler !== undefined && !m.pooler.includes('none')),
  );
  if (
    bothPooled &&
    c.numerator.poolPercent === undefined &&
    c.denominator.poolPercent === undefined &&
    r.params.poolPercent !== null
  ) {
    parts.push(`pool${r.params.poolPercent}`);
  }
  return parts.join('/');
}

function selectorsDiffer(c: Comparison): boolean {
  const a = c.numerator;
  const b = c.denominator;
  return a.connect !== b.connect || a.protocol !== b.protocol || a.poolPercent !== b.poolPercent;
}

/** Median tps of complete runs, per (target name, cell key). */
function medians(
  c: Comparison,
  sel: CellSelector,
  records: readonly StepRecord[],
  describe: DescriptorOf,
): Map<string, Map<string, number | null>> {
  const values = new Map<string, Map<string, number[]>>();
  for (const r of records) {
    if (r.status === 'not-available' || r.status === 'infrastructure-error' || !selects(sel, r, describe))
      continue;
    const byCell = values.get(r.target.name) ?? new Map<string, number[]>();
    values.set(r.target.name, byCell);
    const key = cellKey(c, r);
    const list = byCell.get(key) ?? [];
    byCell.set(key, list);
    if (r.result && r.result.complete && r.result.tps !== null) list.push(r.result.tps);
  }
  const out = new Map<string, Map<string, number | null>>();
  for (const [target, byCell] of values) {
    out.set(target, new Map([...byCell].map(([k, v]) => [k, summarizeRepetitions(v).median])));
  }
  return out;
}

/**
 * Scenario-level comparisons: for every numerator target × denominator target × cell present on
 * both sides, median tps ratio vs minRatio. A cell without a complete run on one side cannot show
 * the finding: held false when a ratio was required, null otherwise.
 */
export function judgeScenario(
  scenario: Scenario,
  records: readonly StepRecord[],
  /** The plan's descriptors; absent: from the kind alone (runs without a plan). */
  describe: DescriptorOf = (r) => fallbackDescriptor(r.target),
): Verdict[] {
  const mine = records.filter((r) => r.scenario === scenario.name);
  const verdicts: Verdict[] = [];
  for (const c of scenario.comparisons ?? []) {
    const num = medians(c, c.numerator, mine, describe);
    const den = medians(c, c.denominator, mine, describe);
    const expected =
      c.minRatio === null
        ? `${c.description} (reported, not judged)`
        : `${c.description}: ratio ≥ ${c.minRatio}`;
    for (const [numTarget, numCells] of num) {
      for (const [denTarget, denCells] of den) {
        // the same target on both sides only makes sense when the selectors differ (pool 50 % vs 25 %)
        if (numTarget === denTarget && !selectorsDiffer(c)) continue;
        for (const [key, numTps] of numCells) {
          if (!denCells.has(key)) continue;
          const denTps = denCells.get(key) ?? null;
          const label = `[${c.id}] ${numTarget} vs ${denTarget} ${key}`;
          if (numTps === null || denTps === null || denTps === 0) {
            verdicts.push({
              expected: `${label}: ${expected}`,
              observed: `not comparable: ${numTps === null ? numTarget : denTarget} has no complete run with a tps`,
              held: c.minRatio === null ? null : false,
            });
            continue;
          }
          const ratio = numTps / denTps;
          verdicts.push({
            expected: `${label}: ${expected}`,
            observed: `${numTps.toFixed(1)} vs ${denTps.toFixed(1)} tps = ${ratio.toFixed(2)} ×`,
            held: c.minRatio === null ? null : ratio >= c.minRatio,
          });
        }
      }
    }
  }
  return verdicts;
}

/** Held / broke / informational over a run's step verdicts and judged scenario comparisons. */
export interface VerdictTotals {
  readonly held: number;
  readonly broke: number;
  readonly informational: number;
  /** Of those, scenario comparisons (so "N verdicts" can say how many were comparisons). */
  readonly comparisonsBroke: number;
}

/**
 * The one place verdicts are totted up, for `proxylab local`, `proxylab run`, status and the
 * report: every step verdict plus every judged scenario comparison.
 */
export function verdictTotals(
  records: ReadonlyArray<{ readonly verdict: Verdict }>,
  comparisons: readonly Verdict[],
): VerdictTotals {
  const all = [...records.map((r) => r.verdict), ...comparisons];
  return {
    held: all.filter((v) => v.held === true).length,
    broke: all.filter((v) => v.held === false).length,
    informational: all.filter((v) => v.held === null).length,
    comparisonsBroke: comparisons.filter((v) => v.held === false).length,
  };
}

/**
 * Exit code of a run command: 0 only when the run completed and no step verdict or judged
 * comparison broke; 1 when something broke (or the run did not complete). Same rule local and cloud.
 */
export function runExitCode(completed: boolean, totals: VerdictTotals): 0 | 1 {
  return completed && totals.broke === 0 ? 0 : 1;
}
