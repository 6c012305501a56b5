/** The lab file's database sections (zod 4): `aurora` (with serverless v2 capacity) and `postgres`. */
import { z } from 'zod';
import { DEFAULTS } from './defaults';
import { RDS_POSTGRES_VERSIONS, RDS_STORAGE_LIMITS_GIB } from './rds-postgres';
import { AURORA_STORAGE_TYPES } from './types';
import { LIMITS, bool, doc, engineVersions, integer, numberIn } from './schema-kit';

/** Serverless v2 capacity in ACU: multiples of 0.5. */
export const acu = (min: number, what: string) =>
  numberIn(min, LIMITS.serverlessAcuMax, what).multipleOf(0.5, { error: what });

export const serverlessSchema = z.strictObject(
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
export function databaseSettingsFields(o: {
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

export const auroraSchema = z.strictObject(
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

export const rdsPostgresVersions = RDS_POSTGRES_VERSIONS.map((e) => e.version);

export const postgresSchema = z.strictObject(
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
