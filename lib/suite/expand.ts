/**
 * Suite expansion (pure): scenario matrices → ordered steps with stable, human-readable ids.
 *
 * Rules (docs/suite.md repeats them):
 * - Step id: `<scenario>/<target name>/c<clients>/<protocol>/<connect>[/ps-<off|on>][/pool<percent>]/r<repetition>`,
 *   e.g. `e1/pgbouncer-transaction/c60/prepared/persistent/r1`. Same inputs → same ids.
 * - Clients resolve to the SAME number for every target of a cell, so direct and pooled compare:
 *   `{times, of: 'maxConnections'}` uses the server's max_connections (the direct target's, else
 *   the smallest of the targets given); `{times, of: 'poolSize'}` uses the smallest pool size among
 *   the scenario's pooled targets present (in a pool-percent sweep: percent × max_connections),
 *   falling back to max_connections when no pool size is known. round(times × capacity), at least 1.
 *   Two specs that resolve to the same count in one scenario give one cell (the first).
 * - jobs = min(scenario jobs, clients).
 * - A scenario names its targets by capability (`TargetMatch`, lib/suite/targets.ts): each entry
 *   selects every present target it matches (every named RDS Proxy of a lab for a managed pool),
 *   in the order given; an entry no present target matches is skipped. Target names must be unique.
 * - Pool-percent sweeps apply to pooled targets only; direct runs once per cell (poolPercent null). A
 *   pooled target whose pool cannot be resized here (`resizablePool` null) gets the sweep's cells
 *   planned as not available, with its descriptor's reason, never run at another size.
 * - Prepared-statement sweeps (`scenario.preparedStatements`) apply to targets whose descriptor can
 *   switch the support (PgBouncer transaction pools): one step per mode, `ps-off` / `ps-on`. A mode
 *   the target's version cannot run is still planned, with `unavailable` saying why; the engine
 *   records it as not available instead of running it. Expectations match the step's descriptor.
 * - Probe scenarios (`scenario.probe`, lib/suite/probes.ts) expand the same way; each step carries
 *   `probe` (the spec and its group). A kind run together per repetition (a disruption) groups the
 *   repetition's steps as `<scenario>/r<n>` and reverses the target order on even repetitions, so
 *   no target is always first; its timeout follows the probe's duration.
 * - Order: scenario → pool percent → repetition → clients → protocol → connect → target → mode.
 */
import { UsageError } from '../core/errors';
import type {
  ClientsSpec,
  ExperimentId,
  InitFlag,
  MaxConnectionsBand,
  Scenario,
  ScriptSpec,
  Suite,
} from './catalog';
import { scriptLabel, validateScenario } from './catalog';
import {
  fallbackDescriptor,
  matchesTarget,
  selectTargets,
  withPreparedStatements,
  type PreparedStatementsMode,
  type TargetDescriptor,
} from './targets';
import {
  alternatesTargets,
  probeDurationSec,
  probeGroup,
  probeLabel,
  probeUnavailableOn,
  type PlannedProbe,
} from './probes';
import type { ErrorClass, Outcome, StepParams, TargetRef } from './types';

export interface TargetCapacity {
  readonly ref: TargetRef;
  /**
   * What the target is and can do, as probed at run time (lib/suite/targets.ts). Absent: from the
   * kind alone, version unknown (`fallbackDescriptor`).
   */
  readonly descriptor?: TargetDescriptor;
  /** max_connections of the server behind the target. */
  readonly maxConnections: number;
  /** Server connections of the pool (pooled targets), null for direct. */
  readonly poolSize: number | null;
}

export interface StepExpectation {
  readonly outcome: Outcome;
  /** For refused / errors: any one of these classes is enough. */
  readonly errorClasses: readonly ErrorClass[];
  readonly published: string | null;
  readonly note: string | null;
}

export interface PlannedStep {
  readonly stepId: string;
  readonly scenario: string;
  /** null: a lab's own scenario. */
  readonly experiment: ExperimentId | null;
  readonly target: TargetRef;
  /** The target as this step runs it (the prepared-statement dimension applied). */
  readonly descriptor: TargetDescriptor;
  /** Why this cell cannot run on this target (`not available on PgBouncer 1.18 (needs ≥ 1.21)`); null runs. */
  readonly unavailable: string | null;
  readonly params: StepParams;
  readonly expectation: StepExpectation;
  readonly script: ScriptSpec;
  readonly initFlags: readonly InitFlag[];
  /** Kill pgbench after this long (a session pool can hang it). */
  readonly timeoutSec: number;
  /** pgbench --sampling-rate for the per-transaction log; null = log every transaction. */
  readonly logSamplingRate: number | null;
  /** The capacity the step was planned against (pre-check, reports). */
  readonly maxConnections: number;
  readonly poolSize: number | null;
  readonly maxConnectionsBand: MaxConnectionsBand;
  /**
   * A probe step (lib/suite/probes.ts): measured by the probe port of its kind, together with the
   * other steps of its group, instead of by pgbench. Absent or null: a pgbench step (plans written
   * before probes existed have none).
   */
  readonly probe?: PlannedProbe | null;
}

