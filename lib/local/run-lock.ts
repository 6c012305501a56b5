/**
 * One writer per local run directory: `<runDir>/run.lock` names the process writing the run (host,
 * pid, process start time, command). It is created with link(2) from a complete temp file, so it
 * appears whole or not at all, and only one of two racing writers gets it. A second writer is
 * refused (UsageError `run-locked`, exit 2) naming the holder. A lock whose owner is gone — same
 * host, pid not running, a zombie, or the pid reused by another process (other start time) — is
 * taken over with a message; a lock from another host is never judged (its pids mean nothing here).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkWritableDirIn, readFileIn } from '../core/read';
import { RUN_PATHS } from '../results/run-paths';
import {
  describeLockOwner,
  lockOwnerAlive,
  newLockOwner,
  parseLockOwner,
  runLockedError,
  type RunLockOwner,
} from '../results/run-lock';
import { nodeReapSystem, type ReapSystem } from './reap';

/** What the lock asks of the machine (the reaper's liveness checks, zombies included); injectable. */
export type LockSystem = Pick<ReapSystem, 'isAlive' | 'procStartTicks' | 'hostname'>;

export interface RunLock {
  readonly owner: RunLockOwner;
  readonly file: string;
  /** Remove the lock if it is still this process's (idempotent). */
  release(): void;
}

export interface AcquireRunLockOptions {
  readonly runId: string;
  readonly command: string;
  readonly sys?: LockSystem;
  /** Told when a dead owner's lock is taken over. */
  readonly log?: (line: string) => void;
  readonly now?: Date;
  /** This process (tests pretend to be another one). @default process.pid */
  readonly pid?: number;
}

/** A lock file of the run directory, through lib/core/read.ts (no link followed, no FIFO, bounded). */
function readOrNull(file: string): string | null {
  return readFileIn(path.dirname(file), path.basename(file), 'runFile');
}

/**
 * Takes the run directory's lock, creating the directory. `runs/<id>` itself must be a real
 * directory: a symbolic link there (or a file) is refused before anything is written, as a linked
 * `steps/` below it is (lib/core/read.ts checkWritableDirIn: FileReadError `symlink-refused`, exit 2)
 * — through the link, the run and its lock would be written wherever it points.
 */
export function acquireRunLock(runDir: string, opts: AcquireRunLockOptions): RunLock {
  const sys = opts.sys ?? nodeReapSystem();
  const pid = opts.pid ?? process.pid;
  const abs = path.resolve(runDir);
  checkWritableDirIn(path.dirname(abs), path.basename(abs));
  fs.mkdirSync(runDir, { recursive: true });
  const file = path.join(runDir, RUN_PATHS.lock);
  const owner = newLockOwner({
    runId: opts.runId,
    command: opts.command,
    host: sys.hostname(),
    pid,
    procStartTicks: sys.procStartTicks(pid),
    ...(opts.now ? { now: opts.now } : {}),
  });
  const text = JSON.stringify(owner, null, 2) + '\n';
  const unique = `${pid}.${randomBytes(4).toString('hex')}`;
  const tmp = path.join(runDir, `.${RUN_PATHS.lock}.${unique}.tmp`);
  fs.writeFileSync(tmp, text, { flag: 'wx' });
  try {
    // A few rounds: a stale lock moved aside can be re-taken by a racing writer between our steps.
    for (let round = 0; round < 3; round++) {
      try {
        fs.linkSync(tmp, file);
        return {
          owner,
          file,
          release: () => {
            if (readOrNull(file) === text) fs.rmSync(file, { force: true });
          },
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      const heldText = readOrNull(file);
      if (heldText === null) continue; // released in between: try again
      const held = parseLockOwner(heldText);
      if (held === null || held.host !== owner.host || lockOwnerAlive(held, sys))
        throw runLockedError(opts.runId, file, held);
      // The owner is gone: move its lock aside, and make sure what moved is the lock judged dead.
      const aside = path.join(runDir, `.${RUN_PATHS.lock}.${unique}.stale`);
      try {
        fs.renameSync(file, aside);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw e;
      }
      const moved = readOrNull(aside);
      if (moved !== heldText) {
        // Another writer took it over first: give its lock back and judge again.
        try {
          fs.linkSync(aside, file);
        } catch {
          /* a third writer holds it now; the next round judges that one */
        }
        fs.rmSync(aside, { force: true });
        continue;
      }
      fs.rmSync(aside, { force: true });
      opts.log?.(
        `Taking over run ${opts.runId}: its lock was held by ${describeLockOwner(held)}, which is no longer running.`,
      );
    }
    throw runLockedError(opts.runId, file, parseLockOwner(readOrNull(file) ?? ''));
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}
