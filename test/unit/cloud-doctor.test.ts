/**
 * `proxylab doctor` against aws-sdk-client-mock: a healthy lab gives every ✓, and each check,
 * broken once, gives its ✗ with the fix. The runner probe is shellcheck-clean.
 */
import * as path from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { DescribeDBInstancesCommand, RDSClient, RebootDBInstanceCommand } from '@aws-sdk/client-rds';
import {
  GetScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { DescribeSpotInstanceRequestsCommand, EC2Client, type Filter } from '@aws-sdk/client-ec2';
import {
  GetCommandInvocationCommand,
  InvalidInstanceId,
  SendCommandCommand,
  SSMClient,
  type SendCommandCommandInput,
} from '@aws-sdk/client-ssm';
import { mockAws } from '../helpers/aws-calls/recorder';
import { operator } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import { formatChecks, PROBE_POLL_MS, runDoctor, type Check } from '../../lib/operator/doctor';
import { awsStagingKeyReader } from '../../lib/operator/staging-key';
import { GetBucketEncryptionCommand, S3Client } from '@aws-sdk/client-s3';
import { DescribeKeyCommand, GetKeyPolicyCommand, KMSClient } from '@aws-sdk/client-kms';
import type { LabOutputs } from '../../lib/operator/outputs';
import { labOutputsWith, proxyOutputs } from '../helpers/lab-outputs';
import type { PoolerEndpoint } from '../../lib/poolers/pgbouncer/layout';
import { poolerEndpoint } from '../helpers/pooler-endpoint';
import { loadLabFile } from '../../lib/config/load';

const cfn = mockAws(CloudFormationClient, operator('run'));
const rds = mockAws(RDSClient, operator('run'));
const sched = mockAws(SchedulerClient, operator('run'));
const ssm = mockAws(SSMClient, operator('run'));
const s3 = mockAws(S3Client, operator('run'));
const kms = mockAws(KMSClient, operator('run'));
const lambda = mockAws(LambdaClient, operator('run'));
// Only spot labs read Spot requests: judged by the spot lab's (pocket) operator policy.
const ec2 = mockAws(EC2Client, operator('run', 'pocket'));
afterEach(() => [cfn, rds, sched, ssm, lambda, ec2].forEach((m) => m.reset()));

const LAB_FILE = path.resolve(__dirname, '..', '..', 'labs', 'default.json');
const LAB = loadLabFile(LAB_FILE);
const NOW = new Date('2026-11-21T12:00:00Z');
const VERSION = '0123456789abcdef';
const OUTPUTS = labOutputsWith({
  labName: 'default',
  resultsBucketName: 'results-bucket',
  dbSecretArn: 'arn:aws:secretsmanager:eu-west-1:1:secret:x',
  ...proxyOutputs('default', 'pool100'),
});

/** What a healthy runner's probe prints. */
const HEALTHY_PROBE: Record<string, string> = {
  version: VERSION,
  node: 'v22.12.0',
  pgbench: 'pgbench (PostgreSQL) 17.4',
  // chronyc -c tracking on an AL2023 runner (Amazon Time Sync)
  chrony:
    'A9FEA97B,169.254.169.123,3,1795953600.123456789,0.000012345,-0.000003000,0.000021000,-12.345,0.001,0.045,0.000321,0.000123,64.2,Normal',
  secret: 'ok',
  'maxconn.writer': '405',
  'maxconn.pool100': '405',
  's3.write': 'ok',
  's3.read': 'ok',
  's3.list': 'ok',
};

/** What the probe prints: one `key=value` line per check. */
function probeOutput(probe: Record<string, string>): string {
  return Object.entries(probe)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
}

function healthy(probe: Record<string, string> = HEALTHY_PROBE): void {
  cfn.on(DescribeStacksCommand).resolves({
    Stacks: [{ StackName: 'proxylab-default', StackStatus: 'CREATE_COMPLETE', CreationTime: NOW }],
  });
  sched.on(GetScheduleCommand).resolves({
    ScheduleExpression: 'at(2026-11-21T20:00:00)',
    ScheduleExpressionTimezone: 'UTC',
  });
  rds.on(DescribeDBInstancesCommand).resolves({
    DBInstances: [
      { DBInstanceStatus: 'available', DBParameterGroups: [{ ParameterApplyStatus: 'in-sync' }] },
    ],
  });
  ssm.on(SendCommandCommand).resolves({ Command: { CommandId: '11111111-2222-3333-4444-555555555555' } });
  ssm
    .on(GetCommandInvocationCommand)
    .resolves({ Status: 'Success', StandardOutputContent: probeOutput(probe) });
  lambda.on(InvokeCommand).resolves({
    StatusCode: 200,
    Payload: new TextEncoder().encode(
      JSON.stringify({ cloudwatch: { series: { ok: 20 } }, pi: { series: { ok: 5 } } }),
    ) as never,
  });
}

function doctor(
  lab = LAB,
  outputs = OUTPUTS,
  sleep: (ms: number) => Promise<void> = () => Promise.resolve(),
): Promise<Check[]> {
  return runDoctor(lab, 'labs/default.json', outputs, {
    cloudformation: new CloudFormationClient({ region: 'eu-west-1' }),
    rds: new RDSClient({ region: 'eu-west-1' }),
    scheduler: new SchedulerClient({ region: 'eu-west-1' }),
    ssm: new SSMClient({ region: 'eu-west-1' }),
    lambda: new LambdaClient({ region: 'eu-west-1' }),
    ec2: new EC2Client({ region: 'eu-west-1' }),
    softwareVersion: VERSION,
    region: 'eu-west-1',
    now: () => NOW,
    sleep,
  });
}

const failed = (checks: Check[]): Check[] => checks.filter((c) => !c.ok);

test('a healthy lab: every check holds, and doctor changed nothing', async () => {
  healthy();
  const checks = await doctor();
  const out = formatChecks(checks);
  process.stdout.write(`--- doctor output (healthy, mocks) ---\n${out}`);
  expect(failed(checks)).toEqual([]);
  expect(checks.map((c) => c.title)).toEqual([
    'stack proxylab-default',
    'expiry schedule',
    'parameter groups in sync',
    'runner i-0aaaaaaaaaaaaaaaa: reachable through SSM',
    'runner i-0aaaaaaaaaaaaaaaa: runner software',
    'runner i-0aaaaaaaaaaaaaaaa: Node and pgbench',
    'runner i-0aaaaaaaaaaaaaaaa: clock in sync (chrony)',
    'runner i-0aaaaaaaaaaaaaaaa: DB secret readable',
    'runner i-0aaaaaaaaaaaaaaaa: TLS connection to writer',
    'runner i-0aaaaaaaaaaaaaaaa: TLS connection to pool100',
    'runner i-0aaaaaaaaaaaaaaaa: S3 under runs/',
    'collector: CloudWatch',
    'collector: Performance Insights',
  ]);
  expect(out).toMatch(/all 13 checks hold\n$/);
  // read-only towards the lab: no reboot, no schedule update
  expect(rds).not.toHaveReceivedCommand(RebootDBInstanceCommand);
  expect(sched).not.toHaveReceivedCommand(UpdateScheduleCommand);
  // the probe went to this runner with sslmode=require on both targets
  const input: SendCommandCommandInput | undefined = ssm.commandCalls(SendCommandCommand)[0]?.args[0].input;
  expect(input?.InstanceIds).toEqual(['i-0aaaaaaaaaaaaaaaa']);
  const script = (input?.Parameters?.commands ?? []).join('\n');
  expect(script).toContain(
    'host=default.cluster-x.eu-west-1.rds.amazonaws.com port=5432 dbname=postgres sslmode=require',
  );
  expect(script).toContain(
    'host=default-pool100.proxy-x.eu-west-1.rds.amazonaws.com port=5432 dbname=postgres sslmode=require',
  );
});

type Breaker = () => void;
const breaks: Array<[string, Breaker, RegExp, RegExp]> = [
  [
    'stack status',
    () =>
      cfn
        .on(DescribeStacksCommand)
        .resolves({ Stacks: [{ StackName: 's', StackStatus: 'DELETE_FAILED', CreationTime: NOW }] }),
    /stack proxylab-default: DELETE_FAILED/,
    /proxylab destroy --lab labs\/default\.json/,
  ],
  [
    'expiry schedule',
    () =>
      sched
        .on(GetScheduleCommand)
        .rejects(new ResourceNotFoundException({ message: 'x', Message: 'x', $metadata: {} })),
    /expiry schedule: not found/,
    /npx proxylab deploy --lab labs\/default\.json/,
  ],
  [
    'parameter groups',
    () =>
      rds.on(DescribeDBInstancesCommand).resolves({
        DBInstances: [
          { DBInstanceStatus: 'available', DBParameterGroups: [{ ParameterApplyStatus: 'pending-reboot' }] },
        ],
      }),
    /parameter groups in sync: default-writer: pending-reboot/,
    /aws rds reboot-db-instance --db-instance-identifier default-writer/,
  ],
  [
    'SSM',
    () =>
      ssm.on(SendCommandCommand).rejects(new InvalidInstanceId({ message: 'not managed', $metadata: {} })),
    /runner i-0aaaaaaaaaaaaaaaa: reachable through SSM: InvalidInstanceId/,
    /aws ssm describe-instance-information/,
  ],
  [
    'runner software version',
    () => healthy({ ...HEALTHY_PROBE, version: 'ffffffffffffffff' }),
    /runner software: ffffffffffffffff, the CLI's is 0123456789abcdef/,
    /replaces the runners with this checkout's runner\.js/,
  ],
  [
    'Node and pgbench',
    () => healthy({ ...HEALTHY_PROBE, pgbench: 'bash: pgbench: command not found' }),
    /Node and pgbench: node: v22\.12\.0; pgbench: bash: pgbench: command not found/,
    /cloud-init-output\.log/,
  ],
  [
    'clock not synchronised',
    () =>
      healthy({ ...HEALTHY_PROBE, chrony: '506C6F63,,0,0.0,0.523000000,0,0,0,0,0,1,1,0,Not synchronised' }),
    /clock in sync \(chrony\): no time source, offset 523\.000 ms, leap status Not synchronised/,
    /systemctl enable --now chronyd/,
  ],
  [
    'no chronyc',
    () => healthy({ ...HEALTHY_PROBE, chrony: 'bash: chronyc: command not found' }),
    /clock in sync \(chrony\): chronyc tracking: bash: chronyc: command not found/,
    /chronyd must run/,
  ],
  [
    'secret',
    () => healthy({ ...HEALTHY_PROBE, secret: 'An error occurred (AccessDeniedException)' }),
    /DB secret readable: An error occurred \(AccessDeniedException\)/,
    /secretsmanager:GetSecretValue/,
  ],
  [
    'TLS to the writer',
    () => healthy({ ...HEALTHY_PROBE, 'maxconn.writer': 'psql: error: connection timed out' }),
    /TLS connection to writer: psql: error: connection timed out/,
    /describe-db-clusters/,
  ],
  [
    'TLS to a proxy',
    () => healthy({ ...HEALTHY_PROBE, 'maxconn.pool100': 'psql: error: SSL required' }),
    /TLS connection to pool100: psql: error: SSL required/,
    /describe-db-proxy-targets --db-proxy-name default-pool100/,
  ],
  [
    'S3',
    () => healthy({ ...HEALTHY_PROBE, 's3.list': 'failed' }),
    /S3 under runs\/: list failed/,
    /s3:ListBucket/,
  ],
  [
    'collector CloudWatch',
    () =>
      lambda.on(InvokeCommand).resolves({
        StatusCode: 200,
        Payload: new TextEncoder().encode(
          JSON.stringify({ cloudwatch: { series: { ok: 0 } }, pi: { series: { ok: 5 } } }),
        ) as never,
      }),
    /collector: CloudWatch: no series with data/,
    /run doctor again in 5 min/,
  ],
  [
    'collector PI',
    () =>
      lambda.on(InvokeCommand).resolves({
        StatusCode: 200,
        Payload: new TextEncoder().encode(
          JSON.stringify({ cloudwatch: { series: { ok: 3 } }, pi: { series: { ok: 0 } } }),
        ) as never,
      }),
    /collector: Performance Insights: no series with data/,
    /pi:GetResourceMetrics/,
  ],
  [
    'collector invocation',
    () =>
      lambda.on(InvokeCommand).resolves({
        StatusCode: 200,
        FunctionError: 'Unhandled',
        Payload: new TextEncoder().encode(
          JSON.stringify({ errorMessage: 'AccessDenied: cloudwatch:GetMetricData' }),
        ) as never,
      }),
    /collector: .*AccessDenied: cloudwatch:GetMetricData/,
    /\/aws\/lambda\/default-collector/,
  ],
];

test.each(breaks)(
  'broken %s: its ✗ with the fix, every other check still ✓',
  async (_what, breakIt, detail, fix) => {
    healthy();
    breakIt();
    const checks = await doctor();
    const out = formatChecks(checks);
    const bad = failed(checks);
    expect(bad).toHaveLength(1);
    expect(out).toMatch(new RegExp(`✗ (runner i-0aaaaaaaaaaaaaaaa: )?${detail.source}`));
    expect(bad[0]?.fix).toMatch(fix);
    expect(out).toMatch(/1 of \d+ checks failed\n$/);
  },
);

test('with a staging-key reader: a bucket under a customer key the host roles cannot use → ✗ right after the stack, naming the statement to add', async () => {
  // GIVEN a healthy lab (us-east-1, as labs/default.json says) in account 123456789012 whose CDK staging bucket uses a customer managed key
  // with KMS's default policy (only IAM policies could grant kms:Decrypt, and the host roles have none)
  healthy();
  cfn.on(DescribeStacksCommand).resolves({
    Stacks: [
      {
        StackName: 'proxylab-default',
        StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/proxylab-default/0d1e2f',
        StackStatus: 'CREATE_COMPLETE',
        CreationTime: NOW,
      },
    ],
  });
  const key = 'arn:aws:kms:us-east-1:123456789012:key/k1';
  s3.on(GetBucketEncryptionCommand).resolves({
    ServerSideEncryptionConfiguration: {
      Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: key } }],
    },
  });
  kms.on(DescribeKeyCommand).resolves({
    KeyMetadata: { KeyId: 'k1', Arn: key, KeyManager: 'CUSTOMER', KeyState: 'Enabled' },
  });
  kms.on(GetKeyPolicyCommand).resolves({
    Policy: JSON.stringify({
      Statement: [
        {
          Effect: 'Allow',
          Principal: { AWS: 'arn:aws:iam::123456789012:root' },
          Action: 'kms:*',
          Resource: '*',
        },
      ],
    }),
  });
  // the reader on the SDK clients doctor gets: its calls are checked against the run role's policy
  const stagingKey = awsStagingKeyReader(
    new S3Client({ region: 'us-east-1' }),
    new KMSClient({ region: 'us-east-1' }),
  );
  // WHEN doctor runs with the reader
  const checks = await runDoctor(LAB, 'labs/default.json', OUTPUTS, {
    cloudformation: new CloudFormationClient({ region: 'us-east-1' }),
    rds: new RDSClient({ region: 'us-east-1' }),
    scheduler: new SchedulerClient({ region: 'us-east-1' }),
    ssm: new SSMClient({ region: 'us-east-1' }),
    lambda: new LambdaClient({ region: 'us-east-1' }),
    ec2: new EC2Client({ region: 'us-east-1' }),
    softwareVersion: VERSION,
    region: 'us-east-1',
    now: () => NOW,
    sleep: () => Promise.resolve(),
    stagingKey,
  });
  // THEN the staging bucket of the stack's account and region was read, and its check failed
  expect(s3.commandCalls(GetBucketEncryptionCommand).map((c) => c.args[0].input.Bucket)).toEqual([
    'cdk-hnb659fds-assets-123456789012-us-east-1',
  ]);
  expect(kms.commandCalls(GetKeyPolicyCommand).map((c) => c.args[0].input)).toEqual([
    { KeyId: key, PolicyName: 'default' },
  ]);
  expect(checks[1]).toMatchObject({
    title: 'CDK staging bucket: the hosts can decrypt the assets',
    ok: false,
  });
  expect(checks[1]?.detail).toMatch(
    /customer managed key arn:aws:kms:us-east-1:123456789012:key\/k1: no statement allows/,
  );
  expect(checks[1]?.fix).toContain('"kms:ViaService":"s3.us-east-1.amazonaws.com"');
  expect(failed(checks).map((c) => c.title)).toEqual([
    'CDK staging bucket: the hosts can decrypt the assets',
  ]);
});

