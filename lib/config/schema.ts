/**
 * The lab file schema (zod 4). Strict objects everywhere: an unknown key is an error, so a typo
 * never silently falls back to a default.
 *
 * Each leaf's error text is the description of what is ALLOWED ("an integer 1–100"); validate.ts
 * turns it into "must be an integer 1–100, got 120". Each field's `.meta()` carries its
 * documentation (description, default from DEFAULTS, or `defaultText` when the default is a rule):
 * the JSON Schema (docs/lab.schema.json) and the field tables in docs/lab-file.md and the README
 * are generated from it (scripts/gen-docs.ts). Rules that relate two fields (idle ≤ max,
 * unique proxy names, instanceClass vs serverless) live in validate.ts, because they need to run
 * even when other fields are broken.
 */
import { z } from 'zod';
import { ACCEPTED_ENGINE_VERSIONS } from './engine-versions';
import { DEFAULTS } from './defaults';
import { AURORA_POSTGRES_INSTANCE_CLASSES } from './instance-classes';
import { RDS_POSTGRES_VERSIONS, RDS_STORAGE_LIMITS_GIB } from './rds-postgres';
import { AURORA_STORAGE_TYPES } from './types';
import { POOLER_DRIVERS } from '../poolers/registry';
import { POOLER_PROCESSES_MAX, POOLER_WORKER_THREADS_MAX } from '../poolers/endpoint';
import { POOL_MODES, POOLER_PLACEMENTS, POOLER_PRODUCTS } from '../poolers/products';
import { settingsSchema } from './settings';
import { BUILTIN_SCRIPTS } from '../suite/scenario';
import { CONNECT_MODES, PROTOCOLS } from '../suite/types';
import { TARGET_SELECTOR_NAMES } from '../suite/experiments/common';
import {
  ACCOUNT_ID_PATTERN,
  IPV4_CIDR_PATTERN,
  NETWORK_EGRESS,
  NETWORK_ENDPOINTS,
  PRIVATE_ENDPOINT_SERVICES,
  SUBNET_ID_PATTERN,
  VPC_ID_PATTERN,
} from './network';

/** `"a", "b"`. */
function quoted(values: readonly string[]): string {
  return values.map((v) => `"${v}"`).join(', ');
}

/** `"a"` for one allowed value, `one of "a", "b"` for more. */
function oneOf(values: readonly string[]): string {
  return values.length === 1 ? quoted(values) : `one of ${quoted(values)}`;
}

/** Documentation of one lab-file field: JSON Schema `description` / `default`, plus the docs' text. */
export interface FieldDoc {
  readonly description: string;
  /** The default as a value (becomes JSON Schema `default`). */
  readonly default?: unknown;
  /** The default in words, when it is a rule rather than a value ("half of maxConnectionsPercent"). */
  readonly defaultText?: string;
  /**
   * JSON Schema bounds for a number whose range validate.ts checks itself (one message naming the
   * rule): editors and the docs table show the range, zod does not report it a second time.
   */
  readonly minimum?: number;
  readonly maximum?: number;
}

const doc = (d: FieldDoc): FieldDoc & Record<string, unknown> => ({ ...d });

/** The `settings` field's documentation, for a proxy or a pooler. */
function SETTINGS_DOC(product: string, cli: string, example: string): FieldDoc {
  return {
    description: `The team's values for ${product}'s documented settings, by their own names (e.g. ${example}); every other setting runs at the product's default for the pinned version. Checked against the settings catalogue for that version (\`proxylab settings ${cli}\` lists names, types, ranges, defaults and sources): an unknown name, a wrong type, a value out of range or a setting the version lacks is refused; settings proxylab derives from a field (pool size, pool modes, TLS…) name that field instead. Recorded with their defaults in plan.json.`,
    defaultText: "{} (the product's defaults)",
  };
}

/** Bounds shared by the schema, the cross-field checks and the docs. */
export const LIMITS = {
  labNameMaxLength: 24,
  proxyNameMaxLength: 32,
  readersMax: 15,
  maxConnectionsMin: 6,
  maxConnectionsMax: 262143,
  serverlessAcuMax: 256,
  proxiesMax: 20,
  poolerNameMaxLength: 32,
  poolersMax: 4,
  poolerProcessesMax: POOLER_PROCESSES_MAX,
  poolerWorkerThreadsMax: POOLER_WORKER_THREADS_MAX,
  /** PgBouncer's max_prepared_statements is an int; beyond this it is a typo, not a setting. */
  maxPreparedStatementsMax: 100000,
  borrowTimeoutSecondsMax: 300,
  runnerCountMax: 20,
  /** Subnets an existing-VPC lab names: the database subnet group needs two zones; more than one per zone is pointless. */
  networkSubnetsMin: 2,
  networkSubnetsMax: 16,
  endpointCidrsMax: 16,
  expireAfterDaysMax: 3650,
  /**
   * A deploy (Aurora cluster, instances, RDS Proxies, runners) takes 15–30 minutes; a lab that
   * expires sooner deletes itself around the time it becomes usable, before a suite has run.
   * One hour is the shortest lifetime that leaves room for a deploy and a `quick` suite.
   */
  ttlHoursMin: 1,
  ttlHoursMax: 720,
  /** Below a cent per hour no lab can be deployed: a typo (or `1e-300`), not a budget. */
  budgetMaxHourlyUsdMin: 0.01,
  /**
   * AWS allows 50 user tags per resource (aws: tags do not count); proxylab adds three of its own
   * (proxylab:lab, proxylab:owner, proxylab:expires-at — lib/constructs/ttl.ts), which leaves 47.
   */
  userTagsMax: 50 - 3,
  tagKeyMaxLength: 128,
  tagValueMaxLength: 256,
  descriptionMaxLength: 1024,
  ownerMaxLength: 256,
  /** A lab's own scenarios (`scenarios[]`). */
  scenariosMax: 20,
  scenarioNameMaxLength: 40,
  workloadPartsMax: 10,
  scriptWeightMax: 1000,
  clientCountsMax: 30,
  clientsMax: 50000,
  clientsTimesMax: 100,
  scaleMax: 100000,
  durationSecMax: 86400,
  transactionsPerClientMax: 10_000_000,
  repetitionsMax: 100,
  jobsMax: 1000,
  rateTpsMax: 10_000_000,
} as const;

