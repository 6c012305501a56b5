/**
 * The cloud runner's minor-version upgrade (lib/runner/minor-upgrade.ts through
 * lib/runner/disruptions.ts) against a mocked RDS API whose version moves as AWS's does: the target
 * read from DescribeDBEngineVersions (the lowest ValidUpgradeTarget that is not a major upgrade),
 * ModifyDBCluster / ModifyDBInstance with ApplyImmediately at T0, the database polled until it is
 * available on the new version. Every call is checked against the runner role of the lab it belongs
 * to (labs/failover-aurora.json, labs/failover-rds.json, whose suites include `planned`) and
 * botocore's model. Also: what validate and plan say before a run.
 */
import { expect } from '@jest/globals';
import {
  DescribeDBClustersCommand,
  DescribeDBEngineVersionsCommand,
  DescribeDBInstancesCommand,
  DescribeEventsCommand,
  ModifyDBClusterCommand,
  ModifyDBInstanceCommand,
  RDSClient,
} from '@aws-sdk/client-rds';
import type { EventSink } from '../../lib/exec/disruption-probe';
import type { DatabaseResources } from '../../lib/aws/runner-args';
import { cloudDisruptionWorld, cloudUnavailable } from '../../lib/runner/disruptions';
import type { DisruptionProbe } from '../../lib/suite/disruption';
import { attributeMock, mockAws } from '../helpers/aws-calls/recorder';
import {
  AURORA,
  AURORA_RUNNER,
  RDS,
  RDS_RUNNER,
  fakeTime as sharedFakeTime,
  ledgerTarget,
} from '../helpers/cloud-disruption-fixtures';
import { validateLab } from '../../lib/config';
import { disruptionNotice } from '../../lib/config/disruptions';
import { getSuite } from '../../lib/suite/catalog';
import { nextKnownMinor } from '../../lib/config/minor-versions';
import { loadLabFile } from '../../lib/config/load';
import { formatRunPlan, previewRun } from '../../lib/cost/run-plan';

const rds = mockAws(RDSClient, AURORA_RUNNER);

afterEach(() => rds.reset());

const LEDGER = ledgerTarget();

const SPEC: DisruptionProbe = {
  kind: 'disruption',
  disruption: { action: 'minor-upgrade', shutdown: null },
  intervalMs: 100,
  warmupSec: 5,
  recoverySec: 600,
  clientTimeouts: { connectTimeoutMs: 2000, statementTimeoutMs: 2000 },
};

function fakeTime(start = Date.parse('2026-11-28T10:00:00Z')) {
  return sharedFakeTime(start);
}

function recorder(): { sink: EventSink; said: Array<[string, string, string | null]> } {
  const said: Array<[string, string, string | null]> = [];
  return { said, sink: (name, source, detail = null) => said.push([name, source, detail]) };
}

async function session(database: DatabaseResources, time: ReturnType<typeof fakeTime>) {
  const world = cloudDisruptionWorld({
    rds: new RDSClient({ region: 'us-east-1' }),
    database,
    proxyNames: [],
    runnerCount: 1,
    ledger: LEDGER,
    now: time.now,
    sleep: time.sleep,
    pollMs: 1000,
    settleMs: 30_000,
    eventReadDelayMs: 1000,
  });
  return world.open(SPEC, [], new Map(), () => undefined);
}

/** DescribeDBEngineVersions' answer for `version`: its targets, a major one first (it must be skipped). */
function engineVersions(engine: string, version: string, targets: Array<[string, boolean]>) {
  return {
    DBEngineVersions: [
      {
        Engine: engine,
        EngineVersion: version,
        ValidUpgradeTarget: targets.map(([v, major]) => ({
          Engine: engine,
          EngineVersion: v,
          IsMajorVersionUpgrade: major,
        })),
      },
    ],
  };
}

