/**
 * `proxylab run --suite lab` end to end (issue 37): the real CLI, given a lab file with its own
 * scenario and the stack outputs as a file, writes the run request — the lab's scenario with its
 * script text and SHA-256 — to S3 and sends the SSM command; the runner (lib/runner in-process, as
 * scripts/runner.ts wires it) takes exactly what that command says — the request's URL and its
 * index — reads the request from S3, runs the lab's scenario against a local PostgreSQL standing in
 * for the lab's database, and `proxylab status` reads the run back. moto_server is S3, SSM and
 * Secrets Manager; every call is checked against the operator's and the runner's policies.
 *
 * The lab is labs/own-workload.json's scenario and script, cut to what this checks (that they get
 * from `run` to the runner and run there, not a measurement): the writer only (the outputs name no
 * proxy or pooler), one runner, two client counts relative to max_connections, one repetition, 5
 * transactions per client (pgbench -t), scale 1, no expiry to read.
 */
import { expect } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { RDSClient } from '@aws-sdk/client-rds';
import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ListCommandsCommand, SSMClient } from '@aws-sdk/client-ssm';
import {
  parseRequestRunnerArgv,
  readRunRequest,
  runnerArgsFromRequest,
  runRequestSchema,
} from '../../lib/aws/run-request';
import { loadLabFile } from '../../lib/config/load';
import { runnerSoftwareVersion } from '../../lib/constructs/runner-bundle';
import { systemClock } from '../../lib/engine/ports';
import { psqlScalarQuery } from '../../lib/exec/libpq';
import { LocalPgbenchExecutor } from '../../lib/exec/pgbench-executor';
import { labRecordSchema } from '../../lib/results/lab-record';
import { planSchema } from '../../lib/results/schemas';
import { runCloudRunner } from '../../lib/runner/runner';
import { stepFileName, type RunManifest, type StepRecord } from '../../lib/suite/types';
import { RUNNER } from '../helpers/aws-calls/principals';
import { recordAws } from '../helpers/aws-calls/recorder';
import { runCli } from '../helpers/cli';
import { createDbSecret } from '../helpers/cloud-run-request';
import { startLocalStack, type LocalStack } from '../helpers/local-stack';
import { motoClientConfig, motoEnv, startMoto, type MotoServer } from '../helpers/moto';
import { scratchDir } from '../helpers/scratch';

const ROOT = path.resolve(__dirname, '..', '..');
/** This file's own names in the shared moto (test/helpers/moto.ts). */
const LAB_NAME = 'it-run-lab';
const BUCKET = 'proxylab-it-run-lab';
const RUN_ID = 'cloud-it-run-lab';
const RUNNER_ID = 'i-0abcdef0123456789';
const PASSWORD = `it-${randomBytes(12).toString('hex')}`;
const TRANSACTIONS_PER_CLIENT = 5;
const SQL = fs.readFileSync(path.join(ROOT, 'labs', 'own-workload.sql'), 'utf8');

let stack: LocalStack;
let moto: MotoServer;
let s3: S3Client;
let labFile: string;
let outputsFile: string;

/**
 * labs/own-workload.json's scenario and script, cut down (see the header), and the stack outputs a
 * deploy of it would write (`cdk deploy --outputs-file`), its writer being the local PostgreSQL.
 */
