/**
 * The verdict of a probe step (pure): the same rules as a pgbench step for a step that did not
 * measure (not available, infrastructure error, timeout), and the kind's own judge for a result.
 * Each kind's judge reads the step's expectation (matched by capability when the plan was made).
 */
import { judgeDisruption } from './disruption-verdict';
import { judgeSessionState } from './session-state';
import type { PlannedStep, StepExpectation } from './expand';
import type { ProbeKind, ProbeResult, ProbeResultOf } from './probes';
import type { StepStatus, Verdict } from './types';
import { describeExpectation } from './verdict';

type Judge<K extends ProbeKind> = (
  e: StepExpectation,
  r: ProbeResultOf<K>,
) => Pick<Verdict, 'observed' | 'held'>;

export const PROBE_JUDGES: { readonly [K in ProbeKind]: Judge<K> } = {
  disruption: judgeDisruption,
  // Each feature against its own expectation (decided from the step's descriptor, in the result).
  'session-state': (_e, r) => judgeSessionState(r),
};

export function judgeProbeStep(step: PlannedStep, status: StepStatus, probe: ProbeResult | null): Verdict {
  const e = step.expectation;
  const expected = `${describeExpectation(e)}${step.probe ? ` (${step.probe.spec.kind})` : ''}`;
  if (status === 'not-available')
    return { expected, observed: step.unavailable ?? 'not available on this target', held: null };
  if (status === 'infrastructure-error')
    return { expected, observed: 'not measured: the infrastructure failed during the step', held: null };
  if (status === 'timeout')
    return {
      expected,
      observed: 'timed out: the probe did not finish in time',
      held: e.outcome === 'any' ? null : false,
    };
  if (probe === null) return { expected, observed: 'no result', held: e.outcome === 'any' ? null : false };
  const judge = PROBE_JUDGES[probe.kind] as Judge<ProbeKind> | undefined;
  if (judge === undefined) return { expected, observed: `no judge for probe kind ${probe.kind}`, held: null };
  return { expected, ...judge(e, probe) };
}
