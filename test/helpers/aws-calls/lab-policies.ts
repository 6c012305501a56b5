/**
 * The IAM policies of a synthesized lab stack, with CloudFormation intrinsics resolved to concrete
 * ARNs (fixed fake account and region; a resource's name from its template where it has one, else
 * the name CloudFormation generates, cut to the service's limit as CloudFormation cuts it:
 * ./cfn-names.ts), and the lab's resources by kind. The CDK test
 * test/cdk/labs.test.ts synthesizes every shipped lab and keeps the result in
 * test/fixtures/iam/lab-policies.json (it fails when the fixture drifts; rewrite it with
 * `PROXYLAB_WRITE_IAM_FIXTURE=1 npx jest test/cdk/labs.test.ts -t lab-policies.json`), so
 * unit and integration tests judge calls against the stack's own policies without a synth.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cloudFormationGeneratedName, GENERATED_NAME_RULES } from './cfn-names';
import type { LabRoleKind } from './principals';

export const FAKE_ACCOUNT = '123456789012';
export const FAKE_REGION = 'us-east-1';
export const FAKE_STACK_UUID = '00000000-0000-4000-8000-000000000000';
export const LAB_POLICIES_FIXTURE = join(__dirname, '..', '..', 'fixtures', 'iam', 'lab-policies.json');

export interface PolicyStatementJson {
  readonly Sid?: string;
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: string | string[];
  readonly Condition?: Record<string, Record<string, unknown>>;
}

export interface PolicyJson {
  readonly Version: string;
  readonly Statement: PolicyStatementJson[];
}

export interface NamedPolicy {
  /** The AWS::IAM::Policy logical id (or `<role>/inline-<name>`). */
  readonly name: string;
  readonly document: PolicyJson;
}

export interface RolePolicies {
  readonly roleLogicalId: string;
  readonly roleArn: string;
  readonly policies: NamedPolicy[];
  /** AWS managed policies attached by ARN (not evaluated: their text is not in the template). */
  readonly managed: string[];
}

/** What a lab owns, by kind: the candidates a test's own resource names stand for. */
export interface LabResources {
  readonly stackName: string;
  readonly stackId: string;
  readonly buckets: string[];
  readonly secrets: string[];
  readonly functions: string[];
  readonly proxies: string[];
  readonly targetGroups: string[];
  readonly dbiResourceIds: string[];
  /** The Aurora cluster's ARN (none for RDS for PostgreSQL). */
  readonly clusters: string[];
  /** Every DB instance's ARN (writer and readers). */
  readonly dbInstances: string[];
  readonly roles: Record<string, string>;
  readonly tags: Record<string, string>;
}

/**
 * A call a principal makes outside the tests' SDK clients: the runner's boot script downloading its
 * software (`aws s3 cp` in the user data), the Lambda runtime writing a function's logs with the
 * function's role, `cdk deploy` assuming the bootstrap roles. Taken from the synthesized stack.
 */
export interface PlatformCall {
  readonly principal: LabRoleKind | 'operator-deploy';
  readonly service: string;
  readonly operation: string;
  readonly input: Record<string, unknown>;
  readonly why: string;
}

export interface LabPolicies {
  readonly lab: string;
  readonly region: string;
  readonly account: string;
  readonly resources: LabResources;
  /** Every role of the stack, by logical id. */
  readonly roles: Record<string, RolePolicies>;
  /** The roles the tests attribute calls to. */
  readonly principals: Partial<Record<LabRoleKind, string>>;
  readonly platformCalls: PlatformCall[];
}

type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> };

/** Which role logical id (prefix) is which principal. */
const PRINCIPAL_ROLES: ReadonlyArray<readonly [LabRoleKind, RegExp]> = [
  ['spot-canceller', /^RunnersSpotRequestsRole[0-9A-F]{8}$/],
  ['runner', /^RunnersRole[0-9A-F]{8}$/],
  ['pooler-host', /^Pooler\w*Role[0-9A-F]{8}$/],
  ['collector', /^CollectorRole[0-9A-F]{8}$/],
  ['expiry-schedule', /^ExpiryDeleteStackRole[0-9A-F]{8}$/],
];

