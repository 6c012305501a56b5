/**
 * The cloud runner's Blue/Green switchover (lib/runner/blue-green.ts through
 * lib/runner/disruptions.ts) against a mocked RDS API whose deployment moves as AWS's does:
 * CreateBlueGreenDeployment when the group opens, polled until AVAILABLE; SwitchoverBlueGreenDeployment
 * at T0, polled until SWITCHOVER_COMPLETED; the teardown — the deployment deleted, then the old blue
 * `-old1` — on success and on failure (DeleteTarget before a switchover, nothing left). Also
 * `proxylab destroy`'s look for leftovers (lib/aws/blue-green-cleanup.ts, operator deploy policy),
 * and what validate and plan say before a run. Every call is checked against the policy of the
 * principal making it (labs/failover-aurora.json and failover-rds.json hold the blue-green suite)
 * and botocore's model.
 */
import { readFileSync } from 'node:fs';
import { expect } from '@jest/globals';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  BlueGreenDeploymentNotFoundFault,
  CreateBlueGreenDeploymentCommand,
  DBClusterNotFoundFault,
  DBInstanceNotFoundFault,
  DeleteBlueGreenDeploymentCommand,
  DeleteDBClusterCommand,
  DeleteDBInstanceCommand,
  DescribeBlueGreenDeploymentsCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  DescribeEventsCommand,
  RDSClient,
  SwitchoverBlueGreenDeploymentCommand,
} from '@aws-sdk/client-rds';
import type { EventSink } from '../../lib/exec/disruption-probe';
import type { DatabaseResources } from '../../lib/aws/runner-args';
import { cleanUpBlueGreen } from '../../lib/aws/blue-green-cleanup';
import { destroyBlueGreenLeftovers } from '../../lib/operator/blue-green-destroy';
import { blueGreenParameterCheck } from '../../lib/operator/doctor-blue-green';
import { cloudDisruptionWorld } from '../../lib/runner/disruptions';
import { validateDisruptionProbe, type DisruptionProbe } from '../../lib/suite/disruption';
import { attributeMock, mockAws } from '../helpers/aws-calls/recorder';
import { operator } from '../helpers/aws-calls/principals';
import {
  AURORA,
  AURORA_RUNNER,
  RDS,
  RDS_RUNNER,
  fakeTime as sharedFakeTime,
  ledgerTarget,
} from '../helpers/cloud-disruption-fixtures';
import { validateLab } from '../../lib/config';
import { loadLabFile } from '../../lib/config/load';
import { formatRunPlan, previewRun } from '../../lib/cost/run-plan';
import { estimateCost } from '../../lib/cost/estimate';

const rds = mockAws(RDSClient, AURORA_RUNNER);

afterEach(() => {
  rds.reset();
  attributeMock(rds, AURORA_RUNNER);
});

const ARN = 'arn:aws:rds:us-east-1:123456789012';
const LAB_TAGS = (lab: string) => [
  { Key: 'proxylab:lab', Value: lab },
  { Key: 'proxylab:owner', Value: 'proxylab' },
  { Key: 'team', Value: 'db' },
];

const SPEC: DisruptionProbe = {
  kind: 'disruption',
  disruption: { action: 'blue-green-switchover', shutdown: null, switchoverTimeoutSec: 300 },
  intervalMs: 100,
  warmupSec: 5,
  recoverySec: 420,
  clientTimeouts: { connectTimeoutMs: 2000, statementTimeoutMs: 2000 },
};

function fakeTime() {
  return sharedFakeTime(Date.parse('2026-11-28T10:00:00Z'));
}

function recorder(): { sink: EventSink; said: Array<[string, string, string | null]> } {
  const said: Array<[string, string, string | null]> = [];
  return { said, sink: (name, source, detail = null) => said.push([name, source, detail]) };
}

/** Whether the ledger table was made before the deployment copied the database (each world's last answer). */
let ledgerBeforeCopy: boolean | null = null;

function world(database: DatabaseResources, time: ReturnType<typeof fakeTime>) {
  ledgerBeforeCopy = null;
  return cloudDisruptionWorld({
    ensureLedger: () => {
      ledgerBeforeCopy = rds.commandCalls(CreateBlueGreenDeploymentCommand).length === 0;
      return Promise.resolve();
    },
    rds: new RDSClient({ region: 'us-east-1' }),
    database,
    proxyNames: ['failover-aurora-pool100'],
    runnerCount: 1,
    ledger: ledgerTarget(),
    now: time.now,
    sleep: time.sleep,
    pollMs: 1000,
    settleMs: 30_000,
    eventReadDelayMs: 1000,
    blueGreen: { blueGreenPollMs: 10_000, createTimeoutMs: 600_000, deleteTimeoutMs: 120_000 },
  });
}

