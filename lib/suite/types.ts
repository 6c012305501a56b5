/**
 * The result format: one shape for local and cloud runs. Everything that writes or reads a run
 * directory (engine, local and cloud sinks, collector, report, compare) imports these types.
 *
 * Run directory layout (local `runs/<runId>/`, cloud `s3://<bucket>/runs/<runId>/`):
 *   manifest.json                  RunManifest
 *   plan.json                      RunPlan (lib/suite/plan.ts): the expanded suite, stored once
 *   steps/<stepFile>.json          StepRecord (stepFile = stepFileName(stepId))
 *   steps/<stepFile>.stdout        raw pgbench stdout
 *   steps/<stepFile>.stderr        raw pgbench stderr (progress lines and errors)
 *   steps/<stepFile>.log           merged pgbench aggregate log (per-second), when kept
 *   metrics/local.json             MetricsFile (local: pgbouncer + pg_stat_database samples)
 *   metrics/steps.json             { schemaVersion, runId, steps: StepWindow[] } (lib/results/sink.ts): when each step ran
 *   metrics/cloudwatch.json        MetricsFile (cloud: CloudWatch)
 *   metrics/pi.json                MetricsFile (cloud: Performance Insights)
 *   report.html, summary.md        written by `proxylab report`
 *   run.lock                       the writer's lock while a local run is written (lib/results/run-lock.ts);
 *                                  cloud: locks/runner-<i>.lock (lib/runner/run-lock.ts)
 *
 * Conventions: units in names (Ms, Sec); unknown values are `null`, never 0 or -1; timestamps are
 * ISO-8601 UTC strings.
 */
import type { DatabaseActivity } from './db-activity';
import type { RunDatabaseEngine } from './engines';
import type { ProbeResult } from './probes';
import type { SelfHostedPooler, TargetKind } from '../products/kinds';

export const RESULT_SCHEMA_VERSION = 1 as const;

/**
 * What a step talks to: a key of the kind list (lib/products/kinds.ts). What a kind is and can do lives
 * in the registry (lib/suite/targets.ts), the only module that reads it.
 */
export type { TargetKind } from '../products/kinds';

/** A concrete target in a run: kind plus a name (`direct`, the proxy's name, `pgbouncer-transaction`...). */
export interface TargetRef {
  readonly kind: TargetKind;
  readonly name: string;
}

/** pgbench --protocol values. */
export const PROTOCOLS = ['simple', 'extended', 'prepared'] as const;
export type Protocol = (typeof PROTOCOLS)[number];
/** persistent = one connection per client; per-transaction = pgbench -C. */
export const CONNECT_MODES = ['persistent', 'per-transaction'] as const;
export type ConnectMode = (typeof CONNECT_MODES)[number];

export type { ErrorClass } from './error-class';
import type { ErrorClass } from './error-class';

export interface ErrorSummary {
  readonly class: ErrorClass;
  readonly count: number;
  /** One representative line, as pgbench printed it (never contains a password). */
  readonly sample: string;
}

/**
 * What the pgbench parser read from one run. Every field the output did not state is `null`.
 * This is also what `proxylab parse` prints.
 */
export interface ParsedRun {
  readonly pgbenchVersion: string | null;
  readonly serverVersion: string | null;
  readonly transactionType: string | null;
  readonly protocol: Protocol | null;
  readonly clients: number | null;
  readonly threads: number | null;
  readonly durationSec: number | null;
  readonly transactionsProcessed: number | null;
  readonly transactionsExpected: number | null;
  readonly failedTransactions: number | null;
  readonly tps: number | null;
  readonly tpsMode: 'excluding-connections' | 'including-connections' | null;
  readonly latencyAvgMs: number | null;
  readonly latencyStddevMs: number | null;
  readonly initialConnectionMs: number | null;
  readonly avgConnectionMs: number | null;
  readonly scheduleLagAvgMs: number | null;
  /** Clients that aborted, counted from the error lines (pgbench does not count them as failed). */
  readonly abortedClients: number;
  /** Of those, aborted while establishing a connection. */
  readonly abortedWhileConnecting: number;
  /** True only when pgbench printed a full summary, no abort notice, and (if known) exit code 0. */
  readonly complete: boolean;
  readonly exitCode: number | null;
  readonly errors: readonly ErrorSummary[];
  /** `number of transactions per client` when the run used `-t` (null with `-T` or when not printed). */
  readonly transactionsPerClient?: number | null;
  /** `--progress` lines (stderr), when present; null when there were none. */
  readonly progress?: readonly ProgressPoint[] | null;
}