export interface ExpandOptions {
  /** Replace every scenario's repetitions. */
  readonly repetitionsOverride?: number;
  /** Multiply durations and transactions per client (≥ 1 s / 1 transaction after scaling). */
  readonly durationScale?: number;
  /** Per-transaction log budget in lines; above it a sampling rate is set. @default 1_000_000 */
  readonly maxLogLines?: number;
}

/** Generous per-client and total tps bounds used to project log volume for `-T` runs. */
const TPS_BOUND_PER_CLIENT = 4000;
const TPS_BOUND_TOTAL = 100000;
const DEFAULT_MAX_LOG_LINES = 1_000_000;

export function maxConnectionsBand(clients: number, maxConnections: number): MaxConnectionsBand {
  if (clients > maxConnections) return 'above';
  const margin = Math.max(3, Math.ceil(0.05 * maxConnections));
  return clients > maxConnections - margin ? 'near' : 'below';
}

export function resolveClients(
  spec: ClientsSpec,
  capacity: { maxConnections: number; poolSize: number | null },
): number {
  if (typeof spec === 'number') return Math.max(1, Math.round(spec));
  const base =
    spec.of === 'poolSize' ? (capacity.poolSize ?? capacity.maxConnections) : capacity.maxConnections;
  return Math.max(1, Math.round(spec.times * base));
}

/** Sampling rate so the projected per-transaction log stays under `maxLines`; null when no sampling is needed. */
export function logSamplingRateFor(
  clients: number,
  run: { durationSec: number | null; transactionsPerClient: number | null },
  maxLines: number = DEFAULT_MAX_LOG_LINES,
): number | null {
  const projected =
    run.transactionsPerClient !== null
      ? clients * run.transactionsPerClient
      : (run.durationSec ?? 0) * Math.min(clients * TPS_BOUND_PER_CLIENT, TPS_BOUND_TOTAL);
  if (projected <= maxLines) return null;
  const raw = maxLines / projected;
  // two significant digits, rounded down so the budget holds
  const magnitude = Math.pow(10, Math.floor(Math.log10(raw)) - 1);
  return Math.max(0.0001, Number((Math.floor(raw / magnitude) * magnitude).toPrecision(2)));
}

function timeoutSecFor(
  clients: number,
  run: { durationSec: number | null; transactionsPerClient: number | null },
): number {
  if (run.durationSec !== null) return Math.ceil(run.durationSec * 1.5) + 60;
  return 120 + Math.ceil((clients * (run.transactionsPerClient ?? 0)) / 200);
}

function matchExpectation(
  scenario: Scenario,
  cell: {
    descriptor: TargetDescriptor;
    protocol: StepParams['protocol'];
    connect: StepParams['connect'];
    clients: number;
    band: MaxConnectionsBand;
    poolSize: number | null;
  },
): StepExpectation {
  for (const rule of scenario.expectations) {
    const w = rule.when;
    if (!matchesTarget(cell.descriptor, w.target)) continue;
    if (w.protocols && !w.protocols.includes(cell.protocol)) continue;
    if (w.connects && !w.connects.includes(cell.connect)) continue;
    if (w.maxConnectionsBand && !w.maxConnectionsBand.includes(cell.band)) continue;
    if (
      w.clientsAbovePoolSize !== undefined &&
      (cell.poolSize === null || cell.clients > cell.poolSize !== w.clientsAbovePoolSize)
    )
      continue;
    return {
      outcome: rule.outcome,
      errorClasses: rule.errorClasses ?? [],
      published: rule.published ?? null,
      note: rule.note ?? null,
    };
  }
  return {
    outcome: 'any',
    errorClasses: [],
    published: null,
    note: 'no expectation in the catalog for this cell',
  };
}

function scaled(value: number | undefined, factor: number): number | null {
  if (value === undefined) return null;
  return Math.max(1, Math.round(value * factor));
}

type Described = TargetCapacity & { readonly descriptor: TargetDescriptor };

