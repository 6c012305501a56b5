/**
 * The decision table (issue 25 item 4): which target to choose, per scenario, one row per target —
 * throughput with the spread of its repetitions, latency and what it adds over direct, errors, the
 * database connections it used, session pinning where it can be attributed, the pooler's CPU, and
 * what it costs per hour and per million transactions at the rate measured. Pure: a loaded run in,
 * rows out; the renderers only draw them.
 *
 * How a row aggregates a scenario's cells (documented in docs/report.md, "The decision table"):
 *  - one table per scenario: scenarios run different workloads, and a figure averaged across
 *    workloads would compare nothing;
 *  - a row is a line of the scenario's charts: a target, with its pool % / prepared-statement mode /
 *    script when the scenario sweeps them;
 *  - the SHARED cells are the (clients, protocol, connect mode, script) every row measured — a row
 *    whose every cell was "not available" on this target is listed as such and leaves the others'
 *    shared cells alone; cells only some rows ran are left out of every row (and named);
 *  - the COMPARABLE cells are the shared cells in which every row has a tps. Throughput, latency,
 *    the latency added over direct and $ per million transactions are the mean over them of each
 *    cell's median (best and worst likewise, so the spread is the repetitions' spread); when no
 *    shared cell is comparable (direct refused in all of them, or a row hung in all of them), the
 *    rows that could run are compared over the cells where each of them has a tps (rows with the
 *    fewest such cells left out until some cell is common to two or more), and every other row's
 *    figures are over its own cells with a tps, marked not comparable (†);
 *  - errors, connections, pinning and pooler CPU are over all shared cells;
 *  - session features: each feature the scenario's script uses, with the target's outcome from the
 *    session-state matrix of this run, else what its product entry predicts (./decision-session.ts).
 *  - the production column (./decision-prices.ts): the option's monthly bill in production, a
 *    pooler's host type picked from its measured CPU when the lab gives none.
 * Unknown is null, shown as "?" or in words, never 0.
 */
import { busiestWindowMean, intervalsOfPoints } from '../core/stats';
import { describeActivity } from '../suite/db-activity';
import type { MetricSeries, StepRecord, TargetPrice, TargetRef } from '../suite/types';
import { type Cell, lineLabeller, type Spread, uniqueInOrder } from './cells';
import { comparisonOf, localMaxConnectionsOf, saturationOf } from './decision-comparison';
import { rowSessionFeatures, scriptFeatureUses, type RowSessionFeatures } from './decision-session';
import type { LoadedRun } from './load';
import { perMillion, priceOf, rowProduction, type RowProduction } from './decision-prices';
import { POOLER_CPU_METRIC } from './pooler-matrix';
import { sessionMatrix, type SessionMatrix } from './session-matrix';
import { targetInstance, SELF_HOSTED_POOLERS, type TargetDescriptor } from '../suite/targets';

/** The proxy metric pinning is read from (collector catalog PROXY_METRICS). */
export const PINNED_METRIC = 'DatabaseConnectionsCurrentlySessionPinned';
/** CloudWatch's finest period for RDS Proxy metrics when a run's metrics file does not say. */
const DEFAULT_PERIOD_SEC = 60;

/** A cell of the table's grid: what every row is compared at (a row has one protocol and connect mode). */
export interface DecisionCellKey {
  readonly clients: number;
  readonly script: string;
}

export type Pinning =
  /** Not an RDS Proxy: session pinning is an RDS Proxy notion (a PgBouncer pool does not pin). */
  | { readonly kind: 'not-applicable' }
  /** No step covers one whole metric period, or the run has no such series. */
  | { readonly kind: 'not-attributable'; readonly reason: string }
  /** The most pinned connections in any whole period inside a step, over `steps` of `of` steps. */
  | { readonly kind: 'measured'; readonly max: number; readonly steps: number; readonly of: number };

