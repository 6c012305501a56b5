/**
 * `proxylab local` as a library call: validate options, plan the suite against the local
 * capacities, start the throwaway PostgreSQL + PgBouncer, run the suite through the engine into
 * `<out>/<runId>/`, and stop everything on success, failure or Ctrl-C (SIGINT/SIGTERM).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../core/errors';
import { shellQuote } from '../core/shell';
import { listDirIn } from '../core/read';
import type { Target } from '../engine/ports';
import { systemClock } from '../engine/ports';
import { planOrResume } from '../engine/plan-or-resume';
import { runSuite, type ProgressEvent, type RunSuiteResult } from '../engine/run-suite';
import { getSuite, SUITE_NAMES, type Suite } from '../suite/catalog';
import { getTestSuite, isTestSuite, TEST_SUITE_NAMES } from '../suite/test-suites';
import { loadLabSource } from '../config/lab-source';
import { checkLabUnchanged, recordLab } from './lab-record';
import { resolveSuite, suiteNamesFor } from '../config/scenarios';
import { poolerDriver } from '../poolers/registry';
import { expandSuite, type PlannedStep, type TargetCapacity } from '../suite/expand';
import { buildPlan, plannedSteps, type RunPlan } from '../suite/plan';
import { planScenarios } from '../suite/coverage';
import {
  describeTarget,
  directTarget,
  POOL_MODES,
  poolerTarget,
  targetInstance,
  type TargetDescriptor,
} from '../suite/targets';
import { DEFAULT_LOCAL_POOLERS, formatPoolerSpecs, parsePoolerSpecs, type LocalPoolerSpec } from './pooler';
import type { RunManifest, StepRecord, TargetPrice, TargetRef } from '../suite/types';
import { runExitCode, verdictTotals } from '../suite/verdict';
import { metricsPath, RUN_PATHS } from '../results/run-paths';
import { checkPlanIdentity } from '../results/run-consistency';
import { FileSystemSink } from './fs-sink';
import { processPoolSize } from '../poolers/pool-size';
import { POOLER_PROCESSES_MAX } from '../poolers/endpoint';
import { acquireRunLock, type RunLock } from './run-lock';
import { disruptionProbeRunner } from '../exec/disruption-probe';
import { pgConnector } from '../exec/pg-probe';
import { localDisruptionWorld, localSuite } from './disruptions';
import { BENCH_DB } from './postgres';
import { localSessionProbeRunner } from './session-probe-runner';
import { RunStopper } from './run-stopper';
import { DEFAULT_SUPERUSER_RESERVED, LOCAL_POOLER, type LocalStack } from './stack';
import { startStack } from './start-stack';
import { labPoolerSpecs, localCounterparts, sizeRecoveryWindows, type LocalLab } from './lab-poolers';
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_OUT_DIR, DEFAULT_POOL_PERCENT, DEFAULT_SUITE } from './defaults';

export { RunStopper, STOP_SIGNALS } from './run-stopper';
export { describeCounterparts, localCounterparts, type LocalCounterpart, type LocalLab } from './lab-poolers';

/** The local stack's targets (lib/local/stack.ts) for these poolers, in its order. */
function localTargetRefs(poolers: readonly LocalPoolerSpec[]): TargetRef[] {
  return [
    directTarget(),
    ...poolers.flatMap((p) => POOL_MODES.map((mode) => poolerTarget(p.product, p.instance, mode))),
  ];
}
const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** What the user may pass (flags, before validation). */
export interface LocalRunInput {
  /** A lab file: its suites (`lab`: its own scenarios) on the local counterparts of its targets. */
  readonly lab?: string;
  readonly suite?: string;
  /** Test-only (`--test-suite`, hidden): a suite of lib/suite/test-suites.ts instead of `suite`. */
  readonly testSuite?: string;
  /** Test-only (`--test-pgdata-template`, hidden): copy this data directory instead of running initdb. */
  readonly testPgdataTemplate?: string;
  readonly out?: string;
  readonly runId?: string;
  readonly maxConnections?: number | string;
  readonly poolPercent?: number | string;
  readonly poolerProcesses?: number | string;
  /** `pgbouncer,pgbouncer:2,pgdoorman`; absent: the suite's `localPoolers`, else one PgBouncer. */
  readonly poolers?: string;
  readonly keep?: boolean;
  readonly install?: boolean;
}