describe('minor-upgrade on Aurora', () => {
  test('ModifyDBCluster to the lowest minor target, ApplyImmediately; polled until available on it', async () => {
    // GIVEN a cluster on 17.7 that AWS offers 17.9, 17.8 and 18.1 (major); the upgrade starts 3 s
    // after the call and ends 10 s later
    const time = fakeTime();
    let calledAt: number | null = null;
    const state = () => {
      if (calledAt === null) return { Status: 'available', EngineVersion: '17.7' };
      const since = time.ms() - calledAt;
      return since < 3000
        ? { Status: 'available', EngineVersion: '17.7' }
        : since < 13_000
          ? { Status: 'upgrading', EngineVersion: '17.7' }
          : { Status: 'available', EngineVersion: '17.8' };
    };
    rds
      .on(DescribeDBClustersCommand, { DBClusterIdentifier: 'lab-cluster' })
      .callsFake(() => ({
        DBClusters: [
          {
            ...state(),
            DBClusterMembers: [
              { DBInstanceIdentifier: 'lab-writer', IsClusterWriter: true },
              { DBInstanceIdentifier: 'lab-reader1', IsClusterWriter: false },
            ],
          },
        ],
      }))
      .on(DescribeDBEngineVersionsCommand)
      .resolves(
        engineVersions('aurora-postgresql', '17.7', [
          ['18.1', true],
          ['17.9', false],
          ['17.8', false],
        ]),
      )
      .on(ModifyDBClusterCommand)
      .callsFake(() => {
        calledAt = time.ms();
        return { DBCluster: { Status: 'available' } };
      })
      .on(DescribeDBInstancesCommand)
      .resolves({ DBInstances: [{ DBInstanceStatus: 'available' }] })
      .on(DescribeEventsCommand)
      .resolves({ Events: [] });
    const s = await session(AURORA, time);
    const { sink, said } = recorder();
    // WHEN it is injected and the group is put back
    await s.inject(sink, new AbortController().signal);
    await s.restore();
    // THEN the targets were asked for the cluster's own engine and version
    expect(rds.commandCalls(DescribeDBEngineVersionsCommand).map((c) => c.args[0].input)).toEqual([
      { Engine: 'aurora-postgresql', EngineVersion: '17.7' },
    ]);
    expect(rds.commandCalls(ModifyDBClusterCommand).map((c) => c.args[0].input)).toEqual([
      { DBClusterIdentifier: 'lab-cluster', EngineVersion: '17.8', ApplyImmediately: true },
    ]);
    expect(said).toEqual([
      ['api-call', 'api', 'ModifyDBCluster lab-cluster EngineVersion 17.7 → 17.8 ApplyImmediately'],
      ['api-answered', 'api', 'cluster status available'],
      ['cluster-status', 'writer-poll', 'upgrading'],
      ['cluster-status', 'writer-poll', 'available'],
      ['engine-version', 'writer-poll', '17.7 → 17.8'],
    ]);
    // the poll ended when the cluster was available on 17.8, not at the end of the 600 s window
    expect(time.ms()).toBeLessThan(60_000);
    expect(rds.commandCalls(ModifyDBInstanceCommand)).toHaveLength(0);
  });

  test('no minor target at run time: an infrastructure failure naming the version, no Modify call', async () => {
    // GIVEN AWS offers only a major upgrade of 17.7
    rds
      .on(DescribeDBClustersCommand)
      .resolves({ DBClusters: [{ Status: 'available', EngineVersion: '17.7', DBClusterMembers: [] }] })
      .on(DescribeDBEngineVersionsCommand)
      .resolves(engineVersions('aurora-postgresql', '17.7', [['18.1', true]]));
    const s = await session(AURORA, fakeTime());
    // WHEN / THEN
    await expect(s.inject(recorder().sink, new AbortController().signal)).rejects.toThrow(
      /aurora-postgresql 17\.7 has no minor upgrade target \(DescribeDBEngineVersions lists no ValidUpgradeTarget with IsMajorVersionUpgrade false\)/,
    );
    expect(rds.commandCalls(ModifyDBClusterCommand)).toHaveLength(0);
  });
});

describe('minor-upgrade on RDS for PostgreSQL', () => {
  afterEach(() => attributeMock(rds, AURORA_RUNNER));

  test('ModifyDBInstance on the instance, polled through `upgrading` until available on the new version', async () => {
    // GIVEN the RDS lab's runner, an instance on 17.8 that AWS offers 17.9; it is upgrading for 2 polls
    attributeMock(rds, RDS_RUNNER);
    const time = fakeTime();
    let polls = 0;
    let modified = false;
    rds
      .on(DescribeDBInstancesCommand, { DBInstanceIdentifier: 'lab-db' })
      .callsFake(() => {
        if (modified) polls++;
        const done = polls > 2;
        return {
          DBInstances: [
            {
              DBInstanceStatus: modified && !done ? 'upgrading' : 'available',
              EngineVersion: done ? '17.9' : '17.8',
            },
          ],
        };
      })
      .on(DescribeDBEngineVersionsCommand)
      .resolves(engineVersions('postgres', '17.8', [['17.9', false]]))
      .on(ModifyDBInstanceCommand)
      .callsFake(() => {
        modified = true;
        return { DBInstance: { DBInstanceStatus: 'upgrading' } };
      })
      .on(DescribeEventsCommand)
      .resolves({ Events: [] });
    const s = await session(RDS, time);
    const { sink, said } = recorder();
    // WHEN
    await s.inject(sink, new AbortController().signal);
    await s.restore();
    // THEN
    expect(rds.commandCalls(ModifyDBInstanceCommand).map((c) => c.args[0].input)).toEqual([
      { DBInstanceIdentifier: 'lab-db', EngineVersion: '17.9', ApplyImmediately: true },
    ]);
    expect(said).toEqual([
      ['api-call', 'api', 'ModifyDBInstance lab-db EngineVersion 17.8 → 17.9 ApplyImmediately'],
      ['api-answered', 'api', 'instance status upgrading'],
      ['instance-status', 'writer-poll', 'available'],
      ['engine-version', 'writer-poll', '17.8 → 17.9'],
    ]);
  });
});

