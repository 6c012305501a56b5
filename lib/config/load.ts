/**
 * Reading lab files from disk. Missing files and invalid JSON are reported the same way as schema
 * problems (a LabProblem at path `(file)`), so `proxylab validate` and `cdk synth` print them alike.
 */
import * as path from 'node:path';
import { UsageError } from '../core/errors';
import {
  FileReadError,
  JsonInputError,
  JsonSyntaxError,
  parseJsonText,
  readFileIn,
  readTextFile,
} from '../core/read';
import type { ScriptReader } from './scenarios';
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

/**
 * Reads the script files a lab names, relative to its folder `dir`, through lib/core/read.ts: no
 * symbolic link below the folder followed, regular files only, at most READ_LIMITS.script bytes,
 * UTF-8 checked. (The path itself was checked against SCRIPT_PATH_PATTERN: it cannot leave `dir`.)
 * A link is refused in the lab's words, naming the script file and the link (lib/core/read.ts says
 * "a run directory", whose reader it mostly is).
 */
export function scriptReaderIn(dir: string): ScriptReader {
  return (rel) => {
    const file = path.join(dir, rel);
    try {
      const text = readFileIn(dir, rel, 'script');
      return text === null ? { problem: `no such file: ${file}` } : { text };
    } catch (err) {
      if (err instanceof FileReadError && err.code === 'symlink-refused')
        return { problem: linkedScriptProblem(file, err.file, dir) };
      if (err instanceof UsageError) return { problem: err.message };
      throw err;
    }
  };
}

/** A lab's script file that is, or lies below, a symbolic link: what it is and what to do. */
function linkedScriptProblem(file: string, link: string, dir: string): string {
  const where = link === file ? 'is a symbolic link' : `is below ${link}, which is a symbolic link`;
  return (
    `the lab's script file ${file} ${where}; script files are read from the lab file's folder ` +
    `(${dir}) without following links, so a lab cannot read files outside it: copy the script there`
  );
}

/**
 * Reads and validates a lab file; never throws for user mistakes (missing file, bad JSON, bad
 * values, a script file it names that cannot be read).
 */
export function checkLabFile(file: string, opts: ValidateOptions = {}): LabValidation {
  let text: string;
  try {
    // Regular files only, at most READ_LIMITS.lab: /dev/zero or a FIFO is refused at once.
    text = readTextFile(file, 'lab');
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    const reason =
      err.code === 'file-missing'
        ? `does not exist: ${file}`
        : err.code === 'not-a-file' && err.message.includes('is a directory')
          ? `is a directory, not a lab file: ${file}`
          : err.message;
    return { ok: false, problems: [{ path: '(file)', value: file, message: reason }] };
  }
  const parsed = parseLabJson(text, file);
  if (!parsed.ok) return { ok: false, problems: [parsed.problem] };
  return validateLab(parsed.value, { readScript: scriptReaderIn(path.dirname(file)), ...opts });
}

/** Reads and validates a lab file; throws a UsageError (exit 2) listing every problem. */
export function loadLabFile(path: string): LabConfig {
  const result = checkLabFile(path);
  if (!result.ok) throw new UsageError(`invalid lab file ${formatProblems(result.problems, path)}`);
  return result.lab;
}
