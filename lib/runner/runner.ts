/**
 * The runner on an EC2 instance, as a library call (scripts/runner.ts is its thin entry):
 * read the DB secret, build the targets (writer + each proxy), read max_connections, plan the
 * suite, and run it through the engine with the cloud adapters — S3 sink, RDS Proxy pool control,
 * CPU guard, and with several runners the fleet split/merge through S3. Runner 0 invokes the
 * collector for the run window at the end.
 *
 * The password stays in memory and in pgbench's/psql's environment (PGPASSWORD): the logger
 * scrubs it from every line, and nothing here puts it into argv, a manifest or a step record.
 */
import * as os from 'node:os';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { RDSClient } from '@aws-sdk/client-rds';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { InfrastructureError, UsageError } from '../core/errors';
import type {
  Clock,
  PgbenchExecutor,
  PoolControl,
  ResultSink,
  ServerConnectionsProbe,
  Target,
} from '../engine/ports';
import { planOrResume } from '../engine/plan-or-resume';
import { runSuite, type ProgressEvent, type RunSuiteResult } from '../engine/run-suite';
import { getSuite, LAB_SUITE_NAME, type Suite } from '../suite/catalog';
import { getTestSuite } from '../suite/test-suites';
import { labSuite } from '../config/scenarios';
import { expandSuite, type PlannedStep, type TargetCapacity } from '../suite/expand';
import type { ComponentZone, ConnectionInfo, RunEnvironment, RunManifest, StepRecord } from '../suite/types';
import { buildPlan, type RunPlan } from '../suite/plan';
import { planScenarios } from '../suite/coverage';
import { productVersionLabel } from '../suite/targets';
import { CPU_SATURATION_PERCENT, judgeStep } from '../suite/verdict';
import {
  buildCollectEvent,
  collectorWindow,
  incompleteSources,
  invokeCollector,
  settleWaitMs,
} from '../aws/collector-invoke';
import { CpuGuardExecutor, RunnerCpuMetricsSampler } from './cpu';
import { FleetCoordinator, FleetExecutor, FleetSink } from './fleet-coordinator';
import { NoopPoolControl, RdsProxyPoolControl } from './proxy-pool';
import type { PoolPercents, RunnerArgs } from '../aws/runner-args';
import { acquireCloudRunLock } from './run-lock';
import { cloudSessionProbeRunner } from './session-probe-runner';
import { S3ResultSink } from '../aws/s3-sink';
import { checkPlanIdentity } from '../results/run-consistency';
import { RUN_PATHS } from '../results/run-paths';
import { poolerTargets } from '../config/targets';
import {
  readAdminCredentials,
  readDbCredentials,
  redact,
  redactingLogger,
  type DbCredentials,
  type Logger,
} from '../aws/secrets';
import { buildCloudTargets, type WriterInfo } from './targets';
import { type ScalarQuery } from '../exec/libpq';
import { fetchPoolerCpu } from '../aws/pooler-agent-client';
import {
  buildPoolerTargets,
  CompositePoolControl,
  PgbouncerPoolControl,
  poolerAdminPort,
  probePooler,
  psqlAdminRows,
  type AdminRowsQuery,
  type PoolerProbe,
  type PoolerTarget,
} from './pooler-targets';
import { PoolerMetrics, PoolerSampler, withPoolerSampler } from '../engine/pooler-metrics';
import type { PoolerEndpoint } from '../poolers/endpoint';
import { poolerDriver } from '../poolers/registry';
import { disruptionProbeRunner, pgbenchSelectFloor } from '../exec/disruption-probe';
import { pgConnector } from '../exec/pg-probe';
import type { ProbeRunner } from '../engine/ports';
import { cloudDisruptionWorld } from './disruptions';