test('max_connections not as the lab says: ✗ with the reboot fix', async () => {
  const lab = { ...LAB, database: { ...LAB.database, maxConnections: 900 } };
  healthy();
  const checks = await doctor(lab);
  expect(formatChecks(checks)).toContain(
    '✗ runner i-0aaaaaaaaaaaaaaaa: TLS connection to writer: SHOW max_connections = 405, the lab says 900',
  );
});

// ---- spot runners: each runner's Spot request, as the stack's canceller will see it ----

const STACK_ID = 'arn:aws:cloudformation:eu-west-1:123456789012:stack/proxylab-default/0b1c';
const SPOT_LAB = { ...LAB, runners: { ...LAB.runners, spot: true } };

/** The stack id in DescribeStacks; DescribeSpotInstanceRequests answers per filter. */
function spotLab(answers: { tagged: object[]; byInstance: object[] }): void {
  healthy();
  cfn.on(DescribeStacksCommand).resolves({
    Stacks: [
      { StackName: 'proxylab-default', StackId: STACK_ID, StackStatus: 'CREATE_COMPLETE', CreationTime: NOW },
    ],
  });
  ec2.on(DescribeSpotInstanceRequestsCommand).callsFake((input: { Filters?: Filter[] }) => {
    const f = input.Filters?.[0];
    if (f?.Name === 'tag:proxylab:stack-id' && f.Values?.[0] === STACK_ID)
      return { SpotInstanceRequests: answers.tagged };
    if (f?.Name === 'instance-id') return { SpotInstanceRequests: answers.byInstance };
    throw new Error(`unexpected filter ${JSON.stringify(input.Filters)}`);
  });
}

