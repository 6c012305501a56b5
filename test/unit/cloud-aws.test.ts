/**
 * The cloud adapters' AWS calls, with aws-sdk-client-mock: S3 sink (writes, resume listing with
 * pagination), Secrets Manager, RDS Proxy pool control (modify, wait, restore), SSM SendCommand,
 * Lambda invoke, CloudFormation outputs.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import {
  DescribeDBProxyTargetGroupsCommand,
  ModifyDBProxyTargetGroupCommand,
  RDSClient,
  type ModifyDBProxyTargetGroupCommandInput,
} from '@aws-sdk/client-rds';
import {
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  type PutObjectCommandInput,
} from '@aws-sdk/client-s3';
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { SendCommandCommand, SSMClient } from '@aws-sdk/client-ssm';
import { attributeMock, mockAws } from '../helpers/aws-calls/recorder';
import { operator, RUNNER } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import { InfrastructureError, UsageError } from '../../lib/core/errors';
import { invokeCollector, buildCollectEvent, collectorWindow } from '../../lib/aws/collector-invoke';
import { describeLabOutputs, flattenOutputs } from '../../lib/operator/outputs';
import { RdsProxyPoolControl } from '../../lib/runner/proxy-pool';
import {
  buildRunRequest,
  parseRequestRunnerArgv,
  readRunRequest,
  requestRunnerArgv,
  requestUrl,
  runnerArgsFromRequest,
  runRequestSchema,
  writeRunRequest,
} from '../../lib/aws/run-request';
import { PRODUCTION_RUNNER_SETTINGS, type RunRequestArgs } from '../../lib/aws/runner-args';
import { S3ResultSink } from '../../lib/aws/s3-sink';
import { parseDbSecret, readDbCredentials } from '../../lib/aws/secrets';
import { buildRunCommands, sendRunCommands } from '../../lib/operator/ssm';
import { computeProgress } from '../../lib/operator/runs';
import type { Clock } from '../../lib/engine/ports';
import type { RunManifest, StepRecord } from '../../lib/suite/types';
import { stepRecordWith } from '../helpers/run-files';
import { s3BodyText } from '../helpers/s3-body';

const s3Mock = mockAws(S3Client, RUNNER);
const smMock = mockAws(SecretsManagerClient, RUNNER);
const rdsMock = mockAws(RDSClient, RUNNER);
const ssmMock = mockAws(SSMClient, RUNNER);
const lambdaMock = mockAws(LambdaClient, RUNNER);
const cfnMock = mockAws(CloudFormationClient, RUNNER);

afterEach(() => {
  for (const m of [s3Mock, smMock, rdsMock, ssmMock, lambdaMock, cfnMock]) m.reset();
});

/** A clock whose sleep advances time instantly. */
function fakeClock(start = Date.parse('2026-11-21T10:00:00Z')): Clock & { slept: number[] } {
  let now = start;
  const slept: number[] = [];
  return {
    slept,
    now: () => new Date(now),
    sleep: (ms) => {
      slept.push(ms);
      now += ms;
      return Promise.resolve();
    },
  };
}

function body(text: string): {
  transformToString: () => Promise<string>;
  transformToByteArray: () => Promise<Uint8Array>;
} {
  return {
    transformToString: () => Promise.resolve(text),
    transformToByteArray: () => Promise.resolve(new TextEncoder().encode(text)),
  };
}

function stepRecord(stepId: string): StepRecord {
  return {
    schemaVersion: 1,
    runId: 'run-1',
    stepId,
    scenario: 'smoke-churn',
    target: { kind: 'direct', name: 'direct' },
    params: {
      clients: 5,
      jobs: 1,
      protocol: 'simple',
      connect: 'per-transaction',
      script: 'select-1.sql',
      durationSec: 3,
      transactionsPerClient: null,
      rate: null,
      scale: 1,
      poolPercent: null,
      repetition: 1,
    },
    startedAt: '2026-11-21T10:00:00.000Z',
    endedAt: '2026-11-21T10:00:03.000Z',
    status: 'completed',
    result: null,
    verdict: { expected: 'succeeds', observed: 'succeeded', held: true },
    loadGeneratorSaturated: false,
    saturationReason: null,
    command: ['pgbench'],
    files: { stdout: `steps/x.stdout`, stderr: `steps/x.stderr`, log: null },
  };
}

