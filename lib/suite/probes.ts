/**
 * Probe steps (pure): scenarios whose steps are not pgbench runs but measurements a probe port
 * executes (lib/engine/ports.ts `ProbeRunner`, adapters in lib/local and lib/runner). A scenario
 * says `probe: ProbeSpec` (a union by `kind`); each of its planned steps carries `probe:
 * PlannedProbe` (the spec and the group it runs in) in plan.json, and each step record the kind's
 * result in `probe` (schema-checked, lib/results/probe-schemas.ts) beside the pgbench `result`
 * (null for a probe step).
 *
 * The matrix is the scenario's as for pgbench steps (targets × clients × protocols × connects ×
 * repetitions), the step ids too, and expectations are matched by capability in the same way; a
 * kind's `judge` (./probe-verdict.ts) reads its result. Steps of a kind the run has no runner
 * for are recorded `not-available` with the reason, never dropped.
 *
 * Adding a kind = its spec and result types (a module beside this one, e.g. ./disruption.ts), a
 * member of `ProbeSpec` and `ProbeResult` and an entry in `PROBE_KINDS` here, its schemas in
 * lib/results/probe-schemas.ts, its judge in ./probe-verdict.ts, and a runner per world.
 */
import {
  disruptionDurationSec,
  disruptionLabel,
  validateDisruptionProbe,
  type DisruptionProbe,
  type DisruptionResult,
} from './disruption';
import {
  sessionStateDurationSec,
  sessionStateLabel,
  sessionStateStepSec,
  sessionStateUnavailableOn,
  validateSessionStateProbe,
  type SessionStateProbe,
  type SessionStateResult,
} from './session-state-kind';

/**
 * What a kind's stepSec reads of a step's target: a TargetDescriptor (lib/suite/targets.ts) fits;
 * spelled out here because lib/suite/types.ts reads this module and targets.ts reads types.ts.
 */
export interface ProbeTarget {
  readonly capabilities: {
    readonly pooled?: boolean;
    readonly resizablePool?: string | null;
    readonly fixedPoolReason?: string;
    readonly session?: { readonly pinsSessions: boolean };
  };
}

/** What a probe scenario's steps run, by kind (Scenario.probe). */
export type ProbeSpec = DisruptionProbe | SessionStateProbe;
/** What one probe step measured, by kind (StepRecord.probe). */
export type ProbeResult = DisruptionResult | SessionStateResult;
export type ProbeKind = ProbeSpec['kind'];
export type ProbeSpecOf<K extends ProbeKind> = Extract<ProbeSpec, { readonly kind: K }>;
export type ProbeResultOf<K extends ProbeKind> = Extract<ProbeResult, { readonly kind: K }>;

/** PlannedStep.probe: the scenario's spec and the group of steps one execution of the probe measures. */
export interface PlannedProbe {
  /**
   * Steps with the same group are consecutive in the plan and measured by one execution of the
   * probe (a disruption: every target and mode of one repetition see the same disruption).
   */
  readonly group: string;
  readonly spec: ProbeSpec;
}

/** What the planner and the catalog checks know of a kind. */
export interface ProbeKindInfo<K extends ProbeKind> {
  /**
   * `repetition`: every step of one repetition of a scenario runs in one execution (the group is
   * `<scenario>/r<n>`), and the target order alternates between repetitions; `step`: each step alone.
   */
  readonly together: 'repetition' | 'step';
  /** Problems with a scenario's spec, each naming the scenario and field (empty when valid). */
  validate(scenario: string, spec: ProbeSpecOf<K>): string[];
  /** The step's `params.script` label (`disruption(postgres-restart fast)`). */
  label(spec: ProbeSpecOf<K>): string;
  /** Seconds one execution takes, for the ETA and the step timeout. */
  durationSec(spec: ProbeSpecOf<K>): number;
  /**
   * Seconds one step is expected to take on its target, when that depends on the target (a
   * session-state step holds each feature's state for a metric period only on a target that pins).
   * Absent: the scenario's duration.
   */
  stepSec?(spec: ProbeSpecOf<K>, target: ProbeTarget): number;
  /**
   * Why a step of this kind cannot run on its target in this run (planned `not-available` with that
   * reason, never run otherwise), or null. Absent: it can run on any target.
   */
  unavailableOn?(spec: ProbeSpecOf<K>, target: ProbeTarget): string | null;
}

export const PROBE_KINDS: { readonly [K in ProbeKind]: ProbeKindInfo<K> } = {
  disruption: {
    together: 'repetition',
    validate: validateDisruptionProbe,
    label: disruptionLabel,
    durationSec: disruptionDurationSec,
  },
  // Each step alone: one target's features, two clients of their own (issue 24).
  'session-state': {
    together: 'step',
    validate: validateSessionStateProbe,
    label: sessionStateLabel,
    durationSec: sessionStateDurationSec,
    stepSec: sessionStateStepSec,
    unavailableOn: sessionStateUnavailableOn,
  },
};

/** The kind table's entry for a spec (one place that narrows the union). */
function infoOf<K extends ProbeKind>(spec: ProbeSpecOf<K>): ProbeKindInfo<K> | undefined {
  return (PROBE_KINDS as unknown as Partial<Record<ProbeKind, ProbeKindInfo<K>>>)[spec.kind];
}

export function validateProbe(scenario: string, spec: ProbeSpec): string[] {
  const info = infoOf(spec);
  if (info === undefined)
    return [
      `${scenario}: probe.kind must be one of ${Object.keys(PROBE_KINDS).join(', ')}, got ${String((spec as { kind: unknown }).kind)}`,
    ];
  return info.validate(scenario, spec);
}

export function probeLabel(spec: ProbeSpec): string {
  return infoOf(spec)?.label(spec) ?? `probe(${spec.kind})`;
}

export function probeDurationSec(spec: ProbeSpec): number {
  return infoOf(spec)?.durationSec(spec) ?? 0;
}

/** Seconds a probe step is expected to take on its target (its kind's stepSec), or null: the scenario's duration. */
export function probeStepSec(spec: ProbeSpec, target: ProbeTarget): number | null {
  return infoOf(spec)?.stepSec?.(spec, target) ?? null;
}

/** Why a probe step cannot run on its target in this run (its kind's unavailableOn), or null. */
export function probeUnavailableOn(spec: ProbeSpec, target: ProbeTarget): string | null {
  return infoOf(spec)?.unavailableOn?.(spec, target) ?? null;
}

/** The group of a probe step: `<scenario>/r<repetition>` for kinds run together, else the step id. */
export function probeGroup(spec: ProbeSpec, scenario: string, repetition: number, stepId: string): string {
  return infoOf(spec)?.together === 'repetition' ? `${scenario}/r${repetition}` : stepId;
}

/** Whether a kind's repetitions alternate their target order (kinds run together). */
export function alternatesTargets(spec: ProbeSpec): boolean {
  return infoOf(spec)?.together === 'repetition';
}
