/**
 * Data shaping: which points go in which chart, which cells in which matrix, which warnings
 * apply. Pure functions over a loaded run; the renderers only draw what these return.
 */
import type {
  ConnectMode,
  ErrorSummary,
  MetricSeries,
  Protocol,
  RunDatabase,
  StepRecord,
} from '../suite/types';
import {
  CLOUD_REPORT_METRICS,
  LOCAL_REPORT_METRICS,
  metricDef,
  RDS_POSTGRES_REPORT_METRICS,
} from '../collector/catalog';
import { type Cell, groupCells, lineLabeller, type Spread, uniqueInOrder } from './cells';
import type { LoadedMetrics, LoadedRun } from './load';
import { poolerMatrices, type PoolerMatrix } from './pooler-matrix';
import { decisionTables, type DecisionTable } from './decision';
import {
  PGBOUNCER_MAX_PREPARED_STATEMENTS_ON,
  PGBOUNCER_PREPARED_SINCE,
  targetProduct,
  type TargetDescriptor,
} from '../suite/targets';

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
function distinctBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item);
  return [...seen.values()];
}

function scenarioNames(cells: readonly Cell[]): string[] {
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

// ---------------------------------------------------------------- metrics over time

/** A panel the report always shows ("no data" when absent): a catalog metric name and its title. */
export interface MetricWanted {
  readonly name: string;
  readonly title: string;
  readonly unit: string | null;
}

function wantedFromCatalog(names: readonly string[]): MetricWanted[] {
  return names.map((name) => {
    const def = metricDef(name);
    if (!def) throw new Error(`report metric ${name} is not in the collector catalog`);
    return { name, title: def.title, unit: def.unit };
  });
}

/** The metrics the published experiments turned on, in the order the report shows them. */
export const CLOUD_METRICS: readonly MetricWanted[] = wantedFromCatalog(CLOUD_REPORT_METRICS);
export const LOCAL_METRICS: readonly MetricWanted[] = wantedFromCatalog(LOCAL_REPORT_METRICS);
/** Cloud runs on RDS for PostgreSQL (environment.database.engine `postgres`). */
export const RDS_POSTGRES_METRICS: readonly MetricWanted[] = wantedFromCatalog(RDS_POSTGRES_REPORT_METRICS);

export interface TimeLine {
  readonly label: string;
  /** [epoch ms, value] in time order. */
  readonly points: ReadonlyArray<readonly [number, number]>;
}

export interface MissingSeries {
  readonly label: string;
  /** no-data / error: as the collector recorded it; not-collected: no such series in any file. */
  readonly status: 'no-data' | 'error' | 'not-collected';
  readonly reason: string;
}

export interface MetricPanel {
  readonly title: string;
  readonly unit: string | null;
  readonly lines: readonly TimeLine[];
  readonly missing: readonly MissingSeries[];
}

/**
 * A measured step as a metric chart draws it: its number in the run and its span in epoch ms. Not
 * the stored step window (lib/results/sink.ts StepWindow, ISO times in metrics/steps.json): this
 * one is derived from the step records when the report is built.
 */
export interface ChartStep {
  /** 1-based position in the run, the number drawn on the chart. */
  readonly index: number;
  readonly stepId: string;
  readonly scenario: string;
  readonly startMs: number;
  readonly endMs: number;
}

/** A shaded band on a metric chart: one step, or (in long runs) a run of consecutive steps of one scenario. */
export interface ChartWindow {
  readonly label: string;
  readonly startMs: number;
  readonly endMs: number;
}

/** Above this many steps, metric charts shade scenarios instead of steps (keeps charts legible and small). */
export const MAX_STEP_WINDOWS = 60;

export function chartWindows(windows: readonly ChartStep[]): ChartWindow[] {
  if (windows.length <= MAX_STEP_WINDOWS)
    return windows.map((w) => ({ label: String(w.index), startMs: w.startMs, endMs: w.endMs }));
  const merged: Array<{ label: string; startMs: number; endMs: number }> = [];
  for (const w of windows) {
    const last = merged[merged.length - 1];
    if (last && last.label === w.scenario) last.endMs = Math.max(last.endMs, w.endMs);
    else merged.push({ label: w.scenario, startMs: w.startMs, endMs: w.endMs });
  }
  return merged;
}

const MIB = 1024 * 1024;

function seriesLabel(s: MetricSeries): string {
  const dims = Object.values(s.dimensions).filter((v) => v !== '');
  const stat = s.stat === 'value' ? '' : s.stat;
  return [dims.length > 0 ? dims.join(' / ') : s.source, stat].filter((x) => x !== '').join(' · ');
}

export function chartSteps(steps: readonly StepRecord[]): ChartStep[] {
  const windows: ChartStep[] = [];
  steps.forEach((s, i) => {
    const startMs = Date.parse(s.startedAt);
    const endMs = Date.parse(s.endedAt);
    if (Number.isFinite(startMs) && Number.isFinite(endMs))
      windows.push({ index: i + 1, stepId: s.stepId, scenario: s.scenario, startMs, endMs });
  });
  return windows;
}

/**
 * Panels for the wanted metrics (always listed, "no data" when absent), then one per other
 * metric name the collector wrote. A series with status no-data/error is never drawn: it is
 * listed with its reason, so an empty metric never reads as zero.
 */
export function metricPanels(
  mode: 'local' | 'cloud',
  metrics: readonly LoadedMetrics[],
  /** The run's database engine (environment.database); unknown runs get the Aurora-era list. */
  engine: RunDatabase['engine'] | null = null,
): MetricPanel[] {
  const all = metrics.flatMap((m) => m.file.series);
  const wanted =
    mode === 'local' ? LOCAL_METRICS : engine === 'postgres' ? RDS_POSTGRES_METRICS : CLOUD_METRICS;
  const used = new Set<MetricSeries>();
  const panelFor = (title: string, series: readonly MetricSeries[]): MetricPanel => {
    const lines: TimeLine[] = [];
    const missing: MissingSeries[] = [];
    for (const s of series) {
      used.add(s);
      const label = series.length > 1 || s.name === title ? seriesLabel(s) : `${s.name} · ${seriesLabel(s)}`;
      // Bytes read better as MiB (FreeableMemory is billions of bytes).
      const scale = s.unit === 'Bytes' ? 1 / MIB : 1;
      const points = s.points
        .map(([t, v]) => [Date.parse(t), v * scale] as const)
        .filter(([t, v]) => Number.isFinite(t) && Number.isFinite(v));
      if (s.status === 'ok' && points.length > 0) lines.push({ label, points });
      else
        missing.push({
          label,
          status: s.status === 'error' ? 'error' : 'no-data',
          reason: s.reason ?? (s.status === 'ok' ? 'no points in the window' : s.status),
        });
    }
    const unit = series.find((s) => s.unit !== null)?.unit ?? metricDef(series[0]?.name ?? '')?.unit ?? null;
    return { title, unit: unit === 'Bytes' ? 'MiB' : unit, lines, missing };
  };
  const panels: MetricPanel[] = [];
  for (const w of wanted) {
    const series = all.filter((s) => s.name === w.name);
    if (series.length === 0) {
      panels.push({
        title: w.title,
        unit: w.unit,
        lines: [],
        missing: [
          {
            label: w.title,
            status: 'not-collected',
            reason:
              metrics.length === 0 ? 'no metrics files in this run' : 'not in the metrics files of this run',
          },
        ],
      });
    } else {
      panels.push(panelFor(w.title, series));
    }
  }
  const rest = all.filter((s) => !used.has(s));
  for (const name of uniqueInOrder(rest.map((s) => s.name))) {
    panels.push(
      panelFor(
        metricDef(name)?.title ?? name,
        rest.filter((s) => s.name === name),
      ),
    );
  }
  return panels;
}

// ---------------------------------------------------------------- findings

export interface ScenarioInfo {
  /** `E1`..`E5`, or null for scenarios that reproduce no published experiment. */
  readonly experiment: string | null;
  /** The published finding, in words. */
  readonly finding: string | null;
  /** The scenario's title in the catalog. */
  readonly title: string | null;
  /**
   * Where the finding was published, in one line (`Title — Publisher, date, link` or `… not
   * public`); null for a lab's own scenario or one the lookup does not know.
   */
  readonly source?: string | null;
  /** What the publication reported, as the catalog's rules and comparisons cite it (`published`). */
  readonly claims?: readonly string[];
}

export type ScenarioLookup = (scenario: string) => ScenarioInfo | null;

export type FindingState = 'reproduced' | 'held-so-far' | 'contradicted' | 'informational';

export interface FindingRow {
  readonly scenario: string;
  readonly experiment: string | null;
  /** The published finding (a claim, not a measurement of this run). */
  readonly finding: string | null;
  /** The published source of the finding (ScenarioInfo.source); null when there is none. */
  readonly source: string | null;
  readonly claims: readonly string[];
  /** What this run measured for it, in the engine's words (each comparison's observed ratio). */
  readonly measured: readonly string[];
  readonly state: FindingState;
  readonly held: number;
  readonly broke: number;
  readonly informational: number;
  /** Up to three "expected … observed …" lines of the steps that broke. */
  readonly brokenExamples: readonly string[];
}

/**
 * Per scenario: reproduced (every expectation held, run complete), held-so-far (none broke but
 * the run is partial), contradicted (one broke), informational (nothing was expected).
 */
export function findingRows(run: LoadedRun, lookup: ScenarioLookup): FindingRow[] {
  const partial = isPartial(run);
  const comparisons = run.manifest.scenarioVerdicts ?? [];
  const scenarios = uniqueInOrder([
    ...run.steps.map((s) => s.scenario),
    ...comparisons.map((v) => v.scenario),
  ]);
  return scenarios.map((scenario) => {
    // Step verdicts and the scenario's comparisons (e.g. -C through the pooler ≥ 3 × direct).
    const verdicts = [
      ...run.steps.filter((s) => s.scenario === scenario).map((s) => ({ label: s.stepId, v: s.verdict })),
      ...comparisons.filter((v) => v.scenario === scenario).map((v) => ({ label: 'comparison', v })),
    ];
    const held = verdicts.filter((x) => x.v.held === true).length;
    const broken = verdicts.filter((x) => x.v.held === false);
    const informational = verdicts.filter((x) => x.v.held === null).length;
    const info = lookup(scenario);
    const state: FindingState =
      broken.length > 0
        ? 'contradicted'
        : held === 0
          ? 'informational'
          : partial
            ? 'held-so-far'
            : 'reproduced';
    return {
      scenario,
      experiment: info?.experiment ?? null,
      finding: info?.finding ?? null,
      source:
        info === null
          ? null
          : (info.source ??
            (info.experiment === null ? "none: the lab's own scenario, not a published finding" : null)),
      claims: info?.claims ?? [],
      measured: comparisons
        .filter((v) => v.scenario === scenario)
        .map((v) => `${v.observed} (${v.expected})`),
      state,
      held,
      broke: broken.length,
      informational,
      brokenExamples: broken
        .slice(0, 3)
        .map((x) => `${x.label}: expected ${x.v.expected}; observed ${x.v.observed}`),
    };
  });
}

// ---------------------------------------------------------------- warnings

export type WarningId =
  | 'partial-run'
  | 'infrastructure-error'
  | 'unreadable-files'
  | 'load-generator-saturated'
  | 'pooler-saturated'
  | 'fewer-transactions'
  | 'pgbouncer-stand-in'
  /** A local run: load generator, pooler and server on one machine, over loopback. */
  | 'local-loopback'
  /** A local pooler of another product (PgDoorman) stands in for a pooled target. */
  | 'pooler-stand-in'
  | 'no-plan'
  | 'metrics-failed'
  /** The chart library could not draw some data as given (lib/report/charts.ts renderSvg). */
  | 'chart-data';

export interface ReportWarning {
  readonly id: WarningId;
  readonly message: string;
  /** The steps it applies to (empty when it applies to the run). */
  readonly stepIds: readonly string[];
}

export function isPartial(run: LoadedRun): boolean {
  // A file that could not be read leaves the report partial too (docs/report.md, "partially bad runs").
  return run.manifest.status !== 'completed' || run.missingStepIds.length > 0 || run.problems.length > 0;
}

export function reportWarnings(run: LoadedRun): ReportWarning[] {
  const out: ReportWarning[] = [];
  const { manifest } = run;
  if (isPartial(run)) {
    const why =
      manifest.status === 'running'
        ? 'the run has not recorded its end (still running, or killed before it could)'
        : manifest.status !== 'completed'
          ? `the run ${manifest.status === 'failed' ? 'failed' : 'was interrupted'}${manifest.error ? ` (${manifest.error})` : ''}`
          : run.missingStepIds.length > 0
            ? 'the run completed without some planned steps'
            : `${run.problems.length} file(s) of the run could not be read (listed below)`;
    out.push({
      id: 'partial-run',
      message: `Partial run: ${why}; ${run.steps.length} of ${manifest.stepIds.length} planned steps have results. Missing cells are not failures — they were not measured.`,
      stepIds: run.missingStepIds,
    });
  }
  if (run.unmeasured.length > 0) {
    const causes = run.unmeasured.map((r) => `${r.stepId} (${r.note ?? 'cause unknown'})`);
    out.push({
      id: 'infrastructure-error',
      message: `${run.unmeasured.length} step(s) were not measured because the infrastructure failed during them: ${causes.join('; ')}. They are not findings either way; resume the run with the same run id to measure them.`,
      stepIds: run.unmeasured.map((r) => r.stepId),
    });
  }
  if (run.problems.length > 0) {
    out.push({
      id: 'unreadable-files',
      message: `PARTIAL report: ${run.problems.length} file(s) of the run could not be read and are left out: ${run.problems.join('; ')}`,
      stepIds: [],
    });
  }
  const saturated = run.steps.filter((s) => s.loadGeneratorSaturated);
  if (saturated.length > 0) {
    const reasons = uniqueInOrder(saturated.map((s) => s.saturationReason ?? 'reason not recorded'));
    out.push({
      id: 'load-generator-saturated',
      message: `Load generator saturated in ${saturated.length} step(s): their tps measures the client, not the target (${reasons.slice(0, 3).join('; ')}).`,
      stepIds: saturated.map((s) => s.stepId),
    });
  }
  const poolerBound = run.steps.filter((s) => s.poolerSaturated === true);
  if (poolerBound.length > 0) {
    out.push({
      id: 'pooler-saturated',
      message: `Pooler CPU-bound in ${poolerBound.length} step(s): a pooler process averaged ≥ 90 % of the cores it can use (one for a PgBouncer process, its worker threads for PgDoorman), so their tps measures the pooler, not the database (see process_cpu_percent).`,
      stepIds: poolerBound.map((s) => s.stepId),
    });
  }
  const short = run.steps.filter((s) => {
    const r = s.result;
    return (
      r !== null &&
      r.transactionsExpected !== null &&
      r.transactionsProcessed !== null &&
      r.transactionsProcessed < r.transactionsExpected
    );
  });
  if (short.length > 0) {
    out.push({
      id: 'fewer-transactions',
      message: `${short.length} step(s) processed fewer transactions than expected (clients aborted or were refused): their tps covers only the clients that finished.`,
      stepIds: short.map((s) => s.stepId),
    });
  }
  if (run.plan === null) {
    out.push({
      id: 'no-plan',
      message:
        'This run has no plan.json (an older release): its targets are labelled from the current catalog, their versions and prepared-statement support unknown.',
      stepIds: [],
    });
  }
  // a pooler deployed in the cloud lab (dedicated host, on the runners) is itself a target, no stand-in
  const standIns = run.steps.filter((s) => {
    const d = run.descriptorOf(s);
    return d.capabilities.pooled && d.placement === 'local';
  });
  const bouncers = uniqueInOrder(
    standIns.filter((s) => targetProduct(s.target).id === 'pgbouncer').map((s) => s.target.name),
  );
  if (bouncers.length > 0) {
    out.push({ id: 'pgbouncer-stand-in', message: standInNote(run, bouncers), stepIds: [] });
  }
  const others = standIns.filter((s) => targetProduct(s.target).id !== 'pgbouncer');
  for (const name of uniqueInOrder(others.map((s) => s.target.name))) {
    const step = others.find((s) => s.target.name === name);
    if (step)
      out.push({ id: 'pooler-stand-in', message: otherStandInNote(run.descriptorOf(step)), stepIds: [] });
  }
  if (manifest.mode === 'local' && run.steps.some((s) => run.descriptorOf(s).capabilities.pooled)) {
    out.push({ id: 'local-loopback', message: LOCAL_LOOPBACK_NOTE, stepIds: [] });
  }
  const failedSeries = run.metrics.flatMap((m) =>
    m.file.series
      .filter((s) => s.status === 'error')
      .map((s) => `${m.name}: ${s.name} (${s.reason ?? 'no reason recorded'})`),
  );
  if (failedSeries.length > 0) {
    out.push({
      id: 'metrics-failed',
      message: `${failedSeries.length} metric series could not be collected: ${failedSeries.slice(0, 5).join('; ')}${failedSeries.length > 5 ? '; …' : ''}`,
      stepIds: [],
    });
  }
  return out;
}

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

/**
 * A local pooler of another product than PgBouncer (PgDoorman), from its descriptor in the plan:
 * its version, and whether its transaction pool carried prepared statements.
 */
function otherStandInNote(d: TargetDescriptor): string {
  const label = targetProduct(d).label;
  const mps = d.settings.maxPreparedStatements;
  const threads = d.settings.workerThreads;
  const carried =
    d.poolMode !== 'transaction'
      ? 'a session pool: each client keeps its server connection, prepared statements included'
      : d.capabilities.carriesPreparedStatements === 'yes'
        ? `its transaction pool carries prepared statements across server connections (cache of ${mps ?? '?'})`
        : 'its transaction pool does not carry prepared statements across server connections (its cache is off)';
  return `A local ${label}${d.version ? ` ${d.version}` : ''}${threads ? ` with ${threads} worker threads` : ''} (${d.name}) shares the machine with PostgreSQL, pgbench and the other poolers: ${carried}. Read its figures beside the other local poolers', not as what it does on a host of its own.`;
}

/**
 * What the PgBouncer stand-in was, from the run's environment and plan: its version and whether
 * (and how) it carried prepared statements through the transaction pool.
 */
/**
 * What a local run's pooled vs direct figures mean (issue 25 item 8): measured on 2 cores, pooled
 * tps was 0.42 × direct — the hop, not the pooler's worth in a lab.
 */
export const LOCAL_LOOPBACK_NOTE =
  'One machine, loopback: pgbench, PgBouncer and PostgreSQL share these CPUs and talk over 127.0.0.1. ' +
  'A pooled step adds a process hop whose CPU (PgBouncer, and pgbench waiting on it) is taken from the same cores ' +
  'the server and the load generator need, with no network round trip for the pool to save — so pooled tps ' +
  'below direct here (about 0.4 × on 2 cores) is the cost of that hop on a shared machine, not what a pooler on ' +
  'its own host in front of a remote database does. What carries over: refusals above max_connections, error ' +
  'classes (prepared statements through a transaction pool), queueing instead of failing, and per-transaction ' +
  'connect (-C) ratios; compare pooled with pooled here, and measure throughput on a lab.';

function standInNote(run: LoadedRun, names: readonly string[]): string {
  const env = run.manifest.environment;
  // the plan's descriptor says which PgBouncer it was (a run may have PgDoorman's version in env too)
  // (the environment names the first local pooler's, which may be another product's); a step of a
  // prepared-statement sweep runs with the cell's setting, not the one at start
  const ownSteps = run.plan === null ? [] : run.steps.filter((s) => names.includes(s.target.name));
  const planned = ownSteps.map((s) => run.descriptorOf(s))[0];
  const atStart = ownSteps.find((s) => (s.params.preparedStatements ?? null) === null);
  const version = planned?.version ?? env.poolerVersion;
  const mps = atStart
    ? run.descriptorOf(atStart).settings.maxPreparedStatements
    : (env.maxPreparedStatements ?? null);
  const swept = run.steps.some((s) => (s.params.preparedStatements ?? null) !== null);
  // `proxylab local --lab FILE` records the lab: its PgBouncer pools are what the local one stands in for.
  const lab = typeof run.manifest.settings.lab === 'string' ? run.manifest.settings.lab : null;
  const head =
    lab !== null
      ? `A local PgBouncer${version ? ` ${version}` : ''} stands in for lab ${lab}'s PgBouncer pools (${names.join(', ')}), whose release, host and pool size differ`
      : `A local PgBouncer${version ? ` ${version}` : ''} stands in for RDS Proxy (${names.join(', ')})`;
  let prepared: string;
  if (mps === null)
    prepared =
      env.maxPreparedStatements === undefined && run.plan === null
        ? 'its prepared-statement support was not recorded (a run of an older release)'
        : `it has no max_prepared_statements (needs PgBouncer ≥ ${PGBOUNCER_PREPARED_SINCE}), so its transaction pool does not carry prepared statements across server connections${swept ? '; the max_prepared_statements-on cells are reported as not available' : ''}`;
  else
    prepared = `max_prepared_statements ${mps} at start${swept ? `, set to 0 and to ${PGBOUNCER_MAX_PREPARED_STATEMENTS_ON} per step where a cell says so` : ''}: with it above 0 its transaction pool carries prepared statements across server connections, with 0 it does not`;
  const tail =
    lab !== null
      ? `the lab's RDS Proxies have no local counterpart and were not measured here`
      : `RDS Proxy's behaviour with named prepared statements is measured, not predicted; read PgBouncer's results as the local analogue, not as RDS Proxy's`;
  return `${head}: ${prepared}. ${tail[0]?.toUpperCase() ?? ''}${tail.slice(1)}.`;
}
