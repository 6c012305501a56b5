/**
 * The real `proxylab extend` CLI against moto_server's EventBridge Scheduler (never real AWS):
 * a schedule shaped like the one the expiry construct deploys is moved 3 hours later, every other
 * field intact; a lab without a schedule exits 2. Also `proxylab cost` exit codes. Each test runs
 * its own CLI processes on its own lab or schedule: they run side by side (test.concurrent).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CreateScheduleCommand, GetScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { runCli } from '../helpers/cli';
import { motoClientConfig, motoEnv, startMoto, type MotoServer } from '../helpers/moto';

const ROLE_ARN = 'arn:aws:iam::123456789012:role/proxylab-it-ExpiryDeleteStackRole';
const TARGET_INPUT = '{"StackName":"arn:aws:cloudformation:us-east-1:123456789012:stack/proxylab-it/abc"}';

let moto: MotoServer;
let scheduler: SchedulerClient;
let dir: string;

beforeAll(async () => {
  moto = await startMoto();
  scheduler = new SchedulerClient(motoClientConfig(moto));
  dir = await mkdtemp(path.join(tmpdir(), 'proxylab-extend-'));
  await writeFile(path.join(dir, 'it.json'), JSON.stringify({ name: 'it', ttlHours: 2 }));
  await writeFile(path.join(dir, 'ghost.json'), JSON.stringify({ name: 'ghost' }));
});

afterAll(async () => {
  scheduler?.destroy();
  await moto?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test.concurrent('extend moves the deployed schedule by --hours and keeps its target', async () => {
  // GIVEN the schedule the expiry construct would deploy for stack proxylab-it, due in two days
  const due = new Date(Date.now() + 48 * 3_600_000);
  due.setUTCSeconds(0, 0);
  await scheduler.send(
    new CreateScheduleCommand({
      Name: 'proxylab-it-expiry',
      ScheduleExpression: `at(${due.toISOString().slice(0, 19)})`,
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: {
        Arn: 'arn:aws:scheduler:::aws-sdk:cloudformation:deleteStack',
        RoleArn: ROLE_ARN,
        Input: TARGET_INPUT,
      },
    }),
  );
  // WHEN
  const r = await runCli(['extend', '--lab', path.join(dir, 'it.json'), '--hours', '3'], motoEnv(moto));
  // THEN
  expect(r.stderr).not.toMatch(/^(error|proxylab failed):/m);
  expect(r.code).toBe(0);
  const later = new Date(due.getTime() + 3 * 3_600_000);
  expect(r.stdout).toContain(`to ${later.toISOString().replace('.000Z', 'Z')}`);
  const after = await scheduler.send(new GetScheduleCommand({ Name: 'proxylab-it-expiry' }));
  expect(after.ScheduleExpression).toBe(`at(${later.toISOString().slice(0, 19)})`);
  expect(after.Target?.RoleArn).toBe(ROLE_ARN);
  expect(after.Target?.Input).toBe(TARGET_INPUT);
  expect(after.State).toBe('ENABLED');
});

test.concurrent('extend on a lab with no schedule here exits 2 and says where to look', async () => {
  const r = await runCli(['extend', '--lab', path.join(dir, 'ghost.json'), '--hours', '1'], motoEnv(moto));
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/no expiry schedule proxylab-ghost-expiry .*--profile\/--region/);
});

test.concurrent.each([
  [['extend', '--lab', 'x.json', '--hours', 'soon'], /--hours must be a number, got "soon"/],
  [['cost', 'labs/does-not-exist.json'], /does not exist/],
  [
    ['cost', path.resolve(__dirname, '../../labs/default.json'), '--region', 'eu-west-1'],
    /region eu-west-1 cannot be priced, .*the committed table covers only us-east-1/,
  ],
  [
    ['cost', path.resolve(__dirname, '../../labs/default.json'), '--storage-gb', '-1'],
    /--storage-gb must be a number ≥ 0/,
  ],
  [['cost'], /give a lab file: proxylab cost labs\/default\.json \(or --lab FILE\)/],
  [['cost', 'labs/default.json', '--lab', 'labs/e4-pool-share.json'], /give the lab file once/],
])('%j exits 2: %s', async (args, message) => {
  const r = await runCli(args, motoEnv(moto));
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(message);
});

test.concurrent(
  'cost --lab FILE prints the same estimate as cost FILE (the flag every other lab command takes)',
  async () => {
    const lab = path.resolve(__dirname, '../../labs/e4-pool-share.json');
    const [a, b] = await Promise.all([
      runCli(['cost', lab, '--json'], process.env),
      runCli(['cost', '--lab', lab, '--json'], process.env),
    ]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(JSON.parse(b.stdout)).toEqual(JSON.parse(a.stdout));
    expect((JSON.parse(a.stdout) as { lab: string }).lab).toBe('e4-pool-share');
  },
);