export function expandScenario(
  scenario: Scenario,
  given: readonly TargetCapacity[],
  opts: ExpandOptions = {},
): PlannedStep[] {
  const targets: Described[] = given.map((t) => ({
    ...t,
    descriptor: t.descriptor ?? fallbackDescriptor(t.ref),
  }));
  const problems = validateScenario(scenario);
  if (problems.length > 0) throw new UsageError(`invalid scenario: ${problems.join('; ')}`);
  const names = targets.map((t) => t.ref.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined) throw new UsageError(`target names must be unique; "${dup}" appears twice`);
  if (targets.length === 0) return [];

  const present = selectTargets(scenario.targets, targets);
  if (present.length === 0) return [];
  const direct = targets.find((t) => !t.descriptor.capabilities.pooled);
  const serverMax = direct?.maxConnections ?? Math.min(...targets.map((t) => t.maxConnections));
  const pooledPresent = present.filter((t) => t.descriptor.capabilities.pooled);
  const knownPools = pooledPresent.map((t) => t.poolSize).filter((p): p is number => p !== null);
  const configuredPool = knownPools.length > 0 ? Math.min(...knownPools) : null;

  const factor = opts.durationScale ?? 1;
  const durationSec = scaled(scenario.durationSec, factor);
  const transactionsPerClient = scaled(scenario.transactionsPerClient, factor);
  const repetitions = opts.repetitionsOverride ?? scenario.repetitions;
  const sweep: ReadonlyArray<number | null> =
    scenario.poolPercents && scenario.poolPercents.length > 0 ? scenario.poolPercents : [null];
  const label = scenario.probe ? probeLabel(scenario.probe) : scriptLabel(scenario.script);
  const run = { durationSec, transactionsPerClient, label };

  const steps: PlannedStep[] = [];
  sweep.forEach((percent, sweepIndex) => {
    const poolForClients =
      percent !== null ? Math.max(1, Math.round((percent / 100) * serverMax)) : configuredPool;
    const clientCounts: number[] = [];
    for (const spec of scenario.clients) {
      const n = resolveClients(spec, { maxConnections: serverMax, poolSize: poolForClients });
      if (!clientCounts.includes(n)) clientCounts.push(n);
    }
    for (let rep = 1; rep <= repetitions; rep++) {
      for (const clients of clientCounts) {
        for (const protocol of scenario.protocols) {
          for (const connect of scenario.connects) {
            // A probe run together per repetition alternates its target order (r2 reversed, …).
            const order =
              scenario.probe && alternatesTargets(scenario.probe) && rep % 2 === 0
                ? [...present].reverse()
                : present;
            for (const cell of withDimension(scenario, order)) {
              // direct does not depend on the pool: once per cell, in the first sweep group
              if (!cell.target.descriptor.capabilities.pooled && sweepIndex > 0) continue;
              steps.push(
                plannedStep(scenario, { ...cell, clients, protocol, connect, rep, percent }, run, opts),
              );
            }
          }
        }
      }
    }
  });
  return steps;
}

/**
 * One cell of a scenario as expandScenario's loops reach it: a target (and prepared-statement mode)
 * at a client count, protocol, connect mode, repetition and pool percent.
 */
interface StepCell {
  readonly target: Described;
  readonly ps: PreparedStatementsMode | null;
  readonly descriptor: TargetDescriptor;
  readonly unavailable: string | null;
  readonly clients: number;
  readonly protocol: StepParams['protocol'];
  readonly connect: StepParams['connect'];
  readonly rep: number;
  /** The sweep group's pool percent; null when the scenario sweeps none. */
  readonly percent: number | null;
}

