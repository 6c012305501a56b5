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
  InvalidDBInstanceStateFault,
  RDSClient,
  RebootDBInstanceCommand,
} from '@aws-sdk/client-rds';
import type { EventSink } from '../../lib/exec/disruption-probe';
import type { DatabaseResources } from '../../lib/aws/runner-args';
import { cloudDisruptionWorld, cloudUnavailable } from '../../lib/runner/disruptions';
import type { DisruptionAction, DisruptionProbe } from '../../lib/suite/disruption';
import type { PlannedStep } from '../../lib/suite/expand';
import { iamProblems } from '../helpers/aws-calls/iam';
import { attributeMock, mockAws } from '../helpers/aws-calls/recorder';
import {
  AURORA,
  AURORA_RUNNER,
  RDS,
  RDS_RUNNER,
  fakeTime as sharedFakeTime,
  ledgerTarget,
} from '../helpers/cloud-disruption-fixtures';

const rds = mockAws(RDSClient, AURORA_RUNNER);

afterEach(() => rds.reset());

const LEDGER = ledgerTarget({ PGPASSWORD: 'secret-pw' });

function spec(action: DisruptionAction, recoverySec = 60): DisruptionProbe {
  return {
    kind: 'disruption',
    disruption: { action, shutdown: null },
    intervalMs: 100,
    warmupSec: 5,
    recoverySec,
    clientTimeouts: { connectTimeoutMs: 2000, statementTimeoutMs: 2000 },
  };
}

function fakeTime(start = Date.parse('2026-11-27T10:00:00Z')) {
  return sharedFakeTime(start);
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
    eventReadDelayMs: EVENT_READ_DELAY_MS,
  });
  return world.open(s, [], new Map(), () => undefined);
}

const EVENT_READ_DELAY_MS = 30_000;

/**
 * The lab's Aurora cluster (lab-writer, lab-reader1) moving on the fake clock as AWS's does: a
 * failover keeps the cluster `failing-over` for `failoverMs`, then the target is the writer and the
 * cluster `available` again — while the old writer goes on rebooting as a reader for `rebootMs`
 * more. FailoverDBCluster while the cluster fails over, or to an instance that is not `available`,
 * fails with InvalidDBInstanceStateFault (one of its errors in botocore's model). DescribeDBInstances
 * answers for an instance named by its identifier only (the call the runner role is granted).
 */
function fakeAurora(time: ReturnType<typeof fakeTime>, { failoverMs = 2000, rebootMs = 20_000 } = {}) {
  let change: { from: string; to: string; at: number } | null = null;
  const failovers: Array<{ target: string; atMs: number }> = [];
  const ms = () => time.now().getTime() - time.at(0).getTime();
  const failingOver = () => change !== null && ms() < change.at + failoverMs;
  const writer = () => (change === null ? 'lab-writer' : failingOver() ? change.from : change.to);
  const status = (id: string) =>
    change !== null && id === change.from && ms() < change.at + failoverMs + rebootMs
      ? 'rebooting'
      : 'available';
  rds
    .on(DescribeDBClustersCommand, { DBClusterIdentifier: 'lab-cluster' })
    .callsFake(() => ({
      DBClusters: [
        {
          Status: failingOver() ? 'failing-over' : 'available',
          DBClusterMembers: ['lab-writer', 'lab-reader1'].map((id) => ({
            DBInstanceIdentifier: id,
            IsClusterWriter: id === writer(),
          })),
        },
      ],
    }))
    .on(DescribeDBInstancesCommand)
    .callsFake((input: { DBInstanceIdentifier?: string }) => {
      const id = input.DBInstanceIdentifier;
      if (id === undefined) throw new Error('the fake answers for one instance named by its identifier');
      return { DBInstances: [{ DBInstanceIdentifier: id, DBInstanceStatus: status(id) }] };
    })
    .on(FailoverDBClusterCommand)
    .callsFake((input: { TargetDBInstanceIdentifier?: string }) => {
      const target = input.TargetDBInstanceIdentifier ?? '?';
      if (failingOver() || status(target) !== 'available')
        throw new InvalidDBInstanceStateFault({
          message: `Target instance ${target} is not in the available state: ${status(target)}`,
          $metadata: {},
        });
      change = { from: writer(), to: target, at: ms() };
      failovers.push({ target, atMs: ms() });
      return { DBCluster: { Status: 'failing-over' } };
    });
  return { failovers, status };
}

/** The [SourceType, SourceIdentifier] of each DescribeEvents call, in order. */
function eventReads(): Array<[string | undefined, string | undefined]> {
  return rds
    .commandCalls(DescribeEventsCommand)
    .map((c) => [c.args[0].input.SourceType, c.args[0].input.SourceIdentifier]);
}

