/**
 * What a runner runs with: the run request (lib/aws/run-request.ts, read from S3) resolved for
 * one runner index. Nothing secret is here: the DB password is read by the runner from Secrets
 * Manager (the ARN is not a secret).
 */
import type { Endpoint } from '../aws/endpoint';
import type { SslMode } from '../exec/libpq';
import type { PoolerEndpoint } from '../poolers/endpoint';
import type { ManagedProxyKind, ProxyTargetKind } from '../suite/targets';
import type { DatabaseEngine } from '../suite/engines';
import type { LabScenario } from '../config/types';
import type { BackgroundLoad } from '../suite/disruption-load';
import type { LabResources } from '../collector/plan';
import type { ComponentZone, TargetPrice } from '../suite/types';
import type { KitSettings, LabSettings } from '../config/kit-settings';

export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * A run id: RUN_ID_PATTERN and no `..` (it names the S3 prefix `runs/<id>/` and a local
 * directory `runs/<id>`). A prefix of a bucket that is not one (`..`, `..%2f..%2fx`) is no run.
 */
export function isRunId(id: string): boolean {
  return RUN_ID_PATTERN.test(id) && !id.includes('..');
}

/**
 * The collector invocation the runner makes at the end of a run (runner 0 only): the collector
 * function, and what the lab deployed as the collector reads it (lib/collector/plan.ts
 * LabResources: `proxies` are DBProxyNames, the CloudWatch ProxyName dimension; `instanceClasses`
 * and `engine` are absent in requests written by older CLIs: no instance burstable, Aurora).
 */
export interface CollectorSpec extends LabResources {
  readonly functionName: string;
}

/** The database the run ran against (stack outputs DatabaseEngine / DbInstanceClass), for the run environment. */
export interface DatabaseSpec {
  readonly engine: DatabaseEngine;
  /** null when the stack does not say (deployed before the output existed). */
  readonly instanceClass: string | null;
}

/**
 * The lab's database by its RDS identifiers (stack outputs ClusterIdentifier, DbInstanceIds): what
 * a cloud disruption acts on (lib/runner/disruptions.ts), and nothing else.
 */
export interface DatabaseResources {
  readonly engine: DatabaseEngine;
  /** The Aurora cluster; null for RDS for PostgreSQL (no cluster). */
  readonly clusterId: string | null;
  /** Every DB instance, writer first (as deployed: a failover moves the writer). */
  readonly instanceIds: readonly string[];
}

export interface ProxySpec {
  /** Lab-local name (`pool100`), the target's name in results. */
  readonly name: string;
  /** The proxy's default endpoint (its targets' kind `rds-proxy`). */
  readonly endpoint: Endpoint;
  /**
   * Its other endpoints, by the kind of their targets (lib/products/kinds.ts MANAGED_PROXY_KINDS):
   * each is a target `managedProxyTarget(name, kind)`. Absent: none.
   */
  readonly endpoints?: Readonly<Partial<Record<ManagedProxyKind, Endpoint>>>;
  /** The RDS DBProxyName (`<lab>-<name>`); defaults to `name`. */
  readonly dbProxyName: string;
  /** The lab's pool settings to restore after a sweep; read from the proxy when absent. */
  readonly lab: PoolPercents | null;
  /** The lab's `settings` of this proxy (InitQuery, IdleClientTimeout…). Absent: none, or an older CLI. */
  readonly settings?: LabSettings;
  /** What proxylab set on it from the lab's fields (lib/config/kit-settings.ts proxyKitSettings). Absent: not said. */
  readonly kitSettings?: KitSettings;
}

/** A self-hosted pooler as the runners get it: its stack output, and the lab's `settings` for it. */
export type PoolerSpec = PoolerEndpoint & {
  /** Absent: none, or a request from an older CLI. */
  readonly settings?: LabSettings;
};

