/**
 * How results name the database a run ran against (run environment `database`): one wording for
 * the lab description (lib/config/database.ts), the HTML report and the Markdown summary. Pure.
 */
import type { RunDatabase } from './types';

/** "Aurora PostgreSQL", "RDS for PostgreSQL" or "local PostgreSQL". */
export function databaseEngineName(engine: RunDatabase['engine']): string {
  switch (engine) {
    case 'aurora-postgresql':
      return 'Aurora PostgreSQL';
    case 'postgres':
      return 'RDS for PostgreSQL';
    case 'local':
      return 'local PostgreSQL';
  }
}

/**
 * "RDS for PostgreSQL db.t4g.micro", "Aurora PostgreSQL db.r6g.large", "Aurora PostgreSQL
 * Serverless v2", "local PostgreSQL"; null when the run does not say (recorded before runs named
 * their database, or the request did not carry it): the caller prints "unknown", never a guess.
 */
export function describeRunDatabase(db: RunDatabase | null | undefined): string | null {
  if (db === null || db === undefined) return null;
  const name = databaseEngineName(db.engine);
  if (db.instanceClass === null) return name;
  // Stack output DbInstanceClass says `serverless` for Aurora Serverless v2 (lib/lab-stack.ts).
  if (db.instanceClass === 'serverless' || db.instanceClass === 'db.serverless')
    return `${name} Serverless v2`;
  return `${name} ${db.instanceClass}`;
}