/** One `progress: …` line of pgbench (`--progress N`). Elapsed seconds since the run started. */
export interface ProgressPoint {
  readonly elapsedSec: number;
  readonly tps: number | null;
  readonly latencyAvgMs: number | null;
  readonly latencyStddevMs: number | null;
  /** `lag X ms`, printed only with `--rate`. */
  readonly lagAvgMs: number | null;
  /** `N failed`, printed by pgbench 15+. */
  readonly failed: number | null;
  /** `N skipped`, printed only with `--rate` and `--latency-limit`. */
  readonly skipped: number | null;
}

/** One per-interval point from pgbench's aggregate log (merged across threads). */
export interface SeriesPoint {
  /** Interval start, epoch seconds. */
  readonly t: number;
  readonly transactions: number;
  readonly latencyAvgMs: number | null;
  readonly latencyMaxMs: number | null;
  readonly lagAvgMs: number | null;
  readonly skipped: number | null;
}

/** ParsedRun plus what the aggregate logs add. */
export interface StepMeasurement extends ParsedRun {
  readonly latencyP50Ms: number | null;
  readonly latencyP95Ms: number | null;
  readonly latencyP99Ms: number | null;
  readonly series: readonly SeriesPoint[] | null;
}

/** The parameters users sort and plot by. */
export interface StepParams {
  readonly clients: number;
  readonly jobs: number;
  readonly protocol: Protocol;
  readonly connect: ConnectMode;
  /** Human label of the script: `select-only`, `tpcb-like`, `select-1.sql`, `mixed(select-only@8,tpcb-like@2)`. */
  readonly script: string;
  readonly durationSec: number | null;
  readonly transactionsPerClient: number | null;
  readonly rate: number | null;
  readonly scale: number;
  /** Pool size as % of max_connections for pooled targets (RDS Proxy MaxConnectionsPercent / PgBouncer pool). */
  readonly poolPercent: number | null;
  readonly repetition: number;
  /**
   * The pooler's prepared-statement support for this step (PgBouncer transaction pools in scenarios
   * that sweep it): `off` = max_prepared_statements 0, `on` = 200. Absent/null: not swept.
   */
  readonly preparedStatements?: PreparedStatementsMode | null;
}

/** Prepared-statement support as a step dimension (lib/suite/targets.ts). */
export type PreparedStatementsMode = 'off' | 'on';

export type Outcome = 'succeeds' | 'refused' | 'errors' | 'any';

export interface Verdict {
  /** What the catalog expected, in words (`refused: too-many-connections`). */
  readonly expected: string;
  /** What happened, in words. */
  readonly observed: string;
  /** true held, false broke the expectation, null nothing was expected (informational step). */
  readonly held: boolean | null;
}

/**
 * How a step ended. Every step runs pgbench (a pre-check only adds a note); when the harness
 * cannot run pgbench at all, the run fails instead of recording a step.
 */
export type StepStatus =
  | 'completed' // pgbench ran and exited (any exit code)
  | 'timeout' // killed by the harness (probe steps; pgbench steps of runs before `hung` existed)
  // A pgbench step that outlived its duration plus its grace and was stopped by the harness (issue
  // 40): clients stuck (a leaked lock), never a success; the note names what the database showed.
  | 'hung'
  | 'not-available' // the target cannot run this cell (PgBouncer 1.18 has no max_prepared_statements); not judged
  // The target, the pooler or pgbench itself died during the step: not a measurement, never judged,
  // not finished (a resume measures it again). The run ends `failed` with the cause.
  | 'infrastructure-error';

