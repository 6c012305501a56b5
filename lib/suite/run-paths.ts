/**
 * Every path inside a run directory, named once (local `runs/<runId>/`, S3 `runs/<runId>/`).
 * Writers, readers, the fleet merge, status, fetch and the report use these, never string literals.
 */
import { stepFileName } from './types';

export const RUN_PATHS = {
  manifest: 'manifest.json',
  plan: 'plan.json',
  stepsDir: 'steps',
  metricsDir: 'metrics',
  stepWindows: 'metrics/steps.json',
  reportHtml: 'report.html',
  summaryMd: 'summary.md',
  /** One writer per run (lib/suite/run-lock.ts): present while a run is being written. */
  lock: 'run.lock',
} as const;

/** `steps/<file>.json|stdout|stderr|log` of a step id. */
export function stepPaths(stepId: string): {
  readonly json: string;
  readonly stdout: string;
  readonly stderr: string;
  readonly log: string;
} {
  const base = `${RUN_PATHS.stepsDir}/${stepFileName(stepId)}`;
  return { json: `${base}.json`, stdout: `${base}.stdout`, stderr: `${base}.stderr`, log: `${base}.log` };
}

/** `metrics/<name>.json` (`local`, `runner`, `cloudwatch`, `pi`). */
export function metricsPath(name: string): string {
  return `${RUN_PATHS.metricsDir}/${name}.json`;
}

/** A step record file (`steps/<x>.json`, not a dot-file or a runner part in a subfolder). */
export function isStepRecordPath(relative: string): boolean {
  const prefix = `${RUN_PATHS.stepsDir}/`;
  if (!relative.startsWith(prefix)) return false;
  const name = relative.slice(prefix.length);
  return name.endsWith('.json') && !name.includes('/') && !name.startsWith('.');
}
