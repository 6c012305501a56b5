/**
 * The downtime table (pure): a run's disruption steps summed up per scenario × target × connect
 * mode over the repetitions — error and stall windows, first error, recovery, maximum latency (each
 * as min / median / max of the repetitions that measured it), the clients' own timeouts and how often
 * they gave up (`client-timeout`, apart from the errors), whether the disruption was over inside the
 * window, writes lost, unknown outcomes and how the ledger resolved them, refusals as read-only,
 * reconnects, and the verdicts. The terminal, the
 * report and `compare` read the same rows; a figure no repetition measured is null.
 */
import { orderStats } from '../core/stats';
import type { DisruptionAction, DisruptionResult, ProbeConnectMode } from './disruption';
import { disruptionAction } from './disruption-actions';
import { loadLabel, type BackgroundLoadResult } from './disruption-load';
import { windowClosed } from './disruption-verdict';
import type { StepRecord, TargetRef } from './types';

export interface FigureSpread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
  /** Repetitions with the figure. */
  readonly n: number;
}

export interface DowntimeRow {
  readonly scenario: string;
  readonly action: DisruptionAction;
  readonly target: TargetRef;
  readonly mode: ProbeConnectMode;
  /** Repetitions measured (completed with a result). */
  readonly repetitions: number;
  /** Of those, how many saw at least one error after T0 (the server's or the pooler's: client timeouts apart). */
  readonly withErrors: number;
  /** The clients' timeouts the repetitions ran with (`connect 5 s, statement 5 s`), each distinct once; empty: not recorded (older runs). */
  readonly clientTimeoutSettings: readonly string[];
  /** Attempts the clients gave up on at their own timeout, summed; null when a repetition did not record it. */
  readonly clientTimeouts: number | null;
  /** Repetitions whose errors or stall were still open when the window ended. */
  readonly notOver: number;
  readonly timeToFirstErrorMs: FigureSpread | null;
  readonly errorWindowMs: FigureSpread | null;
  readonly stallWindowMs: FigureSpread | null;
  readonly maxLatencyMs: FigureSpread | null;
  readonly recoveryMs: FigureSpread | null;
  /** Repetitions whose clients were not writing again by the end of the window. */
  readonly notRecovered: number;
  /** Error classes seen, with counts summed over the repetitions. */
  readonly errorClasses: ReadonlyArray<{ readonly label: string; readonly count: number }>;
  readonly acknowledged: number;
  /** Acknowledged writes missing from the ledger; null when a repetition could not read it. */
  readonly lost: number | null;
  readonly unknown: number;
  readonly unknownCommitted: number;
  readonly duplicates: number | null;
  readonly readOnlyRefusals: number;
  readonly reconnects: number;
  readonly held: number;
  readonly broke: number;
  readonly informational: number;
  /** The background load through this target over the repetitions; null: the scenario has none. */
  readonly load: LoadSummary | null;
}

/** A target's background load over the repetitions (lib/suite/disruption-load.ts). */
export interface LoadSummary {
  /** `tpcb-like × 4 clients`. */
  readonly label: string;
  /** Repetitions whose load ran (not `not-run` or `failed`). */
  readonly ran: number;
  /** Medians over the repetitions that ran of the mean tps before T0, in the first and second half of the window. */
  readonly tpsBefore: number | null;
  readonly tpsDuring: number | null;
  readonly tpsAfter: number | null;
  /** The longest gap without a transaction (BackgroundLoadResult.gapMs). */
  readonly gapMs: FigureSpread | null;
  /** Summed over the repetitions; null: a repetition did not report it. */
  readonly abortedClients: number | null;
  readonly failedTransactions: number | null;
  /** Error lines pgbench printed, summed. */
  readonly errors: number;
  /** Why a repetition's load did not run, each once. */
  readonly notes: readonly string[];
}