describe('before a run', () => {
  test('the runner injects it on either engine with one runner, and refuses a lab with two', () => {
    expect(cloudUnavailable('minor-upgrade', { database: AURORA, runnerCount: 1 })).toBeNull();
    expect(cloudUnavailable('minor-upgrade', { database: RDS, runnerCount: 1 })).toBeNull();
    expect(cloudUnavailable('minor-upgrade', { database: RDS, runnerCount: 2 })).toMatch(/by one runner/);
  });

  test.each([
    [
      'aurora',
      {},
      'aurora.engineVersion',
      /got "absent \(17\.9 by default\)" — no newer minor of its major among the versions the kit knows/,
    ],
    ['aurora', { engineVersion: '16.13' }, 'aurora.engineVersion', /got "16\.13" — no newer minor/],
    ['postgres', { engineVersion: '18.3' }, 'postgres.engineVersion', /got "18\.3" — no newer minor/],
  ] as const)('validate refuses a %s lab %j: %s', (section, db, path, why) => {
    // GIVEN a lab whose suites upgrade its minor version, on the newest minor the kit knows
    const r = validateLab({ name: 'x', [section]: db, suites: ['planned'] });
    // THEN one problem, on the version field, saying the run confirms the real list
    expect(r.ok).toBe(false);
    const problems = r.ok ? [] : r.problems;
    expect(problems.map((p) => p.path)).toEqual([path]);
    expect(problems[0]?.message).toMatch(why);
    expect(problems[0]?.message).toMatch(
      /the real target list is confirmed at run time by DescribeDBEngineVersions/,
    );
  });

  test.each([
    ['aurora', { engineVersion: '16.9' }],
    ['postgres', { engineVersion: '17.7' }],
  ] as const)('validate accepts a %s lab %j', (section, db) => {
    expect(validateLab({ name: 'x', [section]: db, suites: ['planned'] }).ok).toBe(true);
  });

  test.each([
    ['aurora-postgresql', '16.9', '16.10'],
    ['aurora-postgresql', '16.13', null],
    ['postgres', '17.7', '17.8'],
    ['postgres', 'x', null],
  ] as const)('the next minor the kit knows for %s %s is %s', (engine, version, next) => {
    expect(nextKnownMinor(engine, version)).toBe(next);
  });

  test('plan names the versions, the cluster, and that the lab stays on the new version', () => {
    const lines = disruptionNotice(
      getSuite('planned'),
      {
        engine: 'aurora-postgresql',
        clusterId: 'cluster',
        instanceIds: ['writer', 'reader-1'],
        engineVersion: '16.9',
      },
      1,
    );
    expect(lines).toEqual([
      expect.stringMatching(
        /^ {2}minor-upgrade: upgrade the database to the next minor engine version.* on cluster cluster \(instances writer, reader-1\), 1 time\(s\), each after a 20 s warm-up, probed for 900 s; from 16\.9 to 16\.10 \(the next minor the kit knows; the run takes the lowest minor target DescribeDBEngineVersions offers then\); the lab stays on the new version$/,
      ),
    ]);
    const rdsLines = disruptionNotice(
      getSuite('planned'),
      { engine: 'postgres', clusterId: null, instanceIds: ['writer'], engineVersion: '17.8' },
      1,
    );
    expect(rdsLines[0]).toMatch(/ on instance writer, .* from 17\.8 to 17\.9 /);
  });

  test('proxylab plan on the Aurora failover lab: the group, its duration, its cost and what it changes', () => {
    // GIVEN labs/failover-aurora.json (17.7; the next Aurora minor the kit knows is 17.9)
    const text = formatRunPlan(previewRun(loadLabFile('labs/failover-aurora.json'), 'planned'));
    // THEN one 920 s group (20 s warm-up, 900 s window), priced, and the versions named
    expect(text).toMatch(/-T 920 s, 1 repetition/);
    expect(text).toMatch(
      /^ {4}changes the lab: from 17\.7 to 17\.9 \(the next minor the kit knows;.*\); the lab stays on the new version$/m,
    );
    expect(text).toMatch(/cost: the lab bills about \$[0-9.]+\/h/);
  });
});
