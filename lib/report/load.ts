/**
 * Reading a run directory (layout: lib/suite/types.ts). Tolerant by design: a run that was killed
 * halfway, a step file that does not parse, or a missing metrics file still gives a report — with
 * each problem listed — because a partial answer is worth reading. Only a missing or unreadable
 * manifest.json is an error: without it, the directory is not a run.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../core/errors';
import type { RunPlan } from '../suite/plan';
import { RUN_PATHS } from '../suite/run-paths';
import { fallbackDescriptor, type TargetDescriptor } from '../suite/targets';
import type { MetricsFile, RunManifest, StepRecord } from '../suite/types';
import {
  describeZodError,
  manifestSchema,
  metricsFileSchema,
  parseRunFile,
  planSchema,
  stepRecordSchema,
} from './schema';

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

function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8')) as unknown;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function loadRun(dir: string): LoadedRun {
  const runDir = resolve(dir);
  if (!existsSync(runDir) || !statSync(runDir).isDirectory()) {
    throw new UsageError(`${dir}: not a directory (expected a run directory such as runs/<runId>)`);
  }
  const manifestPath = join(runDir, 'manifest.json');
  if (!existsSync(manifestPath)) {
    throw new UsageError(`${dir}: no manifest.json — not a run directory`);
  }
  let manifestRaw: unknown;
  try {
    manifestRaw = readJson(manifestPath);
  } catch (err) {
    throw new UsageError(`${manifestPath}: not valid JSON (${errorText(err)})`);
  }
  const parsedManifest = manifestSchema.safeParse(manifestRaw);
  if (!parsedManifest.success) {
    throw new UsageError(`${manifestPath}: not a run manifest (${describeZodError(parsedManifest.error)})`);
  }
  const manifest: RunManifest = parsedManifest.data;
  const problems: string[] = [];

  // The plan labels the run: a malformed plan.json is an error (naming the file and field), a
  // missing one means a run of an older release.
  const planPath = join(runDir, RUN_PATHS.plan);
  const plan: RunPlan | null = existsSync(planPath)
    ? parseRunFile(planSchema, planPath, readFileSync(planPath, 'utf8'))
    : null;
  const byStep = new Map((plan?.steps ?? []).map((s) => [s.stepId, s.descriptor] as const));
  const descriptorOf = (step: Pick<StepRecord, 'stepId' | 'target'>): TargetDescriptor =>
    byStep.get(step.stepId) ?? fallbackDescriptor(step.target);

  const records: StepRecord[] = [];
  const stepsDir = join(runDir, 'steps');
  const stepFiles = existsSync(stepsDir)
    ? readdirSync(stepsDir)
        .filter((f) => f.endsWith('.json'))
        .sort()
    : [];
  for (const file of stepFiles) {
    let raw: unknown;
    try {
      raw = readJson(join(stepsDir, file));
    } catch (err) {
      problems.push(`steps/${file}: not valid JSON (${errorText(err)})`);
      continue;
    }
    const parsed = stepRecordSchema.safeParse(raw);
    if (!parsed.success) {
      problems.push(`steps/${file}: not a step record (${describeZodError(parsed.error)})`);
      continue;
    }
    records.push(parsed.data);
  }

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

  const metrics: LoadedMetrics[] = [];
  const metricsDir = join(runDir, 'metrics');
  // metrics/steps.json holds step windows, not series; the step records carry the same times.
  const metricFiles = existsSync(metricsDir)
    ? readdirSync(metricsDir)
        .filter((f) => f.endsWith('.json') && f !== 'steps.json')
        .sort()
    : [];
  for (const file of metricFiles) {
    let raw: unknown;
    try {
      raw = readJson(join(metricsDir, file));
    } catch (err) {
      problems.push(`metrics/${file}: not valid JSON (${errorText(err)})`);
      continue;
    }
    const parsed = metricsFileSchema.safeParse(raw);
    if (!parsed.success) {
      problems.push(`metrics/${file}: not a metrics file (${describeZodError(parsed.error)})`);
      continue;
    }
    metrics.push({ name: file.replace(/\.json$/, ''), file: parsed.data });
  }

  return { dir: runDir, manifest, steps, metrics, missingStepIds, unmeasured, problems, plan, descriptorOf };
}
