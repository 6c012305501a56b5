/**
 * The cloud run lock against moto_server's S3 (real HTTP, real conditional-write headers): a second
 * acquire of the same run slot is answered 412 by the server and refused naming the holder; a
 * released lock can be taken again.
 */
import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { acquireCloudRunLock, cloudRunLockKey } from '../../lib/cloud/run-lock';
import { motoClientConfig, startMoto, type MotoServer } from '../helpers/moto';

const BUCKET = 'lock-results';
let moto: MotoServer;
let s3: S3Client;

beforeAll(async () => {
  moto = await startMoto();
  s3 = new S3Client({ ...motoClientConfig(moto), forcePathStyle: true });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
}, 60_000);

afterAll(async () => {
  s3?.destroy();
  await moto?.stop();
});

test('a second writer of the same run slot is refused by the conditional write; after release it is free', async () => {
  const first = await acquireCloudRunLock(s3, BUCKET, { runId: 'r1', runnerIndex: 0, command: 'first' });
  const stored = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: cloudRunLockKey('r1', 0) }));
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