/** A CDK asset's object key (content hash): the same in every lab, whatever the code. */
export function normalizeAssetKey(text: string): string {
  return text.replace(/\b[0-9a-f]{64}\.zip\b/g, 'ASSET.zip');
}

class Resolver {
  constructor(
    private readonly template: Template,
    private readonly stackName: string,
    private readonly region: string,
    private readonly account: string,
  ) {}

  get stackId(): string {
    return `arn:aws:cloudformation:${this.region}:${this.account}:stack/${this.stackName}/${FAKE_STACK_UUID}`;
  }

  private type(id: string): string {
    const r = this.template.Resources[id];
    if (!r) throw new Error(`intrinsic refers to ${id}, which is not in the template`);
    return r.Type;
  }

  /** The resource's name: the one its template gives, else the one CloudFormation generates. */
  physicalName(id: string): string {
    const type = this.type(id);
    const given = this.template.Resources[id]?.Properties?.[GENERATED_NAME_RULES[type]?.nameProperty ?? ''];
    return given === undefined ? cloudFormationGeneratedName(type, this.stackName, id) : this.resolve(given);
  }

  /** An IAM role's path (`Path`, default `/`): part of its ARN. */
  private rolePath(id: string): string {
    const path = this.template.Resources[id]?.Properties?.Path;
    return path === undefined ? '/' : this.resolve(path);
  }

  ref(id: string): string {
    switch (id) {
      case 'AWS::Partition':
        return 'aws';
      case 'AWS::Region':
        return this.region;
      case 'AWS::AccountId':
        return this.account;
      case 'AWS::StackId':
        return this.stackId;
      case 'AWS::StackName':
        return this.stackName;
      case 'AWS::URLSuffix':
        return 'amazonaws.com';
    }
    const type = this.type(id);
    if (type === 'AWS::SecretsManager::Secret')
      return `arn:aws:secretsmanager:${this.region}:${this.account}:secret:${this.physicalName(id)}-AbCdEf`;
    if (type === 'AWS::SecretsManager::SecretTargetAttachment')
      return this.resolve(this.template.Resources[id]?.Properties?.SecretId);
    return this.physicalName(id);
  }

  getAtt(id: string, attr: string): string {
    const type = this.type(id);
    const name = this.physicalName(id);
    const r = this.region;
    const a = this.account;
    const key = `${type}.${attr}`;
    switch (key) {
      case 'AWS::S3::Bucket.Arn':
        return `arn:aws:s3:::${name}`;
      case 'AWS::Lambda::Function.Arn':
        return `arn:aws:lambda:${r}:${a}:function:${name}`;
      case 'AWS::Logs::LogGroup.Arn':
        return `arn:aws:logs:${r}:${a}:log-group:${name}:*`;
      case 'AWS::SQS::Queue.Arn':
        return `arn:aws:sqs:${r}:${a}:${name}`;
      case 'AWS::IAM::Role.Arn':
        return `arn:aws:iam::${a}:role${this.rolePath(id)}${name}`;
      case 'AWS::RDS::DBProxy.DBProxyArn':
        return `arn:aws:rds:${r}:${a}:db-proxy:prx-${id.toLowerCase()}`;
      case 'AWS::RDS::DBProxyTargetGroup.TargetGroupArn':
        return `arn:aws:rds:${r}:${a}:target-group:prx-tg-${id.toLowerCase()}`;
      case 'AWS::RDS::DBInstance.DbiResourceId':
        return `db-${id.toUpperCase()}`;
      case 'AWS::RDS::DBInstance.DBInstanceArn':
        return `arn:aws:rds:${r}:${a}:db:${name}`;
    }
    throw new Error(
      `no fake value for Fn::GetAtt ${id}.${attr} (${type}): add it to test/helpers/aws-calls/lab-policies.ts`,
    );
  }

