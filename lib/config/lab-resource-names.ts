/**
 * The names of the lab resources the operator's policy (lib/operator/iam-policy.ts) must name,
 * chosen here once, for the stack (lib/lab-stack.ts, lib/constructs/ttl.ts) and for that policy.
 *
 * They are not left to CloudFormation: a resource without a name gets `<stack>-<logicalId>-<random>`,
 * and when that is longer than the service allows (S3 buckets 63 characters, IAM roles 64)
 * CloudFormation cuts the stack name and the logical id to fit (the stack part to about 25
 * characters). AWS documents the generated name (CloudFormation Template Reference, "Resource
 * custom naming": `MyStack-MyBucket-abcdefghijk1`) but not where it cuts, so no pattern such as
 * `<stack>-resultsbucket*` holds for every lab name: the shipped `e1-prepared-statements` and
 * `e3-connection-churn` were cut. test/helpers/aws-calls/cfn-names.ts models the cut from names
 * deployed stacks show; test/cdk/lab-checks/operator-names.ts checks the policy against it.
 *
 * No aws-cdk-lib here: the CLI loads it to print the policy.
 */

/** The stand-in for an account id in a policy that names none: IAM's `?` matches one character. */
export const ANY_ACCOUNT_ID = '?'.repeat(12);

/**
 * The results bucket: `<stack>-<account>-<region>`, e.g. `proxylab-default-111122223333-eu-west-1`.
 * Bucket names are global across accounts (S3 User Guide, "General purpose bucket naming rules"),
 * hence the account and region, as the CDK bootstrap names its bucket
 * (`cdk-<qualifier>-assets-<account>-<region>`). The same lab gets the same name on every deploy.
 *
 * Length: the lab name has at most 24 characters (lib/config/schema.ts LIMITS.labNameMaxLength), the
 * stack `proxylab-<lab>` 33, the account 12: 47 with the hyphens, so the name stays within S3's 63
 * for every region code of up to 16 characters (today's are shorter: `ap-southeast-1` has 14,
 * `us-gov-west-1` 13). The stack passes its own account and region (tokens in an
 * environment-agnostic stack: `Fn::Join` with `AWS::AccountId` and `AWS::Region`); the policy the
 * ones it is pinned to, or `ANY_ACCOUNT_ID` and `*`.
 */
export function resultsBucketName(stackName: string, account: string, region: string): string {
  return `${stackName.toLowerCase()}-${account}-${region}`;
}

/**
 * The IAM path of the expiry schedule's role (lib/constructs/ttl.ts): `/<stack>/expiry/`. The role
 * keeps its CloudFormation-generated name (no `RoleName`, so no CAPABILITY_NAMED_IAM and no clash
 * between the lab's stacks in two regions of one account); its ARN is
 * `arn:aws:iam::<account>:role/<stack>/expiry/<generated name>` (IAM User Guide, "IAM identifiers":
 * a role's ARN carries its path), so `role/<stack>/expiry/*` names exactly this lab's expiry roles,
 * whatever CloudFormation cuts from the name: a stack name has no `/`.
 */
export function expiryRolePath(stackName: string): string {
  return `/${stackName}/expiry/`;
}

/** Where the check looks: the lab's account and region, and the bootstrap qualifier. */
export interface StagingKeyScope {
  readonly account: string;
  readonly region: string;
  /** @default 'aws' */
  readonly partition?: string;
  /** `cdk bootstrap --qualifier`. @default 'hnb659fds' - the CDK default, which the lab stacks use */
  readonly qualifier?: string;
}

/** The CDK staging bucket's name (DefaultStackSynthesizer: `cdk-<qualifier>-assets-<account>-<region>`). */
export function stagingBucketName(scope: StagingKeyScope): string {
  return `cdk-${scope.qualifier ?? 'hnb659fds'}-assets-${scope.account}-${scope.region}`;
}
