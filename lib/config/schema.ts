/**
 * The lab file schema (zod 4). Strict objects everywhere: an unknown key is an error, so a typo
 * never silently falls back to a default.
 *
 * Each leaf's error text is the description of what is ALLOWED ("an integer 1–100"); validate.ts
 * turns it into "must be an integer 1–100, got 120". Rules that relate two fields (idle ≤ max,
 * unique proxy names, instanceClass vs serverless) live in validate.ts, because they need to run
 * even when other fields are broken.
 */
import { z } from 'zod';
import { ACCEPTED_ENGINE_VERSIONS } from './engine-versions';
import { AURORA_POSTGRES_INSTANCE_CLASSES } from './instance-classes';

/** Bounds shared by the schema, the cross-field checks and the docs. */
export const LIMITS = {
  labNameMaxLength: 24,
  proxyNameMaxLength: 32,
  readersMax: 15,
  maxConnectionsMin: 6,
  maxConnectionsMax: 262143,
  serverlessAcuMax: 256,
  proxiesMax: 20,
  borrowTimeoutSecondsMax: 300,
  runnerCountMax: 20,
  expireAfterDaysMax: 3650,
  ttlHoursMax: 720,
} as const;

/** Lab names become the stack name `proxylab-<name>` and prefix every proxy name. */
export const LAB_NAME_PATTERN = /^[a-z](?:[a-z0-9]|-(?=[a-z0-9]))*$/;
/** RDS identifier: a letter first, then letters, digits and single hyphens, no trailing hyphen. */
export const RDS_IDENTIFIER_PATTERN = /^[a-zA-Z](?:[a-zA-Z0-9]|-(?=[a-zA-Z0-9]))*$/;
/** EC2 instance type such as `c7g.large`, `m7i.2xlarge`, `c6gn.16xlarge`. */
export const EC2_INSTANCE_TYPE_PATTERN = /^[a-z][a-z0-9-]*\.[a-z0-9]+$/;
export const REGION_PATTERN = /^[a-z]{2}(?:-gov|-iso[a-z]*)?-[a-z]+-\d$/;
export const SUITE_NAME_PATTERN = /^[a-z0-9][a-z0-9-]*$/;

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
    minCapacity: acu(0, `a number of ACU 0–${LIMITS.serverlessAcuMax} in steps of 0.5`),
    maxCapacity: acu(1, `a number of ACU 1–${LIMITS.serverlessAcuMax} in steps of 0.5`),
  },
  { error: 'an object such as { "minCapacity": 0.5, "maxCapacity": 4 }' },
);

const auroraSchema = z.strictObject(
  {
    // Checked by validate.ts against ACCEPTED_ENGINE_VERSIONS (the message depends on the value).
    engineVersion: z.string({ error: `a version string, one of ${engineVersions.join(', ')}` }).optional(),
    // Same: validate.ts checks membership so it can suggest a close class.
    instanceClass: z.string({ error: 'an instance class string such as "db.t4g.medium"' }).optional(),
    serverless: serverlessSchema.optional(),
    readers: integer(0, LIMITS.readersMax).optional(),
    maxConnections: integer(LIMITS.maxConnectionsMin, LIMITS.maxConnectionsMax).optional(),
    performanceInsights: bool.optional(),
    logConnections: bool.optional(),
    snapshotOnDestroy: bool.optional(),
  },
  { error: 'an object such as { "instanceClass": "db.t4g.medium" } (docs/lab-file.md lists its keys)' },
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
      }),
    maxConnectionsPercent: integer(1, 100).optional(),
    maxIdleConnectionsPercent: integer(0, 100).optional(),
    borrowTimeoutSeconds: integer(0, LIMITS.borrowTimeoutSecondsMax).optional(),
    requireTls: bool.optional(),
    debugLogging: bool.optional(),
  },
  { error: 'a proxy object such as { "name": "pool100", "maxConnectionsPercent": 100 }' },
);