const spotCheck = (checks: Check[]): Check | undefined =>
  checks.find((c) => c.title === 'runner i-0aaaaaaaaaaaaaaaa: Spot request');

test('spot runner: its request is tagged with the stack id, active and its own → ✓', async () => {
  spotLab({
    tagged: [{ SpotInstanceRequestId: 'sir-1', InstanceId: 'i-0aaaaaaaaaaaaaaaa', State: 'active' }],
    byInstance: [],
  });
  const checks = await doctor(SPOT_LAB);
  expect(failed(checks)).toEqual([]);
  expect(spotCheck(checks)?.detail).toBe('sir-1 active, tagged proxylab:stack-id');
  // one call, filtered on the launch template's tag with the stack id (no instance-id look-up needed)
  const calls = ec2.commandCalls(DescribeSpotInstanceRequestsCommand);
  expect(calls.map((c) => c.args[0].input.Filters)).toEqual([
    [{ Name: 'tag:proxylab:stack-id', Values: [STACK_ID] }],
  ]);
});

test('spot runner: a request without the tag → ✗, the canceller could not cancel it; fix names the request', async () => {
  spotLab({
    tagged: [],
    byInstance: [{ SpotInstanceRequestId: 'sir-9', InstanceId: 'i-0aaaaaaaaaaaaaaaa', State: 'active' }],
  });
  const checks = await doctor(SPOT_LAB);
  expect(failed(checks)).toHaveLength(1);
  expect(spotCheck(checks)?.ok).toBe(false);
  expect(spotCheck(checks)?.detail).toMatch(/sir-9 \(active\) carries no proxylab:stack-id tag/);
  expect(spotCheck(checks)?.fix).toMatch(/cancel-spot-instance-requests --spot-instance-request-ids sir-9/);
  expect(ec2.commandCalls(DescribeSpotInstanceRequestsCommand)[1]?.args[0].input.Filters).toEqual([
    { Name: 'instance-id', Values: ['i-0aaaaaaaaaaaaaaaa'] },
  ]);
});

