/**
 * Hung is a result (issue 40, item 2). A pgbench step that outlives its duration plus its grace and
 * is stopped by the harness is `hung`: never a success, never "< 0.1 % errors".
 *
 * Two stops, both stated in the step's note:
 *  - early: a `-T` step still running HUNG_GRACE_SEC after its planned duration while the database
 *    sampler saw clients waiting on a heavyweight lock in each of the last HUNG_LOCK_SAMPLES samples
 *    (a leaked advisory lock: those clients never finish, pgbench waits for them forever);
 *  - the step timeout (plan.json `timeoutSec`: 1.5 × the duration + 60 s, or 120 s + for `-t`), for
 *    whatever else keeps pgbench from ending.
 * Either way each client's attempt still in flight is a hung attempt: pgbench prints nothing for a
 * run it did not finish, so every client of the step is counted (the `timeout` error class).
 */
import {
  describeActivity,
  stuckOnLocks,
  type DatabaseActivity,
  type DbActivitySample,
} from '../suite/db-activity';
import type { PlannedStep } from '../suite/expand';
import type { ErrorSummary, StepMeasurement, StepRecord } from '../suite/types';
import type { Clock } from './ports';

/** Seconds past its planned duration a `-T` step may run before lock waits make it hung. */
export const HUNG_GRACE_SEC = 10;
/** Consecutive samples (one a second) that must all show lock waiters. */
export const HUNG_LOCK_SAMPLES = 3;

/** Watches one step's database samples and aborts `signal` once the step is hung on locks. */
export class HungCheck {
  private readonly controller = new AbortController();
  private why: string | null = null;

  constructor(
    private readonly step: PlannedStep,
    private readonly clock: Clock,
    private readonly start: Date,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the step was stopped early, or null when it was not. */
  get reason(): string | null {
    return this.why;
  }

  /** The watch's onSample: decides on every sample, returns at once. */
  readonly onSample = (samples: readonly DbActivitySample[]): void => {
    const planned = this.step.params.durationSec;
    if (this.why !== null || planned === null) return;
    const elapsed = (this.clock.now().getTime() - this.start.getTime()) / 1000;
    if (elapsed < planned + HUNG_GRACE_SEC || !stuckOnLocks(samples, HUNG_LOCK_SAMPLES)) return;
    this.why = `still running ${Math.round(elapsed)} s into a ${planned}-s step with clients waiting on a lock for ${HUNG_LOCK_SAMPLES} s (grace ${HUNG_GRACE_SEC} s)`;
    this.controller.abort();
  };
}

/** A harness stop as an error class: each client's unfinished attempt (the parser may already have one). */
export function withHungError(m: StepMeasurement, clients: number, stoppedAfter: string): StepMeasurement {
  const hung: ErrorSummary = {
    class: 'timeout',
    count: clients,
    sample: `stopped by the harness ${stoppedAfter}: ${clients} client attempt${clients === 1 ? '' : 's'} unfinished`,
  };
  return { ...m, complete: false, errors: [...m.errors.filter((e) => e.class !== 'timeout'), hung] };
}

/**
 * The database's activity stored in the step, and for a hung step what it showed in the note, first
 * (the console line, summary and report print the note): `hung: … ; 14 clients waiting on
 * Lock/advisory held by a backend (pid 42) idle for 41 s`.
 */
export function withDatabaseActivity(record: StepRecord, activity: DatabaseActivity | undefined): StepRecord {
  if (activity === undefined) return record;
  const withActivity = { ...record, databaseActivity: activity };
  if (record.status !== 'hung') return withActivity;
  const line = `database when stopped: ${describeActivity(activity)}`;
  return { ...withActivity, note: record.note ? `${record.note}; ${line}` : line };
}