export interface LocalRunOptions {
  readonly suite: Suite;
  /** Set with `--lab`: the local targets are the counterparts of the lab's. */
  readonly lab?: LocalLab;
  /** Absolute directory that holds run directories. */
  readonly outDir: string;
  readonly runId: string;
  /** true when the run id was given (a resume is possible), false when generated. */
  readonly runIdGiven: boolean;
  readonly maxConnections: number;
  readonly poolPercent: number;
  /** PgBouncer processes (so_reuseport) of an entry that does not say. */
  readonly poolerProcesses: number;
  /** The poolers to start, in order (lib/local/pooler.ts). */
  readonly poolers: readonly LocalPoolerSpec[];
  readonly superuserReservedConnections: number;
  readonly keep: boolean;
  readonly install: boolean;
  /** Test-only: a data directory to copy instead of running initdb (lib/local/postgres.ts `dataTemplate`). */
  readonly dataTemplate: string | null;
  /**
   * `--price-region`: the targets priced at a cloud region's prices (lib/cost/local-prices.ts, set by
   * the command), recorded in the run's environment; null: not priced.
   */
  readonly targetPrices: readonly TargetPrice[] | null;
}

function toInt(v: number | string | undefined): number | null {
  if (v === undefined) return null;
  const n = typeof v === 'number' ? v : /^\s*-?\d+\s*$/.test(v) ? Number(v) : Number.NaN;
  return Number.isInteger(n) ? n : Number.NaN;
}

/**
 * `local-20261121-104501-3f9a` (UTC, sortable): the second plus a random suffix, so two runs started
 * in the same second get different directories.
 */
export function defaultRunId(
  now: Date = new Date(),
  suffix: string = randomBytes(2).toString('hex'),
): string {
  const iso = now.toISOString();
  return `local-${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}-${suffix}`;
}