/** Lab names become the stack name `proxylab-<name>` and prefix every proxy name. */
const LAB_NAME_PATTERN = /^[a-z](?:[a-z0-9]|-(?=[a-z0-9]))*$/;
/** Pooler names: lowercase letters, digits, single hyphens (target names, file names, construct ids). */
const POOLER_NAME_PATTERN = /^[a-z](?:[a-z0-9]|-(?=[a-z0-9]))*$/;
/** RDS identifier: a letter first, then letters, digits and single hyphens, no trailing hyphen. */
const RDS_IDENTIFIER_PATTERN = /^[a-zA-Z](?:[a-zA-Z0-9]|-(?=[a-zA-Z0-9]))*$/;
/** EC2 instance type such as `c7g.large`, `m7i.2xlarge`, `c6gn.16xlarge`. */
export const EC2_INSTANCE_TYPE_PATTERN = /^[a-z][a-z0-9-]*\.[a-z0-9]+$/;
export const REGION_PATTERN = /^[a-z]{2}(?:-gov|-iso[a-z]*)?-[a-z]+-\d$/;
export const SUITE_NAME_PATTERN = /^[a-z0-9][a-z0-9-]*$/;
/** A lab scenario's name: the first segment of its step ids and file names. */
export const SCENARIO_NAME_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
/**
 * A script file a lab names, relative to the lab file's folder: `/`-separated segments of letters,
 * digits, `.`, `_`, `-` (no `..`, no absolute path), ending in `.sql`. It is read at validate time
 * and shipped in the run request: a path outside the lab's folder would ship any readable file.
 */
export const SCRIPT_PATH_PATTERN = /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]*\/)*[A-Za-z0-9_-][A-Za-z0-9._-]*\.sql$/;

/**
 * AWS tag keys and values: "letters, numbers, and spaces representable in UTF-8, and the following
 * characters: + - = . _ : / @"; keys 1–128 characters, values 0–256, at most 50 tags per resource,
 * and `aws:` (any case) reserved as a prefix of keys and values. The AWS tagging restrictions, as
 * stated in every service's Tag reference, e.g.
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-resource-tags.html
 * and https://docs.aws.amazon.com/batch/latest/userguide/tag-restrictions.html.
 */
export const TAG_TEXT_PATTERN = /^[\p{L}\p{N}\p{Zs}+\-=._:/@]*$/u;
const TAG_CHARACTERS = 'letters, digits, spaces and + - = . _ : / @';
/** Tag keys proxylab sets itself: a lab must not override them (the operator policy conditions on proxylab:lab). */
export const RESERVED_TAG_PREFIX = 'proxylab:';

/** Free text (description): newlines and tabs allowed, other control characters not. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NO_CONTROL_EXCEPT_LINES = /^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$/;

const startsWithAws = (s: string): boolean => s.toLowerCase().startsWith('aws:');

function integer(min: number, max: number, what = `an integer ${min}–${max}`) {
  return z.number({ error: what }).int({ error: what }).min(min, { error: what }).max(max, { error: what });
}

function numberIn(min: number, max: number, what: string) {
  return z.number({ error: what }).min(min, { error: what }).max(max, { error: what });
}

const bool = z.boolean({ error: 'true or false' });

const engineVersions = ACCEPTED_ENGINE_VERSIONS.map((e) => e.version);

/** Serverless v2 capacity in ACU: multiples of 0.5. */
const acu = (min: number, what: string) =>
  numberIn(min, LIMITS.serverlessAcuMax, what).multipleOf(0.5, { error: what });

const serverlessSchema = z.strictObject(
  {
    minCapacity: acu(0, `a number of ACU 0–${LIMITS.serverlessAcuMax} in steps of 0.5`).meta(
      doc({ description: 'Serverless v2 minimum ACU, ≤ maxCapacity (0 = auto-pause).' }),
    ),
    maxCapacity: acu(1, `a number of ACU 1–${LIMITS.serverlessAcuMax} in steps of 0.5`).meta(
      doc({ description: 'Serverless v2 maximum ACU. Give `serverless` instead of `instanceClass`.' }),
    ),
  },
  { error: 'an object such as { "minCapacity": 0.5, "maxCapacity": 4 }' },
);

/** The settings both database sections end with (same keys, same checks; their own defaults and words). */
function databaseSettingsFields(o: {
  maxConnectionsDefault: string;
  performanceInsights: string;
  deleted: 'cluster' | 'instance';
  defaults: { performanceInsights: boolean; logConnections: boolean; snapshotOnDestroy: boolean };
}) {
  return {
    maxConnections: integer(LIMITS.maxConnectionsMin, LIMITS.maxConnectionsMax)
      .optional()
      .meta(
        doc({
          description: 'Sets `max_connections` in a DB parameter group.',
          defaultText: o.maxConnectionsDefault,
        }),
      ),
    performanceInsights: bool
      .optional()
      .meta(doc({ description: o.performanceInsights, default: o.defaults.performanceInsights })),
    logConnections: bool.optional().meta(
      doc({
        description: '`true` sets `log_connections` and `log_disconnections` (E3).',
        default: o.defaults.logConnections,
      }),
    ),
    snapshotOnDestroy: bool.optional().meta(
      doc({
        description: `\`true\` takes a final snapshot on destroy; otherwise the ${o.deleted} is deleted without one.`,
        default: o.defaults.snapshotOnDestroy,
      }),
    ),
  };
}

