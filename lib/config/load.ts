/**
 * Reading lab files from disk. Missing files and invalid JSON are reported the same way as schema
 * problems (a LabProblem at path `(file)`), so `proxylab validate` and `cdk synth` print them alike.
 */
import { readFileSync } from 'node:fs';
import { UsageError } from '../core/errors';
import type { LabConfig, LabProblem, LabValidation } from './types';
import { formatProblems, validateLab, type ValidateOptions } from './validate';

/** 1-based line and column of a character offset. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lines = before.split('\n');
  return { line: lines.length, column: (lines[lines.length - 1]?.length ?? 0) + 1 };
}

/** Parses JSON text; on failure, a problem naming line and column. */
export function parseLabJson(
  text: string,
): { ok: true; value: unknown } | { ok: false; problem: LabProblem } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
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
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code =
      err && typeof err === 'object' && 'code' in err ? String((err as { code: unknown }).code) : '';
    const reason =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EISDIR'
          ? 'is a directory, not a lab file'
          : `cannot be read (${err instanceof Error ? err.message : String(err)})`;
    return { ok: false, problems: [{ path: '(file)', value: path, message: `${reason}: ${path}` }] };
  }
  const parsed = parseLabJson(text);
  if (!parsed.ok) return { ok: false, problems: [parsed.problem] };
  return validateLab(parsed.value, opts);
}

/** Reads and validates a lab file; throws a UsageError (exit 2) listing every problem. */
export function loadLabFile(path: string): LabConfig {
  const result = checkLabFile(path);
  if (!result.ok) throw new UsageError(`invalid lab file ${formatProblems(result.problems, path)}`);
  return result.lab;
}