export interface DecisionRow {
  readonly label: string;
  readonly target: string;
  /** The row is the database itself (no pooler): the baseline of "added over direct". */
  readonly isDirect: boolean;
  /** A transaction pool (server connections shared between clients' transactions); absent: no. */
  readonly multiplexes?: boolean;
  /** The row measured nothing: every cell was not available on this target (why, in words). */
  readonly notMeasured: string | null;
  /** Its tps / latency / $ figures are over the table's `comparable` cells (else its own: †). */
  readonly compared: boolean;
  /**
   * Each session feature the row's script uses, with the target's outcome (measured in this run or
   * expected from its product entry); null: the run did not record the script (no plan.json).
   */
  readonly sessionFeatures: RowSessionFeatures;
  /** The most clients of a step of the row whose load generator saturated, and why; null: none did. */
  readonly saturated: { readonly clients: number; readonly reason: string } | null;
  /** Mean over the comparable cells of each cell's median / best / worst tps; n = fewest repetitions. */
  readonly tps: Spread | null;
  readonly latencyP50Ms: number | null;
  readonly latencyP95Ms: number | null;
  readonly latencyP99Ms: number | null;
  /** p50 / p95 minus direct's, cell by cell, averaged; null for direct itself or without a direct row. */
  readonly addedP50Ms: number | null;
  readonly addedP95Ms: number | null;
  /** Error lines ÷ (transactions processed + error lines) over the shared cells; null when nothing ran. */
  readonly errorRate: number | null;
  /** The error classes and where, in words (`too-many-connections at 60 clients`), or null for none. */
  readonly errorText: string | null;
  /**
   * Client-attempts the harness left unfinished in hung steps (one per client of each), and all
   * attempts; null when unknown. A hung row leads with these, never with a rate like "< 0.1 %".
   */
  readonly hungAttempts?: number;
  readonly attempts?: number | null;
  /** The most client backends seen on the database during the row's steps; before it, the most held before a step. */
  readonly connectionsPeak: number | null;
  readonly connectionsBefore: number | null;
  /** false: the run predates serverConnections (not recorded); true: recorded (figures may still be null). */
  readonly connectionsRecorded: boolean;
  readonly pinning: Pinning;
  /** Busiest pooler process's mean CPU over a step (% of one core), the highest of the row's steps. */
  readonly poolerCpuPercent: number | null;
  /** Why there is no CPU figure: `not published` (RDS Proxy), `no pooler` (direct); null when measured or unknown. */
  readonly poolerCpuNote: string | null;
  /** USD per hour the target adds; null: not priced (see priceNote). */
  readonly usdPerHour: number | null;
  readonly priceNote: string;
  /** usdPerHour ÷ (tps × 3600) × 10⁶; null when either is unknown. */
  readonly usdPerMillionTransactions: number | null;
  /** What choosing the target costs in production, its host type chosen (./decision-prices.ts); null: not priced. */
  readonly production?: RowProduction | null;
}

export interface DecisionTable {
  readonly scenario: string;
  /** What every row ran: script · protocols · connect modes. */
  readonly workload: string;
  readonly shared: readonly DecisionCellKey[];
  readonly comparable: readonly DecisionCellKey[];
  /** Cells left out because not every row ran them, in words. */
  readonly leftOut: readonly string[];
  /** true: every row's tps/latency/$ columns are over the comparable cells; false: some row's are its own (†). */
  readonly comparableFigures: boolean;
  /**
   * Local runs: the server's max_connections when some shared cell has more clients than it (what a
   * direct connection to the local stand-in can serve); null otherwise.
   */
  readonly localMaxConnections: number | null;
  /** Runners the plan split each step across (1 locally); null without plan.json. */
  readonly runnerCount: number | null;
  /** The run's load-generator host's cores (`cpus` of the environment); null unknown. */
  readonly cpus: number | null;
  readonly rows: readonly DecisionRow[];
}

/** A cell's protocol and connect mode: `simple`, `prepared -C`. */
function modeOf(c: Cell): string {
  return `${c.key.protocol}${c.key.connect === 'per-transaction' ? ' -C' : ''}`;
}

function cellKeyOf(c: Cell): DecisionCellKey {
  return { clients: c.key.clients, script: c.key.script };
}

/** Rows carry their protocol and connect mode: cells are shared by client count and script. */
function keyText(k: DecisionCellKey): string {
  return JSON.stringify([k.clients, k.script]);
}