/**
 * A deployment that is PROVISIONING for `provisioningReads` reads, then AVAILABLE; after the
 * switchover call SWITCHOVER_IN_PROGRESS for 2 reads, then `ends` (SWITCHOVER_COMPLETED or _FAILED).
 */
function deployment(provisioningReads: number, ends: 'SWITCHOVER_COMPLETED' | 'SWITCHOVER_FAILED') {
  let reads = 0;
  let switched = 0;
  const state = { switchedOver: false, deleted: false };
  const status = (): string => {
    if (state.switchedOver) return switched++ < 2 ? 'SWITCHOVER_IN_PROGRESS' : ends;
    return reads++ < provisioningReads ? 'PROVISIONING' : 'AVAILABLE';
  };
  return {
    state,
    describe: () => ({
      BlueGreenDeployments: [
        {
          BlueGreenDeploymentIdentifier: 'bgd-0123456789abcdef',
          Status: status(),
          ...(ends === 'SWITCHOVER_FAILED' && switched > 2
            ? { StatusDetails: 'switchover timed out, rolled back' }
            : {}),
        },
      ],
    }),
  };
}

/** The Aurora lab's cluster and instances, their `-old1` after a switchover until each is deleted. */
function auroraDatabase(d: ReturnType<typeof deployment>) {
  const gone = new Set<string>();
  rds
    .on(DescribeDBClustersCommand, { DBClusterIdentifier: 'lab-cluster' })
    .resolves({
      DBClusters: [
        {
          DBClusterIdentifier: 'lab-cluster',
          DBClusterArn: `${ARN}:cluster:lab-cluster`,
          EngineVersion: '17.7',
          Status: 'available',
          TagList: LAB_TAGS('failover-aurora'),
          DBClusterMembers: [
            { DBInstanceIdentifier: 'lab-writer', IsClusterWriter: true },
            { DBInstanceIdentifier: 'lab-reader1', IsClusterWriter: false },
          ],
        },
      ],
    })
    .on(DescribeDBClustersCommand, { DBClusterIdentifier: 'lab-cluster-old1' })
    .resolves({ DBClusters: [{ DBClusterIdentifier: 'lab-cluster-old1', Status: 'available' }] })
    .on(DescribeDBInstancesCommand)
    .callsFake((input: { DBInstanceIdentifier?: string }) => {
      const id = input.DBInstanceIdentifier ?? '';
      if (id.endsWith('-old1') && (gone.has(id) || !d.state.switchedOver))
        throw new DBInstanceNotFoundFault({ message: `DBInstance ${id} not found.`, $metadata: {} });
      return {
        DBInstances: [{ DBInstanceIdentifier: id, DBInstanceStatus: 'available', DBClusterIdentifier: 'x' }],
      };
    })
    .on(DeleteDBInstanceCommand)
    .callsFake((input: { DBInstanceIdentifier: string }) => {
      gone.add(input.DBInstanceIdentifier);
      return {
        DBInstance: { DBInstanceIdentifier: input.DBInstanceIdentifier, DBInstanceStatus: 'deleting' },
      };
    })
    .on(DeleteDBClusterCommand)
    .resolves({ DBCluster: { Status: 'deleting' } })
    .on(DescribeEventsCommand)
    .resolves({ Events: [] });
}