/** Check every flag before anything starts; all problems in one UsageError. `cwd` resolves --out. */
export function validateLocalInput(
  input: LocalRunInput,
  cwd: string,
  now: Date = new Date(),
): LocalRunOptions {
  const problems: string[] = [];
  // --lab: its own suites (and scenarios), its targets' local counterparts, its poolers' share.
  const labSource = input.lab !== undefined ? loadLabSource(path.resolve(cwd, input.lab), input.lab) : null;
  const labConfig = labSource?.lab ?? null;
  const suiteName = input.suite ?? labConfig?.suites[0] ?? DEFAULT_SUITE;
  let suite: Suite | null = null;
  if (input.testSuite !== undefined) {
    suite = getTestSuite(input.testSuite);
    if (input.suite !== undefined) problems.push('--test-suite and --suite: give one of them, not both');
    if (suite === null)
      problems.push(`--test-suite must be one of ${TEST_SUITE_NAMES.join(', ')}; got "${input.testSuite}"`);
  } else if (labConfig !== null) {
    try {
      suite = resolveSuite(suiteName, labConfig);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      problems.push(`--suite must be one of ${suiteNamesFor(labConfig).join(', ')}; got "${suiteName}"`);
    }
  } else if (!SUITE_NAMES.includes(suiteName))
    problems.push(`--suite must be one of ${SUITE_NAMES.join(', ')}; got "${suiteName}"`);
  else suite = getSuite(suiteName);
  const maxConnections = toInt(input.maxConnections) ?? DEFAULT_MAX_CONNECTIONS;
  if (!(maxConnections >= 10 && maxConnections <= 5000))
    problems.push(`--max-connections must be an integer 10–5000, got ${String(input.maxConnections)}`);
  // A lab's poolers open their share of max_connections; locally the same share of the local server's.
  const labPoolPercent =
    labConfig && labConfig.poolers.length > 0
      ? Math.min(...labConfig.poolers.map((p) => p.poolPercent))
      : null;
  const poolPercent = toInt(input.poolPercent) ?? labPoolPercent ?? DEFAULT_POOL_PERCENT;
  if (!(poolPercent >= 1 && poolPercent <= 100))
    problems.push(`--pool-percent must be an integer 1–100, got ${String(input.poolPercent)}`);
  const poolerProcesses = toInt(input.poolerProcesses) ?? 1;
  if (!(poolerProcesses >= 1 && poolerProcesses <= POOLER_PROCESSES_MAX))
    problems.push(
      `--pooler-processes must be an integer 1–${POOLER_PROCESSES_MAX}, got ${String(input.poolerProcesses)}`,
    );
  let poolers: LocalPoolerSpec[] = [];
  if (labConfig !== null && input.poolers !== undefined)
    problems.push(
      `--poolers and --lab: a lab runs its own poolers (${labConfig.poolers.map((p) => p.name).join(', ') || 'none'}), one local pooler each; give one of them`,
    );
  // one local pooler per lab pooler: its name, product, processes, settings and pinned version
  else if (labConfig !== null) poolers = labPoolerSpecs(labConfig);
  else if (poolerProcesses >= 1 && poolerProcesses <= POOLER_PROCESSES_MAX) {
    const parsed = parsePoolerSpecs(
      input.poolers ?? suite?.localPoolers ?? DEFAULT_LOCAL_POOLERS,
      poolerProcesses,
    );
    problems.push(...parsed.problems);
    poolers = parsed.specs;
  }
  const runId = input.runId ?? defaultRunId(now);
  if (!RUN_ID_PATTERN.test(runId))
    problems.push(`--run-id must match ${RUN_ID_PATTERN.source} (letters, digits, . _ -), got "${runId}"`);
  const outDir = path.resolve(cwd, input.out ?? DEFAULT_OUT_DIR);
  if (fs.existsSync(outDir) && !fs.statSync(outDir).isDirectory())
    problems.push(`--out ${outDir} exists and is not a directory`);
  const dataTemplate =
    input.testPgdataTemplate === undefined ? null : path.resolve(cwd, input.testPgdataTemplate);
  if (dataTemplate !== null && !fs.existsSync(path.join(dataTemplate, 'PG_VERSION')))
    problems.push(
      `--test-pgdata-template ${dataTemplate} is not a PostgreSQL data directory (no PG_VERSION)`,
    );
  if (problems.length > 0 || suite === null) throw new UsageError(problems.join('\n'));
  return {
    suite,
    ...(labSource !== null && input.lab !== undefined
      ? {
          lab: {
            file: input.lab,
            name: labSource.lab.name,
            counterparts: localCounterparts(labSource.lab),
            record: labSource.record,
          },
        }
      : {}),
    outDir,
    runId,
    runIdGiven: input.runId !== undefined,
    maxConnections,
    poolPercent,
    poolerProcesses,
    poolers,
    superuserReservedConnections: DEFAULT_SUPERUSER_RESERVED,
    keep: input.keep ?? false,
    install: input.install ?? true,
    dataTemplate,
    targetPrices: null,
  };
}

/**
 * Capacities the plan is made against. `descriptors`: the started stack's (probed versions and
 * max_prepared_statements); without them, from the kinds alone (version unknown).
 */
export function localCapacities(
  opts: Pick<LocalRunOptions, 'maxConnections' | 'poolPercent' | 'lab'> & {
    readonly poolerProcesses?: number;
    readonly poolers?: readonly LocalPoolerSpec[];
  },
  descriptors?: readonly TargetDescriptor[],
): TargetCapacity[] {
  const specs = opts.poolers ?? [
    { product: 'pgbouncer' as const, processes: opts.poolerProcesses ?? 1, instance: LOCAL_POOLER },
  ];
  return localTargetsOf(opts.lab, specs)
    .map((ref) => {
      const stored = descriptors?.find((d) => d.name === ref.name);
      // a started stack's descriptors: a pooler it left out (no binary) has no targets
      if (descriptors !== undefined && stored === undefined) return null;
      const descriptor = stored ?? describeTarget(ref, { version: null, placement: 'local' });
      const n = specs.find((s) => s.instance === targetInstance(ref))?.processes ?? 1;
      return {
        ref,
        descriptor,
        maxConnections: opts.maxConnections,
        poolSize: descriptor.capabilities.pooled
          ? processPoolSize(opts.poolPercent, opts.maxConnections, n) * n
          : null,
      };
    })
    .filter((t): t is NonNullable<typeof t> => t !== null);
}