function writeLab(dir: string, secretArn: string): void {
  const own = JSON.parse(fs.readFileSync(path.join(ROOT, 'labs', 'own-workload.json'), 'utf8')) as {
    aurora: Record<string, unknown>;
    scenarios: Array<Record<string, unknown>>;
  };
  const [checkout] = own.scenarios;
  const lab = {
    name: LAB_NAME,
    owner: 'proxylab',
    region: 'us-east-1',
    aurora: own.aurora,
    runners: { instanceType: 'c7g.large', count: 1 },
    ttlHours: null,
    scenarios: [
      {
        ...checkout,
        scale: 1,
        clients: [
          { times: 0.05, of: 'maxConnections' },
          { times: 0.1, of: 'maxConnections' },
        ],
        durationSec: undefined,
        transactionsPerClient: TRANSACTIONS_PER_CLIENT,
        repetitions: 1,
        targets: ['direct'],
      },
    ],
    suites: ['lab'],
  };
  labFile = path.join(dir, `${LAB_NAME}.json`);
  fs.writeFileSync(labFile, JSON.stringify(lab));
  fs.writeFileSync(path.join(dir, 'own-workload.sql'), SQL);
  outputsFile = path.join(dir, 'outputs.json');
  fs.writeFileSync(
    outputsFile,
    JSON.stringify({
      [`proxylab-${LAB_NAME}`]: {
        LabName: LAB_NAME,
        RunnerInstanceIds: RUNNER_ID,
        ResultsBucketName: BUCKET,
        ClusterIdentifier: `${LAB_NAME}-cluster`,
        ClusterEndpoint: '127.0.0.1',
        ClusterReaderEndpoint: '127.0.0.1',
        DatabasePort: String(stack.postgres.port),
        DbInstanceIds: `${LAB_NAME}-writer`,
        DbInstanceResourceIds: 'db-ITRUNLAB',
        ProxyEndpoints: '{}',
        ProxyNames: '{}',
        DbSecretArn: secretArn,
        CollectorFunctionName: `${LAB_NAME}-collector`,
        DatabaseEngine: 'aurora-postgresql',
        DbInstanceClass: 'db.r6g.large',
      },
    }),
  );
}

async function s3Text(key: string): Promise<string> {
  const res = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return (await res.Body?.transformToString('utf-8')) ?? '';
}

beforeAll(async () => {
  // (started together: neither needs the other)
  [stack, moto] = await Promise.all([startLocalStack(), startMoto()]);
  s3 = new S3Client({ ...motoClientConfig(moto), forcePathStyle: true });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  const secretArn = await createDbSecret(moto, `${BUCKET}-db`, stack.postgres.port, PASSWORD);
  writeLab(scratchDir('proxylab-run-lab-'), secretArn);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await moto?.stop();
});