describe('blue-green-switchover on Aurora', () => {
  test('created and waited for before T0, switched over at T0, the deployment and the old blue deleted after', async () => {
    // GIVEN a cluster on 17.7 whose green copy is AVAILABLE on the third read
    const time = fakeTime();
    const d = deployment(2, 'SWITCHOVER_COMPLETED');
    auroraDatabase(d);
    rds
      .on(CreateBlueGreenDeploymentCommand)
      .resolves({
        BlueGreenDeployment: {
          BlueGreenDeploymentIdentifier: 'bgd-0123456789abcdef',
          Status: 'PROVISIONING',
        },
      })
      .on(DescribeBlueGreenDeploymentsCommand)
      .callsFake(() => d.describe())
      .on(SwitchoverBlueGreenDeploymentCommand)
      .callsFake(() => {
        d.state.switchedOver = true;
        return { BlueGreenDeployment: { Status: 'SWITCHOVER_IN_PROGRESS' } };
      })
      .on(DeleteBlueGreenDeploymentCommand)
      .resolves({ BlueGreenDeployment: { Status: 'DELETING' } });
    const log: string[] = [];
    // WHEN the group opens (not measured), T0 comes, and the group is put back
    const s = await world(AURORA, time).open(SPEC, [], new Map(), (l) => log.push(l));
    const createdAfterMs = time.ms();
    const { sink, said } = recorder();
    await s.inject(sink, new AbortController().signal);
    await s.restore();
    // THEN the deployment copies the cluster on its own version, tagged with the lab's proxylab tags
    expect(rds.commandCalls(CreateBlueGreenDeploymentCommand).map((c) => c.args[0].input)).toEqual([
      {
        BlueGreenDeploymentName: expect.stringMatching(/^proxylab-bg-[0-9a-z]+$/),
        Source: `${ARN}:cluster:lab-cluster`,
        TargetEngineVersion: '17.7',
        Tags: LAB_TAGS('failover-aurora').slice(0, 2),
      },
    ]);
    // the ledger table exists before the copy (logical replication does not carry DDL)
    expect(ledgerBeforeCopy).toBe(true);
    // the wait before T0: three reads 10 s apart, said in the group's log with its duration
    expect(createdAfterMs).toBe(20_000);
    expect(log).toContain('Blue/Green deployment bgd-0123456789abcdef AVAILABLE after 20 s');
    // at T0 the switchover with the scenario's timeout, its status changes as events
    expect(rds.commandCalls(SwitchoverBlueGreenDeploymentCommand).map((c) => c.args[0].input)).toEqual([
      { BlueGreenDeploymentIdentifier: 'bgd-0123456789abcdef', SwitchoverTimeout: 300 },
    ]);
    expect(said.filter(([, source]) => source !== 'rds-events')).toEqual([
      ['api-call', 'api', 'SwitchoverBlueGreenDeployment bgd-0123456789abcdef SwitchoverTimeout 300 s'],
      ['api-answered', 'api', 'deployment status SWITCHOVER_IN_PROGRESS'],
      ['deployment-status', 'writer-poll', 'SWITCHOVER_IN_PROGRESS → SWITCHOVER_COMPLETED'],
    ]);
    // the deployment's own events are read with the cluster's, instances' and proxy's
    expect(
      rds
        .commandCalls(DescribeEventsCommand)
        .map((c) => `${c.args[0].input.SourceType} ${c.args[0].input.SourceIdentifier}`),
    ).toContain('blue-green-deployment bgd-0123456789abcdef');
    // after a switchover: no DeleteTarget (not allowed then); the old blue's instances, then its cluster
    expect(rds.commandCalls(DeleteBlueGreenDeploymentCommand).map((c) => c.args[0].input)).toEqual([
      { BlueGreenDeploymentIdentifier: 'bgd-0123456789abcdef' },
    ]);
    expect(rds.commandCalls(DeleteDBInstanceCommand).map((c) => c.args[0].input)).toEqual([
      { DBInstanceIdentifier: 'lab-writer-old1' },
      { DBInstanceIdentifier: 'lab-reader1-old1' },
    ]);
    expect(rds.commandCalls(DeleteDBClusterCommand).map((c) => c.args[0].input)).toEqual([
      { DBClusterIdentifier: 'lab-cluster-old1', SkipFinalSnapshot: true },
    ]);
  });

  test('the switchover fails: the injection fails naming it, the deployment is deleted with its green copy, nothing of the lab', async () => {
    // GIVEN a deployment whose switchover AWS rolls back
    const time = fakeTime();
    const d = deployment(0, 'SWITCHOVER_FAILED');
    auroraDatabase(d);
    rds
      .on(CreateBlueGreenDeploymentCommand)
      .resolves({ BlueGreenDeployment: { BlueGreenDeploymentIdentifier: 'bgd-0123456789abcdef' } })
      .on(DescribeBlueGreenDeploymentsCommand)
      .callsFake(() => d.describe())
      .on(SwitchoverBlueGreenDeploymentCommand)
      .callsFake(() => {
        d.state.switchedOver = true;
        return { BlueGreenDeployment: { Status: 'SWITCHOVER_IN_PROGRESS' } };
      })
      .on(DeleteBlueGreenDeploymentCommand)
      .resolves({});
    const s = await world(AURORA, time).open(SPEC, [], new Map(), () => undefined);
    // WHEN T0 comes and the group is put back
    await expect(s.inject(recorder().sink, new AbortController().signal)).rejects.toThrow(
      /the switchover of bgd-0123456789abcdef failed: switchover timed out, rolled back \(AWS rolls every change back\)/,
    );
    await s.restore();
    // THEN the green copy goes with the deployment; the lab's database and no -old1 is touched
    expect(rds.commandCalls(DeleteBlueGreenDeploymentCommand).map((c) => c.args[0].input)).toEqual([
      { BlueGreenDeploymentIdentifier: 'bgd-0123456789abcdef', DeleteTarget: true },
    ]);
    expect(rds.commandCalls(DeleteDBInstanceCommand)).toHaveLength(0);
    expect(rds.commandCalls(DeleteDBClusterCommand)).toHaveLength(0);
  });

  test('the green copy never becomes AVAILABLE: the group cannot open, the deployment is deleted with it', async () => {
    // GIVEN a deployment RDS finds invalid
    const time = fakeTime();
    auroraDatabase(deployment(0, 'SWITCHOVER_COMPLETED'));
    rds
      .on(CreateBlueGreenDeploymentCommand)
      .resolves({ BlueGreenDeployment: { BlueGreenDeploymentIdentifier: 'bgd-0123456789abcdef' } })
      .on(DescribeBlueGreenDeploymentsCommand)
      .resolves({
        BlueGreenDeployments: [
          {
            BlueGreenDeploymentIdentifier: 'bgd-0123456789abcdef',
            Status: 'INVALID_CONFIGURATION',
            StatusDetails: 'incompatible parameter(s): [rds.logical_replication]',
          },
        ],
      })
      .on(DeleteBlueGreenDeploymentCommand)
      .resolves({});
    // WHEN / THEN
    await expect(world(AURORA, time).open(SPEC, [], new Map(), () => undefined)).rejects.toThrow(
      /bgd-0123456789abcdef is INVALID_CONFIGURATION: incompatible parameter\(s\): \[rds\.logical_replication\]/,
    );
    expect(rds.commandCalls(DeleteBlueGreenDeploymentCommand).map((c) => c.args[0].input)).toEqual([
      { BlueGreenDeploymentIdentifier: 'bgd-0123456789abcdef', DeleteTarget: true },
    ]);
    expect(rds.commandCalls(SwitchoverBlueGreenDeploymentCommand)).toHaveLength(0);
  });
});