export interface StepRecord {
  readonly schemaVersion: typeof RESULT_SCHEMA_VERSION;
  readonly runId: string;
  readonly stepId: string;
  readonly scenario: string;
  readonly target: TargetRef;
  readonly params: StepParams;
  readonly startedAt: string;
  readonly endedAt: string;
  readonly status: StepStatus;
  /** null when pgbench did not run. */
  readonly result: StepMeasurement | null;
  readonly verdict: Verdict;
  readonly loadGeneratorSaturated: boolean;
  readonly saturationReason: string | null;
  /**
   * The busiest PgBouncer process serving this step averaged ≥ CPU_SATURATION_PERCENT of one core
   * over the step (the pooler, not the database, was the limit); null when the target has no
   * pooler whose CPU was measured. Absent in files written before it existed: read as null.
   */
  readonly poolerSaturated?: boolean | null;
  /** The pgbench command line with secrets removed. */
  readonly command: readonly string[];
  /** Paths relative to the run directory. */
  readonly files: { readonly stdout: string; readonly stderr: string; readonly log: string | null };
  /** Cloud fleet: one part per runner, merged into `result`. Absent for single-runner runs. */
  readonly parts?: readonly RunnerPart[];
  /**
   * Connections held on the database server around the step, so one target's leftovers (an RDS
   * Proxy's idle server connections, another pool's) are visible beside the step they could
   * confound. Absent in files written before it existed; null figures are unknown, never 0.
   */
  readonly serverConnections?: ServerConnections | null;
  /**
   * What a probe step measured (lib/suite/probes.ts), by kind; `result` is then null (no pgbench).
   * Absent or null for pgbench steps and in files written before probes existed.
   */
  readonly probe?: ProbeResult | null;
  /**
   * What the database did during the step, sampled once a second (lib/suite/db-activity.ts). Absent
   * in files written before it existed and in steps nobody sampled; a failed sample is unknown.
   */
  readonly databaseActivity?: DatabaseActivity | null;
  readonly note?: string;
}

/** Client backends on the database server (pg_stat_activity, the probe's own session excluded). */
export interface ServerConnections {
  /** Just before pgbench started. */
  readonly before: number | null;
  /** The most seen while the step ran (sampled). */
  readonly peak: number | null;
  /** Just after pgbench ended. */
  readonly after: number | null;
}

export interface RunnerPart {
  readonly runnerId: string;
  readonly clients: number;
  readonly jobs: number;
  readonly result: StepMeasurement | null;
  readonly cpuMaxPercent: number | null;
}

/** The database a run ran against; `local` is proxylab local's throwaway PostgreSQL. */
export interface RunDatabase {
  readonly engine: RunDatabaseEngine;
  /** `db.t4g.micro`; null when there is none (local) or the lab did not say. */
  readonly instanceClass: string | null;
}

export interface RunEnvironment {
  /**
   * What `direct` was: written by the cloud runner from the run request, `local` by proxylab
   * local. Absent in runs recorded before it existed; null when the request did not say. Both read
   * as unknown, never as a guessed engine.
   */
  readonly database?: RunDatabase | null;
  readonly maxConnections: number | null;
  readonly serverVersion: string | null;
  readonly pgbenchVersion: string | null;
  readonly poolerVersion: string | null;
  readonly cpus: number | null;
  /**
   * The pooler's max_prepared_statements at start (PgBouncer ≥ 1.21); null when it has none
   * (PgBouncer < 1.21, RDS Proxy). Steps that sweep it record theirs in the plan's descriptors.
   */
  readonly maxPreparedStatements?: number | null;
  /**
   * The availability zone of each component (`writer`, `runner-0`, `pooler:bouncer`, …), so a
   * cross-zone hop is visible in the run. Absent in runs recorded before it existed; a null zone
   * is unknown. Local runs have none.
   */
  readonly zones?: readonly ComponentZone[] | null;
  /**
   * What each target adds to the hourly bill (an RDS Proxy's vCPU-hours, a pooler host's
   * instance), priced by the operator from the lab (lib/cost) and carried in the run request; for a
   * local run with `--price-region`, its targets at that region's prices (lib/cost/local-prices.ts).
   * Absent for other local runs and runs recorded before it existed: the report says "not priced".
   */
  readonly targetPrices?: readonly TargetPrice[] | null;
}

export interface ComponentZone {
  readonly component: string;
  readonly zone: string | null;
}

export interface TargetPrice {
  /** The target's name (TargetRef.name). */
  readonly target: string;
  /** USD per hour the target adds; 0 for direct; null when it could not be priced. */
  readonly usdPerHour: number | null;
  /** What the price is for, in words (`RDS Proxy: 2 vCPU of db.r6g.large × $0.015`). */
  readonly basis: string;
  /**
   * What choosing this target costs in production (issue 41, lib/cost/production.ts), on top of the
   * database every option shares. Absent in runs recorded before it.
   */
  readonly production?: TargetProduction | null;
}

