/**
 * A lab file read once and validated, with the record of its text a run keeps (lab.json,
 * lib/results/lab-record.ts): the text recorded is the very text validated, never a second read of
 * the file. For `proxylab local --lab` and `proxylab run`, which store it with the run.
 */
import * as path from 'node:path';
import { UsageError } from '../core/errors';
import { readTextFile } from '../core/read';
import { labRecordOf, type LabRecord } from '../results/lab-record';
import { loadLabFile, parseLabJson, scriptReaderIn } from './load';
import type { LabConfig } from './types';
import { formatProblems, validateLab } from './validate';

export interface LabSource {
  readonly lab: LabConfig;
  /** What the run stores as lab.json. */
  readonly record: LabRecord;
}

/**
 * loadLabFile, keeping the text: reads `file` (regular files only, at most READ_LIMITS.lab bytes,
 * UTF-8), validates it and its script files, and throws a UsageError (exit 2) listing every problem,
 * in loadLabFile's words. `source` is the path as the user gave it (recorded; default `file`).
 */
export function loadLabSource(file: string, source: string = file): LabSource {
  let text: string;
  try {
    text = readTextFile(file, 'lab');
  } catch (err) {
    // A missing file, a directory, a FIFO, too large, not UTF-8: said as every command says it.
    if (err instanceof UsageError) loadLabFile(file);
    throw err;
  }
  const parsed = parseLabJson(text, file);
  const checked = parsed.ok
    ? validateLab(parsed.value, { readScript: scriptReaderIn(path.dirname(file)) })
    : ({ ok: false, problems: [parsed.problem] } as const);
  if (!checked.ok) throw new UsageError(`invalid lab file ${formatProblems(checked.problems, file)}`);
  return { lab: checked.lab, record: labRecordOf({ text, source, name: checked.lab.name }) };
}