test("spot runner: the stack's request belongs to another instance → ✗ naming it", async () => {
  spotLab({
    tagged: [{ SpotInstanceRequestId: 'sir-1', InstanceId: 'i-0bbbbbbbbbbbbbbbb', State: 'active' }],
    byInstance: [],
  });
  const checks = await doctor(SPOT_LAB);
  expect(failed(checks)).toHaveLength(1);
  expect(formatChecks(checks)).toContain(
    "✗ runner i-0aaaaaaaaaaaaaaaa: Spot request: no Spot request for this instance; the stack's requests: sir-1 → i-0bbbbbbbbbbbbbbbb (active)",
  );
  expect(spotCheck(checks)?.fix).toMatch(
    /describe-spot-instance-requests --filters Name=tag:proxylab:stack-id,Values=arn:/,
  );
});

test('spot runner: a request that is not active (interrupted) → ✗ with its status', async () => {
  spotLab({
    tagged: [
      {
        SpotInstanceRequestId: 'sir-1',
        InstanceId: 'i-0aaaaaaaaaaaaaaaa',
        State: 'disabled',
        Status: { Code: 'instance-stopped-no-capacity', Message: 'stopped' },
      },
    ],
    byInstance: [],
  });
  const checks = await doctor(SPOT_LAB);
  expect(spotCheck(checks)?.detail).toBe('sir-1 disabled (instance-stopped-no-capacity: stopped)');
});

