/**
 * The suite catalog, as data: the five published experiments (E1–E5) at their published scale,
 * `quick` (the local default) and `smoke` (CI), assembled from lib/suite/experiments/ (one file per
 * experiment). Pure: no I/O.
 *
 * A scenario (lib/suite/scenario.ts) is a matrix (targets × clients × protocols × connect modes ×
 * pool percents × repetitions) with one script, duration and scale; `expandSuite` (expand.ts) turns
 * it into steps. Expectations are rules, first match wins; comparisons are scenario-level ratio
 * checks (`judgeScenario`). See docs/suite.md for the catalog in words.
 *
 * Adding an experiment = its file in lib/suite/experiments/ and one line in EXPERIMENTS.
 */
import { UsageError } from '../core/errors';
import { E1_EXPERIMENT } from './experiments/e1-prepared-statements';
import { E2_EXPERIMENT } from './experiments/e2-client-sweep';
import { E3_EXPERIMENT } from './experiments/e3-connection-churn';
import { E4_EXPERIMENT } from './experiments/e4-pool-share';
import { E5_EXPERIMENT } from './experiments/e5-big-server';
import { DISRUPT_EXPERIMENT, LOCAL_DISRUPTIONS } from './experiments/disruptions';
import { E6_EXPERIMENT } from './experiments/e6-pooler-benchmark';
import { LATENCY_EXPERIMENT } from './experiments/latency';
import { SESSION_EXPERIMENT } from './experiments/session-state';
import type { Experiment, ExperimentId, ExperimentSource, Suite } from './scenario';

export type {
  BuiltinScript,
  CellSelector,
  ClientsSpec,
  Comparison,
  ExpectationRule,
  Experiment,
  ExperimentId,
  ExperimentSource,
  InitFlag,
  MaxConnectionsBand,
  Scenario,
  ScriptPart,
  ScriptSpec,
  Suite,
} from './scenario';
export { BUILTIN_SCRIPTS, scriptLabel, validateScenario } from './scenario';

/** In the order their scenarios run in `quick`, `smoke` and `all-published`, and their suites are listed. */
const EXPERIMENTS: readonly Experiment[] = [
  E1_EXPERIMENT,
  E2_EXPERIMENT,
  E3_EXPERIMENT,
  E4_EXPERIMENT,
  E5_EXPERIMENT,
  E6_EXPERIMENT,
];

/**
 * What proxylab measures beyond the published experiments (issue 24): each has a suite of its own
 * name, and together they are the `session` suite. Not in `all-published`, nor in `quick` (which
 * stays ≤ 3 min on 2 cores: it took 2:48 alone on a loaded 2-core machine).
 */
const MEASUREMENTS: readonly Experiment[] = [SESSION_EXPERIMENT, LATENCY_EXPERIMENT];

const SUITES: readonly Suite[] = [
  {
    name: 'quick',
    description:
      'Local default (≈ 2–3 min on 2 cores): E1–E3 findings scaled down to max_connections ≈ 40 and a small pool.',
    scenarios: EXPERIMENTS.flatMap((e) => e.quick ?? []),
  },
  {
    name: 'smoke',
    description:
      'CI (~15–20 s incl. init on 2 cores): prepared via transaction pool fails, direct above max_connections refused, -C churn faster pooled.',
    scenarios: EXPERIMENTS.flatMap((e) => e.smoke ?? []),
  },
  ...EXPERIMENTS.map((e) => e.suite),
  ...EXPERIMENTS.flatMap((e) => e.extraSuites ?? []),
  {
    name: 'session',
    description:
      'What a pooler breaks and what it costs per statement (≈ 3–4 min locally): the session-state matrix and the added latency vs direct.',
    scenarios: MEASUREMENTS.flatMap((e) => e.suite.scenarios),
  },
  ...MEASUREMENTS.map((e) => e.suite),
  {
    name: 'disruption',
    description:
      'Local disruptions (≈ 3 min on 2 cores): PostgreSQL restart (fast, immediate), backend kill, PAUSE/RESUME, PgBouncer rolling restart, primary failover — probe clients direct and through PgBouncer, 3 repetitions each.',
    scenarios: LOCAL_DISRUPTIONS,
  },
  // The disruption lab on AWS; not in all-published: a failover is a choice, not a benchmark.
  DISRUPT_EXPERIMENT.suite,
  ...(DISRUPT_EXPERIMENT.extraSuites ?? []),
  {
    name: 'all-published',
    description: 'E1–E6 at published scale, one after the other (hours on a large lab).',
    scenarios: EXPERIMENTS.flatMap((e) => e.suite.scenarios),
  },
];

export const SUITE_NAMES: readonly string[] = SUITES.map((s) => s.name);

export function getSuite(name: string): Suite {
  const suite = SUITES.find((s) => s.name === name);
  if (!suite) throw new UsageError(`unknown suite "${name}"; valid suites: ${SUITE_NAMES.join(', ')}`);
  return suite;
}

/**
 * The suite a lab's own scenarios form (lib/config/scenarios.ts): `--suite lab` runs the lab file's
 * `scenarios`. Not in the catalog, so no catalog suite may take the name.
 */
export const LAB_SUITE_NAME = 'lab';

/**
 * The published experiments in catalog order: id and source (docs/suite.md, the report's
 * findings). Every one cites its source (test/unit/catalog-sources.test.ts).
 */
export const EXPERIMENT_SOURCES: ReadonlyArray<{
  readonly id: ExperimentId;
  readonly source: ExperimentSource;
}> = EXPERIMENTS.flatMap((e) => (e.source === null ? [] : [{ id: e.id, source: e.source }]));

/**
 * The source of an experiment of the catalog; null for proxylab's own measurements (SESSION,
 * LATENCY, DISRUPT), whose rules cite their sources one by one.
 */
export function experimentSource(id: ExperimentId): ExperimentSource | null {
  const found = [...EXPERIMENTS, ...MEASUREMENTS, DISRUPT_EXPERIMENT].find((e) => e.id === id);
  if (!found) throw new RangeError(`no experiment ${id} in the catalog`);
  return found.source;
}

/**
 * A source in one line: `Title — Publisher, 2024-08-29, https://…`; what is not public says so
 * (`not public`), never a guess.
 */
export function formatSource(s: ExperimentSource): string {
  const where = s.url ?? 'not public';
  return [s.title, [s.publisher, s.date, where].filter((x): x is string => x !== null).join(', ')].join(
    ' — ',
  );
}
