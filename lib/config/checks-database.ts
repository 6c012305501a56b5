/** Rules between the database section's fields: engine version, instance class, capacity, storage. */
import {
  ACCEPTED_ENGINE_VERSIONS,
  RETIRED_ENGINE_VERSIONS,
  closestAcceptedVersion,
  findEngineVersion,
} from './engine-versions';
import { AURORA_POSTGRES_INSTANCE_CLASSES } from './instance-classes';
import {
  RDS_POSTGRES_EXTENDED_SUPPORT_MAJORS,
  RDS_POSTGRES_INSTANCE_CLASSES,
  RDS_POSTGRES_RETIRED_VERSIONS,
  RDS_POSTGRES_VERSIONS,
  RDS_STORAGE_LIMITS_GIB,
  closestRdsPostgresVersion,
  findRdsPostgresVersion,
} from './rds-postgres';
import { DEFAULTS } from './defaults';
import { LIMITS } from './schema';
import type { LabProblem } from './types';
import { formatValue, editDistance, suggestKey, asRecord } from './problems';

export function isIntIn(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

export function checkEngineVersion(version: unknown, out: LabProblem[]): void {
  if (typeof version !== 'string' || findEngineVersion(version)) return;
  const path = 'aurora.engineVersion';
  const byMajor = new Map<string, string[]>();
  for (const e of ACCEPTED_ENGINE_VERSIONS) {
    const major = e.version.split('.')[0] ?? '';
    byMajor.set(major, [...(byMajor.get(major) ?? []), e.version]);
  }
  const allowed = [...byMajor.values()].map((v) => v.join(', ')).join('; ');
  const closest = closestAcceptedVersion(version);
  const hint = closest ? ` (closest: ${closest})` : '';
  const message = RETIRED_ENGINE_VERSIONS.includes(version)
    ? `Aurora PostgreSQL ${version} is no longer creatable (AWS retired it); use a creatable version${hint}: ${allowed}; got ${formatValue(version)}`
    : `must be an Aurora PostgreSQL version aws-cdk-lib knows and AWS still creates${hint}: ${allowed}; got ${formatValue(version)}`;
  out.push({ path, value: version, message });
}

/** Membership in an engine's class list, with a close suggestion (`t4g.medium` → `db.t4g.medium`, `db.r6g.huge` → `db.r6g.large`). */
export function checkInstanceClass(
  cls: unknown,
  c: {
    path: string;
    engine: string;
    classes: readonly string[];
    examples: string;
    out: LabProblem[];
  },
): void {
  if (typeof cls !== 'string' || c.classes.includes(cls)) return;
  const normalized = cls.startsWith('db.') ? cls : `db.${cls}`;
  const hint = c.classes.includes(normalized)
    ? `; did you mean "${normalized}"?`
    : (() => {
        const s = suggestKey(cls, c.classes) ?? suggestSameFamily(normalized, c.classes);
        return s ? `; did you mean "${s}"?` : '';
      })();
  const families = [...new Set(c.classes.map((x) => x.split('.')[1]))].join(', ');
  c.out.push({
    path: c.path,
    value: cls,
    message: `must be a DB instance class ${c.engine} offers (families ${families}; e.g. ${c.examples}), got ${formatValue(cls)}${hint}`,
  });
}

/** For a known family with an unknown size (`db.r6g.huge`): the closest size of that family by spelling. */
export function suggestSameFamily(cls: string, classes: readonly string[]): string | undefined {
  const [, fam, size] = cls.split('.');
  if (!fam || !size) return undefined;
  const sameFamily = classes.filter((c) => c.split('.')[1] === fam);
  if (sameFamily.length === 0) return undefined;
  let best: { c: string; d: number } | undefined;
  for (const c of sameFamily) {
    const d = editDistance(size, c.split('.')[2] ?? '');
    if (!best || d < best.d) best = { c, d };
  }
  return best?.c;
}

export function checkCapacity(aurora: Record<string, unknown>, out: LabProblem[]): void {
  const cls = aurora.instanceClass;
  const serverless = asRecord(aurora.serverless);
  if (cls !== undefined && aurora.serverless !== undefined) {
    out.push({
      path: 'aurora.serverless',
      value: aurora.serverless,
      message:
        'must not be given together with aurora.instanceClass: choose a provisioned class OR serverless v2',
    });
  }
  checkInstanceClass(cls, {
    path: 'aurora.instanceClass',
    engine: 'Aurora PostgreSQL',
    classes: AURORA_POSTGRES_INSTANCE_CLASSES,
    examples: 'db.t4g.medium, db.r6g.4xlarge',
    out,
  });
  if (serverless) {
    const min = serverless.minCapacity;
    const max = serverless.maxCapacity;
    if (
      typeof min === 'number' &&
      typeof max === 'number' &&
      min >= 0 &&
      max <= LIMITS.serverlessAcuMax &&
      min > max
    ) {
      out.push({
        path: 'aurora.serverless.minCapacity',
        value: min,
        message: `must be ≤ aurora.serverless.maxCapacity (${max}), got ${formatValue(min)}`,
      });
    }
  }
}

export function checkRdsPostgresVersion(version: unknown, out: LabProblem[]): void {
  if (typeof version !== 'string' || findRdsPostgresVersion(version)) return;
  const path = 'postgres.engineVersion';
  const allowed = RDS_POSTGRES_VERSIONS.map((e) => e.version).join(', ');
  const closest = closestRdsPostgresVersion(version);
  const hint = closest ? ` (closest: ${closest})` : '';
  const major = Number(/^(\d+)/.exec(version)?.[1] ?? NaN);
  let message: string;
  if (RDS_POSTGRES_EXTENDED_SUPPORT_MAJORS.includes(major))
    message = `RDS for PostgreSQL ${major} is past RDS end of standard support: AWS creates it only on RDS Extended Support (billed per vCPU-hour on top, not in the price table) or not at all; use a version under standard support: ${allowed}; got ${formatValue(version)}`;
  else if (RDS_POSTGRES_RETIRED_VERSIONS.includes(version))
    message = `RDS for PostgreSQL ${version} is no longer creatable (AWS retired it); use a creatable version${hint}: ${allowed}; got ${formatValue(version)}`;
  else
    message = `must be an RDS for PostgreSQL version aws-cdk-lib knows and AWS still creates${hint}: ${allowed}; got ${formatValue(version)}`;
  out.push({ path, value: version, message });
}

export function checkPostgres(pg: Record<string, unknown>, out: LabProblem[]): void {
  checkRdsPostgresVersion(pg.engineVersion, out);
  checkInstanceClass(pg.instanceClass, {
    path: 'postgres.instanceClass',
    engine: 'RDS for PostgreSQL',
    classes: RDS_POSTGRES_INSTANCE_CLASSES,
    examples: 'db.t4g.micro, db.t4g.medium (the classes with a price)',
    out,
  });
  const size = pg.allocatedStorageGb;
  const type = typeof pg.storageType === 'string' ? pg.storageType : DEFAULTS.postgres.storageType;
  const limits = (RDS_STORAGE_LIMITS_GIB as Record<string, { min: number; max: number } | undefined>)[type];
  if (
    limits &&
    typeof size === 'number' &&
    Number.isInteger(size) &&
    (size < limits.min || size > limits.max)
  ) {
    out.push({
      path: 'postgres.allocatedStorageGb',
      value: size,
      message: `must be ${limits.min}–${limits.max} GiB for ${type} storage (RDS for PostgreSQL's limits), got ${formatValue(size)}`,
    });
  }
}
