/**
 * The cloud run lock against moto_server's S3 (real HTTP, real conditional-write headers): a second
 * acquire of the same run slot is answered 412 by the server and refused naming the holder; a
 * released lock can be taken again, also by a replacement runner on another host. The runner's
 * client is recorded (test/helpers/aws-calls): every call is checked against the runner role.
 */
import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { acquireCloudRunLock, cloudRunLockKey, nodeLockHost } from '../../lib/runner/run-lock';
import { RUNNER } from '../helpers/aws-calls/principals';
import { recordAws } from '../helpers/aws-calls/recorder';
import { motoClientConfig, startMoto, type MotoServer } from '../helpers/moto';

const BUCKET = 'lock-results';
let moto: MotoServer;
let s3: S3Client;
/** The test's own client (bucket set-up, reading back): no principal, not checked. */
let admin: S3Client;

beforeAll(async () => {
  moto = await startMoto();
  admin = new S3Client({ ...motoClientConfig(moto), forcePathStyle: true });
  await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
  s3 = recordAws(new S3Client({ ...motoClientConfig(moto), forcePathStyle: true }), RUNNER);
}, 60_000);

afterAll(async () => {
  s3?.destroy();
  admin?.destroy();
  await moto?.stop();
});

test('a second writer of the same run slot is refused by the conditional write; after release it is free', async () => {
  const first = await acquireCloudRunLock(s3, BUCKET, { runId: 'r1', runnerIndex: 0, command: 'first' });
  const stored = await admin.send(new GetObjectCommand({ Bucket: BUCKET, Key: cloudRunLockKey('r1', 0) }));
  expect(JSON.parse((await stored.Body?.transformToString()) ?? '')).toMatchObject({
    pid: process.pid,
    command: 'first',
  });
  // This process is alive on this host: the holder is live, so the second is refused.
  await expect(
    acquireCloudRunLock(s3, BUCKET, { runId: 'r1', runnerIndex: 0, command: 'second' }),
  ).rejects.toThrow(/run r1 is already being written: it is held by pid \d+ on \S+ since \S+ \(first\)/);
  // Another runner index is another slot.
  const other = await acquireCloudRunLock(s3, BUCKET, { runId: 'r1', runnerIndex: 1, command: 'runner 2' });
  await first.release();
  await other.release();
  const again = await acquireCloudRunLock(s3, BUCKET, { runId: 'r1', runnerIndex: 0, command: 'again' });
  await again.release();
}, 60_000);

test('resume on a replacement runner: the owner released its lock, another host takes the slot (issue 20, defect 1)', async () => {
  // GIVEN runner A (this host) wrote run r2 and ended, releasing its lock with the runner role
  const a = await acquireCloudRunLock(s3, BUCKET, { runId: 'r2', runnerIndex: 0, command: 'runner A' });
  await a.release();
  await expect(
    admin.send(new GetObjectCommand({ Bucket: BUCKET, Key: cloudRunLockKey('r2', 0) })),
  ).rejects.toMatchObject({ name: 'NoSuchKey' });
  // WHEN a replacement runner on another host resumes r2
  const replacement = { ...nodeLockHost, hostname: () => 'ip-10-0-9-9.ec2.internal' };
  const b = await acquireCloudRunLock(s3, BUCKET, {
    runId: 'r2',
    runnerIndex: 0,
    command: 'runner B',
    host: replacement,
  });
  // THEN it holds the slot (before the fix the lock stayed, and this was "held by pid … on <A>")
  const stored = await admin.send(new GetObjectCommand({ Bucket: BUCKET, Key: cloudRunLockKey('r2', 0) }));
  expect(JSON.parse((await stored.Body?.transformToString()) ?? '')).toMatchObject({
    host: 'ip-10-0-9-9.ec2.internal',
    command: 'runner B',
  });
  await b.release();
}, 60_000);

test('a lock its owner could not release refuses a replacement runner, naming the holder', async () => {
  // GIVEN runner A's lock stayed (what a denied DeleteObject left behind)
  const a = await acquireCloudRunLock(s3, BUCKET, { runId: 'r3', runnerIndex: 0, command: 'runner A' });
  // WHEN a runner on another host resumes
  const replacement = { ...nodeLockHost, hostname: () => 'ip-10-0-9-9.ec2.internal' };
  // THEN it is refused: the other host cannot judge A's pid
  await expect(
    acquireCloudRunLock(s3, BUCKET, { runId: 'r3', runnerIndex: 0, command: 'runner B', host: replacement }),
  ).rejects.toThrow(/run r3 is already being written: it is held by pid \d+ on \S+/);
  await a.release();
}, 60_000);