describe('blue-green-switchover on RDS for PostgreSQL', () => {
  test('the instance is the source; after the switchover the old instance is deleted without a final snapshot', async () => {
    // GIVEN the RDS lab's runner and an instance on 17.8
    attributeMock(rds, RDS_RUNNER);
    const time = fakeTime();
    const d = deployment(1, 'SWITCHOVER_COMPLETED');
    let oldGone = false;
    rds
      .on(DescribeDBInstancesCommand, { DBInstanceIdentifier: 'lab-db' })
      .resolves({
        DBInstances: [
          {
            DBInstanceIdentifier: 'lab-db',
            DBInstanceArn: `${ARN}:db:lab-db`,
            EngineVersion: '17.8',
            DBInstanceStatus: 'available',
            TagList: LAB_TAGS('failover-rds'),
          },
        ],
      })
      .on(DescribeDBInstancesCommand, { DBInstanceIdentifier: 'lab-db-old1' })
      .callsFake(() => {
        if (oldGone) throw new DBInstanceNotFoundFault({ message: 'not found', $metadata: {} });
        return { DBInstances: [{ DBInstanceIdentifier: 'lab-db-old1', DBInstanceStatus: 'available' }] };
      })
      .on(DeleteDBInstanceCommand)
      .callsFake(() => {
        oldGone = true;
        return {};
      })
      .on(CreateBlueGreenDeploymentCommand)
      .resolves({ BlueGreenDeployment: { BlueGreenDeploymentIdentifier: 'bgd-0123456789abcdef' } })
      .on(DescribeBlueGreenDeploymentsCommand)
      .callsFake(() => d.describe())
      .on(SwitchoverBlueGreenDeploymentCommand)
      .callsFake(() => {
        d.state.switchedOver = true;
        return { BlueGreenDeployment: { Status: 'SWITCHOVER_IN_PROGRESS' } };
      })
      .on(DeleteBlueGreenDeploymentCommand)
      .resolves({})
      .on(DescribeEventsCommand)
      .resolves({ Events: [] });
    // WHEN the group runs
    const s = await world(RDS, time).open(SPEC, [], new Map(), () => undefined);
    await s.inject(recorder().sink, new AbortController().signal);
    await s.restore();
    // THEN
    expect(rds.commandCalls(CreateBlueGreenDeploymentCommand)[0]?.args[0].input).toMatchObject({
      Source: `${ARN}:db:lab-db`,
      TargetEngineVersion: '17.8',
    });
    expect(rds.commandCalls(DeleteDBInstanceCommand).map((c) => c.args[0].input)).toEqual([
      { DBInstanceIdentifier: 'lab-db-old1', SkipFinalSnapshot: true },
    ]);
    expect(rds.commandCalls(DescribeDBClustersCommand)).toHaveLength(0);
  });
});

