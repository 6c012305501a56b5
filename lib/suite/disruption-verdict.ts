/**
 * Verdicts of disruption steps (pure), by what the target can do (the step's expectation was
 * matched on its descriptor at planning time, lib/suite/expand.ts):
 *
 * - Hard, in every scenario: no acknowledged write is missing from the ledger afterwards. A step
 *   that lost one, or whose ledger could not be read, breaks whatever else was expected.
 * - `errors`: the clients saw at least one failed attempt after T0 (of the rule's classes, when it
 *   lists some).
 *   A client timeout (`client-timeout`: the client gave up waiting) is not the target's error.
 * - `succeeds` ("without an error"): no error and no client timeout after T0, and the window
 *   closed — writing again, no write still waiting (stalled) at the end (a stall that ended is
 *   allowed: that is what PAUSE/RESUME trades errors for). Errors or a stall still open when the
 *   window ended never hold.
 * - `refused`: at least one connection attempt was refused after T0 (`connection-failed`,
 *   `too-many-connections`, or the rule's classes).
 * - `any`: informational, the figures are the result (held stays null unless a write was lost);
 *   a window that did not close reads "not over in the window".
 */
import type { ClientTimeouts, DisruptionResult } from './disruption';
import type { StepExpectation } from './expand';
import type { ErrorClass, Verdict } from './types';

function seconds(ms: number | null): string {
  return ms === null ? '?' : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** `client timeouts: connect 5 s, statement 5 s` (what a step ran with). */
export function clientTimeoutsText(t: ClientTimeouts | undefined): string {
  return t === undefined
    ? 'client timeouts not recorded'
    : `client timeouts: connect ${seconds(t.connectTimeoutMs)}, statement ${seconds(t.statementTimeoutMs)}`;
}

/** The server's and the pooler's errors of a step: every class but the client's own timeout. */
function serverErrors(r: DisruptionResult): DisruptionResult['errors'] {
  return r.errors.filter((e) => e.count > 0 && e.class !== 'client-timeout');
}

function clientTimeoutCount(r: DisruptionResult): number {
  return r.errors.filter((e) => e.class === 'client-timeout').reduce((a, e) => a + e.count, 0);
}

/**
 * false when errors or a stall were still open at the window's end (or the clients were not writing
 * again); a run written before the figure: whether the clients were writing again.
 */
export function windowClosed(r: DisruptionResult): boolean {
  return r.figures.recovered && (r.figures.windowClosed ?? true);
}

/**
 * `errors 1.42 s (server-stopped ×12), stall 0.31 s, max 880 ms; writes 120 acknowledged, 3 unknown
 * (2 committed), 0 lost` — with `client-timeout ×n` and `not over in the window` when they apply.
 */
export function describeDisruption(r: DisruptionResult): string {
  const f = r.figures;
  const errs = serverErrors(r);
  const errors =
    errs.length === 0
      ? 'no errors'
      : `errors ${f.errorWindowMs !== null ? seconds(f.errorWindowMs) : 'not over by the end of the window'} (${errs
          .map((e) => `${e.class}${e.sqlstate ? ` ${e.sqlstate}` : e.code ? ` ${e.code}` : ''} ×${e.count}`)
          .join(', ')})`;
  const gaveUp = clientTimeoutCount(r);
  const timeouts =
    gaveUp > 0
      ? `, client-timeout ×${gaveUp} (${clientTimeoutsText(r.clientTimeouts).replace('client timeouts: ', 'gave up after ')})`
      : '';
  const open =
    f.openAtEnd !== undefined && f.openAtEnd > 0 ? `, ${f.openAtEnd} still waiting at the end` : '';
  // (errors still coming at the end already say so)
  const errorsOpen = errs.length > 0 && f.errorWindowMs === null;
  const notOver =
    r.t0 !== null && !windowClosed(r) ? (errorsOpen ? open : `, not over in the window${open}`) : '';
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
  return `${t0}${errors}${timeouts}, ${stall}${max}${notOver}; writes ${w.acknowledged} acknowledged${unknown}, ${lost}${dup}`;
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
      return { observed, held: e.errorClasses.length > 0 ? has(e.errorClasses) : serverErrors(r).length > 0 };
    case 'succeeds':
      // "Without an error" only when it is over: no error, no client giving up, the window closed.
      return { observed, held: after.length === 0 && windowClosed(r) };
    case 'refused':
      return { observed, held: has(e.errorClasses.length > 0 ? e.errorClasses : CONNECT_REFUSALS) };
  }
}
