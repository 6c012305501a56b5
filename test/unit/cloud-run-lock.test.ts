/**
 * The cloud run lock (lib/runner/run-lock.ts) against a mocked S3: created with If-None-Match *, a
 * 412 PreconditionFailed means another writer holds it (refused, naming it), a stale lock on this
 * host is replaced with If-Match on its ETag, and release deletes only our own lock.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { mockAws } from '../helpers/aws-calls/recorder';
import { RUNNER } from '../helpers/aws-calls/principals';
import { acquireCloudRunLock, cloudRunLockKey, type CloudLockHost } from '../../lib/runner/run-lock';
import { UsageError } from '../../lib/core/errors';
import type { RunLockOwner } from '../../lib/results/run-lock';
import { s3BodyText } from '../helpers/s3-body';

const s3Mock = mockAws(S3Client, RUNNER);
const BUCKET = 'results';
const KEY = cloudRunLockKey('r1', 0);

function host(name: string, alive: Record<number, number>, pid = 300): CloudLockHost {
  return {
    hostname: () => name,
    pid: () => pid,
    isAlive: (p) => p in alive,
    procStartTicks: (p) => alive[p] ?? null,
  };
}

function preconditionFailed(): S3ServiceException {
  return new S3ServiceException({
    name: 'PreconditionFailed',
    $fault: 'client',
    $metadata: { httpStatusCode: 412 },
    message: 'At least one of the pre-conditions you specified did not hold',
  });
}

function held(owner: Partial<RunLockOwner>): never {
  const o: RunLockOwner = {
    schemaVersion: 1,
    runId: 'r1',
    host: 'ip-10-0-0-5',
    pid: 100,
    procStartTicks: 5000,
    command: 'proxylab-runner --run-id r1',
    acquiredAt: '2026-11-22T18:00:00.000Z',
    ...owner,
  };
  const text = JSON.stringify(o);
  return { Body: { transformToString: () => Promise.resolve(text) }, ETag: '"stale-etag"' } as never;
}

beforeEach(() => s3Mock.reset());

describe('the cloud run lock', () => {
  test('is created with a conditional write (If-None-Match: *) at runs/<id>/locks/runner-<i>.lock', async () => {
    s3Mock.on(PutObjectCommand).resolves({});
    const lock = await acquireCloudRunLock(new S3Client({}), BUCKET, {
      runId: 'r1',
      runnerIndex: 0,
      command: 'runner',
      host: host('ip-10-0-0-5', { 300: 7 }),
    });
    const put = s3Mock.commandCalls(PutObjectCommand)[0]?.args[0].input;
    expect(put).toMatchObject({ Bucket: BUCKET, Key: 'runs/r1/locks/runner-0.lock', IfNoneMatch: '*' });
    expect(JSON.parse(s3BodyText(put?.Body))).toMatchObject({
      pid: 300,
      procStartTicks: 7,
      host: 'ip-10-0-0-5',
    });
    expect(lock.key).toBe(KEY);
  });

  test('412 PreconditionFailed with a live holder: refused (exit 2) naming it, nothing overwritten', async () => {
    s3Mock.on(PutObjectCommand).rejects(preconditionFailed());
    s3Mock.on(GetObjectCommand).resolves(held({ host: 'ip-10-0-0-9' }));
    const run = acquireCloudRunLock(new S3Client({}), BUCKET, {
      runId: 'r1',
      runnerIndex: 0,
      command: 'runner',
      host: host('ip-10-0-0-5', {}),
    });
    await expect(run).rejects.toBeInstanceOf(UsageError);
    await expect(run).rejects.toThrow(
      `run r1 is already being written: it is held by pid 100 on ip-10-0-0-9 since 2026-11-22T18:00:00.000Z (proxylab-runner --run-id r1)`,
    );
    expect(s3Mock.commandCalls(PutObjectCommand)).toHaveLength(1);
  });

  test('a stale lock on this host (pid gone) is replaced with If-Match on its ETag, with a message', async () => {
    s3Mock.on(PutObjectCommand, { IfNoneMatch: '*' }).rejects(preconditionFailed());
    s3Mock.on(PutObjectCommand, { IfMatch: '"stale-etag"' }).resolves({});
    s3Mock.on(GetObjectCommand).resolves(held({}));
    const lines: string[] = [];
    await acquireCloudRunLock(new S3Client({}), BUCKET, {
      runId: 'r1',
      runnerIndex: 0,
      command: 'runner',
      host: host('ip-10-0-0-5', { 300: 7 }),
      log: (l) => lines.push(l),
    });
    expect(s3Mock.commandCalls(PutObjectCommand).map((c) => c.args[0].input.IfMatch)).toEqual([
      undefined,
      '"stale-etag"',
    ]);
    expect(lines.join('\n')).toMatch(/Taking over run r1: its lock was held by pid 100 on ip-10-0-0-5/);
  });

  test('two takers of one stale lock: the one whose If-Match fails (412) is refused', async () => {
    s3Mock.on(PutObjectCommand).rejects(preconditionFailed());
    s3Mock.on(GetObjectCommand).resolves(held({}));
    await expect(
      acquireCloudRunLock(new S3Client({}), BUCKET, {
        runId: 'r1',
        runnerIndex: 0,
        command: 'runner',
        host: host('ip-10-0-0-5', { 300: 7 }),
      }),
    ).rejects.toThrow(/run r1 is already being written/);
  });

  test('release deletes the lock only while it is still ours', async () => {
    s3Mock.on(PutObjectCommand).resolves({});
    const lock = await acquireCloudRunLock(new S3Client({}), BUCKET, {
      runId: 'r1',
      runnerIndex: 0,
      command: 'runner',
      host: host('ip-10-0-0-5', { 300: 7 }),
    });
    s3Mock.on(GetObjectCommand).resolves(held({ pid: 999 }));
    await lock.release();
    expect(s3Mock.commandCalls(DeleteObjectCommand)).toHaveLength(0);
  });
});

describe('release by its owner (issue 20, defect 1)', () => {
  test('deletes exactly its own key — a call the runner role must be allowed (checked after the test)', async () => {
    // GIVEN a lock this runner holds
    s3Mock.on(PutObjectCommand).resolves({});
    const lock = await acquireCloudRunLock(new S3Client({}), BUCKET, {
      runId: 'r1',
      runnerIndex: 0,
      command: 'runner',
      host: host('ip-10-0-0-5', { 300: 7 }),
    });
    const mine = JSON.stringify(lock.owner, null, 2) + '\n';
    s3Mock
      .on(GetObjectCommand)
      .resolves({ Body: { transformToString: () => Promise.resolve(mine) } } as never);
    // WHEN it ends
    await lock.release();
    // THEN the lock object goes (the IAM check fails this test when the runner role lacks
    // s3:DeleteObject on runs/*/locks/runner-*.lock)
    expect(s3Mock.commandCalls(DeleteObjectCommand).map((c) => c.args[0].input)).toEqual([
      { Bucket: BUCKET, Key: KEY },
    ]);
  });

  test('then a replacement runner (another host) takes the run slot without "held by"', async () => {
    // GIVEN runner A held and released the slot: the key is free again
    const objects = new Map<string, string>();
    s3Mock.on(PutObjectCommand).callsFake((input: { Key: string; Body: string; IfNoneMatch?: string }) => {
      if (input.IfNoneMatch === '*' && objects.has(input.Key)) throw preconditionFailed();
      objects.set(input.Key, input.Body);
      return {};
    });
    s3Mock.on(GetObjectCommand).callsFake((input: { Key: string }) => {
      const text = objects.get(input.Key);
      if (text === undefined) throw Object.assign(new Error('no such key'), { name: 'NoSuchKey' });
      return { Body: { transformToString: () => Promise.resolve(text) } };
    });
    s3Mock.on(DeleteObjectCommand).callsFake((input: { Key: string }) => {
      objects.delete(input.Key);
      return {};
    });
    const s3 = new S3Client({});
    const a = await acquireCloudRunLock(s3, BUCKET, {
      runId: 'r1',
      runnerIndex: 0,
      command: 'runner A',
      host: host('ip-10-0-0-5', { 300: 7 }),
    });
    await a.release();
    // WHEN runner B on another host resumes the run
    const b = await acquireCloudRunLock(s3, BUCKET, {
      runId: 'r1',
      runnerIndex: 0,
      command: 'runner B',
      host: host('ip-10-0-0-9', { 300: 7 }),
    });
    // THEN it holds the slot
    expect(b.owner.host).toBe('ip-10-0-0-9');
    expect(JSON.parse(objects.get(KEY) ?? '{}')).toMatchObject({ host: 'ip-10-0-0-9', command: 'runner B' });
  });
});