/** The load figures of a target's repetitions; null when none had a load. */
export function loadSummary(loads: ReadonlyArray<BackgroundLoadResult | undefined>): LoadSummary | null {
  const all = loads.filter((l): l is BackgroundLoadResult => l !== undefined);
  const first = all[0];
  if (first === undefined) return null;
  const ran = all.filter((l) => l.endState !== 'not-run' && l.endState !== 'failed');
  const median = (xs: ReadonlyArray<number | null>): number | null => spread(xs)?.median ?? null;
  return {
    label: loadLabel(first),
    ran: ran.length,
    tpsBefore: median(ran.map((l) => l.tps.before)),
    tpsDuring: median(ran.map((l) => l.tps.during)),
    tpsAfter: median(ran.map((l) => l.tps.after)),
    gapMs: spread(ran.map((l) => l.gapMs)),
    abortedClients: ran.length === 0 ? null : sumOrNull(ran.map((l) => l.abortedClients)),
    failedTransactions: ran.length === 0 ? null : sumOrNull(ran.map((l) => l.failedTransactions)),
    errors: ran.reduce((a, l) => a + l.errors.reduce((b, e) => b + e.count, 0), 0),
    notes: [...new Set(all.flatMap((l) => (l.note === null ? [] : [l.note])))],
  };
}

/** `tpcb-like × 4 clients: 210 tps before, 390 during, 225 after; longest gap 1.13 s; 7 clients aborted`. */
export function loadSummaryText(l: LoadSummary): string {
  if (l.ran === 0) return `${l.label}: not run${l.notes.length > 0 ? ` (${l.notes.join('; ')})` : ''}`;
  const t = (v: number | null): string => (v === null ? '?' : String(Math.round(v)));
  return `${l.label}: ${t(l.tpsBefore)} tps before, ${t(l.tpsDuring)} during, ${t(l.tpsAfter)} after; longest gap without a transaction ${formatSpreadSec(l.gapMs, '?')}; ${l.abortedClients ?? '?'} client(s) aborted, ${l.errors} error line(s), failed transactions ${l.failedTransactions ?? 'not reported'}`;
}

function spread(values: ReadonlyArray<number | null>): FigureSpread | null {
  const s = orderStats(values.filter((v): v is number => v !== null));
  return s === null ? null : { min: s.min, median: s.median, max: s.max, n: s.n };
}

function sumOrNull(values: ReadonlyArray<number | null>): number | null {
  return values.some((v) => v === null) ? null : values.reduce<number>((a, v) => a + (v ?? 0), 0);
}

/** The disruption records of a run, one row per scenario × target × mode, in the order first seen. */
export function downtimeRows(records: readonly StepRecord[]): DowntimeRow[] {
  const groups = new Map<string, Array<StepRecord & { readonly probe: DisruptionResult }>>();
  for (const r of records) {
    if (r.probe?.kind !== 'disruption' || r.status !== 'completed') continue;
    const key = `${r.scenario}\u0000${r.target.name}\u0000${r.params.connect}`;
    const list = groups.get(key) ?? [];
    list.push(r as StepRecord & { readonly probe: DisruptionResult });
    groups.set(key, list);
  }
  return [...groups.values()].map((rs) => {
    const first = rs[0] as StepRecord & { readonly probe: DisruptionResult };
    const results = rs.map((r) => r.probe);
    const classes = new Map<string, number>();
    for (const p of results)
      for (const e of p.errors.filter((x) => x.class !== 'client-timeout')) {
        const label = `${e.class}${e.sqlstate ? ` ${e.sqlstate}` : e.code ? ` ${e.code}` : ''}`;
        classes.set(label, (classes.get(label) ?? 0) + e.count);
      }
    return {
      scenario: first.scenario,
      action: first.probe.disruption.action,
      target: first.target,
      mode: first.params.connect,
      repetitions: rs.length,
      withErrors: results.filter((p) => p.errors.some((e) => e.count > 0 && e.class !== 'client-timeout'))
        .length,
      clientTimeoutSettings: [
        ...new Set(
          results.flatMap((p) =>
            p.clientTimeouts === undefined
              ? []
              : [
                  `connect ${secondsText(p.clientTimeouts.connectTimeoutMs)}, statement ${secondsText(p.clientTimeouts.statementTimeoutMs)}`,
                ],
          ),
        ),
      ],
      clientTimeouts: sumOrNull(results.map((p) => p.figures.clientTimeouts ?? null)),
      notOver: results.filter((p) => p.t0 !== null && !windowClosed(p)).length,
      timeToFirstErrorMs: spread(results.map((p) => p.figures.timeToFirstErrorMs)),
      errorWindowMs: spread(results.map((p) => p.figures.errorWindowMs)),
      stallWindowMs: spread(results.map((p) => p.figures.stallWindowMs)),
      maxLatencyMs: spread(results.map((p) => p.figures.maxLatencyMs)),
      recoveryMs: spread(results.map((p) => p.figures.recoveryMs)),
      notRecovered: results.filter((p) => !p.figures.recovered).length,
      errorClasses: [...classes]
        .map(([label, count]) => ({ label, count }))
        .sort((a, b) => b.count - a.count),
      acknowledged: results.reduce((a, p) => a + p.writes.acknowledged, 0),
      lost: sumOrNull(results.map((p) => p.writes.acknowledgedMissing)),
      unknown: results.reduce((a, p) => a + p.writes.unknown, 0),
      unknownCommitted: results.reduce((a, p) => a + p.writes.unknownCommitted, 0),
      duplicates: sumOrNull(results.map((p) => p.writes.duplicates)),
      readOnlyRefusals: results.reduce((a, p) => a + p.figures.readOnlyRefusals, 0),
      reconnects: results.reduce((a, p) => a + p.figures.reconnects, 0),
      held: rs.filter((r) => r.verdict.held === true).length,
      broke: rs.filter((r) => r.verdict.held === false).length,
      informational: rs.filter((r) => r.verdict.held === null).length,
      load: loadSummary(results.map((p) => p.load)),
    };
  });
}

