/**
 * A spot interruption, simulated end to end: the REAL runner bundle (node runner.js) against a
 * local PostgreSQL (the writer) and PgBouncer (standing in for a proxy), S3 and Secrets Manager on
 * moto_server, and a stub instance metadata service (IMDSv2: token, `instance-life-cycle` = spot,
 * `spot/instance-action` 404 until the test schedules the interruption). Mid-run the notice
 * appears; the runner records it and stops the run itself — no SIGTERM is sent, as on EC2 where the
 * SSM agent's KillMode=process may keep the shutdown's signal from the runner. Then `proxylab
 * status` (lib/operator/runs) says the runner was interrupted and when; a runner with the same run id
 * resumes; every step finished before the stop is byte-for-byte the same object, the step in
 * flight is measured again, and status no longer says interrupted.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { expect } from '@jest/globals';
import { runnerBundleOnce } from '../../lib/constructs/runner-bundle';
import { requestRunnerArgv, requestUrl, writeRunRequest } from '../../lib/aws/run-request';
import { formatListing, readListing, readProgress } from '../../lib/operator/runs';
import type { RunManifest } from '../../lib/suite/types';
import { startLocalStack, type LocalStack } from '../helpers/local-stack';
import { createDbSecret, LOCAL_STAND_IN_TEST_SUITES, localRunRequest } from '../helpers/cloud-run-request';
import { motoClientConfig, motoEnv, startMoto, type MotoServer } from '../helpers/moto';
import { AWS_CALL_LOG_ENV } from '../../lib/core/aws-call-log';
import { RUNNER } from '../helpers/aws-calls/principals';
import { recordCallLog } from '../helpers/aws-calls/recorder';
import { scratchDir } from '../helpers/scratch';

const BUCKET = 'proxylab-spot-it';
const RUN_ID = 'cloud-spot-1';
const PASSWORD = `it-${randomBytes(12).toString('hex')}`;
const NOTICE = { action: 'stop', time: '2026-03-01T10:02:00Z' };
/**
 * What is checked is the run's life cycle (the notice stops it, the resume skips what finished and
 * measures the step in flight again), not a finding: the test-only cheap run
 * (test/helpers/local-stack.ts RUN_TO_INTERRUPT's suite; four pgbench -T 3 steps, a few % of a
 * core), which the runner takes with `--test-suites on`. Smoke's findings through the bundled
 * runner are cloud-runner.test.ts's fleet test.
 */
const RUN_SUITE = 'test-steps';

let stack: LocalStack;
let moto: MotoServer;
let s3: S3Client;
let tmp: string;
let runnerJs: string;
let imds: http.Server;
let imdsUrl: string;
/** What the stub metadata service answers for spot/instance-action (null = 404). */
let scheduled: typeof NOTICE | null = null;
const imdsCalls: string[] = [];

interface Proc {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A minimal IMDSv2: a token for a PUT, every GET must carry it. */
function startImds(): Promise<void> {
  const TOKEN = 'stub-token';
  imds = http.createServer((req, res) => {
    imdsCalls.push(`${req.method} ${req.url}`);
    if (req.method === 'PUT' && req.url === '/latest/api/token') {
      res.writeHead(200).end(TOKEN);
      return;
    }
    if (req.headers['x-aws-ec2-metadata-token'] !== TOKEN) {
      res.writeHead(401).end();
      return;
    }
    if (req.url === '/latest/meta-data/instance-life-cycle') res.writeHead(200).end('spot');
    else if (req.url === '/latest/meta-data/spot/instance-action' && scheduled)
      res.writeHead(200).end(JSON.stringify(scheduled));
    else res.writeHead(404).end();
  });
  return new Promise((resolve) =>
    imds.listen(0, '127.0.0.1', () => {
      imdsUrl = `http://127.0.0.1:${(imds.address() as AddressInfo).port}`;
      resolve();
    }),
  );
}

/**
 * The runner as `proxylab run` starts it. With `interrupt`: once step 2 has started (or was passed
 * over) the notice is scheduled; nothing else is done to the runner.
 */
function runRunner(interrupt: boolean): Promise<Proc> {
  const argv = requestRunnerArgv({
    url: requestUrl(BUCKET, RUN_ID),
    runnerIndex: 0,
    region: null,
    // the request names the test-only cheap run (see RUN_SUITE)
    test: LOCAL_STAND_IN_TEST_SUITES,
  });
  // motoEnv turns instance metadata off for every other test; this one points it at the stub
  // The runner's own audit log: its calls are checked against the runner role after the test.
  const callLog = path.join(scratchDir('proxylab-spot-calls-'), 'calls.jsonl');
  const env = {
    ...motoEnv(moto),
    AWS_EC2_METADATA_DISABLED: 'false',
    AWS_EC2_METADATA_SERVICE_ENDPOINT: imdsUrl,
    [AWS_CALL_LOG_ENV]: callLog,
  };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [runnerJs, ...argv], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.on('close', () => recordCallLog(callLog, RUNNER));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString('utf8');
      if (interrupt && scheduled === null && /\[2\/\d+\] \S+: /.test(stdout)) scheduled = NOTICE;
    });
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function s3Text(key: string): Promise<string> {
  const res = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return (await res.Body?.transformToString('utf-8')) ?? '';
}