  /** `value` resolved; with `lenient`, what cannot be resolved becomes `UNRESOLVED` (user data text). */
  resolve(value: unknown, lenient = false): string {
    if (lenient) {
      try {
        return this.resolve(value);
      } catch {
        if (value && typeof value === 'object' && 'Fn::Base64' in value)
          return this.resolve(value['Fn::Base64'], true);
        if (value && typeof value === 'object' && 'Fn::Join' in value) {
          const [sep, parts] = (value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
          return parts.map((p) => this.resolve(p, true)).join(sep);
        }
        return 'UNRESOLVED';
      }
    }
    if (typeof value === 'string') return value;
    if (value && typeof value === 'object') {
      const o = value as Record<string, unknown>;
      if ('Fn::Base64' in o) return this.resolve(o['Fn::Base64']);
      if ('Ref' in o) return this.ref(String(o.Ref));
      if ('Fn::GetAtt' in o) {
        const [id, attr] = o['Fn::GetAtt'] as [string, string];
        return this.getAtt(id, attr);
      }
      if ('Fn::Join' in o) {
        const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
        return parts.map((p) => this.resolve(p)).join(sep);
      }
      if ('Fn::Sub' in o) {
        const body = o['Fn::Sub'];
        const [text, vars] = Array.isArray(body)
          ? (body as [string, Record<string, unknown>])
          : [String(body), {}];
        return text.replace(/\$\{([^}]+)\}/g, (_m, name: string) => {
          if (name in vars) return this.resolve(vars[name]);
          const [id, attr] = name.split('.');
          return attr ? this.getAtt(id ?? '', attr) : this.ref(name);
        });
      }
    }
    throw new Error(`cannot resolve ${JSON.stringify(value)}`);
  }
}

function resolveDocument(doc: unknown, r: Resolver): PolicyJson {
  const d = doc as { Version: string; Statement: Array<Record<string, unknown>> };
  const list = (v: unknown): string | string[] =>
    Array.isArray(v) ? v.map((x) => normalizeAssetKey(r.resolve(x))) : normalizeAssetKey(r.resolve(v));
  const resolveDeep = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(resolveDeep)
      : v &&
          typeof v === 'object' &&
          !('Ref' in v) &&
          !('Fn::GetAtt' in v) &&
          !('Fn::Join' in v) &&
          !('Fn::Sub' in v)
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolveDeep(x)]))
        : r.resolve(v);
  return {
    Version: d.Version,
    Statement: d.Statement.map((s) => ({
      ...(typeof s.Sid === 'string' ? { Sid: s.Sid } : {}),
      Effect: s.Effect === 'Deny' ? 'Deny' : 'Allow',
      Action: s.Action as string | string[],
      Resource: list(s.Resource),
      ...(s.Condition
        ? { Condition: resolveDeep(s.Condition) as Record<string, Record<string, unknown>> }
        : {}),
    })),
  };
}

/**
 * A runner that may create a Blue/Green deployment: what RDS then calls on its permission (RDS and
 * Aurora User Guides, "Authorizing access to blue/green deployment operations": create, switch over,
 * delete), on the green copy's generated names (`-green-…`), which carry the lab's tags.
 */
function blueGreenPlatformCalls(
  runner: RolePolicies | undefined,
  entries: ReadonlyArray<[string, { Type: string }]>,
): PlatformCall[] {
  const grants = JSON.stringify(runner?.policies.map((p) => p.document) ?? []);
  if (!grants.includes('rds:CreateBlueGreenDeployment')) return [];
  const aurora = entries.some(([, x]) => x.Type === 'AWS::RDS::DBCluster');
  const why = (step: string): string =>
    `RDS ${step} a Blue/Green deployment's green copy on the runner's permission (User Guides, "Authorizing access to blue/green deployment operations")`;
  const call = (operation: string, input: Record<string, unknown>, step: string): PlatformCall => ({
    principal: 'runner',
    service: 'RDS',
    operation,
    input,
    why: why(step),
  });
  const cluster = { DBClusterIdentifier: 'lab-cluster-green-abc123' };
  const instance = { DBInstanceIdentifier: 'lab-db-green-abc123' };
  const endpoint = { DBClusterEndpointIdentifier: 'lab-endpoint-green-abc123' };
  return aurora
    ? [
        call('CreateDBCluster', cluster, 'creates'),
        call('CreateDBInstance', instance, 'creates'),
        call('CreateDBClusterEndpoint', endpoint, 'creates'),
        call('ModifyDBCluster', cluster, 'switches over'),
        call('PromoteReadReplicaDBCluster', cluster, 'switches over'),
        call('DeleteDBCluster', cluster, 'deletes (DeleteTarget)'),
        call('DeleteDBInstance', instance, 'deletes (DeleteTarget)'),
        call('DeleteDBClusterEndpoint', endpoint, 'deletes (DeleteTarget)'),
      ]
    : [
        call('CreateDBInstanceReadReplica', instance, 'creates'),
        call('ModifyDBInstance', instance, 'switches over'),
        call('PromoteReadReplica', instance, 'switches over'),
        call('DeleteDBInstance', instance, 'deletes (DeleteTarget)'),
      ];
}

