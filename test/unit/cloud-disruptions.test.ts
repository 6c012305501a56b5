/**
 * The cloud runner's disruptions (lib/runner/disruptions.ts) against a mocked RDS API whose state
 * moves as AWS's does (a failover takes a few polls, a reboot passes through `rebooting`): which
 * call is made on which of the lab's resources, what the writer poll sees, how RDS's own events are
 * placed on the run's clock, and when the runner refuses. Every call is checked against the runner
 * role of the lab it belongs to (labs/failover-aurora.json, labs/failover-rds.json).
 */
import { expect } from '@jest/globals';
import {
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  DescribeEventsCommand,
  FailoverDBClusterCommand,
  RDSClient,
  RebootDBInstanceCommand,
} from '@aws-sdk/client-rds';
import type { Target } from '../../lib/engine/ports';
import type { EventSink } from '../../lib/exec/disruption-probe';
import type { DatabaseResources } from '../../lib/aws/runner-args';
import { cloudDisruptionWorld, cloudUnavailable } from '../../lib/runner/disruptions';
import type { DisruptionAction, DisruptionProbe } from '../../lib/suite/disruption';
import type { PlannedStep } from '../../lib/suite/expand';
import { directTarget } from '../../lib/suite/targets';
import { attributeMock, mockAws } from '../helpers/aws-calls/recorder';

const AURORA_RUNNER = { kind: 'runner', lab: 'failover-aurora' } as const;
const RDS_RUNNER = { kind: 'runner', lab: 'failover-rds' } as const;
const rds = mockAws(RDSClient, AURORA_RUNNER);

afterEach(() => rds.reset());

const AURORA: DatabaseResources = {
  engine: 'aurora-postgresql',
  clusterId: 'lab-cluster',
  instanceIds: ['lab-writer', 'lab-reader1'],
};
const RDS: DatabaseResources = { engine: 'postgres', clusterId: null, instanceIds: ['lab-db'] };

const LEDGER: Target = {
  ref: directTarget(),
  connection: () => ({
    host: 'writer.example',
    port: 5432,
    user: 'bench',
    dbname: 'bench',
    sslmode: 'require',
    env: { PGPASSWORD: 'secret-pw' },
  }),
  maxConnections: () => Promise.resolve(100),
  poolSize: () => Promise.resolve(null),
};

function spec(action: DisruptionAction, recoverySec = 60): DisruptionProbe {
  return {
    kind: 'disruption',
    disruption: { action, shutdown: null },
    intervalMs: 100,
    warmupSec: 5,
    recoverySec,
    attemptTimeoutMs: 2000,
  };
}

/** A wall clock that moves only when the code under test sleeps. */
function fakeTime(start = Date.parse('2026-11-27T10:00:00Z')) {
  let t = start;
  return {
    now: () => new Date(t),
    sleep: (ms: number) => {
      t += ms;
      return Promise.resolve();
    },
    at: (offsetMs: number) => new Date(start + offsetMs),
  };
}

interface Said {
  readonly name: string;
  readonly source: string;
  readonly detail: string | null;
  readonly at: Date | undefined;
}

function recorder(): { sink: EventSink; said: Said[] } {
  const said: Said[] = [];
  return {
    said,
    sink: (name, source, detail = null, at) => said.push({ name, source, detail, at }),
  };
}

async function session(database: DatabaseResources, s: DisruptionProbe, time = fakeTime()) {
  const world = cloudDisruptionWorld({
    rds: new RDSClient({ region: 'us-east-1' }),
    database,
    proxyNames: ['failover-aurora-pool100'],
    runnerCount: 1,
    ledger: LEDGER,
    now: time.now,
    sleep: time.sleep,
    pollMs: 1000,
    settleMs: 30_000,
  });
  return world.open(s, [], new Map(), () => undefined);
}