test('spot runner: DescribeSpotInstanceRequests denied → ✗ naming the IAM action', async () => {
  healthy();
  cfn.on(DescribeStacksCommand).resolves({
    Stacks: [
      { StackName: 'proxylab-default', StackId: STACK_ID, StackStatus: 'CREATE_COMPLETE', CreationTime: NOW },
    ],
  });
  ec2
    .on(DescribeSpotInstanceRequestsCommand)
    .rejects(Object.assign(new Error('not authorized'), { name: 'UnauthorizedOperation' }));
  const checks = await doctor(SPOT_LAB);
  expect(failed(checks).map((c) => [c.title, c.detail])).toEqual([
    ['spot requests', 'UnauthorizedOperation: not authorized'],
  ]);
  expect(failed(checks)[0]?.fix).toMatch(/ec2:DescribeSpotInstanceRequests/);
});

test('an on-demand lab asks EC2 nothing', async () => {
  healthy();
  await doctor();
  expect(ec2).not.toHaveReceivedCommand(DescribeSpotInstanceRequestsCommand);
});

// ---- PgBouncer poolers: probed from each runner ----

const E5 = loadLabFile(path.resolve(__dirname, '..', '..', 'labs', 'e5-big-server.json'));
const POOLER_LAB = { ...LAB, poolers: E5.poolers };
const endpoint = (
  over: Partial<PoolerEndpoint> & Pick<PoolerEndpoint, 'name' | 'placement' | 'host'>,
): PoolerEndpoint => poolerEndpoint({ poolModes: ['session', 'transaction'], ...over });
const POOLER_OUTPUTS: LabOutputs = {
  ...OUTPUTS,
  poolerEndpoints: {
    bouncer: endpoint({ name: 'bouncer', placement: 'dedicated', host: '10.0.1.5' }),
    colocated: endpoint({
      name: 'colocated',
      placement: 'on-runners',
      host: '127.0.0.1',
      poolModes: ['session'],
    }),
  },
  poolerAdminSecretArn: 'arn:aws:secretsmanager:eu-west-1:1:secret:admin',
};
const stats = (indexes: number[]): string =>
  JSON.stringify({
    at: '2026-11-21T12:00:00.000Z',
    clockTicksPerSecond: 100,
    processes: indexes.map((i) => ({ index: i, pid: 100 + i, cpuTicks: 5 })),
  });
