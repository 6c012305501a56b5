/**
 * Every default of a lab in one place: validation applies them (validate.ts `withDefaults`), the
 * constructs fall back to them when a caller omits a prop, the cost estimate prices them, and the
 * generated lab-file reference (docs/lab-file.md, README) prints them. Change a default here only.
 *
 * Pure data: no aws-cdk-lib, no I/O, so constructs, cost and docs scripts can all import it.
 */
import { DEFAULT_ENGINE_VERSION } from './engine-versions';
import { DEFAULT_INSTANCE_CLASS } from './instance-classes';
import { DEFAULT_RDS_POSTGRES_INSTANCE_CLASS, DEFAULT_RDS_POSTGRES_VERSION } from './rds-postgres';
import type { RdsStorageType } from './rds-postgres';
import type { PoolMode } from '../poolers/products';
import { pgbouncerDriver } from '../poolers/pgbouncer/driver';
import { POOL_MODES } from '../poolers/products';
import type { AuroraStorageType, RunnerPlacement } from './types';

export const DEFAULTS = {
  description: '',
  aurora: {
    engineVersion: DEFAULT_ENGINE_VERSION,
    instanceClass: DEFAULT_INSTANCE_CLASS,
    readers: 0,
    performanceInsights: true,
    logConnections: false,
    snapshotOnDestroy: false,
    /** Aurora Standard: what AWS creates when the storage type is not given. */
    storageType: 'standard' as AuroraStorageType,
  },
  /** RDS for PostgreSQL (the `postgres` section, instead of `aurora`). */
  postgres: {
    engineVersion: DEFAULT_RDS_POSTGRES_VERSION,
    instanceClass: DEFAULT_RDS_POSTGRES_INSTANCE_CLASS,
    /** The gp3 minimum (RDS_STORAGE_LIMITS_GIB); pgbench -s 50 needs ≈ 0.75 GB. */
    allocatedStorageGb: 20,
    storageType: 'gp3' as RdsStorageType,
    multiAz: false,
    performanceInsights: true,
    logConnections: false,
    snapshotOnDestroy: false,
  },
  proxy: {
    maxConnectionsPercent: 100,
    /** maxIdleConnectionsPercent defaults to this fraction of maxConnectionsPercent, rounded down. */
    maxIdleFractionOfMax: 0.5,
    borrowTimeoutSeconds: 120,
    requireTls: true,
    debugLogging: false,
  },
  pooler: {
    /** A lab's pooler of kind pgbouncer; another product's default is its driver's `defaultVersion`. */
    version: pgbouncerDriver.defaultVersion,
    poolModes: POOL_MODES as readonly PoolMode[],
    /** Leaves 10 % of max_connections for direct targets and superuser/admin sessions. */
    poolPercent: 90,
    /** PgBouncer's own default since 1.24 (a pgbouncer pooler's; another product's is its driver's). */
    maxPreparedStatements: pgbouncerDriver.defaultMaxPreparedStatements,
    processes: 1,
    tls: true,
  },
  runners: {
    instanceType: 'c7g.large',
    count: 1,
    placement: 'any' as RunnerPlacement,
    /** On-demand runners unless the lab asks for Spot capacity. */
    spot: false,
  },
  /** The lab's own VPC unless the lab names an existing one (lib/config/network.ts). */
  network: {
    mode: 'create' as const,
    /** With `egress: "vpc-endpoints"`: the stack creates the endpoints unless told they exist. */
    endpoints: 'create' as const,
  },
  results: {
    retainOnDestroy: false,
    expireAfterDays: 30,
  },
  /** A lab's own scenario (`scenarios[]`, lib/config/scenarios.ts): what it runs unless it says otherwise. */
  scenario: {
    /** pgbench -i -s: ≈ 150 MB, bigger than a toy, loaded in seconds. */
    scale: 10,
    /** -T when neither durationSec nor transactionsPerClient is given. */
    durationSec: 60,
    /** At least three, so the report shows a spread, not one number. */
    repetitions: 3,
    /** pgbench -j (capped at the step's clients, divided across the runners). */
    jobs: 8,
    protocols: ['simple'] as const,
    connects: ['persistent'] as const,
    targets: ['all'] as const,
  },
  /** The writer, runners and pooler hosts in one Availability Zone unless a lab asks for a cross-zone hop. */
  crossZone: false,
  /** Hours until the lab deletes itself; `null` in a lab file opts out. */
  ttlHours: 8,
  /** Without `scenarios`; a lab with its own scenarios runs them (`["lab"]`) unless it names suites. */
  suites: ['quick'] as readonly string[],
  /** What the stack deploys that the lab file does not set (constructs and cost estimate share it). */
  stack: {
    /** Availability zones the VPC spans (Aurora needs subnets in at least two). */
    availabilityZones: 2,
    /** Encrypted gp3 root volume per runner, GiB. */
    runnerRootVolumeGib: 16,
    /** Encrypted gp3 root volume of a dedicated pooler host, GiB (same as a runner's). */
    poolerRootVolumeGib: 16,
    masterUsername: 'proxylab',
    databaseName: 'proxylab',
  },
} as const;

/** The default maxIdleConnectionsPercent for a proxy with this maxConnectionsPercent. */
export function defaultMaxIdleConnectionsPercent(maxConnectionsPercent: number): number {
  return Math.floor(maxConnectionsPercent * DEFAULTS.proxy.maxIdleFractionOfMax);
}
