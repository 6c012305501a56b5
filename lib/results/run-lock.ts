/**
 * One writer per run: the owner record a run directory's lock holds (`run.lock` locally,
 * `runs/<runId>/run.lock` in the results bucket). Pure data and messages; the local adapter
 * (lib/local/run-lock.ts) and the cloud one (lib/runner/run-lock.ts) create, judge and remove it.
 */
import { z } from 'zod';
import { UsageError } from '../core/errors';
import { parseJsonText } from '../core/json-text';

export interface RunLockOwner {
  readonly schemaVersion: 1;
  readonly runId: string;
  readonly host: string;
  readonly pid: number;
  /** Start time of the process (field 22 of /proc/<pid>/stat); null without /proc. A reused pid differs. */
  readonly procStartTicks: number | null;
  /** The command that holds the run (`proxylab local --suite smoke …`), for the person refused. */
  readonly command: string;
  readonly acquiredAt: string;
}

export const runLockOwnerSchema = z.object({
  schemaVersion: z.literal(1),
  runId: z.string(),
  host: z.string(),
  pid: z.number().int().positive(),
  procStartTicks: z.number().int().nonnegative().nullable(),
  command: z.string(),
  acquiredAt: z.string(),
});

/** The owner record for process `pid` of this machine, taking run `runId` now. */
export function newLockOwner(o: {
  readonly runId: string;
  readonly command: string;
  readonly host: string;
  readonly pid: number;
  readonly procStartTicks: number | null;
  readonly now?: Date;
}): RunLockOwner {
  return {
    schemaVersion: 1,
    runId: o.runId,
    host: o.host,
    pid: o.pid,
    procStartTicks: o.procStartTicks,
    command: o.command,
    acquiredAt: (o.now ?? new Date()).toISOString(),
  };
}

/**
 * The owner record in a lock's text; null when it is not one (half written, another format, a key
 * given twice — `"pid": 1, "pid": 2` is no owner to judge). A lock that holds none is never taken over.
 */
export function parseLockOwner(text: string): RunLockOwner | null {
  try {
    const r = runLockOwnerSchema.safeParse(
      parseJsonText(text, { source: 'run.lock', rejectDuplicateKeys: true }),
    );
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** What judging a lock's owner asks of the machine it runs on (the adapters give /proc and kill 0). */
export interface LockOwnerProbe {
  isAlive(pid: number): boolean;
  /** Start time of a process (/proc/<pid>/stat field 22); null when gone or unknown. */
  procStartTicks(pid: number): number | null;
}

/** Is the lock's process still the one that took it? A live pid with another start time was reused. */
export function lockOwnerAlive(owner: RunLockOwner, probe: LockOwnerProbe): boolean {
  if (!probe.isAlive(owner.pid)) return false;
  if (owner.procStartTicks === null) return true;
  const now = probe.procStartTicks(owner.pid);
  return now === null || now === owner.procStartTicks;
}

/** `pid 4242 on host-a since 2026-11-22T18:00:00Z (proxylab local --suite smoke)`. */
export function describeLockOwner(owner: RunLockOwner): string {
  return `pid ${owner.pid} on ${owner.host} since ${owner.acquiredAt} (${owner.command})`;
}

/** A second writer of a live run: exit 2, code `run-locked`, naming the holder and where the lock is. */
export function runLockedError(runId: string, where: string, owner: RunLockOwner | null): UsageError {
  const who = owner ? `it is held by ${describeLockOwner(owner)}` : `its lock ${where} cannot be read`;
  return new UsageError(
    `run ${runId} is already being written: ${who}. Wait for it to finish, or use another --run-id.` +
      ` (If that process is gone and its host is another machine, remove ${where} by hand.)`,
    { code: 'run-locked' },
  );
}