const auroraSchema = z.strictObject(
  {
    // Checked by validate.ts against ACCEPTED_ENGINE_VERSIONS (the message depends on the value).
    engineVersion: z
      .string({ error: `a version string, one of ${engineVersions.join(', ')}` })
      .optional()
      .meta(
        doc({
          description: `Aurora PostgreSQL version aws-cdk-lib knows and AWS still creates (lib/config/engine-versions.ts): ${engineVersions.join(', ')}.`,
          default: DEFAULTS.aurora.engineVersion,
        }),
      ),
    // Same: validate.ts checks membership so it can suggest a close class.
    instanceClass: z
      .string({ error: 'an instance class string such as "db.t4g.medium"' })
      .optional()
      .meta(
        doc({
          description:
            'A DB instance class Aurora PostgreSQL offers (lib/config/instance-classes.ts). Not together with `serverless`. ' +
            '`cost`, `deploy` and `validate` also need its price in lib/cost/price-table.ts; `cdk synth` does not.',
          default: DEFAULTS.aurora.instanceClass,
        }),
      ),
    serverless: serverlessSchema
      .optional()
      .meta(doc({ description: 'Aurora Serverless v2 capacity instead of a provisioned class.' })),
    readers: integer(0, LIMITS.readersMax)
      .optional()
      .meta(
        doc({
          description: "Readers; they use the writer's class (or serverless, scaling with the writer).",
          default: DEFAULTS.aurora.readers,
        }),
      ),
    storageType: z
      .enum(AURORA_STORAGE_TYPES, { error: `one of ${AURORA_STORAGE_TYPES.map((t) => `"${t}"`).join(', ')}` })
      .optional()
      .meta(
        doc({
          description:
            'Cluster storage configuration. `standard`: storage and every I/O request billed (`cost` assumes an I/O rate; a write-heavy suite can exceed it many times over). ' +
            '`io-optimized` (CloudFormation `aurora-iopt1`): no I/O charge, instances 1.3 × and storage 2.25 × the Standard rates, so a benchmark costs what `cost` says.',
          default: DEFAULTS.aurora.storageType,
        }),
      ),
    ...databaseSettingsFields({
      maxConnectionsDefault: "Aurora's formula for the class",
      performanceInsights: 'Performance Insights with the free 7-day retention.',
      deleted: 'cluster',
      defaults: DEFAULTS.aurora,
    }),
  },
  { error: 'an object such as { "instanceClass": "db.t4g.medium" } (docs/lab-file.md lists its keys)' },
);

const rdsPostgresVersions = RDS_POSTGRES_VERSIONS.map((e) => e.version);

const postgresSchema = z.strictObject(
  {
    // Checked by validate.ts against RDS_POSTGRES_VERSIONS (the message depends on the value).
    engineVersion: z
      .string({ error: `a version string, one of ${rdsPostgresVersions.join(', ')}` })
      .optional()
      .meta(
        doc({
          description: `RDS for PostgreSQL version aws-cdk-lib knows and AWS still creates under standard support (lib/config/rds-postgres.ts): ${rdsPostgresVersions.join(', ')}.`,
          default: DEFAULTS.postgres.engineVersion,
        }),
      ),
    // validate.ts checks membership so it can suggest a close class.
    instanceClass: z
      .string({ error: 'an instance class string such as "db.t4g.micro"' })
      .optional()
      .meta(
        doc({
          description:
            'A DB instance class RDS for PostgreSQL offers (lib/config/rds-postgres.ts), burstable micro/small included. ' +
            '`cost`, `deploy` and `validate` also need its price in lib/cost/price-table.ts; `cdk synth` does not.',
          default: DEFAULTS.postgres.instanceClass,
        }),
      ),
    // Range per storage type is checked in validate.ts (io1/io2 start at 100 GiB), with one message
    // naming the type; zod only asks for a whole number so a value is not reported twice.
    // gp3 is the only type a lab may give, so the JSON Schema (editors, the docs table) carries gp3's range.
    allocatedStorageGb: z
      .number({ error: 'a whole number of GiB' })
      .int({ error: 'a whole number of GiB' })
      .optional()
      .meta(
        doc({
          description: `Allocated storage in GiB: gp3 ${RDS_STORAGE_LIMITS_GIB.gp3.min}–${RDS_STORAGE_LIMITS_GIB.gp3.max}.`,
          default: DEFAULTS.postgres.allocatedStorageGb,
          minimum: RDS_STORAGE_LIMITS_GIB.gp3.min,
          maximum: RDS_STORAGE_LIMITS_GIB.gp3.max,
        }),
      ),
    storageType: z
      .enum(['gp3'], {
        error:
          '"gp3" (io1/io2 need provisioned IOPS, which a lab file does not carry; gp2 is the previous generation)',
      })
      .optional()
      .meta(
        doc({ description: 'EBS storage type of the instance.', default: DEFAULTS.postgres.storageType }),
      ),
    multiAz: bool.optional().meta(
      doc({
        description:
          '`true` adds a synchronous standby in a second AZ (not readable; doubles instance and storage cost).',
        default: DEFAULTS.postgres.multiAz,
      }),
    ),
    ...databaseSettingsFields({
      maxConnectionsDefault: "RDS for PostgreSQL's formula LEAST(DBInstanceClassMemory/9531392, 5000)",
      performanceInsights:
        'Performance Insights with the free 7-day retention (every RDS for PostgreSQL class).',
      deleted: 'instance',
      defaults: DEFAULTS.postgres,
    }),
  },
  { error: 'an object such as { "instanceClass": "db.t4g.micro" } (docs/lab-file.md lists its keys)' },
);

const proxySchema = z.strictObject(
  {
    name: z
      .string({ error: 'a string' })
      .min(1, { error: 'a non-empty string' })
      .max(LIMITS.proxyNameMaxLength, { error: `at most ${LIMITS.proxyNameMaxLength} characters` })
      .regex(RDS_IDENTIFIER_PATTERN, {
        error:
          'a valid RDS identifier: a letter first, then letters, digits or single hyphens, not ending in a hyphen',
      })
      .meta(
        doc({
          description:
            'RDS identifier: letter first, letters/digits/single hyphens, unique (case-insensitive). The RDS proxy is named `<lab>-<name>`.',
        }),
      ),
    maxConnectionsPercent: integer(1, 100)
      .optional()
      .meta(
        doc({
          description: '% of `max_connections` the proxy may open.',
          default: DEFAULTS.proxy.maxConnectionsPercent,
        }),
      ),
    maxIdleConnectionsPercent: integer(0, 100)
      .optional()
      .meta(
        doc({
          description: '% of `max_connections` kept idle; at most `maxConnectionsPercent`.',
          defaultText: 'half of maxConnectionsPercent, rounded down',
        }),
      ),
    borrowTimeoutSeconds: integer(0, LIMITS.borrowTimeoutSecondsMax)
      .optional()
      .meta(
        doc({
          description: 'How long a client waits for a pooled connection.',
          default: DEFAULTS.proxy.borrowTimeoutSeconds,
        }),
      ),
    requireTls: bool.optional().meta(
      doc({
        description: 'With `true`, pgbench needs `sslmode=require`.',
        default: DEFAULTS.proxy.requireTls,
      }),
    ),
    debugLogging: bool
      .optional()
      .meta(
        doc({ description: 'Proxy debug logs (may contain SQL).', default: DEFAULTS.proxy.debugLogging }),
      ),
    settings: settingsSchema('RDS Proxy').meta(
      doc(
        SETTINGS_DOC(
          'RDS Proxy',
          'rds-proxy',
          '{ "InitQuery": "SET search_path = app, public", "IdleClientTimeout": 900 }',
        ),
      ),
    ),
  },
  { error: 'a proxy object such as { "name": "pool100", "maxConnectionsPercent": 100 }' },
);

