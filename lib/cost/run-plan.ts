/**
 * The plan of a run before it starts, from the lab file alone (no AWS call): `proxylab plan`, the
 * same in `run --dry-run`, the duration check of `run`, and the warnings of `validate`. The suite
 * (a catalog suite, or the lab's own scenarios as `lab`) is expanded by the engine's own
 * `expandSuite` against the lab's targets, sized with THE max_connections assumption `deploy` uses
 * too (`maxConnectionsAssumption`), so the steps shown are the steps a run plans — and every target
 * left out, and every billed part no step measures, is said with its reason.
 */
import { UsageError } from '../core/errors';
import type { LabConfig } from '../config/types';
import { resolveSuite } from '../config/scenarios';
import { labTargetCapacities } from '../config/targets';
import { databaseSection } from '../config/database';
import { disruptionAction } from '../suite/disruption-actions';
import { cloudDisruptionsOf, disruptionChange, labDatabaseShape } from '../config/disruptions';
import { replacedDatabaseGroup } from './replaced-database';
import { estimateRunSec, EXPIRY_MARGIN_SEC, runUnits, STEP_OVERHEAD_SEC } from '../config/run-estimate';
import type { RunDurationEstimate } from '../config/run-estimate';
import { cloudProbeUnavailable, labProbeRun } from '../config/cloud-probes';
import { describeTargetTraits, planScenarios, unmeasuredTargets, type PlanScenario } from '../suite/coverage';
import { expandSuite, type PlannedStep, type TargetCapacity } from '../suite/expand';
import { buildPlan } from '../suite/plan';
import type { Scenario } from '../suite/scenario';
import { scenarioScripts, sessionFeatureLines } from '../suite/script-features';
import { fallbackDescriptor } from '../suite/targets';
import { PLAN_FILE_MAX_BYTES, planFileBytes } from '../results/plan-file';
import type { TargetKind } from '../suite/types';
import { estimateCost, type CostEstimate } from './estimate';
import type { PriceTable } from './price-table';
import { maxConnectionsAssumption, runnerCapacityWarningsFor, type MaxConnectionsAssumption } from './guards';
import { formatSettingsPreview, labSettingsPreview, type LabSettingsPreview } from './plan-settings';

export type PlanWarningId =
  | 'proxylab:target-not-measured'
  | 'proxylab:billed-not-measured'
  | 'proxylab:outlives-lab'
  | 'proxylab:runners-too-few'
  | 'proxylab:client-count-unknown'
  | 'proxylab:no-steps'
  | 'proxylab:plan-too-large'
  | 'proxylab:needs-one-runner';

export interface PlanWarning {
  /** Stable id (tests, filters). */
  readonly id: PlanWarningId;
  readonly message: string;
}

export interface PreviewTarget {
  readonly name: string;
  readonly kind: TargetKind;
  /** What it is, in the words the skip reasons use. */
  readonly what: string;
  readonly steps: number;
  /** Of its steps, those planned not available on this lab (recorded so, not run). */
  readonly notAvailable: number;
  /** Seconds of load and step overhead planned on it (a probe group it is in: the group's). */
  readonly sec: number;
}

/** Steps of a scenario the runners will record not available on this lab, by reason. */
export interface NotAvailable {
  /** In the runner's words (lib/config/cloud-probes.ts, or the target's version: lib/suite/expand.ts). */
  readonly reason: string;
  readonly steps: number;
  /** Each target's share of those steps. */
  readonly targets: ReadonlyArray<{ readonly target: string; readonly steps: number }>;
}

export interface PreviewScenario extends PlanScenario {
  readonly steps: number;
  /** The client counts the scenario resolves to on this lab. */
  readonly clients: readonly number[];
  /** Its matrix in words: `simple × persistent, -T 20 s, 3 repetitions, scale 10, own-workload.sql`. */
  readonly cells: string;
  /** Its steps the runners will record not available on this lab, with the reasons (empty: none). */
  readonly notAvailable: readonly NotAvailable[];
  /** What it leaves changed on the lab (a minor upgrade's versions); null: nothing. */
  readonly changes: string | null;
  /** A second database before its group, its time and cost (./replaced-database.ts); null: none. */
  readonly beforeGroup: string | null;
}

