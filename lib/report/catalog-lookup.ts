/**
 * Which published experiment and finding a scenario re-runs. The run directory records the
 * scenario name and, in its plan, the scenario's experiment, finding and source (a lab's own
 * scenario is known only there); the catalog knows the rest for the published ones: the claims
 * its rules and comparisons cite (`published`) and, for plans of older releases, the source.
 */
import { experimentSource, formatSource, getSuite, SUITE_NAMES } from '../suite/catalog';
import type { Scenario } from '../suite/catalog';
import type { RunPlan } from '../suite/plan';
import type { ScenarioInfo, ScenarioLookup } from './shape';

export function catalogLookup(): ScenarioLookup {
  const byName = new Map<string, ScenarioInfo>();
  for (const suiteName of SUITE_NAMES) {
    for (const scenario of getSuite(suiteName).scenarios) {
      if (!byName.has(scenario.name)) {
        const source = scenario.experiment === null ? null : experimentSource(scenario.experiment);
        byName.set(scenario.name, {
          experiment: scenario.experiment,
          finding: scenario.finding,
          title: scenario.title,
          source: source === null ? null : formatSource(source),
          claims: publishedClaims(scenario),
        });
      }
    }
  }
  return (scenario) => byName.get(scenario) ?? null;
}

/**
 * The scenarios as the run's own plan describes them (a lab's own scenario is known only there),
 * then `fallback` (the catalog) for plans that do not (older releases). A planned scenario's
 * published claims come from the catalog only when it names the same experiment: a lab scenario
 * that happens to share a catalog scenario's name cites nothing.
 */
export function runLookup(plan: RunPlan | null, fallback: ScenarioLookup): ScenarioLookup {
  const byName = new Map<string, ScenarioInfo>(
    (plan?.scenarios ?? []).map((s) => {
      const catalog = fallback(s.name);
      return [
        s.name,
        {
          experiment: s.experiment,
          finding: s.finding,
          title: s.title,
          source: s.source === null ? null : formatSource(s.source),
          claims: s.experiment !== null && catalog?.experiment === s.experiment ? (catalog.claims ?? []) : [],
        },
      ];
    }),
  );
  return (scenario) => byName.get(scenario) ?? fallback(scenario);
}

/** What the scenario's rules and comparisons say the publication reported, each once. */
function publishedClaims(scenario: Scenario): string[] {
  const claims = [
    ...scenario.expectations.map((r) => r.published),
    ...(scenario.comparisons ?? []).map((c) => c.published),
  ].filter((c): c is string => typeof c === 'string' && c.trim() !== '');
  return [...new Set(claims)];
}