describe('S3ResultSink', () => {
  test('writes raw files first and the step JSON last, under runs/<runId>/ with the local layout', async () => {
    // GIVEN
    s3Mock.on(PutObjectCommand).resolves({});
    const sink = new S3ResultSink(new S3Client({ region: 'us-east-1' }), 'bucket-1', 'run-1');
    const rec = {
      ...stepRecord('smoke-churn/direct/c5/simple/per-transaction/r1'),
      files: { stdout: 'steps/a.stdout', stderr: 'steps/a.stderr', log: 'steps/a.log' },
    };
    // WHEN
    await sink.writeStep(rec, { stdout: 'OUT', stderr: 'ERR', log: 'LOG' });
    // THEN
    const keys = s3Mock.commandCalls(PutObjectCommand).map((c) => c.args[0].input.Key);
    expect(keys).toEqual([
      'runs/run-1/steps/a.stdout',
      'runs/run-1/steps/a.stderr',
      'runs/run-1/steps/a.log',
      'runs/run-1/steps/smoke-churn_direct_c5_simple_per-transaction_r1.json',
    ]);
    const json = s3Mock.commandCalls(PutObjectCommand)[3]?.args[0].input as PutObjectCommandInput;
    expect(json.ContentType).toBe('application/json');
    expect((JSON.parse(s3BodyText(json.Body)) as { stepId?: unknown }).stepId).toBe(
      'smoke-churn/direct/c5/simple/per-transaction/r1',
    );
  });

  test('completedStepIds follows ListObjectsV2 pages and reads every step JSON, validated', async () => {
    // GIVEN two pages of keys (a raw file and a fleet part among them)
    s3Mock
      .on(ListObjectsV2Command, { Prefix: 'runs/run-1/steps/' })
      .resolvesOnce({
        Contents: [{ Key: 'runs/run-1/steps/a_b_r1.json' }, { Key: 'runs/run-1/steps/a_b_r1.stdout' }],
        IsTruncated: true,
        NextContinuationToken: 't2',
      })
      .resolvesOnce({
        Contents: [{ Key: 'runs/run-1/steps/old_r9.json' }, { Key: 'runs/run-1/steps/x/part-0.json' }],
        IsTruncated: false,
      });
    s3Mock
      .on(GetObjectCommand, { Key: 'runs/run-1/steps/a_b_r1.json' })
      .resolves({ Body: body(JSON.stringify(stepRecordWith({ stepId: 'a/b/r1' }))) } as never);
    s3Mock
      .on(GetObjectCommand, { Key: 'runs/run-1/steps/old_r9.json' })
      .resolves({ Body: body(JSON.stringify(stepRecordWith({ stepId: 'old/r9' }))) } as never);
    const sink = new S3ResultSink(new S3Client({ region: 'us-east-1' }), 'bucket-1', 'run-1');
    // WHEN
    const done = await sink.completedStepIds();
    // THEN
    expect([...done].sort()).toEqual(['a/b/r1', 'old/r9']);
    expect(s3Mock).toHaveReceivedCommandWith(ListObjectsV2Command, {
      Bucket: 'bucket-1',
      Prefix: 'runs/run-1/steps/',
      ContinuationToken: 't2',
    });
    expect(s3Mock.commandCalls(GetObjectCommand).map((c) => c.args[0].input.Key)).toEqual([
      'runs/run-1/steps/a_b_r1.json',
      'runs/run-1/steps/old_r9.json',
    ]);
  });

  test('a malformed step JSON is an error naming the object and the field (resume never guesses)', async () => {
    s3Mock
      .on(ListObjectsV2Command)
      .resolves({ Contents: [{ Key: 'runs/run-1/steps/a_b_r1.json' }], IsTruncated: false });
    s3Mock.on(GetObjectCommand).resolves({
      Body: body(JSON.stringify({ ...stepRecordWith({ stepId: 'a/b/r1' }), status: 'finished' })),
    } as never);
    const sink = new S3ResultSink(new S3Client({ region: 'us-east-1' }), 'bucket-1', 'run-1');
    await expect(sink.completedStepIds()).rejects.toMatchObject({
      code: 'run-file-invalid',
      file: 's3://bucket-1/runs/run-1/steps/a_b_r1.json',
      field: 'status',
    });
  });

  test('readManifest is null when there is none (NoSuchKey), other errors propagate', async () => {
    s3Mock
      .on(GetObjectCommand)
      .rejectsOnce(new NoSuchKey({ message: 'no', $metadata: {} }))
      .rejectsOnce(new Error('AccessDenied'));
    const sink = new S3ResultSink(new S3Client({ region: 'us-east-1' }), 'b', 'run-1');
    await expect(sink.readManifest()).resolves.toBeNull();
    await expect(sink.readManifest()).rejects.toThrow('AccessDenied');
  });
});

