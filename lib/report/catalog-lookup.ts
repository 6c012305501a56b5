/**
 * Which published experiment and finding a scenario re-runs, from the suite catalog. The run
 * directory records only the scenario name; the catalog is the one place that knows the rest: the
 * finding, the claims its rules and comparisons cite (`published`), and the experiment's source
 * where the catalog records one (read tolerantly: a string, or an object with title, publisher,
 * date and url; absent means no source is cited).
 */
import { experimentById, getSuite, SUITE_NAMES } from '../suite/catalog';
import type { Scenario } from '../suite/catalog';
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
          source: sourceText(
            (scenario as { source?: unknown }).source ??
              (experimentById(scenario.experiment) as { source?: unknown } | undefined)?.source,
          ),
          claims: publishedClaims(scenario),
        });
    }
  }
  return (scenario) => byName.get(scenario) ?? null;
}

/** What the scenario's rules and comparisons say the publication reported, each once. */
function publishedClaims(scenario: Scenario): string[] {
  const claims = [
    ...scenario.expectations.map((r) => r.published),
    ...(scenario.comparisons ?? []).map((c) => c.published),
  ].filter((c): c is string => typeof c === 'string' && c.trim() !== '');
  return [...new Set(claims)];
}

/** A source as one line: `title, publisher, date <url>`; null when there is none. */
export function sourceText(source: unknown): string | null {
  if (typeof source === 'string') return source.trim() === '' ? null : source.trim();
  if (Array.isArray(source)) {
    const parts = source.map(sourceText).filter((s): s is string => s !== null);
    return parts.length > 0 ? parts.join('; ') : null;
  }
  if (typeof source !== 'object' || source === null) return null;
  const r = source as Record<string, unknown>;
  const text = (k: string): string | null => (typeof r[k] === 'string' && r[k] !== '' ? r[k] : null);
  const head = [text('title'), text('publisher') ?? text('author'), text('date') ?? text('published')]
    .filter((x): x is string => x !== null)
    .join(', ');
  const url = text('url') ?? text('link');
  const line = [head, url ? `<${url}>` : null].filter((x) => x !== null && x !== '').join(' ');
  return line === '' ? null : line;
}
