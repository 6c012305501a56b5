/**
 * `proxylab status` and `fetch` against a bucket with bad content (moto S3, the real CLI as a
 * child process): a manifest without `stepIds`, one that is not JSON, an escape sequence in a
 * manifest's error, a key that would escape the run directory, and many runs at once.
 *
 * Each CLI run reads its own bucket or its own run (the listing one bucket, each fetch its run in a
 * bucket of its own), all prepared in the top-level beforeAll: the CLI runs side by side
 * (test.concurrent).
 */
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../helpers/cli';
import { motoClientConfig, motoEnv, startMoto, type MotoServer } from '../helpers/moto';
import { manifestWith, stepRecordWith } from '../helpers/run-files';
import { scratchDir } from '../helpers/scratch';
import type { RunManifest } from '../../lib/suite/types';

/** The listing's bucket (read only). */
const BUCKET = 'proxylab-status-test';
/** The hostile-key fetch's bucket: its run has a key that would escape the run directory. */
const HOSTILE_BUCKET = 'proxylab-status-hostile-test';
/** The partially bad runs' bucket. */
const PARTIAL_BUCKET = 'proxylab-status-partial-test';
let moto: MotoServer;
let s3: S3Client;

/** A complete, valid manifest (the readers check every file against its schema) with `extra` on top. */
function manifest(runId: string, extra: Partial<RunManifest> = {}): string {
  return JSON.stringify(
    manifestWith({
      runId,
      suite: 'smoke',
      mode: 'cloud',
      status: 'completed',
      startedAt: '2026-11-21T10:00:00.000Z',
      endedAt: '2026-11-21T10:01:00.000Z',
      stepIds: ['a', 'b'],
      stepsCompleted: 2,
      ...extra,
    }),
  );
}

function step(runId: string, stepId: string): string {
  return JSON.stringify(stepRecordWith({ runId, stepId }));
}

async function put(key: string, body: string, bucket = BUCKET): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
}

const HOSTILE_RUN = 'cloud-20261121-100000';
const HOSTILE_KEY = `runs/${HOSTILE_RUN}/steps/../../../escape.json`;
const PARTIAL_STEP_RUN = 'cloud-20261122-100000';
const PARTIAL_MANIFEST_RUN = 'cloud-20261122-110000';

beforeAll(async () => {
  moto = await startMoto();
  s3 = new S3Client({ ...motoClientConfig(moto), forcePathStyle: true });
  for (const Bucket of [BUCKET, HOSTILE_BUCKET, PARTIAL_BUCKET])
    await s3.send(new CreateBucketCommand({ Bucket }));
  // the listing: four runs, three of them with a bad manifest
  await put('runs/cloud-20261121-100000/manifest.json', manifest('cloud-20261121-100000'));
  await put('runs/cloud-20261121-100000/steps/a.json', step('cloud-20261121-100000', 'a'));
  // One manifest lacks stepIds (it stopped the whole listing before).
  const { stepIds: _dropped, ...noSteps } = JSON.parse(manifest('cloud-20261121-110000')) as Record<
    string,
    unknown
  >;
  void _dropped;
  await put('runs/cloud-20261121-110000/manifest.json', JSON.stringify(noSteps));
  await put('runs/cloud-20261121-120000/manifest.json', '{"runId": ');
  await put(
    'runs/cloud-20261121-130000/manifest.json',
    manifest('cloud-20261121-130000', { status: 'failed', error: 'boom \u001b]0;pwned\u0007\u001b[2J' }),
  );
  // a good run with one hostile key (and one whose name only looks like one)
  await put(`runs/${HOSTILE_RUN}/manifest.json`, manifest(HOSTILE_RUN), HOSTILE_BUCKET);
  await put(`runs/${HOSTILE_RUN}/steps/a.json`, step(HOSTILE_RUN, 'a'), HOSTILE_BUCKET);
  await put(`runs/${HOSTILE_RUN}/steps/..%2F..%2Fescape.json`, step(HOSTILE_RUN, 'b'), HOSTILE_BUCKET);
  await put(HOSTILE_KEY, '{"evil": true}', HOSTILE_BUCKET);
  // one schema-invalid step object
  await put(`runs/${PARTIAL_STEP_RUN}/manifest.json`, manifest(PARTIAL_STEP_RUN), PARTIAL_BUCKET);
  await put(`runs/${PARTIAL_STEP_RUN}/steps/a.json`, step(PARTIAL_STEP_RUN, 'a'), PARTIAL_BUCKET);
  await put(
    `runs/${PARTIAL_STEP_RUN}/steps/b.json`,
    JSON.stringify({ ...stepRecordWith({ runId: PARTIAL_STEP_RUN, stepId: 'b' }), status: 'finished' }),
    PARTIAL_BUCKET,
  );
  // an unreadable manifest
  await put(`runs/${PARTIAL_MANIFEST_RUN}/manifest.json`, '{"runId": ', PARTIAL_BUCKET);
  await put(`runs/${PARTIAL_MANIFEST_RUN}/steps/a.json`, step(PARTIAL_MANIFEST_RUN, 'a'), PARTIAL_BUCKET);
}, 60_000);