describe('Secrets Manager credentials', () => {
  const SECRET = {
    username: 'proxylab',
    password: 'pw-Зx9!"$secret',
    host: 'cl.cluster-x.rds.amazonaws.com',
    port: 5432,
    dbname: 'postgres',
    engine: 'postgres',
  };

  test('reads the RDS-generated secret JSON', async () => {
    smMock
      .on(GetSecretValueCommand, { SecretId: 'arn:secret' })
      .resolves({ SecretString: JSON.stringify(SECRET) });
    const creds = await readDbCredentials(new SecretsManagerClient({ region: 'us-east-1' }), 'arn:secret');
    expect(creds).toEqual({
      username: 'proxylab',
      password: SECRET.password,
      host: SECRET.host,
      port: 5432,
      dbname: 'postgres',
    });
  });

  test.each([
    [{ username: 'u' }, /missing field\(s\) password/],
    [{ password: 'p' }, /missing field\(s\) username/],
    [{ username: 'u', password: 'p', port: 'abc' }, /port is not a TCP port/],
  ])('%j is refused without echoing a value', (secret, message) => {
    expect(() => parseDbSecret(JSON.stringify(secret), 'arn:s')).toThrow(message);
    try {
      parseDbSecret(JSON.stringify(secret), 'arn:s');
    } catch (err) {
      expect((err as Error).message).not.toContain('"p"');
    }
  });

  test('dbname defaults to postgres (RDS omits it), a missing secret is an infrastructure error', async () => {
    expect(parseDbSecret(JSON.stringify({ username: 'u', password: 'p' }), 'x').dbname).toBe('postgres');
    smMock
      .on(GetSecretValueCommand)
      .rejects(new ResourceNotFoundException({ message: 'gone', $metadata: {} }));
    await expect(
      readDbCredentials(new SecretsManagerClient({ region: 'us-east-1' }), 'arn:x'),
    ).rejects.toThrow(InfrastructureError);
  });
});

