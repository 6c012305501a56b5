/**
 * Which published experiment and finding a scenario re-runs, from the suite catalog. The run
 * directory records only the scenario name; the catalog is the one place that knows the rest.
 */
import { getSuite, SUITE_NAMES } from '../suite/catalog';
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
        });
    }
  }
  return (scenario) => byName.get(scenario) ?? null;
}
