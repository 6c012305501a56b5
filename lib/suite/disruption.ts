/**
 * The disruption probe kind (pure): what a disruption scenario asks for (`DisruptionProbe`, its
 * `Scenario.probe`) and what one of its steps measured (`DisruptionResult`, the step's `probe`).
 *
 * A disruption step is one target × one connect mode of one repetition; every step of a repetition
 * runs together (lib/suite/probes.ts `together: 'repetition'`): probe clients on every target and
 * in both modes write into a ledger table at a fixed interval, the disruption is injected once at
 * T0 after the warm-up, and the clients keep writing through the recovery window. So one disruption
 * is seen by every target at once, on one clock. docs/disruptions.md describes each figure.
 */
import { DISRUPTION_ACTION_RECORDS, type DisruptionActionName } from './disruption-actions';
import { clientTimeoutsProblems, type ClientTimeouts } from './client-timeouts';
import { loadProblems, type BackgroundLoad, type BackgroundLoadResult } from './disruption-load';
import type { ErrorClass } from './error-class';

export { defaultClientTimeouts, type ClientTimeouts } from './client-timeouts';

/**
 * Every disruption, local and cloud: the keys of the action records (./disruption-actions.ts, one
 * record per action with its words, world, engine, needs, grants and cost). Stored in plan.json and
 * results: never rename one.
 */
export type DisruptionAction = DisruptionActionName;
export const DISRUPTION_ACTIONS = Object.keys(DISRUPTION_ACTION_RECORDS) as [
  DisruptionAction,
  ...DisruptionAction[],
];

/** PostgreSQL's shutdown modes a restart may use (pg_ctl -m). */
export const SHUTDOWN_MODES = ['fast', 'immediate'] as const;
export type ShutdownMode = (typeof SHUTDOWN_MODES)[number];

export interface Disruption {
  readonly action: DisruptionAction;
  /** postgres-restart only: how the server is stopped (`fast`: SIGINT, `immediate`: SIGQUIT). null otherwise. */
  readonly shutdown: ShutdownMode | null;
  /**
   * blue-green-switchover only: SwitchoverBlueGreenDeployment's SwitchoverTimeout, seconds ("The
   * amount of time, in seconds, for the switchover to complete. Default: 300. If the switchover takes
   * longer than the specified duration, then any changes are rolled back", botocore rds model).
   * Absent: AWS's default.
   */
  readonly switchoverTimeoutSec?: number;
}

/** Scenario.probe of a disruption scenario. */
export interface DisruptionProbe {
  readonly kind: 'disruption';
  readonly disruption: Disruption;
  /** Each probe client issues one write this often. 20–1000. */
  readonly intervalMs: number;
  /** Probing before T0; its latencies are the baseline (p99) stalls and recovery are measured against. */
  readonly warmupSec: number;
  /** Probing after T0: the recovery window. */
  readonly recoverySec: number;
  /**
   * The probe clients' own timeouts: part of the question (a client that gives up sooner turns a
   * wait into a failure), so a setting of the scenario, recorded with each step's result.
   */
  readonly clientTimeouts: ClientTimeouts;
  /**
   * pgbench through every probed target from the warm-up's start until the window closes (issue 42):
   * what production sees is a disruption under load. Absent: the probes alone.
   */
  readonly load?: BackgroundLoad;
}

/** How the probe's clients connect: `persistent` reconnects when it loses its connection; `per-transaction` connects for each write. */
export type ProbeConnectMode = 'persistent' | 'per-transaction';

/** A server- or API-side event of the disruption, on the run's clock. */
export interface DisruptionEvent {
  /** Milliseconds from T0 (negative: before it). */
  readonly atMs: number;
  /** `stop-issued`, `server-down`, `promote-issued`, `promote-finished`, `server-up`, `resumed`, `FailoverDBCluster`, an RDS event's message… */
  readonly name: string;
  /** Who said so: the local stack, the API call, DescribeEvents, the writer poll. */
  readonly source: 'local' | 'api' | 'rds-events' | 'writer-poll' | 'pooler-agent';
  readonly detail: string | null;
}

/**
 * One attempt of the timeline: [ms from T0 at its start, latency ms (null: never answered —
 * abandoned at the window's end), outcome (`ok`, an error class — `client-timeout` when the client
 * gave up —, `open`: still waiting when the window ended, `unknown`), server address (null: unknown)].
 */
export type ProbeAttempt = readonly [number, number | null, string, string | null];