const runnersSchema = z.strictObject(
  {
    instanceType: z
      .string({ error: 'an EC2 instance type string such as "c7g.large"' })
      .regex(EC2_INSTANCE_TYPE_PATTERN, { error: 'an EC2 instance type such as "c7g.large"' })
      .optional(),
    count: integer(1, LIMITS.runnerCountMax).optional(),
    placement: z
      .enum(['any', 'cluster', 'spread'], { error: 'one of "any", "cluster", "spread"' })
      .optional(),
  },
  { error: 'an object such as { "instanceType": "c7g.large", "count": 1 }' },
);

const resultsSchema = z.strictObject(
  {
    retainOnDestroy: bool.optional(),
    expireAfterDays: integer(1, LIMITS.expireAfterDaysMax).optional(),
  },
  { error: 'an object such as { "retainOnDestroy": false, "expireAfterDays": 30 }' },
);

const budgetSchema = z.strictObject(
  {
    maxHourlyUsd: z
      .number({ error: 'a positive number of US dollars per hour' })
      .positive({ error: 'a positive number of US dollars per hour' }),
  },
  { error: 'an object such as { "maxHourlyUsd": 1.5 }' },
);

const tagKey = z
  .string()
  .min(1)
  .max(128, { error: 'a tag key of at most 128 characters' })
  .refine((k) => !k.toLowerCase().startsWith('aws:'), { error: 'a tag key not starting with "aws:"' });

export const labFileSchema = z.strictObject({
  name: z
    .string({ error: 'a string' })
    .min(1, { error: 'a non-empty string' })
    .max(LIMITS.labNameMaxLength, { error: `at most ${LIMITS.labNameMaxLength} characters` })
    .regex(LAB_NAME_PATTERN, {
      error: 'lowercase letters, digits and single hyphens, starting with a letter (it names the stack)',
    }),
  description: z.string({ error: 'a string' }).max(1024, { error: 'at most 1024 characters' }).optional(),
  region: z
    .string({ error: 'an AWS region string such as "eu-west-1"' })
    .regex(REGION_PATTERN, { error: 'an AWS region such as "eu-west-1"' })
    .optional(),
  owner: z
    .string({ error: 'a string' })
    .min(1, { error: 'a non-empty string' })
    .max(128, { error: 'at most 128 characters' })
    .optional(),
  aurora: auroraSchema.optional(),
  proxies: z
    .array(proxySchema, { error: 'a list of proxies' })
    .max(LIMITS.proxiesMax, { error: `a list of at most ${LIMITS.proxiesMax} proxies` })
    .optional(),
  runners: runnersSchema.optional(),
  results: resultsSchema.optional(),
  ttlHours: z
    .number({ error: `a number of hours > 0 and ≤ ${LIMITS.ttlHoursMax}` })
    .positive({ error: `a number of hours > 0 and ≤ ${LIMITS.ttlHoursMax}` })
    .max(LIMITS.ttlHoursMax, { error: `a number of hours > 0 and ≤ ${LIMITS.ttlHoursMax}` })
    // null: an explicit opt-out (no expiry schedule); absent: the safe default of 8 hours.
    .nullable()
    .optional(),
  tags: z
    .record(
      tagKey,
      z
        .string({ error: 'a string of at most 256 characters' })
        .max(256, { error: 'a string of at most 256 characters' }),
      {
        error: 'an object of string tags',
      },
    )
    .optional(),
  suites: z
    .array(
      z
        .string({ error: 'a suite name' })
        .regex(SUITE_NAME_PATTERN, { error: 'a suite name (lowercase letters, digits, hyphens)' }),
      { error: 'a list of suite names' },
    )
    .min(1, { error: 'a non-empty list of suite names' })
    .optional(),
  budget: budgetSchema.optional(),
});

export type LabFileInput = z.infer<typeof labFileSchema>;

export { AURORA_POSTGRES_INSTANCE_CLASSES };
