/**
 * The operator's least-privilege IAM policy for one lab, per way of using the kit
 * (`proxylab iam-policy --lab FILE [--role read|run|deploy]`; docs/aws.md is generated from it):
 *
 *   read    status, fetch                        DescribeStacks; list and read runs/
 *   run     read + run, doctor, collect, extend  + write runs/, SSM Run Command on the lab's runners,
 *                                                  read and move the expiry schedule, invoke the
 *                                                  collector, DB instance states, CloudWatch /
 *                                                  Performance Insights reads
 *   deploy  run + deploy, destroy                + assume the CDK bootstrap roles, zone lookups,
 *                                                  reboot pending DB instances; with an existing
 *                                                  VPC the synth-time lookups (VPC, subnets, route
 *                                                  tables, S3 prefix list)
 *
 * Each statement names the commands that need it (Sid) and the calls it covers. Resources are
 * scoped to the lab: its stack (`proxylab-<lab>`), its results bucket and the expiry role by the
 * names the stack gives them (lib/config/lab-resource-names.ts: `<stack>-<account>-<region>`, the
 * role path `/<stack>/expiry/` — never a name CloudFormation generates, which it cuts to fit), its
 * runners and DB instances by the `proxylab:lab` tag, its expiry schedule by name. Actions and
 * resource types follow the Service Authorization Reference
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/): ssm:GetCommandInvocation,
 * ec2:Describe*, cloudwatch:GetMetricData (on metrics) take no resource (`*`).
 *
 * The tests check every AWS call the CLI makes against this policy (test/helpers/aws-calls).
 */
import {
  ACCOUNT_ID_PATTERN,
  cdkQualifierProblem,
  regionProblem,
  s3BucketNameProblem,
} from '../config/aws-names';
import { expiryScheduleName } from '../config/expiry';
import {
  ANY_ACCOUNT_ID,
  expiryRolePath,
  resultsBucketName,
  stagingBucketName,
} from '../config/lab-resource-names';
import { stackNameFor } from '../config/stack-outputs';
import { labReplacesDatabase, OLD_BLUE_SUFFIX } from '../config/disruptions';
import type { LabConfig } from '../config/types';
import { UsageError } from '../core/errors';