/** Each product's pinned releases, from its driver: `PgBouncer`, `1.26.0, 1.25.2, 1.24.1`. */
const poolerReleases = POOLER_PRODUCTS.map((product) => {
  const d = POOLER_DRIVERS[product];
  const pins = [
    ...new Set(
      d.releases.map((r) => (r.gitCommit !== undefined ? "its tag's commit id" : 'its published SHA-256')),
    ),
  ];
  return {
    product,
    name: d.displayName,
    versions: d.releases.map((r) => r.version).join(', '),
    pin: pins.join(' or '),
  };
});

const poolerSchema = z.strictObject(
  {
    name: z
      .string({ error: 'a string' })
      .min(1, { error: 'a non-empty string' })
      .max(LIMITS.poolerNameMaxLength, { error: `at most ${LIMITS.poolerNameMaxLength} characters` })
      .regex(POOLER_NAME_PATTERN, {
        error: 'lowercase letters, digits and single hyphens, starting with a letter',
      })
      .meta(
        doc({
          description:
            'Lowercase letters, digits, single hyphens; unique among proxies and poolers (case-insensitive). Targets are named `<name>-<mode>` (e.g. `bouncer-session`).',
        }),
      ),
    kind: z.enum(POOLER_PRODUCTS, { error: oneOf(POOLER_PRODUCTS) }).meta(
      doc({
        description: `The pooler product, an enum with one value per pooler driver (lib/poolers/registry.ts): ${quoted(POOLER_PRODUCTS)}. Any other name is refused until its driver exists (CONTRIBUTING.md, "Add a pooler product").`,
      }),
    ),
    placement: z
      .enum(POOLER_PLACEMENTS, {
        error: `${oneOf(POOLER_PLACEMENTS)} (a managed database's own host — Aurora or RDS — cannot run a pooler; "on-runners" co-locates it with the load)`,
      })
      .meta(
        doc({
          description:
            '`dedicated`: its own EC2 host (`instanceType`). `on-runners`: on every runner at 127.0.0.1, sharing the CPU with pgbench (the cloud stand-in for "pooler on the same host"; Aurora\'s host cannot run it).',
        }),
      ),
    // Required for dedicated and refused for on-runners: validate.ts checks it (it depends on placement).
    instanceType: z
      .string({ error: 'an EC2 instance type string such as "c7g.xlarge"' })
      .regex(EC2_INSTANCE_TYPE_PATTERN, { error: 'an EC2 instance type such as "c7g.xlarge"' })
      .optional()
      .meta(
        doc({
          description:
            'EC2 type of the dedicated host (required there, refused for `on-runners`); Graviton types get the arm64 AMI. `cost`, `deploy` and `validate` also need its price.',
          defaultText: 'none (required for dedicated)',
        }),
      ),
    // Checked by validate.ts against the kind's driver's releases (the message lists them).
    version: z
      .string({ error: poolerReleases.map((r) => `a ${r.name} release, one of ${r.versions}`).join('; or ') })
      .optional()
      .meta(
        doc({
          description: poolerReleases
            .map(
              (r) =>
                `${r.name} release pinned by ${r.pin} (lib/poolers/${r.product}/releases.ts): ${r.versions}.`,
            )
            .join(' '),
          default: DEFAULTS.pooler.version,
        }),
      ),
    poolModes: z
      .array(z.enum(POOL_MODES, { error: oneOf(POOL_MODES) }), {
        error: `a list of pool modes (${quoted(POOL_MODES)})`,
      })
      .min(1, { error: `a non-empty list of pool modes (${quoted(POOL_MODES)})` })
      .max(POOL_MODES.length, { error: `at most the ${POOL_MODES.length} pool modes ${quoted(POOL_MODES)}` })
      .refine((modes) => new Set(modes).size === modes.length, {
        error: `a list of distinct pool modes (${quoted(POOL_MODES)})`,
      })
      .optional()
      .meta(
        doc({
          description:
            'Pool modes to serve; each is a target. Transaction = the database name, session = `<db>_session`.',
          default: [...DEFAULTS.pooler.poolModes],
        }),
      ),
    poolPercent: integer(1, 100)
      .optional()
      .meta(
        doc({
          description:
            '% of `max_connections` the pooler opens in total (like RDS Proxy `maxConnectionsPercent`), split across `processes` (and, on the runners, across the runners).',
          default: DEFAULTS.pooler.poolPercent,
        }),
      ),
    maxPreparedStatements: integer(0, LIMITS.maxPreparedStatementsMax)
      .optional()
      .meta(
        doc({
          description:
            'PgBouncer `max_prepared_statements` (0 = off; transaction pools only); PgDoorman `prepared_statements_cache_size` (0 = `prepared_statements` off).',
          default: DEFAULTS.pooler.maxPreparedStatements,
        }),
      ),
    processes: integer(1, LIMITS.poolerProcessesMax)
      .optional()
      .meta(
        doc({
          description:
            "PgBouncer processes sharing the port (`so_reuseport`): one core each. At most the dedicated host's vCPUs. A multithreaded product (PgDoorman) runs 1: set `workerThreads`.",
          default: DEFAULTS.pooler.processes,
        }),
      ),
    workerThreads: integer(1, LIMITS.poolerWorkerThreadsMax)
      .optional()
      .meta(
        doc({
          description:
            "PgDoorman `worker_threads` (one process, this many threads). Default: the host's vCPUs (the dedicated host's, or the runners'), read at boot. Only for a multithreaded product.",
        }),
      ),
    tls: bool.optional().meta(
      doc({
        description:
          'Clients must use TLS (PgBouncer `client_tls_sslmode = require`, PgDoorman `tls_mode = "require"`; a key generated on the host), like RDS Proxy `requireTls`. Server side TLS is always on.',
        default: DEFAULTS.pooler.tls,
      }),
    ),
    settings: settingsSchema('pooler').meta(
      doc(
        SETTINGS_DOC(
          'the pooler (by its `kind`)',
          'pgbouncer',
          '{ "server_login_retry": 2, "query_wait_timeout": 30 }',
        ),
      ),
    ),
  },
  {
    error:
      'a pooler object such as { "name": "bouncer", "kind": "pgbouncer", "placement": "dedicated", "instanceType": "c7g.xlarge" }',
  },
);