describe('RdsProxyPoolControl', () => {
  /** A proxy whose target group reports a change only on the second describe after it. */
  function statefulProxy(
    initial: { max: number; idle: number },
    lagDescribes = 1,
  ): { state: { max: number; idle: number } } {
    const state = { ...initial };
    let pending: { max: number; idle: number } | null = null;
    let describesLeft = 0;
    rdsMock.on(ModifyDBProxyTargetGroupCommand).callsFake((input: ModifyDBProxyTargetGroupCommandInput) => {
      pending = {
        max: input.ConnectionPoolConfig?.MaxConnectionsPercent ?? state.max,
        idle: input.ConnectionPoolConfig?.MaxIdleConnectionsPercent ?? state.idle,
      };
      describesLeft = lagDescribes;
      return {};
    });
    rdsMock.on(DescribeDBProxyTargetGroupsCommand).callsFake(() => {
      if (pending && describesLeft-- <= 0) {
        Object.assign(state, pending);
        pending = null;
      }
      return {
        TargetGroups: [
          {
            TargetGroupName: 'default',
            Status: pending ? 'modifying' : 'available',
            ConnectionPoolConfig: { MaxConnectionsPercent: state.max, MaxIdleConnectionsPercent: state.idle },
          },
        ],
      };
    });
    return { state };
  }

  test('sets the percent, waits until the target group reports it, restores the lab values read before', async () => {
    // GIVEN a proxy deployed at 100/50
    const { state } = statefulProxy({ max: 100, idle: 50 });
    const clock = fakeClock();
    const pool = new RdsProxyPoolControl(new RDSClient({ region: 'us-east-1' }), {
      proxyNames: { pool100: 'lab-pool100' },
      clock,
      pollIntervalMs: 2000,
    });
    // WHEN
    await pool.setPoolPercent({ kind: 'rds-proxy', name: 'pool100' }, 25);
    // THEN in effect (idle capped at the new max) and the wait polled
    expect(state).toEqual({ max: 25, idle: 25 });
    expect(pool.currentPercent('pool100')).toEqual({
      maxConnectionsPercent: 25,
      maxIdleConnectionsPercent: 25,
    });
    expect(clock.slept).toEqual([2000]);
    expect(rdsMock).toHaveReceivedCommandWith(ModifyDBProxyTargetGroupCommand, {
      DBProxyName: 'lab-pool100',
      TargetGroupName: 'default',
      ConnectionPoolConfig: { MaxConnectionsPercent: 25, MaxIdleConnectionsPercent: 25 },
    });
    // WHEN restored
    await pool.restore();
    // THEN back to what was deployed
    expect(state).toEqual({ max: 100, idle: 50 });
    expect(
      rdsMock.commandCalls(ModifyDBProxyTargetGroupCommand).at(-1)?.args[0].input.ConnectionPoolConfig,
    ).toEqual({
      MaxConnectionsPercent: 100,
      MaxIdleConnectionsPercent: 50,
    });
  });

  test('lab values given up front win over what the proxy reports (an earlier run may have died mid-sweep)', async () => {
    const { state } = statefulProxy({ max: 25, idle: 25 }, 0);
    const pool = new RdsProxyPoolControl(new RDSClient({ region: 'us-east-1' }), {
      proxyNames: { p: 'lab-p' },
      labValues: { p: { maxConnectionsPercent: 80, maxIdleConnectionsPercent: 40 } },
      clock: fakeClock(),
    });
    await pool.setPoolPercent({ kind: 'rds-proxy', name: 'p' }, 50);
    expect(state).toEqual({ max: 50, idle: 40 });
    await pool.restore();
    expect(state).toEqual({ max: 80, idle: 40 });
  });

  test('gives up with a clear error when the change never shows', async () => {
    rdsMock.on(ModifyDBProxyTargetGroupCommand).resolves({});
    rdsMock.on(DescribeDBProxyTargetGroupsCommand).resolves({
      TargetGroups: [
        {
          Status: 'modifying',
          ConnectionPoolConfig: { MaxConnectionsPercent: 100, MaxIdleConnectionsPercent: 50 },
        },
      ],
    });
    const pool = new RdsProxyPoolControl(new RDSClient({ region: 'us-east-1' }), {
      proxyNames: { p: 'lab-p' },
      clock: fakeClock(),
      waitTimeoutMs: 60_000,
      pollIntervalMs: 5000,
    });
    await expect(pool.setPoolPercent({ kind: 'rds-proxy', name: 'p' }, 30)).rejects.toThrow(
      /still reports 100\/50 % \(status modifying\) after 60 s; wanted 30\/30 %/,
    );
  });

  test.each([
    [{ kind: 'direct' as const, name: 'direct' }, 50, UsageError, /has no pool to resize/],
    [{ kind: 'rds-proxy' as const, name: 'p' }, 120, UsageError, /1–100, got 120/],
    [{ kind: 'rds-proxy' as const, name: 'nope' }, 50, UsageError, /unknown proxy "nope"; this lab has: p/],
  ])('refuses %j at %i %%', async (target, pct, cls, msg) => {
    const pool = new RdsProxyPoolControl(new RDSClient({ region: 'us-east-1' }), {
      proxyNames: { p: 'lab-p' },
      clock: fakeClock(),
    });
    await expect(pool.setPoolPercent(target, pct)).rejects.toThrow(cls);
    await expect(pool.setPoolPercent(target, pct)).rejects.toThrow(msg);
    expect(rdsMock).not.toHaveReceivedCommand(ModifyDBProxyTargetGroupCommand);
  });
});