export interface RunnerDeps {
  readonly s3: S3Client;
  readonly secrets: SecretsManagerClient;
  readonly rds: RDSClient;
  readonly lambda: LambdaClient;
  /** pgbench runner (the local executor on the instance). */
  readonly executor: PgbenchExecutor;
  /** SHOW queries (psql). */
  readonly query: ScalarQuery;
  readonly clock: Clock;
  /** Raw line writer (stdout); the runner wraps it in a redacting logger. */
  readonly write: (line: string) => void;
  readonly signal?: AbortSignal;
  /** `pgbench --version` output, null when unknown. */
  readonly pgbenchVersion?: () => Promise<string | null>;
  readonly cpus?: number;
  /** Poll interval for proxy changes and fleet barriers (tests shorten it). */
  readonly pollMs?: number;
  /**
   * Between two reads of a disruption group's RDS events (lib/runner/rds-events.ts; tests shorten it).
   * @default RDS_EVENT_READ_DELAY_MS (30 s)
   */
  readonly eventReadDelayMs?: number;
  /** PgBouncer admin console queries (psql over TCP to the agent's relay ports). */
  readonly adminQuery?: AdminRowsQuery;
  /** How often the pooler sampler polls SHOW POOLS/STATS and the agent's CPU. @default 2000 ms */
  readonly poolerSampleMs?: number;
  /** Test-only: where suite names are looked up (a scaled-down sweep). @default the catalog's getSuite */
  readonly suiteCatalog?: (name: string) => Suite;
  /** This runner's software version (softwareVersionOf its runner.js); null when unknown. */
  readonly softwareVersion?: () => string | null;
  /**
   * How long after the run's end runner 0 waits before invoking the collector: RDS and RDS Proxy
   * publish their last minutes late.
   * @default METRICS_SETTLE_MS
   */
  readonly metricsSettleMs?: number;
  /** Every engine progress event, after it is logged (the entry tracks the step in flight for spot records). */
  readonly onProgress?: (ev: ProgressEvent) => void;
  /**
   * This instance's Availability Zone (IMDSv2: lib/aws/spot.ts ownAvailabilityZone); it replaces
   * the stack outputs' `runner-<i>` in the run's zones. Absent or null: the outputs' value is kept.
   */
  readonly ownZone?: () => Promise<string | null>;
  /**
   * Opens the watch on the connections held on the database (runner 0 only: the database is shared),
   * given the writer's connection. Absent: steps record no serverConnections.
   */
  readonly serverConnections?: (
    writer: ConnectionInfo,
    log: (line: string) => void,
  ) => ServerConnectionsProbe & { close(): Promise<void> };
}

/** The runner's software is not the CLI's: it would run code the operator did not deploy. */
export function checkSoftwareVersion(expected: string | null, actual: string | null): void {
  if (expected === null || expected === actual) return;
  throw new InfrastructureError(
    `runner software version ${actual ?? 'unknown'} is not the CLI's version ${expected}: ` +
      'the runners still have the runner.js of an earlier deploy. Redeploy (npx proxylab deploy --lab FILE), ' +
      'which replaces the runners, then run again',
  );
}

export interface RunnerResult {
  readonly result: RunSuiteResult;
  readonly collector: 'invoked' | 'skipped' | 'failed';
  /**
   * The run completed and no verdict broke. With several runners the step verdicts are those of
   * the merged records in S3, judged once by runner 0; a runner's part is a measurement of its share
   * and carries no verdict (PART_NOT_JUDGED), so other runners only say whether they completed.
   */
  readonly allHeld: boolean;
}

/** Pool control of this runner: only runner 0 touches the proxies. */
function poolControlFor(
  args: RunnerArgs,
  deps: RunnerDeps,
  log: Logger,
): PoolControl & { currentPercent(name: string): PoolPercents | null } {
  const labValues: Record<string, PoolPercents> = {};
  for (const p of args.proxies) if (p.lab) labValues[p.name] = p.lab;
  if (args.poolControl && args.runnerIndex === 0) {
    return new RdsProxyPoolControl(deps.rds, {
      proxyNames: Object.fromEntries(args.proxies.map((p) => [p.name, p.dbProxyName])),
      labValues,
      clock: deps.clock,
      ...(deps.pollMs !== undefined ? { pollIntervalMs: deps.pollMs } : {}),
      log: (l) => log.info(l),
    });
  }
  const noop = new NoopPoolControl();
  const refuse = !args.poolControl;
  return {
    reset: () => noop.reset(),
    restore: () => noop.restore(),
    setPoolPercent: (target, percent) => {
      if (refuse) {
        return Promise.reject(
          new UsageError(
            `pool sweep (${target.name} → ${percent} %) needs pool control; this runner was started with --no-pool-control`,
          ),
        );
      }
      // runners other than 0: runner 0 applies it before it reaches the step barrier
      return Promise.resolve();
    },
    currentPercent: (name) => labValues[name] ?? null,
  };
}

function checkResumable(prev: RunManifest, args: RunnerArgs): void {
  const problems: string[] = [];
  if (prev.mode !== 'cloud') problems.push(`it is a ${prev.mode} run`);
  if (prev.suite !== args.suite) problems.push(`it ran suite ${prev.suite}, not ${args.suite}`);
  const prevCount = prev.settings.runnerCount;
  if (typeof prevCount === 'number' && prevCount !== args.runnerCount)
    problems.push(`it ran on ${prevCount} runners, not ${args.runnerCount}`);
  if (problems.length > 0)
    throw new UsageError(`cannot resume run ${args.runId}: ${problems.join('; ')}; use a new run id`);
}