/** `15 s`, `2.5 s`: a setting in seconds. */
function secondsText(ms: number): string {
  return `${Math.round(ms / 10) / 100} s`;
}

/** `1.42 s` / `1.2–1.6 s (median 1.4)` / `–`. */
export function formatSpreadSec(s: FigureSpread | null, none = '–'): string {
  if (s === null) return none;
  const f = (ms: number): string => (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);
  return s.n === 1 || s.min === s.max ? `${f(s.median)} s` : `${f(s.median)} s (${f(s.min)}–${f(s.max)})`;
}

/**
 * One line per row, what a client lived through: `direct (persistent), a PostgreSQL restart: errors
 * for 1.42 s (median of 3; server-stopped 57P03 ×23), no stall; 0 of 336 acknowledged writes lost`.
 */
export function livedThrough(row: DowntimeRow): string {
  const mode = row.mode === 'persistent' ? 'persistent, reconnecting' : 'a connection per write';
  const errs =
    row.withErrors === 0
      ? 'no errors'
      : `errors in ${row.withErrors} of ${row.repetitions} for ${formatSpreadSec(row.errorWindowMs, 'the rest of the window')}${
          row.notRecovered > 0 ? ` (${row.notRecovered} not writing again by the window's end)` : ''
        }; ${row.errorClasses
          .slice(0, 3)
          .map((c) => `${c.label} ×${c.count}`)
          .join(', ')}`;
  const stall =
    row.stallWindowMs === null || row.stallWindowMs.max === 0
      ? 'no stall'
      : `stalls up to ${formatSpreadSec({ ...row.stallWindowMs, median: row.stallWindowMs.max, n: 1 })}`;
  const gaveUp =
    row.clientTimeouts === null
      ? ''
      : row.clientTimeouts > 0
        ? `; the clients gave up ${row.clientTimeouts} time(s) at their own timeout (${row.clientTimeoutSettings.join('; ')})`
        : '';
  const notOver = row.notOver > 0 ? `; not over in the window in ${row.notOver} of ${row.repetitions}` : '';
  const lost =
    row.lost === null
      ? 'writes lost: not checked'
      : `${row.lost} of ${row.acknowledged} acknowledged writes lost`;
  const unknown =
    row.unknown > 0
      ? `, ${row.unknown} unknown resolved from the ledger (${row.unknownCommitted} committed)`
      : '';
  return `${row.target.name} (${mode}), ${disruptionAction(row.action).phrase}: ${errs}; ${stall}${gaveUp}${notOver}; ${lost}${unknown}`;
}
