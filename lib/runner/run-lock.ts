/**
 * One writer per cloud run slot: `runs/<runId>/locks/runner-<i>.lock` in the results bucket, created
 * with an S3 conditional write — PutObject with `If-None-Match: *` succeeds only when no object has
 * that key, else S3 answers 412 Precondition Failed (S3 User Guide, "How to prevent object
 * overwrites with conditional writes": https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html;
 * botocore s3 PutObject input member `IfNoneMatch`, header `If-None-Match`). A concurrent create of
 * the same key can also answer 409 ConditionalRequestConflict; both mean "someone else has it".
 *
 * A held lock is judged like the local one (lib/local/run-lock.ts), by lib/results/run-lock.ts: on the
 * same host with its pid gone or reused it is taken over — with `If-Match: <etag>` of the stale lock,
 * so two takers cannot both win — and from another host it is refused, naming the holder.
 */
import { cloudRunLockKey } from '../config/stack-outputs';
import { parseProcStartTicks } from '../core/proc-stat';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  describeLockOwner,
  lockOwnerAlive,
  newLockOwner,
  parseLockOwner,
  runLockedError,
  type LockOwnerProbe,
  type RunLockOwner,
} from '../results/run-lock';

export { cloudRunLockKey };

/** What the lock asks of this machine; injectable for tests. */
export interface CloudLockHost extends LockOwnerProbe {
  hostname(): string;
  pid(): number;
}

export const nodeLockHost: CloudLockHost = {
  hostname: () => os.hostname(),
  pid: () => process.pid,
  procStartTicks: (pid) => {
    try {
      return parseProcStartTicks(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return null;
    }
  },
  isAlive: (pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
};

function isConditionFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return (
    err.name === 'PreconditionFailed' ||
    err.name === 'ConditionalRequestConflict' ||
    status === 412 ||
    status === 409
  );
}

export interface CloudRunLock {
  readonly owner: RunLockOwner;
  readonly key: string;
  release(): Promise<void>;
}

export async function acquireCloudRunLock(
  s3: S3Client,
  bucket: string,
  opts: {
    readonly runId: string;
    readonly runnerIndex: number;
    readonly command: string;
    readonly host?: CloudLockHost;
    readonly log?: (line: string) => void;
    readonly now?: Date;
  },
): Promise<CloudRunLock> {
  const host = opts.host ?? nodeLockHost;
  const key = cloudRunLockKey(opts.runId, opts.runnerIndex);
  const where = `s3://${bucket}/${key}`;
  const pid = host.pid();
  const owner = newLockOwner({
    runId: opts.runId,
    command: opts.command,
    host: host.hostname(),
    pid,
    procStartTicks: host.procStartTicks(pid),
    ...(opts.now ? { now: opts.now } : {}),
  });
  const body = JSON.stringify(owner, null, 2) + '\n';
  const put = (condition: { IfNoneMatch: '*' } | { IfMatch: string }): Promise<unknown> =>
    s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: body,
        ContentType: 'application/json',
        ...condition,
      }),
    );
  const lock: CloudRunLock = {
    owner,
    key,
    release: async () => {
      const now = await readLock(s3, bucket, key);
      if (now?.text === body) await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
  };
  try {
    await put({ IfNoneMatch: '*' });
    return lock;
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
  }
  const held = await readLock(s3, bucket, key);
  const heldOwner = held ? parseLockOwner(held.text) : null;
  if (!held || !heldOwner || heldOwner.host !== owner.host || lockOwnerAlive(heldOwner, host))
    throw runLockedError(opts.runId, where, heldOwner);
  try {
    // Replace exactly the stale lock we judged: a racing taker makes this fail with 412.
    await put(held.etag ? { IfMatch: held.etag } : { IfNoneMatch: '*' });
  } catch (err) {
    if (isConditionFailure(err))
      throw runLockedError(opts.runId, where, parseLockOwner((await readLock(s3, bucket, key))?.text ?? ''));
    throw err;
  }
  opts.log?.(
    `Taking over run ${opts.runId}: its lock was held by ${describeLockOwner(heldOwner)}, which is no longer running.`,
  );
  return lock;
}

async function readLock(
  s3: S3Client,
  bucket: string,
  key: string,
): Promise<{ text: string; etag: string | null } | null> {
  try {
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return { text: (await res.Body?.transformToString('utf-8')) ?? '', etag: res.ETag ?? null };
  } catch (err) {
    if (err instanceof Error && (err.name === 'NoSuchKey' || err.name === 'NotFound')) return null;
    throw err;
  }
}
