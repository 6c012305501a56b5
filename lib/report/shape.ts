/**
 * Data shaping: which points go in which chart, which cells in which matrix, which warnings
 * apply. Pure functions over a loaded run; the renderers only draw what these return.
 *
 * This file assembles the model; each part is its own file: ./scenario-panels.ts (charts, churn),
 * ./error-matrix.ts, ./metric-panels.ts, ./findings.ts, ./warnings.ts.
 */
import { type Cell, groupCells, uniqueInOrder } from './cells';
import type { LoadedRun } from './load';
import { poolerMatrices, type PoolerMatrix } from './pooler-matrix';
import { decisionTables, type DecisionTable } from './decision';
import { targetProduct } from '../suite/targets';
import { churnRows, scenarioPanels, type ChurnRow, type ScenarioPanel } from './scenario-panels';
import { errorMatrices, type ErrorMatrix } from './error-matrix';
import { chartSteps, metricPanels, type ChartStep, type MetricPanel } from './metric-panels';
import { findingRows, type FindingRow, type ScenarioLookup } from './findings';
import { reportWarnings, type ReportWarning } from './warnings';

export {
  churnRows,
  scenarioPanels,
  type ChartLine,
  type ChartPoint,
  type ChurnRow,
  type ScenarioPanel,
} from './scenario-panels';
export {
  errorMatrices,
  type ErrorMatrix,
  type MatrixCell,
  type MatrixColumn,
  type MatrixState,
} from './error-matrix';
export {
  chartSteps,
  chartWindows,
  CLOUD_METRICS,
  LOCAL_METRICS,
  MAX_STEP_WINDOWS,
  metricPanels,
  RDS_POSTGRES_METRICS,
  type ChartStep,
  type ChartWindow,
  type MetricPanel,
  type MetricWanted,
  type MissingSeries,
  type TimeLine,
} from './metric-panels';
export {
  findingRows,
  type FindingRow,
  type FindingState,
  type ScenarioInfo,
  type ScenarioLookup,
} from './findings';
export {
  isPartial,
  LOCAL_LOOPBACK_NOTE,
  reportWarnings,
  type ReportWarning,
  type WarningId,
} from './warnings';

// ---------------------------------------------------------------- the whole model

export interface ReportModel {
  readonly run: LoadedRun;
  readonly cells: readonly Cell[];
  readonly panels: readonly ScenarioPanel[];
  readonly churn: readonly ChurnRow[];
  readonly matrices: readonly ErrorMatrix[];
  /** Poolers / placements side by side per client count (none when the run has one kind of target). */
  readonly poolerMatrices: readonly PoolerMatrix[];
  readonly metricPanels: readonly MetricPanel[];
  readonly windows: readonly ChartStep[];
  readonly findings: readonly FindingRow[];
  readonly warnings: readonly ReportWarning[];
  /** One decision table per scenario (lib/report/decision.ts). */
  readonly decisions: readonly DecisionTable[];
}

export function buildModel(run: LoadedRun, lookup: ScenarioLookup): ReportModel {
  const cells = groupCells(run.steps);
  return {
    run,
    cells,
    panels: scenarioPanels(cells),
    churn: churnRows(cells),
    matrices: errorMatrices(cells),
    poolerMatrices: poolerMatrices(run, cells),
    metricPanels: metricPanels(
      run.manifest.mode,
      run.metrics,
      run.manifest.environment.database?.engine ?? null,
    ),
    windows: chartSteps(run.steps),
    findings: findingRows(run, lookup),
    warnings: reportWarnings(run),
    // A disruption step measures downtime, not throughput: its scenario has its own downtime table
    // (./disruptions.ts), not a decision table of unknowns.
    decisions: decisionTables(
      run,
      cells.filter((c) => !c.steps.some((s) => s.probe?.kind === 'disruption')),
    ),
  };
}

/**
 * The self-hosted poolers the run measured, by product and version (`PgBouncer 1.25.2, PgDoorman
 * 3.10.7`), from the plan's descriptors; without a plan, the environment's one pooler version.
 * null when there is none.
 */
export function poolersText(run: LoadedRun): string | null {
  const seen = uniqueInOrder(
    run.steps
      .map((s) => run.descriptorOf(s))
      .filter((d) => d.capabilities.pooled && d.placement !== 'managed')
      .map((d) => `${targetProduct(d).label}${d.version ? ` ${d.version}` : ''}`),
  );
  if (run.plan !== null && seen.length > 0) return seen.join(', ');
  const v = run.manifest.environment.poolerVersion;
  return v === null ? null : `pooler ${v}`;
}