/** The lab's time against the run: from a fresh deploy, the lab lives `ttlHours`. */
export interface ExpiryCheck {
  /** null: the lab never expires (`ttlHours: null`). */
  readonly ttlHours: number | null;
  /** The run, the metrics collection and the margin (EXPIRY_MARGIN_SEC). */
  readonly neededSec: number;
  /** null without an expiry. */
  readonly fits: boolean | null;
  /** Hours `--extend` (or `proxylab extend`) would add; 0 when it fits. */
  readonly extendHours: number;
  /** What those hours cost at the lab's hourly estimate; null when not priced. */
  readonly extendUsd: number | null;
}

export type PlanCost =
  | {
      readonly priced: true;
      readonly region: string;
      readonly priceTableAsOf: string;
      /** The lab's hourly estimate (its upper bound for serverless). */
      readonly usdPerHour: number;
      /** The run's share: its duration × the hourly estimate. */
      readonly runUsd: number;
      /** The lab for its whole ttl from a fresh deploy; null without an expiry. */
      readonly ttlUsd: number | null;
    }
  | { readonly priced: false; readonly reason: string };

export interface RunPlanPreview {
  readonly lab: string;
  readonly suite: string;
  readonly suiteDescription: string;
  readonly maxConnections: MaxConnectionsAssumption;
  readonly runnerCount: number;
  readonly stepCount: number;
  /** Of `stepCount`, the steps planned not available on this lab (recorded so, not run, no time). */
  readonly notAvailableCount: number;
  readonly targets: readonly PreviewTarget[];
  readonly scenarios: readonly PreviewScenario[];
  readonly duration: RunDurationEstimate;
  readonly expiry: ExpiryCheck;
  readonly cost: PlanCost;
  /** Per own scenario whose scripts use session features: one line, then a hint (sessionFeaturesOf). */
  readonly sessionFeatures: readonly string[];
  /** Each proxy's and pooler's effective settings, and what differs between variants (./plan-settings.ts). */
  readonly settings: LabSettingsPreview;
  readonly warnings: readonly PlanWarning[];
}

export interface PreviewOptions {
  /** A cost estimate already made (deploy's region); @default estimateCost(lab, { table }) */
  readonly estimate?: CostEstimate;
  /** The lab region's prices as the command resolved them (`preparePrices`); @default the committed table */
  readonly table?: PriceTable | null;
  /**
   * The size plan.json may have: every reader of a run (`report`, resume, the cloud runner) refuses
   * a larger one. @default PLAN_FILE_MAX_BYTES (64 MiB, READ_LIMITS.runFile)
   */
  readonly planFileMaxBytes?: number;
}

/** What `previewRun` expands: the suite's steps on the lab and their coverage. */
interface Expanded {
  readonly steps: readonly PlannedStep[];
  readonly scenarios: readonly PlanScenario[];
}

/**
 * plan.json's share of its readers' limit above which `plan` and `validate` warn: the estimate is
 * made from the lab file, a run's plan from what it probes (versions, settings, the environment), so
 * the two differ by a little; 90 % leaves that room.
 */
export const PLAN_FILE_WARN_SHARE = 0.9;

/**
 * The bytes plan.json of a run of these steps would take (lib/results/plan-file.ts writes it: each
 * script file's text once): the plan a run would store, built from the lab file's targets.
 */
