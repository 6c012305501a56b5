/**
 * `proxylab doctor` on a lab without internet egress (labs/private.json's network): the route
 * tables of its subnets lead to no internet or NAT gateway (EC2 DescribeRouteTables), and every
 * runner reaches every VPC endpoint over HTTPS from an address inside the VPC (the probe, through
 * SSM). aws-sdk-client-mock; every call is checked against the `run` policy `proxylab iam-policy`
 * prints for labs/private.json.
 */
import * as path from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DescribeRouteTablesCommand, EC2Client, type RouteTable } from '@aws-sdk/client-ec2';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { DescribeDBInstancesCommand, RDSClient } from '@aws-sdk/client-rds';
import { GetScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import {
  GetCommandInvocationCommand,
  SendCommandCommand,
  SSMClient,
  type SendCommandCommandInput,
} from '@aws-sdk/client-ssm';
import 'aws-sdk-client-mock-jest';
import { loadLabFile } from '../../lib/config/load';
import { PRIVATE_ENDPOINT_SERVICES, type ExistingNetworkConfig } from '../../lib/config/network';
import type { LabConfig } from '../../lib/config/types';
import {
  isPrivateIpv4,
  parseProbe,
  routeTableChecks,
  runDoctor,
  runnerEndpointChecks,
  type Check,
} from '../../lib/operator/doctor';
import { operator } from '../helpers/aws-calls/principals';
import { mockAws } from '../helpers/aws-calls/recorder';
import { labOutputsWith, proxyOutputs } from '../helpers/lab-outputs';

const WHO = operator('run', 'private');
const cfn = mockAws(CloudFormationClient, WHO);
const rds = mockAws(RDSClient, WHO);
const sched = mockAws(SchedulerClient, WHO);
const ssm = mockAws(SSMClient, WHO);
const lambda = mockAws(LambdaClient, WHO);
const ec2 = mockAws(EC2Client, WHO);
afterEach(() => [cfn, rds, sched, ssm, lambda, ec2].forEach((m) => m.reset()));

const FILE = path.resolve(__dirname, '..', '..', 'labs', 'private.json');
// Its pooler's probe lines are doctor-probe's business: here the network's.
const LAB: LabConfig = { ...loadLabFile(FILE), poolers: [] };
const NETWORK = LAB.network as ExistingNetworkConfig;
const [SUBNET_A, SUBNET_B] = NETWORK.subnetIds as [string, string];
const NOW = new Date('2026-11-21T12:00:00Z');
const VERSION = '0123456789abcdef';
const OUTPUTS = labOutputsWith({ labName: 'private', ...proxyOutputs('private', 'pool100') });

const ENDPOINTS_OK = Object.fromEntries(
  PRIVATE_ENDPOINT_SERVICES.map((e, i) => [`endpoint.${e.service}`, `404 10.20.1.${10 + i}`]),
);
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
  ...ENDPOINTS_OK,
};

/** Two route tables, one per subnet, with the local route (and `extra` routes on the first). */
function tables(extra: RouteTable['Routes'] = []): RouteTable[] {
  return [
    {
      RouteTableId: 'rtb-0000000000000a011',
      Associations: [{ SubnetId: SUBNET_A }],
      Routes: [{ DestinationCidrBlock: '10.20.0.0/16', GatewayId: 'local' }, ...extra],
    },
    {
      RouteTableId: 'rtb-0000000000000a012',
      Associations: [{ SubnetId: SUBNET_B }],
      Routes: [{ DestinationCidrBlock: '10.20.0.0/16', GatewayId: 'local' }],
    },
  ];
}

