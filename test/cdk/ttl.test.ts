/**
 * Expiry construct and lifecycle tags, on a bare stack (the full lab stack is covered in
 * ttl-lab-stack.test.ts). cfn-lint must be installed (CI installs it; no skipping).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliCredentialsStackSynthesizer, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { NOW_CONTEXT_KEY, applyLabLifecycle } from '../../lib/constructs/ttl';
import { testApp } from '../helpers/cdk-app';

const NOW = new Date('2026-11-21T10:00:30Z');

function synth(
  lab: { name: string; owner?: string | null; ttlHours?: number | null },
  opts: { context?: Record<string, string>; cliSynth?: boolean } = {},
) {
  const app = testApp({ context: opts.context });
  const stack = new Stack(
    app,
    `proxylab-${lab.name}`,
    opts.cliSynth ? { synthesizer: new CliCredentialsStackSynthesizer() } : {},
  );
  // A taggable resource besides the expiry's own.
  new s3.Bucket(stack, 'Bucket', { enforceSSL: true, serverAccessLogsPrefix: 'logs/' });
  applyLabLifecycle(stack, lab, opts.context ? undefined : NOW);
  return { app, stack, template: Template.fromStack(stack) };
}

describe('expiry schedule', () => {
  test('ttlHours set: a one-time UTC schedule at now + ttlHours calls DeleteStack on this stack', () => {
    // GIVEN / WHEN
    const { template } = synth({ name: 'default', ttlHours: 8 });
    // THEN
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      Name: 'proxylab-default-expiry',
      ScheduleExpression: 'at(2026-11-21T18:01:00)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: {
        Arn: {
          'Fn::Join': [
            '',
            ['arn:', { Ref: 'AWS::Partition' }, ':scheduler:::aws-sdk:cloudformation:deleteStack'],
          ],
        },
        Input: { 'Fn::Join': ['', Match.arrayWith(['{"StackName":"', { Ref: 'AWS::StackId' }])] },
        RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86400 },
      },
    });
    template.hasOutput('ExpiresAt', { Value: '2026-11-21T18:01:00Z' });
    template.hasOutput('ExpiryScheduleName', { Value: 'proxylab-default-expiry' });
  });

  test('ttlHours null: no schedule, no deletion role, expires-at "never"', () => {
    const { template } = synth({ name: 'keep', ttlHours: null });
    expect(template.findResources('AWS::Scheduler::Schedule')).toEqual({});
    expect(template.findResources('AWS::IAM::Role')).toEqual({});
    expect(template.findOutputs('ExpiresAt')).toEqual({});
    template.hasResourceProperties('AWS::S3::Bucket', {
      Tags: Match.arrayWith([{ Key: 'proxylab:expires-at', Value: 'never' }]),
    });
  });

  test('the role may delete exactly this stack (its id) and pass only the CDK execution role, only to CloudFormation', () => {
    // GIVEN / WHEN
    const { template } = synth({ name: 'default', ttlHours: 2 });
    // THEN the trust: Scheduler, from this account only
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          {
            Action: 'sts:AssumeRole',
            Effect: 'Allow',
            Principal: { Service: 'scheduler.amazonaws.com' },
            Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
          },
        ],
      },
    });
    // AND the permissions: exactly three statements (the third: deliver a failed call to its
    // own dead-letter queue), none with a wildcard
    const policies = Object.values(template.findResources('AWS::IAM::Policy'));
    expect(policies).toHaveLength(1);
    const statements = (policies[0] as { Properties: { PolicyDocument: { Statement: unknown[] } } })
      .Properties.PolicyDocument.Statement;
    expect(statements).toEqual([
      {
        Sid: 'DeleteThisStackOnly',
        Effect: 'Allow',
        Action: 'cloudformation:DeleteStack',
        Resource: { Ref: 'AWS::StackId' },
      },
      {
        Sid: 'PassExecutionRoleToCloudFormation',
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: {
          'Fn::Sub':
            'arn:${AWS::Partition}:iam::${AWS::AccountId}:role/cdk-hnb659fds-cfn-exec-role-${AWS::AccountId}-${AWS::Region}',
        },
        Condition: { StringEquals: { 'iam:PassedToService': 'cloudformation.amazonaws.com' } },
      },
      {
        Sid: 'DeadLetterFailedExpiry',
        Effect: 'Allow',
        Action: 'sqs:SendMessage',
        Resource: { 'Fn::GetAtt': [expect.stringMatching(/^ExpiryDeadLetterQueue/), 'Arn'] },
      },
    ]);
    expect(JSON.stringify(statements)).not.toContain('*');
    // AND DeleteStack runs as that execution role (RoleARN in the input)
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      Target: {
        Input: {
          'Fn::Join': [
            '',
            Match.arrayWith(['","RoleARN":"', { 'Fn::Sub': Match.stringLikeRegexp('cfn-exec-role') }]),
          ],
        },
      },
    });
  });

  test('the "now" context pins the expiry for reproducible templates', () => {
    const { template } = synth(
      { name: 'default', ttlHours: 1 },
      { context: { [NOW_CONTEXT_KEY]: '2030-01-01T00:00:00Z' } },
    );
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'at(2030-01-01T01:00:00)',
    });
  });

  test('a bad "now" context is an error naming the key', () => {
    expect(() =>
      synth({ name: 'default', ttlHours: 1 }, { context: { [NOW_CONTEXT_KEY]: 'tomorrow' } }),
    ).toThrow(/proxylab:now must be an ISO-8601 time, got "tomorrow"/);
  });

  test('without an execution role (CLI-credentials synthesizer) the stack warns and passes no role', () => {
    const { stack, template } = synth({ name: 'default', ttlHours: 1 }, { cliSynth: true });
    Annotations.fromStack(stack).hasWarning(
      '*',
      Match.stringLikeRegexp('no CloudFormation execution role.*proxylab destroy'),
    );
    expect(JSON.stringify(template.findResources('AWS::IAM::Policy'))).not.toContain('iam:PassRole');
  });
});

describe('lifecycle tags', () => {
  test.each([
    [{ name: 'default', owner: 'team-db', ttlHours: 8 }, 'team-db', '2026-11-21T18:01:00Z'],
    [{ name: 'e1', owner: null, ttlHours: null }, 'unspecified', 'never'],
  ])('%o → owner %s, expires-at %s on every taggable resource', (lab, owner, expires) => {
    const { template } = synth(lab);
    const expected = [
      { Key: 'proxylab:expires-at', Value: expires },
      { Key: 'proxylab:lab', Value: lab.name },
      { Key: 'proxylab:owner', Value: owner },
    ];
    template.hasResourceProperties('AWS::S3::Bucket', { Tags: Match.arrayWith(expected) });
    if (lab.ttlHours !== null)
      template.hasResourceProperties('AWS::IAM::Role', { Tags: Match.arrayWith(expected) });
  });
});

describe('checks', () => {
  test('cdk-nag AwsSolutions: no findings on the expiry resources', () => {
    const { app } = synth({ name: 'default', ttlHours: 8 });
    const violations = new AwsSolutionsChecks().validateScope(app) as unknown as {
      success: boolean;
      violations: Array<{ ruleId: string; resourcePath?: string }>;
    };
    const onExpiry = violations.violations.filter((v) => (v.resourcePath ?? '').includes('/Expiry/'));
    expect(onExpiry).toEqual([]);
  });

  test('cfn-lint: no errors or warnings on the expiry template', () => {
    // GIVEN a template with only the expiry resources
    const app = testApp();
    const stack = new Stack(app, 'proxylab-lint');
    applyLabLifecycle(stack, { name: 'lint', ttlHours: 8 }, NOW);
    const dir = mkdtempSync(join(tmpdir(), 'ttl-lint-'));
    try {
      const file = join(dir, 'template.json');
      writeFileSync(file, JSON.stringify(Template.fromStack(stack).toJSON()));
      // WHEN / THEN (execFileSync throws on a non-zero exit, with the findings in the message)
      const out = execFileSync('cfn-lint', ['--format', 'parseable', '--', file], { encoding: 'utf8' });
      expect(out.trim()).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