describe('proxylab destroy: Blue/Green leftovers', () => {
  const cfn = mockAws(CloudFormationClient, operator('deploy', 'failover-aurora'));
  afterEach(() => cfn.reset());

  test("a run that stopped halfway: the lab's deployment (with its green copy) and a leftover old blue are deleted, another lab's is not", async () => {
    // GIVEN the operator (deploy policy of the Aurora lab), the stack's outputs, two deployments
    // (the lab's, still AVAILABLE; another lab's) and the lab's old blue from an earlier switchover
    attributeMock(rds, operator('deploy', 'failover-aurora'));
    const time = fakeTime();
    cfn.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: 'proxylab-failover-aurora',
          StackStatus: 'CREATE_COMPLETE',
          CreationTime: new Date(),
          Outputs: Object.entries({
            LabName: 'failover-aurora',
            RunnerInstanceIds: 'i-0aaaaaaaaaaaaaaaa',
            ResultsBucketName: 'proxylab-failover-aurora-results',
            ClusterIdentifier: 'lab-cluster',
            ClusterEndpoint: 'c.cluster-x.us-east-1.rds.amazonaws.com',
            ClusterReaderEndpoint: 'c.cluster-ro-x.us-east-1.rds.amazonaws.com',
            DatabasePort: '5432',
            DatabaseEngine: 'aurora-postgresql',
            DbInstanceIds: 'lab-writer,lab-reader1',
            DbInstanceResourceIds: 'db-W1,db-R1',
            ProxyEndpoints: '{"pool100":"failover-aurora-pool100.proxy-x.us-east-1.rds.amazonaws.com"}',
            ProxyNames: '{"pool100":"failover-aurora-pool100"}',
            DbSecretArn: 'arn:aws:secretsmanager:us-east-1:1:secret:db',
            CollectorFunctionName: 'proxylab-failover-aurora-collector',
          }).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
        },
      ],
    });
    const deleted = new Set<string>();
    let reads = 0;
    rds
      .on(DescribeBlueGreenDeploymentsCommand)
      .resolves({
        BlueGreenDeployments: [
          {
            BlueGreenDeploymentIdentifier: 'bgd-ours',
            Source: `${ARN}:cluster:lab-cluster`,
            Target: `${ARN}:cluster:lab-cluster-green-abc123`,
            Status: 'AVAILABLE',
            TagList: LAB_TAGS('failover-aurora'),
          },
          {
            BlueGreenDeploymentIdentifier: 'bgd-theirs',
            Source: `${ARN}:cluster:someone-else`,
            Status: 'AVAILABLE',
            TagList: [{ Key: 'proxylab:lab', Value: 'other' }],
          },
        ],
      })
      .on(DescribeBlueGreenDeploymentsCommand, { BlueGreenDeploymentIdentifier: 'bgd-ours' })
      .callsFake(() => {
        // DELETING for one read after the call, then gone
        if (reads++ < 1)
          return {
            BlueGreenDeployments: [{ BlueGreenDeploymentIdentifier: 'bgd-ours', Status: 'DELETING' }],
          };
        throw new BlueGreenDeploymentNotFoundFault({ message: 'not found', $metadata: {} });
      })
      .on(DeleteBlueGreenDeploymentCommand)
      .resolves({})
      .on(DescribeDBInstancesCommand)
      .callsFake((input: { DBInstanceIdentifier: string }) => {
        if (deleted.has(input.DBInstanceIdentifier))
          throw new DBInstanceNotFoundFault({ message: 'not found', $metadata: {} });
        return {
          DBInstances: [{ DBInstanceIdentifier: input.DBInstanceIdentifier, DBClusterIdentifier: 'x' }],
        };
      })
      .on(DeleteDBInstanceCommand)
      .callsFake((input: { DBInstanceIdentifier: string }) => {
        deleted.add(input.DBInstanceIdentifier);
        return {};
      })
      .on(DescribeDBClustersCommand)
      .resolves({ DBClusters: [{ DBClusterIdentifier: 'lab-cluster-old1', Status: 'available' }] })
      .on(DeleteDBClusterCommand)
      .resolves({});
    const log: string[] = [];
    // WHEN destroy looks for leftovers
    const left = await destroyBlueGreenLeftovers(
      loadLabFile('labs/failover-aurora.json'),
      {
        rds: new RDSClient({ region: 'us-east-1' }),
        cloudformation: new CloudFormationClient({ region: 'us-east-1' }),
        now: time.now,
        sleep: time.sleep,
        pollMs: 10_000,
      },
      (l) => log.push(l),
    );
    // THEN nothing is left, and only the lab's own resources were deleted — the old blue after the
    // deployment is gone (read again until DescribeBlueGreenDeployments no longer finds it)
    expect(left).toEqual([]);
    expect(reads).toBe(2);
    expect(log[0]).toBe('Blue/Green deployment bgd-ours deleted with its green copy (DeleteTarget)');
    expect(rds.commandCalls(DeleteBlueGreenDeploymentCommand).map((c) => c.args[0].input)).toEqual([
      { BlueGreenDeploymentIdentifier: 'bgd-ours', DeleteTarget: true },
    ]);
    expect(
      rds.commandCalls(DeleteDBInstanceCommand).map((c) => c.args[0].input.DBInstanceIdentifier),
    ).toEqual(['lab-writer-old1', 'lab-reader1-old1']);
    expect(rds.commandCalls(DeleteDBClusterCommand).map((c) => c.args[0].input)).toEqual([
      { DBClusterIdentifier: 'lab-cluster-old1', SkipFinalSnapshot: true },
    ]);
  });

  test('nothing left: no deletion, said so', async () => {
    // GIVEN no deployment and no old blue
    attributeMock(rds, operator('deploy', 'failover-aurora'));
    rds
      .on(DescribeBlueGreenDeploymentsCommand)
      .resolves({ BlueGreenDeployments: [] })
      .on(DescribeDBInstancesCommand)
      .rejects(new DBInstanceNotFoundFault({ message: 'not found', $metadata: {} }))
      .on(DescribeDBClustersCommand)
      .rejects(new DBClusterNotFoundFault({ message: 'not found', $metadata: {} }));
    const time = fakeTime();
    const log: string[] = [];
    // WHEN
    const left = await cleanUpBlueGreen(
      { rds: new RDSClient({ region: 'us-east-1' }), now: time.now, sleep: time.sleep },
      AURORA,
      'failover-aurora',
      (l) => log.push(l),
    );
    // THEN
    expect(left).toEqual([]);
    expect(log).toEqual(['no Blue/Green leftovers of the lab to delete']);
    expect(rds.commandCalls(DeleteBlueGreenDeploymentCommand)).toHaveLength(0);
    expect(rds.commandCalls(DeleteDBInstanceCommand)).toHaveLength(0);
    expect(rds.commandCalls(DeleteDBClusterCommand)).toHaveLength(0);
  });
});