/** The planned step of one cell: its id, parameters, expectation, timeout and probe. */
function plannedStep(
  scenario: Scenario,
  { target, ps, descriptor, unavailable, clients, protocol, connect, rep, percent }: StepCell,
  {
    durationSec,
    transactionsPerClient,
    label,
  }: { durationSec: number | null; transactionsPerClient: number | null; label: string },
  opts: ExpandOptions,
): PlannedStep {
  const pooled = target.descriptor.capabilities.pooled;
  const stepPercent = pooled ? percent : null;
  const poolSize = pooled
    ? stepPercent !== null
      ? Math.max(1, Math.round((stepPercent / 100) * target.maxConnections))
      : target.poolSize
    : null;
  const band = maxConnectionsBand(clients, target.maxConnections);
  const run = { durationSec, transactionsPerClient };
  const probeSec = scenario.probe ? probeDurationSec(scenario.probe) : null;
  const stepId = [
    scenario.name,
    target.ref.name,
    `c${clients}`,
    protocol,
    connect,
    ...(ps !== null ? [`ps-${ps}`] : []),
    ...(stepPercent !== null ? [`pool${stepPercent}`] : []),
    `r${rep}`,
  ].join('/');
  return {
    stepId,
    scenario: scenario.name,
    experiment: scenario.experiment,
    target: target.ref,
    descriptor,
    unavailable:
      unavailable ??
      fixedPoolCell(target.descriptor, stepPercent) ??
      (scenario.probe ? probeUnavailableOn(scenario.probe, target.descriptor) : null),
    params: {
      clients,
      jobs: Math.min(scenario.jobs, clients),
      protocol,
      connect,
      script: label,
      durationSec,
      transactionsPerClient,
      rate: scenario.rate ?? null,
      scale: scenario.scale,
      poolPercent: stepPercent,
      repetition: rep,
      ...(ps !== null ? { preparedStatements: ps } : {}),
    },
    expectation: matchExpectation(scenario, {
      descriptor,
      protocol,
      connect,
      clients,
      band,
      poolSize,
    }),
    script: scenario.script,
    initFlags: scenario.initFlags,
    timeoutSec:
      scenario.timeoutSec ??
      (probeSec !== null ? Math.ceil(probeSec * 1.5) + 60 : timeoutSecFor(clients, run)),
    logSamplingRate: logSamplingRateFor(clients, run, opts.maxLogLines),
    maxConnections: target.maxConnections,
    poolSize,
    maxConnectionsBand: band,
    ...(scenario.probe
      ? {
          probe: {
            group: probeGroup(scenario.probe, scenario.name, rep, stepId),
            spec: scenario.probe,
          },
        }
      : {}),
  };
}

/**
 * Why a pool-percent cell cannot run on a pooled target whose pool cannot be resized here (its
 * descriptor says so); null when it can, or when the cell sweeps nothing. Never run at another size
 * under the cell's percent.
 */
function fixedPoolCell(d: TargetDescriptor, percent: number | null): string | null {
  if (percent === null || !d.capabilities.pooled || d.capabilities.resizablePool !== null) return null;
  return `pool of ${d.name} cannot be resized at run time${d.capabilities.fixedPoolReason ? `: ${d.capabilities.fixedPoolReason}` : ''}`;
}

/**
 * The targets of one cell: each target once, or — in a scenario that sweeps prepared-statement
 * support — a target that can switch it once per mode, with its descriptor as that step runs it.
 */
function withDimension(
  scenario: Scenario,
  present: readonly Described[],
): Array<{
  target: Described;
  ps: PreparedStatementsMode | null;
  descriptor: TargetDescriptor;
  unavailable: string | null;
}> {
  const modes = scenario.preparedStatements ?? [];
  return present.flatMap((target) => {
    if (modes.length === 0 || target.descriptor.capabilities.preparedStatementsSwitch === null)
      return [{ target, ps: null, descriptor: target.descriptor, unavailable: null }];
    return modes.map((ps: PreparedStatementsMode | null) => ({
      target,
      ps,
      ...withPreparedStatements(target.descriptor, ps ?? 'off'),
    }));
  });
}

export function expandSuite(
  suite: Suite,
  targets: readonly TargetCapacity[],
  opts: ExpandOptions = {},
): PlannedStep[] {
  const names = suite.scenarios.map((s) => s.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined) throw new UsageError(`suite ${suite.name}: scenario "${dup}" appears twice`);
  if (
    opts.repetitionsOverride !== undefined &&
    !(Number.isInteger(opts.repetitionsOverride) && opts.repetitionsOverride >= 1)
  ) {
    throw new UsageError(`repetitions must be an integer ≥ 1, got ${opts.repetitionsOverride}`);
  }
  if (opts.durationScale !== undefined && !(opts.durationScale > 0)) {
    throw new UsageError(`durationScale must be > 0, got ${opts.durationScale}`);
  }
  return suite.scenarios.flatMap((s) => expandScenario(s, targets, opts));
}

/** Distinct (scale, init flags) pairs in plan order: what the engine must initialize. */
export function initPlan(
  steps: readonly PlannedStep[],
): Array<{ scale: number; initFlags: readonly InitFlag[]; scenarios: string[] }> {
  const out: Array<{ scale: number; initFlags: readonly InitFlag[]; scenarios: string[] }> = [];
  for (const s of steps) {
    const key = `${s.params.scale} ${[...s.initFlags].sort().join(' ')}`;
    const found = out.find((o) => `${o.scale} ${[...o.initFlags].sort().join(' ')}` === key);
    if (!found) out.push({ scale: s.params.scale, initFlags: s.initFlags, scenarios: [s.scenario] });
    else if (!found.scenarios.includes(s.scenario)) found.scenarios.push(s.scenario);
  }
  return out;
}