function healthy(probe: Record<string, string> = HEALTHY_PROBE, routes: RouteTable[] = tables()): void {
  cfn.on(DescribeStacksCommand).resolves({
    Stacks: [{ StackName: 'proxylab-private', StackStatus: 'CREATE_COMPLETE', CreationTime: NOW }],
  });
  sched.on(GetScheduleCommand).resolves({
    ScheduleExpression: 'at(2026-11-21T16:00:00)',
    ScheduleExpressionTimezone: 'UTC',
  });
  rds.on(DescribeDBInstancesCommand).resolves({
    DBInstances: [
      { DBInstanceStatus: 'available', DBParameterGroups: [{ ParameterApplyStatus: 'in-sync' }] },
    ],
  });
  ec2.on(DescribeRouteTablesCommand).resolves({ RouteTables: routes });
  ssm.on(SendCommandCommand).resolves({ Command: { CommandId: '11111111-2222-3333-4444-555555555555' } });
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

function doctor(): Promise<Check[]> {
  const region = NETWORK.region;
  return runDoctor(LAB, 'labs/private.json', OUTPUTS, {
    cloudformation: new CloudFormationClient({ region }),
    rds: new RDSClient({ region }),
    scheduler: new SchedulerClient({ region }),
    ssm: new SSMClient({ region }),
    lambda: new LambdaClient({ region }),
    ec2: new EC2Client({ region }),
    softwareVersion: VERSION,
    region,
    now: () => NOW,
    sleep: () => Promise.resolve(),
  });
}

const failed = (checks: Check[]): Check[] => checks.filter((c) => !c.ok);

test('a healthy private lab: no route out, and every endpoint answers each runner from inside the VPC', async () => {
  // GIVEN
  healthy();
  // WHEN
  const checks = await doctor();
  // THEN every check holds, with one per route table and one per endpoint service
  expect(failed(checks)).toEqual([]);
  const titles = checks.map((c) => c.title);
  expect(titles).toEqual(
    expect.arrayContaining([
      `network: route table rtb-0000000000000a011 (${SUBNET_A})`,
      `network: route table rtb-0000000000000a012 (${SUBNET_B})`,
      ...PRIVATE_ENDPOINT_SERVICES.map((e) => `runner i-0aaaaaaaaaaaaaaaa: endpoint ${e.service}`),
    ]),
  );
  // the route tables asked for are the lab VPC's
  expect(ec2).toHaveReceivedCommandWith(DescribeRouteTablesCommand, {
    Filters: [{ Name: 'vpc-id', Values: [NETWORK.vpcId] }],
  });
  // the probe asks each service by the hostname every client uses (private DNS)
  const input = ssm.commandCalls(SendCommandCommand)[0]?.args[0].input as SendCommandCommandInput;
  const lines = (input.Parameters?.commands ?? []).join('\n');
  for (const e of PRIVATE_ENDPOINT_SERVICES)
    expect(lines).toContain(` https://${e.service}.${NETWORK.region}.amazonaws.com/ 2>&1 | tr '\\n' ' ')`);
});

describe('route tables of the lab subnets', () => {
  test.each<[string, RouteTable['Routes'], boolean, RegExp]>([
    [
      'an internet gateway',
      [{ DestinationCidrBlock: '0.0.0.0/0', GatewayId: 'igw-0123' }],
      false,
      /0\.0\.0\.0\/0 → igw-0123: a way to the internet/,
    ],
    [
      'a NAT gateway',
      [{ DestinationCidrBlock: '0.0.0.0/0', NatGatewayId: 'nat-0123' }],
      false,
      /0\.0\.0\.0\/0 → nat-0123/,
    ],
    [
      'an egress-only internet gateway (IPv6)',
      [{ DestinationIpv6CidrBlock: '::/0', EgressOnlyInternetGatewayId: 'eigw-0123' }],
      false,
      /::\/0 → eigw-0123/,
    ],
    [
      'an internet gateway for one prefix only',
      [{ DestinationCidrBlock: '52.0.0.0/8', GatewayId: 'igw-0123' }],
      false,
      /52\.0\.0\.0\/8 → igw-0123/,
    ],
    [
      'a transit gateway default route (where it leads is the network team’s)',
      [{ DestinationCidrBlock: '0.0.0.0/0', TransitGatewayId: 'tgw-0123' }],
      true,
      /default route 0\.0\.0\.0\/0 → tgw-0123/,
    ],
    [
      'the S3 gateway endpoint’s prefix list',
      [{ DestinationPrefixListId: 'pl-0123', GatewayId: 'vpce-0123' }],
      true,
      /^no internet or NAT gateway route$/,
    ],
  ])('%s', async (_what, routes, holds, detail) => {
    // GIVEN
    ec2.on(DescribeRouteTablesCommand).resolves({ RouteTables: tables(routes) });
    // WHEN
    const checks = await routeTableChecks(new EC2Client({ region: NETWORK.region }), NETWORK);
    // THEN the first subnet's table says so; the second stays clean
    expect(checks).toHaveLength(2);
    expect(checks[0]?.ok).toBe(holds);
    expect(checks[0]?.detail).toMatch(detail);
    expect(checks[1]?.ok).toBe(true);
    if (!holds) expect(checks[0]?.fix).toMatch(/network\.egress "vpc-endpoints"/);
  });

  test('a subnet without its own association takes the main route table, as EC2 does', async () => {
    ec2.on(DescribeRouteTablesCommand).resolves({
      RouteTables: [
        {
          RouteTableId: 'rtb-main',
          Associations: [{ Main: true }],
          Routes: [{ DestinationCidrBlock: '0.0.0.0/0', GatewayId: 'igw-9' }],
        },
      ],
    });
    const checks = await routeTableChecks(new EC2Client({ region: NETWORK.region }), NETWORK);
    expect(checks).toEqual([
      expect.objectContaining({
        title: `network: route table rtb-main (${SUBNET_A}, ${SUBNET_B})`,
        ok: false,
      }),
    ]);
  });

  test('a route table that cannot be read is a ✗ naming the permission', async () => {
    ec2
      .on(DescribeRouteTablesCommand)
      .rejects(Object.assign(new Error('not authorized'), { name: 'UnauthorizedOperation' }));
    const checks = await routeTableChecks(new EC2Client({ region: NETWORK.region }), NETWORK);
    expect(checks.map((c) => c.ok)).toEqual([false]);
    expect(checks[0]?.fix).toMatch(/ec2:DescribeRouteTables/);
  });
});

describe("each runner's reach to the endpoints", () => {
  test.each<[string, string, boolean, RegExp]>([
    [
      'an HTTP status from inside the VPC',
      '404 10.20.1.15',
      true,
      /^HTTPS 404 from 10\.20\.1\.15 \(inside the VPC\)$/,
    ],
    ['a public address: the request left the VPC', '404 52.94.1.1', false, /52\.94\.1\.1, a public address/],
    [
      'curl could not connect',
      '000  curl: (28) Connection timed out after 10001 milliseconds',
      false,
      /Connection timed out/,
    ],
    ['no answer at all', '', false, /^no answer$/],
  ])('%s', (_what, line, holds, detail) => {
    const probe = parseProbe(`endpoint.ssm=${line}\n`);
    const [check] = runnerEndpointChecks('runner i-1', probe, NETWORK, ['ssm']);
    expect(check).toMatchObject({ title: 'runner i-1: endpoint ssm', ok: holds });
    expect(check?.detail).toMatch(detail);
    if (!holds) expect(check?.fix).toMatch(/ssm\.us-east-1\.amazonaws\.com|private DNS/);
  });

  test('the whole doctor run fails on one endpoint that answers from outside', async () => {
    healthy({ ...HEALTHY_PROBE, 'endpoint.lambda': '200 3.5.1.1' });
    const bad = failed(await doctor());
    expect(bad.map((c) => c.title)).toEqual(['runner i-0aaaaaaaaaaaaaaaa: endpoint lambda']);
  });
});

test.each<[string, boolean]>([
  ['10.0.0.1', true],
  ['172.16.0.1', true],
  ['172.31.255.255', true],
  ['172.32.0.1', false],
  ['192.168.1.1', true],
  ['100.64.0.1', true],
  ['100.128.0.1', false],
  ['52.94.1.1', false],
  ['fd00::1', false],
  ['', false],
])('isPrivateIpv4(%j) = %s', (ip, expected) => {
  expect(isPrivateIpv4(ip)).toBe(expected);
});