/** The local targets a run measures: all of the stack's, or with `--lab` the counterparts of the lab's (in the stack's order). */
export function localTargetsOf(lab: LocalLab | undefined, poolers: readonly LocalPoolerSpec[]): TargetRef[] {
  const refs = localTargetRefs(poolers);
  if (lab === undefined) return refs;
  return refs.filter((ref) => lab.counterparts.some((c) => c.local?.name === ref.name));
}

export function planLocal(
  opts: Pick<LocalRunOptions, 'suite' | 'maxConnections' | 'poolPercent' | 'lab'> & {
    readonly poolerProcesses?: number;
    readonly poolers?: readonly LocalPoolerSpec[];
  },
  descriptors?: readonly TargetDescriptor[],
): PlannedStep[] {
  return expandSuite(opts.suite, localCapacities(opts, descriptors));
}

/** The command that continues this run where it stopped (same suite, settings and run id). */
export function resumeCommand(opts: LocalRunOptions): string {
  return [
    'proxylab local',
    ...(opts.lab ? [`--lab ${shellQuote(opts.lab.file)}`] : []),
    `${isTestSuite(opts.suite) ? '--test-suite' : '--suite'} ${opts.suite.name}`,
    `--out ${shellQuote(opts.outDir)}`,
    `--run-id ${opts.runId}`,
    `--max-connections ${opts.maxConnections}`,
    `--pool-percent ${opts.poolPercent}`,
    ...(opts.poolerProcesses !== 1 ? [`--pooler-processes ${opts.poolerProcesses}`] : []),
    ...(opts.lab === undefined && formatPoolerSpecs(opts.poolers) !== formatPoolerSpecs(defaultSpecs(opts))
      ? [`--poolers ${formatPoolerSpecs(opts.poolers)}`]
      : []),
  ].join(' ');
}

/** What the run would start without --poolers (the suite's list, else one PgBouncer). */
function defaultSpecs(opts: Pick<LocalRunOptions, 'suite' | 'poolerProcesses'>): LocalPoolerSpec[] {
  return parsePoolerSpecs(opts.suite.localPoolers ?? DEFAULT_LOCAL_POOLERS, opts.poolerProcesses).specs;
}

/** Settings recorded in the manifest that a resume must match (they change the plan). */
function planSettings(opts: LocalRunOptions): {
  maxConnections: number;
  poolPercent: number;
  poolerProcesses: number;
  lab?: string;
  poolers: string;
} {
  return {
    maxConnections: opts.maxConnections,
    poolPercent: opts.poolPercent,
    poolerProcesses: opts.poolerProcesses,
    // the lab decides which local targets run: a resume must be of the same lab
    ...(opts.lab ? { lab: opts.lab.name } : {}),
    poolers: formatPoolerSpecs(opts.poolers),
  };
}

function checkResumable(prev: RunManifest, opts: LocalRunOptions): void {
  const problems: string[] = [];
  if (prev.mode !== 'local') problems.push(`it is a ${prev.mode} run`);
  if (prev.suite !== opts.suite.name) problems.push(`it ran suite ${prev.suite}, not ${opts.suite.name}`);
  const prevLab = prev.settings.lab;
  if (typeof prevLab === 'string' && opts.lab === undefined)
    problems.push(`it ran the targets of lab ${prevLab} (--lab)`);
  for (const [k, v] of Object.entries(planSettings(opts))) {
    const before = prev.settings[k];
    if (before !== undefined && before !== v)
      problems.push(`it used ${k} ${typeof before === 'string' ? before : JSON.stringify(before)}, not ${v}`);
  }
  if (problems.length > 0) {
    throw new UsageError(
      `cannot resume run ${opts.runId}: ${problems.join('; ')}. Pass the same settings, or a new --run-id.`,
    );
  }
}

/** A stored plan was made for one PgBouncer version; resuming it on another would run other cells. */
function checkSamePooler(plan: RunPlan, poolerVersion: string | null, runId: string): void {
  const planned = plan.environment.poolerVersion;
  if (planned !== null && poolerVersion !== null && planned !== poolerVersion) {
    throw new UsageError(
      `cannot resume run ${runId}: its plan was made for PgBouncer ${planned}, this machine runs ${poolerVersion}. Use a new --run-id.`,
      { code: 'run-pooler-mismatch' },
    );
  }
}

