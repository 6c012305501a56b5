/**
 * The real `proxylab doctor` CLI against moto_server: what moto can stand in for (the stack, the
 * expiry schedule, the DB instance's parameter group, SSM SendCommand) is checked for real over
 * the wire; what needs a real runner and a real Lambda (the probe's output, the collector) fails
 * with its fix — which is exactly what doctor is for. Exit code 1, the whole checklist printed.
 * The two doctor runs read what beforeAll put in moto and write nothing there: they run side by
 * side (test.concurrent), each waiting out its own probe polls.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import {
  DescribeImagesCommand,
  EC2Client,
  RequestSpotInstancesCommand,
  type SpotInstanceRequest,
} from '@aws-sdk/client-ec2';
import { CreateDBInstanceCommand, RDSClient } from '@aws-sdk/client-rds';
import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { runCli } from '../helpers/cli';
import { motoClientConfig, motoEnv, startMoto, type MotoServer } from '../helpers/moto';

let moto: MotoServer;
let dir: string;
/** Two Spot requests in moto: the first tagged with the stack id (as the launch template does), the second not. */
let tagged: SpotInstanceRequest | undefined;
let untagged: SpotInstanceRequest | undefined;

beforeAll(async () => {
  moto = await startMoto();
  dir = await mkdtemp(path.join(tmpdir(), 'proxylab-doctor-'));
  const cfg = motoClientConfig(moto);
  const stack = await new CloudFormationClient({ ...cfg, maxAttempts: 1 }).send(
    new CreateStackCommand({
      StackName: 'proxylab-default',
      TemplateBody: JSON.stringify({
        Resources: { Marker: { Type: 'AWS::CloudFormation::WaitConditionHandle' } },
      }),
    }),
  );
  await new SchedulerClient(cfg).send(
    new CreateScheduleCommand({
      Name: 'proxylab-default-expiry',
      ScheduleExpression: `at(${new Date(Date.now() + 6 * 3_600_000).toISOString().slice(0, 19)})`,
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: {
        Arn: 'arn:aws:scheduler:::aws-sdk:cloudformation:deleteStack',
        RoleArn: 'arn:aws:iam::123456789012:role/expiry',
        Input: '{}',
      },
    }),
  );
  await new RDSClient(cfg).send(
    new CreateDBInstanceCommand({
      DBInstanceIdentifier: 'default-writer',
      DBInstanceClass: 'db.t4g.medium',
      Engine: 'postgres',
      MasterUsername: 'proxylab',
      MasterUserPassword: 'not-a-real-password-1',
      AllocatedStorage: 20,
    }),
  );
  const ec2 = new EC2Client(cfg);
  const image = (await ec2.send(new DescribeImagesCommand({}))).Images?.[0]?.ImageId;
  const spot = (tags: Array<{ Key: string; Value: string }>) =>
    ec2.send(
      new RequestSpotInstancesCommand({
        InstanceCount: 1,
        Type: 'persistent',
        LaunchSpecification: { ImageId: image, InstanceType: 't3.micro' },
        ...(tags.length > 0
          ? { TagSpecifications: [{ ResourceType: 'spot-instances-request', Tags: tags }] }
          : {}),
      }),
    );
  tagged = (await spot([{ Key: 'proxylab:stack-id', Value: stack.StackId ?? '' }])).SpotInstanceRequests?.[0];
  untagged = (await spot([])).SpotInstanceRequests?.[0];
  await writeFile(
    path.join(dir, 'outputs.json'),
    JSON.stringify({
      LabName: 'default',
      RunnerInstanceIds: 'i-0123456789abcdef0',
      ResultsBucketName: 'proxylab-default-results',
      ClusterIdentifier: 'default-cluster',
      ClusterEndpoint: 'default.cluster-x.us-east-1.rds.amazonaws.com',
      ClusterReaderEndpoint: 'default.cluster-ro-x.us-east-1.rds.amazonaws.com',
      DatabasePort: '5432',
      DbInstanceIds: 'default-writer',
      DbInstanceResourceIds: 'db-ABC',
      ProxyEndpoints: JSON.stringify({ pool100: 'default-pool100.proxy-x.us-east-1.rds.amazonaws.com' }),
      ProxyNames: JSON.stringify({ pool100: 'default-pool100' }),
      DbSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:x',
      CollectorFunctionName: 'default-collector',
    }),
  );
}, 120_000);

afterAll(async () => {
  await moto?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test.concurrent(
  'doctor prints the whole checklist: real ✓ where moto answers, ✗ with the fix where only a lab can',
  async () => {
    const res = await runCli(
      ['doctor', '--lab', 'labs/default.json', '--outputs', path.join(dir, 'outputs.json')],
      motoEnv(moto),
    );
    process.stdout.write(`--- proxylab doctor against moto ---\n${res.stdout}${res.stderr}`);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/^✓ stack proxylab-default: CREATE_COMPLETE$/m);
    expect(res.stdout).toMatch(/^✓ expiry schedule: deletes the lab at /m);
    expect(res.stdout).toMatch(/^✓ parameter groups in sync: default-writer$/m);
    // no real runner behind SSM: the probe printed nothing
    expect(res.stdout).toMatch(
      /^✗ runner i-0123456789abcdef0: runner software: \/opt\/proxylab\/runner\.js missing$/m,
    );
    expect(res.stdout).toMatch(/fix: npx proxylab deploy --lab labs\/default\.json/);
    expect(res.stdout).toMatch(/^✗ collector/m);
    expect(res.stdout).toMatch(/checks failed\n$/);
  },
  180_000,
);

test.concurrent(
  'a spot lab: the stack-tagged request of a runner ✓, a runner whose request lacks the tag ✗ with the cancel command (moto answers DescribeSpotInstanceRequests)',
  async () => {
    const tag = tagged?.InstanceId;
    const bare = untagged?.InstanceId;
    expect(tag).toMatch(/^i-/);
    expect(bare).toMatch(/^i-/);
    const lab = JSON.parse(await readFile(path.resolve('labs', 'default.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    delete lab.$schema;
    await writeFile(
      path.join(dir, 'spot-lab.json'),
      JSON.stringify({ ...lab, runners: { ...(lab.runners as object), count: 2, spot: true } }),
    );
    const outputs = JSON.parse(await readFile(path.join(dir, 'outputs.json'), 'utf8')) as Record<
      string,
      string
    >;
    await writeFile(
      path.join(dir, 'spot-outputs.json'),
      JSON.stringify({ ...outputs, RunnerInstanceIds: `${tag ?? ''},${bare ?? ''}` }),
    );
    const res = await runCli(
      ['doctor', '--lab', path.join(dir, 'spot-lab.json'), '--outputs', path.join(dir, 'spot-outputs.json')],
      motoEnv(moto),
    );
    process.stdout.write(`--- proxylab doctor (spot lab) against moto ---\n${res.stdout}${res.stderr}`);
    expect(res.stderr).toBe('');
    expect(res.stdout).toContain(
      `✓ runner ${tag ?? ''}: Spot request: ${tagged?.SpotInstanceRequestId ?? ''} active, tagged proxylab:stack-id`,
    );
    expect(res.stdout).toContain(
      `✗ runner ${bare ?? ''}: Spot request: ${untagged?.SpotInstanceRequestId ?? ''} (active) carries no proxylab:stack-id tag`,
    );
    expect(res.stdout).toContain(
      `cancel-spot-instance-requests --spot-instance-request-ids ${untagged?.SpotInstanceRequestId ?? ''}`,
    );
  },
  180_000,
);