export interface ProbeErrorCount {
  readonly class: ErrorClass;
  /** PostgreSQL's SQLSTATE (57P01, 25006 …), when the server or pooler sent one. */
  readonly sqlstate: string | null;
  /** The socket's error code (ECONNREFUSED, ECONNRESET …) or `timeout`, when there was no SQLSTATE. */
  readonly code: string | null;
  readonly count: number;
  /** One message, as the client library gave it (never a password). */
  readonly sample: string;
}

/** The writes of one step, reconciled against the ledger table after the recovery window. */
export interface LedgerCheck {
  /** The client saw the commit. */
  readonly acknowledged: number;
  /** The client saw an error before the write could have been sent, or the server said it failed. */
  readonly failed: number;
  /** Sent, but no answer (connection lost, timeout): committed or not is read from the ledger. */
  readonly unknown: number;
  /** Of the unknown: found in the ledger afterwards. */
  readonly unknownCommitted: number;
  /** Of the unknown: not in the ledger afterwards. */
  readonly unknownNotCommitted: number;
  /** Acknowledged writes missing from the ledger: must be 0. null: the ledger could not be read. */
  readonly acknowledgedMissing: number | null;
  /** Ids found more than once in the ledger (a retried write applied twice). null: not read. */
  readonly duplicates: number | null;
  /** false when the ledger could not be read afterwards (every figure above that needs it is null). */
  readonly reconciled: boolean;
}

/** The figures of one target × mode (docs/disruptions.md). Every figure that could not be measured is null. */
export interface DisruptionFigures {
  /** T0 → the first failed attempt after T0; null: no error. */
  readonly timeToFirstErrorMs: number | null;
  /** First error → the first success after the last error; null: no error (or no success after it: see `recovered`). */
  readonly errorWindowMs: number | null;
  /** 10 × the warm-up p99 latency; null when the warm-up had no successful attempt. */
  readonly stallThresholdMs: number | null;
  /** Start of the first successful attempt above the threshold → end of the last one after T0; 0: none; null: no threshold. */
  readonly stallWindowMs: number | null;
  readonly maxLatencyMs: number | null;
  /** T0 → the rolling p99 (last second of attempts) back within 1.2 × the warm-up p99; null: not within the window. */
  readonly recoveryMs: number | null;
  /** Successful writes missing after T0 against the warm-up rate (area of the dip, in writes); null: no warm-up rate. */
  readonly throughputDip: number | null;
  /** A success after the last error or client timeout, before the window ended, and no attempt still waiting at its end. */
  readonly recovered: boolean;
  /** Connections (re)opened after T0 by persistent clients. */
  readonly reconnects: number;
  /** Writes refused as read-only (SQLSTATE 25006): a client that reached a standby. */
  readonly readOnlyRefusals: number;
  /**
   * Attempts after T0 the client gave up on at its own timeout (`client-timeout`): not in the error
   * window, which is the server's and the pooler's errors. Absent in runs written before the class.
   */
  readonly clientTimeouts?: number;
  /** Attempts still waiting for an answer when the window ended (abandoned then). Absent: older run. */
  readonly openAtEnd?: number;
  /**
   * The disruption was over inside the window: the clients were writing again after the last error
   * and client timeout, and no write was still waiting at its end (abandoned then, or already
   * stalled — waiting longer than the stall threshold — when it ended). false: errors or a stall
   * still open at the end. Absent: older run (not known).
   */
  readonly windowClosed?: boolean;
}

