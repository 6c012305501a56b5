/**
 * The REAL runner (the esbuild bundle the stack ships) end to end on this machine: a local
 * PostgreSQL stands in for the database the request describes (RDS for PostgreSQL db.t4g.micro, as
 * the pocket lab deploys it) and PgBouncer's transaction pool for a proxy
 * (test-only request settings: sslmode disable, proxy target kind pgbouncer-transaction, no pool
 * control); S3 and Secrets Manager are moto_server. Each runner gets only `--request
 * s3://…/request.json --runner-index i`, as `proxylab run` sends it. The run is killed with SIGTERM
 * after two steps and resumed with the same run id; `proxylab fetch` then copies it out of moto,
 * and its step JSON is compared with what `proxylab local` writes for the same suite. That chain
 * checks the run's life cycle and layout, not findings: it runs the test-only cheap run
 * (`test-steps`, RUN_TO_INTERRUPT's suite, through `--test-suites on`). The smoke findings through
 * a fleet of two runners are the fleet test's, on smoke's scenarios at -T 1 (`test-smoke-short`:
 * the merge of two runners' parts is the point, and local-smoke runs smoke itself at -T 3); the
 * broken comparison runs smoke's own churn scenario alone (`test-smoke-churn`).
 *
 * The two fleet tests wait mostly on the fleet's step barriers and pgbench's fixed -T: they run
 * side by side with the kill/resume/fetch chain (test.concurrent), as do the lab test and the
 * session-state pair, each on its own PostgreSQL and PgBouncer (a refusal above max_connections or a
 * pool's size is only meaningful on a server no other test is using), all against the one moto. The
 * chain's reference run (`proxylab local`, its own stack) starts in the top-level beforeAll and
 * is awaited where it is compared, so the chain waits for the kill and the resume only.
 */
import { expect } from '@jest/globals';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { runnerBundleOnce } from '../../lib/constructs/runner-bundle';
import { followRun, verdictCounts } from '../../lib/operator/operator';
import {
  requestRunnerArgv,
  requestUrl,
  runRequestSchema,
  writeRunRequest,
  type RunnerArgvTestSettings,
  type RunRequest,
} from '../../lib/aws/run-request';
import { S3RunWriter } from '../../lib/collector/writer';
import { psqlQuery } from '../../lib/exec/psql';
import { PINNED_METRIC, type SessionStateResult } from '../../lib/suite/session-state';
import { planSchema } from '../../lib/results/schemas';
import { escapeHtml } from '../../lib/report/html';
import { EXPERIMENT_SOURCES } from '../../lib/suite/catalog';
import type { RunManifest, StepRecord } from '../../lib/suite/types';
import { runExitCode, type VerdictTotals } from '../../lib/suite/verdict';
import { spawnCli, startLocalStack, type LocalStack } from '../helpers/local-stack';
import { pgdataTemplate } from '../helpers/pg-template';
import {
  createDbSecret,
  LOCAL_STAND_IN,
  LOCAL_STAND_IN_TEST_SUITES,
  localRunRequest,
} from '../helpers/cloud-run-request';
import { motoClientConfig, motoEnv, startMoto, type MotoServer } from '../helpers/moto';
import { AWS_CALL_LOG_ENV } from '../../lib/core/aws-call-log';
import { COLLECTOR, RUNNER } from '../helpers/aws-calls/principals';
import { recordAws, recordCallLog } from '../helpers/aws-calls/recorder';
import { scratchDir } from '../helpers/scratch';
import { loadLabFile } from '../../lib/config/load';

const BUCKET = 'proxylab-it-results';
const RUN_ID = 'cloud-it-1';
/** The kill/resume/fetch chain's suite: the test-only cheap run (test/helpers/local-stack.ts RUN_TO_INTERRUPT). */
const CHAIN_SUITE = 'test-steps';
const PASSWORD = `it-${randomBytes(12).toString('hex')}`;

/** A throwaway PostgreSQL + PgBouncer and the Secrets Manager secret (in moto) that describes it. */
interface Db {
  readonly stack: LocalStack;
  readonly secretArn: string;
}

/** One database per test that runs at the same time as the others (see the header). */
let chainDb: Db;
let fleetDb: Db;
let brokenFleetDb: Db;
let labDb: Db;
let sessionDb: Db;
/** The chain's reference: `proxylab local` of the same suite, started in beforeAll (its own stack and directory). */
let localRef: { readonly out: string; readonly code: Promise<number | null>; readonly output: () => string };
let moto: MotoServer;
let s3: S3Client;
let tmp: string;
let runnerJs: string;

interface Proc {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The database the request describes, as `proxylab run` takes it from the stack outputs
 * DatabaseEngine / DbInstanceClass: the pocket lab's RDS for PostgreSQL db.t4g.micro (the local
 * PostgreSQL stands in for it).
 */
const RDS_POCKET = { engine: 'postgres', instanceClass: 'db.t4g.micro' } as const;

