/**
 * Which published experiment and finding a scenario re-runs, from the suite catalog. The run
 * directory records only the scenario name; the catalog is the one place that knows the rest.
 */
import { experimentSource, formatSource, getSuite, SUITE_NAMES } from '../suite/catalog';
import type { RunPlan } from '../suite/plan';
import type { ScenarioInfo, ScenarioLookup } from './shape';

export function catalogLookup(): ScenarioLookup {
  const byName = new Map<string, ScenarioInfo>();
  for (const suiteName of SUITE_NAMES) {
    for (const scenario of getSuite(suiteName).scenarios) {
      if (!byName.has(scenario.name))
        byName.set(scenario.name, {
          experiment: scenario.experiment,
          finding: scenario.finding,
          title: scenario.title,
          source: scenario.experiment === null ? null : formatSource(experimentSource(scenario.experiment)),
        });
    }
  }
  return (scenario) => byName.get(scenario) ?? null;
}

/**
 * The scenarios as the run's own plan describes them (a lab's own scenario is known only there),
 * then `fallback` (the catalog) for plans that do not (older releases).
 */
export function runLookup(plan: RunPlan | null, fallback: ScenarioLookup): ScenarioLookup {
  const byName = new Map<string, ScenarioInfo>(
    (plan?.scenarios ?? []).map((s) => [
      s.name,
      {
        experiment: s.experiment,
        finding: s.finding,
        title: s.title,
        source: s.source === null ? null : formatSource(s.source),
      },
    ]),
  );
  return (scenario) => byName.get(scenario) ?? fallback(scenario);
}
