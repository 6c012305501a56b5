/**
 * A run directory as the report uses it: read by lib/results' tolerant reader (run-reader.ts: the
 * paths, schemas and warnings), then put in plan order with what is missing and what the
 * infrastructure failed, and each step's target descriptor at hand.
 */
import type { LabRecord } from '../results/lab-record';
import { readRunDir, warningLine, type RunWarning } from '../results/run-reader';
import type { RunPlan } from '../suite/plan';
import { fallbackDescriptor, type TargetDescriptor } from '../suite/targets';
import type { MetricsFile, RunManifest, StepRecord } from '../suite/types';

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
  /** Files that exist but could not be read, one line each (warningLine of `warnings`). */
  readonly problems: readonly string[];
  /** The same, as named warnings (code, file, reason). */
  readonly warnings: readonly RunWarning[];
  /** plan.json stored with the run; null for runs of older releases (labelled from today's registry). */
  readonly plan: RunPlan | null;
  /** lab.json: the lab file the run was started with; null without one (lib/results/lab-record.ts). */
  readonly lab: LabRecord | null;
  /** The target descriptor a step ran against: from the stored plan, else from its kind alone. */
  readonly descriptorOf: (step: Pick<StepRecord, 'stepId' | 'target'>) => TargetDescriptor;
}

/**
 * The run directory as the report sees it, read by the tolerant reader of lib/results
 * (run-reader.ts). Policy for a partially bad run, shared with compare, fetch and status
 * (docs/report.md): manifest.json and plan.json say what the run is, so one that cannot be read
 * refuses the run (UsageError, exit 2); a step or metrics file that cannot be read is skipped and
 * named in `problems`, and the report says it is partial.
 */
export function loadRun(dir: string): LoadedRun {
  const read = readRunDir(dir);
  const { manifest, plan } = read;
  const byStep = new Map((plan?.steps ?? []).map((s) => [s.stepId, s.descriptor] as const));
  const descriptorOf = (step: Pick<StepRecord, 'stepId' | 'target'>): TargetDescriptor =>
    byStep.get(step.stepId) ?? fallbackDescriptor(step.target);

  const planIndex = new Map(manifest.stepIds.map((id, i) => [id, i] as const));
  const unmeasured = read.steps.filter((r) => r.status === 'infrastructure-error');
  const steps = read.steps
    .filter((r) => r.status !== 'infrastructure-error')
    .sort((a, b) => {
      const ia = planIndex.get(a.stepId) ?? Number.MAX_SAFE_INTEGER;
      const ib = planIndex.get(b.stepId) ?? Number.MAX_SAFE_INTEGER;
      return ia !== ib ? ia - ib : a.startedAt.localeCompare(b.startedAt);
    });
  const recorded = new Set(steps.map((s) => s.stepId));
  const missingStepIds = manifest.stepIds.filter((id) => !recorded.has(id));

  return {
    dir: read.dir,
    manifest,
    steps,
    metrics: read.metrics,
    missingStepIds,
    unmeasured,
    problems: read.warnings.map(warningLine),
    warnings: read.warnings,
    plan,
    lab: read.lab,
    descriptorOf,
  };
}
