/**
 * doctor's check of the CDK staging bucket's key (lib/operator/staging-key.ts): whether the lab's
 * runner and pooler host roles — roles of the account, named at deploy time, with no KMS permission
 * of their own — can decrypt the runner bundle through S3. The AWS reads go through a fake
 * StagingKeyReader: what a bucket and key answer is data here, the judgement is the code under test.
 */
import { expect } from '@jest/globals';
import {
  hostDecryptStatement,
  judgeKeyPolicy,
  stagingBucketName,
  stagingKeyChecks,
  stagingKeyChecksOfStack,
  type StagingKeyReader,
} from '../../lib/operator/staging-key';

const ACCOUNT = '123456789012';
const REGION = 'eu-west-1';
const SCOPE = { account: ACCOUNT, region: REGION };
const BUCKET = `cdk-hnb659fds-assets-${ACCOUNT}-${REGION}`;
const KEY = `arn:aws:kms:${REGION}:${ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab`;

/** The key policy `cdk bootstrap --bootstrap-customer-key` creates (aws-cdk bootstrap-template.yaml, substituted). */
const CDK_CREATED_KEY_POLICY = {
  Version: '2012-10-17',
  Statement: [
    {
      Action: ['kms:Create*', 'kms:Describe*', 'kms:Get*', 'kms:GenerateDataKey'],
      Effect: 'Allow',
      Principal: { AWS: ACCOUNT },
      Resource: '*',
    },
    {
      Action: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:ReEncrypt*', 'kms:GenerateDataKey*'],
      Effect: 'Allow',
      Principal: { AWS: '*' },
      Resource: '*',
      Condition: {
        StringEquals: { 'kms:CallerAccount': ACCOUNT, 'kms:ViaService': `s3.${REGION}.amazonaws.com` },
      },
    },
  ],
};

/** KMS's default key policy (CreateKey without a policy): the account root, i.e. IAM policies decide. */
const DEFAULT_KEY_POLICY = {
  Version: '2012-10-17',
  Statement: [
    {
      Sid: 'Enable IAM User Permissions',
      Effect: 'Allow',
      Principal: { AWS: `arn:aws:iam::${ACCOUNT}:root` },
      Action: 'kms:*',
      Resource: '*',
    },
  ],
};

const withStatements = (...extra: object[]) => ({
  ...DEFAULT_KEY_POLICY,
  Statement: [...DEFAULT_KEY_POLICY.Statement, ...extra],
});

/** A reader answering with `answers`; records what was asked. */
function reader(answers: {
  encryption?: { algorithm: string; kmsKeyId: string | null } | Error;
  key?: { manager: 'AWS' | 'CUSTOMER'; state?: string } | Error;
  policy?: object;
}): StagingKeyReader & { asked: string[] } {
  const asked: string[] = [];
  const answer = <T>(a: T | Error | undefined, what: string): Promise<T> => {
    asked.push(what);
    if (a === undefined) return Promise.reject(new Error(`unexpected read: ${what}`));
    return a instanceof Error ? Promise.reject(a) : Promise.resolve(a);
  };
  return {
    asked,
    bucketEncryption: (bucket) => answer(answers.encryption, `encryption ${bucket}`),
    describeKey: (keyId) =>
      answer(
        answers.key === undefined || answers.key instanceof Error
          ? answers.key
          : { arn: KEY, manager: answers.key.manager, state: answers.key.state ?? 'Enabled' },
        `key ${keyId}`,
      ),
    keyPolicy: (arn) =>
      answer(answers.policy === undefined ? undefined : JSON.stringify(answers.policy), `policy ${arn}`),
  };
}

const named = (name: string, message: string): Error => Object.assign(new Error(message), { name });

test('the staging bucket is the default synthesizer’s: cdk-<qualifier>-assets-<account>-<region>', () => {
  expect(stagingBucketName(SCOPE)).toBe(BUCKET);
  expect(stagingBucketName({ ...SCOPE, qualifier: 'team1' })).toBe(`cdk-team1-assets-${ACCOUNT}-${REGION}`);
});

test.each([
  ['SSE-S3', { encryption: { algorithm: 'AES256', kmsKeyId: null } }, /AES256, no KMS key to grant/],
  [
    'the CDK default: aws:kms with the AWS managed key (no key id)',
    { encryption: { algorithm: 'aws:kms', kmsKeyId: null } },
    /the AWS managed key aws\/s3/,
  ],
  [
    'a key id that DescribeKey says AWS manages',
    { encryption: { algorithm: 'aws:kms', kmsKeyId: KEY }, key: { manager: 'AWS' as const } },
    /the AWS managed key arn:aws:kms:/,
  ],
  [
    'the key `--bootstrap-customer-key` creates',
    {
      encryption: { algorithm: 'aws:kms', kmsKeyId: KEY },
      key: { manager: 'CUSTOMER' as const },
      policy: CDK_CREATED_KEY_POLICY,
    },
    /customer managed key .*: statement #2 allows kms:Decrypt through S3 to the account's roles/,
  ],
])('✓ %s', async (_what, answers, detail) => {
  // GIVEN / WHEN
  const checks = await stagingKeyChecks(reader(answers), SCOPE);
  // THEN
  expect(checks).toEqual([
    {
      title: 'CDK staging bucket: the hosts can decrypt the assets',
      ok: true,
      detail: expect.stringMatching(detail),
      fix: null,
    },
  ]);
});