/**
 * What `proxylab run` does before it sends any command: write the run request to S3. PgBouncer's
 * transaction pool stands in for a proxy; 25/12 is its pool as a % of max_connections.
 */
/**
 * Where the operator says the components are (stack output ComponentZones, proxies unknown) and
 * what each target adds per hour (lib/cost/target-prices.ts): the runner records both. runner-0's
 * `us-east-1b` is what the outputs say; the runner replaces it with what IMDSv2 (moto's metadata
 * stand-in) says, `us-east-1a`.
 */
const ZONES = [
  { component: 'writer', zone: 'us-east-1a' },
  { component: 'runner-0', zone: 'us-east-1b' },
  { component: 'proxy:pgbouncer-transaction', zone: null },
];
const TARGET_PRICES = [
  { target: 'direct', usdPerHour: 0, basis: 'the database itself: billed whichever target is measured' },
  { target: 'pgbouncer-transaction', usdPerHour: 0.03, basis: 'RDS Proxy stand-in: 2 vCPU × $0.015' },
];

async function writeRequest(
  db: Db,
  runId: string,
  runnerCount: number,
  startAt: string | null,
  proxyPort: number = db.stack.pgbouncer.port,
  suite = 'smoke',
): Promise<RunRequest> {
  const request = localRunRequest({
    runId,
    bucket: BUCKET,
    secretArn: db.secretArn,
    postgresPort: db.stack.postgres.port,
    proxyPort,
    runnerCount,
    startAt,
    database: RDS_POCKET,
    suite,
    zones: ZONES,
    targetPrices: TARGET_PRICES,
  });
  await writeRunRequest(s3, request);
  return request;
}

/**
 * Each step of the lab test: a fixed number of the lab's transactions per client (pgbench -t)
 * instead of its 20 s (-T 20). What is checked is that the script travels in the request and runs
 * on every target at every client count, not a measurement: -t ends each step after a few dozen
 * transactions, where even -T 1 kept pgbench and PostgreSQL at full speed on both cores for 18 s.
 */
const LAB_TRANSACTIONS_PER_CLIENT = 20;

/**
 * What `proxylab run --suite lab` writes for labs/own-workload.json: its scenarios, each step
 * shortened to LAB_TRANSACTIONS_PER_CLIENT transactions per client (the lab's `transactionsPerClient`).
 */
async function writeLabRequest(db: Db, runId: string): Promise<RunRequest> {
  const lab = loadLabFile(path.join(__dirname, '..', '..', 'labs', 'own-workload.json'));
  const request = localRunRequest({
    runId,
    bucket: BUCKET,
    secretArn: db.secretArn,
    postgresPort: db.stack.postgres.port,
    proxyPort: db.stack.pgbouncer.port,
    runnerCount: 1,
    database: RDS_POCKET,
    suite: 'lab',
    scenarios: lab.scenarios.map((s) => ({
      ...s,
      durationSec: null,
      transactionsPerClient: LAB_TRANSACTIONS_PER_CLIENT,
    })),
  });
  await writeRunRequest(s3, request);
  return request;
}

/**
 * Run the bundled runner with the one input it gets; `killAfter` sends SIGTERM once stdout matches
 * it; `test`: LOCAL_STAND_IN_TEST_SUITES when the request names a test-only suite (`--test-suites on`).
 */