describe('SSM SendCommand', () => {
  // The CLI (`proxylab run`) sends the commands and writes the request: the operator's run policy.
  beforeAll(() => {
    for (const m of [ssmMock, s3Mock]) attributeMock(m, operator('run'));
  });
  afterAll(() => {
    for (const m of [ssmMock, s3Mock]) attributeMock(m, RUNNER);
  });
  const base: RunRequestArgs = {
    runId: 'r-20261121-1100',
    suite: 'e1',
    bucket: 'lab-results',
    secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:lab-db-AbCdEf',
    proxies: [
      {
        name: 'pool100',
        endpoint: { host: 'lab-pool100.proxy-abc.us-east-1.rds.amazonaws.com', port: 5432 },
        dbProxyName: 'lab-pool100',
        lab: { maxConnectionsPercent: 100, maxIdleConnectionsPercent: 50 },
      },
    ],
    poolers: [],
    poolerAdminSecretArn: null,
    writerEndpoint: { host: 'lab.cluster-abc.us-east-1.rds.amazonaws.com', port: 5432 },
    database: { engine: 'aurora-postgresql', instanceClass: 'db.r6g.large' },
    // what a disruption acts on (issue 22): carried unchanged
    databaseResources: {
      engine: 'aurora-postgresql',
      clusterId: 'lab-cluster',
      instanceIds: ['lab-writer', 'lab-reader1'],
    },
    region: 'us-east-1',
    // what the operator adds for the decision table and the zone record: carried unchanged
    zones: [
      { component: 'writer', zone: 'us-east-1a' },
      { component: 'runner-0', zone: 'us-east-1a' },
      { component: 'proxy:pool100', zone: null },
    ],
    targetPrices: [
      { target: 'direct', usdPerHour: 0, basis: 'the database itself' },
      {
        target: 'pool100',
        usdPerHour: 0.03,
        basis: 'RDS Proxy pool100: 2 vCPU × $0.015',
        // its production option (issue 41): carried unchanged to the run's environment
        production: {
          pricedAs: 'us-east-1 on-demand prices as of 2026-11-21',
          usdPerMonth: 21.6,
          usdPerHour: 0.03,
          basis: 'RDS Proxy pool100 2 vCPU (1 × db.r6g.large, minimum 2) × $0.015/vCPU-h',
          hourlyIsProduction: false,
          hostChoices: null,
          targetUtilisation: 0.7,
          poolerProcesses: 1,
        },
      },
    ],
    startAt: '2026-11-21T11:00:00.000Z',
    collector: {
      functionName: 'lab-collector',
      clusterId: 'lab-cluster',
      instanceIds: ['lab-writer'],
      piResourceIds: ['db-ABC'],
      proxies: ['lab-pool100'],
    },
    barrierTimeoutSec: 900,
    expectVersion: null,
  };

  test('one AWS-RunShellScript per runner: only the request URL and its index, no endpoint mini-syntax', async () => {
    // GIVEN
    ssmMock
      .on(SendCommandCommand)
      .resolves({ Command: { CommandId: '11111111-2222-3333-4444-555555555555' } });
    const request = buildRunRequest(base, 2);
    // WHEN
    const plans = buildRunCommands(['i-0aaaaaaaaaaaaaaaa', 'i-0bbbbbbbbbbbbbbbb'], request);
    const sent = await sendRunCommands(new SSMClient({ region: 'us-east-1' }), plans);
    // THEN
    expect(sent).toEqual([
      {
        instanceId: 'i-0aaaaaaaaaaaaaaaa',
        runnerIndex: 0,
        commandId: '11111111-2222-3333-4444-555555555555',
      },
      {
        instanceId: 'i-0bbbbbbbbbbbbbbbb',
        runnerIndex: 1,
        commandId: '11111111-2222-3333-4444-555555555555',
      },
    ]);
    expect(ssmMock).toHaveReceivedCommandTimes(SendCommandCommand, 2);
    expect(ssmMock).toHaveReceivedCommandWith(SendCommandCommand, {
      DocumentName: 'AWS-RunShellScript',
      InstanceIds: ['i-0bbbbbbbbbbbbbbbb'],
      OutputS3BucketName: 'lab-results',
      OutputS3KeyPrefix: 'runs/r-20261121-1100/ssm/runner-1',
      Parameters: expect.objectContaining({ executionTimeout: ['172800'] }),
    });
    const line = plans[1]?.input.Parameters?.commands?.at(-1) ?? '';
    expect(line).toBe(
      'node /opt/proxylab/runner.js --request s3://lab-results/runs/r-20261121-1100/request.json --runner-index 1 --region us-east-1',
    );
    for (const flag of ['--proxies', '--writer-endpoint', '--secret-arn', '--collector', '--suite'])
      expect(line).not.toContain(flag);
    // round trip: what the runner parses and reads back is what the operator meant
    const cli = parseRequestRunnerArgv(
      requestRunnerArgv({ url: requestUrl('lab-results', base.runId), runnerIndex: 1, region: 'us-east-1' }),
    );
    expect(
      runnerArgsFromRequest(
        runRequestSchema.parse(JSON.parse(JSON.stringify(request))),
        cli.runnerIndex,
        cli.test,
      ),
    ).toEqual({
      ...base,
      ...PRODUCTION_RUNNER_SETTINGS,
      runnerIndex: 1,
      runnerCount: 2,
    });
  });

  test('the request is written under the run, read back schema-checked; a malformed one names the field', async () => {
    s3Mock.on(PutObjectCommand).resolves({});
    const request = buildRunRequest(base, 2);
    await writeRunRequest(new S3Client({ region: 'us-east-1' }), request);
    const put = s3Mock.commandCalls(PutObjectCommand)[0]?.args[0].input as PutObjectCommandInput;
    expect(put.Key).toBe('runs/r-20261121-1100/request.json');
    const text = s3BodyText(put.Body);
    expect(text).not.toMatch(/password/i);
    s3Mock
      .on(GetObjectCommand, { Key: 'runs/r-20261121-1100/request.json' })
      .resolves({ Body: body(text) } as never);
    const url = requestUrl('lab-results', base.runId);
    await expect(readRunRequest(new S3Client({ region: 'us-east-1' }), url)).resolves.toEqual(request);
    const bad = JSON.parse(text) as { targets: { writer: { port: unknown } } };
    bad.targets.writer.port = 'x';
    s3Mock.on(GetObjectCommand).resolves({ Body: body(JSON.stringify(bad)) } as never);
    await expect(readRunRequest(new S3Client({ region: 'us-east-1' }), url)).rejects.toMatchObject({
      code: 'run-file-invalid',
      file: 's3://lab-results/runs/r-20261121-1100/request.json',
      field: 'targets.writer.port',
    });
  });

  test('the runner refuses a bad command line with every problem at once', () => {
    expect(() => parseRequestRunnerArgv(['--runner-index', '-1', '--bogus'])).toThrow(
      /unknown argument "--bogus".*--request: required.*--runner-index: must be an integer ≥ 0/,
    );
    expect(() => parseRequestRunnerArgv(['--request', 's3://b/runs/../request.json'])).toThrow(
      /expected s3:\/\/BUCKET\/runs\/RUNID\/request\.json/,
    );
    const request = buildRunRequest(base, 2);
    expect(() => runnerArgsFromRequest(request, 2)).toThrow(/request is for 2 runner/);
    expect(() =>
      parseRequestRunnerArgv([
        '--request',
        requestUrl('lab-results', base.runId),
        '--test-sslmode',
        'off',
        '--test-proxy-kind',
        'direct',
        '--test-pool-control',
        'no',
        '--test-fleet-lead-ms',
        '1.5',
        '--test-fleet-poll-ms',
        '10',
        '--test-suites',
        'yes',
      ]),
    ).toThrow(
      /--test-sslmode: one of require, prefer, disable, got "off".*--test-proxy-kind: one of rds-proxy, pgbouncer-transaction, pgbouncer-session, pgdoorman-transaction, pgdoorman-session, got "direct".*--test-pool-control: on or off, got "no".*--test-fleet-lead-ms: an integer 50–60000 \(ms\), got "1.5".*--test-fleet-poll-ms: an integer 50–60000 \(ms\), got "10"/,
    );
  });

  test('test-only settings travel on the runner command line, never in the request', () => {
    // GIVEN a request, and a runner started the way the integration tests start it
    const request = runRequestSchema.parse(JSON.parse(JSON.stringify(buildRunRequest(base, 1))));
    const argv = requestRunnerArgv({
      url: requestUrl('lab-results', base.runId),
      runnerIndex: 0,
      region: null,
      endpointUrl: 'http://127.0.0.1:5000',
      test: {
        sslmode: 'disable',
        proxyTargetKind: 'pgbouncer-transaction',
        poolControl: false,
        fleetLeadMs: 1500,
        fleetPollMs: 250,
        testSuites: true,
      },
    });
    // WHEN the runner parses its command line and reads the request
    const cli = parseRequestRunnerArgv(argv);
    const args = runnerArgsFromRequest(request, cli.runnerIndex, cli.test);
    // THEN it runs with the test settings; the request itself has no such field
    expect([
      args.sslmode,
      args.proxyTargetKind,
      args.poolControl,
      args.endpointUrl,
      args.fleetLeadMs,
      args.fleetPollMs,
      args.testSuites,
    ]).toEqual(['disable', 'pgbouncer-transaction', false, 'http://127.0.0.1:5000', 1500, 250, true]);
    expect(Object.keys(request.targets)).not.toContain('sslmode');
    expect(Object.keys(request.targets)).not.toContain('proxyTargetKind');
    expect(Object.keys(request.settings)).not.toContain('poolControl');
    // and without them, a production runner's settings
    expect(runnerArgsFromRequest(request, 0)).toMatchObject(PRODUCTION_RUNNER_SETTINGS);
  });
});

