/**
 * Ports the engine runs steps through. The engine knows nothing of AWS or of local processes:
 * lib/local/ and lib/runner/ provide adapters. (Owner of lib/engine may extend these; keep both
 * worlds' adapters compiling.)
 */
import type { PoolerProduct } from '../poolers/products';
import type { DatabaseActivity, DbActivitySample } from '../suite/db-activity';
import type { PlannedStep } from '../suite/expand';
import type { ProbeKind, ProbeResultOf, ProbeSpecOf } from '../suite/probes';
import type { TargetDescriptor } from '../suite/targets';
import type { ConnectionInfo, MetricSeries, ServerConnections, TargetRef } from '../suite/types';

export interface Target {
  readonly ref: TargetRef;
  /** What it is and can do (lib/suite/targets.ts); absent: from the kind alone. */
  readonly descriptor?: TargetDescriptor;
  connection(): ConnectionInfo;
  /** max_connections of the server behind this target (read at run time). */
  maxConnections(): Promise<number>;
  /** Pool size (server connections) for pooled targets, null for direct. */
  poolSize(): Promise<number | null>;
}

/** Pool management for pooled targets: reset between steps, resize for pool-percent sweeps. */
export interface PoolControl {
  /** Drop server connections so state (prepared statements) does not leak between steps. */
  reset(target: TargetRef): Promise<void>;
  /** Apply a pool size as % of max_connections; resolves once in effect. */
  setPoolPercent(target: TargetRef, percent: number): Promise<void>;
  /**
   * Set the pooler's max_prepared_statements (a PgBouncer ≥ 1.21 transaction pool; the plan only
   * asks targets whose descriptor can switch it). Resolves once in effect.
   */
  setMaxPreparedStatements?(target: TargetRef, value: number): Promise<void>;
  /** Restore the configured pool settings (called at the end of a run, also on failure). */
  restore(): Promise<void>;
  /**
   * Before each step: release the server connections the OTHER targets' pools hold, so they do not
   * take max_connections slots from the target measured next, and give `target` its own pool back if
   * an earlier call released it. Resolves once the pools' settings are in effect. An adapter whose
   * `reset` already drains every pool before every step (PgBouncer: KILL + RESUME of every pool)
   * need not implement it. Optional: absent, nothing is drained between targets.
   */
  isolate?(target: TargetRef): Promise<void>;
}

/**
 * The connections held on the database server, watched around each step (pg_stat_activity's client
 * backends, the watcher's own session excluded), so one target's leftovers are visible beside the
 * step they could confound. Never throws: what it cannot read is null.
 */
export interface ServerConnectionsProbe {
  /** The count now (`before`), then sampled while pgbench runs, until the watch is stopped. */
  watch(opts?: ServerConnectionsWatchOptions): Promise<ServerConnectionsWatch>;
}

export interface ServerConnectionsWatchOptions {
  /**
   * Told after each database sample while the step runs, with every sample so far (the engine's
   * hung check). Must return at once: it runs on the sampler's timer.
   */
  readonly onSample?: (samples: readonly DbActivitySample[]) => void;
}

export interface ServerConnectionsWatch {
  /** Stops sampling: `before`, the most seen while watching (`peak`), and the count now (`after`). */
  stop(): Promise<ServerConnections>;
  /**
   * What the database did while watched (lib/suite/db-activity.ts: pg_stat_activity and pg_locks once
   * a sample interval; a failed sample is unknown). Absent: this probe only counts connections.
   */
  activity?(): DatabaseActivity;
}

export interface PgbenchInvocation {
  /** argv[0] is `pgbench`; the executor substitutes the binary it uses. */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Directory for --log files (aggregate logs); the executor returns what appeared there. */
  readonly logDir: string;
  /** Files to create before running (custom scripts), absolute paths inside `logDir`'s work dir. */
  readonly files?: ReadonlyArray<{ readonly path: string; readonly content: string }>;
  /** Aborting kills pgbench (the outcome then has `aborted: true`). */
  readonly signal?: AbortSignal;
}

export interface PgbenchOutcome {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
  /** The signal that ended pgbench (`SIGABRT`), when one did and the executor knows it. */
  readonly signal?: string | null;
  readonly timedOut: boolean;
  /** Contents of the aggregate log files pgbench wrote (one per thread). */
  readonly logFiles: readonly string[];
  /** Max CPU % of the load generator during the run, if sampled (100 = one core). */
  readonly cpuMaxPercent?: number | null;
  /** Killed because the invocation's signal aborted. */
  readonly aborted?: boolean;
  /** Wall time of the pgbench process. */
  readonly wallMs?: number;
}

/**
 * Watches the infrastructure under test (local: the PostgreSQL and PgBouncer processes) so a dead
 * server is seen in seconds, not after the step timeout: `signal` aborts the running pgbench.
 */
