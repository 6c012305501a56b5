/**
 * The text protocol proxylab speaks with the `psql` binary (pure; the adapters run psql): unaligned
 * output with a unit-separator field delimiter, several statements per call with an `\echo` marker
 * between their results. Shared by the local stand-in (lib/exec/psql.ts) and the cloud runner's
 * PgBouncer admin queries (lib/runner/pooler-targets.ts).
 */
export const PSQL_FIELD_SEP = '\u001f';
export const PSQL_RESULT_MARK = '@@proxylab-result@@';

export type PsqlRow = Readonly<Record<string, string>>;

/** Output flags: no psqlrc, quiet, unaligned with PSQL_FIELD_SEP, no row-count footer. */
export const PSQL_OUTPUT_ARGS: readonly string[] = [
  '-X',
  '-q',
  '-A',
  '-F',
  PSQL_FIELD_SEP,
  '-P',
  'footer=off',
];

/** psql arguments running `statements` in one call (stop at the first error), results split by the marker. */
export function psqlStatementArgs(statements: readonly string[]): string[] {
  const args = [...PSQL_OUTPUT_ARGS, '-v', 'ON_ERROR_STOP=1'];
  statements.forEach((stmt, i) => {
    if (i > 0) args.push('-c', `\\echo ${PSQL_RESULT_MARK}`);
    args.push('-c', stmt);
  });
  return args;
}

/** Parse one unaligned result (header line then rows) into records. */
export function parseUnaligned(text: string): PsqlRow[] {
  const [headerLine, ...rowLines] = text.split('\n').filter((l) => l !== '');
  if (headerLine === undefined) return [];
  const header = headerLine.split(PSQL_FIELD_SEP);
  return rowLines.map((line) => {
    const cells = line.split(PSQL_FIELD_SEP);
    const row: Record<string, string> = {};
    header.forEach((h, i) => {
      row[h] = cells[i] ?? '';
    });
    return row;
  });
}

/** psql's stdout for psqlStatementArgs(statements) → one row set per statement. */
export function parsePsqlResults(stdout: string): PsqlRow[][] {
  return stdout.split(`${PSQL_RESULT_MARK}\n`).map(parseUnaligned);
}

/** A numeric cell of a row; null when absent, empty or not a number (unknown, never 0). */
export function numericCell(v: string | undefined): number | null {
  if (v === undefined || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}