describe('proxylab doctor: the Aurora cluster parameter group', () => {
  test.each([
    ['in sync on every member', ['in-sync', 'in-sync'], true, null],
    [
      'the writer waits for a reboot (the suite added to a deployed lab)',
      ['pending-reboot', 'in-sync'],
      false,
      /^aws rds reboot-db-instance --db-instance-identifier lab-writer \(a static parameter applies at reboot; CreateBlueGreenDeployment fails until the writer is in sync\)$/,
    ],
  ] as const)('%s', async (_what, statuses, okay, fix) => {
    // GIVEN the operator (run policy of the Aurora lab) and the cluster's members
    attributeMock(rds, operator('run', 'failover-aurora'));
    rds.on(DescribeDBClustersCommand, { DBClusterIdentifier: 'lab-cluster' }).resolves({
      DBClusters: [
        {
          DBClusterMembers: [
            {
              DBInstanceIdentifier: 'lab-writer',
              IsClusterWriter: true,
              DBClusterParameterGroupStatus: statuses[0],
            },
            {
              DBInstanceIdentifier: 'lab-reader1',
              IsClusterWriter: false,
              DBClusterParameterGroupStatus: statuses[1],
            },
          ],
        },
      ],
    });
    // WHEN
    const check = await blueGreenParameterCheck(new RDSClient({ region: 'us-east-1' }), 'lab-cluster');
    // THEN
    expect(check.ok).toBe(okay);
    if (fix === null) expect(check.detail).toBe('lab-writer, lab-reader1');
    else {
      expect(check.detail).toBe('lab-writer: pending-reboot');
      expect(check.fix).toMatch(fix);
    }
  });
});