export interface LocalRunHooks {
  readonly progress?: (ev: ProgressEvent) => void;
  /** Lines about the stack (starting, stopping, kept servers). */
  readonly log?: (line: string) => void;
  /** Install handlers for STOP_SIGNALS that stop the run cleanly. @default true */
  readonly handleSignals?: boolean;
  /** Metrics sampling period. @default 1000 */
  readonly sampleIntervalMs?: number;
}

export interface LocalRunResult extends RunSuiteResult {
  readonly runDir: string;
  readonly wallSec: number;
  /** How to reach the kept servers (--keep), else null. */
  readonly keptConnectionHelp: string | null;
  /** The signal that interrupted the run, if any. */
  readonly interruptedBy: NodeJS.Signals | null;
  /** Nothing ran: the run directory already held every step. */
  readonly alreadyComplete: boolean;
  /** The suite as run here (a minor upgrade's local stand-in, sized windows); absent when nothing ran. */
  readonly suite?: Suite;
}

/**
 * Run (or resume) a local run. One writer per run: the run directory's lock (lib/local/run-lock.ts)
 * is taken before anything is read or written there, so a second `proxylab local` with the same run
 * id is refused naming the holder, and the lock of a writer that died is taken over.
 */
export async function runLocal(opts: LocalRunOptions, hooks: LocalRunHooks = {}): Promise<LocalRunResult> {
  const log = hooks.log ?? (() => undefined);
  const runDir = path.join(opts.outDir, opts.runId);
  const existed = fs.existsSync(runDir);
  let lock: RunLock;
  try {
    lock = acquireRunLock(runDir, { runId: opts.runId, command: resumeCommand(opts), log });
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`cannot write the run directory ${runDir}: ${(e as Error).message}`);
  }
  try {
    return await runLocked(opts, hooks, runDir);
  } finally {
    lock.release();
    // The lock made the directory: when nothing else was written (interrupted before the first
    // step, refused input), leave no empty run directory behind. rmdir removes only an empty one.
    if (!existed) {
      try {
        fs.rmdirSync(runDir);
      } catch {
        /* not empty: results were written, keep them */
      }
    }
  }
}

/**
 * What the engine writes before the first step — manifest, lab.json, plan, metrics, step windows — removed
 * when no step was recorded; then the (empty) run directory goes too. A step file or anything else
 * found there is left, and the directory with it.
 */
function removeUnmeasuredRun(runDir: string): void {
  try {
    fs.rmdirSync(path.join(runDir, RUN_PATHS.stepsDir)); // only when empty (nor a link)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return; // it holds something: keep the run
  }
  for (const f of [
    RUN_PATHS.manifest,
    RUN_PATHS.lab,
    RUN_PATHS.plan,
    metricsPath('local'),
    RUN_PATHS.stepWindows,
  ])
    fs.rmSync(path.join(runDir, f), { force: true });
  try {
    fs.rmdirSync(path.join(runDir, RUN_PATHS.metricsDir)); // only when empty
  } catch {
    /* absent, or holds something else: keep it */
  }
}

/** Files of the lock itself, which do not make a directory a run directory. */
function isLockFile(name: string): boolean {
  return name === RUN_PATHS.lock || name.startsWith(`.${RUN_PATHS.lock}.`);
}

/** What the run directory holds before a local run starts (lib/results through the file system sink). */
interface RunDirState {
  readonly prev: RunManifest | null;
  /** The plan stored with the run; null for a new run (or one of a release before plan.json). */
  readonly stored: RunPlan | null;
  readonly storedSteps: readonly StepRecord[];
}

/**
 * Phase 1 of a local run: the run directory is this run's, or empty. A generated id is new by
 * construction, so a directory that holds a run is resumed only with --run-id; a resume must use
 * the same suite and plan settings; a directory that holds anything else is refused.
 */
