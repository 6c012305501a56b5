/**
 * RDS for PostgreSQL (engine `postgres`): the engine versions, instance classes and storage a lab's
 * `postgres` section may ask for. A separate list from Aurora's (engine-versions.ts,
 * instance-classes.ts): the two engines have different version calendars, classes and limits.
 *
 * Pure data, no aws-cdk-lib at run time (a type-only import names the CDK constants), so
 * `proxylab validate` does not load the CDK.
 */
import type { PostgresEngineVersion } from 'aws-cdk-lib/aws-rds';
import { closestVersionIn } from './engine-versions';

/** Name of a `VER_…` static on `PostgresEngineVersion` (type-checked against aws-cdk-lib). */
export type CdkPostgresVersionKey = Extract<keyof typeof PostgresEngineVersion, `VER_${string}`>;

export interface RdsPostgresVersionEntry {
  /** The version string a lab file uses, e.g. `"17.9"`. */
  readonly version: string;
  readonly cdkKey: CdkPostgresVersionKey;
}

/**
 * RDS for PostgreSQL versions a lab may ask for. Each entry holds all of:
 *  - aws-cdk-lib 2.276 has a `PostgresEngineVersion.VER_x_y` constant for it;
 *  - cfn-lint 1.51 knows it for Engine `postgres` (E3691) and does not flag it deprecated (W3691);
 *    test/cdk/engine-versions.test.ts synthesizes an instance per entry and runs cfn-lint;
 *  - AWS still creates it under standard support. AWS stopped creating 14.14–14.17, 15.9–15.12,
 *    16.5–16.8 and 17.1–17.4 on 1 May 2026 (moving them to 14.20, 15.15, 16.11, 17.7 or higher;
 *    the RDS health notice quoted at
 *    https://lucaberton.com/blog/aws-rds-postgresql-minor-version-deprecation-may-2026/), which cfn-lint
 *    1.51 does not know yet: the list starts at those targets.
 * Left out: 12.x and 13.x — past RDS end of standard support (12: 28 Feb 2025, 13: 28 Feb 2026; release
 * calendar https://docs.aws.amazon.com/AmazonRDS/latest/PostgreSQLReleaseNotes/postgresql-release-calendar.html).
 * AWS still creates them but enrols them in RDS Extended Support, billed per vCPU-hour on top of the
 * instance (https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/extended-support-overview.html),
 * which the price table does not carry. 11.x is retired (cfn-lint W3691 on 11.22).
 */
export const RDS_POSTGRES_VERSIONS: readonly RdsPostgresVersionEntry[] = [
  { version: '14.20', cdkKey: 'VER_14_20' },
  { version: '14.21', cdkKey: 'VER_14_21' },
  { version: '14.22', cdkKey: 'VER_14_22' },
  { version: '15.15', cdkKey: 'VER_15_15' },
  { version: '15.16', cdkKey: 'VER_15_16' },
  { version: '15.17', cdkKey: 'VER_15_17' },
  { version: '16.11', cdkKey: 'VER_16_11' },
  { version: '16.12', cdkKey: 'VER_16_12' },
  { version: '16.13', cdkKey: 'VER_16_13' },
  { version: '17.7', cdkKey: 'VER_17_7' },
  { version: '17.8', cdkKey: 'VER_17_8' },
  { version: '17.9', cdkKey: 'VER_17_9' },
  { version: '18.1', cdkKey: 'VER_18_1' },
  { version: '18.2', cdkKey: 'VER_18_2' },
  { version: '18.3', cdkKey: 'VER_18_3' },
];

/** Used when a `postgres` section gives no `engineVersion`. */
export const DEFAULT_RDS_POSTGRES_VERSION = '17.9';

/** Majors AWS creates only on RDS Extended Support (extra charge): refused with that reason. */
export const RDS_POSTGRES_EXTENDED_SUPPORT_MAJORS: readonly number[] = [11, 12, 13];

/**
 * Minor versions AWS no longer creates: cfn-lint 1.51 W3691 for majors 14–17 plus the May 2026
 * deprecation above. Kept so the error says "no longer creatable" rather than "unknown".
 */