const runnersSchema = z.strictObject(
  {
    instanceType: z
      .string({ error: 'an EC2 instance type string such as "c7g.large"' })
      .regex(EC2_INSTANCE_TYPE_PATTERN, { error: 'an EC2 instance type such as "c7g.large"' })
      .optional()
      .meta(
        doc({
          description:
            'An EC2 type (`family.size`); Graviton types get the arm64 AMI, others x86_64. `cost`, `deploy` and `validate` also need its price in lib/cost/price-table.ts; `cdk synth` does not.',
          default: DEFAULTS.runners.instanceType,
        }),
      ),
    count: integer(1, LIMITS.runnerCountMax)
      .optional()
      .meta(
        doc({
          description: 'Runners; the steps are split across them and merged.',
          default: DEFAULTS.runners.count,
        }),
      ),
    placement: z
      .enum(['any', 'cluster', 'spread'], { error: 'one of "any", "cluster", "spread"' })
      .optional()
      .meta(
        doc({
          description: 'EC2 placement group strategy; `any` = no placement group.',
          default: DEFAULTS.runners.placement,
        }),
      ),
    spot: bool.optional().meta(
      doc({
        description:
          '`true` runs the runners on Spot capacity (a persistent request that *stops* the runner on an interruption and starts it again, EBS intact, when capacity returns). An interruption loses at most the step in flight: `status` says which runner was interrupted and when, and `run` with the same `--run-id` resumes. `cost` shows the on-demand price as the ceiling.',
        default: DEFAULTS.runners.spot,
      }),
    ),
  },
  { error: 'an object such as { "instanceType": "c7g.large", "count": 1 }' },
);

const subnetIdText = 'a subnet id such as "subnet-0123456789abcdef0"';

const existingNetworkSchema = z.strictObject(
  {
    vpcId: z
      .string({ error: 'a VPC id such as "vpc-0123456789abcdef0"' })
      .regex(VPC_ID_PATTERN, {
        error: 'a VPC id such as "vpc-0123456789abcdef0" (vpc- and 8 or 17 hex digits)',
      })
      .meta(
        doc({
          description:
            'An existing VPC, looked up at synth time (CDK VPC context lookup: the values land in cdk.context.json). Needs DNS resolution and DNS hostnames on for `vpc-endpoints`.',
        }),
      ),
    subnetIds: z
      .array(
        z
          .string({ error: subnetIdText })
          .regex(SUBNET_ID_PATTERN, { error: `${subnetIdText} (subnet- and 8 or 17 hex digits)` }),
        { error: `a list of ${LIMITS.networkSubnetsMin}–${LIMITS.networkSubnetsMax} subnet ids` },
      )
      .min(LIMITS.networkSubnetsMin, {
        error: `a list of at least ${LIMITS.networkSubnetsMin} subnet ids in at least two Availability Zones (the database subnet group needs two)`,
      })
      .max(LIMITS.networkSubnetsMax, { error: `a list of at most ${LIMITS.networkSubnetsMax} subnet ids` })
      .refine((ids) => new Set(ids).size === ids.length, { error: 'a list of distinct subnet ids' })
      .meta(
        doc({
          description:
            'Private subnets of that VPC (no route to an internet gateway), in at least two Availability Zones: the database, the proxies, the runners, the pooler hosts and the interface endpoints go there. No host gets a public IP.',
        }),
      ),
    account: z
      .string({ error: 'a 12-digit AWS account id in quotes, such as "111122223333"' })
      .regex(ACCOUNT_ID_PATTERN, { error: 'a 12-digit AWS account id in quotes, such as "111122223333"' })
      .meta(
        doc({
          description:
            "The VPC's account: the stack is bound to it and to the lab's `region` (required then), as CDK lookups need.",
        }),
      ),
    egress: z
      .enum(NETWORK_EGRESS, {
        error: `${oneOf(NETWORK_EGRESS)} ("vpc-endpoints": no internet path, AWS APIs through VPC endpoints; "internet": the subnets already route to the internet through a NAT or transit gateway the network team runs)`,
      })
      .meta(
        doc({
          description: `\`vpc-endpoints\`: no internet path; the hosts reach AWS only through interface endpoints (${PRIVATE_ENDPOINT_SERVICES.map((e) => e.service).join(', ')}) and an S3 gateway endpoint, and install nothing from the internet. \`internet\`: the subnets route to the internet already (NAT or transit gateway); the lab adds no endpoint.`,
        }),
      ),
    endpoints: z
      .enum(NETWORK_ENDPOINTS, { error: oneOf(NETWORK_ENDPOINTS) })
      .optional()
      .meta(
        doc({
          description:
            "`vpc-endpoints` only. `create`: the stack adds the interface endpoints (billed per zone-hour, see `proxylab cost`) and an S3 gateway endpoint on the subnets' route tables. `existing`: the network team's endpoints serve the VPC (private DNS on, S3 gateway on those route tables); the lab opens HTTPS to `endpointCidrs`.",
          default: DEFAULTS.network.endpoints,
        }),
      ),
    endpointCidrs: z
      .array(
        z
          .string({ error: 'an IPv4 CIDR block such as "10.0.0.0/16"' })
          .regex(IPV4_CIDR_PATTERN, { error: 'an IPv4 CIDR block such as "10.0.0.0/16"' }),
        { error: 'a list of IPv4 CIDR blocks' },
      )
      .min(1, { error: 'a non-empty list of IPv4 CIDR blocks' })
      .max(LIMITS.endpointCidrsMax, { error: `a list of at most ${LIMITS.endpointCidrsMax} CIDR blocks` })
      .optional()
      .meta(
        doc({
          description:
            "`endpoints: existing` only: where the network team's interface endpoints are (the hosts get HTTPS egress to these blocks and nowhere else besides S3).",
          defaultText: "the VPC's CIDR block",
        }),
      ),
  },
  {
    error:
      '"create", or an object such as { "vpcId": "vpc-…", "subnetIds": ["subnet-…", "subnet-…"], "account": "111122223333", "egress": "vpc-endpoints" }',
  },
);

const networkSchema = z.union([z.literal('create', { error: '"create"' }), existingNetworkSchema], {
  error:
    '"create" (the lab\'s own VPC), or an existing VPC as an object such as { "vpcId": "vpc-…", "subnetIds": ["subnet-…", "subnet-…"], "account": "111122223333", "egress": "vpc-endpoints" }',
});