const AURORA_SOURCES = [
  ['db-cluster', 'lab-cluster'],
  ['db-instance', 'lab-writer'],
  ['db-instance', 'lab-reader1'],
  ['db-proxy', 'failover-aurora-pool100'],
];

describe('cloudUnavailable: what the runner refuses, and why', () => {
  test.each([
    ['postgres-restart', AURORA, 1, /local disruption \(proxylab local's throwaway stack\)/],
    ['pooler-restart', AURORA, 1, /restarts a self-hosted pooler, and this lab has none \(poolers: /],
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
      .resolves({ DBCluster: { Status: 'failing-over' } })
      .on(DescribeDBInstancesCommand)
      .resolves({ DBInstances: [{ DBInstanceStatus: 'available' }] });
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
    // every source of the lab: the cluster, each instance, the proxy; each from the group's start,
    // read twice (the second read agrees with the first: nothing arrived late)
    expect(eventReads()).toEqual([...AURORA_SOURCES, ...AURORA_SOURCES]);
    expect(s.timelineNote?.()).toBeNull();
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

  test('a repetition waits for every instance: no FailoverDBCluster while the old writer still reboots as a reader', async () => {
    // GIVEN a cluster that is `available` 2 s after a failover, its old writer rebooting 20 s more
    const time = fakeTime();
    const aurora = fakeAurora(time, { failoverMs: 2000, rebootMs: 20_000 });
    rds.on(DescribeEventsCommand).resolves({ Events: [] });
    const first = await session(AURORA, spec('aurora-failover'), time);
    await first.inject(recorder().sink, new AbortController().signal);
    // WHEN the first repetition is put back and the second injected right after
    await first.restore();
    const putBackAt = time.now().getTime() - time.at(0).getTime();
    const second = await session(AURORA, spec('aurora-failover'), time);
    await second.inject(recorder().sink, new AbortController().signal);
    // THEN the second failover (back to the old writer) came only once it was available again
    expect(aurora.failovers.map((f) => f.target)).toEqual(['lab-reader1', 'lab-writer']);
    expect(aurora.failovers[1]?.atMs).toBeGreaterThanOrEqual(2000 + 20_000);
    expect(putBackAt).toBeGreaterThanOrEqual(22_000);
    // each instance was read by its own identifier (the call the runner role is granted: no Filters)
    const described = rds.commandCalls(DescribeDBInstancesCommand).map((c) => c.args[0].input);
    expect(new Set(described.map((i) => i.DBInstanceIdentifier))).toEqual(
      new Set(['lab-writer', 'lab-reader1']),
    );
    expect(described.every((i) => i.Filters === undefined)).toBe(true);
  });

  test('an instance that does not come back: the wait gives up after settleMs, saying what it waited for and saw', async () => {
    // GIVEN an old writer that reboots for an hour after the failover
    const time = fakeTime();
    fakeAurora(time, { rebootMs: 3_600_000 });
    rds.on(DescribeEventsCommand).resolves({ Events: [] });
    const s = await session(AURORA, spec('aurora-failover'), time);
    await s.inject(recorder().sink, new AbortController().signal);
    const injectedAt = time.now().getTime();
    // WHEN / THEN
    await expect(s.restore()).rejects.toThrow(
      'the database is not available 30 s after the disruption (cluster available, writer lab-reader1; ' +
        'lab-writer rebooting, lab-reader1 available); waited for cluster lab-cluster available with a ' +
        'writer and each of its instances (lab-writer, lab-reader1) available',
    );
    // bounded: settleMs (30 s) and one poll at most
    expect(time.now().getTime() - injectedAt).toBeGreaterThanOrEqual(30_000);
    expect(time.now().getTime() - injectedAt).toBeLessThanOrEqual(31_000);
  });

  test('the runner may describe each lab instance by its identifier, not every instance through a db-cluster-id filter', async () => {
    // GIVEN the runner role of the Aurora failover lab as synthesized WHEN / THEN
    const call = (input: Record<string, unknown>) => ({
      service: 'RDS',
      operation: 'DescribeDBInstances',
      input,
    });
    expect(await iamProblems(call({ DBInstanceIdentifier: 'lab-writer' }), AURORA_RUNNER)).toEqual([]);
    // (a call without an identifier is authorized on db:*, every instance of the account)
    const filtered = await iamProblems(
      call({ Filters: [{ Name: 'db-cluster-id', Values: ['lab-cluster'] }] }),
      AURORA_RUNNER,
    );
    expect(filtered).toEqual([
      expect.stringMatching(
        /^IAM: runner role, lab failover-aurora may not rds:DescribeDBInstances on arn:aws:rds:[^ ]+:db:every-instance-of-the-account /,
      ),
    ]);
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
    // no cluster on RDS for PostgreSQL: its instance and the proxy only (twice: the reads agree)
    expect(rds.commandCalls(DescribeEventsCommand).map((c) => c.args[0].input.SourceType)).toEqual([
      'db-instance',
      'db-proxy',
      'db-instance',
      'db-proxy',
    ]);
    attributeMock(rds, AURORA_RUNNER);
  });
});

describe('RDS events after the window: read again until two reads agree', () => {
  const STARTED = 'Started cross AZ failover to DB instance: lab-reader1';
  const COMPLETED = 'Completed failover to DB instance: lab-reader1';

  test('an event RDS publishes late is read on a later read, and the timeline is complete', async () => {
    // GIVEN a cluster whose "Completed failover" event shows up only from the second read on
    const time = fakeTime();
    fakeAurora(time, { rebootMs: 0 });
    const readAt: number[] = [];
    rds.on(DescribeEventsCommand).callsFake((input: { SourceType?: string; EndTime?: Date }) => {
      if (input.SourceType !== 'db-cluster') return { Events: [] };
      readAt.push(input.EndTime?.getTime() ?? NaN);
      return {
        Events: [
          { Message: STARTED, Date: time.at(1500) },
          ...(readAt.length >= 2 ? [{ Message: COMPLETED, Date: time.at(2900) }] : []),
        ],
      };
    });
    const s = await session(AURORA, spec('aurora-failover'), time);
    const { sink, said } = recorder();
    // WHEN
    await s.inject(sink, new AbortController().signal);
    await s.restore();
    // THEN both events are on the timeline, once each, after three reads (the 2nd and 3rd agree)
    expect(said.filter((e) => e.source === 'rds-events').map((e) => e.name)).toEqual([STARTED, COMPLETED]);
    expect(readAt).toHaveLength(3);
    expect(readAt[1]! - readAt[0]!).toBe(EVENT_READ_DELAY_MS);
    expect(eventReads()).toEqual([...AURORA_SOURCES, ...AURORA_SOURCES, ...AURORA_SOURCES]);
    expect(s.timelineNote?.()).toBeNull();
  });

  test('events still arriving at the last read: bounded, and the timeline says it may be incomplete', async () => {
    // GIVEN a cluster with one more event at every read
    const time = fakeTime();
    fakeAurora(time, { rebootMs: 0 });
    let reads = 0;
    rds.on(DescribeEventsCommand).callsFake((input: { SourceType?: string }) => {
      if (input.SourceType !== 'db-cluster') return { Events: [] };
      reads++;
      return {
        Events: Array.from({ length: reads }, (_x, k) => ({
          Message: `event ${k + 1}`,
          Date: time.at(1000 + k),
        })),
      };
    });
    const s = await session(AURORA, spec('aurora-failover'), time);
    const { sink, said } = recorder();
    // WHEN
    await s.inject(sink, new AbortController().signal);
    await s.restore();
    // THEN four reads at most, every event seen kept, and a note on the timeline
    expect(reads).toBe(4);
    expect(said.filter((e) => e.source === 'rds-events').map((e) => e.name)).toEqual([
      'event 1',
      'event 2',
      'event 3',
      'event 4',
    ]);
    expect(s.timelineNote?.()).toBe(
      'timeline may be incomplete: RDS events still arriving after 4 reads 30 s apart (the last two differ)',
    );
  });

  test('a source that cannot be read: said once, two reads (they agree), and the timeline says which', async () => {
    // GIVEN a proxy whose events the runner may not read
    const time = fakeTime();
    fakeAurora(time, { rebootMs: 0 });
    rds.on(DescribeEventsCommand).callsFake((input: { SourceType?: string }) => {
      if (input.SourceType === 'db-proxy') throw new Error('Rate exceeded');
      return { Events: [] };
    });
    const s = await session(AURORA, spec('aurora-failover'), time);
    const { sink, said } = recorder();
    // WHEN
    await s.inject(sink, new AbortController().signal);
    await s.restore();
    // THEN
    expect(eventReads()).toHaveLength(2 * AURORA_SOURCES.length);
    expect(said.filter((e) => e.source === 'rds-events').map((e) => [e.name, e.detail])).toEqual([
      ['events-unreadable', 'db-proxy failover-aurora-pool100: Rate exceeded'],
    ]);
    expect(s.timelineNote?.()).toBe(
      'timeline may be incomplete: RDS events unreadable for db-proxy failover-aurora-pool100',
    );
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
