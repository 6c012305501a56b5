import type { RdsStorageType } from './rds-postgres';
import type { DatabaseEngine } from './stack-outputs';

export type { DatabaseEngine };
import type { PoolMode as PgbouncerPoolMode, PoolerPlacement } from '../poolers/products';
import type { PoolerProduct } from '../poolers/products';
import type { SettingValue } from '../products/types';
import type { BackgroundLoad } from '../suite/disruption-load';
import type { BuiltinScript, ClientsSpec } from '../suite/scenario';
import type { ConnectMode, Protocol } from '../suite/types';
import type { TargetSelectorName } from '../suite/experiments/common';
import type { NetworkConfig } from './network';

export type { ExistingNetworkConfig, NetworkConfig } from './network';

/**
 * A validated lab with every default applied. This is what the CDK stack, the cost estimate and
 * the CLI read; the lab FILE format (with optional fields) is documented in docs/lab-file.md.
 */
export interface LabConfig {
  /** Lab name; the stack is `proxylab-<name>`, proxies are `<name>-<proxy>`. */
  readonly name: string;
  /** Free text: what the lab is for, which published setup it stands in for. Default "". */
  readonly description: string;
  /**
   * Region hint for humans and the cost estimate; the stack itself is environment-agnostic — except
   * with an existing VPC (`network`), whose lookup binds the stack to this region (required there).
   */
  readonly region: string | null;
  /** Who to ask about this lab; becomes the `proxylab:owner` tag. */
  readonly owner: string | null;
  /**
   * The database behind `direct`: an Aurora PostgreSQL cluster (the lab file's `aurora` section, the
   * default) or an RDS for PostgreSQL instance (`postgres`). Ask it what it is (`engine`) rather than
   * assume Aurora; lib/config/database.ts answers the common questions (class, instance count, name).
   */
  readonly database: DatabaseConfig;
  /** Zero or more RDS Proxies in front of the database, each with its own pool settings. */
  readonly proxies: readonly ProxyConfig[];
  /** Zero or more self-hosted PgBouncers (dedicated host or on every runner). */
  readonly poolers: readonly PoolerConfig[];
  readonly runners: RunnersConfig;
  /**
   * false: the writer in the runners' (and dedicated pooler hosts') zone; true: the writer in the
   * VPC's other zone. @default false
   */
  readonly crossZone: boolean;
  /** Where the hosts live: the lab's own VPC (default) or an existing one, with or without internet egress. */
  readonly network: NetworkConfig;
  readonly results: ResultsConfig;
  /**
   * Hours after deploy when the lab deletes itself (expiry schedule); null = never (explicit opt-out).
   * @default 8
   */
  readonly ttlHours: number | null;
  /** Extra tags on every resource. */
  readonly tags: Readonly<Record<string, string>>;
  /** Suite names to run on this lab: catalog suites, and `lab` for `scenarios`. */
  readonly suites: readonly string[];
  /** The lab's own scenarios (suite `lab`, lib/config/scenarios.ts); empty when it has none. */
  readonly scenarios: readonly LabScenario[];
  /**
   * A background load for every disruption scenario the lab runs that names none of its own
   * (lib/suite/disruption-load.ts), resolved: a lab scenario's workload and scale travel with it.
   * null: none.
   */
  readonly disruptionLoad: BackgroundLoad | null;
  /** Spending guard: `proxylab deploy` refuses a lab estimated above it (lib/cost/guards.ts); null = none. */
  readonly budget: { readonly maxHourlyUsd: number } | null;
}

export type DatabaseConfig = AuroraDatabaseConfig | PostgresDatabaseConfig;

/** One script of a lab scenario's workload, its file read and checked at validate time. */
export type LabWorkloadPart =
  | { readonly builtin: BuiltinScript; readonly weight: number }
  | {
      readonly file: {
        /** The path as the lab file gives it, relative to the lab file's folder. */
        readonly path: string;
        /** The file's name (its last segment): what pgbench is given, in the step's work folder. */
        readonly name: string;
        /** The script's text (UTF-8, at most 64 KiB): shipped to the runners, stored in plan.json. */
        readonly sql: string;
        /** SHA-256 of the text, hex: which version of the script a run measured. */
        readonly sha256: string;
      };
      readonly weight: number;
    };

/** A lab's own scenario, every default applied (lab file `scenarios[]`). */
export interface LabScenario {
  readonly name: string;
  /** Free text; "" when none. */
  readonly description: string;
  readonly workload: readonly LabWorkloadPart[];
  readonly scale: number;
  readonly clients: readonly ClientsSpec[];
  /** Exactly one of durationSec and transactionsPerClient is non-null. */
  readonly durationSec: number | null;
  readonly transactionsPerClient: number | null;
  readonly protocols: readonly Protocol[];
  readonly connects: readonly ConnectMode[];
  readonly repetitions: number;
  /** pgbench -R in total; null = unthrottled. */
  readonly rateTps: number | null;
  readonly jobs: number;
  /** `all`, or capability selectors (lib/suite/experiments/common.ts TARGET_SELECTORS). */
  readonly targets: ReadonlyArray<TargetSelectorName | 'all'>;
}

export interface AuroraDatabaseConfig extends AuroraConfig {
  readonly engine: 'aurora-postgresql';
}