export interface InfrastructureWatch {
  /** Why the infrastructure is down (`PostgreSQL (pid 42) exited: signal SIGKILL`), or null while it is up. */
  failure(): string | null;
  /**
   * Looks actively (the servers' ports answer?) after a pgbench that ended with an error, and
   * returns why the infrastructure is down, or null when it is up. A server's death reaches
   * pgbench's clients through the network and can end pgbench before `failure()` has seen it.
   */
  readonly confirm?: () => Promise<string | null>;
  /** Aborted the moment a failure is seen. */
  readonly signal: AbortSignal;
}

export interface PgbenchExecutor {
  run(invocation: PgbenchInvocation): Promise<PgbenchOutcome>;
  /**
   * A fresh empty directory for one step (logs, scripts) on the machine that runs pgbench.
   * `name` is a file-name-safe step name.
   */
  workDir(name: string): Promise<string>;
  /** Remove a work directory once its contents were read. */
  removeWorkDir?(dir: string): Promise<void>;
}

export type { RawStepFiles, ResultSink, StepReadContext, StepWindow } from '../results/sink';

/** What a sampler found about the CPU of the pooler serving a step's target. */
export interface PoolerSaturation {
  /** null: no measured pooler serves the target, or no CPU interval fell in the step. */
  readonly saturated: boolean | null;
  /** The busiest process's mean CPU over the step, percent of `cores` cores; null: unknown. */
  readonly percent: number | null;
  /** Its product (present with a percent). */
  readonly product?: PoolerProduct;
  /** Cores one of its processes can use: 1 (PgBouncer) or its worker threads (PgDoorman). */
  readonly cores?: number;
}

export interface MetricsSampler {
  start(): Promise<void>;
  /** Mark a step boundary so plots can show it. */
  markStep(stepId: string, phase: 'start' | 'end'): void;
  /** Series sampled so far (the engine flushes them after each step so a killed run keeps them). */
  snapshot?(): MetricSeries[];
  /**
   * Whether the pooler serving `target` was CPU-bound over [start, end] (its busiest process's
   * average, percent of the cores one process can use); saturated null when no measured pooler
   * serves the target.
   */
  poolerSaturation?(target: TargetRef, start: string, end: string): Promise<PoolerSaturation>;
  stop(): Promise<MetricSeries[]>;
}

/**
 * One execution of a probe (lib/suite/probes.ts): the steps of one group, measured together
 * (a disruption: every target and mode of one repetition see one disruption).
 */
export interface ProbeRun<K extends ProbeKind = ProbeKind> {
  readonly runId: string;
  /** The group's steps, in plan order; each names its target, parameters and expectation. */
  readonly steps: readonly PlannedStep[];
  /** The spec the steps share (`steps[i].probe.spec`). */
  readonly spec: ProbeSpecOf<K>;
  /** The run's target of each step, by target name. */
  readonly targets: ReadonlyMap<string, Target>;
  readonly clock: Clock;
  /**
   * Aborted on Ctrl-C, when the infrastructure watch sees a server die, or when the group's time is
   * up (the largest step timeout): the runner stops its clients and returns what it has.
   */
  readonly signal: AbortSignal;
  /** The run's infrastructure watch, for a runner that stops a server on purpose (`expect…`). */
  readonly infrastructure?: InfrastructureWatch;
  /** Lines about what the probe does (the disruption it issues), for the run's progress output. */
  readonly log: (line: string) => void;
}

/** What one step of a probe execution measured. */
export interface ProbeStepOutcome<K extends ProbeKind = ProbeKind> {
  readonly stepId: string;
  /** `infrastructure-error`: not a measurement (the run ends failed, a resume measures it again). */
  readonly status: 'completed' | 'timeout' | 'infrastructure-error';
  readonly result: ProbeResultOf<K> | null;
  readonly startedAt: string;
  readonly endedAt: string;
  /** Human-readable account of the step (stored as its `.stdout`); no secrets. */
  readonly transcript: string;
  /** Why it is not a measurement, or what to know about it. */
  readonly note?: string;
}

/** Executes the steps of one probe kind (lib/local and lib/runner provide them). */
export interface ProbeRunner<K extends ProbeKind = ProbeKind> {
  /**
   * Why this run cannot measure `step` (the target cannot undergo it, the stack lacks a standby, a
   * pooler version lacks a feature), or null when it can: such a step is recorded `not-available`.
   */
  unavailable?(step: PlannedStep): string | null;
  /** One outcome per step of `run.steps`, in any order. */
  run(run: ProbeRun<K>): Promise<ReadonlyArray<ProbeStepOutcome<K>>>;
}

/** The probe runners of a run, by kind; a kind without one records its steps `not-available`. */
export type ProbeRunners = { readonly [K in ProbeKind]?: ProbeRunner<K> };

export interface Clock {
  now(): Date;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
