/** The report's findings: each scenario's expected behaviour against what the run observed (./shape.ts). */
import { uniqueInOrder } from './cells';
import type { LoadedRun } from './load';
import { isPartial } from './warnings';

// ---------------------------------------------------------------- findings

export interface ScenarioInfo {
  /** `E1`..`E5`, or null for scenarios that reproduce no published experiment. */
  readonly experiment: string | null;
  /** The published finding, in words. */
  readonly finding: string | null;
  /** The scenario's title in the catalog. */
  readonly title: string | null;
  /**
   * Where the finding was published, in one line (`Title — Publisher, date, link` or `… not
   * public`); null for a lab's own scenario or one the lookup does not know.
   */
  readonly source?: string | null;
  /** What the publication reported, as the catalog's rules and comparisons cite it (`published`). */
  readonly claims?: readonly string[];
}

export type ScenarioLookup = (scenario: string) => ScenarioInfo | null;

export type FindingState = 'reproduced' | 'held-so-far' | 'contradicted' | 'informational';

export interface FindingRow {
  readonly scenario: string;
  readonly experiment: string | null;
  /** The published finding (a claim, not a measurement of this run). */
  readonly finding: string | null;
  /** The published source of the finding (ScenarioInfo.source); null when there is none. */
  readonly source: string | null;
  readonly claims: readonly string[];
  /** What this run measured for it, in the engine's words (each comparison's observed ratio). */
  readonly measured: readonly string[];
  readonly state: FindingState;
  readonly held: number;
  readonly broke: number;
  readonly informational: number;
  /** Up to three "expected … observed …" lines of the steps that broke. */
  readonly brokenExamples: readonly string[];
}

/**
 * Per scenario: reproduced (every expectation held, run complete), held-so-far (none broke but
 * the run is partial), contradicted (one broke), informational (nothing was expected).
 */
export function findingRows(run: LoadedRun, lookup: ScenarioLookup): FindingRow[] {
  const partial = isPartial(run);
  const comparisons = run.manifest.scenarioVerdicts ?? [];
  const scenarios = uniqueInOrder([
    ...run.steps.map((s) => s.scenario),
    ...comparisons.map((v) => v.scenario),
  ]);
  return scenarios.map((scenario) => {
    // Step verdicts and the scenario's comparisons (e.g. -C through the pooler ≥ 3 × direct).
    const verdicts = [
      ...run.steps.filter((s) => s.scenario === scenario).map((s) => ({ label: s.stepId, v: s.verdict })),
      ...comparisons.filter((v) => v.scenario === scenario).map((v) => ({ label: 'comparison', v })),
    ];
    const held = verdicts.filter((x) => x.v.held === true).length;
    const broken = verdicts.filter((x) => x.v.held === false);
    const informational = verdicts.filter((x) => x.v.held === null).length;
    const info = lookup(scenario);
    const state: FindingState =
      broken.length > 0
        ? 'contradicted'
        : held === 0
          ? 'informational'
          : partial
            ? 'held-so-far'
            : 'reproduced';
    return {
      scenario,
      experiment: info?.experiment ?? null,
      finding: info?.finding ?? null,
      source:
        info === null
          ? null
          : (info.source ??
            (info.experiment === null ? "none: the lab's own scenario, not a published finding" : null)),
      claims: info?.claims ?? [],
      measured: comparisons
        .filter((v) => v.scenario === scenario)
        .map((v) => `${v.observed} (${v.expected})`),
      state,
      held,
      broke: broken.length,
      informational,
      brokenExamples: broken
        .slice(0, 3)
        .map((x) => `${x.label}: expected ${x.v.expected}; observed ${x.v.observed}`),
    };
  });
}