/** RDS for PostgreSQL: one DB instance (plus a standby when Multi-AZ). */
export interface PostgresDatabaseConfig {
  readonly engine: 'postgres';
  /** One of RDS_POSTGRES_VERSIONS (lib/config/rds-postgres.ts), e.g. "17.9". */
  readonly engineVersion: string;
  /** One of RDS_POSTGRES_INSTANCE_CLASSES, e.g. "db.t4g.micro". */
  readonly instanceClass: string;
  readonly allocatedStorageGb: number;
  readonly storageType: RdsStorageType;
  /** A synchronous standby in a second AZ (not readable; billed like the primary). */
  readonly multiAz: boolean;
  /** `max_connections` override; null = RDS for PostgreSQL's default formula for the class. */
  readonly maxConnections: number | null;
  readonly performanceInsights: boolean;
  /** Turns on `log_connections` and `log_disconnections`. */
  readonly logConnections: boolean;
  /** Take a final snapshot on stack deletion (default false: deleted without one). */
  readonly snapshotOnDestroy: boolean;
}

/** Aurora cluster storage configurations (CloudFormation StorageType `aurora` / `aurora-iopt1`). */
export const AURORA_STORAGE_TYPES = ['standard', 'io-optimized'] as const;
export type AuroraStorageType = (typeof AURORA_STORAGE_TYPES)[number];

export interface AuroraConfig {
  /** One of ACCEPTED_ENGINE_VERSIONS, e.g. "16.9". */
  readonly engineVersion: string;
  /** Aurora Standard (I/O billed per request) or I/O-Optimized (no I/O charge, dearer instances and storage). */
  readonly storageType: AuroraStorageType;
  /** Provisioned writer/readers on this class, or serverless v2 (then `instanceClass` is null). */
  readonly capacity:
    | { readonly kind: 'provisioned'; readonly instanceClass: string }
    | { readonly kind: 'serverless'; readonly minCapacityAcu: number; readonly maxCapacityAcu: number };
  readonly readers: number;
  /** `max_connections` override; null = Aurora's default formula for the class. */
  readonly maxConnections: number | null;
  readonly performanceInsights: boolean;
  /** Turns on `log_connections` and `log_disconnections`. */
  readonly logConnections: boolean;
  /** Take a final snapshot on stack deletion (default false: destroyed without one). */
  readonly snapshotOnDestroy: boolean;
}

export interface ProxyConfig {
  /** Lab-local name ("pool100"); the RDS proxy is named `<lab>-<name>`. */
  readonly name: string;
  readonly maxConnectionsPercent: number;
  /** Default: half of maxConnectionsPercent, rounded down. */
  readonly maxIdleConnectionsPercent: number;
  readonly borrowTimeoutSeconds: number;
  readonly requireTls: boolean;
  readonly debugLogging: boolean;
  /** The team's values for RDS Proxy's other settings (InitQuery, IdleClientTimeout), checked; `{}`: defaults. */
  readonly settings: Readonly<Record<string, SettingValue>>;
}

/** A self-hosted pooler, every default applied. */
export interface PoolerConfig {
  /** Lab-local name; targets are `<name>-<mode>`. */
  readonly name: string;
  readonly kind: PoolerProduct;
  readonly placement: PoolerPlacement;
  /** EC2 type of the dedicated host; null for `on-runners`. */
  readonly instanceType: string | null;
  /** A release of the kind's driver (lib/poolers/<kind>/releases.ts). */
  readonly version: string;
  /** Non-empty, distinct. */
  readonly poolModes: readonly PgbouncerPoolMode[];
  /** Share of max_connections opened in total, split across `processes` (RDS Proxy's MaxConnectionsPercent). */
  readonly poolPercent: number;
  /** PgBouncer max_prepared_statements; PgDoorman prepared_statements_cache_size (0: off). */
  readonly maxPreparedStatements: number;
  /** PgBouncer processes sharing the port with so_reuseport; 1 for a multithreaded product. */
  readonly processes: number;
  /** Worker threads of a multithreaded product's process (PgDoorman); null: the host's vCPUs. */
  readonly workerThreads: number | null;
  /** Clients must use TLS. */
  readonly tls: boolean;
  /**
   * The team's values for the product's documented settings (lib/products/<kind>/settings.ts), checked
   * for `version`; every other setting runs at the product's default. `{}`: all defaults.
   */
  readonly settings: Readonly<Record<string, SettingValue>>;
}

export type RunnerPlacement = 'any' | 'cluster' | 'spread';

export interface RunnersConfig {
  readonly instanceType: string;
  readonly count: number;
  /** EC2 placement group strategy for the runners; "any" = no placement group. */
  readonly placement: RunnerPlacement;
  /**
   * Spot capacity: a persistent Spot request with interruption behaviour `stop` (the runner comes
   * back with its EBS root when capacity returns; the run resumes with the same run id).
   */
  readonly spot: boolean;
}

export interface ResultsConfig {
  /** Keep the results bucket (and its objects) when the stack is destroyed. */
  readonly retainOnDestroy: boolean;
  /** Objects expire this many days after creation. */
  readonly expireAfterDays: number;
}

/** One problem in a lab file. */
export interface LabProblem {
  /** JSON path in the file, e.g. `proxies[1].maxConnectionsPercent` (`(file)` for the whole file). */
  readonly path: string;
  /** The value received (undefined when the key is missing). */
  readonly value: unknown;
  /** What is wrong and what is allowed, e.g. `must be an integer 1–100, got 120`. */
  readonly message: string;
}

export type LabValidation =
  | { readonly ok: true; readonly lab: LabConfig }
  | { readonly ok: false; readonly problems: readonly LabProblem[] };