const resultsSchema = z.strictObject(
  {
    retainOnDestroy: bool.optional().meta(
      doc({
        description: '`true` keeps the results bucket (and its objects) when the lab is destroyed.',
        default: DEFAULTS.results.retainOnDestroy,
      }),
    ),
    expireAfterDays: integer(1, LIMITS.expireAfterDaysMax)
      .optional()
      .meta(
        doc({
          description: 'Result objects expire this many days after they are written.',
          default: DEFAULTS.results.expireAfterDays,
        }),
      ),
  },
  { error: 'an object such as { "retainOnDestroy": false, "expireAfterDays": 30 }' },
);

const budgetSchema = z.strictObject(
  {
    maxHourlyUsd: z
      .number({ error: `a number of US dollars per hour ≥ ${LIMITS.budgetMaxHourlyUsdMin}` })
      .min(LIMITS.budgetMaxHourlyUsdMin, {
        error: `a number of US dollars per hour ≥ ${LIMITS.budgetMaxHourlyUsdMin}`,
      })
      .meta(
        doc({
          description:
            '`deploy` refuses a lab estimated above this many US dollars per hour unless `--force`.',
        }),
      ),
  },
  { error: 'an object such as { "maxHourlyUsd": 1.5 }' },
);

const tagKey = z
  .string()
  .min(1, { error: 'a non-empty tag key' })
  .max(LIMITS.tagKeyMaxLength, { error: `a tag key of at most ${LIMITS.tagKeyMaxLength} characters` })
  .regex(TAG_TEXT_PATTERN, { error: `a tag key of ${TAG_CHARACTERS} (AWS's tag characters)` })
  .refine((k) => !startsWithAws(k), { error: 'a tag key not starting with "aws:" (reserved by AWS)' })
  .refine((k) => !k.toLowerCase().startsWith(RESERVED_TAG_PREFIX), {
    error: `a tag key not starting with "${RESERVED_TAG_PREFIX}" (proxylab sets proxylab:lab, proxylab:owner and proxylab:expires-at itself; the operator policy relies on them)`,
  });

const tagValue = z
  .string({ error: `a string of at most ${LIMITS.tagValueMaxLength} characters` })
  .max(LIMITS.tagValueMaxLength, { error: `a string of at most ${LIMITS.tagValueMaxLength} characters` })
  .regex(TAG_TEXT_PATTERN, { error: `a tag value of ${TAG_CHARACTERS} (AWS's tag characters)` })
  .refine((v) => !startsWithAws(v), { error: 'a tag value not starting with "aws:" (reserved by AWS)' });

const workloadPartSchema = z.strictObject(
  {
    builtin: z
      .enum(BUILTIN_SCRIPTS, { error: oneOf(BUILTIN_SCRIPTS) })
      .optional()
      .meta(
        doc({
          description: `A pgbench built-in script: ${quoted(BUILTIN_SCRIPTS)}. Give \`builtin\` or \`file\`.`,
        }),
      ),
    file: z
      .string({ error: 'a path such as "orders.sql", relative to the lab file' })
      .regex(SCRIPT_PATH_PATTERN, {
        error:
          'a path relative to the lab file\'s folder, ending in .sql, of letters, digits, . _ - and / (no "..", not absolute), such as "orders.sql" or "scripts/orders.sql"',
      })
      .optional()
      .meta(
        doc({
          description:
            "Your own pgbench script (SQL and pgbench meta-commands such as `\\set`), relative to the lab file's folder; read when the lab is validated (at most 64 KiB of UTF-8) and shipped to the runners in the run request.",
        }),
      ),
    weight: integer(1, LIMITS.scriptWeightMax)
      .optional()
      .meta(doc({ description: 'Relative weight in a mix (`-f file@W`, `-b name@W`).', default: 1 })),
  },
  { error: 'an object such as { "file": "orders.sql" } or { "builtin": "tpcb-like", "weight": 2 }' },
);

const CLIENTS_RELATIVE_TO = ['maxConnections', 'poolSize'] as const;
const clientsTimesText = `{ "times": T, "of": "maxConnections" | "poolSize" } with T > 0 and ≤ ${LIMITS.clientsTimesMax}`;
const clientSpecSchema = z.union(
  [
    integer(1, LIMITS.clientsMax),
    // An object given is checked field by field (validate.ts descends into the option whose type
    // matches), so each field names what it allows.
    z.strictObject(
      {
        times: z
          .number({ error: `a number > 0 and ≤ ${LIMITS.clientsTimesMax}` })
          .gt(0, { error: `a number > 0 and ≤ ${LIMITS.clientsTimesMax}` })
          .max(LIMITS.clientsTimesMax, { error: `a number > 0 and ≤ ${LIMITS.clientsTimesMax}` }),
        of: z.enum(CLIENTS_RELATIVE_TO, { error: oneOf(CLIENTS_RELATIVE_TO) }),
      },
      { error: clientsTimesText },
    ),
  ],
  { error: `a number of clients 1–${LIMITS.clientsMax}, or ${clientsTimesText}` },
);

