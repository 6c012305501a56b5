/**
 * Reading a run directory (layout: lib/suite/types.ts). Tolerant by design: a run that was killed
 * halfway, a step file that does not parse, or a missing metrics file still gives a report — with
 * each problem listed and the report marked partial — because a partial answer is worth reading.
 * Only a missing or unreadable manifest.json or plan.json is an error: without them, the directory
 * is not a run. Every file is opened through lib/core/read.ts (no links followed, no special files,
 * sizes bounded).
 */
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RunFileError, UsageError } from '../core/errors';
import { FileReadError, listDirIn, readFileIn, type ReadKind } from '../core/read';
import type { RunPlan } from '../suite/plan';
import { RUN_PATHS } from '../results/run-paths';
import { fallbackDescriptor, type TargetDescriptor } from '../suite/targets';
import type { MetricsFile, RunManifest, StepRecord } from '../suite/types';
import { manifestSchema, metricsFileSchema, parseRunFile, planSchema, stepRecordSchema } from './schema';

export interface LoadedMetrics {
  /** File name without `.json`: `local`, `cloudwatch`, `pi`. */
  readonly name: string;
  readonly file: MetricsFile;
}

export interface LoadedRun {
  readonly dir: string;
  readonly manifest: RunManifest;
  /** Step records in plan order (manifest.stepIds), then any not in the plan, by start time. */
  readonly steps: readonly StepRecord[];
  readonly metrics: readonly LoadedMetrics[];
  /** Planned steps with no measurement (run still going, killed, failed, or an infrastructure error). */
  readonly missingStepIds: readonly string[];
  /**
   * Steps the infrastructure failed in (`infrastructure-error`: a server or pgbench died). Not
   * measurements: never in `steps`, never judged; listed so the report can say why they are missing.
   */
  readonly unmeasured: readonly StepRecord[];
  /** Files that exist but could not be read, one line each. */
  readonly problems: readonly string[];
  /** plan.json stored with the run; null for runs of older releases (labelled from today's registry). */
  readonly plan: RunPlan | null;
  /** The target descriptor a step ran against: from the stored plan, else from its kind alone. */
  readonly descriptorOf: (step: Pick<StepRecord, 'stepId' | 'target'>) => TargetDescriptor;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A file the report leaves out: `steps/x.json is a FIFO …` — relative, so the report names no home path. */
function skippedLine(rel: string, err: unknown): string {
  if (err instanceof FileReadError) return `${rel} ${err.reason}; skipped`;
  if (err instanceof RunFileError) return `${rel}: ${err.problem}; skipped`;
  return `${rel}: ${errorText(err)}; skipped`;
}

/**
 * Every `*.json` of a folder of the run, each read through readFileIn and checked against its
 * schema; what cannot be read is skipped and named in `problems` (links and special files by their
 * type, never by their content). A folder that is a link or a plain file is a FileReadError (exit 2).
 */
function readFolder<T>(
  runDir: string,
  folder: string,
  kind: ReadKind,
  keep: (name: string) => boolean,
  parse: (rel: string, text: string) => T,
  problems: string[],
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
      problems.push(skippedLine(rel, err));
    }
  }
  return out;
}

/**
 * The run directory read through lib/core/read.ts (the one way to open a run file). Policy for a
 * partially bad run, shared with compare, fetch and status (docs/report.md): manifest.json and
 * plan.json say what the run is, so one that cannot be read refuses the run (UsageError, exit 2);
 * a step or metrics file that cannot be read is skipped and named in `problems`, and the report
 * says it is partial.
 */
export function loadRun(dir: string): LoadedRun {
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
  const manifestPath = join(runDir, RUN_PATHS.manifest);
  const manifestText = readFileIn(runDir, RUN_PATHS.manifest, 'runFile');
  if (manifestText === null) {
    throw new UsageError(`${dir}: no manifest.json — not a run directory`);
  }
  const manifest: RunManifest = parseRunFile(manifestSchema, manifestPath, manifestText);
  const problems: string[] = [];

  // The plan labels the run: a malformed plan.json is an error (naming the file and field), a
  // missing one means a run of an older release.
  const planPath = join(runDir, RUN_PATHS.plan);
  const planText = readFileIn(runDir, RUN_PATHS.plan, 'runFile');
  const plan: RunPlan | null = planText === null ? null : parseRunFile(planSchema, planPath, planText);
  const byStep = new Map((plan?.steps ?? []).map((s) => [s.stepId, s.descriptor] as const));
  const descriptorOf = (step: Pick<StepRecord, 'stepId' | 'target'>): TargetDescriptor =>
    byStep.get(step.stepId) ?? fallbackDescriptor(step.target);

  const records: StepRecord[] = readFolder(
    runDir,
    RUN_PATHS.stepsDir,
    'stepRecord',
    (name) => !name.startsWith('.'),
    (rel, text) => parseRunFile(stepRecordSchema, rel, text),
    problems,
  ).map((r) => r.value);

  const planIndex = new Map(manifest.stepIds.map((id, i) => [id, i] as const));
  const unmeasured = records.filter((r) => r.status === 'infrastructure-error');
  const steps = records
    .filter((r) => r.status !== 'infrastructure-error')
    .sort((a, b) => {
      const ia = planIndex.get(a.stepId) ?? Number.MAX_SAFE_INTEGER;
      const ib = planIndex.get(b.stepId) ?? Number.MAX_SAFE_INTEGER;
      return ia !== ib ? ia - ib : a.startedAt.localeCompare(b.startedAt);
    });
  const recorded = new Set(steps.map((s) => s.stepId));
  const missingStepIds = manifest.stepIds.filter((id) => !recorded.has(id));

  // metrics/steps.json holds step windows, not series; the step records carry the same times.
  const metrics: LoadedMetrics[] = readFolder(
    runDir,
    RUN_PATHS.metricsDir,
    'metrics',
    (name) => `${RUN_PATHS.metricsDir}/${name}` !== RUN_PATHS.stepWindows && !name.startsWith('.'),
    (rel, text) => parseRunFile(metricsFileSchema, rel, text),
    problems,
  ).map((m) => ({ name: m.name.replace(/\.json$/, ''), file: m.value }));

  return { dir: runDir, manifest, steps, metrics, missingStepIds, unmeasured, problems, plan, descriptorOf };
}