describe('cloudUnavailable: what the runner refuses, and why', () => {
  test.each([
    ['postgres-restart', AURORA, 1, /local disruption \(proxylab local's throwaway stack\)/],
    ['pooler-restart', AURORA, 1, /not built on the runner yet/],
    ['aurora-failover', RDS, 1, /needs Aurora PostgreSQL; this lab runs RDS for PostgreSQL/],
    ['rds-reboot-failover', AURORA, 1, /needs RDS for PostgreSQL; this lab runs Aurora PostgreSQL/],
    ['aurora-failover', { ...AURORA, instanceIds: ['lab-writer'] }, 1, /no reader to fail over to/],
    ['aurora-failover', null, 1, /does not name the lab database/],
    ['aurora-failover', AURORA, 2, /injected once, by one runner: this run has 2/],
  ] as const)('%s on %j with %i runner(s)', (action, database, runnerCount, why) => {
    expect(cloudUnavailable(action, { database, runnerCount })).toMatch(why);
  });

  test.each([
    ['aurora-failover', AURORA],
    ['rds-reboot-failover', RDS],
    ['rds-reboot', RDS],
  ] as const)('%s is injected on a lab that can undergo it', (action, database) => {
    expect(cloudUnavailable(action, { database, runnerCount: 1 })).toBeNull();
  });
});

describe('aurora-failover', () => {
  test('fails over to the reader, polls the writer until it moved, then reads RDS events on the run clock', async () => {
    // GIVEN a cluster whose writer moves to the reader on the third poll after FailoverDBCluster
    let polls = -1;
    rds
      .on(DescribeDBClustersCommand, { DBClusterIdentifier: 'lab-cluster' })
      .callsFake(() => {
        polls++;
        const moved = polls >= 3;
        return {
          DBClusters: [
            {
              Status: polls <= 0 ? 'available' : moved ? 'available' : 'failing-over',
              DBClusterMembers: [
                { DBInstanceIdentifier: 'lab-writer', IsClusterWriter: !moved },
                { DBInstanceIdentifier: 'lab-reader1', IsClusterWriter: moved },
              ],
            },
          ],
        };
      })
      .on(FailoverDBClusterCommand)
      .resolves({ DBCluster: { Status: 'failing-over' } });
    const time = fakeTime();
    rds.on(DescribeEventsCommand).callsFake((input: { SourceType?: string; SourceIdentifier?: string }) => ({
      Events:
        input.SourceType === 'db-cluster'
          ? [
              // before the group opened: not this disruption's
              { Message: 'old news', Date: time.at(-60_000), SourceType: 'db-cluster' },
              {
                Message: 'Started cross AZ failover to DB instance: lab-reader1',
                Date: time.at(1500),
                EventCategories: ['failover'],
              },
              { Message: 'Completed failover to DB instance: lab-reader1', Date: time.at(2900) },
            ]
          : [],
    }));
    const s = await session(AURORA, spec('aurora-failover'), time);
    const { sink, said } = recorder();
    // WHEN it is injected and the group is put back
    await s.inject(sink, new AbortController().signal);
    await s.restore();
    // THEN the failover named the reader, on the lab's cluster
    expect(rds.commandCalls(FailoverDBClusterCommand).map((c) => c.args[0].input)).toEqual([
      { DBClusterIdentifier: 'lab-cluster', TargetDBInstanceIdentifier: 'lab-reader1' },
    ]);
    expect(said.map((e) => [e.name, e.source, e.detail])).toEqual([
      ['api-call', 'api', 'FailoverDBCluster lab-cluster → lab-reader1 (writer lab-writer)'],
      ['api-answered', 'api', 'cluster status failing-over'],
      ['cluster-status', 'writer-poll', 'failing-over'],
      ['cluster-status', 'writer-poll', 'available'],
      ['writer-changed', 'writer-poll', 'lab-writer → lab-reader1'],
      [
        'Started cross AZ failover to DB instance: lab-reader1',
        'rds-events',
        'db-cluster lab-cluster [failover]',
      ],
      ['Completed failover to DB instance: lab-reader1', 'rds-events', 'db-cluster lab-cluster'],
    ]);
    // RDS's events keep their own time (placed on the probe clock by the runner), ours are stamped when said
    expect(said.filter((e) => e.source === 'rds-events').map((e) => e.at?.toISOString())).toEqual([
      time.at(1500).toISOString(),
      time.at(2900).toISOString(),
    ]);
    expect(said.filter((e) => e.source !== 'rds-events').every((e) => e.at === undefined)).toBe(true);
    // every source of the lab: the cluster, each instance, the proxy; each from the group's start
    expect(
      rds
        .commandCalls(DescribeEventsCommand)
        .map((c) => [c.args[0].input.SourceType, c.args[0].input.SourceIdentifier]),
    ).toEqual([
      ['db-cluster', 'lab-cluster'],
      ['db-instance', 'lab-writer'],
      ['db-instance', 'lab-reader1'],
      ['db-proxy', 'failover-aurora-pool100'],
    ]);
  });

  test('a repetition after a failover fails over to whichever instance is the reader now', async () => {
    rds
      .on(DescribeDBClustersCommand)
      .resolves({
        DBClusters: [
          {
            Status: 'available',
            DBClusterMembers: [
              { DBInstanceIdentifier: 'lab-writer', IsClusterWriter: false },
              { DBInstanceIdentifier: 'lab-reader1', IsClusterWriter: true },
            ],
          },
        ],
      })
      .on(FailoverDBClusterCommand)
      .resolves({});
    const s = await session(AURORA, spec('aurora-failover', 3));
    await s.inject(recorder().sink, new AbortController().signal);
    expect(rds.commandCalls(FailoverDBClusterCommand)[0]?.args[0].input.TargetDBInstanceIdentifier).toBe(
      'lab-writer',
    );
  });

  test('a database that does not come back is an infrastructure failure naming what it saw', async () => {
    rds
      .on(DescribeDBClustersCommand)
      .resolves({ DBClusters: [{ Status: 'failing-over', DBClusterMembers: [] }] });
    const s = await session(AURORA, spec('aurora-failover'));
    await expect(s.restore()).rejects.toThrow(
      /the database is not available 30 s after the disruption \(cluster failing-over, writer none\)/,
    );
  });
});

describe.each([
  ['rds-reboot-failover', true],
  ['rds-reboot', false],
] as const)('%s', (action, failover) => {
  beforeEach(() => {
    rds.reset();
  });

  test('reboots the lab instance, polls it through rebooting back to available, says where the primary went', async () => {
    // GIVEN an instance that reboots for 3 polls (and, with ForceFailover, comes back in the other zone)
    attributeMock(rds, RDS_RUNNER);
    let polls = -1;
    rds.on(DescribeDBInstancesCommand, { DBInstanceIdentifier: 'lab-db' }).callsFake(() => {
      polls++;
      const back = polls >= 3;
      return {
        DBInstances: [
          {
            DBInstanceStatus: polls <= 0 || back ? 'available' : 'rebooting',
            AvailabilityZone: failover && back ? 'us-east-1b' : 'us-east-1a',
          },
        ],
      };
    });
    rds.on(RebootDBInstanceCommand).resolves({ DBInstance: { DBInstanceStatus: 'rebooting' } });
    rds.on(DescribeEventsCommand).resolves({ Events: [] });
    const s = await session(RDS, spec(action));
    const { sink, said } = recorder();
    // WHEN
    await s.inject(sink, new AbortController().signal);
    await s.restore();
    // THEN
    expect(rds.commandCalls(RebootDBInstanceCommand).map((c) => c.args[0].input)).toEqual([
      failover ? { DBInstanceIdentifier: 'lab-db', ForceFailover: true } : { DBInstanceIdentifier: 'lab-db' },
    ]);
    expect(said.map((e) => [e.name, e.detail])).toEqual([
      ['api-call', `RebootDBInstance lab-db${failover ? ' ForceFailover' : ''} (zone us-east-1a)`],
      ['api-answered', 'instance status rebooting'],
      ['instance-status', 'available'],
      ...(failover ? [['writer-changed', 'primary in us-east-1a → us-east-1b']] : []),
    ]);
    // no cluster on RDS for PostgreSQL: its instance and the proxy only
    expect(rds.commandCalls(DescribeEventsCommand).map((c) => c.args[0].input.SourceType)).toEqual([
      'db-instance',
      'db-proxy',
    ]);
    attributeMock(rds, AURORA_RUNNER);
  });
});

test('probe clients reach each target as it is, with its password and TLS; the ledger lives on the writer', async () => {
  const s = await session(AURORA, spec('aurora-failover'));
  const ep = s.ledgerEndpoint();
  expect(ep).toEqual({
    hosts: [{ host: 'writer.example', port: 5432 }],
    user: 'bench',
    dbname: 'bench',
    password: 'secret-pw',
    sslmode: 'require',
    targetSessionAttrs: 'any',
    label: 'writer.example:5432/bench sslmode=require',
  });
  expect(s.endpoint({} as PlannedStep, LEDGER).label).not.toContain('secret-pw');
});