describe('collector invoke', () => {
  const spec = {
    functionName: 'lab-collector',
    clusterId: 'lab-cluster',
    instanceIds: ['w'],
    piResourceIds: ['db-W'],
    proxies: ['lab-pool100'],
  };

  test('invokes with the collector event for the run window', async () => {
    lambdaMock.on(InvokeCommand).resolves({
      StatusCode: 200,
      Payload: new TextEncoder().encode('{"written":["runs/r1/metrics/cloudwatch.json"]}') as never,
    });
    const event = buildCollectEvent(
      spec,
      'r1',
      collectorWindow(new Date('2026-11-21T10:00:00Z'), new Date('2026-11-21T10:30:00Z')),
      'bkt',
    );
    const out = await invokeCollector(new LambdaClient({ region: 'us-east-1' }), 'lab-collector', event);
    expect(out).toEqual({ written: ['runs/r1/metrics/cloudwatch.json'] });
    const sentPayload = lambdaMock.commandCalls(InvokeCommand)[0]?.args[0].input.Payload as Uint8Array;
    expect(JSON.parse(new TextDecoder().decode(sentPayload))).toEqual({
      runId: 'r1',
      window: { start: '2026-11-21T10:00:00.000Z', end: '2026-11-21T10:30:00.000Z' },
      cluster: { clusterId: 'lab-cluster', instanceIds: ['w'], piResourceIds: ['db-W'] },
      proxies: ['lab-pool100'],
      bucket: 'bkt',
    });
  });

  test('a function error becomes an InfrastructureError with its message; short windows widen to a minute', async () => {
    lambdaMock.on(InvokeCommand).resolves({
      FunctionError: 'Unhandled',
      Payload: new TextEncoder().encode('{"errorMessage":"window.end: must be after"}') as never,
    });
    const event = buildCollectEvent(
      spec,
      'r1',
      collectorWindow(new Date('2026-11-21T10:00:00Z'), new Date('2026-11-21T10:00:10Z')),
      'bkt',
    );
    expect(event.window).toEqual({ start: '2026-11-21T09:59:35.000Z', end: '2026-11-21T10:00:35.000Z' });
    await expect(invokeCollector(new LambdaClient({ region: 'us-east-1' }), 'f', event)).rejects.toThrow(
      /collector f failed \(Unhandled\): window.end: must be after/,
    );
  });
});

