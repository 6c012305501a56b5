/**
 * The small core every layer may import: errors with codes. Library code throws these; only the
 * CLI (scripts/cli.ts) turns them into exit codes, and only the CLI exits.
 *
 * Exit codes (documented in the README):
 *   0  the work ran and every verdict held
 *   1  it ran but a step broke an expectation, or the infrastructure failed
 *   2  usage or configuration error (bad flags, invalid lab file, bad input file)
 *
 * Each error carries a stable `code` (kebab-case, e.g. `run-suite-mismatch`) so tests and callers
 * match what went wrong without matching message text; messages are for people.
 */

export interface ProxylabErrorOptions {
  /** Stable identifier of what went wrong; defaults to the error kind (`usage`, `infrastructure`). */
  readonly code?: string;
  readonly cause?: unknown;
}

/** Base of the project's errors: a code for programs, a message for people, an exit code for the CLI. */
export abstract class ProxylabError extends Error {
  abstract readonly exitCode: number;
  readonly code: string;
  protected constructor(message: string, defaultCode: string, options?: ProxylabErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = options?.code ?? defaultCode;
  }
}

/** The user's input is wrong (flags, lab file, run directory): exit 2, before any work where possible. */
export class UsageError extends ProxylabError {
  readonly exitCode = 2;
  constructor(message: string, options?: ProxylabErrorOptions) {
    super(message, 'usage', options);
    this.name = 'UsageError';
  }
}

/** Something outside the user's input failed (a server did not start, AWS refused…): exit 1. */
export class InfrastructureError extends ProxylabError {
  readonly exitCode = 1;
  constructor(message: string, options?: ProxylabErrorOptions) {
    super(message, 'infrastructure', options);
    this.name = 'InfrastructureError';
  }
}

/**
 * A run directory's file does not fit its schema (lib/results/schemas.ts): names the file, the field
 * (null when the file is not even JSON) and what was expected. Exit 2, code `run-file-invalid`.
 */
export class RunFileError extends UsageError {
  constructor(
    readonly file: string,
    readonly field: string | null,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`, { code: 'run-file-invalid' });
    this.name = 'RunFileError';
  }
}

/**
 * The run was stopped by a signal before it measured anything: exit 128 + the signal's number, as
 * shells expect (130 for Ctrl-C, 129 SIGHUP, 131 SIGQUIT, 143 SIGTERM).
 */
export class InterruptedError extends ProxylabError {
  readonly exitCode: number;
  constructor(
    readonly signal: NodeJS.Signals,
    message: string,
    options?: ProxylabErrorOptions,
  ) {
    super(message, 'interrupted', options);
    this.name = 'InterruptedError';
    this.exitCode = 128 + (SIGNAL_NUMBERS[signal] ?? 0);
  }
}

/** POSIX numbers of the signals proxylab handles (the same on Linux and macOS). */
const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGPIPE: 13,
  SIGTERM: 15,
};

export function exitCodeFor(err: unknown): number {
  if (err instanceof ProxylabError) return err.exitCode;
  if (err && typeof err === 'object' && 'exitCode' in err && typeof err.exitCode === 'number') {
    return err.exitCode;
  }
  return 1;
}
