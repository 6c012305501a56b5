/**
 * The runner role's grants for cloud disruptions (issue 22): exactly the actions the lab's suites
 * inject, on the lab's own database ARNs (lib/constructs/runner-asset.ts grantDisruptions), and none
 * for a lab that disrupts nothing. cdk-nag and cfn-lint over the shipped failover labs run in
 * labs.test.ts; what the runner really calls is checked against these statements in the cloud-runner
 * tests (test/helpers/aws-calls).
 */
import { expect } from '@jest/globals';
import * as path from 'node:path';
import { LABS_DIR, labFrom, loadLab, resourcesOfType, synthLab } from './helpers';

interface Statement {
  readonly Action: string | string[];
  readonly Effect: string;
  readonly Resource: unknown;
  readonly Condition?: Record<string, Record<string, string>>;
}

/** A statement on names AWS generates (a Blue/Green deployment's `:deployment:*`, its `:db:*`, the old blue's `*-old1`). */
const GENERATED = /:(deployment|db|cluster|cluster-endpoint|cluster-pg|cluster-snapshot|pg|og|subgrp):\*/;

/** The statements on the lab's own ARNs (what the failover and upgrade grants are). */
function onOwnArns<S extends Statement>(statements: readonly S[]): S[] {
  return statements.filter((s) => !GENERATED.test(JSON.stringify(s.Resource)));
}

/** Every statement of the runner role's policies, with its actions as a list. */
function runnerStatements(lab: Parameters<typeof synthLab>[0]): Array<Statement & { actions: string[] }> {
  const { template } = synthLab(lab);
  return resourcesOfType(template, 'AWS::IAM::Policy')
    .filter(([id]) => id.startsWith('RunnersRole'))
    .flatMap(([, p]) => (p.PolicyDocument as { Statement: Statement[] }).Statement)
    .map((s) => ({ ...s, actions: Array.isArray(s.Action) ? s.Action : [s.Action] }));
}

const DISRUPTION_ACTIONS = [
  'rds:FailoverDBCluster',
  'rds:RebootDBInstance',
  'rds:DescribeDBClusters',
  'rds:DescribeDBInstances',
  'rds:DescribeEvents',
  'rds:ModifyDBCluster',
  'rds:ModifyDBInstance',
  'rds:DescribeDBEngineVersions',
  'rds:CreateBlueGreenDeployment',
  'rds:SwitchoverBlueGreenDeployment',
  'rds:DeleteBlueGreenDeployment',
  'rds:DeleteDBInstance',
];

function resourcesOf(statements: ReturnType<typeof runnerStatements>, action: string): string {
  const found = statements.filter((s) => s.actions.includes(action));
  expect(found).toHaveLength(1);
  return JSON.stringify(found[0]?.Resource);
}

