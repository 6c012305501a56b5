/** The report's error matrix: per scenario, each target × clients × protocol cell's state (./shape.ts). */
import type { ConnectMode, ErrorSummary, Protocol } from '../suite/types';
import { type Cell, lineLabeller, uniqueInOrder } from './cells';
import { distinctBy, scenarioNames } from './scenario-panels';

// ---------------------------------------------------------------- error matrix

export type MatrixState = 'ok' | 'errors' | 'hung' | 'timeout' | 'not-available';

export interface MatrixCell {
  readonly state: MatrixState;
  readonly errors: readonly ErrorSummary[];
  readonly abortedClients: number;
  readonly repetitions: number;
  readonly verdictHeld: boolean | null;
  /** What happened, in the engine's words (first repetition that broke, else the first). */
  readonly observed: string;
  readonly expected: string;
  readonly stepIds: readonly string[];
}

export interface MatrixColumn {
  readonly clients: number;
  readonly protocol: Protocol;
  readonly connect: ConnectMode;
}

export interface ErrorMatrix {
  readonly scenario: string;
  readonly columns: readonly MatrixColumn[];
  readonly rows: ReadonlyArray<{ readonly label: string; readonly cells: ReadonlyArray<MatrixCell | null> }>;
}

function matrixState(cell: Cell): MatrixState {
  if (cell.statuses.every((s) => s === 'not-available')) return 'not-available';
  for (const stopped of ['hung', 'timeout'] as const) if (cell.statuses.includes(stopped)) return stopped;
  return cell.errors.length > 0 || cell.abortedClients > 0 ? 'errors' : 'ok';
}

const PROTOCOL_ORDER: readonly Protocol[] = ['simple', 'extended', 'prepared'];

export function errorMatrices(cells: readonly Cell[]): ErrorMatrix[] {
  return scenarioNames(cells).map((scenario) => {
    const inScenario = cells.filter((c) => c.key.scenario === scenario);
    const label = lineLabeller(inScenario);
    const columns: MatrixColumn[] = distinctBy(
      inScenario.map((c) => ({ clients: c.key.clients, protocol: c.key.protocol, connect: c.key.connect })),
      (col) => `${col.clients}|${col.protocol}|${col.connect}`,
    ).sort(
      (a, b) =>
        a.clients - b.clients ||
        PROTOCOL_ORDER.indexOf(a.protocol) - PROTOCOL_ORDER.indexOf(b.protocol) ||
        a.connect.localeCompare(b.connect),
    );
    const rowLabels = uniqueInOrder(inScenario.map((c) => label(c.key)));
    return {
      scenario,
      columns,
      rows: rowLabels.map((rowLabel) => ({
        label: rowLabel,
        cells: columns.map((col) => {
          const cell = inScenario.find(
            (c) =>
              label(c.key) === rowLabel &&
              c.key.clients === col.clients &&
              c.key.protocol === col.protocol &&
              c.key.connect === col.connect,
          );
          if (!cell) return null;
          const telling = cell.steps.find((s) => s.verdict.held === false) ?? cell.steps[0];
          if (!telling) return null;
          return {
            state: matrixState(cell),
            errors: cell.errors,
            abortedClients: cell.abortedClients,
            repetitions: cell.steps.length,
            verdictHeld: cell.verdictHeld,
            observed: telling.verdict.observed,
            expected: telling.verdict.expected,
            stepIds: cell.steps.map((s) => s.stepId),
          };
        }),
      })),
    };
  });
}