describe('before a run', () => {
  test.each([
    ['the scenario as shipped (300 s in a 420 s window)', SPEC, []],
    [
      'below AWS minimum',
      { ...SPEC, disruption: { ...SPEC.disruption, switchoverTimeoutSec: 20 } },
      [
        'x: probe.disruption.switchoverTimeoutSec must be an integer 30–420 (SwitchoverTimeout: "Minimum value of 30", RDS API Reference; within the recovery window, probe.recoverySec), got 20',
      ],
    ],
    [
      'on another action',
      { ...SPEC, disruption: { action: 'rds-reboot', shutdown: null, switchoverTimeoutSec: 300 } },
      ['x: probe.disruption.switchoverTimeoutSec is for blue-green-switchover only, got 300 for rds-reboot'],
    ],
  ] as const)('switchoverTimeoutSec: %s', (_what, probe, problems) => {
    expect(validateDisruptionProbe('x', probe)).toEqual(problems);
  });

  test('validate refuses a lab whose suites hold blue-green but that has no RDS Proxy, naming the field', () => {
    // GIVEN the Aurora failover lab file without its proxy (and one with it)
    const raw = JSON.parse(readFileSync('labs/failover-aurora.json', 'utf8')) as Record<string, unknown>;
    // WHEN
    const r = validateLab({ ...raw, proxies: [] });
    const problems = r.ok ? [] : r.problems.filter((p) => p.path === 'proxies');
    // THEN the lab as shipped is valid; without a proxy it is refused, naming the field
    expect(validateLab(raw).ok).toBe(true);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.message).toMatch(
      /^must be a list of at least 1 RDS Proxy: the Blue\/Green switchover is measured behind RDS Proxy .*; got 0 \(suite blue-green, scenario blue-green-switchover\)$/,
    );
  });

  test('cost names the second database among what its hourly figures leave out, only for a lab with the suite', () => {
    // GIVEN / WHEN
    const withIt = estimateCost(loadLabFile('labs/failover-aurora.json')).notIncluded;
    const without = estimateCost(loadLabFile('labs/default.json')).notIncluded;
    // THEN
    const line =
      /^the blue-green suite's second database \(the green copy of a Blue\/Green switchover\) for each run: ≈ 45 min plus the group's window at the database's hourly price, priced per run by proxylab plan --suite blue-green$/;
    expect(withIt.filter((l) => line.test(l))).toHaveLength(1);
    expect(without.filter((l) => line.test(l))).toHaveLength(0);
  });

  test.each(['labs/failover-aurora.json', 'labs/failover-rds.json'])(
    'plan for %s names the group, its second database with its cost, and what it changes',
    (file) => {
      // GIVEN / WHEN
      const text = formatRunPlan(previewRun(loadLabFile(file), 'blue-green'));
      // THEN
      expect(text).toMatch(
        /before the group: a Blue\/Green deployment \(CreateBlueGreenDeployment, not measured\): a second database, the green copy, runs ≈ 0\.87 h \(creation ≈ 30 min \(assumed: AWS states no figure; it grows with the database\), the 7-min window, teardown ≈ 15 min\) ≈ \$\d+\.\d\d at the lab database's \$\d+\.\d\d\/h \(instances and storage\)/,
      );
      expect(text).toContain(
        "changes the lab: the lab's database is replaced by its green copy (same identifiers, endpoints and engine version; new instances, so a cold cache); the old blue is deleted after the group",
      );
    },
  );
});
