/**
 * The tolerant reader of a run directory, for the report and compare: a run that was killed
 * halfway, a step file that does not parse, or a missing metrics file still gives a report — each
 * file left out is a named warning (RunWarning) — because a partial answer is worth reading. Only a
 * missing or unreadable manifest.json or plan.json is an error: without them, the directory is not
 * a run (docs/report.md, "partially bad runs"), and so is a plan.json that names another run, suite,
 * mode or steps than manifest.json. A step file that is not a step of this run (its stepId is
 * another file's, its runId another run's, or its step is not in the plan: run-consistency.ts) is
 * left out like one that does not parse. The engine's reader is the strict one, RunStore
 * (run-store.ts): resume must not guess.
 *
 * Same paths (run-paths.ts) and schemas (schemas.ts) as the run store; every file is opened through
 * lib/core/read.ts (no links followed, no special files, sizes bounded).
 */
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RunFileError, UsageError } from '../core/errors';
import { FileReadError, listDirIn, readFileIn, type ReadKind } from '../core/read';
import type { RunPlan } from '../suite/plan';
import type { MetricsFile, RunManifest, StepRecord } from '../suite/types';
import { labRecordSchema, type LabRecord } from './lab-record';
import { checkPlanIdentity, checkStepFile, stepFileContext } from './run-consistency';
import { RUN_PATHS } from './run-paths';
import { manifestSchema, metricsFileSchema, parseRunFile, planSchema, stepRecordSchema } from './schemas';

/**
 * A file of the run left out: `file-unreadable` (a link, a special file, too large, not UTF-8 —
 * lib/core/read.ts refused it) or `file-invalid` (not JSON, or not what its schema allows).
 */
export interface RunWarning {
  readonly code: 'file-unreadable' | 'file-invalid';
  /** Relative to the run directory (`steps/x.json`), so no home path is printed. */
  readonly file: string;
  readonly reason: string;
}

/** `steps/x.json is a FIFO …; skipped` — the line the report prints for a warning. */
export function warningLine(w: RunWarning): string {
  return w.code === 'file-unreadable' ? `${w.file} ${w.reason}; skipped` : `${w.file}: ${w.reason}; skipped`;
}

export interface RunDirContents {
  /** The run directory, resolved. */
  readonly dir: string;
  readonly manifest: RunManifest;
  /** null for runs of older releases, written before plan.json existed. */
  readonly plan: RunPlan | null;
  /**
   * lab.json: the lab file the run was started with; null for a run without a lab, of an earlier
   * release, or whose lab.json could not be read (then named in `warnings`).
   */
  readonly lab: LabRecord | null;
  /** Every step record that could be read, in directory order. */
  readonly steps: readonly StepRecord[];
  /** Every metrics series file (`metrics/steps.json`, the step windows, is not one). */
  readonly metrics: ReadonlyArray<{ readonly name: string; readonly file: MetricsFile }>;
  readonly warnings: readonly RunWarning[];
}

function warningOf(rel: string, err: unknown): RunWarning {
  if (err instanceof FileReadError) return { code: 'file-unreadable', file: rel, reason: err.reason };
  if (err instanceof RunFileError) return { code: 'file-invalid', file: rel, reason: err.problem };
  return { code: 'file-invalid', file: rel, reason: err instanceof Error ? err.message : String(err) };
}

/**
 * Every `*.json` of a folder of the run, each read through readFileIn and checked against its
 * schema; what cannot be read is left out with a warning (links and special files by their type,
 * never by their content). A folder that is a link or a plain file is a FileReadError (exit 2).
 */
function readFolder<T>(
  runDir: string,
  folder: string,
  kind: ReadKind,
  keep: (name: string) => boolean,
  parse: (rel: string, text: string) => T,
  warnings: RunWarning[],
): Array<{ name: string; value: T }> {
  const out: Array<{ name: string; value: T }> = [];
  for (const entry of listDirIn(runDir, folder) ?? []) {
    if (!entry.name.endsWith('.json') || !keep(entry.name)) continue;
    const rel = `${folder}/${entry.name}`;
    try {
      const text = readFileIn(runDir, rel, kind);
      if (text !== null) out.push({ name: entry.name, value: parse(rel, text) });
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      warnings.push(warningOf(rel, err));
    }
  }
  return out;
}

/** Read a run directory tolerantly (see the top of this file). */
export function readRunDir(dir: string): RunDirContents {
  const runDir = resolve(dir);
  let isDir: boolean;
  try {
    isDir = statSync(runDir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) {
    throw new UsageError(`${dir}: not a directory (expected a run directory such as runs/<runId>)`);
  }
  const manifestText = readFileIn(runDir, RUN_PATHS.manifest, 'runFile');
  if (manifestText === null) {
    throw new UsageError(`${dir}: no manifest.json — not a run directory`);
  }
  const manifest = parseRunFile(manifestSchema, join(runDir, RUN_PATHS.manifest), manifestText);
  const warnings: RunWarning[] = [];

  // The plan says what the run is: a malformed plan.json, or one of another run than the manifest's,
  // is an error (naming the file and field); a missing one means a run of an older release.
  const planText = readFileIn(runDir, RUN_PATHS.plan, 'runFile');
  const planFile = join(runDir, RUN_PATHS.plan);
  const plan =
    planText === null
      ? null
      : checkPlanIdentity(parseRunFile(planSchema, planFile, planText), manifest, 'manifest.json', planFile);

  const lab = readLab(runDir, manifest, warnings);
  const context = stepFileContext(manifest, plan);
  const steps = readFolder(
    runDir,
    RUN_PATHS.stepsDir,
    'stepRecord',
    (name) => !name.startsWith('.'),
    (rel, text) => checkStepFile(rel, rel, parseRunFile(stepRecordSchema, rel, text), context),
    warnings,
  ).map((r) => r.value);

  // metrics/steps.json holds step windows, not series; the step records carry the same times.
  const metrics = readFolder(
    runDir,
    RUN_PATHS.metricsDir,
    'metrics',
    (name) => `${RUN_PATHS.metricsDir}/${name}` !== RUN_PATHS.stepWindows && !name.startsWith('.'),
    (rel, text) => parseRunFile(metricsFileSchema, rel, text),
    warnings,
  ).map((m) => ({ name: m.name.replace(/\.json$/, ''), file: m.value }));

  return { dir: runDir, manifest, plan, lab, steps, metrics, warnings };
}

/**
 * lab.json, checked against its schema and, for a local run, against the lab the manifest names
 * (`settings.lab`); one that fails is left out with a warning: the measurements do not depend on it.
 */
function readLab(runDir: string, manifest: RunManifest, warnings: RunWarning[]): LabRecord | null {
  const rel = RUN_PATHS.lab;
  try {
    const text = readFileIn(runDir, rel, 'runFile');
    if (text === null) return null;
    const lab = parseRunFile(labRecordSchema, rel, text);
    const named = manifest.settings.lab;
    if (typeof named === 'string' && named !== lab.name) {
      warnings.push({
        code: 'file-invalid',
        file: rel,
        reason: `it is the file of lab ${lab.name}, manifest.json says the run is of lab ${named}`,
      });
      return null;
    }
    return lab;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    warnings.push(warningOf(rel, err));
    return null;
  }
}
