/**
 * Probe steps in the engine (lib/suite/probes.ts): which planned steps one execution of a probe
 * measures, which of them this run cannot measure (no runner for the kind, or the runner says
 * why), and the step record of each outcome. The engine loop (./run-suite.ts) calls these; the
 * runners are ports (./ports.ts `ProbeRunner`).
 */
import type { PlannedStep } from '../suite/expand';
import { judgeProbeStep } from '../suite/probe-verdict';
import type { ProbeKind } from '../suite/probes';
import { RESULT_SCHEMA_VERSION, stepFileName, type StepRecord } from '../suite/types';
import type { ProbeRunner, ProbeRunners, ProbeStepOutcome } from './ports';

/**
 * The steps of `first`'s group that this part of the run measures: `first` and the consecutive
 * steps of the same group after it that are neither finished (resume) nor planned unavailable.
 */
export function probeGroupMembers(
  steps: readonly PlannedStep[],
  index: number,
  done: ReadonlySet<string>,
): PlannedStep[] {
  const first = steps[index];
  const group = first?.probe?.group;
  if (first === undefined || group === undefined) return [];
  const members: PlannedStep[] = [];
  for (let i = index; i < steps.length; i++) {
    const s = steps[i] as PlannedStep;
    if (s.probe?.group !== group) break;
    if (!done.has(s.stepId) && s.unavailable === null) members.push(s);
  }
  return members;
}

/** The runner of a step's probe kind, or null when the run has none. */
export function probeRunnerFor(
  probes: ProbeRunners | undefined,
  step: PlannedStep,
): ProbeRunner<ProbeKind> | null {
  const kind = step.probe?.spec.kind;
  if (kind === undefined) return null;
  // Widened once here, so a kind added to the union needs no change in this function. The runner
  // of a kind is only ever called with a group of its own kind's steps (one spec per group), which
  // the types cannot see once the union has two members: hence the cast through unknown.
  const byKind = (probes ?? {}) as unknown as Readonly<Partial<Record<ProbeKind, ProbeRunner<ProbeKind>>>>;
  return byKind[kind] ?? null;
}

/** Why this run cannot measure a probe step, or null when it can. */
export function probeUnavailable(runner: ProbeRunner<ProbeKind> | null, step: PlannedStep): string | null {
  const kind = step.probe?.spec.kind ?? 'unknown';
  if (runner === null)
    return `not available in this run: it has no ${kind} probe runner (${kind} steps need one; see docs/disruptions.md)`;
  return runner.unavailable?.(step) ?? null;
}

/** The command a probe step records in place of pgbench's argv. */
export function probeCommand(step: PlannedStep): string[] {
  return ['proxylab-probe', step.probe?.spec.kind ?? 'unknown', step.params.script];
}

/** The record of one probe step's outcome (judged by its kind), with an infrastructure failure the engine saw. */
export function probeRecord(
  runId: string,
  step: PlannedStep,
  outcome: ProbeStepOutcome<ProbeKind>,
  infraFailure: string | null,
): StepRecord {
  const status = infraFailure !== null ? 'infrastructure-error' : outcome.status;
  const file = `steps/${stepFileName(step.stepId)}`;
  const notes = [infraFailure, outcome.note ?? null].filter((n): n is string => n !== null);
  return {
    schemaVersion: RESULT_SCHEMA_VERSION,
    runId,
    stepId: step.stepId,
    scenario: step.scenario,
    target: step.target,
    params: step.params,
    startedAt: outcome.startedAt,
    endedAt: outcome.endedAt,
    status,
    result: null,
    probe: outcome.result,
    verdict: judgeProbeStep(step, status, outcome.result),
    loadGeneratorSaturated: false,
    saturationReason: null,
    poolerSaturated: null,
    command: probeCommand(step),
    files: { stdout: `${file}.stdout`, stderr: `${file}.stderr`, log: null },
    ...(notes.length > 0 ? { note: notes.join('; ') } : {}),
  };
}
