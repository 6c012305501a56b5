/**
 * PgBouncer 1.25.2 for the tests that exercise both PgBouncer behaviours (Debian's 1.18 has no
 * max_prepared_statements). CI always has `../shared/tools/pgbouncer-1.25.2/` beside the project;
 * a clone without it fails those tests with this message instead of skipping them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './cli';

export const PGBOUNCER_1_25_ENV = 'PROXYLAB_PGBOUNCER_1_25';

/** Absolute path of the PgBouncer 1.25.2 binary; throws a message naming who needs it and where to get it. */
export function pgbouncer125(neededBy: string): string {
  const file =
    process.env[PGBOUNCER_1_25_ENV] ??
    path.resolve(REPO_ROOT, '..', 'shared', 'tools', 'pgbouncer-1.25.2', 'pgbouncer');
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return file;
  } catch {
    throw new Error(
      `PgBouncer 1.25.2 not found at ${file}. ${neededBy} needs it (prepared statements through a ` +
        `transaction pool with max_prepared_statements 0 and on). Get it from ../shared/tools/pgbouncer-1.25.2/ ` +
        `(see its README: built from the upstream tag pgbouncer_1_25_2), or point ${PGBOUNCER_1_25_ENV} at a 1.25.x binary.`,
    );
  }
}

/** Environment that puts that binary first on PATH (proxylab finds PgBouncer on PATH first). */
export function pathWithPgbouncer(bin: string): Record<string, string> {
  return { PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH ?? ''}` };
}