function runRunner(
  runId: string,
  runnerIndex: number,
  killAfter: RegExp | null = null,
  test: RunnerArgvTestSettings = LOCAL_STAND_IN,
): Promise<Proc> {
  const argv = requestRunnerArgv({
    url: requestUrl(BUCKET, runId),
    runnerIndex,
    region: null,
    test,
  });
  // no endpoint mini-syntax (`name=host[:port]…`) and no target on the command line: all in the request
  expect(argv.join(' ')).not.toMatch(/--proxies|--writer-endpoint|--secret-arn|=127\.0\.0\.1/);
  const args = [runnerJs, ...argv];
  return new Promise((resolve) => {
    // The runner's own audit log: its calls are checked against the runner role after the test.
    const callLog = path.join(scratchDir('proxylab-runner-calls-'), 'calls.jsonl');
    const child = spawn(process.execPath, args, {
      // IMDSv2 is moto's instance-metadata stand-in (placement/availability-zone: us-east-1a)
      env: {
        ...motoEnv(moto),
        AWS_EC2_METADATA_DISABLED: 'false',
        AWS_EC2_METADATA_SERVICE_ENDPOINT: moto.endpoint,
        [AWS_CALL_LOG_ENV]: callLog,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.on('close', () => recordCallLog(callLog, RUNNER));
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString('utf8');
      if (killAfter && !killed && killAfter.test(stdout)) {
        killed = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

async function s3Text(key: string): Promise<string> {
  const res = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return (await res.Body?.transformToString('utf-8')) ?? '';
}

async function s3Steps(runId = RUN_ID): Promise<StepRecord[]> {
  const res = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `runs/${runId}/steps/` }));
  const keys = (res.Contents ?? []).map((c) => c.Key as string).filter((k) => k.endsWith('.json'));
  return Promise.all(keys.map(async (k) => JSON.parse(await s3Text(k)) as StepRecord));
}

function readSteps(runDir: string): Map<string, StepRecord> {
  const dir = path.join(runDir, 'steps');
  const out = new Map<string, StepRecord>();
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.json'))) {
    const rec = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as StepRecord;
    out.set(rec.stepId, rec);
  }
  return out;
}

function listFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

/** Top-level and nested key sets that make the "shape" of a step record (optional note/parts aside). */
function shape(rec: StepRecord): Record<string, string[]> {
  const keys = (o: object | null): string[] => (o === null ? [] : Object.keys(o).sort());
  return {
    top: keys(rec).filter((k) => k !== 'note' && k !== 'parts'),
    params: keys(rec.params),
    result: keys(rec.result),
    verdict: keys(rec.verdict),
    files: keys(rec.files),
    target: keys(rec.target),
  };
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-cloud-it-'));
  // the bundle `cdk synth` ships (content-keyed cache: built once per checkout and content)
  runnerJs = runnerBundleOnce().file;
  // the chain's reference run needs nothing from the others: it runs while they are set up and run
  const localOut = path.join(tmp, 'local');
  const local = spawnCli([
    'local',
    '--test-suite',
    CHAIN_SUITE,
    '--out',
    localOut,
    '--run-id',
    'local-ref',
    '--no-install',
    '--test-pgdata-template',
    pgdataTemplate(),
  ]);
  localRef = { out: localOut, code: local.exit, output: () => `${local.stdout()}\n${local.stderr()}` };
  const stacks = Promise.all([
    startLocalStack(),
    startLocalStack(),
    startLocalStack(),
    startLocalStack(),
    startLocalStack(),
  ]);
  moto = await startMoto();
  s3 = new S3Client({ ...motoClientConfig(moto), forcePathStyle: true });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  const [chain, fleet, brokenFleet, lab, session] = await stacks;
  // the shape RDS generates for a cluster secret
  const withSecret = async (stack: LocalStack, name: string): Promise<Db> => ({
    stack,
    secretArn: await createDbSecret(moto, name, stack.postgres.port, PASSWORD),
  });
  chainDb = await withSecret(chain, 'proxylab-it-db');
  fleetDb = await withSecret(fleet, 'proxylab-it-fleet-db');
  brokenFleetDb = await withSecret(brokenFleet, 'proxylab-it-broken-fleet-db');
  labDb = await withSecret(lab, 'proxylab-it-lab-db');
  sessionDb = await withSecret(session, 'proxylab-it-session-db');
}, 90_000);

afterAll(async () => {
  await Promise.all([
    chainDb?.stack.stop(),
    fleetDb?.stack.stop(),
    brokenFleetDb?.stack.stop(),
    labDb?.stack.stop(),
    sessionDb?.stack.stop(),
    // (a failed beforeAll may leave the reference run going: it ends with its steps)
    localRef?.code,
    moto?.stop(),
  ]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('runner → moto S3, killed and resumed, fetched like a local run', () => {
  let first: Proc;
  let second: Proc;
  let before: Map<string, StepRecord>;

  test('SIGTERM after two steps keeps exactly the finished steps in S3', async () => {
    // WHEN the runner is killed right after its second step ended
    await writeRequest(chainDb, RUN_ID, 1, null, chainDb.stack.pgbouncer.port, CHAIN_SUITE);
    first = await runRunner(
      RUN_ID,
      0,
      /\[2\/\d+\] \S+: (completed|timeout|not-available)/,
      LOCAL_STAND_IN_TEST_SUITES,
    );
    // THEN it stopped on the signal, cleanly, with the two finished steps written
    expect(first.stderr).toContain('SIGTERM: stopping');
    expect(first.code).toBe(1);
    const steps = await s3Steps();
    expect(steps.length).toBeGreaterThanOrEqual(2);
    const manifest = JSON.parse(await s3Text(`runs/${RUN_ID}/manifest.json`)) as RunManifest;
    expect(steps.length).toBeLessThan(manifest.stepIds.length);
    expect(manifest.status).toBe('interrupted');
    expect(manifest.mode).toBe('cloud');
    before = new Map(steps.map((s) => [s.stepId, s]));
  }, 100_000);

  test('a re-run with the same run id finishes the rest without repeating finished steps', async () => {
    // WHEN
    second = await runRunner(RUN_ID, 0, null, LOCAL_STAND_IN_TEST_SUITES);
    // THEN it completed every planned step
    if (second.code !== 0) process.stderr.write(`runner output:\n${second.stdout}\n${second.stderr}\n`);
    expect(second.stdout).toMatch(/resuming \(\d+ already done\)/);
    const manifest = JSON.parse(await s3Text(`runs/${RUN_ID}/manifest.json`)) as RunManifest;
    expect(manifest.status).toBe('completed');
    const after = new Map((await s3Steps()).map((s) => [s.stepId, s]));
    expect([...after.keys()].sort()).toEqual([...manifest.stepIds].sort());
    // the steps of the first attempt were skipped, not run again: same start time, "skipped" said
    for (const [id, rec] of before) {
      expect(after.get(id)?.startedAt).toBe(rec.startedAt);
      expect(second.stdout).toContain(`${id}: already done, skipped`);
    }
    // every verdict held (exit 0)
    expect(second.code).toBe(0);
    expect([...after.values()].every((r) => r.verdict.held !== false)).toBe(true);
  }, 100_000);

  test('fetch copies the run into the layout proxylab local writes, with the same step shape', async () => {
    // GIVEN what proxylab local writes for the same suite (the run started in beforeAll)
    const localOut = localRef.out;
    const localCode = await localRef.code;
    // On failure the output says why (a broken verdict is on stdout, an error on stderr).
    const why = localCode === 0 ? '' : localRef.output();
    expect({ localCode, why }).toEqual({ localCode: 0, why: '' });
    // WHEN the cloud run is fetched from moto
    const fetchOut = path.join(tmp, 'fetched');
    const fetch = spawnCli(
      ['fetch', RUN_ID, '--bucket', BUCKET, '--out', fetchOut],
      motoEnv(moto) as Record<string, string>,
    );
    const fetchCode = await fetch.exit;
    // (stderr may carry the AWS SDK's Node-version notice; only the exit code and errors matter)
    expect({ fetchCode, err: fetchCode === 0 ? '' : fetch.stderr() }).toEqual({ fetchCode: 0, err: '' });
    expect(fetch.stderr()).not.toMatch(/error|failed/i);
    expect(fetch.stdout()).toMatch(new RegExp(`${RUN_ID} \\[${CHAIN_SUITE}\\] completed: (\\d+)/\\1 steps`));
    // THEN the same files and the same step records, shape for shape
    const cloudDir = path.join(fetchOut, RUN_ID);
    const localDir = path.join(localOut, 'local-ref');
    const cloud = readSteps(cloudDir);
    const loc = readSteps(localDir);
    expect([...cloud.keys()].sort()).toEqual([...loc.keys()].sort());
    for (const [id, rec] of cloud) {
      const ref = loc.get(id) as StepRecord;
      expect({ id, shape: shape(rec) }).toEqual({ id, shape: shape(ref) });
      expect(rec.target).toEqual(ref.target);
      expect(rec.params).toEqual(ref.params);
      for (const f of [rec.files.stdout, rec.files.stderr])
        expect(fs.existsSync(path.join(cloudDir, f))).toBe(true);
      if (rec.files.log !== null) expect(fs.existsSync(path.join(cloudDir, rec.files.log))).toBe(true);
    }
    const cloudManifest = JSON.parse(
      fs.readFileSync(path.join(cloudDir, 'manifest.json'), 'utf8'),
    ) as RunManifest;
    const localManifest = JSON.parse(
      fs.readFileSync(path.join(localDir, 'manifest.json'), 'utf8'),
    ) as RunManifest;
    expect(Object.keys(cloudManifest).sort()).toEqual(Object.keys(localManifest).sort());
    expect(Object.keys(cloudManifest.environment).sort()).toEqual(
      Object.keys(localManifest.environment).sort(),
    );
    expect(cloudManifest.stepIds).toEqual(localManifest.stepIds);
    expect(cloudManifest.environment.maxConnections).toBe(40);
    // the fetched run names the database the request described, the local one its own PostgreSQL
    expect(cloudManifest.environment.database).toEqual({ engine: 'postgres', instanceClass: 'db.t4g.micro' });
    // every component's zone: the outputs', the runner's own from IMDSv2; the prices as the operator sent them
    expect(cloudManifest.environment.zones).toEqual([
      { component: 'writer', zone: 'us-east-1a' },
      { component: 'runner-0', zone: 'us-east-1a' },
      { component: 'proxy:pgbouncer-transaction', zone: null },
    ]);
    expect(cloudManifest.environment.targetPrices).toEqual(TARGET_PRICES);
    expect([localManifest.environment.zones, localManifest.environment.targetPrices]).toEqual([null, null]);
    // the connections held on the database, watched by runner 0 around every measured step
    for (const [id, rec] of cloud) {
      if (rec.status === 'not-available') continue;
      const held = rec.serverConnections;
      expect({
        id,
        counted: [held?.before, held?.peak, held?.after].every((n) => typeof n === 'number'),
      }).toEqual({
        id,
        counted: true,
      });
      expect(held?.peak ?? 0).toBeGreaterThanOrEqual(held?.before ?? Infinity);
    }
    expect(localManifest.environment.database).toEqual({ engine: 'local', instanceClass: null });
    expect(fs.existsSync(path.join(cloudDir, 'metrics', 'runner.json'))).toBe(true);
    // and the report renders from the fetched run like from a local one
    expect(fetch.stdout()).toContain(`report: ${path.join(cloudDir, 'report.html')}`);
    expect(fs.statSync(path.join(cloudDir, 'report.html')).size).toBeGreaterThan(1000);
    const summary = fs.readFileSync(path.join(cloudDir, 'summary.md'), 'utf8');
    expect(summary).toContain(CHAIN_SUITE);
    // the fetched run's report opens with the decision table, priced from the run's environment
    expect(summary.indexOf('## Decision table')).toBeGreaterThan(0);
    expect(summary.indexOf('## Decision table')).toBeLessThan(summary.indexOf('## Findings'));
    // († after tps: figures not comparable across the scenario's targets; smoke's table has it, test-steps' does not)
    expect(summary).toMatch(/\| pgbouncer-transaction \| [\d,.]+(?: †)? \|[^\n]*\| \$0\.03 \| \$0\.\d+ \|/);
    expect(summary).toMatch(/\| direct \| [^\n]*\| \$0 \| (\$0|\?) \|/);
    // and the report text names the engine and class, not an assumed Aurora
    const reportHtml = fs.readFileSync(path.join(cloudDir, 'report.html'), 'utf8');
    expect(reportHtml).toContain('<dd id="database">RDS for PostgreSQL db.t4g.micro</dd>');
    expect(summary).toContain('database RDS for PostgreSQL db.t4g.micro');
    // (the published findings quote Aurora figures and cite sources whose titles name Aurora, e.g.
    // E3's; outside those citations the report must not claim Aurora)
    const citedTitles = EXPERIMENT_SOURCES.map((e) => e.source.title);
    expect(citedTitles.some((t) => t.includes('Aurora PostgreSQL'))).toBe(true);
    for (const text of [reportHtml, summary]) {
      const uncited = citedTitles.reduce(
        (acc, t) => acc.split(t).join('').split(escapeHtml(t)).join(''),
        text,
      );
      expect(uncited).not.toContain('Aurora PostgreSQL');
    }
    expect(fs.readFileSync(path.join(localDir, 'summary.md'), 'utf8')).toContain('database local PostgreSQL');
  }, 120_000);

  test('the password is nowhere: not in a fetched file, not in the runner output', () => {
    const files = listFiles(path.join(tmp, 'fetched'));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files)
      expect({ f, leaked: fs.readFileSync(f, 'utf8').includes(PASSWORD) }).toEqual({ f, leaked: false });
    for (const p of [first, second]) {
      expect(p.stdout).not.toContain(PASSWORD);
      expect(p.stderr).not.toContain(PASSWORD);
    }
  });
});

describe('session-state through the runner: a proxy that pins, its pinning metric mocked, the fetched run draws the matrix', () => {
  const runId = 'cloud-it-session';
  /**
   * The two tests run beside the chain on their own database (test.concurrent); the second reads
   * what the first measured: it waits for the step records (null: the first failed before them).
   */
  let measured: (steps: StepRecord[] | null) => void = () => undefined;
  const sessionSteps = new Promise<StepRecord[] | null>((resolve) => (measured = resolve));

  test.concurrent(
    'the runner measures every feature on the writer and the proxy, and records where the proxy’s pins are',
    async () => {
      try {
        await measureSessionState();
      } finally {
        measured(null); // (no effect once the records were handed over)
      }
    },
    120_000,
  );

  async function measureSessionState(): Promise<void> {
    // GIVEN the probe's roles made up front by a DBA (the secret's user may not create roles), and
    // PostgreSQL itself standing in for an RDS Proxy: for session state, a proxy that pins every
    // session it changes behaves like a direct connection
    await psqlQuery(sessionDb.stack.postgres.superuserTarget('bench'), [
      'CREATE ROLE proxylab_probe_a NOLOGIN',
      'CREATE ROLE proxylab_probe_b NOLOGIN',
      'GRANT proxylab_probe_a, proxylab_probe_b TO bench',
    ]);
    await writeRunRequest(
      s3,
      localRunRequest({
        runId,
        bucket: BUCKET,
        secretArn: sessionDb.secretArn,
        postgresPort: sessionDb.stack.postgres.port,
        proxyPort: sessionDb.stack.postgres.port,
        runnerCount: 1,
        suite: 'session-state',
        proxy: { name: 'pool100', dbProxyName: 'lab-pool100' },
      }),
    );
    // WHEN the runner runs the suite, the proxy of kind rds-proxy (each feature holds its state for
    // a whole 200 ms "period" instead of CloudWatch's minute)
    const proc = await runRunner(runId, 0, null, {
      ...LOCAL_STAND_IN,
      proxyTargetKind: 'rds-proxy',
      pinPeriodMs: 200,
    });
    if (proc.code !== 0) process.stderr.write(`runner output:\n${proc.stdout}\n${proc.stderr}\n`);
    // THEN every feature worked on both, as the sources expect (the proxy pins, so nothing is shared)
    expect(proc.code).toBe(0);
    const steps = await s3Steps(runId);
    measured(steps);
    expect(steps.map((s) => [s.target.name, s.verdict.held]).sort()).toEqual([
      ['direct', true],
      ['pool100', true],
    ]);
    const proxy = steps.find((s) => s.target.name === 'pool100')?.probe as SessionStateResult;
    expect(proxy.sharing).toMatch(/^RDS Proxy: not narrowed/);
    expect(proxy.features).toHaveLength(16);
    for (const f of proxy.features) {
      expect({ f: f.feature, outcome: f.outcome }).toEqual({ f: f.feature, outcome: 'works' });
      expect(f.pinWatch).toMatchObject({
        metric: PINNED_METRIC,
        dimensions: { ProxyName: 'lab-pool100' },
        periodSec: 0.2,
      });
      // a whole period lies inside the window the state was held in
      const start = Date.parse(f.pinWatch?.start ?? '');
      const end = Date.parse(f.pinWatch?.end ?? '');
      expect(Math.ceil(start / 200) * 200 + 200).toBeLessThanOrEqual(end);
    }
    const direct = steps.find((s) => s.target.name === 'direct')?.probe as SessionStateResult;
    expect(direct.features.every((f) => f.pinWatch === null)).toBe(true);
  }

  test.concurrent(
    'with the collector’s pinning series in the bucket, fetch renders pins where the metric shows them',
    async () => {
      const steps = await sessionSteps;
      if (steps === null)
        throw new Error('the runner test above failed before it read its steps: nothing to fetch');
      // GIVEN the collector's CloudWatch file (mocked): a pinned connection in each feature's whole
      // period, except the transaction-level advisory lock, which RDS Proxy does not pin
      const proxy = steps.find((s) => s.target.name === 'pool100')?.probe as SessionStateResult;
      const points: Array<[string, number]> = proxy.features.map((f) => [
        new Date(Math.ceil(Date.parse(f.pinWatch?.start ?? '') / 200) * 200).toISOString(),
        f.feature === 'advisory-xact-lock' ? 0 : 1,
      ]);
      // (a client of its own: recordAws marks every later call of a client as the collector's, and the
      // tests beside this one use the shared one)
      const collectorS3 = recordAws(
        new S3Client({ ...motoClientConfig(moto), forcePathStyle: true }),
        COLLECTOR,
      );
      const writer = new S3RunWriter(collectorS3, BUCKET, runId);
      await writer.writeMetricsFile('cloudwatch', {
        schemaVersion: 1,
        runId,
        window: { start: steps[0]?.startedAt ?? '', end: new Date().toISOString() },
        collectedAt: new Date().toISOString(),
        series: [
          {
            source: 'cloudwatch',
            name: PINNED_METRIC,
            stat: 'Sum',
            unit: 'Count',
            dimensions: { ProxyName: 'lab-pool100' },
            points,
            status: 'ok',
          },
        ],
      });
      // WHEN the run is fetched (and its report written)
      const out = path.join(tmp, 'fetched-session');
      const fetch = spawnCli(
        ['fetch', runId, '--bucket', BUCKET, '--out', out],
        motoEnv(moto) as Record<string, string>,
      );
      expect({ code: await fetch.exit, err: fetch.stderr().match(/error.*/i)?.[0] ?? '' }).toEqual({
        code: 0,
        err: '',
      });
      // THEN the matrix has a column per target, and the proxy's cells say whether the metric saw a pin
      const page = fs.readFileSync(path.join(out, runId, 'report.html'), 'utf8');
      expect(page.match(/<td class="so-[a-z-]+" title="/g)?.length).toBe(32);
      const cell = (feature: string): string =>
        new RegExp(
          `data-feature="${feature}" data-target="pool100"[^>]*>[^<]*<span[^>]*>[^<]*</span>[^<]*<span class="pin"[^>]*>([^<]*)<`,
        ).exec(page)?.[1] ?? 'none';
      expect(cell('set-session')).toBe('pins');
      expect(cell('advisory-xact-lock')).toBe('no pin');
      const summary = fs.readFileSync(path.join(out, runId, 'summary.md'), 'utf8');
      expect(summary).toContain('| SET (session) | ✓ works | ✓ works · pins |');
      expect(summary).toContain('| advisory lock (transaction) | ✓ works | ✓ works · no pin |');
      // the expectation and its source travel with each cell (the hover text)
      expect(page).toContain('AWS lists &quot;Using SET commands&quot; as pinning');
      expect(page).toContain(
        'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-pinning.html',
      );
    },
    120_000,
  );
});

describe('two runner processes split every step through the S3 barrier (moto)', () => {
  test.concurrent(
    'each step merged from two parts, clients adding up, data loaded once, findings still hold',
    async () => {
      // GIVEN two runners of one run, started together
      const fleetRun = 'cloud-it-fleet';
      const startAt = new Date().toISOString();
      // (smoke's scenarios and findings at -T 1, test-smoke-short: the fleet's merge is the point)
      const request = await writeRequest(
        fleetDb,
        fleetRun,
        2,
        startAt,
        fleetDb.stack.pgbouncer.port,
        'test-smoke-short',
      );
      // WHEN
      const [r0, r1] = await Promise.all([
        runRunner(fleetRun, 0, null, LOCAL_STAND_IN_TEST_SUITES),
        runRunner(fleetRun, 1, null, LOCAL_STAND_IN_TEST_SUITES),
      ]);
      // THEN both finished the run
      if (r0.code !== 0 || r1.code !== 0)
        process.stderr.write(`runner 0:\n${r0.stdout}${r0.stderr}\nrunner 1:\n${r1.stdout}${r1.stderr}\n`);
      expect([r0.code, r1.code]).toEqual([0, 0]);
      expect(r0.stdout).toContain('loading pgbench data');
      const steps = await s3Steps(fleetRun);
      const manifest = JSON.parse(await s3Text(`runs/${fleetRun}/manifest.json`)) as RunManifest;
      expect(manifest.status).toBe('completed');
      expect(steps.map((s) => s.stepId).sort()).toEqual([...manifest.stepIds].sort());
      // plan.json, written once by runner 0: every step with its target descriptor and both shares
      // request.json is what the operator wrote, schema-valid, without the password
      const stored = await s3Text(`runs/${fleetRun}/request.json`);
      expect(runRequestSchema.parse(JSON.parse(stored))).toEqual(request);
      expect(stored).not.toContain(PASSWORD);
      const plan = planSchema.parse(JSON.parse(await s3Text(`runs/${fleetRun}/plan.json`)));
      expect(plan.steps.map((s) => s.stepId)).toEqual(manifest.stepIds);
      expect(plan.runnerCount).toBe(2);
      for (const s of plan.steps) {
        expect(s.descriptor.name).toBe(s.target.name);
        expect(s.shares.map((x) => x.runnerIndex)).toEqual([0, 1]);
        expect(s.shares.reduce((a, x) => a + x.clients, 0)).toBe(s.params.clients);
      }
      expect(JSON.stringify(plan)).not.toContain(PASSWORD);
      // `proxylab run`'s own code path on what the runners left in S3: every verdict held → exit 0
      const totals = await operatorVerdict(fleetRun);
      expect(totals).toMatchObject({ broke: 0, comparisonsBroke: 0, exit: 0 });
      // the churn comparison (pooled -C faster than direct -C), judged on the merged records, held
      expect(manifest.scenarioVerdicts?.map((v) => [v.scenario, v.held])).toEqual([['smoke-churn', true]]);
      for (const step of steps) {
        // two parts whose clients add up to the step's, each with its own measurement
        expect(step.parts?.map((p) => p.runnerId)).toEqual(['runner-0', 'runner-1']);
        expect((step.parts ?? []).reduce((a, p) => a + p.clients, 0)).toBe(step.params.clients);
        expect(
          Math.abs((step.parts?.[0]?.clients ?? 0) - (step.parts?.[1]?.clients ?? 0)),
        ).toBeLessThanOrEqual(1);
        if (step.result?.transactionsProcessed != null) {
          const partTx = (step.parts ?? []).reduce((a, p) => a + (p.result?.transactionsProcessed ?? 0), 0);
          expect(step.result.transactionsProcessed).toBe(partTx);
        }
        expect(step.verdict.held).not.toBe(false);
      }
      // the 60 direct clients were refused in part by the server (30 + 30 > max_connections 40)
      const refused = steps.find((s) => s.stepId === 'smoke-max-connections/direct/c60/simple/persistent/r1');
      expect(refused?.result?.errors.some((e) => e.class === 'too-many-connections')).toBe(true);
      // every part of a step started at the time runner 0 planned once both were ready
      for (const step of steps.filter((s) => s.result !== null)) {
        const plan = JSON.parse(
          await s3Text(
            `runs/${fleetRun}/fleet/${startAt.replace(/[^A-Za-z0-9._-]+/g, '_')}/${step.stepId.replace(/[^A-Za-z0-9._-]+/g, '_')}/plan.json`,
          ),
        ) as { startAt: string };
        expect(step.startedAt).toBe(plan.startAt);
      }
    },
    150_000,
  );
});

describe("a lab's own scenario in the cloud: the script travels in the request (moto)", () => {
  test.concurrent(
    'labs/own-workload.json through the bundled runner: its script from the request, 3 client counts × 3 repetitions on every target',
    async () => {
      // GIVEN the request `proxylab run --lab labs/own-workload.json --suite lab` writes
      const runId = 'cloud-it-lab';
      const request = await writeLabRequest(labDb, runId);
      const sql = fs.readFileSync(path.join(__dirname, '..', '..', 'labs', 'own-workload.sql'), 'utf8');
      // WHEN one runner runs it
      const r0 = await runRunner(runId, 0);
      // THEN it completed, every verdict held
      if (r0.code !== 0) process.stderr.write(`runner 0:\n${r0.stdout}${r0.stderr}\n`);
      expect(r0.code).toBe(0);
      const manifest = JSON.parse(await s3Text(`runs/${runId}/manifest.json`)) as RunManifest;
      expect([manifest.status, manifest.suite]).toEqual(['completed', 'lab']);
      // the request in S3 is what the operator wrote: the scenario with its script and SHA-256
      const stored = runRequestSchema.parse(JSON.parse(await s3Text(`runs/${runId}/request.json`)));
      expect(stored).toEqual(request);
      expect(stored.scenarios?.[0]?.workload[0]).toEqual({
        file: expect.objectContaining({ path: 'own-workload.sql', name: 'own-workload.sql', sql }),
        weight: 1,
      });
      // the plan runner 0 made from it: the lab's scenario on every target the request describes
      const plan = planSchema.parse(JSON.parse(await s3Text(`runs/${runId}/plan.json`)));
      expect(plan.scenarios?.map((s) => [s.name, s.experiment, s.targets])).toEqual([
        [
          'checkout',
          null,
          [
            { target: 'direct', steps: 9, skipped: null },
            { target: 'pgbouncer-transaction', steps: 9, skipped: null },
          ],
        ],
      ]);
      expect(plan.steps.map((s) => s.stepId)).toEqual(manifest.stepIds);
      expect([...new Set(plan.steps.map((s) => s.params.clients))]).toEqual([4, 8, 16]);
      expect(
        plan.steps.every(
          (s) =>
            s.script.parts[0] !== undefined &&
            'file' in s.script.parts[0] &&
            s.script.parts[0].file.sql === sql,
        ),
      ).toBe(true);
      // every step ran the script, told the scale it was loaded at
      const steps = await s3Steps(runId);
      expect(steps).toHaveLength(18);
      for (const step of steps) {
        expect(step.status).toBe('completed');
        expect(step.verdict.held).toBe(true);
        expect(step.command.join(' ')).toMatch(/ -s 10 .*own-workload\.sql/);
        // each client ran its share of the lab's transactions, and all of them were processed
        expect(step.command.join(' ')).toMatch(new RegExp(` -t ${LAB_TRANSACTIONS_PER_CLIENT} `));
        expect(step.result?.transactionsProcessed).toBe(step.params.clients * LAB_TRANSACTIONS_PER_CLIENT);
      }
      expect(JSON.stringify(plan)).not.toContain(PASSWORD);
    },
    150_000,
  );
});

/** What `proxylab run` does once its runners ended: follow the manifest, count verdicts, decide the exit code. */
async function operatorVerdict(runId: string): Promise<VerdictTotals & { exit: number }> {
  const progress = await followRun({
    s3,
    ssm: null,
    bucket: BUCKET,
    runId,
    sent: [],
    since: new Date(0),
    pollMs: 100,
    print: () => undefined,
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    now: () => new Date(),
  });
  const totals = await verdictCounts(s3, BUCKET, runId);
  return { ...totals, exit: runExitCode(progress.status === 'completed', totals) };
}

describe('two runners where a scenario comparison breaks: proxylab run exits 1', () => {
  test.concurrent(
    'the "pooler" is the server itself, so -C through it is no faster than -C direct',
    async () => {
      // GIVEN a fleet whose proxy endpoint is PostgreSQL itself (no pooling): the churn comparison
      // "-C through PgBouncer ≥ 3 × -C direct" cannot hold
      const runId = 'cloud-it-fleet-broken';
      await writeRequest(
        brokenFleetDb,
        runId,
        2,
        new Date().toISOString(),
        brokenFleetDb.stack.postgres.port,
        'test-smoke-churn',
      );
      const [r0, r1] = await Promise.all([
        runRunner(runId, 0, null, LOCAL_STAND_IN_TEST_SUITES),
        runRunner(runId, 1, null, LOCAL_STAND_IN_TEST_SUITES),
      ]);
      // the runners completed (runner 0 exits 1: its merged verdicts broke)
      const manifest = JSON.parse(await s3Text(`runs/${runId}/manifest.json`)) as RunManifest;
      expect(manifest.status).toBe('completed');
      expect([r0.code, r1.code]).toEqual([1, 0]);
      const churn = manifest.scenarioVerdicts?.find((v) => v.scenario === 'smoke-churn');
      expect(churn?.held).toBe(false);
      // WHEN `proxylab run` concludes through the operator code path
      const totals = await operatorVerdict(runId);
      // THEN the broken comparison is counted and the exit code is 1
      expect(totals.comparisonsBroke).toBeGreaterThanOrEqual(1);
      expect(totals.exit).toBe(1);
    },
    150_000,
  );
});