function progressLine(ev: ProgressEvent, leader: boolean): string | null {
  switch (ev.type) {
    case 'run-start':
      return `run ${ev.runId}: ${ev.total} steps${ev.resumed ? `, resuming (${ev.alreadyDone} already done)` : ''}`;
    case 'init-data':
      return leader
        ? `loading pgbench data, scale ${ev.scale}, through ${ev.target}`
        : `pgbench data (scale ${ev.scale}) is loaded by runner 0`;
    case 'step-skip':
      return `[${ev.index}/${ev.total}] ${ev.step.stepId}: already done, skipped`;
    case 'step-start':
      return `[${ev.index}/${ev.total}] ${ev.step.stepId}: start${ev.note ? ` (${ev.note})` : ''}${ev.etaSec !== null ? `, ETA ${ev.etaSec} s` : ''}`;
    case 'step-end': {
      const r = ev.record.result;
      const what = ev.record.probe ? ev.record.verdict.observed : `tps ${r?.tps ?? 'unknown'}`;
      return `[${ev.index}/${ev.total}] ${ev.step.stepId}: ${ev.record.status}, ${what}, verdict ${ev.record.verdict.held === null ? '-' : ev.record.verdict.held ? 'held' : 'BROKEN'}`;
    }
    case 'probe-log':
      return `${ev.step.probe?.group ?? ev.step.stepId}: ${ev.line}`;
    case 'scenario-end':
      return null;
    case 'run-end':
      return `run ended: ${ev.status}${ev.error ? ` — ${ev.error}` : ''} after ${Math.round(ev.elapsedSec)} s`;
  }
}

/**
 * Runners other than 0 run the plan runner 0 stored; wait for it as long as for a step barrier.
 * Called once the first read found none (so the wait is logged only when there is one).
 */
async function waitForPlan(
  sink: S3ResultSink,
  args: RunnerArgs,
  deps: RunnerDeps,
  log: Logger,
  me: string,
): Promise<RunPlan> {
  const deadline = deps.clock.now().getTime() + args.barrierTimeoutSec * 1000;
  log.info(`${me}: waiting for runner 0 to store the plan (plan.json)`);
  for (;;) {
    if (deps.signal?.aborted) throw new InfrastructureError(`${me}: interrupted while waiting for the plan`);
    if (deps.clock.now().getTime() > deadline)
      throw new InfrastructureError(
        `${me}: runner 0 did not store plan.json within ${args.barrierTimeoutSec} s (s3://${args.bucket}/runs/${args.runId}/plan.json)`,
      );
    await deps.clock.sleep(deps.pollMs ?? 2000);
    const plan = await sink.readPlan();
    if (plan) return plan;
  }
}

/** `RDS Proxy (managed, no version)`, `PgBouncer 1.25.2`, or both; null for direct only. */
function poolerVersionOf(targets: readonly Target[]): string | null {
  const names = new Set<string>();
  for (const t of targets) {
    if (t.descriptor?.capabilities.pooled) names.add(productVersionLabel(t.descriptor));
  }
  return names.size > 0 ? [...names].join('; ') : null;
}

interface RunnerPoolers {
  readonly targets: PoolerTarget[];
  readonly control: PgbouncerPoolControl | null;
  readonly sampler: PoolerSampler | null;
  readonly maxPreparedStatements: number | null;
}

/**
 * The lab's PgBouncers on this runner: admin secret, probe (version, max_prepared_statements) of
 * each pooler through process 0's admin console, its targets, its pool control and its sampler.
 * A dedicated host is changed and sampled by runner 0 only; an on-runners pooler by every runner
 * (its own, at 127.0.0.1).
 */