async function openRunDir(sink: FileSystemSink, opts: LocalRunOptions, runDir: string): Promise<RunDirState> {
  const prev = await sink.readManifest();
  if (prev && !opts.runIdGiven) {
    // A generated id is new by construction; never resume (or overwrite) a run by accident.
    throw new UsageError(`${runDir} already holds run ${prev.runId}; pass --run-id to resume it`);
  }
  if (prev) {
    // the lab first: a changed lab file also changes the settings it decides, and is said as such
    await checkLabUnchanged(sink, prev, opts.lab?.record ?? null);
    checkResumable(prev, opts);
  } else if ((listDirIn(runDir, '') ?? []).filter((e) => !isLockFile(e.name)).length > 0) {
    throw new UsageError(
      `${runDir} exists and is not a proxylab run directory; choose another --run-id or --out`,
    );
  }
  // One plan per run: a resume runs the plan stored with the run, not a fresh expansion. It must be
  // this run's (manifest.json's run, suite, mode and steps), and every step file one of its steps.
  const stored = prev ? await sink.readPlan() : null;
  if (prev && stored) checkPlanIdentity(stored, prev, 'manifest.json', sink.blobs.where(RUN_PATHS.plan));
  const stepIds = stored?.steps.map((s) => s.stepId);
  const storedSteps = await sink.readSteps({ runId: opts.runId, ...(stepIds ? { stepIds } : {}) });
  return { prev, stored, storedSteps };
}

/**
 * Phase 2: a completed run whose every planned step is recorded has nothing to run; its result is
 * the one it ended with (its records in plan order, its verdicts, its own duration). null when
 * something is left to run.
 */
export function alreadyComplete(
  prev: RunManifest,
  stored: RunPlan | null,
  storedSteps: readonly StepRecord[],
  opts: LocalRunOptions,
  runDir: string,
): LocalRunResult | null {
  const planned: PlannedStep[] = stored ? plannedSteps(stored) : planLocal(opts);
  const done = new Set(storedSteps.map((r) => r.stepId));
  if (prev.status !== 'completed' || !planned.every((s) => done.has(s.stepId))) return null;
  const ordered = planned
    .map((s) => storedSteps.find((r) => r.stepId === s.stepId))
    .filter((r): r is NonNullable<typeof r> => r !== undefined);
  const scenarioVerdicts = prev.scenarioVerdicts ?? [];
  const allHeld = runExitCode(true, verdictTotals(ordered, scenarioVerdicts)) === 0;
  // The run's own duration (as its summary says), not this no-op's.
  const wallSec = prev.endedAt
    ? Math.max(0, (Date.parse(prev.endedAt) - Date.parse(prev.startedAt)) / 1000)
    : 0;
  return {
    manifest: prev,
    records: ordered,
    scenarioVerdicts,
    allHeld,
    runDir,
    wallSec,
    keptConnectionHelp: null,
    interruptedBy: null,
    alreadyComplete: true,
  };
}

/**
 * The run directory created (if it is not there yet) and writable; true when this run created it,
 * so it is removed again if nothing is written into it (an interrupt during initdb, a server that
 * does not start): a run directory exists only once there is something in it.
 */
function prepareRunDir(runDir: string): boolean {
  const created = !fs.existsSync(runDir);
  try {
    fs.mkdirSync(runDir, { recursive: true });
    fs.accessSync(runDir, fs.constants.W_OK);
  } catch (e) {
    throw new UsageError(`cannot write the run directory ${runDir}: ${(e as Error).message}`);
  }
  return created;
}

