/**
 * What a disruption that replaces the lab's database (a Blue/Green switchover,
 * lib/suite/disruption-actions.ts `replacesDatabase`) adds to `plan`: the green copy is a second
 * database, billed from its creation before the group until the teardown deletes the old one
 * (pure). It is priced like the lab's database — its instance and storage lines — since the green
 * copies the blue's topology and instance classes ("RDS copies the blue environment's topology …
 * along with its configured features", Aurora and RDS User Guides, "Creating a blue/green
 * deployment").
 */
import type { Scenario } from '../suite/scenario';
import { disruptionAction } from '../suite/disruption-actions';
import { disruptionDurationSec } from '../suite/disruption';
import type { CostLine } from './cost-line';

const usd = (x: number): string => `$${x.toFixed(2)}`;

/**
 * The green copy's creation, assumed: AWS states no figure (it copies the database, so it grows with
 * its size); the runner waits up to 90 min (lib/runner/blue-green.ts).
 */
export const GREEN_CREATE_ASSUMED_SEC = 30 * 60;
/** Deleting the deployment and the old blue after the group, assumed (no AWS figure either). */
export const GREEN_TEARDOWN_ASSUMED_SEC = 15 * 60;

/** What `proxylab cost` says of it: billed per run, not per hour, so priced by `plan` (below). */
export const REPLACED_DATABASE_NOT_INCLUDED = `the blue-green suite's second database (the green copy of a Blue/Green switchover) for each run: ≈ ${(GREEN_CREATE_ASSUMED_SEC + GREEN_TEARDOWN_ASSUMED_SEC) / 60} min plus the group's window at the database's hourly price, priced per run by proxylab plan --suite blue-green`;

export interface ReplacedDatabaseGroup {
  /** How long the second database runs: creation + the group's window + teardown, seconds. */
  readonly lifetimeSec: number;
  /** What it bills for that time (the lab's database lines' hourly maximum); null: not priced. */
  readonly usd: number | null;
  /** The plan's line, after "before the group: ". */
  readonly text: string;
}

/** The second database of `scenario`'s group, or null when its disruption replaces nothing. */
export function replacedDatabaseGroup(
  scenario: Pick<Scenario, 'probe' | 'repetitions'>,
  estimate: { readonly lines: readonly CostLine[] } | string,
): ReplacedDatabaseGroup | null {
  const p = scenario.probe;
  if (p?.kind !== 'disruption' || disruptionAction(p.disruption.action).replacesDatabase !== true)
    return null;
  const windowSec = disruptionDurationSec(p);
  const lifetimeSec = GREEN_CREATE_ASSUMED_SEC + windowSec + GREEN_TEARDOWN_ASSUMED_SEC;
  const hours = lifetimeSec / 3600;
  const perHour =
    typeof estimate === 'string'
      ? null
      : estimate.lines
          .filter((l) => l.category === 'database' || l.category === 'storage')
          .reduce((sum, l) => sum + l.usdPerHourMax, 0);
  const cost = perHour === null ? null : perHour * hours * scenario.repetitions;
  const timing = `creation ≈ ${GREEN_CREATE_ASSUMED_SEC / 60} min (assumed: AWS states no figure; it grows with the database), the ${Math.round(windowSec / 60)}-min window, teardown ≈ ${GREEN_TEARDOWN_ASSUMED_SEC / 60} min`;
  const price =
    typeof estimate === 'string' || perHour === null || cost === null
      ? `not priced: ${typeof estimate === 'string' ? estimate : 'no database line'}`
      : `≈ ${usd(cost)} at the lab database's ${usd(perHour)}/h (instances and storage)`;
  return {
    lifetimeSec,
    usd: cost,
    text: `a Blue/Green deployment (CreateBlueGreenDeployment, not measured): a second database, the green copy, runs ≈ ${(hours * scenario.repetitions).toFixed(2)} h (${timing}) ${price}; the run's duration and cost above leave it out`,
  };
}
