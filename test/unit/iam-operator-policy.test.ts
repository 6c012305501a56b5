/**
 * The operator's policy from code (`proxylab iam-policy`, lib/operator/iam-policy.ts), which
 * docs/aws.md publishes (test/unit/generated-docs.test.ts keeps the block in step): `proxylab run`'s
 * first write is allowed by it and was denied by the policy the docs published before (issue 20,
 * defect 2); the roles nest; the command checks its flags.
 */
import { operatorPolicy, OPERATOR_ROLES } from '../../lib/operator/iam-policy';
import { loadLabFile } from '../../lib/config/load';
import { iamProblems } from '../helpers/aws-calls/iam';
import type { NamedPolicy } from '../helpers/aws-calls/lab-policies';
import { operator } from '../helpers/aws-calls/principals';
import { REPO_ROOT, runCliInProcess } from '../helpers/cli';
import { join } from 'node:path';

/** The run / status / fetch policy docs/aws.md published before issue 20 (account and region filled in). */
const PUBLISHED_BEFORE: NamedPolicy = {
  name: 'docs-aws-md-before-issue-20',
  document: {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: 'cloudformation:DescribeStacks',
        Resource: 'arn:aws:cloudformation:us-east-1:123456789012:stack/proxylab-default/*',
      },
      {
        Effect: 'Allow',
        Action: 'ssm:SendCommand',
        Resource: [
          'arn:aws:ssm:us-east-1::document/AWS-RunShellScript',
          'arn:aws:ec2:us-east-1:123456789012:instance/*',
        ],
        Condition: { StringEquals: { 'aws:ResourceTag/proxylab:lab': 'default' } },
      },
      { Effect: 'Allow', Action: 'ssm:GetCommandInvocation', Resource: '*' },
      {
        Effect: 'Allow',
        Action: 'scheduler:GetSchedule',
        Resource: 'arn:aws:scheduler:us-east-1:123456789012:schedule/default/proxylab-default-expiry',
      },
      {
        Effect: 'Allow',
        Action: 's3:ListBucket',
        Resource: 'arn:aws:s3:::proxylab-default-resultsbucket260a22ad',
        Condition: { StringLike: { 's3:prefix': 'runs/*' } },
      },
      {
        Effect: 'Allow',
        Action: 's3:GetObject',
        Resource: 'arn:aws:s3:::proxylab-default-resultsbucket260a22ad/runs/*',
      },
    ],
  },
};

/** What `proxylab run` sends first: the run request (lib/aws/run-request.ts writeRunRequest). */
const WRITE_REQUEST = {
  service: 'S3',
  operation: 'PutObject',
  input: { Bucket: 'results-bucket', Key: 'runs/r-20261125-0100/request.json' },
};

describe('proxylab run writes runs/<id>/request.json first (issue 20, defect 2)', () => {
  test('the policy docs/aws.md published before denies it: AccessDenied before the first SendCommand', async () => {
    const problems = await iamProblems(WRITE_REQUEST, operator('run'), [PUBLISHED_BEFORE]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /may not s3:PutObject on arn:aws:s3:::proxylab-default-123456789012-us-east-1\/runs\/r-20261125-0100\/request\.json — call S3 PutObject .*ImplicitlyDenied\. Missing statement: \{"Effect":"Allow","Action":"s3:PutObject"/,
    );
  });

  test('the policy proxylab iam-policy prints (and the docs publish now) allows it', async () => {
    expect(await iamProblems(WRITE_REQUEST, operator('run'))).toEqual([]);
  });

  test('the read role (status, fetch) may not write', async () => {
    const problems = await iamProblems(WRITE_REQUEST, operator('read'));
    expect(problems.join('\n')).toMatch(/operator \(read policy.* may not s3:PutObject/);
  });
});

describe('the operator roles', () => {
  const lab = loadLabFile(join(REPO_ROOT, 'labs', 'default.json'));
  const sids = (role: (typeof OPERATOR_ROLES)[number]): string[] =>
    operatorPolicy(lab, { role }).Statement.map((s) => s.Sid);

  test('nest: read ⊂ run ⊂ deploy, each adding statements', () => {
    expect(sids('run')).toEqual(expect.arrayContaining(sids('read')));
    expect(sids('deploy')).toEqual(expect.arrayContaining(sids('run')));
    expect(sids('read').length).toBeLessThan(sids('run').length);
    expect(sids('run').length).toBeLessThan(sids('deploy').length);
  });

  // The name the stack gives the bucket (lib/config/lab-resource-names.ts): any 12-character account
  // (`?` is one character) and any region unless pinned.
  test.each([
    [{}, 'arn:aws:s3:::proxylab-default-????????????-*/runs/*'],
    [{ account: '111122223333' }, 'arn:aws:s3:::proxylab-default-111122223333-*/runs/*'],
    [
      { account: '111122223333', region: 'eu-west-1' },
      'arn:aws:s3:::proxylab-default-111122223333-eu-west-1/runs/*',
    ],
    [{ bucket: 'my-results' }, 'arn:aws:s3:::my-results/runs/*'],
  ])('the results bucket: %j → %s', (opts, arn) => {
    const read = operatorPolicy(lab, { role: 'read', ...opts }).Statement.find((s) => s.Sid === 'ReadRuns');
    expect(read?.Resource).toBe(arn);
  });

  test.each([
    [{}, 'arn:aws:iam::*:role/proxylab-default/expiry/*'],
    [{ account: '111122223333' }, 'arn:aws:iam::111122223333:role/proxylab-default/expiry/*'],
  ])("the expiry role extend passes back to Scheduler, by the stack's path for it: %j → %s", (opts, arn) => {
    const pass = operatorPolicy(lab, { role: 'run', ...opts }).Statement.find(
      (s) => s.Sid === 'PassExpiryRole',
    );
    expect(pass?.Resource).toBe(arn);
  });

  test('Spot request reads only for a spot lab; Performance Insights only when the lab has it', () => {
    const pocket = loadLabFile(join(REPO_ROOT, 'labs', 'pocket.json'));
    expect(sids('run')).not.toContain('ReadSpotRequests');
    expect(operatorPolicy(pocket, { role: 'run' }).Statement.map((s) => s.Sid)).toContain('ReadSpotRequests');
    const noPi = { ...lab, database: { ...lab.database, performanceInsights: false } } as typeof lab;
    expect(operatorPolicy(noPi, { role: 'run' }).Statement.map((s) => s.Sid)).not.toContain(
      'ReadPerformanceInsights',
    );
  });
});

describe('proxylab iam-policy', () => {
  test('prints the policy as JSON, pinned to --account and --region', async () => {
    const r = await runCliInProcess([
      'iam-policy',
      '--lab',
      'labs/default.json',
      '--role',
      'read',
      '--account',
      '111122223333',
      '--region',
      'eu-west-1',
    ]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as { Statement: Array<{ Sid: string; Resource: string }> };
    expect(doc.Statement.map((s) => s.Sid)).toEqual([
      'ReadStackOutputs',
      'ListRuns',
      'ReadRuns',
      'ReadPrices',
    ]);
    expect(doc.Statement[0]?.Resource).toBe(
      'arn:aws:cloudformation:eu-west-1:111122223333:stack/proxylab-default/*',
    );
  });

  test.each([
    [['--role', 'admin'], /--role: "admin" is not a role; use one of read, run, deploy/],
    [['--account', '1234'], /--account must be a 12-digit AWS account id, got "1234"/],
  ])('%j is a usage error (2) naming the value and what is allowed', async (flags, message) => {
    const r = await runCliInProcess(['iam-policy', '--lab', 'labs/default.json', ...flags]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });
});