describe('CloudFormation outputs', () => {
  // Read by every CLI command that finds a lab: the operator's read policy.
  beforeAll(() => attributeMock(cfnMock, operator('read')));
  const outputs = {
    LabName: 'default',
    RunnerInstanceIds: 'i-0aaaaaaaaaaaaaaaa,i-0bbbbbbbbbbbbbbbb',
    ResultsBucketName: 'proxylab-default-results',
    ClusterIdentifier: 'proxylab-default-cluster',
    ClusterEndpoint: 'c.cluster-x.us-east-1.rds.amazonaws.com',
    ClusterReaderEndpoint: 'c.cluster-ro-x.us-east-1.rds.amazonaws.com',
    DatabasePort: '5432',
    DbInstanceIds: 'w1',
    DbInstanceResourceIds: 'db-W1',
    ProxyEndpoints: '{"pool100":"default-pool100.proxy-x.us-east-1.rds.amazonaws.com"}',
    ProxyNames: '{"pool100":"default-pool100"}',
    DbSecretArn: 'arn:aws:secretsmanager:us-east-1:1:secret:db',
    CollectorFunctionName: 'proxylab-default-collector',
  };

  test('DescribeStacks outputs decode into typed values', async () => {
    cfnMock.on(DescribeStacksCommand, { StackName: 'proxylab-default' }).resolves({
      Stacks: [
        {
          StackName: 'proxylab-default',
          StackStatus: 'UPDATE_COMPLETE',
          CreationTime: new Date(),
          Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
        },
      ],
    });
    const out = await describeLabOutputs(
      new CloudFormationClient({ region: 'us-east-1' }),
      'proxylab-default',
    );
    expect(out.runnerInstanceIds).toEqual(['i-0aaaaaaaaaaaaaaaa', 'i-0bbbbbbbbbbbbbbbb']);
    expect(out.proxyEndpoints).toEqual({ pool100: 'default-pool100.proxy-x.us-east-1.rds.amazonaws.com' });
    expect(out.proxyNames).toEqual({ pool100: 'default-pool100' });
    expect(out.databasePort).toBe(5432);
  });

  test.each([
    [
      'missing stack',
      () => cfnMock.on(DescribeStacksCommand).rejects(new Error('Stack with id proxylab-x does not exist')),
      /does not exist in this account\/region: deploy it first/,
    ],
    [
      'still deploying',
      () =>
        cfnMock.on(DescribeStacksCommand).resolves({
          Stacks: [{ StackName: 's', StackStatus: 'CREATE_IN_PROGRESS', CreationTime: new Date() }],
        }),
      /is CREATE_IN_PROGRESS; wait/,
    ],
    [
      'old stack without an output',
      () =>
        cfnMock.on(DescribeStacksCommand).resolves({
          Stacks: [{ StackName: 's', StackStatus: 'CREATE_COMPLETE', CreationTime: new Date(), Outputs: [] }],
        }),
      /stack output \w+ is missing \(stack deployed by an older proxylab\?\)/,
    ],
  ])('%s → InfrastructureError', async (_name, arrange, message) => {
    arrange();
    const p = describeLabOutputs(new CloudFormationClient({ region: 'us-east-1' }), 'proxylab-x');
    await expect(p).rejects.toThrow(InfrastructureError);
    await expect(
      describeLabOutputs(new CloudFormationClient({ region: 'us-east-1' }), 'proxylab-x'),
    ).rejects.toThrow(message);
  });

  test('an outputs file may be cdk --outputs-file JSON, a DescribeStacks response or a flat map', () => {
    const cdkStyle = { 'proxylab-default': outputs };
    const describeStyle = {
      Stacks: [
        {
          StackName: 'proxylab-default',
          Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
        },
      ],
    };
    for (const data of [cdkStyle, describeStyle, outputs])
      expect(flattenOutputs(data, 'proxylab-default', 'f')).toEqual(outputs);
  });
});

describe('progress', () => {
  test('steps done / total and a linear ETA while running; none once done', () => {
    const manifest = {
      runId: 'r',
      suite: 'e2',
      status: 'running',
      startedAt: '2026-11-21T10:00:00Z',
      endedAt: null,
      stepIds: ['a', 'b', 'c', 'd'],
    } as unknown as RunManifest;
    const p = computeProgress('r', manifest, 1, new Date('2026-11-21T10:02:00Z'));
    expect(p).toMatchObject({ stepsDone: 1, stepsTotal: 4, elapsedSec: 120, etaSec: 360 });
    expect(
      computeProgress(
        'r',
        { ...manifest, status: 'completed', endedAt: '2026-11-21T10:08:00Z' },
        4,
        new Date(),
      ).etaSec,
    ).toBeNull();
    expect(computeProgress('r', null, 0, new Date()).status).toBe('not-started');
  });
});
