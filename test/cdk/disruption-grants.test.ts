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
];

function resourcesOf(statements: ReturnType<typeof runnerStatements>, action: string): string {
  const found = statements.filter((s) => s.actions.includes(action));
  expect(found).toHaveLength(1);
  return JSON.stringify(found[0]?.Resource);
}

describe('runner role: disruption grants', () => {
  test('Aurora failover lab: FailoverDBCluster on its cluster and instances, DescribeDBClusters on the cluster, DescribeDBInstances on its instances, DescribeEvents on *', () => {
    // GIVEN / WHEN
    const s = runnerStatements(loadLab(path.join(LABS_DIR, 'failover-aurora.json')));
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
    // the planned suite's minor upgrade: ModifyDBCluster on the cluster only, no ModifyDBInstance
    // (an Aurora upgrade is the cluster's), DescribeDBEngineVersions on * (no resource type)
    expect(resourcesOf(s, 'rds:ModifyDBCluster')).toMatch(
      /^\[?\{"Fn::Join":.*:cluster:",\{"Ref":"DatabaseCluster[0-9A-F]+"\}\]\]\}\]?$/,
    );
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
    const s = runnerStatements(loadLab(path.join(LABS_DIR, 'failover-rds.json')));
    // (one instance: the Multi-AZ standby is not a DB instance of its own)
    const instance = /^\{"Fn::GetAtt":\["DatabaseInstance[0-9A-F]+","DBInstanceArn"\]\}$/;
    expect(resourcesOf(s, 'rds:RebootDBInstance')).toMatch(instance);
    expect(resourcesOf(s, 'rds:DescribeDBInstances')).toMatch(instance);
    expect(resourcesOf(s, 'rds:DescribeEvents')).toBe('"*"');
    expect(s.some((x) => x.actions.includes('rds:FailoverDBCluster'))).toBe(false);
    expect(s.some((x) => x.actions.includes('rds:DescribeDBClusters'))).toBe(false);
    // the planned suite's minor upgrade: ModifyDBInstance on the instance, no ModifyDBCluster
    expect(resourcesOf(s, 'rds:ModifyDBInstance')).toMatch(instance);
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

  test.each([
    ['a pgbench suite', { name: 'quiet', aurora: { readers: 1 }, suites: ['quick'] }],
    ['the local disruption suite', { name: 'local-only', aurora: { readers: 1 }, suites: ['disruption'] }],
  ])('a lab that runs %s gets no disruption grant', (_what, raw) => {
    const s = runnerStatements(labFrom(raw));
    for (const action of DISRUPTION_ACTIONS) expect(s.some((x) => x.actions.includes(action))).toBe(false);
  });
});