async function setUpPoolers(
  args: RunnerArgs,
  deps: RunnerDeps,
  credentials: DbCredentials,
  writer: WriterInfo,
  secrets: string[],
  log: Logger,
  me: string,
): Promise<RunnerPoolers> {
  if (args.poolers.length === 0)
    return { targets: [], control: null, sampler: null, maxPreparedStatements: null };
  if (args.poolerAdminSecretArn === null)
    throw new UsageError('the lab has PgBouncer poolers but no PoolerAdminSecretArn output; redeploy');
  const admin = await readAdminCredentials(deps.secrets, args.poolerAdminSecretArn);
  secrets.push(admin.password, JSON.stringify(admin.password).slice(1, -1));
  const query = deps.adminQuery ?? psqlAdminRows();
  const probes = new Map<string, PoolerProbe>();
  for (const p of args.poolers) {
    const probe = await probePooler(p, admin, query).catch((err: unknown) => {
      throw new InfrastructureError(
        `${me}: pooler ${p.name} (${p.host}:${p.adminPorts[0] ?? '?'}) did not answer on its admin console: ${err instanceof Error ? err.message : String(err)}`,
      );
    });
    probes.set(p.name, probe);
    log.info(
      `${me}: pooler ${p.name} (${p.placement}, ${p.processes} process(es)): PgBouncer ${probe.version ?? 'unknown'}, max_prepared_statements ${probe.maxPreparedStatements ?? 'none'}`,
    );
  }
  const applies = (p: PoolerEndpoint): boolean => p.placement === 'on-runners' || args.runnerIndex === 0;
  const control = new PgbouncerPoolControl({
    poolers: args.poolers,
    admin,
    query,
    maxConnections: () => writer.maxConnections(),
    dbname: credentials.dbname,
    applies,
    initialMaxPreparedStatements: (name) => probes.get(name)?.maxPreparedStatements ?? null,
    runnerCount: args.runnerCount,
    log: (l) => log.info(`${me}: ${l}`),
  });
  const targets = buildPoolerTargets({
    poolers: args.poolers,
    probes,
    credentials,
    writer,
    poolPercent: (name) => control.currentPercent(name),
    runnerCount: args.runnerCount,
  });
  const sampled = args.poolers.filter(applies).map(
    (p) =>
      new PoolerMetrics({
        pooler: p.name,
        admin: poolerAdminPort(p, admin, query),
        product: p.product,
        stats: poolerDriver(p.product).stats,
        cpu: () => fetchPoolerCpu(p.host, p.statsPort),
        pools: Object.fromEntries(
          p.poolModes.map((m) => [poolerDriver(p.product).poolDatabaseAlias(credentials.dbname, m), m]),
        ),
        targets: poolerTargets(p).map((t) => t.ref.name),
      }),
  );
  const first = args.poolers[0];
  return {
    targets,
    control,
    sampler: sampled.length > 0 ? new PoolerSampler(sampled, deps.poolerSampleMs ?? 2000) : null,
    maxPreparedStatements: first ? (probes.get(first.name)?.maxPreparedStatements ?? null) : null,
  };
}

export async function runCloudRunner(args: RunnerArgs, deps: RunnerDeps): Promise<RunnerResult> {
  const secrets: string[] = [];
  try {
    // One writer per run slot (lib/runner/run-lock.ts): a second runner with the same run id and
    // index is refused before it touches the run; the lock goes when this runner ends.
    const lock = await acquireCloudRunLock(deps.s3, args.bucket, {
      runId: args.runId,
      runnerIndex: args.runnerIndex,
      command: `proxylab-runner --run-id ${args.runId} --runner-index ${args.runnerIndex}`,
      log: (line) => deps.write(`${new Date().toISOString()} info ${line}\n`),
    });
    try {
      return await runCloudRunnerInner(args, deps, secrets);
    } finally {
      // A lock left behind refuses a resume on a replacement runner ("held by …"): say so, with
      // the key to delete, instead of swallowing the failure (the run's own outcome still wins).
      await lock.release().catch((err: unknown) => {
        deps.write(
          `${new Date().toISOString()} warn could not release the run lock s3://${args.bucket}/${lock.key}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}; a resume of run ${args.runId} on another runner is refused until it is deleted (aws s3 rm s3://${args.bucket}/${lock.key})\n`,
        );
      });
    }
  } catch (err) {
    // Belt and braces: no error message leaves the runner with the password in it.
    if (err instanceof Error) err.message = redact(err.message, secrets);
    throw err;
  }
}

