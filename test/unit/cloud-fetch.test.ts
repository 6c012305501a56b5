/**
 * `proxylab fetch` (lib/operator/runs.ts fetchRun) against a mocked S3: a run id with nothing under it
 * is a usage error; a run whose only objects are skipped (fleet coordination) is fetched as empty.
 */
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mockAws } from '../helpers/aws-calls/recorder';
import { operator } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import { UsageError } from '../../lib/core/errors';
import type { BlobStore } from '../../lib/results/blob-store';
import { fetchRun } from '../../lib/operator/runs';

const s3Mock = mockAws(S3Client, operator('read'));
afterEach(() => s3Mock.reset());

function memoryStore(): BlobStore & { readonly files: Map<string, string> } {
  const files = new Map<string, string>();
  return {
    files,
    where: (key) => `mem:${key}`,
    read: (key) => Promise.resolve(files.get(key) ?? null),
    write: (key, body) => {
      files.set(key, body);
      return Promise.resolve();
    },
    exists: (key) => Promise.resolve(files.has(key)),
    list: (prefix) => Promise.resolve([...files.keys()].filter((k) => k.startsWith(prefix)).sort()),
  };
}

test('a run id with nothing under it: usage error naming where it looked', async () => {
  // GIVEN an empty prefix
  s3Mock.on(ListObjectsV2Command).resolves({ KeyCount: 0 });
  // WHEN / THEN
  const p = fetchRun(new S3Client({ region: 'eu-west-1' }), 'b', 'cloud-1', memoryStore());
  await expect(p).rejects.toThrow(UsageError);
  await expect(p).rejects.toThrow('run cloud-1: nothing under s3://b/runs/cloud-1/ (see proxylab status)');
});

test('a run with only fleet objects: nothing copied, no error, listed twice only because nothing was copied', async () => {
  // GIVEN only fleet coordination objects
  s3Mock.on(ListObjectsV2Command).resolves({ Contents: [{ Key: 'runs/cloud-1/fleet/barrier-0.json' }] });
  const dest = memoryStore();
  // WHEN
  const res = await fetchRun(new S3Client({ region: 'eu-west-1' }), 'b', 'cloud-1', dest);
  // THEN
  expect(res).toEqual({ files: 0, bytes: 0, skipped: [], identityUnreadable: [] });
  expect(dest.files.size).toBe(0);
  expect(s3Mock).toHaveReceivedCommandTimes(GetObjectCommand, 0);
  expect(s3Mock).toHaveReceivedCommandTimes(ListObjectsV2Command, 2);
});
