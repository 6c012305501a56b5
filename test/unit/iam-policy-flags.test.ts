/**
 * `proxylab iam-policy` flags name one bucket, one region, one CDK qualifier, one account (issue 38):
 * each lands in an ARN, where `*` and `?` are wildcards, so every flag is checked against AWS's own
 * naming rules (lib/config/aws-names.ts: the S3 bucket naming rules, aws-cdk's bootstrap `Qualifier`
 * pattern, the lab schema's region pattern) and a bad one is a usage error (exit 2) naming the flag,
 * what is allowed and the value, before any policy is printed.
 */
import { join } from 'node:path';
import { loadLabFile } from '../../lib/config/load';
import { cdkQualifierProblem, s3BucketNameProblem } from '../../lib/config/aws-names';
import { exitCodeFor } from '../../lib/core/errors';
import { operatorPolicy } from '../../lib/operator/iam-policy';
import { REPO_ROOT, runCliInProcess } from '../helpers/cli';
import { caught } from '../helpers/caught';

describe('S3 bucket names (S3 User Guide, "General purpose bucket naming rules")', () => {
  test.each([
    'abc',
    'proxylab-default-resultsbucket-1a2b3c4d5e6f',
    'my.results.bucket',
    'a'.repeat(63),
    '1bucket9',
  ])('%s is a bucket name', (name) => {
    expect(s3BucketNameProblem(name)).toBeNull();
  });

  test.each([
    ['*', 'a wildcard'],
    ['proxylab-*', 'a wildcard at the end'],
    ['a?b', 'a single-character wildcard'],
    ['', 'empty'],
    ['ab', 'too short'],
    ['a'.repeat(64), 'too long'],
    ['My-Bucket', 'upper case'],
    ['-bucket', 'a hyphen first'],
    ['bucket.', 'a dot last'],
    ['my..bucket', 'two adjacent dots'],
    ['my_bucket', 'an underscore'],
    ['192.168.5.4', 'an IP address'],
    ['xn--bucket', 'the xn-- prefix'],
    ['sthree-bucket', 'the sthree- prefix'],
    ['bucket-s3alias', 'the -s3alias suffix'],
    ['bucket--ol-s3', 'the --ol-s3 suffix'],
    ['bucket.mrap', 'the .mrap suffix'],
    ['arn:aws:s3:::x', 'an ARN'],
  ])('%j is refused (%s)', (name) => {
    expect(s3BucketNameProblem(name)).toMatch(/^must be an S3 bucket name: 3–63 lowercase letters/);
  });
});

describe('CDK bootstrap qualifiers (aws-cdk bootstrap template, AllowedPattern [A-Za-z0-9_-]{1,10})', () => {
  test.each(['hnb659fds', 'A_b-9', 'x'])('%s is a qualifier', (q) => {
    expect(cdkQualifierProblem(q)).toBeNull();
  });
  test.each(['*', 'hnb*', '', 'abcdefghijk', 'a.b', 'a?'])('%j is refused', (q) => {
    expect(cdkQualifierProblem(q)).toMatch(/^must be a CDK bootstrap qualifier: 1–10 letters/);
  });
});

describe('proxylab iam-policy refuses a flag that is not a name, before printing anything', () => {
  test.each<[string[], RegExp]>([
    [['--bucket', '*'], /^error: --bucket must be an S3 bucket name: .*; got "\*"$/m],
    [['--bucket', ''], /^error: --bucket must be an S3 bucket name: .*; got ""$/m],
    [['--bucket', 'a?b'], /^error: --bucket must be an S3 bucket name: .*; got "a\?b"$/m],
    [['--cdk-qualifier', '*'], /^error: --cdk-qualifier must be a CDK bootstrap qualifier: .*; got "\*"$/m],
    [
      ['--region', 'us-east-1*'],
      /^error: --region must be an AWS region such as us-east-1 .*; got "us-east-1\*"$/m,
    ],
    [['--region', 'US-EAST-1'], /^error: --region must be an AWS region .*; got "US-EAST-1"$/m],
    [['--region', '*'], /^error: --region must be an AWS region .*; got "\*"$/m],
    [['--account', '*'], /^error: --account must be a 12-digit AWS account id, got "\*"$/m],
  ])('%j: exit 2, the flag, what is allowed and the value', async (flags, message) => {
    // WHEN
    const r = await runCliInProcess([
      'iam-policy',
      '--lab',
      'labs/default.json',
      '--role',
      'deploy',
      ...flags,
    ]);
    // THEN
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.out).toBe('');
  });

  test('every bad flag at once', async () => {
    const r = await runCliInProcess([
      'iam-policy',
      '--lab',
      'labs/default.json',
      '--bucket',
      '*',
      '--cdk-qualifier',
      '*',
      '--region',
      'us-east-1*',
    ]);
    expect(r.code).toBe(2);
    expect(r.err.match(/^(error: )?--[a-z-]+ must/gm)).toEqual([
      'error: --region must',
      '--bucket must',
      '--cdk-qualifier must',
    ]);
  });

  test('named values pin the policy to them, as before', async () => {
    const r = await runCliInProcess([
      'iam-policy',
      '--lab',
      'labs/default.json',
      '--role',
      'deploy',
      '--account',
      '111122223333',
      '--region',
      'eu-west-1',
      '--bucket',
      'proxylab-default-resultsbucket-abc123',
      '--cdk-qualifier',
      'team1',
    ]);
    expect(r.code).toBe(0);
    const text = r.out;
    expect(text).toContain('"arn:aws:s3:::proxylab-default-resultsbucket-abc123"');
    expect(text).toContain('"arn:aws:iam::111122223333:role/cdk-team1-*"');
    expect(text).not.toMatch(/arn:aws:s3:::\*/);
  });

  test('the library refuses them too (operatorPolicy is what gen-docs and the tests call)', () => {
    const lab = loadLabFile(join(REPO_ROOT, 'labs', 'default.json'));
    const err = caught(() => operatorPolicy(lab, { role: 'read', bucket: '*' }));
    expect(exitCodeFor(err)).toBe(2);
    expect((err as Error).message).toMatch(/^--bucket must be an S3 bucket name/);
  });
});
