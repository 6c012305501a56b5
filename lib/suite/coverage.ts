/**
 * Which targets a suite measures, and why any is left out (pure). A scenario names its targets by
 * capability (`TargetMatch`), so a lab target that matches none of a scenario's entries gets no
 * step of it; this module says so per scenario and per target, in words, so nothing is skipped
 * silently: `proxylab plan`, `validate` and `run` print it, and the plan stored with a run keeps
 * it (`RunPlan.scenarios`).
 */
import { experimentSource } from './catalog';
import type { PlannedStep, TargetCapacity } from './expand';
import type { ExperimentId, ExperimentSource, Scenario, Suite } from './scenario';
import {
  fallbackDescriptor,
  matchesTarget,
  targetProduct,
  type TargetDescriptor,
  type TargetMatch,
} from './targets';

/** One target of a run as a scenario sees it: how many steps it gets, or why none. */
export interface ScenarioTargetCoverage {
  /** The target's name (TargetRef.name). */
  readonly target: string;
  readonly steps: number;
  /** Why the scenario gives this target no step; null when it gets steps. */
  readonly skipped: string | null;
}

/** A scenario of a run's plan: what it re-runs, where the finding comes from, and its targets. */
export interface PlanScenario {
  readonly name: string;
  /** The published experiment; null for a lab's own scenario. */
  readonly experiment: ExperimentId | null;
  readonly title: string;
  readonly finding: string;
  /** The write-up the finding comes from; null for a lab's own scenario. */
  readonly source: ExperimentSource | null;
  /** Every target of the run, in the run's order. */
  readonly targets: readonly ScenarioTargetCoverage[];
}

/** A capability match in words: what a target must be (never a kind name). */
export function describeMatch(m: TargetMatch): string {
  const out: string[] = [];
  if (m.pooled !== undefined) out.push(m.pooled ? 'pooled' : 'not pooled (direct)');
  if (m.multiplexes !== undefined)
    out.push(m.multiplexes ? 'multiplexing (transaction pool)' : 'not multiplexing');
  if (m.managed !== undefined) out.push(m.managed ? 'managed (run by AWS)' : 'self-hosted');
  if (m.dedicatedHost !== undefined)
    out.push(m.dedicatedHost ? 'on a dedicated host' : 'not on a dedicated host');
  if (m.pooler) out.push(`pooler ${m.pooler.join(' or ')}`);
  if (m.readOnly !== undefined) out.push(m.readOnly ? 'read-only' : 'taking writes');
  if (m.carriesPreparedStatements)
    out.push(`carries prepared statements: ${m.carriesPreparedStatements.join(' or ')}`);
  return out.length > 0 ? out.join(', ') : 'any target';
}

/** What a target is, in the words `describeMatch` uses: `pooled, multiplexing (transaction pool), self-hosted (PgBouncer)`. */
export function describeTargetTraits(d: TargetDescriptor): string {
  const c = d.capabilities;
  if (!c.pooled) return 'not pooled (direct)';
  const managed = d.placement === 'managed';
  return [
    'pooled',
    c.multiplexes ? 'multiplexing (transaction pool)' : 'not multiplexing (session pool)',
    managed ? 'managed (run by AWS)' : 'self-hosted',
    ...(d.placement === 'dedicated-host' ? ['on a dedicated host'] : []),
  ]
    .join(', ')
    .concat(` (${targetProduct(d).label})`);
}

/** Why `scenario`'s target list does not select `d` (it selects read-only targets only when asked). */
export function skipReason(scenario: Scenario, d: TargetDescriptor): string {
  const readOnlyAsked = scenario.targets.some((m) => m.readOnly === true);
  const matchesIgnoringReadOnly = scenario.targets.some((m) =>
    matchesTarget(d, { ...m, readOnly: undefined }),
  );
  if (matchesIgnoringReadOnly && !readOnlyAsked)
    return `${d.name} serves reads only and ${scenario.name} does not ask for read-only targets (its writes would fail there)`;
  const wanted = scenario.targets.map((m) => `[${describeMatch(m)}]`).join(' or ');
  return `${scenario.name} runs on targets that are ${wanted}; ${d.name} is ${describeTargetTraits(d)}`;
}

type Given = Pick<TargetCapacity, 'ref' | 'descriptor'>;

function descriptorOf(t: Given): TargetDescriptor {
  return t.descriptor ?? fallbackDescriptor(t.ref);
}

/** Every given target's steps in `scenario` (from its expanded steps), or why it has none. */
export function scenarioCoverage(
  scenario: Scenario,
  targets: readonly Given[],
  steps: readonly PlannedStep[],
): ScenarioTargetCoverage[] {
  return targets.map((t) => {
    const n = steps.filter((s) => s.scenario === scenario.name && s.target.name === t.ref.name).length;
    return { target: t.ref.name, steps: n, skipped: n > 0 ? null : skipReason(scenario, descriptorOf(t)) };
  });
}

/** The plan's account of a suite's scenarios: what each re-runs, its source, and its targets. */
export function planScenarios(
  suite: Suite,
  targets: readonly Given[],
  steps: readonly PlannedStep[],
): PlanScenario[] {
  return suite.scenarios.map((s) => ({
    name: s.name,
    experiment: s.experiment,
    title: s.title,
    finding: s.finding,
    source: s.experiment === null ? null : experimentSource(s.experiment),
    targets: scenarioCoverage(s, targets, steps),
  }));
}

/** A target that no scenario of the suite measures, with the scenarios' reasons. */
export interface UnmeasuredTarget {
  readonly target: string;
  /** One line per distinct reason, naming the scenarios it applies to (`e5-short, e5-long run on …`). */
  readonly reasons: readonly string[];
}

/** The targets that get no step in any scenario of the plan. */
export function unmeasuredTargets(scenarios: readonly PlanScenario[]): UnmeasuredTarget[] {
  const names = [...new Set(scenarios.flatMap((s) => s.targets.map((t) => t.target)))];
  return names
    .filter((name) => scenarios.every((s) => (s.targets.find((t) => t.target === name)?.steps ?? 0) === 0))
    .map((name) => {
      // Each reason begins with its scenario's name: the same reason of several scenarios is said once.
      const byRest = new Map<string, string[]>();
      for (const s of scenarios) {
        const why = s.targets.find((t) => t.target === name)?.skipped;
        if (!why) continue;
        const rest = why.startsWith(`${s.name} `) ? why.slice(s.name.length + 1) : why;
        byRest.set(rest, [...(byRest.get(rest) ?? []), s.name]);
      }
      return {
        target: name,
        reasons: [...byRest].map(([rest, who]) =>
          who.length === 1 ? `${who[0] ?? ''} ${rest}` : `${who.join(', ')}: each ${rest}`,
        ),
      };
    });
}
