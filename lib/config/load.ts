/**
 * Reading lab files from disk. Missing files and invalid JSON are reported the same way as schema
 * problems (a LabProblem at path `(file)`), so `proxylab validate` and `cdk synth` print them alike.
 */
import { UsageError } from '../core/errors';
import { JsonInputError, parseJsonText, readTextFile } from '../core/read';
import type { LabConfig, LabProblem, LabValidation } from './types';
import { formatProblems, validateLab, type ValidateOptions } from './validate';

/** 1-based line and column of a character offset. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lines = before.split('\n');
  return { line: lines.length, column: (lines[lines.length - 1]?.length ?? 0) + 1 };
}

/**
 * Parses JSON text (a byte order mark accepted); on failure, a problem naming line and column.
 * Refused as well, each at its JSON path: duplicate keys (JSON.parse would keep the last one
 * silently), nesting deeper than a lab file can be (a hostile file would overflow the parser's
 * stack), and numbers beyond a double's range (`1e400` would become Infinity, then "null").
 */
export function parseLabJson(
  text: string,
  source = 'lab file',
): { ok: true; value: unknown } | { ok: false; problem: LabProblem } {
  try {
    return { ok: true, value: parseJsonText(text, { source, rejectDuplicateKeys: true }) };
  } catch (caught) {
    if (caught instanceof JsonInputError) {
      return {
        ok: false,
        problem: {
          path: caught.jsonPath === '(top level)' ? '(root)' : caught.jsonPath,
          value: caught.offending,
          message: caught.detail,
        },
      };
    }
    if (!(caught instanceof UsageError) || caught.code !== 'invalid-json') throw caught;
    const err = caught.cause instanceof Error ? caught.cause : caught;
    text = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    const msg = err.message;
    const pos = /at position (\d+)/.exec(msg);
    const hasLine = /line \d+ column \d+/.test(msg);
    let where = '';
    if (pos && !hasLine) {
      const { line, column } = lineColumn(text, Number(pos[1]));
      where = ` (line ${line}, column ${column})`;
    } else if (!pos && /end of JSON input/.test(msg)) {
      const { line, column } = lineColumn(text, text.length);
      where = ` (line ${line}, column ${column})`;
    }
    return {
      ok: false,
      problem: { path: '(file)', value: undefined, message: `is not valid JSON: ${msg}${where}` },
    };
  }
}

/** Reads and validates a lab file; never throws for user mistakes (missing file, bad JSON, bad values). */
export function checkLabFile(path: string, opts: ValidateOptions = {}): LabValidation {
  let text: string;
  try {
    // Regular files only, at most READ_LIMITS.lab: /dev/zero or a FIFO is refused at once.
    text = readTextFile(path, 'lab');
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    const reason =
      err.code === 'file-missing'
        ? `does not exist: ${path}`
        : err.code === 'not-a-file' && err.message.includes('is a directory')
          ? `is a directory, not a lab file: ${path}`
          : err.message;
    return { ok: false, problems: [{ path: '(file)', value: path, message: reason }] };
  }
  const parsed = parseLabJson(text, path);
  if (!parsed.ok) return { ok: false, problems: [parsed.problem] };
  return validateLab(parsed.value, opts);
}

/** Reads and validates a lab file; throws a UsageError (exit 2) listing every problem. */
export function loadLabFile(path: string): LabConfig {
  const result = checkLabFile(path);
  if (!result.ok) throw new UsageError(`invalid lab file ${formatProblems(result.problems, path)}`);
  return result.lab;
}
