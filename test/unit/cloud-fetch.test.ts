/**
 * `proxylab fetch` (lib/operator/runs.ts fetchRun) against a mocked S3: a run id with nothing under it
 * is a usage error; a run whose only objects are skipped (fleet coordination) is fetched as empty; an
 * object that is not UTF-8 is skipped and named, never copied with U+FFFD in place of its bytes; and
 * the command names no run directory it did not make.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mockAws } from '../helpers/aws-calls/recorder';
import { operator } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import { UsageError } from '../../lib/core/errors';
import type { BlobStore } from '../../lib/results/blob-store';
import { stepPaths } from '../../lib/results/run-paths';
import { fetchRun } from '../../lib/operator/runs';
import { runCliInProcess } from '../helpers/cli';
import { manifestWith, stepRecordWith } from '../helpers/run-files';
import { s3GetBody } from '../helpers/s3-body';
import { scratchDir } from '../helpers/scratch';

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

/** Objects of `runs/r1/` in the mocked bucket: text, or raw bytes. */
function serve(objects: Record<string, string | Uint8Array>): void {
  s3Mock.on(ListObjectsV2Command).resolves({ Contents: Object.keys(objects).map((Key) => ({ Key })) });
  for (const [Key, content] of Object.entries(objects))
    s3Mock.on(GetObjectCommand, { Key }).resolves({ Body: s3GetBody(content) } as never);
}

/** `text` as UTF-8 with one byte (0xFF, never UTF-8) put in at `at`. */
function withBadByte(text: string, at: number): Uint8Array {
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at)]);
}

describe('an object that is not UTF-8', () => {
  const manifest = JSON.stringify(manifestWith({ runId: 'r1', mode: 'cloud' }));
  const rec = stepRecordWith({ runId: 'r1' });
  const stepKey = `runs/r1/${stepPaths(rec.stepId).json}`;

  test.each<[string, Record<string, string | Uint8Array>, string, string[]]>([
    [
      'a step record',
      { 'runs/r1/manifest.json': manifest, [stepKey]: withBadByte(JSON.stringify(rec), 10) },
      stepKey,
      [],
    ],
    [
      'the manifest',
      { 'runs/r1/manifest.json': withBadByte(manifest, 10), [stepKey]: JSON.stringify(rec) },
      'runs/r1/manifest.json',
      ['s3://b/runs/r1/manifest.json'],
    ],
  ])('%s: skipped and named by its byte offset, the rest copied', async (_what, objects, bad, identity) => {
    // GIVEN a run with one object whose bytes are not UTF-8
    serve(objects);
    const dest = memoryStore();
    // WHEN
    const res = await fetchRun(new S3Client({ region: 'eu-west-1' }), 'b', 'r1', dest);
    // THEN it is not written (not even with U+FFFD in place of the byte), and it is named
    expect(res.skipped).toEqual([
      {
        key: `s3://b/${bad}`,
        reason: `s3://b/${bad} is not valid UTF-8: byte 0xFF at byte offset 10 (line 1); save it as UTF-8`,
      },
    ]);
    expect(res.identityUnreadable).toEqual(identity);
    expect(res.files).toBe(1);
    expect(dest.files.has(bad.slice('runs/r1/'.length))).toBe(false);
    expect([...dest.files.values()].join('')).not.toContain('\ufffd');
  });

  test("a step's captured output is read leniently, as on disk (lib/core/read.ts: captures)", async () => {
    // GIVEN pgbench's raw output with a byte that is not UTF-8
    const stdout = `runs/r1/${stepPaths(rec.stepId).stdout}`;
    serve({ 'runs/r1/manifest.json': manifest, [stdout]: withBadByte('tps = 10\n', 3) });
    const dest = memoryStore();
    // WHEN
    const res = await fetchRun(new S3Client({ region: 'eu-west-1' }), 'b', 'r1', dest);
    // THEN it is copied, as readFileIn reads a capture
    expect(res.skipped).toEqual([]);
    expect(res.files).toBe(2);
  });
});

describe('proxylab fetch, the command', () => {
  test('a run whose only object is an unreadable manifest: exit 2, and no message names a copy it never made', async () => {
    // GIVEN a bucket whose run r1 has only a manifest that is not JSON
    serve({ 'runs/r1/manifest.json': '{"schemaVersion": 1, "runId": ' });
    const out = scratchDir('proxylab-fetch-cmd-');
    // WHEN
    const res = await runCliInProcess([
      'fetch',
      'r1',
      '--bucket',
      'results-b',
      '--region',
      'eu-west-1',
      '--out',
      out,
      '--no-report',
    ]);
    // THEN the manifest is named, and nothing claims a copy in a directory that does not exist
    const runDir = path.join(out, 'r1');
    expect(res.code).toBe(2);
    expect(fs.existsSync(runDir)).toBe(false);
    expect(res.out).toContain(`fetched no file: nothing written to ${runDir}`);
    expect(res.err).toContain('PARTIAL copy: 1 file(s) skipped (named above); nothing else was copied');
    expect(res.err).toMatch(
      /^error: s3:\/\/results-b\/runs\/r1\/manifest\.json could not be copied: nothing else was copied either, so no run directory was made \(no report written\)$/m,
    );
    expect(res.out + res.err).not.toContain(`copy in ${runDir}`);
    expect(res.out + res.err).not.toContain(`into ${runDir}`);
  });
});
