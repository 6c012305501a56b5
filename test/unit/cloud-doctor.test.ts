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
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-jest';
import { formatChecks, runDoctor, type Check } from '../../lib/cloud/doctor';
import type { LabOutputs } from '../../lib/cloud/outputs';
import { loadLabFile } from '../../lib/config/load';

const cfn = mockClient(CloudFormationClient);
const rds = mockClient(RDSClient);
const sched = mockClient(SchedulerClient);
const ssm = mockClient(SSMClient);
const lambda = mockClient(LambdaClient);
const ec2 = mockClient(EC2Client);
afterEach(() => [cfn, rds, sched, ssm, lambda, ec2].forEach((m) => m.reset()));

const LAB_FILE = path.resolve(__dirname, '..', '..', 'labs', 'default.json');
const LAB = loadLabFile(LAB_FILE);
const NOW = new Date('2026-11-21T12:00:00Z');
const VERSION = '0123456789abcdef';
const OUTPUTS: LabOutputs = {
  labName: 'default',
  runnerInstanceIds: ['i-0aaa'],
  resultsBucketName: 'results-bucket',
  clusterIdentifier: 'default-cluster',
  clusterEndpoint: 'default.cluster-x.eu-west-1.rds.amazonaws.com',
  clusterReaderEndpoint: 'default.cluster-ro-x.eu-west-1.rds.amazonaws.com',
  databasePort: 5432,
  dbInstanceIds: ['default-writer'],
  dbInstanceResourceIds: ['db-ABC'],
  proxyEndpoints: { pool100: 'default-pool100.proxy-x.eu-west-1.rds.amazonaws.com' },
  proxyNames: { pool100: 'default-pool100' },
  dbSecretArn: 'arn:aws:secretsmanager:eu-west-1:1:secret:x',
  collectorFunctionName: 'default-collector',
  databaseEngine: 'aurora-postgresql',
  dbInstanceClass: 'db.r6g.large',
  poolerEndpoints: {},
  poolerAdminSecretArn: null,
};

/** What a healthy runner's probe prints. */
const HEALTHY_PROBE: Record<string, string> = {
  version: VERSION,
  node: 'v22.12.0',
  pgbench: 'pgbench (PostgreSQL) 17.4',
  secret: 'ok',
  'maxconn.writer': '405',
  'maxconn.pool100': '405',
  's3.write': 'ok',
  's3.read': 'ok',
  's3.list': 'ok',
};

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
  ssm.on(SendCommandCommand).resolves({ Command: { CommandId: 'cmd-1' } });
  ssm.on(GetCommandInvocationCommand).resolves({
    Status: 'Success',
    StandardOutputContent: Object.entries(probe)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
  });
  lambda.on(InvokeCommand).resolves({
    StatusCode: 200,
    Payload: new TextEncoder().encode(
      JSON.stringify({ cloudwatch: { series: { ok: 20 } }, pi: { series: { ok: 5 } } }),
    ) as never,
  });
}

function doctor(lab = LAB, outputs = OUTPUTS): Promise<Check[]> {
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
    sleep: () => Promise.resolve(),
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
    'runner i-0aaa: reachable through SSM',
    'runner i-0aaa: runner software',
    'runner i-0aaa: Node and pgbench',
    'runner i-0aaa: DB secret readable',
    'runner i-0aaa: TLS connection to writer',
    'runner i-0aaa: TLS connection to pool100',
    'runner i-0aaa: S3 under runs/',
    'collector: CloudWatch',
    'collector: Performance Insights',
  ]);
  expect(out).toMatch(/all 12 checks hold\n$/);
  // read-only towards the lab: no reboot, no schedule update
  expect(rds).not.toHaveReceivedCommand(RebootDBInstanceCommand);
  expect(sched).not.toHaveReceivedCommand(UpdateScheduleCommand);
  // the probe went to this runner with sslmode=require on both targets
  const input: SendCommandCommandInput | undefined = ssm.commandCalls(SendCommandCommand)[0]?.args[0].input;
  expect(input?.InstanceIds).toEqual(['i-0aaa']);
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
    /runner i-0aaa: reachable through SSM: InvalidInstanceId/,
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
    expect(out).toMatch(new RegExp(`✗ (runner i-0aaa: )?${detail.source}`));
    expect(bad[0]?.fix).toMatch(fix);
    expect(out).toMatch(/1 of \d+ checks failed\n$/);
  },
);

test('max_connections not as the lab says: ✗ with the reboot fix', async () => {
  const lab = { ...LAB, database: { ...LAB.database, maxConnections: 900 } };
  healthy();
  const checks = await runDoctor(lab, 'labs/x.json', OUTPUTS, {
    cloudformation: new CloudFormationClient({ region: 'eu-west-1' }),
    rds: new RDSClient({ region: 'eu-west-1' }),
    scheduler: new SchedulerClient({ region: 'eu-west-1' }),
    ssm: new SSMClient({ region: 'eu-west-1' }),
    lambda: new LambdaClient({ region: 'eu-west-1' }),
    ec2: new EC2Client({ region: 'eu-west-1' }),
    softwareVersion: VERSION,
    region: 'eu-west-1',
    now: () => NOW,
    sleep: () => Promise.resolve(),
  });
  expect(formatChecks(checks)).toContain(
    '✗ runner i-0aaa: TLS connection to writer: SHOW max_connections = 405, the lab says 900',
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
  checks.find((c) => c.title === 'runner i-0aaa: Spot request');

test('spot runner: its request is tagged with the stack id, active and its own → ✓', async () => {
  spotLab({
    tagged: [{ SpotInstanceRequestId: 'sir-1', InstanceId: 'i-0aaa', State: 'active' }],
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
    byInstance: [{ SpotInstanceRequestId: 'sir-9', InstanceId: 'i-0aaa', State: 'active' }],
  });
  const checks = await doctor(SPOT_LAB);
  expect(failed(checks)).toHaveLength(1);
  expect(spotCheck(checks)?.ok).toBe(false);
  expect(spotCheck(checks)?.detail).toMatch(/sir-9 \(active\) carries no proxylab:stack-id tag/);
  expect(spotCheck(checks)?.fix).toMatch(/cancel-spot-instance-requests --spot-instance-request-ids sir-9/);
  expect(ec2.commandCalls(DescribeSpotInstanceRequestsCommand)[1]?.args[0].input.Filters).toEqual([
    { Name: 'instance-id', Values: ['i-0aaa'] },
  ]);
});

test("spot runner: the stack's request belongs to another instance → ✗ naming it", async () => {
  spotLab({
    tagged: [{ SpotInstanceRequestId: 'sir-1', InstanceId: 'i-0bbb', State: 'active' }],
    byInstance: [],
  });
  const checks = await doctor(SPOT_LAB);
  expect(failed(checks)).toHaveLength(1);
  expect(formatChecks(checks)).toContain(
    "✗ runner i-0aaa: Spot request: no Spot request for this instance; the stack's requests: sir-1 → i-0bbb (active)",
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
        InstanceId: 'i-0aaa',
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
