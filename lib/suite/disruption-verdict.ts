/**
 * Verdicts of disruption steps (pure), by what the target can do (the step's expectation was
 * matched on its descriptor at planning time, lib/suite/expand.ts):
 *
 * - Hard, in every scenario: no acknowledged write is missing from the ledger afterwards. A step
 *   that lost one, or whose ledger could not be read, breaks whatever else was expected.
 * - `errors`: the clients saw at least one failed attempt after T0 (of the rule's classes, when it
 *   lists some).
 * - `succeeds`: no attempt failed after T0 and the clients were writing again before the window
 *   ended (a stall is allowed: that is what PAUSE/RESUME trades errors for).
 * - `refused`: at least one connection attempt was refused after T0 (`connection-failed`,
 *   `too-many-connections`, or the rule's classes).
 * - `any`: informational, the figures are the result (held stays null unless a write was lost).
 */
import type { DisruptionResult } from './disruption';
import type { StepExpectation } from './expand';
import type { ErrorClass, Verdict } from './types';

function seconds(ms: number | null): string {
  return ms === null ? '?' : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** `errors 1.42 s (server-stopped ×12), stall 0.31 s, max 880 ms; writes 120 acknowledged, 3 unknown (2 committed), 0 lost`. */
export function describeDisruption(r: DisruptionResult): string {
  const f = r.figures;
  const failed = r.errors.reduce((a, e) => a + e.count, 0);
  const errors =
    failed === 0
      ? 'no errors'
      : `errors ${f.errorWindowMs !== null ? seconds(f.errorWindowMs) : 'not over by the end of the window'} (${r.errors
          .map((e) => `${e.class}${e.sqlstate ? ` ${e.sqlstate}` : e.code ? ` ${e.code}` : ''} ×${e.count}`)
          .join(', ')})`;
  const stall =
    f.stallWindowMs === null
      ? 'stall ?'
      : f.stallWindowMs > 0
        ? `stall ${seconds(f.stallWindowMs)}`
        : 'no stall';
  const max = f.maxLatencyMs === null ? '' : `, max ${Math.round(f.maxLatencyMs)} ms`;
  const w = r.writes;
  const unknown =
    w.unknown > 0
      ? `, ${w.unknown} unknown (${w.unknownCommitted} committed, ${w.unknownNotCommitted} not)`
      : '';
  const lost =
    w.acknowledgedMissing === null
      ? 'lost: not checked (ledger unreadable)'
      : `${w.acknowledgedMissing} lost`;
  const dup = w.duplicates !== null && w.duplicates > 0 ? `, ${w.duplicates} duplicated` : '';
  const t0 = r.t0 === null ? 'never disrupted; ' : '';
  return `${t0}${errors}, ${stall}${max}; writes ${w.acknowledged} acknowledged${unknown}, ${lost}${dup}`;
}

const CONNECT_REFUSALS: readonly ErrorClass[] = ['connection-failed', 'too-many-connections'];

/** `{ observed, held }` of one disruption step against its expectation. */
export function judgeDisruption(e: StepExpectation, r: DisruptionResult): Pick<Verdict, 'observed' | 'held'> {
  const observed = describeDisruption(r);
  const w = r.writes;
  if (!w.reconciled || w.acknowledgedMissing === null)
    return { observed: `${observed} — the ledger could not be read: durability not shown`, held: false };
  if (w.acknowledgedMissing > 0)
    return { observed: `${observed} — ${w.acknowledgedMissing} acknowledged write(s) LOST`, held: false };
  if (r.t0 === null) return { observed, held: e.outcome === 'any' ? null : false };
  const after = r.errors.filter((x) => x.count > 0);
  const has = (classes: readonly ErrorClass[]): boolean => after.some((x) => classes.includes(x.class));
  switch (e.outcome) {
    case 'any':
      return { observed, held: null };
    case 'errors':
      return { observed, held: e.errorClasses.length > 0 ? has(e.errorClasses) : after.length > 0 };
    case 'succeeds':
      return { observed, held: after.length === 0 && r.figures.recovered };
    case 'refused':
      return { observed, held: has(e.errorClasses.length > 0 ? e.errorClasses : CONNECT_REFUSALS) };
  }
}
