/**
 * How a decision table's rows are compared (issue 40, item 4): over the cells every row ran with a
 * tps; when there is none (direct refused at every count above a local stand-in's max_connections, a
 * pool hung at every count), over the cells the rows that could run share — said in the answer and
 * the † note, never "not comparable" for all. And what limits the comparison: a local server's
 * max_connections below the team's client counts, a load generator that saturated. Pure.
 */
import type { StepRecord } from '../suite/types';
import type { LoadedRun } from './load';

/**
 * Which rows are compared, over which cells: every row over the cells where each has a tps; when
 * there is none, the rows with a tps in the cell most rows have one in (the first such cell), over
 * every cell where each of those has a tps. Empty: no cell has a tps for two rows.
 */
export function comparisonOf(
  labels: readonly string[],
  keys: readonly string[],
  tpsAt: (label: string, key: string) => boolean,
): { rows: string[]; keys: string[] } {
  const common = (rows: readonly string[]): string[] => keys.filter((k) => rows.every((l) => tpsAt(l, k)));
  if (labels.length > 0 && common(labels).length > 0) return { rows: [...labels], keys: common(labels) };
  const rowsAt = (k: string): string[] => labels.filter((l) => tpsAt(l, k));
  const best = keys.reduce<string | null>(
    (a, k) => (a === null || rowsAt(k).length > rowsAt(a).length ? k : a),
    null,
  );
  const rows = best === null ? [] : rowsAt(best);
  return rows.length >= 2 ? { rows, keys: common(rows) } : { rows: [], keys: [] };
}

/** A local run's max_connections when a shared cell asks for more clients than it; else null. */
export function localMaxConnectionsOf(
  run: LoadedRun,
  shared: ReadonlyArray<{ readonly clients: number }>,
): number | null {
  const max = run.manifest.environment.maxConnections;
  if (run.manifest.mode !== 'local' || max === null) return null;
  return shared.some((k) => k.clients > max) ? max : null;
}

/** The largest step whose load generator saturated (its tps measured the client), with the reason. */
export function saturationOf(steps: readonly StepRecord[]): { clients: number; reason: string } | null {
  const hot = steps.filter((s) => s.loadGeneratorSaturated);
  if (hot.length === 0) return null;
  const top = hot.reduce((a, b) => (b.params.clients > a.params.clients ? b : a));
  return { clients: top.params.clients, reason: top.saturationReason ?? 'reason not recorded' };
}