/** `60 clients` / `60 clients select-1.sql` — a cell in words, as short as the table allows. */
export function cellWords(k: DecisionCellKey, varying: { script: boolean }): string {
  return [`${k.clients} clients`, ...(varying.script ? [k.script] : [])].join(' ');
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * Every decision table of the run, in scenario order. A probe step (a disruption, the session-state
 * matrix: its result or its planned spec says so) measures no tps: its scenario has its own section,
 * not a table of unknowns with an answer about errors.
 */
export function decisionTables(run: LoadedRun, cells: readonly Cell[]): DecisionTable[] {
  const prices = run.manifest.environment.targetPrices ?? null;
  const matrix = sessionMatrix(run);
  const probeSteps = new Set((run.plan?.steps ?? []).filter((s) => s.probe != null).map((s) => s.stepId));
  const pgbench = cells.filter((c) => !c.steps.some((s) => s.probe != null || probeSteps.has(s.stepId)));
  const scenarios = uniqueInOrder(pgbench.map((c) => c.key.scenario));
  return scenarios.map((scenario) =>
    scenarioTable(
      run,
      scenario,
      pgbench.filter((c) => c.key.scenario === scenario),
      prices,
      matrix,
    ),
  );
}

function scenarioTable(
  run: LoadedRun,
  scenario: string,
  inScenario: readonly Cell[],
  prices: readonly TargetPrice[] | null,
  matrix: SessionMatrix | null,
): DecisionTable {
  const scripts = new Set(inScenario.map((c) => c.key.script));
  const label = rowLabeller(inScenario);
  const labels = uniqueInOrder(inScenario.map(label));
  const measured = (c: Cell): boolean => c.statuses.some((s) => s !== 'not-available');
  const cellsOf = (l: string) => inScenario.filter((c) => label(c) === l);
  const measuredLabels = labels.filter((l) => cellsOf(l).some(measured));
  const keys = uniqueInOrder(inScenario.map((c) => keyText(cellKeyOf(c))));
  const has = (l: string, k: string, pick: (c: Cell) => boolean): boolean =>
    cellsOf(l).some((c) => keyText(cellKeyOf(c)) === k && pick(c));
  const sharedKeys = keys.filter((k) => measuredLabels.every((l) => has(l, k, measured)));
  const comparison = comparisonOf(measuredLabels, sharedKeys, (l, k) => has(l, k, (c) => c.tps !== null));
  const comparableKeys = comparison.keys;
  const comparableFigures = comparison.rows.length === measuredLabels.length && comparableKeys.length > 0;
  const parse = (k: string): DecisionCellKey => {
    const [clients, script] = JSON.parse(k) as [number, string];
    return { clients, script };
  };
  const varying = { script: scripts.size > 1 };
  const leftOut = keys
    .filter((k) => !sharedKeys.includes(k))
    .map((k) => {
      const ran = measuredLabels.filter((l) => has(l, k, measured));
      return `${cellWords(parse(k), varying)} (only ${ran.join(', ') || 'no target'})`;
    });

  const descriptorOf = (c: Cell): TargetDescriptor =>
    run.descriptorOf({ stepId: c.steps[0]?.stepId ?? '', target: c.key.target });
  // Each row's baseline: the direct row of the same protocol and connect mode.
  const directLabelFor = (mode: string): string | undefined =>
    measuredLabels.find((l) => {
      const c = cellsOf(l)[0];
      return c !== undefined && !descriptorOf(c).capabilities.pooled && modeOf(c) === mode;
    });
  const cellAt = (l: string, k: string): Cell | undefined =>
    cellsOf(l).find((c) => keyText(cellKeyOf(c)) === k);

  const rows = labels.map((l): DecisionRow => {
    const own = cellsOf(l);
    const first = own[0] as Cell;
    const d = descriptorOf(first);
    const price = priceOf(run.manifest.mode, prices, first.key.target.name);
    const sessionFeatures = rowSessionFeatures(run, matrix, d, scriptFeatureUses(run, own));
    if (!measuredLabels.includes(l)) return unmeasuredRow(l, first, d, price, sessionFeatures);
    const compared = comparison.rows.includes(l);
    const figureKeys = compared
      ? comparableKeys
      : sharedKeys.filter((k) => cellAt(l, k)?.tps !== null && cellAt(l, k) !== undefined);
    const figureCells = figureKeys.map((k) => cellAt(l, k)).filter((c): c is Cell => c !== undefined);
    const sharedCells = sharedKeys.map((k) => cellAt(l, k)).filter((c): c is Cell => c !== undefined);
    const tps = meanSpread(figureCells.map((c) => c.tps).filter((s): s is Spread => s !== null));
    const latency = (pick: (c: Cell) => Spread | null): number | null =>
      mean(figureCells.map((c) => pick(c)?.median).filter((v): v is number => v !== undefined));
    const directLabel = directLabelFor(modeOf(first));
    const added = (pick: (c: Cell) => Spread | null): number | null => {
      if (
        directLabel === undefined ||
        l === directLabel ||
        !compared ||
        !comparison.rows.includes(directLabel)
      )
        return null;
      const diffs = comparableKeys.flatMap((k) => {
        const mine = pick(cellAt(l, k) as Cell)?.median;
        const direct = pick(cellAt(directLabel, k) as Cell)?.median;
        return mine === undefined || direct === undefined ? [] : [mine - direct];
      });
      return mean(diffs);
    };
    const steps = sharedCells.flatMap((c) => c.steps);
    const cpu = poolerCpuOf(run, d, first.key.target, steps);
    const production = rowProduction(price.production, cpu.poolerCpuPercent, tps?.median ?? null);
    // A local run's $/h is the production option's (nothing of this machine is billed).
    const usdPerHour = production?.hourlyIsProduction ? production.usdPerHour : price.usdPerHour;
    return {
      label: l,
      target: first.key.target.name,
      isDirect: !d.capabilities.pooled,
      multiplexes: d.capabilities.multiplexes,
      notMeasured: null,
      compared,
      sessionFeatures,
      saturated: saturationOf(steps),
      tps,
      latencyP50Ms: latency((c) => c.latencyP50Ms),
      latencyP95Ms: latency((c) => c.latencyP95Ms),
      latencyP99Ms: latency((c) => spreadOfP99(c)),
      addedP50Ms: added((c) => c.latencyP50Ms),
      addedP95Ms: added((c) => c.latencyP95Ms),
      ...errorsOf(sharedCells, varying),
      ...connectionsOf(steps),
      pinning: pinningOf(run, d, first.key.target.name, steps),
      ...cpu,
      usdPerHour,
      priceNote: price.note,
      usdPerMillionTransactions: perMillion(usdPerHour, tps?.median ?? null),
      production,
    };
  });
  return {
    scenario,
    workload: workloadOf(inScenario),
    shared: sharedKeys.map(parse),
    comparable: comparableKeys.map(parse),
    leftOut,
    comparableFigures,
    localMaxConnections: localMaxConnectionsOf(run, sharedKeys.map(parse)),
    runnerCount: run.plan?.runnerCount ?? null,
    cpus: run.manifest.environment.cpus,
    rows,
  };
}

/** What every row ran: script · protocols · connect modes. */
function workloadOf(inScenario: readonly Cell[]): string {
  const scripts = uniqueInOrder(inScenario.map((c) => c.key.script)).join(', ');
  const protocolList = uniqueInOrder(inScenario.map((c) => c.key.protocol)).join(', ');
  const connectList = uniqueInOrder(
    inScenario.map((c) =>
      c.key.connect === 'per-transaction' ? 'new connection per transaction (-C)' : 'persistent',
    ),
  ).join(', ');
  return `${scripts} · ${protocolList} · ${connectList}`;
}

/**
 * A row's label: the scenario's chart series — a target (with pool % / prepared-statement mode) and,
 * when the scenario runs several, its protocol and connect mode (a different workload, never
 * averaged with another). The script is part of the cell, so rows share cells.
 */
function rowLabeller(inScenario: readonly Cell[]): (c: Cell) => string {
  const labelWithScript = lineLabeller(inScenario);
  const scripts = new Set(inScenario.map((c) => c.key.script));
  const protocols = new Set(inScenario.map((c) => c.key.protocol)).size > 1;
  const connects = new Set(inScenario.map((c) => c.key.connect)).size > 1;
  return (c) => {
    const full = labelWithScript(c.key);
    const base = scripts.size > 1 ? full.replace(/ · [^·]+$/, '') : full;
    const mode = [
      ...(protocols ? [c.key.protocol] : []),
      ...(connects ? [c.key.connect === 'per-transaction' ? '-C' : 'persistent'] : []),
    ];
    return mode.length > 0 ? `${base} · ${mode.join(' ')}` : base;
  };
}

/** The mean of cells' median / best / worst tps; n = the fewest repetitions. Null for no cells. */
function meanSpread(spreads: readonly Spread[]): Spread | null {
  if (spreads.length === 0) return null;
  return {
    median: mean(spreads.map((s) => s.median)) as number,
    best: mean(spreads.map((s) => s.best)) as number,
    worst: mean(spreads.map((s) => s.worst)) as number,
    n: Math.min(...spreads.map((s) => s.n)),
  };
}

/** p99 is kept per step, not per cell: its median over the cell's repetitions. */
function spreadOfP99(c: Cell): Spread | null {
  const values = c.steps
    .map((s) => s.result?.latencyP99Ms)
    .filter((v): v is number => typeof v === 'number' && Number.isFinite(v))
    .sort((a, b) => a - b);
  if (values.length === 0) return null;
  const mid = Math.floor(values.length / 2);
  const median =
    values.length % 2 === 1
      ? (values[mid] as number)
      : ((values[mid - 1] as number) + (values[mid] as number)) / 2;
  return { best: values[0] as number, median, worst: values[values.length - 1] as number, n: values.length };
}

/** A row whose target measured no cell of the scenario: why, its price and production option, its session features. */
function unmeasuredRow(
  l: string,
  first: Cell,
  d: TargetDescriptor,
  price: ReturnType<typeof priceOf>,
  sessionFeatures: RowSessionFeatures,
): DecisionRow {
  const why = first.steps.find((s) => s.note)?.note ?? 'not available on this target';
  const production = rowProduction(price.production, null, null);
  const hourly = production?.hourlyIsProduction ? production.usdPerHour : price.usdPerHour;
  const row = emptyRow(
    l,
    first.key.target.name,
    !d.capabilities.pooled,
    why,
    { ...price, usdPerHour: hourly },
    sessionFeatures,
  );
  return { ...row, production };
}

function emptyRow(
  label: string,
  target: string,
  isDirect: boolean,
  why: string,
  price: { usdPerHour: number | null; note: string },
  sessionFeatures: RowSessionFeatures,
): DecisionRow {
  return {
    label,
    target,
    isDirect,
    notMeasured: why,
    compared: false,
    sessionFeatures,
    saturated: null,
    tps: null,
    latencyP50Ms: null,
    latencyP95Ms: null,
    latencyP99Ms: null,
    addedP50Ms: null,
    addedP95Ms: null,
    errorRate: null,
    errorText: null,
    connectionsPeak: null,
    connectionsBefore: null,
    connectionsRecorded: false,
    pinning: { kind: 'not-applicable' },
    poolerCpuPercent: null,
    poolerCpuNote: null,
    usdPerHour: price.usdPerHour,
    priceNote: price.note,
    usdPerMillionTransactions: null,
  };
}

/** The error classes of a refusal: the target would not take the connections. */
const REFUSAL_CLASSES: ReadonlySet<string> = new Set([
  'too-many-connections',
  'connection-failed',
  'auth-failed',
]);

/** Transactions a step finished: pgbench's summary, else its log's intervals (a stopped pgbench prints none). */
function processedOf(s: StepRecord): number | null {
  const r = s.result;
  if (r === null) return null;
  if (r.transactionsProcessed !== null) return r.transactionsProcessed;
  return r.series && r.series.length > 0 ? r.series.reduce((n, p) => n + p.transactions, 0) : null;
}

/** A cell the harness stopped (`hung`; `timeout` in runs before it), in words with what the database showed. */
function hungWords(c: Cell, at: string): string | null {
  const stopped = c.steps.find((s) => s.status === 'hung' || s.status === 'timeout');
  if (!stopped) return null;
  const db = stopped.databaseActivity
    ? describeActivity(stopped.databaseActivity)
    : 'the database was not sampled';
  return `hung at ${at} (${db})`;
}

/**
 * Failed and hung client-attempts ÷ all attempts over the shared cells (issue 40): error lines, plus
 * each client's unfinished attempt in a step the harness stopped (its `timeout` class counts them),
 * over transactions finished plus those; and which cells hung, were refused or had errors, in words.
 * A step whose finished transactions are unknown makes the rate unknown, never a guess.
 */
function errorsOf(
  shared: readonly Cell[],
  varying: { script: boolean },
): Pick<DecisionRow, 'errorRate' | 'errorText' | 'hungAttempts' | 'attempts'> {
  let lines = 0;
  let processed = 0;
  let hungAttempts = 0;
  let any = false;
  let unknown = false;
  const where: string[] = [];
  for (const c of shared) {
    for (const s of c.steps) {
      if (s.result === null) continue;
      any = true;
      const done = processedOf(s);
      if (done === null && s.status !== 'completed') unknown = true;
      processed += done ?? 0;
      lines += s.result.errors.reduce((sum, e) => sum + e.count, 0);
      if (s.status === 'hung' || s.status === 'timeout')
        hungAttempts += s.result.errors.find((e) => e.class === 'timeout')?.count ?? 0;
    }
    const at = cellWords(cellKeyOf(c), varying);
    const classes = c.errors.map((e) => `${e.class} ×${e.count}`).join(', ');
    const hung = hungWords(c, at);
    const refused = c.errors.some((e) => REFUSAL_CLASSES.has(e.class));
    if (hung !== null) where.push(hung);
    // A cell with no tps at all is a refusal or a failure, not a few errors among many transactions.
    else if (c.tps === null && (c.errors.length > 0 || c.abortedClients > 0))
      where.push(
        `${refused ? 'refused' : 'no tps'} at ${at}${classes ? ` (${classes})` : ` (${c.abortedClients} aborted)`}`,
      );
    else if (c.errors.length > 0) where.push(`${classes} at ${at}`);
    else if (c.abortedClients > 0) where.push(`${c.abortedClients} aborted at ${at}`);
  }
  return {
    errorRate: unknown ? null : any && processed + lines > 0 ? lines / (processed + lines) : any ? 0 : null,
    errorText: where.length > 0 ? where.join('; ') : null,
    hungAttempts,
    attempts: unknown || !any ? null : processed + lines,
  };
}

function connectionsOf(
  steps: readonly StepRecord[],
): Pick<DecisionRow, 'connectionsPeak' | 'connectionsBefore' | 'connectionsRecorded'> {
  const recorded = steps.filter((s) => s.serverConnections !== undefined);
  const max = (pick: (s: StepRecord) => number | null | undefined): number | null => {
    const v = recorded.map(pick).filter((x): x is number => typeof x === 'number');
    return v.length === 0 ? null : Math.max(...v);
  };
  return {
    connectionsPeak: max((s) => s.serverConnections?.peak),
    connectionsBefore: max((s) => s.serverConnections?.before),
    connectionsRecorded: recorded.length > 0,
  };
}

/** The RDS proxy name (CloudWatch ProxyName) of a target, from the run's settings; the lab name when not said. */
function dbProxyNameOf(run: LoadedRun, target: TargetRef): string {
  const instance = targetInstance(target);
  const proxies = run.manifest.settings.proxies;
  if (Array.isArray(proxies)) {
    for (const p of proxies as unknown[]) {
      if (typeof p !== 'object' || p === null) continue;
      const { name, dbProxyName } = p as Record<string, unknown>;
      if (name === instance && typeof dbProxyName === 'string') return dbProxyName;
    }
  }
  return instance;
}

/** The length of a series' periods: the metrics file's, else the smallest gap between points, else 60 s. */
function periodSecOf(file: { completeness?: { periodSec: number } }, s: MetricSeries): number {
  if (file.completeness && file.completeness.periodSec > 0) return file.completeness.periodSec;
  let gap = Infinity;
  for (let i = 1; i < s.points.length; i++) {
    const d = (Date.parse(s.points[i]?.[0] ?? '') - Date.parse(s.points[i - 1]?.[0] ?? '')) / 1000;
    if (Number.isFinite(d) && d > 0) gap = Math.min(gap, d);
  }
  return Number.isFinite(gap) ? gap : DEFAULT_PERIOD_SEC;
}

/**
 * Session pinning of an RDS Proxy target, only where a step covers whole CloudWatch periods: a
 * period that spans two steps (or a step and the pause after it) cannot be attributed to either, and
 * steps of 3–20 s never cover a 60-s period. Anything else is "not attributable", with the reason.
 */
export function pinningOf(
  run: LoadedRun,
  d: Pick<TargetDescriptor, 'placement' | 'capabilities'>,
  target: string,
  steps: readonly StepRecord[],
): Pinning {
  // A managed pool (RDS Proxy) is the one that pins; direct is placed 'managed' too but pools nothing.
  if (!(d.capabilities.pooled && d.placement === 'managed')) return { kind: 'not-applicable' };
  const step0 = steps[0];
  const proxyName = step0 ? dbProxyNameOf(run, step0.target) : target;
  const found = run.metrics.flatMap((m) =>
    m.file.series
      .filter((s) => s.name === PINNED_METRIC && s.status === 'ok' && s.dimensions.ProxyName === proxyName)
      .map((s) => ({ s, periodSec: periodSecOf(m.file, s) })),
  );
  if (found.length === 0)
    return {
      kind: 'not-attributable',
      reason: `no ${PINNED_METRIC} series for ${proxyName} in this run's metrics`,
    };
  let max: number | null = null;
  let attributed = 0;
  let longest = 0;
  let period = 0;
  for (const step of steps) {
    const start = Date.parse(step.startedAt);
    const end = Date.parse(step.endedAt);
    if (!Number.isFinite(start) || !Number.isFinite(end)) continue;
    longest = Math.max(longest, (end - start) / 1000);
    let covered = false;
    for (const { s, periodSec } of found) {
      period = Math.max(period, periodSec);
      for (const [t, v] of s.points) {
        const from = Date.parse(t);
        if (from >= start && from + periodSec * 1000 <= end) {
          covered = true;
          max = max === null ? v : Math.max(max, v);
        }
      }
    }
    if (covered) attributed++;
  }
  if (max === null)
    return {
      kind: 'not-attributable',
      reason: `no step covers a whole ${period || DEFAULT_PERIOD_SEC}-s metric period (the longest lasted ${Math.round(longest)} s)`,
    };
  return { kind: 'measured', max, steps: attributed, of: steps.length };
}

/** A self-hosted pooler's busiest process over each step; RDS Proxy publishes none; direct has none. */
function poolerCpuOf(
  run: LoadedRun,
  d: TargetDescriptor,
  target: TargetRef,
  steps: readonly StepRecord[],
): Pick<DecisionRow, 'poolerCpuPercent' | 'poolerCpuNote'> {
  if (!d.capabilities.pooled) return { poolerCpuPercent: null, poolerCpuNote: 'no pooler' };
  if (d.placement === 'managed')
    return { poolerCpuPercent: null, poolerCpuNote: 'not published by RDS Proxy' };
  const instance = targetInstance(target);
  const series = run.metrics.flatMap((m) =>
    m.file.series.filter(
      (s) =>
        (SELF_HOSTED_POOLERS as readonly string[]).includes(s.source) &&
        s.name === POOLER_CPU_METRIC &&
        s.dimensions.pooler === instance &&
        s.points.length > 0,
    ),
  );
  const values = steps
    .map((s) => {
      const start = Date.parse(s.startedAt);
      const end = Date.parse(s.endedAt);
      return Number.isFinite(start) && Number.isFinite(end)
        ? busiestWindowMean(
            series.map((x) => intervalsOfPoints(x.points)),
            start,
            end,
          )
        : null;
    })
    .filter((v): v is number => v !== null);
  return { poolerCpuPercent: values.length > 0 ? Math.max(...values) : null, poolerCpuNote: null };
}