const HEALTHY_POOLER_PROBE: Record<string, string> = {
  ...HEALTHY_PROBE,
  'pooler.adminsecret': 'ok',
  'pooler.bouncer.data.session': '1',
  'pooler.bouncer.data.transaction': '1',
  'pooler.bouncer.admin.0': 'PgBouncer 1.25.2',
  'pooler.bouncer.admin.1': 'PgBouncer 1.25.2',
  'pooler.bouncer.stats': stats([0, 1]),
  'pooler.colocated.data.session': '1',
  'pooler.colocated.admin.0': 'PgBouncer 1.25.2',
  'pooler.colocated.admin.1': 'PgBouncer 1.25.2',
  'pooler.colocated.stats': stats([0, 1]),
};

test('poolers: data port with TLS per pool mode, admin consoles at the pinned version, stats → ✓; the probe asks for each', async () => {
  healthy(HEALTHY_POOLER_PROBE);
  const checks = await doctor(POOLER_LAB, POOLER_OUTPUTS);
  const out = formatChecks(checks);
  process.stdout.write(`--- doctor output (poolers, mocks) ---\n${out}`);
  expect(failed(checks)).toEqual([]);
  expect(checks.map((c) => c.title).filter((t) => /pooler/.test(t))).toEqual([
    'poolers in the stack outputs',
    'runner i-0aaaaaaaaaaaaaaaa: pooler admin secret readable',
    'runner i-0aaaaaaaaaaaaaaaa: pooler bouncer data port 6432 (TLS), session pool',
    'runner i-0aaaaaaaaaaaaaaaa: pooler bouncer data port 6432 (TLS), transaction pool',
    'runner i-0aaaaaaaaaaaaaaaa: pooler bouncer admin consoles',
    'runner i-0aaaaaaaaaaaaaaaa: pooler bouncer stats port 6439',
    'runner i-0aaaaaaaaaaaaaaaa: pooler colocated data port 6432 (TLS), session pool',
    'runner i-0aaaaaaaaaaaaaaaa: pooler colocated admin consoles',
    'runner i-0aaaaaaaaaaaaaaaa: pooler colocated stats port 6439',
  ]);
  expect(out).toContain(
    '✓ runner i-0aaaaaaaaaaaaaaaa: pooler bouncer admin consoles: 2 of 2 answer SHOW VERSION: PgBouncer 1.25.2',
  );
  const script = (ssm.commandCalls(SendCommandCommand)[0]?.args[0].input.Parameters?.commands ?? []).join(
    '\n',
  );
  // the pool-mode alias around the secret's dbname, TLS required; the admin relays with the admin user
  expect(script).toContain(
    `psql 'host=10.0.1.5 port=6432 dbname='"$PGDB"'_session sslmode=require connect_timeout=10' -Atc 'SELECT 1'`,
  );
  expect(script).toContain(
    `psql 'host=10.0.1.5 port=6432 dbname='"$PGDB"' sslmode=require connect_timeout=10' -Atc 'SELECT 1'`,
  );
  expect(script).toContain(
    `PGUSER="$ADMIN_USER" PGPASSWORD="$ADMIN_PASSWORD" psql 'host=10.0.1.5 port=6441 dbname=pgbouncer sslmode=prefer connect_timeout=10' -Atc 'SHOW VERSION'`,
  );
  expect(script).toContain(`'exec 3<>/dev/tcp/127.0.0.1/6439 && head -n 1 <&3'`);
  expect(script).toContain('--secret-id arn:aws:secretsmanager:eu-west-1:1:secret:admin');
  // 2 targets + bouncer (2 modes, 2 admin ports, stats) + colocated (1 mode, 2 admin ports, stats): 11 attempts
  expect(ssm.commandCalls(SendCommandCommand)[0]?.args[0].input.Parameters?.executionTimeout).toEqual([
    String(120 + 12 * 11),
  ]);
});

