/**
 * The operator's decisions around a lab's lifetime (issue 14): where the runners go (items 12),
 * static parameters applied by a reboot (item 5), the expiry clock starting when the deploy ends
 * and a run refused when it would outlive its lab (item 6). AWS calls through aws-sdk-client-mock.
 */
import * as path from 'node:path';
import {
  DescribeAvailabilityZonesCommand,
  DescribeInstanceTypeOfferingsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { DescribeDBInstancesCommand, RDSClient, RebootDBInstanceCommand } from '@aws-sdk/client-rds';
import {
  GetScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockAws } from '../helpers/aws-calls/recorder';
import { operator } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import { UsageError } from '../../lib/core/errors';
import { chooseLabZones, chooseZones, zoneContextArgs } from '../../lib/cloud/availability-zones';
import { cdkInvocation } from '../../lib/cloud/operator';
import { labOutputsWith, proxyOutputs } from '../helpers/lab-outputs';
import { applyPendingReboots } from '../../lib/cloud/parameters';
import { eventForFinishedRun } from '../../lib/cloud/recollect';
import { decideRunExpiry, estimateSuiteSec, EXPIRY_MARGIN_SEC } from '../../lib/cloud/run-window';
import { loadLabFile } from '../../lib/config/load';
import { AZ_CONTEXT_KEYS } from '../../lib/config/stack-outputs';
import { readLabExpiry, restartLabExpiry } from '../../lib/cloud/extend';
import type { RunManifest } from '../../lib/suite/types';
import { manifestWith } from '../helpers/run-files';

const ec2Mock = mockAws(EC2Client, operator('deploy'));
const rdsMock = mockAws(RDSClient, operator('deploy'));
const schedMock = mockAws(SchedulerClient, operator('deploy'));
afterEach(() => {
  ec2Mock.reset();
  rdsMock.reset();
  schedMock.reset();
});

const LABS = path.resolve(__dirname, '..', '..', 'labs');

describe('runner Availability Zones (item 12)', () => {
  test('asks EC2 which zones offer the runner type, and puts the runners there', async () => {
    // GIVEN c7g.large offered in eu-west-1b and eu-west-1c, not in eu-west-1a
    ec2Mock.on(DescribeAvailabilityZonesCommand).resolves({
      AvailabilityZones: [{ ZoneName: 'eu-west-1c' }, { ZoneName: 'eu-west-1a' }, { ZoneName: 'eu-west-1b' }],
    });
    ec2Mock
      .on(DescribeInstanceTypeOfferingsCommand)
      .resolvesOnce({
        InstanceTypeOfferings: [
          { InstanceType: 'c7g.large', LocationType: 'availability-zone', Location: 'eu-west-1c' },
        ],
        NextToken: 'page2',
      })
      .resolvesOnce({
        InstanceTypeOfferings: [
          { InstanceType: 'c7g.large', LocationType: 'availability-zone', Location: 'eu-west-1b' },
        ],
      });
    // WHEN
    const choice = await chooseLabZones(new EC2Client({ region: 'eu-west-1' }), 'c7g.large');
    // THEN the exact requests: offerings per zone for this type (both pages), standard zones only
    expect(ec2Mock).toHaveReceivedCommandWith(DescribeInstanceTypeOfferingsCommand, {
      LocationType: 'availability-zone',
      Filters: [{ Name: 'instance-type', Values: ['c7g.large'] }],
    });
    expect(ec2Mock).toHaveReceivedCommandWith(DescribeInstanceTypeOfferingsCommand, { NextToken: 'page2' });
    expect(ec2Mock).toHaveReceivedCommandWith(DescribeAvailabilityZonesCommand, {
      Filters: [
        { Name: 'zone-type', Values: ['availability-zone'] },
        { Name: 'state', Values: ['available'] },
      ],
    });
    expect(choice).toEqual({ vpc: ['eu-west-1b', 'eu-west-1c'], runners: ['eu-west-1b', 'eu-west-1c'] });
    // AND cdk deploy gets them as context
    const inv = cdkInvocation(
      'deploy',
      'labs/default.json',
      {},
      '/repo',
      zoneContextArgs(choice, AZ_CONTEXT_KEYS),
    );
    expect(inv.args).toEqual(
      expect.arrayContaining([
        '-c',
        'proxylab:availabilityZones=eu-west-1b,eu-west-1c',
        'proxylab:runnerAvailabilityZones=eu-west-1b,eu-west-1c',
      ]),
    );
  });

  test.each([
    [
      'one zone offers it: the VPC fills up with another',
      ['a', 'b', 'c'],
      ['c'],
      { vpc: ['c', 'a'], runners: ['c'] },
    ],
    ['the first two offer it', ['a', 'b', 'c'], ['a', 'b', 'c'], { vpc: ['a', 'b'], runners: ['a', 'b'] }],
  ])('%s', (_what, all, offering, expected) => {
    expect(chooseZones(all, offering, 't')).toEqual(expected);
  });

  test('no zone offers it: a usage error naming the type', () => {
    expect(() => chooseZones(['a', 'b'], [], 'x9z.large')).toThrow(UsageError);
    expect(() => chooseZones(['a', 'b'], [], 'x9z.large')).toThrow(/x9z\.large is not offered/);
  });
});

describe('static parameters (item 5)', () => {
  test('an instance whose parameter group is pending-reboot is rebooted, and deploy waits until in-sync', async () => {
    // GIVEN the writer pending-reboot after max_connections changed, the reader in sync
    let writerPolls = 0;
    rdsMock.on(DescribeDBInstancesCommand, { DBInstanceIdentifier: 'lab-writer' }).callsFake(() => {
      writerPolls++;
      const settled = writerPolls >= 3;
      return {
        DBInstances: [
          {
            DBInstanceStatus: settled ? 'available' : writerPolls === 2 ? 'rebooting' : 'available',
            DBParameterGroups: [
              { DBParameterGroupName: 'pg', ParameterApplyStatus: settled ? 'in-sync' : 'pending-reboot' },
            ],
          },
        ],
      };
    });
    rdsMock.on(DescribeDBInstancesCommand, { DBInstanceIdentifier: 'lab-reader1' }).resolves({
      DBInstances: [
        { DBInstanceStatus: 'available', DBParameterGroups: [{ ParameterApplyStatus: 'in-sync' }] },
      ],
    });
    rdsMock.on(RebootDBInstanceCommand).resolves({});
    const lines: string[] = [];
    // WHEN
    const rebooted = await applyPendingReboots(
      new RDSClient({ region: 'eu-west-1' }),
      ['lab-writer', 'lab-reader1'],
      {
        sleep: () => Promise.resolve(),
        now: () => new Date('2026-11-21T10:00:00Z'),
        print: (l) => lines.push(l),
      },
    );
    // THEN only the writer was rebooted, and only once
    expect(rebooted).toEqual(['lab-writer']);
    expect(rdsMock).toHaveReceivedCommandTimes(RebootDBInstanceCommand, 1);
    expect(rdsMock).toHaveReceivedCommandWith(RebootDBInstanceCommand, {
      DBInstanceIdentifier: 'lab-writer',
    });
    expect(writerPolls).toBe(3);
    expect(lines.join('\n')).toMatch(/rebooting lab-writer: its parameter group is pending-reboot/);
  });

  test('nothing pending: no reboot', async () => {
    rdsMock.on(DescribeDBInstancesCommand).resolves({
      DBInstances: [
        { DBInstanceStatus: 'available', DBParameterGroups: [{ ParameterApplyStatus: 'in-sync' }] },
      ],
    });
    const out = await applyPendingReboots(new RDSClient({ region: 'eu-west-1' }), ['w'], {
      sleep: () => Promise.resolve(),
      now: () => new Date(),
      print: () => undefined,
    });
    expect(out).toEqual([]);
    expect(rdsMock).not.toHaveReceivedCommand(RebootDBInstanceCommand);
  });
});

describe('the expiry clock and runs that would outlive the lab (item 6)', () => {
  const SCHEDULE = {
    Name: 'proxylab-default-expiry',
    GroupName: 'default',
    ScheduleExpression: 'at(2026-11-21T18:00:00)',
    ScheduleExpressionTimezone: 'UTC',
    FlexibleTimeWindow: { Mode: 'OFF' as const },
    Target: {
      Arn: 'arn:aws:scheduler:::aws-sdk:cloudformation:deleteStack',
      RoleArn: 'arn:aws:iam::1:role/r',
    },
    State: 'ENABLED' as const,
  };

  test('the deploy restarts the clock: expiry = end of deploy + ttlHours', async () => {
    // GIVEN a schedule set at synth (10:00 + 8 h), a deploy that ended at 10:27
    schedMock.on(GetScheduleCommand).resolves(SCHEDULE);
    schedMock.on(UpdateScheduleCommand).resolves({});
    // WHEN
    const at = await restartLabExpiry(new SchedulerClient({ region: 'eu-west-1' }), {
      stackName: 'proxylab-default',
      ttlHours: 8,
      now: new Date('2026-11-21T10:27:10Z'),
    });
    // THEN (rounded up to the minute)
    expect(at?.toISOString()).toBe('2026-11-21T18:28:00.000Z');
    expect(schedMock).toHaveReceivedCommandWith(UpdateScheduleCommand, {
      Name: 'proxylab-default-expiry',
      ScheduleExpression: 'at(2026-11-21T18:28:00)',
      ScheduleExpressionTimezone: 'UTC',
      Target: SCHEDULE.Target,
      FlexibleTimeWindow: { Mode: 'OFF' },
    });
  });

  test('no schedule (no ttlHours): nothing to restart, and no expiry to respect', async () => {
    schedMock
      .on(GetScheduleCommand)
      .rejects(new ResourceNotFoundException({ message: 'nope', Message: 'nope', $metadata: {} }));
    const client = new SchedulerClient({ region: 'eu-west-1' });
    expect(await restartLabExpiry(client, { stackName: 's', ttlHours: 1 })).toBeNull();
    expect(await readLabExpiry(client, 's')).toBeNull();
    expect(schedMock).not.toHaveReceivedCommand(UpdateScheduleCommand);
  });

  test('e5 (about 7 h of load) fits a 12 h lab right after its deploy', () => {
    const lab = loadLabFile(path.join(LABS, 'e5-big-server.json'));
    const sec = estimateSuiteSec('e5', lab);
    expect(sec).toBeGreaterThan(5 * 3600);
    const now = new Date('2026-11-21T10:30:00Z');
    expect(
      decideRunExpiry({
        now,
        estimatedSec: sec,
        expiresAt: new Date('2026-11-21T22:30:00Z'),
        allowExtend: false,
        suite: 'e5',
        labFile: 'labs/e5-big-server.json',
      }).kind,
    ).toBe('fits');
  });

  test('a run whose estimated end is past ExpiresAt is refused, naming both ways out', () => {
    // GIVEN 7 h of e5 started 6 h before the lab expires
    const input = {
      now: new Date('2026-11-21T16:30:00Z'),
      estimatedSec: 7 * 3600,
      expiresAt: new Date('2026-11-21T22:30:00Z'),
      allowExtend: false,
      suite: 'e5',
      labFile: 'labs/e5-big-server.json',
    };
    expect(() => decideRunExpiry(input)).toThrow(UsageError);
    expect(() => decideRunExpiry(input)).toThrow(
      /lab expires at 2026-11-21T22:30:00Z.*proxylab extend --lab labs\/e5-big-server\.json --hours 2\) or run with --extend/,
    );
    // WHEN allowed to extend: by the hours missing (7 h + margin − 6 h, rounded up)
    const d = decideRunExpiry({ ...input, allowExtend: true });
    expect(d).toMatchObject({ kind: 'extend', hours: Math.ceil((3600 + EXPIRY_MARGIN_SEC) / 3600) });
  });

  test('a lab without expiry never refuses', () => {
    expect(
      decideRunExpiry({
        now: new Date(),
        estimatedSec: 99 * 3600,
        expiresAt: null,
        allowExtend: false,
        suite: 'e5',
        labFile: 'x',
      }).kind,
    ).toBe('no-expiry');
  });
});

