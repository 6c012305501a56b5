/**
 * Every path inside a run directory, named once (local `runs/<runId>/`, S3 `runs/<runId>/`).
 * Writers, readers, the fleet merge, status, fetch and the report use these, never string literals.
 */
import { stepFileName } from '../suite/types';

export const RUN_PATHS = {
  manifest: 'manifest.json',
  plan: 'plan.json',
  /**
   * The lab file the run was started with, verbatim, with its SHA-256 (lib/results/lab-record.ts):
   * written before plan.json by `proxylab local --lab` and `proxylab run`; absent for a run without a lab.
   */
  lab: 'lab.json',
  /** Cloud: what the operator asked the runners to run (lib/aws/run-request.ts). */
  request: 'request.json',
  /** Cloud: the runner fleet's barrier objects and per-runner parts. */
  fleetDir: 'fleet',
  /** Cloud: one record per runner slot that was interrupted (spot notice or signal; lib/aws/spot.ts). */
  interruptionsDir: 'interruptions',
  /** Cloud: the SSM command output of each runner. */
  ssmDir: 'ssm',
  stepsDir: 'steps',
  metricsDir: 'metrics',
  stepWindows: 'metrics/steps.json',
  reportHtml: 'report.html',
  summaryMd: 'summary.md',
  /** One writer per run (lib/results/run-lock.ts): present while a run is being written. */
  lock: 'run.lock',
} as const;

/** `runs/<runId>/`: where a run lives, as a folder under the local runs directory and as an S3 key prefix. */
export function runKeyPrefix(runId: string): string {
  return `runs/${runId}/`;
}

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

/**
 * Why a key read from a bucket or a run directory cannot be a run-relative path (null when it can):
 * an absolute path, a `..` or empty segment, a backslash or NUL would put the file somewhere else.
 */
export function unsafeRunKey(key: string): string | null {
  if (key.includes('\0') || key.includes('\\')) return 'it contains a NUL or a backslash';
  if (key.startsWith('/')) return 'it is an absolute path';
  if (key.split('/').some((seg) => seg === '..' || seg === '.' || seg === ''))
    return 'it would be written outside the run directory (a "..", "." or empty path segment)';
  return null;
}
