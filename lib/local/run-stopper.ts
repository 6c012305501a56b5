/**
 * How a local run stops (phase 3 of lib/local/run-local.ts): the signals it handles, which one it
 * reports, what it says, and whether the run directory is kept.
 */
import { InterruptedError } from '../core/errors';
import type { ProgressEvent } from '../engine/run-suite';
import type { RunManifest } from '../suite/types';

/**
 * Signals that stop a run cleanly (servers stopped, manifest `interrupted`, exit 128 + signal):
 * Ctrl-C, `kill`, a closed terminal or SSH session (SIGHUP), and Ctrl-\ (SIGQUIT). Without a
 * handler, SIGHUP and SIGQUIT would end proxylab at once and leave both servers running.
 */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

/**
 * Phase 3: how a local run stops. The first of STOP_SIGNALS (or a closed stdout, as SIGPIPE: `proxylab
 * local | head` stops the run like Ctrl-C does, rather than crashing with EPIPE and leaving the manifest
 * at "running") aborts the run and is the one the run reports; a second only says it is still stopping.
 * The handlers are on until the servers are stopped (runLocal's end): a signal after that — while
 * the CLI prints the summary or writes the report — has its default effect and ends proxylab with
 * that signal (docs/local.md, exit codes).
 */
export class RunStopper {
  readonly abort = new AbortController();
  private by: NodeJS.Signals | null = null;
  // Before the first step starts — initdb, server start, the data load (`pgbench -i`) — an interrupt
  // has nothing to keep, unless an earlier attempt of this run id measured some. Once a step has
  // started (a pgbench step, or a probe group such as a disruption's), the run directory is kept:
  // its manifest says interrupted, and the metrics sampled during the step stay with it, although
  // the step itself is not recorded (a resume runs it again).
  private started = false;
  // A step is recorded once the engine has stored it (step-end).
  private recorded = false;

  constructor(
    private readonly runId: string,
    private readonly keptBefore: boolean,
    private readonly log: (line: string) => void,
  ) {}

  /** The signal that interrupted the run, if any. */
  get interruptedBy(): NodeJS.Signals | null {
    return this.by;
  }

  readonly onSignal = (sig: NodeJS.Signals): void => {
    if (this.by !== null) {
      this.log(`${sig} again: still stopping, please wait…`);
      return;
    }
    this.by = sig;
    this.log(
      this.recorded || this.keptBefore
        ? `\n${sig}: stopping pgbench, PostgreSQL and PgBouncer; finished steps are kept (resume with --run-id ${this.runId})…`
        : this.started
          ? `\n${sig}: stopping the first step, PostgreSQL and PgBouncer; the step is not recorded, the run directory is kept with what was sampled during it (resume with --run-id ${this.runId})…`
          : `\n${sig}: stopping before the first step; nothing was measured…`,
    );
    this.abort.abort();
  };

  readonly onStdoutError = (err: NodeJS.ErrnoException): void => {
    // Only once: the "stopping" line itself goes to the closed pipe and fails the same way.
    if (err.code === 'EPIPE' && this.by === null) this.onSignal('SIGPIPE');
  };

  /** The engine's progress, passed on; a step started (step-start) means there is something to keep. */
  progress(next?: (ev: ProgressEvent) => void): (ev: ProgressEvent) => void {
    return (ev) => {
      if (ev.type === 'step-start') this.started = true;
      if (ev.type === 'step-end') this.recorded = true;
      next?.(ev);
    };
  }

  /** The handlers on the process; the returned function takes them off again. */
  install(): () => void {
    for (const sig of STOP_SIGNALS) process.on(sig, this.onSignal);
    process.stdout.on('error', this.onStdoutError);
    return () => {
      for (const sig of STOP_SIGNALS) process.removeListener(sig, this.onSignal);
      process.stdout.removeListener('error', this.onStdoutError);
    };
  }

  /** An interrupted run that started no step, in this part or an earlier one. */
  nothingMeasured(status: RunManifest['status'], prev: RunManifest | null): boolean {
    return status === 'interrupted' && !this.started && !this.recorded && !this.keptBefore && prev === null;
  }

  /** The error of an interrupt before the first step (exit 128 + the signal's number). */
  interrupted(cause?: unknown): InterruptedError {
    const sig = this.by ?? 'SIGINT';
    return new InterruptedError(sig, `interrupted by ${sig} before the first step; nothing was measured`, {
      cause,
    });
  }
}