describe('collecting a finished run again (proxylab collect --lab FILE --run-id ID)', () => {
  const s3Mock = mockAws(S3Client, operator('deploy'));
  afterEach(() => s3Mock.reset());
  const OUTPUTS = labOutputsWith({
    labName: 'default',
    resultsBucketName: 'results-bucket',
    dbSecretArn: 'arn:aws:secretsmanager:eu-west-1:1:secret:x',
    ...proxyOutputs('default', 'pool100'),
  });
  const manifest = (over: Partial<RunManifest>) => ({
    Body: {
      transformToString: () =>
        Promise.resolve(
          JSON.stringify(
            manifestWith({
              runId: 'cloud-1',
              suite: 'quick',
              mode: 'cloud',
              status: 'completed',
              startedAt: '2026-11-21T10:00:00.000Z',
              endedAt: '2026-11-21T10:02:30.000Z',
              ...over,
            }),
          ),
        ),
    },
  });

  test('the window is the run manifest, the resources the stack outputs: the event runner 0 sent', async () => {
    s3Mock
      .on(GetObjectCommand, { Bucket: 'results-bucket', Key: 'runs/cloud-1/manifest.json' })
      .resolves(manifest({}) as never);
    const lab = loadLabFile(path.join(LABS, 'default.json'));
    const event = await eventForFinishedRun(new S3Client({ region: 'eu-west-1' }), OUTPUTS, lab, 'cloud-1');
    expect(event).toEqual({
      runId: 'cloud-1',
      window: { start: '2026-11-21T10:00:00.000Z', end: '2026-11-21T10:02:30.000Z' },
      cluster: {
        clusterId: 'default-cluster',
        engine: 'aurora-postgresql',
        instanceIds: ['default-writer'],
        piResourceIds: ['db-ABC'],
        instanceClasses: { 'default-writer': 'db.t4g.medium' },
      },
      proxies: ['default-pool100'],
      bucket: 'results-bucket',
    });
  });

  test('a run still going is refused', async () => {
    s3Mock.on(GetObjectCommand).resolves(manifest({ status: 'running', endedAt: null }) as never);
    const lab = loadLabFile(path.join(LABS, 'default.json'));
    await expect(
      eventForFinishedRun(new S3Client({ region: 'eu-west-1' }), OUTPUTS, lab, 'cloud-1'),
    ).rejects.toThrow(/has not ended yet/);
  });
});