export const RDS_POSTGRES_RETIRED_VERSIONS: readonly string[] = [
  ...['14.1', '14.2', '14.3', '14.4', '14.5', '14.6', '14.7', '14.8', '14.9', '14.10', '14.11', '14.12'],
  ...['14.13', '14.14', '14.15', '14.16', '14.17', '14.18', '14.19'],
  ...['15.2', '15.3', '15.4', '15.5', '15.6', '15.7', '15.8', '15.9', '15.10', '15.11', '15.12'],
  ...['15.13', '15.14'],
  ...['16.1', '16.2', '16.3', '16.4', '16.5', '16.6', '16.7', '16.8', '16.9', '16.10'],
  ...['17.1', '17.2', '17.3', '17.4', '17.5', '17.6'],
];

export function findRdsPostgresVersion(version: string): RdsPostgresVersionEntry | undefined {
  return RDS_POSTGRES_VERSIONS.find((e) => e.version === version);
}

/** The accepted version of the same major closest at or above `version` (for error hints). */
export function closestRdsPostgresVersion(version: string): string | undefined {
  return closestVersionIn(RDS_POSTGRES_VERSIONS, version);
}

function family(name: string, sizes: readonly string[]): string[] {
  return sizes.map((s) => `db.${name}.${s}`);
}

const SIZES_6 = ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge'];
const SIZES_6_32 = [...SIZES_6, '24xlarge', '32xlarge'];
const SIZES_7_48 = [...SIZES_6, '24xlarge', '48xlarge'];
const SIZES_5 = ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge', '24xlarge'];
const SIZES_T = ['micro', 'small', 'medium', 'large', 'xlarge', '2xlarge'];

/**
 * DB instance classes RDS for PostgreSQL 14.20–18.3 offers: cfn-lint 1.51's E3062 data for Engine
 * `postgres` (from the AWS pricing API, us-east-1), identical for every version in
 * RDS_POSTGRES_VERSIONS (its stray `db.serverless` entry dropped: RDS for PostgreSQL has no
 * serverless class). Burstable micro/small classes are here (Aurora has none); db.t2 is not (retired).
 * A class missing in the deploy region fails at deploy time, not here.
 */
export const RDS_POSTGRES_INSTANCE_CLASSES: readonly string[] = [
  ...family('t3', SIZES_T),
  ...family('t4g', SIZES_T),
  ...family('c6gd', ['medium', ...SIZES_6]),
  ...family('m5', SIZES_5),
  ...family('m5d', SIZES_5),
  ...family('m6g', SIZES_6),
  ...family('m6gd', SIZES_6),
  ...family('m6i', SIZES_6_32),
  ...family('m6id', SIZES_6_32),
  ...family('m6idn', SIZES_6_32),
  ...family('m6in', SIZES_6_32),
  ...family('m7g', SIZES_6),
  ...family('m7i', SIZES_7_48),
  ...family('m8g', SIZES_7_48),
  ...family('m8gd', SIZES_7_48),
  ...family('r5', SIZES_5),
  ...family('r5b', SIZES_5),
  ...family('r5d', SIZES_5),
  ...family('r6g', SIZES_6),
  ...family('r6gd', SIZES_6),
  ...family('r6i', SIZES_6_32),
  ...family('r6id', SIZES_6_32),
  ...family('r6idn', SIZES_6_32),
  ...family('r6in', SIZES_6_32),
  ...family('r7g', SIZES_6),
  ...family('r7i', SIZES_7_48),
  ...family('r8g', SIZES_7_48),
  ...family('r8gd', SIZES_7_48),
  ...family('x2g', SIZES_6),
  ...family('x2iedn', ['xlarge', '2xlarge', '4xlarge', '8xlarge', '16xlarge', '24xlarge', '32xlarge']),
];

export const DEFAULT_RDS_POSTGRES_INSTANCE_CLASS = 'db.t4g.micro';

/** Storage types the lab file offers. */
export type RdsStorageType = 'gp3';

/**
 * Allocated storage limits (GiB) for RDS for PostgreSQL by storage type, from CreateDBInstance
 * `AllocatedStorage` (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBInstance.html):
 * gp2/gp3 20–65536, io1/io2 100–65536. The lab file offers gp3 only: io1/io2 need provisioned IOPS,
 * which it does not carry, and gp2 is the previous generation (gp3 gives 3000 IOPS from the smallest size).
 */
export const RDS_STORAGE_LIMITS_GIB = {
  gp2: { min: 20, max: 65536 },
  gp3: { min: 20, max: 65536 },
  io1: { min: 100, max: 65536 },
  io2: { min: 100, max: 65536 },
} as const;