test('a PgDoorman pooler: its admin database, relay without TLS (its socket answers a TLS request with an error), its version', async () => {
  // GIVEN a lab with one dedicated PgDoorman
  const lab = {
    ...LAB,
    poolers: [
      {
        ...(E5.poolers[0] as (typeof E5.poolers)[number]),
        name: 'doorman',
        kind: 'pgdoorman' as const,
        processes: 1,
        version: '3.10.7',
        workerThreads: 8,
        maxPreparedStatements: 8192,
      },
    ],
  };
  const outputs: LabOutputs = {
    ...OUTPUTS,
    poolerEndpoints: {
      doorman: endpoint({
        name: 'doorman',
        product: 'pgdoorman',
        placement: 'dedicated',
        host: '10.0.1.6',
        adminPorts: [6440],
        processes: 1,
        version: '3.10.7',
        maxPreparedStatements: 8192,
      }),
    },
    poolerAdminSecretArn: 'arn:aws:secretsmanager:eu-west-1:1:secret:admin',
  };
  healthy({
    ...HEALTHY_PROBE,
    'pooler.adminsecret': 'ok',
    'pooler.doorman.data.session': '1',
    'pooler.doorman.data.transaction': '1',
    'pooler.doorman.admin.0': 'PgDoorman 3.10.7',
    'pooler.doorman.stats': stats([0]),
  });
  // WHEN
  const checks = await doctor(lab, outputs);
  // THEN all good, and the probe spoke to its admin console as PgDoorman needs
  expect(failed(checks)).toEqual([]);
  expect(formatChecks(checks)).toContain(
    '✓ runner i-0aaaaaaaaaaaaaaaa: pooler doorman admin consoles: 1 of 1 answer SHOW VERSION: PgDoorman 3.10.7',
  );
  const script = (ssm.commandCalls(SendCommandCommand)[0]?.args[0].input.Parameters?.commands ?? []).join(
    '\n',
  );
  expect(script).toContain(
    `PGUSER="$ADMIN_USER" PGPASSWORD="$ADMIN_PASSWORD" psql 'host=10.0.1.6 port=6440 dbname=pgdoorman sslmode=disable connect_timeout=10' -Atc 'SHOW VERSION'`,
  );
});