const scenarioSchema = z.strictObject(
  {
    name: z
      .string({ error: 'a string' })
      .max(LIMITS.scenarioNameMaxLength, { error: `at most ${LIMITS.scenarioNameMaxLength} characters` })
      .regex(SCENARIO_NAME_PATTERN, {
        error:
          'lowercase letters, digits and single hyphens, starting with a letter (it begins every step id)',
      })
      .meta(
        doc({
          description:
            "Unique among the lab's scenarios; the first segment of every step id (`orders/direct/c50/simple/persistent/r1`).",
        }),
      ),
    description: z
      .string({ error: 'a string' })
      .max(LIMITS.descriptionMaxLength, { error: `at most ${LIMITS.descriptionMaxLength} characters` })
      .regex(NO_CONTROL_EXCEPT_LINES, {
        error: 'text without control characters (newlines and tabs are allowed)',
      })
      .optional()
      .meta(
        doc({ description: 'What the scenario asks, in words (the report shows it).', defaultText: 'none' }),
      ),
    workload: z
      .array(workloadPartSchema, { error: 'a list of scripts such as [{ "file": "orders.sql" }]' })
      .min(1, { error: 'a non-empty list of scripts such as [{ "file": "orders.sql" }]' })
      .max(LIMITS.workloadPartsMax, { error: `a list of at most ${LIMITS.workloadPartsMax} scripts` })
      .meta(
        doc({
          description:
            'The scripts pgbench runs: one, or a weighted mix. Each is `{ "builtin": "tpcb-like" }` (or `select-only`, `simple-update`) or `{ "file": "orders.sql" }`, with an optional `weight`.',
        }),
      ),
    scale: integer(1, LIMITS.scaleMax)
      .optional()
      .meta(
        doc({
          description:
            'pgbench -i scale of the data loaded before the scenario (your script may use the pgbench tables).',
          default: DEFAULTS.scenario.scale,
        }),
      ),
    clients: z
      .array(clientSpecSchema, { error: 'a list of client counts such as [50, 100, 200]' })
      .min(1, { error: 'a non-empty list of client counts such as [50, 100, 200]' })
      .max(LIMITS.clientCountsMax, { error: `a list of at most ${LIMITS.clientCountsMax} client counts` })
      .meta(
        doc({
          description:
            'Client counts: absolute, or relative to the database\'s max_connections or to the smallest pool among the targets (`{ "times": 0.5, "of": "poolSize" }`). Each count is one cell on every target.',
        }),
      ),
    durationSec: integer(1, LIMITS.durationSecMax)
      .optional()
      .meta(
        doc({
          description: 'pgbench -T per step. Not together with `transactionsPerClient`.',
          defaultText: `${DEFAULTS.scenario.durationSec} unless transactionsPerClient is given`,
        }),
      ),
    transactionsPerClient: integer(1, LIMITS.transactionsPerClientMax)
      .optional()
      .meta(doc({ description: 'pgbench -t per client instead of a duration.', defaultText: 'none' })),
    protocols: z
      .array(z.enum(PROTOCOLS, { error: oneOf(PROTOCOLS) }), {
        error: `a list of protocols (${quoted(PROTOCOLS)})`,
      })
      .min(1, { error: `a non-empty list of protocols (${quoted(PROTOCOLS)})` })
      .max(PROTOCOLS.length, { error: `at most the ${PROTOCOLS.length} protocols` })
      .refine((l) => new Set(l).size === l.length, {
        error: `a list of distinct protocols (${quoted(PROTOCOLS)})`,
      })
      .optional()
      .meta(
        doc({
          description: 'pgbench --protocol values; each is a cell.',
          default: [...DEFAULTS.scenario.protocols],
        }),
      ),
    connects: z
      .array(z.enum(CONNECT_MODES, { error: oneOf(CONNECT_MODES) }), {
        error: `a list of connect modes (${quoted(CONNECT_MODES)})`,
      })
      .min(1, { error: `a non-empty list of connect modes (${quoted(CONNECT_MODES)})` })
      .max(CONNECT_MODES.length, { error: `at most the ${CONNECT_MODES.length} connect modes` })
      .refine((l) => new Set(l).size === l.length, {
        error: `a list of distinct connect modes (${quoted(CONNECT_MODES)})`,
      })
      .optional()
      .meta(
        doc({
          description:
            '`persistent` (one connection per client) and/or `per-transaction` (pgbench -C); each is a cell.',
          default: [...DEFAULTS.scenario.connects],
        }),
      ),
    repetitions: integer(1, LIMITS.repetitionsMax)
      .optional()
      .meta(
        doc({
          description: 'Runs of every cell; the report gives the median and the spread.',
          default: DEFAULTS.scenario.repetitions,
        }),
      ),
    rateTps: numberIn(
      0.001,
      LIMITS.rateTpsMax,
      `a number of transactions per second > 0 and ≤ ${LIMITS.rateTpsMax}`,
    )
      .optional()
      .meta(
        doc({
          description:
            'pgbench -R: the total rate the step aims at (split across the runners); unthrottled when absent.',
          defaultText: 'none (unthrottled)',
        }),
      ),
    jobs: integer(1, LIMITS.jobsMax)
      .optional()
      .meta(
        doc({
          description: "pgbench -j threads (at most the step's clients; divided across the runners).",
          default: DEFAULTS.scenario.jobs,
        }),
      ),
    targets: z
      .array(z.enum(['all', ...TARGET_SELECTOR_NAMES], { error: oneOf(['all', ...TARGET_SELECTOR_NAMES]) }), {
        error: `a list of target selectors (${quoted(['all', ...TARGET_SELECTOR_NAMES])})`,
      })
      .min(1, {
        error: `a non-empty list of target selectors (${quoted(['all', ...TARGET_SELECTOR_NAMES])})`,
      })
      .refine((l) => new Set(l).size === l.length, { error: 'a list of distinct target selectors' })
      .optional()
      .meta(
        doc({
          description:
            "Which of the lab's targets run it, by what they are (as the catalog chooses them): `all`, or `direct`, `managed-pool` (every RDS Proxy), `self-hosted-transaction-pool`, `self-hosted-session-pool`. `proxylab plan` names every target left out and why.",
          default: [...DEFAULTS.scenario.targets],
        }),
      ),
  },
  {
    error:
      'a scenario object such as { "name": "orders", "workload": [{ "file": "orders.sql" }], "clients": [50, 100, 200] }',
  },
);