describe('runner role: disruption grants', () => {
  test('Aurora failover lab: FailoverDBCluster on its cluster and instances, DescribeDBClusters on the cluster, DescribeDBInstances on its instances, DescribeEvents on *', () => {
    // GIVEN / WHEN
    const s = onOwnArns(runnerStatements(loadLab(path.join(LABS_DIR, 'failover-aurora.json'))));
    // THEN FailoverDBCluster names the cluster (Ref) and each of the 2 instances (writer + reader)
    const failover = resourcesOf(s, 'rds:FailoverDBCluster');
    expect(failover).toMatch(/:cluster:",\{"Ref":"DatabaseCluster[0-9A-F]+"\}/);
    expect(failover.match(/"Fn::GetAtt":\["DatabaseCluster\w+","DBInstanceArn"\]/g)).toHaveLength(2);
    expect(resourcesOf(s, 'rds:DescribeDBClusters')).toMatch(/:cluster:",\{"Ref":"DatabaseCluster/);
    // every instance (writer + reader), each by its ARN: the runner waits for all to be `available`
    // before the next repetition (lib/runner/disruptions.ts waitAvailable), naming each one
    const described = resourcesOf(s, 'rds:DescribeDBInstances');
    expect(described.match(/"Fn::GetAtt":\["DatabaseCluster\w+","DBInstanceArn"\]/g)).toHaveLength(2);
    expect(described).not.toMatch(/:db:\*|"\*"/);
    expect(resourcesOf(s, 'rds:DescribeEvents')).toBe('"*"');
    // no reboot (the failover suite's RDS scenarios do not apply to Aurora)
    expect(s.some((x) => x.actions.includes('rds:RebootDBInstance'))).toBe(false);
    // the planned suite's minor upgrade: ModifyDBCluster, no ModifyDBInstance on the lab's own ARNs
    // (an Aurora upgrade is the cluster's) — here the blue-green suite's ModifyDBCluster on every
    // cluster carrying the lab's tag covers the cluster, so no statement of its own is made (the
    // planned-only lab below has it); DescribeDBEngineVersions on * (no resource type)
    expect(s.some((x) => x.actions.includes('rds:ModifyDBCluster'))).toBe(false);
    expect(s.some((x) => x.actions.includes('rds:ModifyDBInstance'))).toBe(false);
    expect(resourcesOf(s, 'rds:DescribeDBEngineVersions')).toBe('"*"');
    // nothing else on *: DescribeEvents and DescribeDBEngineVersions take no resource type
    const wildcard = s.filter((x) => x.Resource === '*').flatMap((x) => x.actions);
    expect(wildcard.filter((a) => a.startsWith('rds:')).sort()).toEqual([
      'rds:DescribeDBEngineVersions',
      'rds:DescribeEvents',
    ]);
  });

  test('RDS Multi-AZ failover lab: RebootDBInstance and DescribeDBInstances on its instance only', () => {
    const s = onOwnArns(runnerStatements(loadLab(path.join(LABS_DIR, 'failover-rds.json'))));
    // (one instance: the Multi-AZ standby is not a DB instance of its own)
    const instance = /^\{"Fn::GetAtt":\["DatabaseInstance[0-9A-F]+","DBInstanceArn"\]\}$/;
    expect(resourcesOf(s, 'rds:RebootDBInstance')).toMatch(instance);
    expect(resourcesOf(s, 'rds:DescribeDBInstances')).toMatch(instance);
    expect(resourcesOf(s, 'rds:DescribeEvents')).toBe('"*"');
    expect(s.some((x) => x.actions.includes('rds:FailoverDBCluster'))).toBe(false);
    expect(s.some((x) => x.actions.includes('rds:DescribeDBClusters'))).toBe(false);
    // the planned suite's minor upgrade: ModifyDBInstance, no ModifyDBCluster — covered here by the
    // blue-green suite's ModifyDBInstance on every instance carrying the lab's tag (test below)
    expect(s.some((x) => x.actions.includes('rds:ModifyDBInstance'))).toBe(false);
    expect(resourcesOf(s, 'rds:DescribeDBEngineVersions')).toBe('"*"');
    expect(s.some((x) => x.actions.includes('rds:ModifyDBCluster'))).toBe(false);
  });

  test('a lab whose version has a newer minor and that runs only the planned suite: the upgrade, the poll and the events, nothing of a failover', () => {
    const s = runnerStatements(
      labFrom({ name: 'planned-only', aurora: { engineVersion: '16.9' }, suites: ['planned'] }),
    );
    expect(resourcesOf(s, 'rds:ModifyDBCluster')).toMatch(/:cluster:/);
    expect(resourcesOf(s, 'rds:DescribeDBClusters')).toMatch(/:cluster:/);
    expect(resourcesOf(s, 'rds:DescribeDBEngineVersions')).toBe('"*"');
    for (const a of ['rds:FailoverDBCluster', 'rds:RebootDBInstance', 'rds:ModifyDBInstance'])
      expect(s.some((x) => x.actions.includes(a))).toBe(false);
  });

  test('Blue/Green (the failover labs hold the blue-green suite): the deployment only with the lab tag, generated names narrowed by it, the old blue read by its -old1 name', () => {
    // GIVEN / WHEN the Aurora lab's runner statements
    const all = runnerStatements(loadLab(path.join(LABS_DIR, 'failover-aurora.json')));
    const tagOf = (x: Statement): string => JSON.stringify(x.Condition ?? null);
    const withAction = (a: string): Statement[] => all.filter((x) => x.actions.includes(a));
    // THEN creating names the lab's cluster and `deployment:*`, only with the lab's tag on the request
    const create = withAction('rds:CreateBlueGreenDeployment');
    expect(create).toHaveLength(1);
    expect(JSON.stringify(create[0]?.Resource)).toMatch(
      /:cluster:",\{"Ref":"DatabaseCluster[0-9A-F]+"\}.*:deployment:\*/,
    );
    expect(tagOf(create[0] as Statement)).toBe(
      '{"StringEquals":{"aws:RequestTag/proxylab:lab":"failover-aurora"}}',
    );
    // switching over and deleting: a deployment that carries the lab's tag
    for (const a of ['rds:SwitchoverBlueGreenDeployment', 'rds:DeleteBlueGreenDeployment'])
      expect(withAction(a).map(tagOf)).toEqual([
        '{"StringEquals":{"aws:ResourceTag/proxylab:lab":"failover-aurora"}}',
      ]);
    // every statement that changes or deletes something on a generated name is narrowed by the tag
    for (const x of all.filter((y) => GENERATED.test(JSON.stringify(y.Resource))))
      if (x.actions.some((a) => /^rds:(Delete|Modify|Promote|Switchover)/.test(a)))
        expect([x.actions, tagOf(x)]).toEqual([
          x.actions,
          expect.stringContaining('aws:ResourceTag/proxylab:lab'),
        ]);
    // the old blue is read by name, without a tag (it may already be gone)
    expect(JSON.stringify(withAction('rds:DescribeDBInstances').map((x) => x.Resource))).toMatch(
      /:db:\*-old1/,
    );
    // the minor upgrade's ModifyDBCluster: on every cluster with the lab's tag (which the lab's has)
    expect(withAction('rds:ModifyDBCluster').map((x) => [JSON.stringify(x.Resource), tagOf(x)])).toEqual([
      [
        expect.stringMatching(/:cluster:\*"\]\]\}/),
        '{"StringEquals":{"aws:ResourceTag/proxylab:lab":"failover-aurora"}}',
      ],
    ]);
    // RDS's own calls on the runner's behalf for Aurora, none of RDS for PostgreSQL's
    expect(withAction('rds:CreateDBCluster')).toHaveLength(1);
    expect(withAction('rds:CreateDBInstanceReadReplica')).toHaveLength(0);
  });

  test.each([
    ['a pgbench suite', { name: 'quiet', aurora: { readers: 1 }, suites: ['quick'] }],
    ['the local disruption suite', { name: 'local-only', aurora: { readers: 1 }, suites: ['disruption'] }],
  ])('a lab that runs %s gets no disruption grant', (_what, raw) => {
    const s = runnerStatements(labFrom(raw));
    for (const action of DISRUPTION_ACTIONS) expect(s.some((x) => x.actions.includes(action))).toBe(false);
  });
});

describe('the Aurora cluster parameter group: logical replication for a Blue/Green switchover', () => {
  test('set in a cluster parameter group of its own when the suites hold blue-green, absent otherwise', () => {
    // GIVEN / WHEN the shipped Aurora failover lab (blue-green in its suites) and one without it
    const withIt = synthLab(loadLab(path.join(LABS_DIR, 'failover-aurora.json'))).template;
    const without = synthLab(
      labFrom({ name: 'planned-only', aurora: { engineVersion: '16.9' }, suites: ['planned'] }),
    ).template;
    // THEN "rds.logical_replication" is 1 in the group the cluster names (Aurora User Guide,
    // "Creating a blue/green deployment": a custom DB cluster parameter group with it turned on)
    const groups = resourcesOfType(withIt, 'AWS::RDS::DBClusterParameterGroup');
    expect(
      groups.map(([, p]) => (p.Parameters as Record<string, string>)['rds.logical_replication']),
    ).toEqual(['1']);
    const [cluster] = resourcesOfType(withIt, 'AWS::RDS::DBCluster');
    expect(cluster?.[1].DBClusterParameterGroupName).toEqual({ Ref: groups[0]?.[0] });
    // and no cluster parameter group of the kit's without the suite (the engine's default, as before)
    expect(resourcesOfType(without, 'AWS::RDS::DBClusterParameterGroup')).toEqual([]);
  });
});
