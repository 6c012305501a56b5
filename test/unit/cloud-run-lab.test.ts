/**
 * The lab file of a cloud run (lib/operator/run-lab.ts) against a mocked S3, every call checked
 * against the operator's `run` policy: `proxylab run` writes `runs/<runId>/lab.json` — the lab file's
 * text as validated — before the run request; a resume with the same lab writes nothing, one with a
 * changed lab is refused before anything is sent, and a run of an earlier release (a manifest, no
 * lab.json) gets none. `proxylab fetch` (operator `read` policy) brings lab.json down with the rest.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import 'aws-sdk-client-mock-jest';
import { UsageError } from '../../lib/core/errors';
import { labRecordOf, labRecordSchema } from '../../lib/results/lab-record';
import { FileSystemBlobStore } from '../../lib/results/fs-blob-store';
import { parseRunFile } from '../../lib/results/schemas';
import { checkRunLab, writeRunLab } from '../../lib/operator/run-lab';
import { fetchRun } from '../../lib/operator/runs';
import { attributeMock, mockAws } from '../helpers/aws-calls/recorder';
import { operator } from '../helpers/aws-calls/principals';
import { manifestWith } from '../helpers/run-files';
import { s3GetBody } from '../helpers/s3-body';
import { scratchDir } from '../helpers/scratch';

const BUCKET = 'proxylab-own-workload-123456789012-us-east-1';
const RUN_ID = 'cloud-20261128-170000';
const LAB_TEXT = fs.readFileSync(path.join(__dirname, '..', '..', 'labs', 'own-workload.json'), 'utf8');
const RECORD = labRecordOf({ text: LAB_TEXT, source: 'labs/own-workload.json', name: 'own-workload' });
const CHANGED = labRecordOf({
  text: LAB_TEXT.replace('"poolPercent": 45', '"poolPercent": 80'),
  source: 'labs/own-workload.json',
  name: 'own-workload',
});

const s3Mock = mockAws(S3Client, operator('run', 'own-workload'));
afterEach(() => s3Mock.reset());

const s3 = (): S3Client => new S3Client({ region: 'us-east-1' });
const key = (name: string): string => `runs/${RUN_ID}/${name}`;

/** The objects of the run's prefix; any other key is NoSuchKey. */
function serve(objects: Record<string, string>): void {
  s3Mock
    .on(GetObjectCommand)
    .rejects(new NoSuchKey({ message: 'The specified key does not exist.', $metadata: {} }));
  for (const [name, text] of Object.entries(objects))
    s3Mock
      .on(GetObjectCommand, { Bucket: BUCKET, Key: key(name) })
      .resolves({ Body: s3GetBody(text) } as never);
  s3Mock.on(PutObjectCommand).resolves({});
}

describe('proxylab run: runs/<runId>/lab.json (operator run policy)', () => {
  test('a new run: lab.json is written, the lab file text verbatim with its SHA-256', async () => {
    // GIVEN an empty prefix
    serve({});
    // WHEN the command checks, then writes it (before the request)
    const state = await checkRunLab(s3(), BUCKET, RUN_ID, RECORD);
    await writeRunLab(s3(), BUCKET, RUN_ID, RECORD, state);
    // THEN one object, at the run's prefix, that reads back as the record
    expect(state).toBe('to-write');
    expect(s3Mock).toHaveReceivedCommandTimes(PutObjectCommand, 1);
    const put = s3Mock.commandCalls(PutObjectCommand)[0]?.args[0].input;
    expect([put?.Bucket, put?.Key, put?.ContentType]).toEqual([BUCKET, key('lab.json'), 'application/json']);
    const stored = parseRunFile(labRecordSchema, 'lab.json', put?.Body as string);
    expect(stored).toEqual(RECORD);
    expect(stored.text).toBe(LAB_TEXT);
  });

  test('a resume with the same lab file: nothing written', async () => {
    serve({
      'lab.json': JSON.stringify(RECORD),
      'manifest.json': JSON.stringify(manifestWith({ runId: RUN_ID })),
    });
    const state = await checkRunLab(s3(), BUCKET, RUN_ID, RECORD);
    await writeRunLab(s3(), BUCKET, RUN_ID, RECORD, state);
    expect(state).toBe('same');
    expect(s3Mock).toHaveReceivedCommandTimes(PutObjectCommand, 0);
  });

  test('a resume with a changed lab file: refused, naming the field, before anything is written', async () => {
    serve({ 'lab.json': JSON.stringify(RECORD) });
    const err = await checkRunLab(s3(), BUCKET, RUN_ID, CHANGED).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).code).toBe('run-lab-changed');
    expect((err as Error).message).toMatch(
      new RegExp(
        `^cannot resume run ${RUN_ID}: its lab file changed since it started \\(lab own-workload: poolers\\[0\\]\\.poolPercent: 45 → 80\\): .*pass a new --run-id \\(or put back the text in s3://${BUCKET}/runs/${RUN_ID}/lab\\.json to resume this one\\)\\.$`,
      ),
    );
    expect(s3Mock).toHaveReceivedCommandTimes(PutObjectCommand, 0);
  });

  test('a run started by an earlier release (a manifest, no lab.json): none is written for it', async () => {
    serve({ 'manifest.json': JSON.stringify(manifestWith({ runId: RUN_ID })) });
    const state = await checkRunLab(s3(), BUCKET, RUN_ID, RECORD);
    await writeRunLab(s3(), BUCKET, RUN_ID, RECORD, state);
    expect(state).toBe('earlier-release');
    expect(s3Mock).toHaveReceivedCommandTimes(PutObjectCommand, 0);
  });
});

describe('proxylab fetch brings lab.json down (operator read policy)', () => {
  beforeEach(() => attributeMock(s3Mock, operator('read', 'own-workload')));

  test('copied as stored, and checked: an edited one is skipped and named', async () => {
    // GIVEN a run in the bucket with its manifest and lab.json
    const manifest = JSON.stringify(
      manifestWith({ runId: RUN_ID, mode: 'cloud', stepIds: [], stepsCompleted: 0 }),
    );
    s3Mock
      .on(ListObjectsV2Command)
      .resolves({ Contents: ['manifest.json', 'lab.json'].map((n) => ({ Key: key(n) })) });
    serve({ 'manifest.json': manifest, 'lab.json': JSON.stringify(RECORD) });
    const dest = scratchDir('proxylab-fetch-lab-');
    // WHEN
    const res = await fetchRun(s3(), BUCKET, RUN_ID, new FileSystemBlobStore(dest));
    // THEN
    expect(res.skipped).toEqual([]);
    expect(JSON.parse(fs.readFileSync(path.join(dest, 'lab.json'), 'utf8'))).toEqual(RECORD);
    // GIVEN an edited lab.json WHEN fetched THEN skipped and named, never written
    serve({ 'manifest.json': manifest, 'lab.json': JSON.stringify({ ...RECORD, text: CHANGED.text }) });
    const dest2 = scratchDir('proxylab-fetch-lab-');
    const res2 = await fetchRun(s3(), BUCKET, RUN_ID, new FileSystemBlobStore(dest2));
    expect(res2.skipped).toEqual([
      {
        key: `s3://${BUCKET}/${key('lab.json')}`,
        reason: expect.stringMatching(/sha256: is not the SHA-256 of `text`/) as unknown,
      },
    ]);
    expect(fs.existsSync(path.join(dest2, 'lab.json'))).toBe(false);
  });
});
