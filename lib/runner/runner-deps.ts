/** What the cloud runner (./runner.ts) is given — its AWS clients, tools and clock — and what it answers. */
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { RDSClient } from '@aws-sdk/client-rds';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { InfrastructureError } from '../core/errors';
import type { Clock, PgbenchExecutor, ServerConnectionsProbe } from '../engine/ports';
import type { ProgressEvent, RunSuiteResult } from '../engine/run-suite';
import type { Suite } from '../suite/catalog';
import type { ConnectionInfo } from '../suite/types';
import type { ScalarQuery } from '../exec/libpq';
import type { AdminRowsQuery } from './pooler-targets';

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

/** The runner's software is not the CLI's: it would run code the operator did not deploy. */
export function checkSoftwareVersion(expected: string | null, actual: string | null): void {
  if (expected === null || expected === actual) return;
  throw new InfrastructureError(
    `runner software version ${actual ?? 'unknown'} is not the CLI's version ${expected}: ` +
      'the runners still have the runner.js of an earlier deploy. Redeploy (npx proxylab deploy --lab FILE), ' +
      'which replaces the runners, then run again',
  );
}