async function runCloudRunnerInner(
  args: RunnerArgs,
  deps: RunnerDeps,
  secrets: string[],
): Promise<RunnerResult> {
  const suite = runnerSuite(args, deps);
  const log = redactingLogger(deps.write, () => secrets);
  // 0-based like the files (`runner-<i>`, `part-<i>.json`) and the docs: runner 0 leads.
  const me = `runner ${args.runnerIndex} (of ${args.runnerCount})`;
  checkSoftwareVersion(args.expectVersion, deps.softwareVersion?.() ?? null);

  const credentials = await readDbSecret(args, deps, secrets);
  log.info(
    `${me}: run ${args.runId}, suite ${args.suite}, bucket ${args.bucket}, writer ${args.writerEndpoint.host}, proxies ${args.proxies.map((p) => p.name).join(', ') || 'none'}`,
  );
  const lab = await connectTargets(args, deps, credentials, secrets, log, me);
  const probed = await probeTargets(lab.targets, lab.writer, log, me);
  // Every object the runner writes is scrubbed of the password: the engine records error messages
  // (manifest.error) and raw pgbench output, and neither is ours to trust.
  const scrub = (text: string): string => redact(text, secrets);
  const s3Sink = new S3ResultSink(deps.s3, args.bucket, args.runId, scrub);
  const prev = await s3Sink.readManifest();
  if (prev) checkResumable(prev, args);
  const environment = await cloudEnvironment(args, deps, lab, probed);
  const steps = await planCloudRun(
    args,
    deps,
    suite,
    s3Sink,
    lab.targets,
    probed.capacities,
    environment,
    log,
    me,
  );
  const stepById = new Map(steps.map((s) => [s.stepId, s]));
  const { executor, sink } = fleetPorts(args, deps, s3Sink, stepById, scrub, log);
  await waitForAgreedStart(args, deps, log, me);

  // Runner 0 watches the connections held on the (shared) database around each step.
  const direct = lab.targets.find((t) => !(t.descriptor?.capabilities.pooled ?? true));
  const held =
    args.runnerIndex === 0 && direct && deps.serverConnections
      ? deps.serverConnections(direct.connection(), (line) => log.warn(`${me}: ${line}`))
      : null;
  const result = await runSuite({
    runId: args.runId,
    suite,
    steps,
    targets: lab.targets,
    executor,
    pool: lab.pool,
    sink,
    sampler: withPoolerSampler(
      new RunnerCpuMetricsSampler(`runner-${args.runnerIndex}`),
      lab.poolers.sampler,
    ),
    clock: deps.clock,
    progress: progressTo(args, deps, log, me),
    ...(deps.signal ? { signal: deps.signal } : {}),
    mode: 'cloud',
    environment,
    settings: runSettings(args, suite.name, probed.maxConnections),
    metricsName: 'runner',
    ...(held ? { serverConnections: held } : {}),
    probes: {
      'session-state': cloudSessionProbeRunner({
        targets: lab.targets,
        runnerCount: args.runnerCount,
        proxyNames: Object.fromEntries(args.proxies.map((p) => [p.name, p.dbProxyName])),
        narrow: async (target) => (await lab.poolers.control?.narrowToOne(target)) ?? null,
        reset: (target) => lab.pool.reset(target),
        pinPeriodMs: args.pinPeriodMs,
      }),
      disruption: disruptionRunner(args, deps, lab.targets),
    },
  }).finally(() => held?.close());
  const collector = await collectAfterRun(args, deps, result.manifest, log, me);
  return { result, collector, allHeld: runnerAllHeld(args, result) };
}

/**
 * The suite this run executes: the lab's own scenarios as the request carries them (`lab`), else
 * the catalog's (a test may give its own catalog).
 */
export function runnerSuite(
  args: Pick<RunnerArgs, 'suite' | 'scenarios'> & Partial<Pick<RunnerArgs, 'testSuites'>>,
  deps: Pick<RunnerDeps, 'suiteCatalog'>,
): Suite {
  if (args.suite === LAB_SUITE_NAME) {
    if (!args.scenarios || args.scenarios.length === 0)
      throw new UsageError(`suite "${LAB_SUITE_NAME}": the run request carries no scenarios`);
    return labSuite({ scenarios: args.scenarios });
  }
  return (deps.suiteCatalog ?? (args.testSuites ? catalogOrTestSuite : getSuite))(args.suite);
}

/** Phase 1: the DB secret, its password (as written and as inside a JSON string) added to what is scrubbed. */
async function readDbSecret(args: RunnerArgs, deps: RunnerDeps, secrets: string[]): Promise<DbCredentials> {
  const credentials = await readDbCredentials(deps.secrets, args.secretArn);
  // the password as written in text, and as it appears inside a JSON string (quotes, backslashes)
  const jsonForm = JSON.stringify(credentials.password).slice(1, -1);
  secrets.push(...new Set([jsonForm, credentials.password]));
  return credentials;
}

/** The lab's targets as this runner reaches them, and the pool control over all of them. */
interface LabTargets {
  readonly targets: Target[];
  readonly pool: PoolControl;
  readonly writer: WriterInfo;
  readonly poolers: RunnerPoolers;
}

/**
 * Phase 2: the writer and each proxy as targets, the lab's PgBouncers (probed on their admin
 * consoles: one that does not answer ends the run naming it), and one pool control over both.
 */