afterAll(async () => {
  s3?.destroy();
  await moto?.stop();
});

describe('status lists every run even when some manifests are bad', () => {
  test.concurrent('bad manifests are listed as unreadable; the others are listed; exit 0', async () => {
    const res = await runCli(['status', '--bucket', BUCKET], motoEnv(moto));
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        /^cloud-20261121-130000 \[smoke\] failed: 0\/2 steps, .* — boom \\x1b\]0;pwned\\x07\\x1b\[2J$/,
      ),
      expect.stringMatching(
        /^cloud-20261121-120000: unreadable — s3:\/\/\S+\/runs\/cloud-20261121-120000\/manifest\.json: not valid JSON: /,
      ),
      expect.stringMatching(/^cloud-20261121-110000: unreadable — .*stepIds/),
      expect.stringMatching(/^cloud-20261121-100000 \[smoke\] completed: 1\/2 steps, elapsed 1:00/),
    ]);
    // The escape sequences reach the terminal as text, never as control characters.
    expect(res.stdout).not.toContain('\u001b');
  });

  test.concurrent('--limit shows the newest runs and says how many there are', async () => {
    const res = await runCli(['status', '--bucket', BUCKET, '--limit', '1'], motoEnv(moto));
    expect(res.code).toBe(0);
    expect(res.stdout.split('\n')[0]).toMatch(/^cloud-20261121-130000 /);
    expect(res.stdout).toMatch(/^… 1 of 4 runs shown, newest first; --limit N for more, --limit 0 for all/m);
  });

  test.concurrent('fetch with one hostile key skips and reports it, and fetches the rest', async () => {
    const runId = HOSTILE_RUN;
    const out = scratchDir('proxylab-fetch-');
    const res = await runCli(
      ['fetch', runId, '--bucket', HOSTILE_BUCKET, '--out', out, '--no-report'],
      motoEnv(moto),
    );
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      `warning: skipped s3://${HOSTILE_BUCKET}/${HOSTILE_KEY}: it would be written outside the run directory`,
    );
    expect(fs.existsSync(path.join(out, runId, 'manifest.json'))).toBe(true);
    expect(fs.existsSync(path.join(out, runId, 'steps', 'a.json'))).toBe(true);
    expect(fs.existsSync(path.join(out, 'escape.json'))).toBe(false);
    expect(fs.existsSync(path.join(path.dirname(out), 'escape.json'))).toBe(false);
  });
});

describe('partially bad runs (docs/report.md): fetch skips and names, says PARTIAL, and says which exit', () => {
  test.concurrent(
    'one schema-invalid step object: the rest is copied and reported, PARTIAL, exit 0',
    async () => {
      const runId = PARTIAL_STEP_RUN;
      const out = scratchDir('proxylab-fetch-');
      const res = await runCli(['fetch', runId, '--bucket', PARTIAL_BUCKET, '--out', out], motoEnv(moto));
      expect(res.code).toBe(0);
      expect(res.stderr).toMatch(
        new RegExp(
          `^warning: skipped s3://${PARTIAL_BUCKET}/runs/${runId}/steps/b\\.json: s3://\\S+/steps/b\\.json: status: `,
          'm',
        ),
      );
      expect(res.stderr).toContain(`PARTIAL copy: 1 file(s) skipped (named above)`);
      expect(fs.existsSync(path.join(out, runId, 'steps', 'b.json'))).toBe(false);
      expect(fs.readFileSync(path.join(out, runId, 'summary.md'), 'utf8')).toMatch(/Partial run/);
    },
  );

  test.concurrent(
    'an unreadable manifest: the rest is copied, no report, exit 2 naming manifest.json',
    async () => {
      const runId = PARTIAL_MANIFEST_RUN;
      const out = scratchDir('proxylab-fetch-');
      const res = await runCli(['fetch', runId, '--bucket', PARTIAL_BUCKET, '--out', out], motoEnv(moto));
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`s3://${PARTIAL_BUCKET}/runs/${runId}/manifest.json could not be copied`);
      expect(fs.existsSync(path.join(out, runId, 'steps', 'a.json'))).toBe(true);
      expect(fs.existsSync(path.join(out, runId, 'report.html'))).toBe(false);
    },
  );
});