/** A target's production option, priced when the run started (the host type may be left to the report). */
export interface TargetProduction {
  /** `eu-west-1 on-demand prices as of 2026-11-28`, or `local throughput, cloud prices (eu-west-1 as of 2026-11-28)`. */
  readonly pricedAs: string;
  /** USD per 30-day month and per hour (the fallback type's when `hostChoices` is set); null: unknown. */
  readonly usdPerMonth: number | null;
  readonly usdPerHour: number | null;
  /** What is priced, in words (`2 × c7g.large in two zones …`). */
  readonly basis: string;
  /** The table's `$/h` is this option's per hour (a local run: nothing of the machine is billed). */
  readonly hourlyIsProduction: boolean;
  /**
   * A self-hosted pooler whose host type the lab does not give: the option priced on each type of
   * one family, fewest vCPUs first; the report takes the smallest whose vCPUs cover the measured
   * pooler CPU at `targetUtilisation`. null: the type is fixed (the lab's) or not a host.
   */
  readonly hostChoices: readonly HostChoice[] | null;
  /** The share of a host's vCPUs the pooler may use (0.7 = 70 %). */
  readonly targetUtilisation: number;
  /** Processes whose busiest one the pooler CPU figure is (the total is at most this × it). */
  readonly poolerProcesses: number;
  /**
   * The shape priced for a self-hosted pooler: on this many application hosts (`--app-hosts N`), or
   * null — an HA pair behind an NLB, or not a self-hosted pooler. Absent in runs recorded before it (null).
   */
  readonly appHosts?: number | null;
}

export interface HostChoice {
  readonly type: string;
  readonly vcpus: number;
  readonly usdPerMonth: number | null;
  readonly usdPerHour: number | null;
  readonly basis: string;
}

/** A scenario-level comparison verdict (suite/verdict judgeScenario), kept in the manifest. */
export interface ScenarioVerdict extends Verdict {
  readonly scenario: string;
}

export type RunStatus = 'running' | 'completed' | 'failed' | 'interrupted';

export interface RunManifest {
  readonly schemaVersion: typeof RESULT_SCHEMA_VERSION;
  readonly runId: string;
  readonly suite: string;
  readonly mode: 'local' | 'cloud';
  /** Local settings or the lab summary; never credentials. */
  readonly settings: Record<string, unknown>;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly status: RunStatus;
  readonly environment: RunEnvironment;
  /** Every step id of the plan, in order. */
  readonly stepIds: readonly string[];
  readonly stepsCompleted: number;
  /** Scenario comparisons (e.g. `-C` through the pooler ≥ 3 × direct), judged after each scenario's steps. */
  readonly scenarioVerdicts?: readonly ScenarioVerdict[];
  readonly error?: string;
}

/**
 * One shared shape for every metric series (CloudWatch, PI, a self-hosted pooler by its product —
 * `pgbouncer` —, pg_stat_database, runner CPU).
 */
export interface MetricSeries {
  readonly source: 'cloudwatch' | 'pi' | SelfHostedPooler | 'pg_stat_database' | 'runner';
  readonly name: string;
  readonly stat: string;
  readonly unit: string | null;
  readonly dimensions: Readonly<Record<string, string>>;
  /** [isoTime, value] pairs in time order. */
  readonly points: ReadonlyArray<readonly [string, number]>;
  /** `no-data`: the query worked but returned nothing; `error`: it failed (see reason). */
  readonly status: 'ok' | 'no-data' | 'error';
  readonly reason?: string;
}

export interface MetricsFile {
  readonly schemaVersion: typeof RESULT_SCHEMA_VERSION;
  readonly runId: string;
  readonly window: { readonly start: string; readonly end: string };
  readonly collectedAt: string;
  readonly series: readonly MetricSeries[];
  /** CloudWatch/PI only: whether the source had published the window's last period when collected. */
  readonly completeness?: WindowCompleteness;
}

/**
 * Whether a metrics source covered its window to the end: RDS and RDS Proxy publish minutes late,
 * so a collection right after a run misses its last periods. `complete` when the latest datapoint
 * (a period start) plus one period reaches the window end; false also when no series had data.
 */
export interface WindowCompleteness {
  readonly complete: boolean;
  /** Start of the latest period with a datapoint in any series; null when none had one. */
  readonly lastPointAt: string | null;
  readonly windowEnd: string;
  readonly periodSec: number;
}

/** Step ids may contain `/`; files use this. */
export function stepFileName(stepId: string): string {
  return stepId.replace(/[^A-Za-z0-9._-]+/g, '_');
}

/** How pgbench reaches a target. The password travels only in `env`, never in argv or results. */
export interface ConnectionInfo {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly dbname: string;
  /** libpq sslmode; `require` for RDS Proxy. */
  readonly sslmode?: 'disable' | 'prefer' | 'require';
  /** Extra environment for libpq (PGPASSWORD...). Never written to results. */
  readonly env?: Readonly<Record<string, string>>;
}