/** Phase 5: the plan (stored, or made against what the stack really is) run through the engine. */
async function planAndRun(
  opts: LocalRunOptions,
  hooks: LocalRunHooks,
  sink: FileSystemSink,
  stored: RunPlan | null,
  stack: LocalStack,
  stopper: RunStopper,
): Promise<RunSuiteResult> {
  const { steps } = await planOrResume(sink, {
    stored,
    check: (plan) => checkSamePooler(plan, stack.environment.poolerVersion, opts.runId),
    // Planned against what the stack really is: PgBouncer's version decides which cells can run.
    fresh: () => {
      const steps = planLocal(opts, stack.descriptors);
      return buildPlan({
        runId: opts.runId,
        suite: opts.suite.name,
        mode: 'local',
        createdAt: new Date().toISOString(),
        environment: stack.environment,
        targets: stack.descriptors,
        steps,
        // Per scenario: what it re-runs and why any local target is left out.
        scenarios: planScenarios(opts.suite, localCapacities(opts, stack.descriptors), steps),
      });
    },
    write: true,
  });
  const targets: Target[] = [...stack.targets];
  return runSuite({
    runId: opts.runId,
    suite: opts.suite,
    steps,
    targets,
    executor: stack.executor,
    pool: stack.pool,
    sink,
    sampler: stack.createSampler(hooks.sampleIntervalMs),
    clock: systemClock,
    progress: stopper.progress(hooks.progress),
    signal: stopper.abort.signal,
    mode: 'local',
    environment: stack.environment,
    settings: { ...stack.settings, ...planSettings(opts), suite: opts.suite.name },
    metricsName: 'local',
    resumeCommand: resumeCommand(opts),
    infrastructure: stack.infrastructure,
    serverConnections: stack.serverConnections,
    probes: {
      'session-state': localSessionProbeRunner(stack, BENCH_DB),
      // Disruption steps: real restarts, kills, pauses and failovers on this stack (lib/local/disruptions.ts).
      disruption: disruptionProbeRunner({
        world: localDisruptionWorld(stack),
        connector: pgConnector,
        // a scenario's background load runs through the stack's pgbench
        pgbench: stack.executor,
      }),
    },
  });
}

async function runLocked(
  opts: LocalRunOptions,
  hooks: LocalRunHooks,
  runDir: string,
): Promise<LocalRunResult> {
  const log = hooks.log ?? (() => undefined);
  const t0 = Date.now();
  const sink = new FileSystemSink(runDir);
  const { prev, stored, storedSteps } = await openRunDir(sink, opts, runDir);
  const complete = prev ? alreadyComplete(prev, stored, storedSteps, opts, runDir) : null;
  if (complete) {
    log(`Run ${opts.runId} is already complete; nothing to run.`);
    return complete;
  }
  const createdRunDir = prepareRunDir(runDir);
  const stopper = new RunStopper(opts.runId, storedSteps.length > 0, log);
  const uninstall = (hooks.handleSignals ?? true) ? stopper.install() : () => undefined;
  let stack: LocalStack | null = null;
  let keptConnectionHelp: string | null = null;
  try {
    stack = await startStack(opts, log, stopper);
    if (stopper.interruptedBy !== null) throw stopper.interrupted();
    if (stored === null) await recordLab(sink, opts.lab?.record ?? null); // before plan.json
    // each disruption's window long enough to see the targets' recovery bound end (their settings)
    const measured = new Set(localTargetsOf(opts.lab, opts.poolers).map((r) => r.name));
    const descriptors = stack.descriptors.filter((d) => measured.has(d.name));
    // a minor upgrade's local stand-in (lib/local/disruptions.ts), named by what this machine has
    const sized = { ...opts, suite: sizeRecoveryWindows(localSuite(opts.suite, stack.bins), descriptors) };
    const result = await planAndRun(sized, hooks, sink, stored, stack, stopper);
    if (stopper.nothingMeasured(result.manifest.status, prev)) {
      // Interrupted before any step started (during pgbench -i, say): nothing was measured, so no
      // run directory is left behind — as for an interrupt during initdb. The same --run-id starts
      // afresh.
      removeUnmeasuredRun(runDir);
      throw stopper.interrupted();
    }
    if (opts.keep) {
      stack.release();
      keptConnectionHelp = stack.connectionHelp();
    }
    const wallSec = (Date.now() - t0) / 1000;
    const { interruptedBy } = stopper;
    const ran = { runDir, wallSec, keptConnectionHelp, interruptedBy, suite: sized.suite };
    return { ...result, ...ran, alreadyComplete: false };
  } finally {
    if (stack && keptConnectionHelp === null) {
      const names = [...new Set(stack.poolers.map((p) => poolerDriver(p.product).displayName))];
      log(`Stopping ${[...names, 'PostgreSQL'].join(' and ')}…`);
      await stack.stop();
    }
    uninstall();
    if (createdRunDir) {
      try {
        fs.rmdirSync(runDir); // only when empty: anything written stays
      } catch {
        /* not empty (or already gone): keep it */
      }
    }
  }
}
