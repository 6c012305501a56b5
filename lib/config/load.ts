/**
 * Reading lab files from disk. Missing files and invalid JSON are reported the same way as schema
 * problems (a LabProblem at path `(file)`), so `proxylab validate` and `cdk synth` print them alike.
 */
import { UsageError } from '../core/errors';
import { JsonInputError, JsonSyntaxError, parseJsonText, readTextFile } from '../core/read';
import type { LabConfig, LabProblem, LabValidation } from './types';
import { formatProblems, validateLab, type ValidateOptions } from './validate';

/**
 * Parses JSON text (a byte order mark accepted); on failure, a problem naming line and column
 * (`1.2.3` is "',' or '}' expected" at the second '.', not a number out of range).
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
    if (caught instanceof JsonSyntaxError) {
      return {
        ok: false,
        problem: {
          path: '(file)',
          value: undefined,
          message: `is not valid JSON: ${caught.detail} (line ${caught.line}, column ${caught.column})`,
        },
      };
    }
    throw caught;
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