async function connectTargets(
  args: RunnerArgs,
  deps: RunnerDeps,
  credentials: DbCredentials,
  secrets: string[],
  log: Logger,
  me: string,
): Promise<LabTargets> {
  const proxyPool = poolControlFor(args, deps, log);
  const { targets: proxyTargets, writer } = buildCloudTargets({
    credentials,
    writer: args.writerEndpoint,
    proxies: args.proxies,
    sslmode: args.sslmode,
    query: deps.query,
    poolPercent: (name) => proxyPool.currentPercent(name),
    proxyKind: args.proxyTargetKind,
  });
  const poolers = await setUpPoolers(args, deps, credentials, writer, secrets, log, me);
  const pool: PoolControl = poolers.control
    ? new CompositePoolControl(proxyPool, poolers.control)
    : proxyPool;
  return { targets: [...proxyTargets, ...poolers.targets], pool, writer, poolers };
}

/** What the probes found: the writer's max_connections and version, each target's capacity. */
export interface ProbedTargets {
  readonly maxConnections: number;
  /** null when the writer did not say (the run goes on: it is only recorded). */
  readonly serverVersion: string | null;
  readonly capacities: TargetCapacity[];
}

/**
 * Phase 3: what the plan is made against. max_connections must be read (a writer that does not
 * answer ends the run, before anything is planned), and so must each target's pool size (a proxy
 * or pooler whose pool cannot be read likewise); an unknown server version is recorded as null.
 */
export async function probeTargets(
  targets: readonly Target[],
  writer: Pick<WriterInfo, 'maxConnections' | 'serverVersion'>,
  log: Logger,
  me: string,
): Promise<ProbedTargets> {
  const maxConnections = await writer.maxConnections();
  const serverVersion = await writer.serverVersion().catch(() => null);
  log.info(`${me}: max_connections ${maxConnections}, server ${serverVersion ?? 'unknown'}`);
  const capacities: TargetCapacity[] = [];
  for (const t of targets)
    capacities.push({ ref: t.ref, descriptor: t.descriptor, maxConnections, poolSize: await t.poolSize() });
  return { maxConnections, serverVersion, capacities };
}

/** The run's environment as this runner measured it (recorded in the plan and the manifest). */
async function cloudEnvironment(
  args: RunnerArgs,
  deps: RunnerDeps,
  lab: LabTargets,
  probed: ProbedTargets,
): Promise<RunEnvironment> {
  return {
    database: args.database ?? null,
    maxConnections: probed.maxConnections,
    serverVersion: probed.serverVersion,
    pgbenchVersion: (await deps.pgbenchVersion?.()) ?? null,
    poolerVersion: poolerVersionOf(lab.targets),
    cpus: deps.cpus ?? os.cpus().length,
    maxPreparedStatements: lab.poolers.maxPreparedStatements,
    zones: runZones(args, (await deps.ownZone?.()) ?? null),
    targetPrices: args.targetPrices ?? null,
  };
}

/**
 * The run's zones: the stack outputs' (carried in the request), with this runner's own from IMDS in
 * place of its `runner-<i>` entry; null when neither says anything.
 */
export function runZones(
  args: Pick<RunnerArgs, 'zones' | 'runnerIndex'>,
  own: string | null,
): ComponentZone[] | null {
  const me = `runner-${args.runnerIndex}`;
  const listed = [...(args.zones ?? [])];
  if (own !== null) {
    const i = listed.findIndex((z) => z.component === me);
    if (i >= 0) listed[i] = { component: me, zone: own };
    else listed.push({ component: me, zone: own });
  }
  return listed.length > 0 ? listed : null;
}

/** The engine's progress as this runner's log lines, then to the entry's own listener. */
function progressTo(
  args: RunnerArgs,
  deps: RunnerDeps,
  log: Logger,
  me: string,
): (ev: ProgressEvent) => void {
  return (ev) => {
    const line = progressLine(ev, args.runnerIndex === 0);
    if (line) log.info(`${me}: ${line}`);
    deps.onProgress?.(ev);
  };
}

/**
 * Phase 4: one plan per run, stored with it: runner 0 expands the suite and writes plan.json; the
 * other runners execute their share of that stored plan (they wait for it), and a resume runs it again.
 */