export interface RunnerArgs {
  readonly runId: string;
  readonly suite: string;
  /**
   * The lab's own scenarios, script texts included, when `suite` is `lab` (lib/config/scenarios.ts):
   * the runners build the suite from them, never from a file of their own. null or absent otherwise.
   */
  readonly scenarios?: readonly LabScenario[] | null;
  /**
   * The lab's `disruptionLoad` (lib/config/scenarios.ts withDisruptionLoad): the background load of
   * every disruption scenario that names none of its own. null or absent: none.
   */
  readonly disruptionLoad?: BackgroundLoad | null;
  readonly bucket: string;
  readonly runnerIndex: number;
  readonly runnerCount: number;
  readonly secretArn: string;
  readonly proxies: readonly ProxySpec[];
  /** The lab's self-hosted poolers (stack output PoolerEndpoints, with the lab's settings); each pool mode is a target. */
  readonly poolers: readonly PoolerSpec[];
  /** The pooler admin/stats user's secret (stack output PoolerAdminSecretArn); null without poolers. */
  readonly poolerAdminSecretArn: string | null;
  readonly writerEndpoint: Endpoint;
  /**
   * What is behind `writerEndpoint`; null or absent: not said (requests from older CLIs, tests),
   * recorded in the run environment as unknown.
   */
  readonly database?: DatabaseSpec | null;
  /** What a cloud disruption may act on; null or absent: not said (older CLIs, tests): none is injected. */
  readonly databaseResources?: DatabaseResources | null;
  readonly region: string | null;
  /**
   * Where each component runs, from the stack outputs (ComponentZones): `writer`, `runner-<i>`,
   * `pooler:<name>`, `proxy:<name>` (null: RDS chooses, or a proxy's endpoints span zones). The
   * runner replaces its own with what IMDS says and records the list in the run's environment.
   * null or absent: not said (older CLIs and stacks), recorded as unknown.
   */
  readonly zones?: readonly ComponentZone[] | null;
  /**
   * What each target adds per hour, priced by the operator from the lab (lib/cost/target-prices.ts);
   * recorded in the run's environment for the report. null or absent: not priced.
   */
  readonly targetPrices?: readonly TargetPrice[] | null;
  /** Agreed start of the run (ISO); every runner waits until then before the first step. */
  readonly startAt: string | null;
  readonly collector: CollectorSpec | null;
  /** Test-only (RunnerTestSettings): `disable` lets a local PgBouncer stand in for a proxy. @default 'require' */
  readonly sslmode: SslMode;
  /** Test-only (RunnerTestSettings): do not call the RDS API (pool sweeps then fail with a clear error). */
  readonly poolControl: boolean;
  /** Test-only (RunnerTestSettings): S3/Secrets Manager endpoint override (tests with moto_server). */
  readonly endpointUrl: string | null;
  /** Seconds to wait for the other runners at a step barrier. @default 900 */
  readonly barrierTimeoutSec: number;
  /**
   * Test-only (RunnerTestSettings): the target kind the proxies get. `pgbouncer-transaction` lets
   * a local PgBouncer stand in for a proxy under the suites that only name PgBouncer targets
   * (smoke, quick). @default 'rds-proxy'
   */
  readonly proxyTargetKind: ProxyTargetKind;
  /**
   * Test-only (RunnerTestSettings): a fleet's time between "every runner is ready" and the common
   * start of a step, and how often a runner polls the bucket at a barrier (FleetCoordinator).
   * @default 5000 and 1000 ms
   */
  readonly fleetLeadMs: number;
  readonly fleetPollMs: number;
  /** Test-only (RunnerTestSettings): the suite may be a test-only one (lib/suite/test-suites.ts). @default false */
  readonly testSuites: boolean;
  /**
   * Test-only (RunnerTestSettings): the pinning metric's period a session-state probe holds its state
   * for on a target that pins, in ms, in place of the catalog's (CloudWatch's minute), so a test with
   * a local stand-in for RDS Proxy does not wait a minute per feature. null: the catalog's.
   */
  readonly pinPeriodMs: number | null;
  /**
   * The runner software version the CLI was built with (`runnerSoftwareVersion()`, the bundle's
   * content hash); the runner refuses to run when its own differs. null: not checked (tests,
   * older CLIs).
   */
  readonly expectVersion: string | null;
}

export type { ProxyTargetKind } from '../suite/targets';

/**
 * What only tests change about a runner. The run request (lib/aws/run-request.ts) never carries
 * these: a production runner runs with PRODUCTION_RUNNER_SETTINGS, and a test gives others on the
 * runner's command line (`--endpoint-url`, `--test-sslmode`, `--test-proxy-kind`,
 * `--test-pool-control`, `--test-fleet-lead-ms`, `--test-fleet-poll-ms`, `--test-suites`,
 * `--test-pin-period-ms`; requestRunnerArgv / parseRequestRunnerArgv).
 */
export interface RunnerTestSettings {
  readonly sslmode: SslMode;
  readonly poolControl: boolean;
  readonly proxyTargetKind: ProxyTargetKind;
  readonly endpointUrl: string | null;
  readonly fleetLeadMs: number;
  readonly fleetPollMs: number;
  /** The run request may name a test-only suite (lib/suite/test-suites.ts) besides the catalog's. */
  readonly testSuites: boolean;
  readonly pinPeriodMs: number | null;
}

/** A production runner: TLS required, RDS Proxy pool control on, proxies are RDS Proxies, real AWS endpoints. */
export const PRODUCTION_RUNNER_SETTINGS: RunnerTestSettings = {
  sslmode: 'require',
  poolControl: true,
  proxyTargetKind: 'rds-proxy',
  endpointUrl: null,
  // Runners on EC2 see one another's S3 objects within a poll; 5 s lets the slowest read the plan.
  fleetLeadMs: 5_000,
  fleetPollMs: 1_000,
  testSuites: false,
  pinPeriodMs: null,
};

/** What the operator resolves for a run and the run request carries: the runner's arguments less its index and the test settings. */
export type RunRequestArgs = Omit<RunnerArgs, 'runnerIndex' | 'runnerCount' | keyof RunnerTestSettings>;

/** An RDS Proxy pool setting, as percentages of max_connections. */
export interface PoolPercents {
  readonly maxConnectionsPercent: number;
  readonly maxIdleConnectionsPercent: number;
}