export function estimatePlanFileBytes(
  lab: LabConfig,
  suite: string,
  capacities: readonly TargetCapacity[],
  expanded: Expanded,
): number {
  return planFileBytes(
    buildPlan({
      runId: 'plan-preview',
      suite,
      mode: 'cloud',
      createdAt: new Date(0).toISOString(),
      environment: {
        maxConnections: capacities[0]?.maxConnections ?? null,
        serverVersion: null,
        pgbenchVersion: null,
        poolerVersion: null,
        cpus: null,
      },
      targets: capacities.map((c) => c.descriptor ?? fallbackDescriptor(c.ref)),
      steps: expanded.steps,
      runnerCount: lab.runners.count,
      scenarios: expanded.scenarios,
    }),
  );
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** The warning for a plan.json its own readers would refuse (or nearly), null when it fits. */
function planSizeWarning(
  suite: string,
  stepCount: number,
  bytes: number,
  maxBytes: number,
): PlanWarning | null {
  if (bytes <= maxBytes * PLAN_FILE_WARN_SHARE) return null;
  return {
    id: 'proxylab:plan-too-large',
    message:
      `suite ${suite} plans ${stepCount} steps whose plan.json would be about ${mib(bytes)} ` +
      `(each script stored once), and \`report\`, resume and the runners read at most ${mib(maxBytes)} of it: ` +
      'a run would be refused by its own readers; run fewer steps per run (client counts, repetitions, scenarios)',
  };
}

function expandOnLab(lab: LabConfig, suiteName: string, maxConnections: MaxConnectionsAssumption): Expanded {
  const suite = resolveSuite(suiteName, lab);
  if (maxConnections.value === null)
    throw new UsageError(
      `cannot plan suite ${suiteName} on lab ${lab.name}: max_connections is ${maxConnections.text}, and the suite's client counts need it`,
    );
  const capacities = labTargetCapacities(lab, maxConnections.value);
  const steps = expandSuite(suite, capacities);
  return { steps, scenarios: planScenarios(suite, capacities, steps) };
}

function costOf(lab: LabConfig, opts: PreviewOptions): CostEstimate | string {
  if (opts.estimate) return opts.estimate;
  try {
    return estimateCost(lab, { table: opts.table ?? null });
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
}

const usd = (x: number): string => `$${x.toFixed(2)}`;

/** `10 h 41 min`, `26 min`, `45 s`: a planned duration (rounded to the minute above a minute). */
export function formatHours(sec: number): string {
  const s = Math.max(0, Math.round(sec));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  const h = Math.floor(m / 60);
  return h > 0 ? `${h} h ${String(m % 60).padStart(2, '0')} min` : `${m} min`;
}

/**
 * The steps as the runners of this lab will take them: a probe step a cloud run cannot measure here
 * (its kind's reason for the lab's database and `runnerCount`, lib/config/cloud-probes.ts — what the
 * runner's probe runners ask) is planned not available with the reason the runner records.
 */
export function withCloudAvailability(
  lab: LabConfig,
  steps: readonly PlannedStep[],
  runnerCount: number = lab.runners.count,
): PlannedStep[] {
  const run = { ...labProbeRun(lab), runnerCount };
  return steps.map((s) => {
    if (!s.probe || s.unavailable !== null) return s;
    const why = cloudProbeUnavailable(s.probe.spec, run);
    return why === null ? s : { ...s, unavailable: why };
  });
}

/** The not-available steps among `steps`, by reason, with each target's share. */
function notAvailableOf(steps: readonly PlannedStep[]): NotAvailable[] {
  const byReason = new Map<string, Map<string, number>>();
  for (const s of steps) {
    if (s.unavailable === null) continue;
    const targets = byReason.get(s.unavailable) ?? new Map<string, number>();
    targets.set(s.target.name, (targets.get(s.target.name) ?? 0) + 1);
    byReason.set(s.unavailable, targets);
  }
  return [...byReason].map(([reason, targets]) => ({
    reason,
    steps: [...targets.values()].reduce((a, b) => a + b, 0),
    targets: [...targets].map(([target, n]) => ({ target, steps: n })),
  }));
}

/**
 * Steps the lab's runner count makes not available (a disruption is injected by one runner, a
 * session-state probe is one runner's): what `validate` would otherwise never say.
 */
function oneRunnerWarnings(lab: LabConfig, suite: string, steps: readonly PlannedStep[]): PlanWarning[] {
  if (lab.runners.count <= 1) return [];
  const here = withCloudAvailability(lab, steps);
  const alone = withCloudAvailability(lab, steps, 1);
  const lost = here.filter((s, i) => s.unavailable !== null && alone[i]?.unavailable === null);
  if (lost.length === 0) return [];
  const parts = [...new Set(lost.map((s) => s.scenario))].map((scenario) => {
    const mine = lost.filter((s) => s.scenario === scenario);
    return `${scenario} (${mine.length} steps): ${mine[0]?.unavailable ?? ''}`;
  });
  return [
    {
      id: 'proxylab:needs-one-runner',
      message:
        `suite ${suite}: ${lost.length} steps need a lab with runners.count 1 and lab ${lab.name} has ${lab.runners.count}: ` +
        `the runners will record them not available — ${parts.join('; ')}`,
    },
  ];
}

/** Each lab target's steps, its not-available ones, and the time of every unit (step or probe group) it is in. */
function previewTargets(
  capacities: readonly TargetCapacity[],
  steps: readonly PlannedStep[],
): PreviewTarget[] {
  const units = runUnits(steps);
  return capacities.map((c) => {
    const mine = steps.filter((s) => s.target.name === c.ref.name);
    return {
      name: c.ref.name,
      kind: c.ref.kind,
      what: describeTargetTraits(c.descriptor ?? fallbackDescriptor(c.ref)),
      steps: mine.length,
      notAvailable: mine.filter((s) => s.unavailable !== null).length,
      sec: units
        .filter((u) => u.steps.some((s) => s.target.name === c.ref.name))
        .reduce((sum, u) => sum + u.sec + STEP_OVERHEAD_SEC, 0),
    };
  });
}

/** The lab's time against the run's: from a fresh deploy, the lab lives `ttlHours`. */
function expiryCheck(lab: LabConfig, duration: RunDurationEstimate, hourly: number | null): ExpiryCheck {
  const neededSec = duration.totalSec + EXPIRY_MARGIN_SEC;
  const ttlSec = lab.ttlHours === null ? null : lab.ttlHours * 3600;
  const extendHours = ttlSec === null || neededSec <= ttlSec ? 0 : Math.ceil((neededSec - ttlSec) / 3600);
  return {
    ttlHours: lab.ttlHours,
    neededSec,
    fits: ttlSec === null ? null : neededSec <= ttlSec,
    extendHours,
    extendUsd: hourly === null ? null : extendHours * hourly,
  };
}

/**
 * The plan of `suiteName` on `lab`: steps per scenario and target (with the reason for every
 * target left out, and for every step the runners will record not available), the duration against
 * the lab's ttl, the cost, and the warnings. A UsageError for an unknown suite, or when
 * max_connections cannot be known.
 */
export function previewRun(lab: LabConfig, suiteName: string, opts: PreviewOptions = {}): RunPlanPreview {
  const maxConnections = maxConnectionsAssumption(lab);
  const suite = resolveSuite(suiteName, lab);
  const expanded = expandOnLab(lab, suiteName, maxConnections);
  const { scenarios } = expanded;
  // What the runners of this lab will take: the probe steps they cannot measure here planned so.
  const steps = withCloudAvailability(lab, expanded.steps);
  const capacities = labTargetCapacities(lab, maxConnections.value ?? 0);
  const planBytes = estimatePlanFileBytes(lab, suite.name, capacities, expanded);
  const targets = previewTargets(capacities, steps);
  const duration = estimateRunSec(steps);
  const estimate = costOf(lab, opts);
  const hourly = typeof estimate === 'string' ? null : estimate.totals.perHourUsdMax;
  const expiry = expiryCheck(lab, duration, hourly);
  const cost: PlanCost =
    typeof estimate === 'string'
      ? { priced: false, reason: estimate }
      : {
          priced: true,
          region: estimate.region,
          priceTableAsOf: estimate.priceTableAsOf,
          usdPerHour: estimate.totals.perHourUsdMax,
          runUsd: (duration.totalSec / 3600) * estimate.totals.perHourUsdMax,
          ttlUsd: lab.ttlHours === null ? null : lab.ttlHours * estimate.totals.perHourUsdMax,
        };
  const preview: Omit<RunPlanPreview, 'warnings'> = {
    lab: lab.name,
    suite: suite.name,
    suiteDescription: suite.description,
    maxConnections,
    runnerCount: lab.runners.count,
    stepCount: steps.length,
    notAvailableCount: duration.notAvailable,
    targets,
    scenarios: scenarios.map((s) => {
      const scenario = suite.scenarios.find((x) => x.name === s.name);
      const mine = steps.filter((x) => x.scenario === s.name);
      return {
        ...s,
        steps: mine.length,
        clients: [...new Set(mine.map((x) => x.params.clients))].sort((a, b) => a - b),
        cells: scenario ? cellsText(mine, scenario.repetitions) : '',
        notAvailable: notAvailableOf(mine),
        changes: scenario ? disruptionChange(scenario, labDatabaseShape(lab.database)) : null,
        beforeGroup: (scenario && replacedDatabaseGroup(scenario, estimate)?.text) ?? null,
      };
    }),
    duration,
    expiry,
    cost,
    sessionFeatures: sessionFeaturesOf(suite.scenarios),
    settings: labSettingsPreview(lab),
  };
  const warnings = [
    ...(steps.length === 0
      ? [
          {
            id: 'proxylab:no-steps' as const,
            message: `suite ${suite.name} has no step for lab ${lab.name}'s targets (${targets.map((t) => t.name).join(', ')}): a run would be refused`,
          },
        ]
      : []),
    ...oneRunnerWarnings(lab, suite.name, expanded.steps),
    ...coverageWarnings(
      lab,
      [{ suite: suite.name, scenarios }],
      typeof estimate === 'string' ? null : estimate,
    ),
    ...expiryWarnings(suite.name, expiry, duration),
    ...[
      planSizeWarning(suite.name, steps.length, planBytes, opts.planFileMaxBytes ?? PLAN_FILE_MAX_BYTES),
    ].filter((w): w is PlanWarning => w !== null),
    ...runnerCapacityWarningsFor(lab, [
      { suite: suite.name, clients: suite.scenarios.flatMap((sc) => sc.clients) },
    ]).map((w) => ({ id: w.id, message: w.message })),
  ];
  return { ...preview, warnings };
}

/** The session features the lab's own scenarios' scripts use (lib/suite/script-features.ts); empty when none. */
export function sessionFeaturesOf(scenarios: readonly Scenario[]): string[] {
  return sessionFeatureLines(scenarios.filter((s) => s.experiment === null).map(scenarioScripts));
}

/** The matrix of a scenario's steps in words. */
function cellsText(steps: readonly PlannedStep[], repetitions: number): string {
  const first = steps[0];
  if (!first) return 'no steps on this lab';
  const p = first.params;
  const uniq = <T>(xs: readonly T[]): T[] => [...new Set(xs)];
  const run =
    p.durationSec !== null ? `-T ${p.durationSec} s` : `-t ${p.transactionsPerClient ?? '?'} per client`;
  const pools = uniq(steps.map((s) => s.params.poolPercent).filter((x): x is number => x !== null));
  return [
    `${uniq(steps.map((s) => s.params.protocol)).join('/')} × ${uniq(steps.map((s) => s.params.connect)).join('/')}`,
    run,
    `${repetitions} repetition${repetitions === 1 ? '' : 's'}`,
    ...(pools.length > 0 ? [`pool ${pools.join('/')} %`] : []),
    ...(p.rate !== null ? [`-R ${p.rate}`] : []),
    `scale ${p.scale}`,
    p.script,
  ].join(', ');
}

function expiryWarnings(suite: string, e: ExpiryCheck, d: RunDurationEstimate): PlanWarning[] {
  if (e.fits !== false) return [];
  const extra = e.extendUsd === null ? '' : ` ≈ ${usd(e.extendUsd)}`;
  return [
    {
      id: 'proxylab:outlives-lab',
      message:
        `suite ${suite} takes about ${formatHours(d.totalSec)} (with the metrics collection; ${formatHours(e.neededSec)} with the ` +
        `${EXPIRY_MARGIN_SEC / 60}-min margin), more than the lab's ttlHours ${e.ttlHours ?? ''} from a fresh deploy: ` +
        `run it with --extend (adds ${e.extendHours} h${extra}) or raise ttlHours`,
    },
  ];
}

/**
 * Warnings for what the chosen suites never measure: a lab target with no step in any of them
 * (with each scenario's reason), and a billed part — an Aurora reader, an RDS Proxy, a dedicated
 * pooler host — that none of them touches (with what it costs per hour when priced).
 */
export function coverageWarnings(
  lab: LabConfig,
  suites: ReadonlyArray<{ readonly suite: string; readonly scenarios: readonly PlanScenario[] }>,
  estimate: CostEstimate | null,
): PlanWarning[] {
  const names = suites.map((s) => s.suite).join(', ');
  const all = suites.flatMap((s) => s.scenarios);
  const unmeasured = unmeasuredTargets(all);
  const out: PlanWarning[] = unmeasured.map((u) => ({
    id: 'proxylab:target-not-measured',
    message: `target ${u.target} gets no step in suite${suites.length === 1 ? '' : 's'} ${names}: ${[...new Set(u.reasons)].join('; ')}`,
  }));
  const gone = new Set(unmeasured.map((u) => u.target));
  const price = (resource: string): string => {
    const line = estimate?.lines.filter((l) => l.resource === resource) ?? [];
    if (line.length === 0) return '';
    return ` (${usd(line.reduce((sum, l) => sum + l.usdPerHourMax, 0))}/h)`;
  };
  const db = lab.database;
  // An Aurora failover promotes a reader: the suites that inject one measure it.
  const failsOver = cloudDisruptionsOf(
    suites.map((x) => x.suite),
    db.engine,
  ).some((a) => disruptionAction(a).movesWriter);
  if (db.engine === 'aurora-postgresql' && db.readers > 0 && !failsOver) {
    const readers = Array.from({ length: db.readers }, (_, i) => `reader:${i + 1}`);
    const perHour = estimate
      ? estimate.lines.filter((l) => l.resource !== undefined && readers.includes(l.resource))
      : [];
    const cost = perHour.length > 0 ? ` (${usd(perHour.reduce((s, l) => s + l.usdPerHourMax, 0))}/h)` : '';
    out.push({
      id: 'proxylab:billed-not-measured',
      message:
        `${databaseSection(db)}.readers ${db.readers}: ${db.readers === 1 ? 'a reader is' : `${db.readers} readers are`} billed${cost} and no step measures ` +
        `${db.readers === 1 ? 'it' : 'them'}: every target (direct, each RDS Proxy, each pooler) reaches the writer` +
        `${lab.proxies.length > 0 ? ", and each RDS Proxy bills the readers' vCPUs too" : ''}. Set readers to 0 unless the lab is about failover`,
    });
  }
  for (const proxy of lab.proxies) {
    const mine = all
      .flatMap((s) => s.targets)
      .filter((t) => t.target === proxy.name || t.target.startsWith(`${proxy.name}-`));
    if (mine.length > 0 && mine.every((t) => gone.has(t.target)))
      out.push({
        id: 'proxylab:billed-not-measured',
        message: `RDS Proxy ${proxy.name} is billed${price(`proxy:${proxy.name}`)} and suite${suites.length === 1 ? '' : 's'} ${names} never measure${suites.length === 1 ? 's' : ''} it`,
      });
  }
  for (const pooler of lab.poolers.filter((p) => p.placement === 'dedicated')) {
    const mine = pooler.poolModes.map((m) => `${pooler.name}-${m}`);
    if (mine.every((t) => gone.has(t)))
      out.push({
        id: 'proxylab:billed-not-measured',
        message: `the pooler host of ${pooler.name} (${pooler.instanceType ?? '?'}) is billed${price(`pooler:${pooler.name}`)} and suite${suites.length === 1 ? '' : 's'} ${names} never measure${suites.length === 1 ? 's' : ''} its pools (${mine.join(', ')})`,
      });
  }
  return out;
}

/**
 * The warnings of a lab's suites together (`validate`): what none of them measures, and, per
 * suite, a run that would outlive the lab or need more runners, or whose plan.json its own readers
 * would refuse (`proxylab:plan-too-large`). A suite that cannot be planned (max_connections
 * unknown) is one warning saying so.
 */
export function labSuiteWarnings(
  lab: LabConfig,
  suites: readonly string[],
  opts: Pick<PreviewOptions, 'planFileMaxBytes' | 'table'> = {},
): PlanWarning[] {
  const estimate = costOf(lab, opts);
  const out: PlanWarning[] = [];
  const covered: Array<{ suite: string; scenarios: readonly PlanScenario[] }> = [];
  for (const name of suites) {
    try {
      const p = previewRun(lab, name, typeof estimate === 'string' ? opts : { ...opts, estimate });
      covered.push({ suite: name, scenarios: p.scenarios });
      out.push(
        ...p.warnings.filter(
          (w) => w.id !== 'proxylab:target-not-measured' && w.id !== 'proxylab:billed-not-measured',
        ),
      );
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      out.push({ id: 'proxylab:client-count-unknown', message: err.message });
    }
  }
  return [...coverageWarnings(lab, covered, typeof estimate === 'string' ? null : estimate), ...out];
}

// ---------------------------------------------------------------------------------------------
// In words (`proxylab plan`, `run --dry-run`)

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

/** A target's time in the plan, or why it has none. */
function targetTime(t: PreviewTarget): string {
  if (t.steps === 0) return 'not measured';
  if (t.notAvailable === t.steps) return 'not available';
  return `about ${formatHours(t.sec)}${t.notAvailable > 0 ? ` (${t.notAvailable} not available)` : ''}`;
}

/** How the steps' time was counted: `load + 15 s each; 18 measured with their probe group; 66 not available`. */
function stepsCounted(d: RunDurationEstimate): string {
  return [
    `load + ${STEP_OVERHEAD_SEC} s each`,
    ...(d.together > 0 ? [`${d.together} run together with their probe group, counted once`] : []),
    ...(d.notAvailable > 0 ? [`${d.notAvailable} not available, not run`] : []),
  ].join('; ');
}

/** The preview for a terminal: what runs where, how long, what it costs, and every warning. */
export function formatRunPlan(p: RunPlanPreview, opts: { readonly allSettings?: boolean } = {}): string {
  const lines: string[] = [];
  const notAvailable = p.notAvailableCount > 0 ? ` (${p.notAvailableCount} not available on this lab)` : '';
  lines.push(
    `Plan: suite ${p.suite} on lab ${p.lab}: ${p.scenarios.length} scenario${p.scenarios.length === 1 ? '' : 's'}, ${p.stepCount} steps${notAvailable}, ${p.runnerCount} runner${p.runnerCount === 1 ? '' : 's'}`,
  );
  lines.push(
    `  max_connections assumed: ${p.maxConnections.text}; a run reads SHOW max_connections and plans against that`,
  );
  const width = Math.max(6, ...p.targets.map((t) => t.name.length)) + 2;
  for (const s of p.scenarios) {
    const origin = s.experiment === null ? "the lab's own scenario" : `${s.experiment}`;
    lines.push('');
    lines.push(`  scenario ${s.name} (${origin}): ${s.title}`);
    if (s.source)
      lines.push(
        `    source: ${[s.source.title, s.source.publisher, s.source.date, s.source.url ?? 'not public'].filter((x) => x !== null).join(', ')}`,
      );
    lines.push(`    clients ${s.clients.join(', ') || '–'}; ${s.cells}`);
    for (const t of s.targets) {
      const na = s.notAvailable.reduce(
        (n, x) => n + (x.targets.find((y) => y.target === t.target)?.steps ?? 0),
        0,
      );
      const also = na === 0 ? '' : na === t.steps ? ', not available' : `, ${na} not available`;
      lines.push(
        `    ${pad(t.target, width)}${t.steps > 0 ? `${t.steps} steps${also}` : `skipped: ${t.skipped ?? ''}`}`,
      );
    }
    for (const x of s.notAvailable)
      lines.push(`    not available (${x.steps} steps, recorded so by the runners, not run): ${x.reason}`);
    if (s.beforeGroup !== null) lines.push(`    before the group: ${s.beforeGroup}`);
    if (s.changes !== null) lines.push(`    changes the lab: ${s.changes}`);
  }
  if (p.sessionFeatures.length > 0) lines.push('', ...p.sessionFeatures.map((l) => `  ${l}`));
  lines.push('');
  lines.push('  steps per target (whole suite):');
  for (const t of p.targets)
    lines.push(`    ${pad(t.name, width)}${pad(String(t.steps), 6)}${targetTime(t)}   ${t.what}`);
  const d = p.duration;
  lines.push('');
  lines.push(
    `  duration: about ${formatHours(d.totalSec)} = steps ${formatHours(d.stepsSec)} (${stepsCounted(d)}) + ${d.initCount} data load${d.initCount === 1 ? '' : 's'} ${formatHours(d.initSec)} + metrics settle ${formatHours(d.settleSec)}`,
  );
  const e = p.expiry;
  if (e.ttlHours === null) lines.push('  lab time: no expiry (ttlHours null): nothing to outlive');
  else if (e.fits)
    lines.push(
      `  lab time: fits in ttlHours ${e.ttlHours} from a fresh deploy (needs ${formatHours(e.neededSec)} with the ${EXPIRY_MARGIN_SEC / 60}-min margin); run checks the deployed lab's own expiry`,
    );
  else
    lines.push(
      `  lab time: does NOT fit in ttlHours ${e.ttlHours} (needs ${formatHours(e.neededSec)} with the ${EXPIRY_MARGIN_SEC / 60}-min margin): --extend adds ${e.extendHours} h${e.extendUsd !== null ? ` ≈ ${usd(e.extendUsd)}` : ''}`,
    );
  const c = p.cost;
  if (c.priced)
    lines.push(
      `  cost: the lab bills about ${usd(c.usdPerHour)}/h (${c.region}, prices as of ${c.priceTableAsOf}); this run ≈ ${(d.totalSec / 3600).toFixed(2)} h ≈ ${usd(c.runUsd)}` +
        (c.ttlUsd !== null && e.ttlHours !== null
          ? `; the lab for its ttl of ${e.ttlHours} h ≈ ${usd(c.ttlUsd)}`
          : ''),
    );
  else lines.push(`  cost: not priced: ${c.reason}`);
  lines.push(...formatSettingsPreview(p.settings, opts.allSettings));
  if (p.warnings.length > 0) {
    lines.push('');
    for (const w of p.warnings) lines.push(`warning: ${w.message}`);
  }
  return lines.join('\n');
}