async function planCloudRun(
  args: RunnerArgs,
  deps: RunnerDeps,
  suite: Suite,
  s3Sink: S3ResultSink,
  targets: readonly Target[],
  capacities: readonly TargetCapacity[],
  environment: RunEnvironment,
  log: Logger,
  me: string,
): Promise<readonly PlannedStep[]> {
  let stored = await s3Sink.readPlan();
  if (!stored && args.runnerIndex > 0) stored = await waitForPlan(s3Sink, args, deps, log, me);
  const noSteps = (): UsageError =>
    new UsageError(
      `suite ${suite.name} has no step for this lab's targets (${targets.map((t) => t.ref.name).join(', ')})`,
    );
  const { steps } = await planOrResume(s3Sink, {
    stored,
    check: (plan) => {
      // The plan of this run (its id, suite and mode; the engine checks manifest.json the same way).
      checkPlanIdentity(
        plan,
        { runId: args.runId, suite: suite.name, mode: 'cloud' },
        'the run request',
        s3Sink.blobs.where(RUN_PATHS.plan),
      );
      if (plan.runnerCount !== args.runnerCount)
        throw new UsageError(
          `run ${args.runId}: its plan is for ${plan.runnerCount} runner(s), not ${args.runnerCount}; use a new run id`,
        );
      if (plan.steps.length === 0) throw noSteps();
    },
    fresh: () => {
      const expanded = expandSuite(suite, capacities);
      if (expanded.length === 0) throw noSteps();
      return buildPlan({
        runId: args.runId,
        suite: suite.name,
        mode: 'cloud',
        createdAt: deps.clock.now().toISOString(),
        environment,
        targets: targets.flatMap((t) => (t.descriptor ? [t.descriptor] : [])),
        steps: expanded,
        runnerCount: args.runnerCount,
        // Per scenario: what it re-runs and why any target is left out (nothing skipped silently).
        scenarios: planScenarios(suite, capacities, expanded),
      });
    },
    write: args.runnerIndex === 0,
  });
  return steps;
}

/** Phase 5: a fleet starts together, at the start time the operator agreed with every runner. */
async function waitForAgreedStart(
  args: RunnerArgs,
  deps: RunnerDeps,
  log: Logger,
  me: string,
): Promise<void> {
  if (!args.startAt) return;
  const waitMs = Date.parse(args.startAt) - deps.clock.now().getTime();
  if (waitMs > 0) {
    log.info(`${me}: waiting ${Math.round(waitMs / 1000)} s for the agreed start ${args.startAt}`);
    await deps.clock.sleep(waitMs);
  }
}

/**
 * Phase 6: this runner's answer. A failed run throws (its finished steps are in the bucket). The
 * engine judged every step and comparison on what the sink stored — with several runners, runner
 * 0's records merged from every part — and wrote the manifest once with them. Other runners only
 * say whether they completed their parts.
 */
export function runnerAllHeld(
  args: Pick<RunnerArgs, 'runId' | 'bucket' | 'runnerCount' | 'runnerIndex'>,
  result: Pick<RunSuiteResult, 'manifest' | 'allHeld'>,
): boolean {
  if (result.manifest.status === 'failed') {
    throw new InfrastructureError(
      `run ${args.runId} failed: ${result.manifest.error ?? 'unknown error'} (finished steps are in s3://${args.bucket}/runs/${args.runId}/)`,
    );
  }
  return args.runnerCount > 1 && args.runnerIndex > 0
    ? result.manifest.status === 'completed'
    : result.allHeld;
}

/**
 * The executor and sink this runner measures through: with one runner, the S3 run store; in a
 * fleet, each step's barrier (FleetExecutor) and the leader's merge of every runner's part
 * (FleetSink, judged on the merged measurement).
 */
