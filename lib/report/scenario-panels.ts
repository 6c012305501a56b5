/**
 * The per-scenario charts of the report (tps and latency by clients, a line per target and mode) and
 * the churn (-C) comparison rows (./shape.ts builds the model from them).
 */
import type { ConnectMode, Protocol } from '../suite/types';
import { type Cell, lineLabeller, type Spread, uniqueInOrder } from './cells';

// ---------------------------------------------------------------- per-scenario charts

export interface ChartPoint {
  readonly clients: number;
  /** null: the cell exists but produced no value (refused, crashed) — drawn as a gap, never 0. */
  readonly value: Spread | null;
  /** The cell had errors, aborted clients or did not complete: drawn with a warning symbol. */
  readonly troubled: boolean;
}

export interface ChartLine {
  readonly label: string;
  /** Position of this target in the whole run (first appearance), so a target keeps its colour in every chart. */
  readonly colorIndex: number;
  /** One per x category; null where this line has no cell at that client count. */
  readonly points: ReadonlyArray<ChartPoint | null>;
}

export interface ScenarioPanel {
  readonly scenario: string;
  /** What the scenario's cells ran, in words: `simple, prepared · persistent` (every mode of its series). */
  readonly modes: string;
  /** x categories: the client counts of the scenario, ascending. */
  readonly clients: readonly number[];
  /** One line per target (plus pool % / prepared-statement mode / script, and protocol and connect mode when the scenario varies them). */
  readonly tps: readonly ChartLine[];
  readonly latencyP50Ms: readonly ChartLine[];
  readonly latencyP95Ms: readonly ChartLine[];
  /** Any line with more than one repetition at some point (draw best/worst bands). */
  readonly repeated: boolean;
  /**
   * A chart over client counts needs at least two of them: with one, every series would be a lone
   * point, so the report says so and points at the table instead of drawing it.
   */
  readonly drawable: boolean;
}

/** The first item for each distinct key, in order. */
export function distinctBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item);
  return [...seen.values()];
}

export function scenarioNames(cells: readonly Cell[]): string[] {
  return uniqueInOrder(cells.map((c) => c.key.scenario));
}

/** `simple` / `simple -C` / `prepared`: a cell's protocol and connect mode as a series suffix. */
function modeLabel(c: Cell): string {
  return `${c.key.protocol}${c.key.connect === 'per-transaction' ? ' -C' : ''}`;
}

/**
 * One panel per scenario: every target is a series over the scenario's client counts. When the
 * scenario runs several protocols or connect modes, each becomes its own series of that target
 * (`direct · prepared`, `direct · simple -C`), never a separate chart of a few points.
 */
export function scenarioPanels(cells: readonly Cell[]): ScenarioPanel[] {
  const panels: ScenarioPanel[] = [];
  const targetOrder = uniqueInOrder(cells.map((c) => c.key.target.name));
  for (const scenario of scenarioNames(cells)) {
    const inScenario = cells.filter((c) => c.key.scenario === scenario);
    const label = lineLabeller(inScenario);
    const modes = distinctBy(inScenario, modeLabel);
    const byMode = modes.length > 1;
    const seriesLabel = (c: Cell): string => (byMode ? `${label(c.key)} · ${modeLabel(c)}` : label(c.key));
    const clients = uniqueInOrder(inScenario.map((c) => c.key.clients)).sort((a, b) => a - b);
    const lineLabels = uniqueInOrder(inScenario.map(seriesLabel));
    const build = (pick: (c: Cell) => Spread | null): ChartLine[] =>
      lineLabels.flatMap((lineLabel, lineIndex) => {
        const own = inScenario.filter((c) => seriesLabel(c) === lineLabel);
        const [first] = own;
        if (!first) return [];
        return {
          label: lineLabel,
          // a target keeps its colour across scenarios; with several modes each series gets its own
          colorIndex: byMode ? lineIndex : targetOrder.indexOf(first.key.target.name),
          points: clients.map((n) => {
            const cell = own.find((c) => c.key.clients === n);
            return cell ? { clients: n, value: pick(cell), troubled: cell.troubled } : null;
          }),
        };
      });
    panels.push({
      scenario,
      modes: [
        uniqueInOrder(inScenario.map((c) => c.key.protocol)).join(', '),
        uniqueInOrder(inScenario.map((c) => fmtConnectMode(c.key.connect))).join(', '),
      ].join(' · '),
      clients,
      tps: build((c) => c.tps),
      latencyP50Ms: build((c) => c.latencyP50Ms),
      latencyP95Ms: build((c) => c.latencyP95Ms),
      repeated: inScenario.some((c) => (c.tps?.n ?? 0) > 1),
      drawable: clients.length > 1,
    });
  }
  return panels;
}

function fmtConnectMode(connect: ConnectMode): string {
  return connect === 'per-transaction' ? 'new connection per transaction (-C)' : 'persistent connections';
}

// ---------------------------------------------------------------- churn (-C) comparison

export interface ChurnRow {
  readonly scenario: string;
  readonly label: string;
  readonly clients: number;
  readonly protocol: Protocol;
  /** tps reusing connections, null when that cell was not run or gave no tps. */
  readonly persistent: Spread | null;
  /** tps with a new connection per transaction (pgbench -C). */
  readonly perTransaction: Spread | null;
  /** persistent median / per-transaction median: how much churn costs; null when either is unknown. */
  readonly churnCost: number | null;
}

/** Rows for every target × clients × protocol that ran with -C, paired with its persistent twin. */
export function churnRows(cells: readonly Cell[]): ChurnRow[] {
  const rows: ChurnRow[] = [];
  for (const scenario of scenarioNames(cells)) {
    const inScenario = cells.filter((c) => c.key.scenario === scenario);
    const label = lineLabeller(inScenario);
    for (const churn of inScenario.filter((c) => c.key.connect === 'per-transaction')) {
      const twin = inScenario.find(
        (c) =>
          c.key.connect === 'persistent' &&
          label(c.key) === label(churn.key) &&
          c.key.clients === churn.key.clients &&
          c.key.protocol === churn.key.protocol,
      );
      const persistent = twin?.tps ?? null;
      const perTransaction = churn.tps;
      rows.push({
        scenario,
        label: label(churn.key),
        clients: churn.key.clients,
        protocol: churn.key.protocol,
        persistent,
        perTransaction,
        churnCost:
          persistent && perTransaction && perTransaction.median > 0
            ? persistent.median / perTransaction.median
            : null,
      });
    }
  }
  return rows;
}