test.each([
  [
    "KMS's default policy: only IAM policies could grant it, and the host roles have none",
    DEFAULT_KEY_POLICY,
    /no statement allows kms:Decrypt to the account's roles through S3/,
    /add to the key policy \{"Sid":"ProxylabHostsReadCdkAssets"/,
  ],
  [
    'an explicit deny through S3',
    withStatements(...CDK_CREATED_KEY_POLICY.Statement.slice(1), {
      Sid: 'NoS3',
      Effect: 'Deny',
      Principal: '*',
      Action: 'kms:Decrypt',
      Resource: '*',
    }),
    /statement "NoS3" denies kms:Decrypt/,
    /add to the key policy/,
  ],
  [
    "an allow through S3 in another region's S3",
    withStatements({
      ...CDK_CREATED_KEY_POLICY.Statement[1],
      Condition: { StringEquals: { 'kms:ViaService': 's3.us-east-1.amazonaws.com' } },
    }),
    /no statement allows/,
    /add to the key policy/,
  ],
  [
    'an allow for named roles only: doctor cannot tell whether they are the lab’s',
    withStatements({
      Sid: 'Readers',
      Effect: 'Allow',
      Principal: { AWS: `arn:aws:iam::${ACCOUNT}:role/proxylab-default-RunnersRole1-ABC` },
      Action: 'kms:Decrypt',
      Resource: '*',
    }),
    /cannot tell: statement "Readers" names principals/,
    /check that the key policy lets the lab's runner and pooler host roles use kms:Decrypt/,
  ],
  [
    'an allow under a condition doctor cannot evaluate',
    withStatements({
      ...CDK_CREATED_KEY_POLICY.Statement[1],
      Sid: 'Org',
      Condition: { StringEquals: { 'aws:PrincipalOrgID': 'o-abc' } },
    }),
    /cannot tell: statement "Org" has conditions doctor cannot evaluate \(StringEquals aws:PrincipalOrgID\)/,
    /check that the key policy/,
  ],
])('✗ a customer key, %s', async (_what, policy, detail, fix) => {
  // GIVEN a bucket encrypted with a customer managed key (`cdk bootstrap --bootstrap-kms-key-id`)
  const r = reader({
    encryption: { algorithm: 'aws:kms', kmsKeyId: KEY },
    key: { manager: 'CUSTOMER' },
    policy,
  });
  // WHEN
  const [check] = await stagingKeyChecks(r, SCOPE);
  // THEN
  expect(check).toMatchObject({
    ok: false,
    detail: expect.stringMatching(detail),
    fix: expect.stringMatching(fix),
  });
  expect(r.asked).toEqual([`encryption ${BUCKET}`, `key ${KEY}`, `policy ${KEY}`]);
});

test.each([
  [
    'no staging bucket (not bootstrapped, or another qualifier)',
    { encryption: named('NoSuchBucket', 'The specified bucket does not exist') },
    /npx cdk bootstrap aws:\/\/123456789012\/eu-west-1/,
  ],
  [
    'the CLI may not read the bucket encryption',
    { encryption: named('AccessDenied', 'Access Denied') },
    /the CLI needs s3:GetEncryptionConfiguration on arn:aws:s3:::cdk-hnb659fds-assets-123456789012-eu-west-1/,
  ],
  [
    'the CLI may not read the key',
    {
      encryption: { algorithm: 'aws:kms', kmsKeyId: KEY },
      key: named('AccessDeniedException', 'not authorized'),
    },
    /the CLI needs kms:DescribeKey and kms:GetKeyPolicy on arn:aws:kms:/,
  ],
  [
    'a disabled key',
    {
      encryption: { algorithm: 'aws:kms', kmsKeyId: KEY },
      key: { manager: 'CUSTOMER' as const, state: 'Disabled' },
    },
    /aws kms enable-key/,
  ],
])('✗ %s: the fix says what to do', async (_what, answers, fix) => {
  const [check] = await stagingKeyChecks(reader(answers), SCOPE);
  expect(check).toMatchObject({ ok: false, fix: expect.stringMatching(fix) });
});

test('the suggested statement is what CDK’s own bootstrap key allows, and the judge accepts it', () => {
  // GIVEN KMS's default policy plus the statement the fix suggests
  const policy = withStatements(hostDecryptStatement(SCOPE));
  // WHEN / THEN
  expect(judgeKeyPolicy(JSON.stringify(policy), SCOPE)).toEqual({
    kind: 'allowed',
    why: `statement "ProxylabHostsReadCdkAssets" allows kms:Decrypt through S3 to the account's roles`,
  });
  // AND another account's root or roles never count for the lab's
  const other = withStatements({
    Effect: 'Allow',
    Principal: { AWS: 'arn:aws:iam::210987654321:role/x' },
    Action: 'kms:*',
    Resource: '*',
  });
  expect(judgeKeyPolicy(JSON.stringify(other), SCOPE).kind).toBe('denied');
});

test('the account comes from the stack id; without one the check says why it cannot be made', async () => {
  // GIVEN
  const r = reader({ encryption: { algorithm: 'AES256', kmsKeyId: null } });
  // WHEN
  const fromStack = await stagingKeyChecksOfStack(
    r,
    `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/proxylab-default/0d1e2f`,
    REGION,
  );
  const unknown = await stagingKeyChecksOfStack(r, null, REGION);
  // THEN
  expect(fromStack[0]?.ok).toBe(true);
  expect(r.asked).toEqual([`encryption ${BUCKET}`]);
  expect(unknown[0]).toMatchObject({ ok: false, detail: expect.stringMatching(/account is unknown/) });
});