export const labFileSchema = z.strictObject({
  // Editors read this to find docs/lab.schema.json; validation accepts it and ignores it.
  $schema: z
    .string({ error: 'a string (the path or URL of the lab JSON Schema)' })
    .optional()
    .meta(
      doc({
        description: 'The JSON Schema for editors, e.g. "../docs/lab.schema.json"; ignored by proxylab.',
      }),
    ),
  name: z
    .string({ error: 'a string' })
    .min(1, { error: 'a non-empty string' })
    .max(LIMITS.labNameMaxLength, { error: `at most ${LIMITS.labNameMaxLength} characters` })
    .regex(LAB_NAME_PATTERN, {
      error: 'lowercase letters, digits and single hyphens, starting with a letter (it names the stack)',
    })
    .meta(
      doc({
        description:
          'Lowercase letters, digits and single hyphens, starting with a letter. The stack is `proxylab-<name>`.',
      }),
    ),
  description: z
    .string({ error: 'a string' })
    .max(LIMITS.descriptionMaxLength, { error: `at most ${LIMITS.descriptionMaxLength} characters` })
    .regex(NO_CONTROL_EXCEPT_LINES, {
      error: 'text without control characters (newlines and tabs are allowed)',
    })
    .optional()
    .meta(
      doc({
        description:
          'For shared labs: what the lab is for, which published setup it stands in for and what differs.',
        default: DEFAULTS.description,
      }),
    ),
  region: z
    .string({ error: 'an AWS region string such as "eu-west-1"' })
    .regex(REGION_PATTERN, { error: 'an AWS region such as "eu-west-1"' })
    .optional()
    .meta(
      doc({
        description:
          'Region hint such as `eu-west-1` (cost estimate, humans). The stack stays environment-agnostic; you deploy with your own credentials and region. Required with an existing VPC (`network`): the lookup binds the stack to this region.',
        defaultText: 'none',
      }),
    ),
  owner: z
    .string({ error: 'a string' })
    .min(1, { error: 'a non-empty string' })
    .max(LIMITS.ownerMaxLength, { error: `at most ${LIMITS.ownerMaxLength} characters (a tag value)` })
    // The tag characters exclude control characters too.
    .regex(TAG_TEXT_PATTERN, {
      error: `${TAG_CHARACTERS}, as in an e-mail address (it becomes a tag value)`,
    })
    .refine((v) => !startsWithAws(v), { error: 'text not starting with "aws:" (reserved by AWS)' })
    .optional()
    .meta(
      doc({
        description:
          'Who to ask about this lab, e.g. an e-mail address; becomes the `proxylab:owner` tag (AWS tag characters: letters, digits, spaces, `+ - = . _ : / @`).',
        defaultText: 'none',
      }),
    ),
  aurora: auroraSchema.optional().meta(
    doc({
      description: 'The Aurora PostgreSQL cluster (the default database). Not together with `postgres`.',
    }),
  ),
  postgres: postgresSchema.optional().meta(
    doc({
      description: 'An RDS for PostgreSQL instance instead of Aurora. Not together with `aurora`.',
      defaultText: 'none (Aurora)',
    }),
  ),
  proxies: z
    .array(proxySchema, { error: 'a list of proxies' })
    .max(LIMITS.proxiesMax, { error: `a list of at most ${LIMITS.proxiesMax} proxies` })
    .optional()
    .meta(
      doc({
        description: 'RDS Proxies in front of the database, each with its own pool settings.',
        default: [],
      }),
    ),
  poolers: z
    .array(poolerSchema, { error: 'a list of poolers' })
    .max(LIMITS.poolersMax, { error: `a list of at most ${LIMITS.poolersMax} poolers` })
    .optional()
    .meta(
      doc({
        description:
          'Self-hosted poolers (PgBouncer, PgDoorman) in front of the database: on a dedicated EC2 host or on every runner (docs/stacks.md).',
        default: [],
      }),
    ),
  crossZone: bool.optional().meta(
    doc({
      description:
        '`false`: the writer, the runners and the dedicated pooler hosts share one Availability Zone, so no target has a cross-zone hop the others lack. ' +
        "`true`: the writer goes to the VPC's other zone, to measure what a cross-zone hop costs (RDS Proxy spans both zones either way). " +
        "Each component's zone is recorded in the run (environment.zones).",
      default: DEFAULTS.crossZone,
    }),
  ),
  runners: runnersSchema.optional().meta(doc({ description: 'The pgbench runners (EC2).' })),
  network: networkSchema.optional().meta(
    doc({
      description:
        'Where the hosts live: `"create"` builds the lab\'s own VPC (public IPv4 per runner, no inbound rules); an object names an existing VPC and private subnets (docs/aws.md, "Regulated accounts").',
      default: DEFAULTS.network.mode,
    }),
  ),
  results: resultsSchema.optional().meta(doc({ description: 'The results bucket.' })),
  ttlHours: numberIn(
    LIMITS.ttlHoursMin,
    LIMITS.ttlHoursMax,
    `a number of hours ${LIMITS.ttlHoursMin}–${LIMITS.ttlHoursMax} (a deploy alone takes 15–30 minutes)`,
  )
    // null: an explicit opt-out (no expiry schedule); absent: the safe default (DEFAULTS.ttlHours).
    .nullable()
    .optional()
    .meta(
      doc({
        description:
          'The lab deletes itself this long after deploy (expiry schedule); at least 1 (a deploy takes 15–30 minutes). `null` opts out: no schedule, the lab runs until `proxylab destroy`.',
        default: DEFAULTS.ttlHours,
      }),
    ),
  // The count (≤ LIMITS.userTagsMax) is checked in validate.ts: a zod refinement would stay silent
  // while any single tag is invalid.
  tags: z
    .record(tagKey, tagValue, { error: 'an object of string tags' })
    .optional()
    .meta(
      doc({
        description: `Extra tags on every resource, at most ${LIMITS.userTagsMax} (AWS's 50 minus proxylab's three): keys 1–128 and values ≤ 256 characters of letters, digits, spaces and \`+ - = . _ : / @\`; keys starting with \`aws:\` or \`proxylab:\` are reserved.`,
        default: {},
      }),
    ),
  suites: z
    .array(
      z
        .string({ error: 'a suite name' })
        .regex(SUITE_NAME_PATTERN, { error: 'a suite name (lowercase letters, digits, hyphens)' }),
      { error: 'a list of suite names' },
    )
    .min(1, { error: 'a non-empty list of suite names' })
    .optional()
    .meta(
      doc({
        description:
          'Suites to run on this lab: from the catalog (lib/suite/catalog.ts; see docs/suite.md), or `lab` for its own `scenarios`. `validate` warns about a target or billed part none of them measures.',
        defaultText: '["lab"] when the lab has `scenarios`, else ["quick"]',
      }),
    ),
  scenarios: z
    .array(scenarioSchema, { error: 'a list of scenarios' })
    .min(1, { error: 'a non-empty list of scenarios (leave the key out for none)' })
    .max(LIMITS.scenariosMax, { error: `a list of at most ${LIMITS.scenariosMax} scenarios` })
    .optional()
    .meta(
      doc({
        description:
          'Your own scenarios: your workload, client counts, durations and targets, run as the suite `lab` (`proxylab plan|run --suite lab`, `proxylab local --lab FILE`). See docs/lab-file.md.',
        defaultText: 'none',
      }),
    ),
  budget: budgetSchema
    .optional()
    .meta(doc({ description: 'Spending guard for `proxylab deploy`.', defaultText: 'none' })),
});

export type LabFileInput = z.infer<typeof labFileSchema>;

export { AURORA_POSTGRES_INSTANCE_CLASSES };
