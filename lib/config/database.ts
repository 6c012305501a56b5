/**
 * The questions every consumer asks of a lab's database, answered once for both engines, so no
 * consumer assumes Aurora: what it is called, its class, how many instances it has, which lab-file
 * section configures it. Pure.
 */
import { databaseEngineName } from '../suite/database';
import type { DatabaseConfig } from './types';

// One wording for lab descriptions and reports (the report may not import config).
export { databaseEngineName };

/** The lab-file section that configures it: `aurora` or `postgres` (for messages such as "set aurora.maxConnections"). */
export function databaseSection(db: DatabaseConfig): 'aurora' | 'postgres' {
  return db.engine === 'postgres' ? 'postgres' : 'aurora';
}

/** The writer's DB instance class; null for Aurora Serverless v2 (no fixed class). */
export function databaseInstanceClass(db: DatabaseConfig): string | null {
  if (db.engine === 'postgres') return db.instanceClass;
  return db.capacity.kind === 'provisioned' ? db.capacity.instanceClass : null;
}

/**
 * DB instances a client can reach and the collector reads (DbInstanceIds): Aurora's writer and
 * readers; RDS for PostgreSQL's one instance (a Multi-AZ standby is not a separate DB instance:
 * it has no endpoint and publishes no metrics of its own).
 */
export function dbInstanceCount(db: DatabaseConfig): number {
  return db.engine === 'postgres' ? 1 : 1 + db.readers;
}

/** e.g. "Aurora PostgreSQL 17.9 on db.t4g.medium, 1 reader" or "RDS for PostgreSQL 17.9 on db.t4g.micro, Multi-AZ". */
export function describeDatabase(db: DatabaseConfig): string {
  const name = `${databaseEngineName(db.engine)} ${db.engineVersion}`;
  if (db.engine === 'postgres')
    return `${name} on ${db.instanceClass}, ${db.multiAz ? 'Multi-AZ' : 'single-AZ'}, ${db.allocatedStorageGb} GiB ${db.storageType}`;
  const cap =
    db.capacity.kind === 'provisioned'
      ? db.capacity.instanceClass
      : `serverless v2 ${db.capacity.minCapacityAcu}–${db.capacity.maxCapacityAcu} ACU`;
  return `${name} on ${cap}, ${db.readers} reader${db.readers === 1 ? '' : 's'}`;
}