export const OPERATOR_ROLES = ['read', 'run', 'deploy'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** The commands each role is for (help text, docs). */
export const OPERATOR_ROLE_COMMANDS: Readonly<Record<OperatorRole, string>> = {
  read: 'status, fetch',
  run: 'run, doctor, collect, extend (and status, fetch)',
  deploy: 'deploy, destroy (and everything run does)',
};

/** The tag every lab resource carries (lib/config lifecycle tags): the runner and DB scope. */
export const LAB_TAG = 'proxylab:lab';

export interface IamStatement {
  readonly Sid: string;
  readonly Effect: 'Allow';
  readonly Action: string | readonly string[];
  readonly Resource: string | readonly string[];
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, string | readonly string[]>>>>;
}

export interface IamPolicyDocument {
  readonly Version: '2012-10-17';
  readonly Statement: readonly IamStatement[];
}

export interface OperatorPolicyOptions {
  readonly role: OperatorRole;
  /** @default the lab's `network.account` (existing VPC), else '*' - any account; give the lab's account id to pin it */
  readonly account?: string;
  /** @default the lab's `region`, else '*' */
  readonly region?: string;
  /** @default 'aws' */
  readonly partition?: string;
  /**
   * The results bucket's name (the stack output `ResultsBucketName`).
   * @default `<stack>-<account>-<region>` - the name the stack gives it (resultsBucketName), with
   * 12 `?` for an account and `*` for a region the policy is not pinned to
   */
  readonly bucket?: string;
  /**
   * The CDK bootstrap qualifier of the account (`cdk bootstrap --qualifier`).
   * @default 'hnb659fds' - the CDK default
   */
  readonly cdkQualifier?: string;
}

/** The `proxylab iam-policy` flag of each option a user gives (error messages name the flag). */
const OPTION_FLAGS = {
  account: '--account',
  region: '--region',
  bucket: '--bucket',
  cdkQualifier: '--cdk-qualifier',
  partition: 'partition',
} as const;

/**
 * Every given option checked against AWS's naming rules (lib/config/aws-names.ts), all problems at
 * once: each lands in an ARN, where `*` and `?` are wildcards — `--bucket '*'` would grant
 * s3:ListBucket on every bucket, `--cdk-qualifier '*'` sts:AssumeRole on every account's CDK roles.
 * Throws a UsageError (exit 2) naming each flag, what is allowed and the value given.
 */
export function checkOperatorPolicyOptions(opts: Omit<OperatorPolicyOptions, 'role'>): void {
  const checks: Array<[keyof typeof OPTION_FLAGS, string | undefined, (v: string) => string | null]> = [
    [
      'account',
      opts.account,
      (v) => (ACCOUNT_ID_PATTERN.test(v) ? null : `must be a 12-digit AWS account id, got "${v}"`),
    ],
    ['region', opts.region, regionProblem],
    ['bucket', opts.bucket, s3BucketNameProblem],
    ['cdkQualifier', opts.cdkQualifier, cdkQualifierProblem],
    [
      'partition',
      opts.partition,
      (v) => (/^aws(?:-[a-z]+)*$/.test(v) ? null : `must be an AWS partition such as aws, got "${v}"`),
    ],
  ];
  const problems = checks.flatMap(([key, value, check]) => {
    const problem = value === undefined ? null : check(value);
    return problem === null ? [] : [`${OPTION_FLAGS[key]} ${problem}`];
  });
  if (problems.length > 0) throw new UsageError(problems.join('\n'), { code: 'iam-policy-option' });
}

export function parseOperatorRole(value: string): OperatorRole {
  if ((OPERATOR_ROLES as readonly string[]).includes(value)) return value as OperatorRole;
  throw new UsageError(`--role: "${value}" is not a role; use one of ${OPERATOR_ROLES.join(', ')}`);
}

const ROLE_RANK: Readonly<Record<OperatorRole, number>> = { read: 0, run: 1, deploy: 2 };

/** What every statement of one lab's operator policy names. */
interface PolicyScope {
  readonly p: string;
  readonly account: string;
  readonly region: string;
  readonly stack: string;
  readonly bucketArn: string;
  readonly qualifier: string;
  readonly schedule: string;
  readonly labTag: Record<string, string>;
}

/** The operator policy for `lab` and `opts.role` (each role includes the ones below it). */
export function operatorPolicy(lab: LabConfig, opts: OperatorPolicyOptions): IamPolicyDocument {
  checkOperatorPolicyOptions(opts);
  const p = opts.partition ?? 'aws';
  // An existing VPC names its account: the policy is for that account unless told otherwise.
  const account = opts.account ?? (lab.network.mode === 'existing' ? lab.network.account : '*');
  const region = opts.region ?? lab.region ?? '*';
  const stack = stackNameFor(lab.name);
  const bucket = opts.bucket ?? resultsBucketName(stack, account === '*' ? ANY_ACCOUNT_ID : account, region);
  const scope: PolicyScope = {
    p,
    account,
    region,
    stack,
    bucketArn: `arn:${p}:s3:::${bucket}`,
    qualifier: opts.cdkQualifier ?? 'hnb659fds',
    schedule: `arn:${p}:scheduler:${region}:${account}:schedule/default/${expiryScheduleName(stack)}`,
    labTag: { [`aws:ResourceTag/${LAB_TAG}`]: lab.name },
  };
  const rank = ROLE_RANK[opts.role];
  const statements: IamStatement[] = [
    ...readStatements(scope),
    ...(rank >= ROLE_RANK.run ? runStatements(lab, scope) : []),
    ...(rank >= ROLE_RANK.deploy ? deployStatements(lab, scope) : []),
  ];
  return { Version: '2012-10-17', Statement: statements };
}

/** `read`: the stack's outputs and the runs in the results bucket. */
function readStatements({ p, region, account, stack, bucketArn }: PolicyScope): IamStatement[] {
  return [
    {
      Sid: 'ReadStackOutputs',
      Effect: 'Allow',
      Action: 'cloudformation:DescribeStacks',
      Resource: `arn:${p}:cloudformation:${region}:${account}:stack/${stack}/*`,
    },
    {
      Sid: 'ListRuns',
      Effect: 'Allow',
      Action: 's3:ListBucket',
      Resource: bucketArn,
      Condition: { StringLike: { 's3:prefix': 'runs/*' } },
    },
    { Sid: 'ReadRuns', Effect: 'Allow', Action: 's3:GetObject', Resource: `${bucketArn}/runs/*` },
    // validate, plan, cost, deploy and run price the lab's region from the AWS Price List
    // (lib/cost/pricelist/); GetProducts takes no resource.
    { Sid: 'ReadPrices', Effect: 'Allow', Action: 'pricing:GetProducts', Resource: '*' },
  ];
}

/** `run` adds: start and follow runs, doctor, collect, extend. */
function runStatements(
  lab: LabConfig,
  { p, region, account, stack, bucketArn, qualifier, schedule, labTag }: PolicyScope,
): IamStatement[] {
  return [
    // run writes runs/<id>/lab.json and request.json before the first SendCommand; doctor its probe objects;
    // collect the metrics files.
    { Sid: 'WriteRuns', Effect: 'Allow', Action: 's3:PutObject', Resource: `${bucketArn}/runs/*` },
    {
      Sid: 'RunCommandDocument',
      Effect: 'Allow',
      Action: 'ssm:SendCommand',
      // An AWS-owned document has no account in its ARN: `*` there matches it (and nothing else
      // is named AWS-RunShellScript).
      Resource: `arn:${p}:ssm:${region}:*:document/AWS-RunShellScript`,
    },
    // The instance side of SendCommand, limited to this lab's runners by their tag (Systems Manager
    // User Guide, "Restricting Run Command access based on tags": ssm:resourceTag/<key>).
    {
      Sid: 'RunCommandOnLabRunners',
      Effect: 'Allow',
      Action: 'ssm:SendCommand',
      Resource: `arn:${p}:ec2:${region}:${account}:instance/*`,
      Condition: { StringEquals: { [`ssm:resourceTag/${LAB_TAG}`]: lab.name } },
    },
    { Sid: 'ReadCommandResults', Effect: 'Allow', Action: 'ssm:GetCommandInvocation', Resource: '*' },
    // doctor: can the hosts decrypt what they read from the CDK staging bucket (lib/operator/
    // staging-key.ts)? The bucket's default encryption (GetBucketEncryption is authorized by
    // s3:GetEncryptionConfiguration on the bucket, Service Authorization Reference, Amazon S3), then
    // the key it names and that key's policy (kms:DescribeKey, kms:GetKeyPolicy on the `key`
    // resource type, Service Authorization Reference, AWS KMS).
    {
      Sid: 'ReadStagingBucketEncryption',
      Effect: 'Allow',
      Action: 's3:GetEncryptionConfiguration',
      Resource: `arn:${p}:s3:::${stagingBucketName({ account, region, partition: p, qualifier })}`,
    },
    {
      Sid: 'ReadStagingKeyPolicy',
      Effect: 'Allow',
      Action: ['kms:DescribeKey', 'kms:GetKeyPolicy'],
      Resource: `arn:${p}:kms:${region}:${account}:key/*`,
    },
    { Sid: 'ReadExpiry', Effect: 'Allow', Action: 'scheduler:GetSchedule', Resource: schedule },
    // `extend` and `run --extend` move the expiry; UpdateSchedule hands the schedule's own role
    // back to Scheduler (iam:PassRole, condition key iam:PassedToService).
    { Sid: 'MoveExpiry', Effect: 'Allow', Action: 'scheduler:UpdateSchedule', Resource: schedule },
    {
      Sid: 'PassExpiryRole',
      Effect: 'Allow',
      Action: 'iam:PassRole',
      Resource: `arn:${p}:iam::${account}:role${expiryRolePath(stack)}*`,
      Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
    },
    {
      Sid: 'InvokeCollector',
      Effect: 'Allow',
      Action: 'lambda:InvokeFunction',
      Resource: `arn:${p}:lambda:${region}:${account}:function:*`,
      Condition: { StringEquals: labTag },
    },
    {
      Sid: 'ReadDatabaseStates',
      Effect: 'Allow',
      Action: 'rds:DescribeDBInstances',
      Resource: `arn:${p}:rds:${region}:${account}:db:*`,
      Condition: { StringEquals: labTag },
    },
    // doctor, an Aurora lab with the blue-green suite: its members' cluster parameter group status
    // (DescribeDBClusters on `cluster`, lib/operator/doctor-blue-green.ts)
    ...(labReplacesDatabase(lab) && lab.database.engine === 'aurora-postgresql'
      ? [
          {
            Sid: 'ReadClusterParameterStatus',
            Effect: 'Allow' as const,
            Action: 'rds:DescribeDBClusters',
            Resource: `arn:${p}:rds:${region}:${account}:cluster:*`,
            Condition: { StringEquals: labTag },
          },
        ]
      : []),
    // `proxylab collect` from a laptop: GetMetricData takes no resource; PI per DB instance.
    { Sid: 'ReadMetrics', Effect: 'Allow', Action: 'cloudwatch:GetMetricData', Resource: '*' },
    ...(lab.database.performanceInsights
      ? [
          {
            Sid: 'ReadPerformanceInsights',
            Effect: 'Allow' as const,
            Action: 'pi:GetResourceMetrics',
            Resource: `arn:${p}:pi:${region}:${account}:metrics/rds/*`,
          },
        ]
      : []),
    // doctor, a lab without internet: no route of the lab's subnets may lead to an internet
    // gateway (DescribeRouteTables takes no resource-level permissions).
    ...(lab.network.mode === 'existing' && lab.network.egress === 'vpc-endpoints'
      ? [
          {
            Sid: 'ReadRouteTables',
            Effect: 'Allow' as const,
            Action: 'ec2:DescribeRouteTables',
            Resource: '*',
          },
        ]
      : []),
    ...(lab.runners.spot
      ? [
          {
            Sid: 'ReadSpotRequests',
            Effect: 'Allow' as const,
            Action: 'ec2:DescribeSpotInstanceRequests',
            Resource: '*',
          },
        ]
      : []),
  ];
}

/** `deploy` adds: cdk deploy and destroy through the bootstrap roles, and what synth looks up. */
function deployStatements(
  lab: LabConfig,
  { p, region, account, qualifier, labTag }: PolicyScope,
): IamStatement[] {
  return [
    // `cdk deploy` / `cdk destroy` act through the bootstrap roles; CloudFormation does the rest
    // with the bootstrap execution role.
    {
      Sid: 'AssumeCdkBootstrapRoles',
      Effect: 'Allow',
      Action: 'sts:AssumeRole',
      Resource: `arn:${p}:iam::${account}:role/cdk-${qualifier}-*`,
    },
    {
      Sid: 'ChooseZones',
      Effect: 'Allow',
      Action: ['ec2:DescribeAvailabilityZones', 'ec2:DescribeInstanceTypeOfferings'],
      Resource: '*',
    },
    // An existing VPC: `cdk synth` looks it up (aws-cdk's VPC context provider: DescribeVpcs,
    // DescribeSubnets, DescribeRouteTables; DescribeVpnGateways is skipped, the lab passes
    // returnVpnGateways: false) through the bootstrap lookup role when it exists
    // (AssumeCdkBootstrapRoles), else with these credentials; deploy reads the subnets' zones.
    // Without internet egress also the S3 prefix list (PrefixList.fromLookup: a Cloud Control
    // ListResources of AWS::EC2::PrefixList, whose handler reads the managed prefix lists).
    ...(lab.network.mode === 'existing'
      ? [
          {
            Sid: 'LookUpVpc',
            Effect: 'Allow' as const,
            Action: ['ec2:DescribeVpcs', 'ec2:DescribeSubnets', 'ec2:DescribeRouteTables'],
            Resource: '*',
          },
        ]
      : []),
    ...(lab.network.mode === 'existing' && lab.network.egress === 'vpc-endpoints'
      ? [
          {
            Sid: 'LookUpS3PrefixList',
            Effect: 'Allow' as const,
            Action: ['cloudformation:ListResources', 'ec2:DescribeManagedPrefixLists'],
            Resource: '*',
          },
          {
            Sid: 'ReadS3PrefixListEntries',
            Effect: 'Allow' as const,
            Action: 'ec2:GetManagedPrefixListEntries',
            Resource: `arn:${p}:ec2:${region}:*:prefix-list/*`,
          },
        ]
      : []),
    {
      Sid: 'RebootPendingDatabases',
      Effect: 'Allow',
      Action: 'rds:RebootDBInstance',
      Resource: `arn:${p}:rds:${region}:${account}:db:*`,
      Condition: { StringEquals: labTag },
    },
    ...(labReplacesDatabase(lab) ? blueGreenDestroyStatements({ p, region, account, labTag }) : []),
  ];
}

/**
 * destroy, a lab whose suites switch over with Blue/Green (lib/operator/blue-green-destroy.ts): find
 * the lab's deployments (DescribeBlueGreenDeployments on `deployment`, no condition key), delete
 * them (DeleteBlueGreenDeployment on `deployment`, aws:ResourceTag; with DeleteTarget RDS deletes
 * the green copy on the caller's permission: DeleteDBInstance, DeleteDBCluster,
 * DeleteDBClusterEndpoint — RDS and Aurora User Guides, "Authorizing access to blue/green
 * deployment operations"), and the old blue `<id>-old1`: read by name (also once it is gone, when no
 * tag can match), deletion protection off and deleted where it carries the lab's tag (Service
 * Authorization Reference, Amazon RDS: each on its resource type).
 */
function blueGreenDestroyStatements({
  p,
  region,
  account,
  labTag,
}: Pick<PolicyScope, 'p' | 'region' | 'account' | 'labTag'>): IamStatement[] {
  const arn = (type: string, name = '*'): string => `arn:${p}:rds:${region}:${account}:${type}:${name}`;
  return [
    {
      Sid: 'FindBlueGreenLeftovers',
      Effect: 'Allow',
      Action: 'rds:DescribeBlueGreenDeployments',
      Resource: arn('deployment'),
    },
    {
      Sid: 'ReadOldBlue',
      Effect: 'Allow',
      Action: ['rds:DescribeDBInstances', 'rds:DescribeDBClusters'],
      Resource: [arn('db', `*${OLD_BLUE_SUFFIX}`), arn('cluster', `*${OLD_BLUE_SUFFIX}`)],
    },
    {
      Sid: 'DeleteBlueGreenLeftovers',
      Effect: 'Allow',
      Action: [
        'rds:DeleteBlueGreenDeployment',
        'rds:DeleteDBInstance',
        'rds:DeleteDBCluster',
        'rds:DeleteDBClusterEndpoint',
        'rds:ModifyDBInstance',
        'rds:ModifyDBCluster',
      ],
      Resource: [
        arn('deployment'),
        arn('db'),
        arn('cluster'),
        arn('cluster-endpoint'),
        arn('cluster-snapshot'),
      ],
      Condition: { StringEquals: labTag },
    },
  ];
}
