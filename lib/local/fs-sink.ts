/**
 * ResultSink on the local filesystem: the run store (lib/results/run-store.ts) on a run directory
 * (lib/results/fs-blob-store.ts). Every file is written atomically, a step's raw files land before its JSON,
 * and every read is checked against lib/results/schemas.ts.
 */
import type { WriteFileFn } from '../core/atomic-write';
import { RunStore } from '../results/run-store';
import { stepPaths } from '../results/run-paths';
import type { StepRecord } from '../suite/types';
import { FileSystemBlobStore } from '../results/fs-blob-store';

// Shared with the cloud adapter (fetch), so it lives in lib/core.
export { writeFileAtomic } from '../core/atomic-write';
// Moved to the run store; re-exported for existing callers.
export { mergeSeries } from '../results/run-store';

export class FileSystemSink extends RunStore {
  /** @param write writes a temporary file (tests inject a failing one to simulate a full disk). */
  constructor(
    readonly runDir: string,
    write?: WriteFileFn,
  ) {
    super(new FileSystemBlobStore(runDir, write));
  }

  /** Paths relative to the run directory, as StepRecord.files records them. */
  static stepFiles(stepId: string, hasLog: boolean): StepRecord['files'] {
    const p = stepPaths(stepId);
    return { stdout: p.stdout, stderr: p.stderr, log: hasLog ? p.log : null };
  }
}