/** The policies and resources of one synthesized lab stack (template JSON from Template.toJSON()). */
export function labPoliciesOf(
  lab: string,
  stackName: string,
  template: Template,
  tags: Record<string, string>,
  /** The CDK bootstrap roles `cdk deploy` assumes (synthesizer ARNs, `${AWS::AccountId}` etc. unresolved). */
  deployRoleArns: readonly string[] = [],
  region = FAKE_REGION,
  account = FAKE_ACCOUNT,
): LabPolicies {
  const r = new Resolver(template, stackName, region, account);
  const entries = Object.entries(template.Resources);
  const ofType = (t: string): string[] => entries.filter(([, x]) => x.Type === t).map(([id]) => id);
  const roles: Record<string, RolePolicies> = {};
  for (const id of ofType('AWS::IAM::Role')) {
    const props = template.Resources[id]?.Properties ?? {};
    const inline = ((props.Policies as Array<{ PolicyName: string; PolicyDocument: unknown }>) ?? []).map(
      (p) => ({ name: `${id}/inline-${p.PolicyName}`, document: resolveDocument(p.PolicyDocument, r) }),
    );
    roles[id] = {
      roleLogicalId: id,
      roleArn: r.getAtt(id, 'Arn'),
      policies: inline,
      managed: ((props.ManagedPolicyArns as unknown[]) ?? []).map((m) => r.resolve(m)),
    };
  }
  for (const id of ofType('AWS::IAM::Policy')) {
    const props = template.Resources[id]?.Properties ?? {};
    for (const role of (props.Roles as Array<{ Ref: string }>) ?? []) {
      roles[role.Ref]?.policies.push({ name: id, document: resolveDocument(props.PolicyDocument, r) });
    }
  }
  const principals: Partial<Record<LabRoleKind, string>> = {};
  for (const id of Object.keys(roles)) {
    const kind = PRINCIPAL_ROLES.find(([, re]) => re.test(id))?.[0];
    if (kind) principals[kind] = id;
  }
  const kindOfRole = (roleId: string): LabRoleKind | undefined =>
    PRINCIPAL_ROLES.find(([, re]) => re.test(roleId))?.[0];
  const platformCalls: PlatformCall[] = [];
  for (const id of ofType('AWS::EC2::Instance')) {
    const props = template.Resources[id]?.Properties ?? {};
    const profileId = (props.IamInstanceProfile as { Ref?: string } | undefined)?.Ref ?? '';
    const roleRef = ((template.Resources[profileId]?.Properties?.Roles as Array<{ Ref: string }>) ?? [])[0]
      ?.Ref;
    const kind = roleRef ? kindOfRole(roleRef) : undefined;
    if (!kind) continue;
    const userData = r.resolve(props.UserData, true);
    for (const m of userData.matchAll(/aws s3 cp '?s3:\/\/([^/' ]+)\/([^' ]+)'?/g))
      platformCalls.push({
        principal: kind,
        service: 'S3',
        operation: 'GetObject',
        input: { Bucket: m[1], Key: normalizeAssetKey(m[2] ?? '') },
        // (the instance's logical id ends in a hash of its user data, which changes with every runner build)
        why: `${id.replace(/[0-9a-f]{16}$/, '')}'s user data: aws s3 cp`,
      });
  }
  for (const id of ofType('AWS::Lambda::Function')) {
    const props = template.Resources[id]?.Properties ?? {};
    const roleId = (props.Role as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0] ?? '';
    const kind = kindOfRole(roleId);
    const logGroup = (props.LoggingConfig as { LogGroup?: unknown } | undefined)?.LogGroup;
    if (!kind || !logGroup) continue;
    for (const operation of ['CreateLogStream', 'PutLogEvents'])
      platformCalls.push({
        principal: kind,
        service: 'CloudWatch Logs',
        operation,
        input: { logGroupName: r.resolve(logGroup), logStreamName: '2026/01/01/[$LATEST]0123456789abcdef' },
        why: `the Lambda runtime writes ${id}'s logs with its role`,
      });
  }
  // The expiry schedule's universal target (`arn:aws:scheduler:::aws-sdk:<service>:<apiAction>`):
  // Scheduler makes that call with the schedule's role, and on failure sends it to the DLQ.
  for (const id of ofType('AWS::Scheduler::Schedule')) {
    const target = (template.Resources[id]?.Properties?.Target ?? {}) as Record<string, unknown>;
    const roleId =
      (target.RoleArn as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0] ?? '';
    const kind = kindOfRole(roleId);
    const m = /:aws-sdk:(\w+):(\w+)$/.exec(r.resolve(target.Arn));
    if (!kind || !m) continue;
    const service = m[1] === 'cloudformation' ? 'CloudFormation' : (m[1] ?? '');
    const operation = (m[2] ?? '').replace(/^./, (c) => c.toUpperCase());
    platformCalls.push({
      principal: kind,
      service,
      operation,
      input: JSON.parse(r.resolve(target.Input)) as Record<string, unknown>,
      why: `${id}: Scheduler calls its target with the schedule's role`,
    });
    const dlq = (target.DeadLetterConfig as { Arn?: unknown } | undefined)?.Arn;
    if (dlq)
      platformCalls.push({
        principal: kind,
        service: 'SQS',
        operation: 'SendMessage',
        input: { QueueArn: r.resolve(dlq) },
        why: `${id}: a failed call goes to its dead-letter queue`,
      });
  }
  platformCalls.push(...blueGreenPlatformCalls(roles[principals.runner ?? ''], entries));
  for (const arn of deployRoleArns)
    platformCalls.push({
      principal: 'operator-deploy',
      service: 'STS',
      operation: 'AssumeRole',
      input: { RoleArn: r.resolve({ 'Fn::Sub': arn }) },
      why: 'cdk deploy / destroy assume the bootstrap roles',
    });
  return {
    lab,
    region,
    account,
    platformCalls,
    resources: {
      stackName,
      stackId: r.stackId,
      buckets: ofType('AWS::S3::Bucket').map((id) => r.ref(id)),
      secrets: ofType('AWS::SecretsManager::Secret').map((id) => r.ref(id)),
      functions: ofType('AWS::Lambda::Function').map((id) => r.getAtt(id, 'Arn')),
      proxies: ofType('AWS::RDS::DBProxy').map((id) => r.getAtt(id, 'DBProxyArn')),
      targetGroups: ofType('AWS::RDS::DBProxyTargetGroup').map((id) => r.getAtt(id, 'TargetGroupArn')),
      dbiResourceIds: ofType('AWS::RDS::DBInstance').map((id) => r.getAtt(id, 'DbiResourceId')),
      clusters: ofType('AWS::RDS::DBCluster').map(
        (id) => `arn:aws:rds:${region}:${account}:cluster:${r.ref(id)}`,
      ),
      dbInstances: ofType('AWS::RDS::DBInstance').map((id) => r.getAtt(id, 'DBInstanceArn')),
      roles: Object.fromEntries(Object.keys(roles).map((id) => [id, r.getAtt(id, 'Arn')])),
      tags,
    },
    roles,
    principals,
  };
}

export interface LabPoliciesFixture {
  readonly note: string;
  readonly labs: Record<string, LabPolicies>;
}

let cached: LabPoliciesFixture | null = null;

export function loadLabPolicies(): LabPoliciesFixture {
  cached ??= JSON.parse(readFileSync(LAB_POLICIES_FIXTURE, 'utf8')) as LabPoliciesFixture;
  return cached;
}

export function labPolicies(lab: string): LabPolicies {
  const found = loadLabPolicies().labs[lab];
  if (!found)
    throw new Error(
      `no synthesized policies for lab "${lab}" in ${LAB_POLICIES_FIXTURE}; labs there: ${Object.keys(loadLabPolicies().labs).join(', ')}`,
    );
  return found;
}
