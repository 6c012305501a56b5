/**
 * The operator's policy (`proxylab iam-policy`, lib/operator/iam-policy.ts) names the resources of
 * the lab it is printed for as the deployed stack has them — for every shipped lab and for the
 * longest lab name the schema allows (issue 37): the stack's names resolved as CloudFormation makes
 * them, a generated name cut to its service's limit (test/helpers/aws-calls/cfn-names.ts), and the
 * calls `status` / `fetch` (read), `run` (its request.json) and `extend` (UpdateSchedule passing
 * the expiry role back to Scheduler) make on them, judged by the policy printed without flags and
 * by the one pinned to the account and region. Registered by test/cdk/labs.test.ts on its one
 * synth of each lab.
 *
 * Before the bucket and the expiry role were named by the stack, this failed for
 * e1-prepared-statements and e3-connection-churn: CloudFormation cut their stack names inside the
 * generated names, which `<stack>-resultsbucket*` and `<stack>-ExpiryDeleteStackRole*` then missed.
 */
import * as path from 'node:path';
import { s3BucketNameProblem } from '../../../lib/config/aws-names';
import { expiryRolePath, resultsBucketName } from '../../../lib/config/lab-resource-names';
import type { LabConfig } from '../../../lib/config';
import { LIMITS } from '../../../lib/config/schema';
import { operatorPolicy, type OperatorPolicyOptions } from '../../../lib/operator/iam-policy';
import { judgeCall, type CallForIam } from '../../helpers/aws-calls/iam';
import {
  FAKE_ACCOUNT,
  FAKE_REGION,
  labPoliciesOf,
  type LabPolicies,
  type PolicyJson,
} from '../../helpers/aws-calls/lab-policies';
import type { SynthesizedLab } from '../helpers';

/** A lab name as long as the schema allows (the longest stack name, the most CloudFormation cuts). */
export const LONGEST_LAB_NAME = 'longest-allowed-lab-name';

/** The longest region code in use: the longest bucket name (lib/config/lab-resource-names.ts). */
const LONG_REGION = 'ap-southeast-1';

/** The longest-name lab (with a proxy, as labs.test.ts's sanity check wants): one of its EXTRA_SHAPES. */
export const LONGEST_NAME_SHAPE = {
  name: LONGEST_LAB_NAME,
  region: LONG_REGION,
  proxies: [{ name: 'pool100' }],
};

/** What the operator does on the lab's named resources (names in the input stand for the lab's). */
const OPERATOR_CALLS: ReadonlyArray<readonly [string, CallForIam]> = [
  ['status: stack outputs', { service: 'CloudFormation', operation: 'DescribeStacks', input: {} }],
  [
    'status: list runs',
    { service: 'S3', operation: 'ListObjectsV2', input: { Bucket: 'results', Prefix: 'runs/' } },
  ],
  [
    'fetch: read a run',
    { service: 'S3', operation: 'GetObject', input: { Bucket: 'results', Key: 'runs/r1/manifest.json' } },
  ],
  [
    'run: write the run request',
    { service: 'S3', operation: 'PutObject', input: { Bucket: 'results', Key: 'runs/r1/request.json' } },
  ],
  ['extend: read the expiry', { service: 'Scheduler', operation: 'GetSchedule', input: {} }],
  [
    'extend: move the expiry (passes its role)',
    {
      service: 'Scheduler',
      operation: 'UpdateSchedule',
      input: { Target: { RoleArn: 'the schedule role', Arn: 'x' } },
    },
  ],
];

/** The lab's resources as deployed in its own region (its VPC's account and region when bound). */
function deployedLab(lab: LabConfig, { stack, template }: SynthesizedLab): LabPolicies {
  const [region, account] =
    lab.network.mode === 'existing'
      ? [lab.network.region, lab.network.account]
      : [lab.region ?? FAKE_REGION, FAKE_ACCOUNT];
  const json = template.toJSON() as Parameters<typeof labPoliciesOf>[2];
  return labPoliciesOf(lab.name, stack.stackName, json, {}, [], region, account);
}

/**
 * The checks above, on `synthesized(key)` for each `[key, lab]`: the shipped labs and the
 * longest-name shape, each synthesized once in labs.test.ts's beforeAll.
 */
export function operatorNameChecks(
  labs: ReadonlyArray<readonly [string, LabConfig]>,
  synthesized: (key: string) => SynthesizedLab,
): void {
  test('the longest-name shape has the longest lab name the schema allows', () => {
    expect(LONGEST_LAB_NAME).toHaveLength(LIMITS.labNameMaxLength);
    expect(labs.map(([, lab]) => lab.name)).toContain(LONGEST_LAB_NAME);
  });

  describe.each(labs.map(([key, lab]) => [path.basename(key), key, lab] as const))(
    '%s: the operator policy names the resources CloudFormation deploys',
    (_name, key, lab) => {
      let deployed: LabPolicies;
      beforeAll(() => {
        deployed = deployedLab(lab, synthesized(key));
      });

      test('the results bucket and the expiry role have the names the policy is made from', () => {
        const { stackName, buckets, roles } = deployed.resources;
        const bucket = resultsBucketName(stackName, deployed.account, deployed.region);
        expect(buckets).toEqual([bucket]);
        expect(s3BucketNameProblem(bucket)).toBeNull();
        const expiryRoles = Object.entries(roles).filter(([id]) => id.startsWith('ExpiryDeleteStackRole'));
        expect(expiryRoles).toEqual([
          [expect.any(String), expect.stringContaining(`:role${expiryRolePath(stackName)}`)],
        ]);
      });

      test.each<[string, Omit<OperatorPolicyOptions, 'role'> | 'pinned']>([
        ['as printed without flags', {}],
        ['pinned with --account and --region', 'pinned'],
      ])('%s: status, fetch, run and extend are allowed', async (_how, flags) => {
        // GIVEN the run policy (it includes read) for the lab
        const opts = flags === 'pinned' ? { account: deployed.account, region: deployed.region } : flags;
        const policy = operatorPolicy(lab, { role: 'run', ...opts }) as unknown as PolicyJson;
        // WHEN each operator call on the deployed lab's resources is judged by it
        const problems: string[] = [];
        for (const [what, call] of OPERATOR_CALLS)
          problems.push(
            ...(
              await judgeCall(call, deployed, [{ name: 'operator-run', document: policy }], 'operator')
            ).map((p) => `${what}: ${p}`),
          );
        // THEN none is denied
        expect(problems).toEqual([]);
      });
    },
  );
}
