/**
 * What the lab stack grants the runner software (lib/constructs/runner-asset.ts): read back under
 * runs/, resize exactly this lab's proxies, read exactly the runner bundle object — and nothing
 * cdk-nag objects to.
 */
import type { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { validateLab } from '../../lib/config';
import type { LabConfig } from '../../lib/config/types';
import { createLabStack } from '../../lib/lab-stack';
import { testApp } from '../helpers/cdk-app';

function lab(proxies: unknown[]): LabConfig {
  const r = validateLab({
    name: 'grants',
    aurora: { engineVersion: '16.9', instanceClass: 'db.t4g.medium' },
    proxies,
    runners: { instanceType: 'c7g.large', count: 1 },
  });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.lab;
}

function synth(l: LabConfig): { app: App; stack: Stack; template: Template } {
  const app = testApp();
  const stack = createLabStack(app, l);
  return { app, stack, template: Template.fromStack(stack) };
}

/** Statements of the runner role's policies. */
function runnerStatements(
  template: Template,
): Array<{ Action: string | string[]; Resource: unknown; Condition?: unknown }> {
  const policies = template.findResources('AWS::IAM::Policy') as Record<
    string,
    { Properties: { PolicyDocument: { Statement: Array<{ Action: string | string[]; Resource: unknown }> } } }
  >;
  return Object.entries(policies)
    .filter(([id]) => id.startsWith('RunnersRole'))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
}

const actionsOf = (s: { Action: string | string[] }): string[] =>
  Array.isArray(s.Action) ? s.Action : [s.Action];

describe('runner role grants for the runner software', () => {
  const two = synth(
    lab([
      { name: 'pool25', maxConnectionsPercent: 25 },
      { name: 'pool100', maxConnectionsPercent: 100 },
    ]),
  );

  test('pool sweeps: DescribeDBProxyTargetGroups on exactly the lab proxies, Modify on exactly their target groups', () => {
    // Each action on the resource type it takes (Service Authorization Reference, Amazon RDS:
    // DescribeDBProxyTargetGroups → db-proxy, ModifyDBProxyTargetGroup → target-group).
    const rds = runnerStatements(two.template).filter((s) => actionsOf(s).some((a) => a.startsWith('rds:')));
    expect(rds.map((s) => actionsOf(s))).toEqual([
      ['rds:DescribeDBProxyTargetGroups'],
      ['rds:ModifyDBProxyTargetGroup'],
    ]);
    const [describe, modify] = rds.map((s) => JSON.stringify(s.Resource));
    for (const r of [describe, modify]) expect(r).not.toContain('*');
    for (const p of ['pool25', 'pool100']) {
      expect(describe).toMatch(new RegExp(`"Proxies${p}Proxy[0-9A-F]{8}","DBProxyArn"`));
      expect(modify).toMatch(new RegExp(`"Proxies${p}ProxyProxyTargetGroup[0-9A-F]{8}","TargetGroupArn"`));
    }
    expect(describe).not.toContain('TargetGroupArn');
    expect(modify).not.toContain('DBProxyArn');
  });

  test('resume and the fleet barrier: GetObject under runs/, ListBucket only for the runs/ prefix', () => {
    // (statements may or may not be merged, depending on @aws-cdk/aws-iam:minimizePolicies)
    const statements = runnerStatements(two.template);
    const runsObjects =
      /^\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["ResultsBucket[0-9A-F]{8}","Arn"\]\},"\/runs\/\*"\]\]\}$/;
    expect(
      statements.some(
        (s) => actionsOf(s).includes('s3:GetObject') && runsObjects.test(JSON.stringify(s.Resource)),
      ),
    ).toBe(true);
    const list = statements.filter((s) => actionsOf(s).includes('s3:ListBucket'));
    expect(list).toEqual([
      {
        Action: 's3:ListBucket',
        Effect: 'Allow',
        Condition: { StringLike: { 's3:prefix': ['runs/*'] } },
        Resource: { 'Fn::GetAtt': [expect.stringMatching(/^ResultsBucket/), 'Arn'] },
      },
    ]);
  });

  test('the bundle: GetObject on that one asset object, no wildcard action anywhere', () => {
    const statements = runnerStatements(two.template);
    const asset = statements.filter((s) => JSON.stringify(s.Resource).includes('cdk-hnb659fds-assets-'));
    expect(asset).toHaveLength(1);
    expect(asset[0]?.Action).toBe('s3:GetObject');
    // the bundle directory (runner.js + pooler.js) is a zip asset
    expect(JSON.stringify(asset[0]?.Resource)).toMatch(/"\/[0-9a-f]{64}\.zip"/);
    for (const s of statements) for (const a of actionsOf(s)) expect(a).not.toContain('*');
  });

  test('a lab without proxies gets no RDS permission', () => {
    const none = synth(lab([]));
    expect(runnerStatements(none.template).some((s) => actionsOf(s).some((a) => a.startsWith('rds:')))).toBe(
      false,
    );
  });

  test('cdk-nag AwsSolutions: no finding on the runner fleet', () => {
    const report = new AwsSolutionsChecks().validateScope(two.app);
    const findings = report.violations
      .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`))
      .filter((f) => f.includes('/Runners/'));
    expect(findings).toEqual([]);
    expect(
      two.stack.node.findAll().some((c) => c instanceof iam.Role && c.node.path.endsWith('/Runners/Role')),
    ).toBe(true);
  });
});
