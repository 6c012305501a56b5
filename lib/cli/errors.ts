/**
 * Errors the CLI maps to exit codes. Library code throws these; only scripts/cli.ts exits.
 *
 * Exit codes (documented in README):
 *   0  the work ran and every verdict held
 *   1  it ran but a step broke an expectation, or the infrastructure failed
 *   2  usage or configuration error (bad flags, invalid lab file, bad input file)
 */
export class UsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Something outside the user's input failed (a server did not start, AWS refused...). */
export class InfrastructureError extends Error {
  readonly exitCode = 1;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'InfrastructureError';
  }
}

export function exitCodeFor(err: unknown): number {
  if (err && typeof err === 'object' && 'exitCode' in err && typeof err.exitCode === 'number') {
    return (err as { exitCode: number }).exitCode;
  }
  return 1;
}
