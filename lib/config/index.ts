/** Lab file format: schema, validation, defaults, loading. See docs/lab-file.md. */
export type {
  LabConfig,
  AuroraConfig,
  AuroraDatabaseConfig,
  DatabaseConfig,
  DatabaseEngine,
  PostgresDatabaseConfig,
  ProxyConfig,
  PoolerConfig,
  RunnersConfig,
  RunnerPlacement,
  ResultsConfig,
  LabProblem,
  LabValidation,
} from './types';
export type { ValidateOptions } from './validate';
export { validateLab, formatProblems, formatPath, formatValue, suggestKey, summarizeLab } from './validate';
export { loadLabFile, checkLabFile, parseLabJson } from './load';
export {
  ACCEPTED_ENGINE_VERSIONS,
  DEFAULT_ENGINE_VERSION,
  RETIRED_ENGINE_VERSIONS,
  findEngineVersion,
  closestAcceptedVersion,
} from './engine-versions';
export type { EngineVersionEntry, CdkEngineVersionKey } from './engine-versions';
export { AURORA_POSTGRES_INSTANCE_CLASSES, DEFAULT_INSTANCE_CLASS } from './instance-classes';
export { LIMITS } from './schema';
export {
  PGBOUNCER_RELEASES,
  DEFAULT_PGBOUNCER_VERSION,
  findPgbouncerRelease,
} from '../poolers/pgbouncer/releases';
export type { PgbouncerRelease } from '../poolers/pgbouncer/releases';
export { LAB_OUTPUT_KEYS, parseLabOutputs, stackNameFor } from './stack-outputs';
export type { LabOutputKey, LabOutputs } from './stack-outputs';
export {
  RDS_POSTGRES_VERSIONS,
  DEFAULT_RDS_POSTGRES_VERSION,
  RDS_POSTGRES_INSTANCE_CLASSES,
  DEFAULT_RDS_POSTGRES_INSTANCE_CLASS,
  findRdsPostgresVersion,
} from './rds-postgres';
export {
  databaseEngineName,
  databaseInstanceClass,
  databaseSection,
  dbInstanceCount,
  describeDatabase,
} from './database';
