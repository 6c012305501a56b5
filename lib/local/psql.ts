/**
 * Queries through the `psql` binary (no npm client): unaligned output with a unit-separator
 * field delimiter, several statements per call separated by `\echo` markers.
 */
import { runCommand } from './process';

const FIELD_SEP = '\u001f';
const RESULT_MARK = '@@proxylab-result@@';

export interface PsqlTarget {
  readonly psql: string;
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly dbname: string;
  readonly env?: Readonly<Record<string, string>>;
}

export type Row = Readonly<Record<string, string>>;

export class PsqlError extends Error {
  constructor(message: string, readonly stderr: string) {
    super(message);
    this.name = 'PsqlError';
  }
}

/** Parse one unaligned result (header line then rows) into records. */
export function parseUnaligned(text: string): Row[] {
  const lines = text.split('\n').filter((l) => l !== '');
  if (lines.length === 0) return [];
  const header = lines[0].split(FIELD_SEP);
  return lines.slice(1).map((line) => {
    const cells = line.split(FIELD_SEP);
    const row: Record<string, string> = {};
    header.forEach((h, i) => {
      row[h] = cells[i] ?? '';
    });
    return row;
  });
}

/** Run statements; returns one row set per statement. Throws PsqlError on failure. */
export async function psqlQuery(target: PsqlTarget, statements: readonly string[], timeoutMs = 15000): Promise<Row[][]> {
  const args = ['-X', '-q', '-A', '-F', FIELD_SEP, '-P', 'footer=off', '-v', 'ON_ERROR_STOP=1', '-h', target.host, '-p', String(target.port), '-U', target.user, '-d', target.dbname];
  statements.forEach((stmt, i) => {
    if (i > 0) args.push('-c', `\\echo ${RESULT_MARK}`);
    args.push('-c', stmt);
  });
  const res = await runCommand(target.psql, args, { env: target.env, timeoutMs });
  if (res.exitCode !== 0) {
    const msg = res.stderr.trim().split('\n').slice(-2).join(' ') || `psql exited with ${res.exitCode ?? res.signal}`;
    throw new PsqlError(`psql ${target.host}:${target.port}/${target.dbname}: ${msg}`, res.stderr);
  }
  return res.stdout.split(`${RESULT_MARK}\n`).map(parseUnaligned);
}

/** Run statements whose output does not matter (DDL, admin commands). */
export async function psqlExec(target: PsqlTarget, statements: readonly string[], timeoutMs = 15000): Promise<void> {
  await psqlQuery(target, statements, timeoutMs);
}
