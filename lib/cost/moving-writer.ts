/**
 * CPU credits of an Aurora lab whose suites fail over: the writer role, and the suites' load with
 * it, moves between instances (pure; used by ./database-lines.ts).
 */
import { cloudDisruptionsOf } from '../config/disruptions';
import { disruptionAction } from '../suite/disruption-actions';
import type { AuroraDatabaseConfig, LabConfig } from '../config/types';

/** The lab's suites fail the cluster over (FailoverDBCluster): the writer role moves to a reader. */
export function failsOver(lab: LabConfig, db: AuroraDatabaseConfig): boolean {
  return (
    db.readers > 0 && cloudDisruptionsOf(lab.suites, db.engine).some((a) => disruptionAction(a).movesWriter)
  );
}

/**
 * The credits line of a lab that fails over: the load follows the writer role from one instance to
 * another, so the surplus is billed to whichever holds it. Each instance in Unlimited mode bills its
 * own surplus only (its CPU over its own baseline, "average CPU utilization over a rolling 24-hour
 * period": RDS pricing, as quoted in SOURCES['rds-cpu-credits-2026']), and the suites load one
 * writer at a time, so the instances together bill at most one loaded instance's surplus per hour:
 * the same quantity, priced once — a second line for the reader would count the same load twice.
 */
export function withMovingWriter<L extends { readonly note: string }>(line: L, roles: readonly string[]): L {
  return {
    ...line,
    note:
      `${line.note}; the suites fail over (FailoverDBCluster), so the writer role, and the load with it, moves ` +
      `between the ${roles.join(' and ')} instances: each bills the surplus of the hours it holds the role, one at a ` +
      'time, together at most this',
  };
}