test('run --suite lab: the request carries the scenario, the runner runs what the SSM command says, status reads the run', async () => {
  // WHEN the real CLI starts the lab's own scenarios on the lab's runner
  const started = await runCli(
    ['run', '--lab', labFile, '--suite', 'lab', '--outputs', outputsFile, '--run-id', RUN_ID, '--detach'],
    motoEnv(moto),
  );
  // THEN it started them (no `unknown suite "lab"`), one command on the one runner
  expect(started.stderr).not.toMatch(/unknown suite|error|failed/i);
  expect(started.code).toBe(0);
  const sent = new RegExp(
    `^run ${RUN_ID}: suite lab on 1 runner\\(s\\) \\(${RUNNER_ID}: (\\S+)\\)$`,
    'm',
  ).exec(started.stdout);
  expect(sent).not.toBeNull();
  // the request in S3 carries the lab's scenario as validated, script text and SHA-256 included
  const lab = loadLabFile(labFile);
  const request = runRequestSchema.parse(JSON.parse(await s3Text(`runs/${RUN_ID}/request.json`)));
  expect([request.suite, request.runnerCount]).toEqual(['lab', 1]);
  expect(request.scenarios).toEqual(lab.scenarios);
  expect(request.scenarios?.[0]?.workload[0]).toEqual({
    file: expect.objectContaining({ path: 'own-workload.sql', sql: SQL }),
    weight: 1,
  });
  // and beside it lab.json: the lab file's text as `run` read and validated it, with its SHA-256
  const labJson = labRecordSchema.parse(JSON.parse(await s3Text(`runs/${RUN_ID}/lab.json`)));
  expect([labJson.name, labJson.source, labJson.text]).toEqual([
    LAB_NAME,
    labFile,
    fs.readFileSync(labFile, 'utf8'),
  ]);
  // SSM was asked to run the runner on the request's URL, and nothing else
  const ssm = new SSMClient(motoClientConfig(moto));
  const listed = await ssm.send(new ListCommandsCommand({ CommandId: sent?.[1] }));
  ssm.destroy();
  const command = listed.Commands?.[0];
  expect(command?.InstanceIds).toEqual([RUNNER_ID]);
  const line = command?.Parameters?.commands?.at(-1) ?? '';
  expect(line).toBe(
    `node /opt/proxylab/runner.js --request s3://${BUCKET}/runs/${RUN_ID}/request.json --runner-index 0 --region us-east-1`,
  );

  // WHEN the runner takes that command line (scripts/runner.ts: parse it, read the request from S3)
  // with the local stand-in's test settings: no TLS, no RDS API
  const cli = parseRequestRunnerArgv(line.split(' ').slice(2));
  const runnerS3 = recordAws(new S3Client({ ...motoClientConfig(moto), forcePathStyle: true }), RUNNER);
  const args = runnerArgsFromRequest(await readRunRequest(runnerS3, cli.url), cli.runnerIndex, {
    sslmode: 'disable',
    poolControl: false,
  });
  const lines: string[] = [];
  const out = await runCloudRunner(args, {
    s3: runnerS3,
    secrets: recordAws(new SecretsManagerClient(motoClientConfig(moto)), RUNNER),
    rds: recordAws(new RDSClient(motoClientConfig(moto)), RUNNER),
    lambda: recordAws(new LambdaClient(motoClientConfig(moto)), RUNNER),
    executor: new LocalPgbenchExecutor({
      pgbench: stack.bins.pgbench,
      workRoot: scratchDir('proxylab-run-lab-work-'),
    }),
    query: psqlScalarQuery(stack.bins.psql),
    clock: systemClock,
    write: (l) => lines.push(l),
    cpus: 2,
    pollMs: 50,
    // the version check the request asks for: the bundle `cdk synth` ships is this checkout's
    softwareVersion: runnerSoftwareVersion,
    // A run under a minute gets a one-minute metrics window around its middle (collectorWindow),
    // which ends up to 30 s after the run: no wait for it here (moto has no collector to invoke).
    metricsSettleMs: -60_000,
  });

  // THEN the lab's scenario ran on the writer at both client counts, every verdict held
  if (!out.allHeld) process.stderr.write(`runner:\n${lines.join('')}\n`);
  expect(out.allHeld).toBe(true);
  const manifest = JSON.parse(await s3Text(`runs/${RUN_ID}/manifest.json`)) as RunManifest;
  expect([manifest.status, manifest.suite]).toEqual(['completed', 'lab']);
  const plan = planSchema.parse(JSON.parse(await s3Text(`runs/${RUN_ID}/plan.json`)));
  expect(plan.scenarios?.map((s) => [s.name, s.experiment, s.targets])).toEqual([
    ['checkout', null, [{ target: 'direct', steps: 2, skipped: null }]],
  ]);
  // (0.05 and 0.1 of the stand-in's max_connections, 40)
  expect(plan.steps.map((s) => s.params.clients)).toEqual([2, 4]);
  const steps = await Promise.all(
    plan.steps.map(
      async (s) =>
        JSON.parse(await s3Text(`runs/${RUN_ID}/steps/${stepFileName(s.stepId)}.json`)) as StepRecord,
    ),
  );
  for (const step of steps) {
    expect([step.status, step.verdict.held]).toEqual(['completed', true]);
    expect(step.params.scale).toBe(1);
    expect(step.command.join(' ')).toMatch(new RegExp(` -t ${TRANSACTIONS_PER_CLIENT} .*own-workload\\.sql`));
    expect(step.result?.transactionsProcessed).toBe(step.params.clients * TRANSACTIONS_PER_CLIENT);
  }
  expect(JSON.stringify(plan)).not.toContain(PASSWORD);

  // AND `proxylab status` reads it back as the user follows a detached run
  const status = await runCli(['status', RUN_ID, '--lab', labFile, '--outputs', outputsFile], motoEnv(moto));
  expect(status.code).toBe(0);
  expect(status.stdout).toMatch(new RegExp(`^${RUN_ID} \\[lab\\] completed: 2/2 steps`, 'm'));
}, 120_000);