function fleetPorts(
  args: RunnerArgs,
  deps: RunnerDeps,
  s3Sink: S3ResultSink,
  stepById: ReadonlyMap<string, PlannedStep>,
  scrub: (text: string) => string,
  log: Logger,
): { executor: PgbenchExecutor; sink: ResultSink } {
  const executor: PgbenchExecutor = new CpuGuardExecutor(deps.executor);
  if (args.runnerCount <= 1) return { executor, sink: s3Sink };
  const fleet = new FleetCoordinator({
    s3: deps.s3,
    bucket: args.bucket,
    runId: args.runId,
    runnerIndex: args.runnerIndex,
    runnerCount: args.runnerCount,
    attempt: args.startAt ?? 'default',
    clock: deps.clock,
    barrierTimeoutMs: args.barrierTimeoutSec * 1000,
    leadMs: args.fleetLeadMs,
    pollMs: deps.pollMs ?? args.fleetPollMs,
    log: (l) => log.info(l),
    scrub,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  return {
    executor: new FleetExecutor(executor, fleet),
    sink: new FleetSink(s3Sink, fleet, {
      judge: (record: StepRecord) => {
        const step = stepById.get(record.stepId);
        return step ? judgeStep(step, record.status, record.result) : record.verdict;
      },
      cpuSaturationPercent: CPU_SATURATION_PERCENT,
    }),
  };
}

/** The manifest's settings of a cloud run: the lab as the runner saw it. Never credentials. */
export function runSettings(
  args: RunnerArgs,
  suite: string,
  maxConnections: number,
): Readonly<Record<string, unknown>> {
  return {
    suite,
    runnerCount: args.runnerCount,
    writerEndpoint: args.writerEndpoint.host,
    proxies: args.proxies.map((p) => ({
      name: p.name,
      dbProxyName: p.dbProxyName,
      endpoint: p.endpoint.host,
      lab: p.lab,
    })),
    poolers: args.poolers.map((p) => ({
      name: p.name,
      placement: p.placement,
      host: p.host,
      processes: p.processes,
      poolPercent: p.poolPercent,
      version: p.version,
      tls: p.tls,
    })),
    region: args.region,
    sslmode: args.sslmode,
    maxConnections,
  };
}

/**
 * Runner 0, after a run that was not interrupted: invoke the metrics collector once CloudWatch and
 * PI have published the run's last minutes. A failure is a warning (`proxylab collect` later), never
 * the run's outcome.
 */
async function collectAfterRun(
  args: RunnerArgs,
  deps: RunnerDeps,
  manifest: RunManifest,
  log: Logger,
  me: string,
): Promise<RunnerResult['collector']> {
  let collector: RunnerResult['collector'] = 'skipped';
  if (args.collector && args.runnerIndex === 0 && manifest.status !== 'interrupted') {
    const start = new Date(manifest.startedAt);
    const end = new Date(manifest.endedAt ?? deps.clock.now().toISOString());
    try {
      const event = buildCollectEvent(args.collector, args.runId, collectorWindow(start, end), args.bucket);
      // Collect once the metrics of the run's last minutes have been published, not at once.
      const waitMs = settleWaitMs(new Date(event.window.end), deps.clock.now(), deps.metricsSettleMs);
      if (waitMs > 0) {
        log.info(
          `${me}: waiting ${Math.round(waitMs / 1000)} s for CloudWatch and PI to publish the run's last minutes`,
        );
        await deps.clock.sleep(waitMs);
      }
      const summary = await invokeCollector(deps.lambda, args.collector.functionName, event);
      collector = 'invoked';
      log.info(
        `${me}: collector ${args.collector.functionName} wrote metrics for ${event.window.start} – ${event.window.end}`,
      );
      const incomplete = incompleteSources(summary);
      if (incomplete.length > 0)
        log.warn(
          `${me}: ${incomplete.join(' and ')} had not published the whole window yet; collect again later: npx proxylab collect --lab FILE --run-id ${args.runId}`,
        );
    } catch (err) {
      collector = 'failed';
      log.warn(
        `${me}: collector failed (run \`proxylab collect\` later): ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  return collector;
}

/** With `--test-suites on` (tests only): a test-only suite of that name, else the catalog's. */
function catalogOrTestSuite(name: string): Suite {
  return getTestSuite(name) ?? getSuite(name);
}

/**
 * The disruption probe of a cloud run (lib/runner/disruptions.ts): probe clients on every target,
 * the disruption on the lab's own database (the request's databaseResources), its events on the
 * run's clock, the ledger on the writer endpoint.
 */
function disruptionRunner(
  args: RunnerArgs,
  deps: RunnerDeps,
  targets: readonly Target[],
): ProbeRunner<'disruption'> {
  const direct = targets.find((t) => t.descriptor !== undefined && !t.descriptor.capabilities.pooled);
  const ledger = direct ?? targets[0];
  if (ledger === undefined) throw new InfrastructureError('the run has no target to keep the ledger on');
  return disruptionProbeRunner({
    connector: pgConnector,
    world: cloudDisruptionWorld({
      rds: deps.rds,
      database: args.databaseResources ?? null,
      proxyNames: args.proxies.map((p) => p.dbProxyName),
      runnerCount: args.runnerCount,
      ledger,
      now: () => deps.clock.now(),
      sleep: (ms, signal) => sleepUnless(deps.clock, ms, signal),
      ...(deps.pollMs !== undefined ? { pollMs: deps.pollMs } : {}),
      ...(deps.eventReadDelayMs !== undefined ? { eventReadDelayMs: deps.eventReadDelayMs } : {}),
      pgbenchFloor: (t) => pgbenchSelectFloor(deps.executor, t),
    }),
  });
}

/** The clock's sleep, cut short when `signal` aborts. */
function sleepUnless(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (!signal) return clock.sleep(ms);
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void clock.sleep(ms).then(done);
  });
}
