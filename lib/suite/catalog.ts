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
import { E6_EXPERIMENT } from './experiments/e6-pooler-benchmark';
import { LATENCY_EXPERIMENT } from './experiments/latency';
import { SESSION_EXPERIMENT } from './experiments/session-state';
import type { Experiment, Suite } from './scenario';

export type {
  BuiltinScript,
  CellSelector,
  ClientsSpec,
  Comparison,
  ExpectationRule,
  Experiment,
  ExperimentId,
  InitFlag,
  MaxConnectionsBand,
  Scenario,
  ScriptPart,
  ScriptSpec,
  Suite,
} from './scenario';
export { scriptLabel, validateScenario } from './scenario';

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
    name: 'all-published',
    description: 'E1–E6 at published scale, one after the other (hours on a large lab).',
    scenarios: EXPERIMENTS.flatMap((e) => e.suite.scenarios),
  },
];

export const SUITE_NAMES: readonly string[] = SUITES.map((s) => s.name);

/** The experiment an id names (its published source, its suites), or undefined. */
export function experimentById(id: string): Experiment | undefined {
  return EXPERIMENTS.find((e) => e.id === id);
}

export function getSuite(name: string): Suite {
  const suite = SUITES.find((s) => s.name === name);
  if (!suite) throw new UsageError(`unknown suite "${name}"; valid suites: ${SUITE_NAMES.join(', ')}`);
  return suite;
}