/** StepRecord.probe of a disruption step. */
export interface DisruptionResult {
  readonly kind: 'disruption';
  readonly disruption: Disruption;
  readonly mode: ProbeConnectMode;
  readonly clients: number;
  readonly intervalMs: number;
  /** The clients' own timeouts this step ran with (the scenario's). Absent in runs written before they were settings. */
  readonly clientTimeouts?: ClientTimeouts;
  /** When the disruption was issued (wall clock, ISO); null when it never was (the step failed before T0). */
  readonly t0: string | null;
  readonly events: readonly DisruptionEvent[];
  /**
   * Why `events` may be incomplete: RDS events still arriving after the runner's last read, or a
   * source it could not read (lib/runner/rds-events.ts). Absent: nothing known to be missing (and in
   * every run written before the runner re-read its events).
   */
  readonly timelineNote?: string;
  readonly warmup: {
    readonly attempts: number;
    readonly p50Ms: number | null;
    readonly p99Ms: number | null;
    /** Successful writes per second over the warm-up, all clients of the step. */
    readonly successPerSec: number | null;
  };
  /**
   * The probe's own floor on this target, before the warm-up: its SELECT 1 latency, pgbench's on the
   * same target (null where the run could not measure it), and how late its intervals fire.
   */
  readonly floor: {
    readonly selectP50Ms: number | null;
    readonly selectP99Ms: number | null;
    readonly pgbenchSelectP50Ms: number | null;
    readonly jitterP50Ms: number | null;
    readonly jitterP99Ms: number | null;
    readonly jitterMaxMs: number | null;
  };
  readonly figures: DisruptionFigures;
  readonly errors: readonly ProbeErrorCount[];
  readonly writes: LedgerCheck;
  /** Server addresses (inet_server_addr) the writes reached, in order of first appearance. */
  readonly servers: readonly string[];
  readonly attempts: readonly ProbeAttempt[];
  /** The background load through this step's target (the same in both modes' steps); absent: the scenario has none. */
  readonly load?: BackgroundLoadResult;
}

/** Bounds the catalog's disruption parameters must keep (validateDisruptionProbe). */
export const DISRUPTION_LIMITS = {
  intervalMs: { min: 20, max: 1000 },
  warmupSec: { min: 1, max: 600 },
  recoverySec: { min: 1, max: 3600 },
} as const;

/** Problems with a disruption probe's data (all at once); empty when valid. */
export function validateDisruptionProbe(scenario: string, p: DisruptionProbe): string[] {
  const problems: string[] = [];
  const within = (field: keyof typeof DISRUPTION_LIMITS, value: number, integer: boolean): void => {
    const { min, max } = DISRUPTION_LIMITS[field];
    if (!(value >= min && value <= max && (!integer || Number.isInteger(value))))
      problems.push(
        `${scenario}: probe.${field} must be ${integer ? 'an integer ' : ''}${min}–${max}, got ${value}`,
      );
  };
  within('intervalMs', p.intervalMs, true);
  within('warmupSec', p.warmupSec, false);
  within('recoverySec', p.recoverySec, false);
  problems.push(...clientTimeoutsProblems(scenario, p.clientTimeouts));
  if (p.load !== undefined) problems.push(...loadProblems(`${scenario}: probe.load`, p.load));
  if (!DISRUPTION_ACTIONS.includes(p.disruption.action))
    problems.push(
      `${scenario}: probe.disruption.action must be one of ${DISRUPTION_ACTIONS.join(', ')}, got ${String(p.disruption.action)}`,
    );
  const needsMode = p.disruption.action === 'postgres-restart';
  if (needsMode && !SHUTDOWN_MODES.includes(p.disruption.shutdown as ShutdownMode))
    problems.push(
      `${scenario}: probe.disruption.shutdown must be one of ${SHUTDOWN_MODES.join(', ')} for postgres-restart, got ${String(p.disruption.shutdown)}`,
    );
  if (!needsMode && p.disruption.shutdown !== null)
    problems.push(
      `${scenario}: probe.disruption.shutdown is for postgres-restart only, got ${p.disruption.shutdown} for ${p.disruption.action}`,
    );
  const timeout = p.disruption.switchoverTimeoutSec;
  if (timeout !== undefined && p.disruption.action !== 'blue-green-switchover')
    problems.push(
      `${scenario}: probe.disruption.switchoverTimeoutSec is for blue-green-switchover only, got ${timeout} for ${p.disruption.action}`,
    );
  else if (timeout !== undefined && !(Number.isInteger(timeout) && timeout >= 30 && timeout <= p.recoverySec))
    problems.push(
      `${scenario}: probe.disruption.switchoverTimeoutSec must be an integer 30–${p.recoverySec} (SwitchoverTimeout: "Minimum value of 30", RDS API Reference; within the recovery window, probe.recoverySec), got ${timeout}`,
    );
  return problems;
}

/** `disruption(postgres-restart fast)`: the step's script label. */
export function disruptionLabel(p: DisruptionProbe): string {
  const d = p.disruption;
  const load = p.load !== undefined ? `, load ${p.load.scenario}×${p.load.clients}` : '';
  return `disruption(${d.action}${d.shutdown !== null ? ` ${d.shutdown}` : ''}${load})`;
}

/** Seconds one repetition probes for (warm-up + recovery window). */
export function disruptionDurationSec(p: DisruptionProbe): number {
  return p.warmupSec + p.recoverySec;
}
