/**
 * Cells: the steps of a run grouped by everything but the repetition number. A cell is the unit
 * every chart point, matrix cell, table row and comparison ratio is made of. Pure functions.
 */
import { mergeErrors } from '../suite/parser';
import type { ConnectMode, ErrorSummary, Protocol, StepRecord, StepStatus, TargetRef } from '../suite/types';
import { orderStats } from '../core/stats';

/** best / median / worst over repetitions; best is the max for tps and the min for latency. */
export interface Spread {
  readonly best: number;
  readonly median: number;
  readonly worst: number;
  /** How many repetitions had a value. */
  readonly n: number;
}

export function spreadOf(values: readonly number[], higherIsBetter: boolean): Spread | null {
  const s = orderStats(values);
  if (!s) return null;
  return higherIsBetter
    ? { best: s.max, median: s.median, worst: s.min, n: s.n }
    : { best: s.min, median: s.median, worst: s.max, n: s.n };
}

export interface CellKey {
  readonly scenario: string;
  readonly target: TargetRef;
  readonly clients: number;
  readonly protocol: Protocol;
  readonly connect: ConnectMode;
  readonly script: string;
  readonly poolPercent: number | null;
  /** The pooler's prepared-statement support in a sweep (`off` / `on`); null when not swept. */
  readonly preparedStatements: 'off' | 'on' | null;
}

export interface Cell {
  /** Stable identity across runs (used by compare). */
  readonly id: string;
  readonly key: CellKey;
  /** Repetitions, in repetition order. */
  readonly steps: readonly StepRecord[];
  readonly tps: Spread | null;
  readonly latencyP50Ms: Spread | null;
  readonly latencyP95Ms: Spread | null;
  /** Errors summed over repetitions by class; the first sample seen is kept. */
  readonly errors: readonly ErrorSummary[];
  readonly abortedClients: number;
  /** true: every expectation held; false: at least one broke; null: nothing was expected. */
  readonly verdictHeld: boolean | null;
  readonly statuses: readonly StepStatus[];
  /** Any repetition with errors, aborted clients, or a status other than completed. */
  readonly troubled: boolean;
}

function cellId(key: CellKey): string {
  return JSON.stringify([
    key.scenario,
    key.target.kind,
    key.target.name,
    key.clients,
    key.protocol,
    key.connect,
    key.script,
    key.poolPercent,
    // only when swept, so cell ids of runs without the dimension stay as they were
    ...(key.preparedStatements !== null ? [key.preparedStatements] : []),
  ]);
}

function keyOf(step: StepRecord): CellKey {
  return {
    scenario: step.scenario,
    target: step.target,
    clients: step.params.clients,
    protocol: step.params.protocol,
    connect: step.params.connect,
    script: step.params.script,
    poolPercent: step.params.poolPercent,
    preparedStatements: step.params.preparedStatements ?? null,
  };
}

function numbers(values: ReadonlyArray<number | null | undefined>): number[] {
  return values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
}

function combineVerdicts(held: ReadonlyArray<boolean | null>): boolean | null {
  if (held.some((h) => h === false)) return false;
  if (held.some((h) => h === true)) return true;
  return null;
}

/** Group steps into cells, in the order their first step appears. */
export function groupCells(steps: readonly StepRecord[]): Cell[] {
  const groups = new Map<string, { key: CellKey; steps: StepRecord[] }>();
  for (const step of steps) {
    const key = keyOf(step);
    const id = cellId(key);
    const group = groups.get(id);
    if (group) group.steps.push(step);
    else groups.set(id, { key, steps: [step] });
  }
  return [...groups.entries()].map(([id, g]) => {
    const reps = [...g.steps].sort((a, b) => a.params.repetition - b.params.repetition);
    const results = reps.map((s) => s.result);
    const errors = mergeErrors(results.map((r) => r?.errors ?? []));
    const abortedClients = results.reduce((sum, r) => sum + (r?.abortedClients ?? 0), 0);
    const statuses = reps.map((s) => s.status);
    return {
      id,
      key: g.key,
      steps: reps,
      tps: spreadOf(numbers(results.map((r) => r?.tps)), true),
      latencyP50Ms: spreadOf(numbers(results.map((r) => r?.latencyP50Ms)), false),
      latencyP95Ms: spreadOf(numbers(results.map((r) => r?.latencyP95Ms)), false),
      errors,
      abortedClients,
      verdictHeld: combineVerdicts(reps.map((s) => s.verdict.held)),
      statuses,
      troubled: errors.length > 0 || abortedClients > 0 || statuses.some((s) => s !== 'completed'),
    };
  });
}

/** Line label within a scenario: the target, plus script / pool % when the scenario varies them. */
export function lineLabeller(cells: readonly Cell[]): (key: CellKey) => string {
  const scripts = new Set(cells.map((c) => c.key.script));
  const pools = new Set(cells.map((c) => c.key.poolPercent).filter((p) => p !== null));
  return (key) => {
    let label = key.target.name;
    if (pools.size > 1 && key.poolPercent !== null) label += ` @ pool ${key.poolPercent}%`;
    if (key.preparedStatements !== null)
      label += ` · max_prepared_statements ${key.preparedStatements === 'on' ? 'on' : '0'}`;
    if (scripts.size > 1) label += ` · ${key.script}`;
    return label;
  };
}

export function uniqueInOrder<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
