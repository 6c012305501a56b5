/**
 * The operator's decisions around a lab's lifetime (issue 14): static parameters applied by a
 * reboot (item 5), the expiry clock starting when the deploy ends and a run refused when it would
 * outlive its lab (item 6). Where the runners go (item 12) is test/unit/cloud-zones.test.ts. AWS
 * calls through aws-sdk-client-mock.
 */
import * as path from 'node:path';
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
import { labOutputsWith, proxyOutputs } from '../helpers/lab-outputs';
import { applyPendingReboots } from '../../lib/operator/parameters';
import { eventForFinishedRun } from '../../lib/operator/recollect';
import { decideRunExpiry, EXPIRY_MARGIN_SEC } from '../../lib/operator/run-window';
import { loadLabFile } from '../../lib/config/load';
import { labTargetCapacities } from '../../lib/config/targets';
import { previewRun } from '../../lib/cost/run-plan';
import type { LabConfig } from '../../lib/config/types';

import { readLabExpiry, restartLabExpiry } from '../../lib/operator/extend';
import type { RunManifest } from '../../lib/suite/types';
import { manifestWith } from '../helpers/run-files';
import { s3GetBody } from '../helpers/s3-body';

/** The suite's estimated wall clock on the lab, as `proxylab plan` and `run` compute it. */
const estimateSuiteSec = (suite: string, lab: LabConfig): number => previewRun(lab, suite).duration.totalSec;

const rdsMock = mockAws(RDSClient, operator('deploy'));
const schedMock = mockAws(SchedulerClient, operator('deploy'));
afterEach(() => {
  rdsMock.reset();
  schedMock.reset();
});

const LABS = path.resolve(__dirname, '..', '..', 'labs');

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
      RoleArn: 'arn:aws:iam::123456789012:role/r',
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

  test('session-state: a proxy step holds a CloudWatch minute per feature, the writer step does not', () => {
    // GIVEN the default lab: the writer and one RDS Proxy
    const lab = loadLabFile(path.join(LABS, 'default.json'));
    // WHEN the session-state suite is estimated
    const sec = estimateSuiteSec('session-state', lab);
    // THEN ≈ 16 features × (1 s + 1.5 minutes) on the proxy, 16 s on the writer, plus overheads and the settle wait
    const proxy = 16 * (1 + 90);
    expect(sec).toBeGreaterThan(proxy + 16);
    expect(sec).toBeLessThan(proxy + 16 + 2 * 15 + 120 + 20 * 60);
  });

  test('e5 (about 14 h with its two PgBouncers) fits the lab TTL right after its deploy', () => {
    const lab = loadLabFile(path.join(LABS, 'e5-big-server.json'));
    const sec = estimateSuiteSec('e5', lab);
    expect(lab.ttlHours).not.toBeNull();
    expect(sec).toBeGreaterThan(12 * 3600);
    const now = new Date('2026-11-21T10:30:00Z');
    expect(
      decideRunExpiry({
        now,
        estimatedSec: sec,
        expiresAt: new Date(now.getTime() + (lab.ttlHours ?? 0) * 3_600_000),
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
    Body: s3GetBody(
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

describe('run window counts every target the runners measure (issue 19 item 5)', () => {
  test('a lab with a PgBouncer is estimated longer than the same lab without it, by its pooler steps', () => {
    // GIVEN the e5 lab (one dedicated PgBouncer, transaction and session pools) and the same lab without it
    const lab = loadLabFile(path.join(LABS, 'e5-big-server.json'));
    expect(lab.poolers.length).toBeGreaterThan(0);
    const noPoolers = { ...lab, poolers: [] };
    // WHEN both are estimated for the suite that sweeps pooled targets
    const withSec = estimateSuiteSec('e5', lab);
    const withoutSec = estimateSuiteSec('e5', noPoolers);
    // THEN the pooler's steps count: the estimate that guards the lab's expiry is not too low
    expect(withSec).toBeGreaterThan(withoutSec);
  });

  test('the targets are the writer, each proxy and each pooler × pool mode, sized as the runner sizes them', () => {
    const lab = loadLabFile(path.join(LABS, 'e5-big-server.json'));
    const caps = labTargetCapacities(lab, 1000);
    expect(caps.map((c) => c.ref.name)).toEqual([
      'direct',
      ...lab.proxies.map((p) => p.name),
      ...lab.poolers.flatMap((p) => p.poolModes.map((m) => `${p.name}-${m}`)),
    ]);
    for (const pooler of lab.poolers) {
      const share = Math.floor((1000 * pooler.poolPercent) / 100);
      for (const c of caps.filter((t) => t.ref.name.startsWith(`${pooler.name}-`))) {
        // at most the pooler's share of max_connections in total (on the runners too), at least one per process
        expect(c.poolSize).toBeLessThanOrEqual(share);
        expect(c.poolSize).toBeGreaterThanOrEqual(pooler.processes);
      }
    }
  });
});