/** Every step JSON in S3, as its exact text by step id. */
async function stepTexts(): Promise<Map<string, string>> {
  const res = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `runs/${RUN_ID}/steps/` }));
  const keys = (res.Contents ?? []).map((c) => c.Key as string).filter((k) => k.endsWith('.json'));
  const out = new Map<string, string>();
  for (const k of keys) {
    const text = await s3Text(k);
    out.set((JSON.parse(text) as { stepId: string }).stepId, text);
  }
  return out;
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-spot-it-'));
  // the bundle `cdk synth` ships (content-keyed cache: built once per checkout and content)
  runnerJs = runnerBundleOnce().file;
  [stack, moto] = await Promise.all([startLocalStack(), startMoto(), startImds()]).then(
    ([st, mo]) => [st, mo] as const,
  );
  s3 = new S3Client({ ...motoClientConfig(moto), forcePathStyle: true });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  const secretArn = await createDbSecret(moto, 'proxylab-spot-it-db', stack.postgres.port, PASSWORD);
  await writeRunRequest(
    s3,
    localRunRequest({
      runId: RUN_ID,
      bucket: BUCKET,
      secretArn,
      postgresPort: stack.postgres.port,
      proxyPort: stack.pgbouncer.port,
      runnerCount: 1,
      suite: RUN_SUITE,
    }),
  );
}, 90_000);

afterAll(async () => {
  await Promise.all([
    stack?.stop(),
    moto?.stop(),
    new Promise<void>((resolve) => (imds ? imds.close(() => resolve()) : resolve())),
  ]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('a spot runner interrupted by the notice alone, then resumed with the same run id', () => {
  let before: Map<string, string>;
  /** The step the record names as in flight at the notice, and the same if the stop cut it short. */
  let inFlight: string | null;
  let cutShort: string | null;

  test('the notice is recorded and stops the runner without any signal; status says interrupted and when', async () => {
    // WHEN the notice appears during the run (and no SIGTERM ever comes)
    const first = await runRunner(true);
    // THEN the runner watched over IMDSv2, saw the notice, recorded it and stopped the run itself
    expect(first.stdout).toContain('spot instance: watching for an interruption notice');
    expect(first.stdout).toContain(
      'spot interruption notice: EC2 will stop this runner at 2026-03-01T10:02:00Z',
    );
    expect(first.stdout).toContain('interruption recorded; stopping the run');
    expect(first.stderr).not.toContain('SIGTERM');
    expect(first.code).toBe(1);
    expect(imdsCalls).toContain('PUT /latest/api/token');
    // the manifest is interrupted with the steps before the notice in S3, not all of them
    before = await stepTexts();
    expect(before.size).toBeGreaterThanOrEqual(1);
    const manifest = JSON.parse(await s3Text(`runs/${RUN_ID}/manifest.json`)) as RunManifest;
    expect(manifest.status).toBe('interrupted');
    expect(before.size).toBeLessThan(manifest.stepIds.length);
    // status: interrupted, which runner, when, the notice; no signal
    const progress = await readProgress(s3, BUCKET, RUN_ID);
    expect(progress.status).toBe('interrupted');
    expect(progress.interruptions).toHaveLength(1);
    const rec = progress.interruptions[0];
    expect(rec).toMatchObject({ runnerIndex: 0, cause: 'spot-notice', signal: null, notice: NOTICE });
    // The step in flight at the notice (if one was): the runner records the notice first and then
    // stops the run, so on a loaded machine that step may finish and be written in between. Then it
    // is a whole measurement and the resume skips it; otherwise the resume measures it again.
    inFlight = rec?.stepInFlight ?? null;
    cutShort = inFlight !== null && !before.has(inFlight) ? inFlight : null;
    expect(Date.parse(rec?.interruptedAt ?? '')).toBeLessThanOrEqual(Date.now());
    const line = formatListing(await readListing(s3, BUCKET, RUN_ID));
    expect(line).toContain(`runner 0 interrupted at ${rec?.interruptedAt}`);
    expect(line).toContain('spot interruption notice: stop at 2026-03-01T10:02:00Z');
    expect(line).not.toContain('then SIGTERM');
    expect(line).toContain(`--run-id ${RUN_ID}`);
  }, 120_000);

  test('resumed: finished steps unchanged, the step in flight measured again, status no longer interrupted', async () => {
    // GIVEN capacity is back (no notice scheduled any more)
    scheduled = null;
    // WHEN the same run id runs again
    const second = await runRunner(false);
    if (second.code !== 0) process.stderr.write(`runner output:\n${second.stdout}\n${second.stderr}\n`);
    expect(second.code).toBe(0);
    // THEN every step finished before the stop is the same object, byte for byte, and was skipped
    const after = await stepTexts();
    for (const [id, text] of before) {
      expect(after.get(id)).toBe(text);
      expect(second.stdout).toContain(`${id}: already done, skipped`);
    }
    // the step cut short by the stop (if one was) was measured again, not skipped
    if (cutShort !== null) {
      expect(after.has(cutShort)).toBe(true);
      expect(second.stdout).toMatch(new RegExp(`\\] ${cutShort.replace(/[/.]/g, '\\$&')}: start`));
    }
    const manifest = JSON.parse(await s3Text(`runs/${RUN_ID}/manifest.json`)) as RunManifest;
    expect(manifest.status).toBe('completed');
    expect([...after.keys()].sort()).toEqual([...manifest.stepIds].sort());
    // status: completed, no open interruption; the record is kept, closed by the resume
    const progress = await readProgress(s3, BUCKET, RUN_ID);
    expect(progress.status).toBe('completed');
    expect(progress.interruptions).toEqual([]);
    expect(formatListing(await readListing(s3, BUCKET, RUN_ID))).not.toMatch(/interrupted/);
    const record = JSON.parse(await s3Text(`runs/${RUN_ID}/interruptions/runner-0.json`)) as {
      resumedAt: string | null;
      stepInFlight: string | null;
    };
    expect(record.resumedAt).not.toBeNull();
    expect(record.stepInFlight).toBe(inFlight);
  }, 120_000);
});
