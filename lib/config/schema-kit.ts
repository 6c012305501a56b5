/**
 * What every part of the lab file schema shares (zod 4): the words of an allowed value (`oneOf`),
 * a field's documentation (`doc`, FieldDoc), the bounds (LIMITS), the name and text patterns, and the
 * leaf builders (integer, numberIn, bool). The parts: ./schema-database.ts, ./schema-poolers.ts,
 * ./schema-scenarios.ts, and the file itself in ./schema.ts.
 */
import { z } from 'zod';
import { ACCEPTED_ENGINE_VERSIONS } from './engine-versions';
import { POOLER_PROCESSES_MAX, POOLER_WORKER_THREADS_MAX } from '../poolers/endpoint';

/** `"a", "b"`. */
export function quoted(values: readonly string[]): string {
  return values.map((v) => `"${v}"`).join(', ');
}

/** `"a"` for one allowed value, `one of "a", "b"` for more. */
export function oneOf(values: readonly string[]): string {
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

export const doc = (d: FieldDoc): FieldDoc & Record<string, unknown> => ({ ...d });

/** The `settings` field's documentation, for a proxy or a pooler. */
export function SETTINGS_DOC(product: string, cli: string, example: string): FieldDoc {
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
export const LAB_NAME_PATTERN = /^[a-z](?:[a-z0-9]|-(?=[a-z0-9]))*$/;
/** Pooler names: lowercase letters, digits, single hyphens (target names, file names, construct ids). */
export const POOLER_NAME_PATTERN = /^[a-z](?:[a-z0-9]|-(?=[a-z0-9]))*$/;
/** RDS identifier: a letter first, then letters, digits and single hyphens, no trailing hyphen. */
export const RDS_IDENTIFIER_PATTERN = /^[a-zA-Z](?:[a-zA-Z0-9]|-(?=[a-zA-Z0-9]))*$/;
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
export const TAG_CHARACTERS = 'letters, digits, spaces and + - = . _ : / @';
/** Tag keys proxylab sets itself: a lab must not override them (the operator policy conditions on proxylab:lab). */
export const RESERVED_TAG_PREFIX = 'proxylab:';

/** Free text (description): newlines and tabs allowed, other control characters not. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const NO_CONTROL_EXCEPT_LINES = /^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$/;

export const startsWithAws = (s: string): boolean => s.toLowerCase().startsWith('aws:');

export function integer(min: number, max: number, what = `an integer ${min}–${max}`) {
  return z.number({ error: what }).int({ error: what }).min(min, { error: what }).max(max, { error: what });
}

export function numberIn(min: number, max: number, what: string) {
  return z.number({ error: what }).min(min, { error: what }).max(max, { error: what });
}

export const bool = z.boolean({ error: 'true or false' });

export const engineVersions = ACCEPTED_ENGINE_VERSIONS.map((e) => e.version);