const poolerBreaks: Array<[string, Record<string, string>, RegExp, RegExp]> = [
  [
    'dedicated data port refused',
    {
      'pooler.bouncer.data.session':
        'psql: error: connection to server at "10.0.1.5", port 6432 failed: Connection refused',
    },
    /pooler bouncer data port 6432 \(TLS\), session pool: psql: error: .*Connection refused/,
    /journalctl -u proxylab-pgbouncer@bouncer-0.*describe-stack-events --stack-name proxylab-default.*security group must admit 6432/,
  ],
  [
    'TLS off on the co-located pooler',
    { 'pooler.colocated.data.session': 'psql: error: server does not support SSL, but SSL was required' },
    /pooler colocated data port 6432 \(TLS\), session pool: psql: error: server does not support SSL/,
    /aws ssm start-session --target i-0aaaaaaaaaaaaaaaa.*client_tls_sslmode = require/,
  ],
  [
    'an admin relay down',
    { 'pooler.bouncer.admin.1': 'psql: error: connection refused' },
    /pooler bouncer admin consoles: process 1 \(port 6441\): psql: error: connection refused/,
    /journalctl -u proxylab-pooler-agent@bouncer, systemctl status proxylab-pgbouncer@bouncer-1.*6440–6441/,
  ],
  [
    'another PgBouncer version',
    { 'pooler.bouncer.admin.0': 'PgBouncer 1.18.0', 'pooler.bouncer.admin.1': 'PgBouncer 1.18.0' },
    /pooler bouncer admin consoles: process 0 runs PgBouncer 1\.18\.0; process 1 runs PgBouncer 1\.18\.0, the lab pins 1\.25\.2/,
    /a new release replaces the pooler host/,
  ],
  [
    'stats: a process missing',
    { 'pooler.bouncer.stats': stats([0]) },
    /pooler bouncer stats port 6439: 1 entries for 2 processes; process 1 not running/,
    /systemctl status proxylab-pgbouncer@bouncer-1/,
  ],
  [
    'stats: no answer',
    { 'pooler.colocated.stats': 'bash: connect: Connection refused' },
    /pooler colocated stats port 6439: bash: connect: Connection refused/,
    /journalctl -u proxylab-pooler-agent@colocated/,
  ],
  [
    'admin secret unreadable',
    {
      'pooler.adminsecret': 'An error occurred (AccessDeniedException)',
      'pooler.bouncer.admin.0': 'psql: error: password authentication failed',
      'pooler.bouncer.admin.1': 'psql: error: password authentication failed',
      'pooler.colocated.admin.0': 'psql: error: password authentication failed',
      'pooler.colocated.admin.1': 'psql: error: password authentication failed',
    },
    /pooler admin secret readable: An error occurred \(AccessDeniedException\)/,
    /secretsmanager:GetSecretValue on the secret PoolerAdminSecretArn names/,
  ],
];

test.each(poolerBreaks)('pooler broken (%s): its ✗ with the fix', async (_what, broken, detail, fix) => {
  healthy({ ...HEALTHY_POOLER_PROBE, ...broken });
  const checks = await doctor(POOLER_LAB, POOLER_OUTPUTS);
  const out = formatChecks(checks);
  const first = failed(checks)[0];
  expect(out).toMatch(new RegExp(`✗ runner i-0aaaaaaaaaaaaaaaa: ${detail.source}`));
  expect(first?.fix).toMatch(fix);
  // the admin secret case also fails the admin consoles; every other case fails exactly one check
  expect(failed(checks)).toHaveLength(_what === 'admin secret unreadable' ? 3 : 1);
});

test('a lab whose poolers the stack outputs lack → ✗ with the redeploy', async () => {
  healthy(HEALTHY_PROBE);
  const checks = await doctor(POOLER_LAB, OUTPUTS);
  expect(formatChecks(checks)).toContain(
    '✗ poolers in the stack outputs: PoolerEndpoints lacks bouncer, colocated; no PoolerAdminSecretArn',
  );
  expect(failed(checks)).toHaveLength(1);
});

test('the probe is looked at after 1 s, 2 s, then every 5 s until it ends', async () => {
  // GIVEN a probe that is still being delivered, then runs, then ends
  healthy();
  const notYet = Object.assign(new Error('not yet'), { name: 'InvocationDoesNotExist' });
  ssm
    .on(GetCommandInvocationCommand)
    .rejectsOnce(notYet)
    .resolvesOnce({ Status: 'InProgress' })
    .resolvesOnce({ Status: 'InProgress' })
    .resolvesOnce({ Status: 'InProgress' })
    .resolves({ Status: 'Success', StandardOutputContent: probeOutput(HEALTHY_PROBE) });
  const waits: number[] = [];
  // WHEN
  const checks = await doctor(LAB, OUTPUTS, (ms) => {
    waits.push(ms);
    return Promise.resolve();
  });
  // THEN five looks, the first soon, and the probe's checks hold
  expect(PROBE_POLL_MS).toEqual([1_000, 2_000, 5_000]);
  expect(waits).toEqual([1_000, 2_000, 5_000, 5_000, 5_000]);
  expect(ssm.commandCalls(GetCommandInvocationCommand)).toHaveLength(5);
  expect(failed(checks)).toEqual([]);
});
