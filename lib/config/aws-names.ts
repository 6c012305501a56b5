/**
 * AWS's own naming rules for names an operator types on the command line, so a flag can never
 * widen what it names into a pattern: an IAM resource ARN treats `*` and `?` as wildcards, so
 * `--bucket '*'` would grant every bucket in every account. Each check returns what is wrong in
 * words (what is allowed, then what was given), or null.
 *
 * - S3 general purpose buckets: Amazon S3 User Guide, "General purpose bucket naming rules"
 *   (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html).
 * - CDK bootstrap qualifier: the `Qualifier` parameter of aws-cdk's bootstrap template
 *   (aws-cdk lib/api/bootstrap/bootstrap-template.yaml: AllowedPattern `[A-Za-z0-9_-]{1,10}`, "an
 *   alphanumeric identifier of at most 10 characters", since it goes into role names of ≤ 64).
 * - Regions: the lab schema's REGION_PATTERN (lib/config/schema.ts), as the lab's `region` and
 *   `--region` of every AWS command take them.
 */
import { REGION_PATTERN } from './schema';

/** Prefixes S3 reserves (xn-- is punycode; sthree- covers sthree-configurator). */
const BUCKET_RESERVED_PREFIXES = ['xn--', 'sthree-', 'amzn-s3-demo-'] as const;
/** Suffixes S3 reserves for access point and Object Lambda aliases, Multi-Region Access Points, directory and table buckets. */
const BUCKET_RESERVED_SUFFIXES = ['-s3alias', '--ol-s3', '.mrap', '--x-s3', '--table-s3'] as const;

const BUCKET_RULES =
  '3–63 lowercase letters, digits, "." and "-", beginning and ending with a letter or digit, no "..", ' +
  `not an IP address, not starting with ${BUCKET_RESERVED_PREFIXES.join(', ')} nor ending with ` +
  `${BUCKET_RESERVED_SUFFIXES.join(', ')} (S3 bucket naming rules; no wildcards)`;

/** Why `name` is not an S3 general purpose bucket name, or null. */
export function s3BucketNameProblem(name: string): string | null {
  const broken =
    name.length < 3 ||
    name.length > 63 ||
    !/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/.test(name) ||
    name.includes('..') ||
    /^\d{1,3}(?:\.\d{1,3}){3}$/.test(name) ||
    BUCKET_RESERVED_PREFIXES.some((p) => name.startsWith(p)) ||
    BUCKET_RESERVED_SUFFIXES.some((s) => name.endsWith(s));
  return broken ? `must be an S3 bucket name: ${BUCKET_RULES}; got ${JSON.stringify(name)}` : null;
}

/** aws-cdk's bootstrap template: `Qualifier` AllowedPattern (CloudFormation anchors it). */
export const CDK_QUALIFIER_PATTERN = /^[A-Za-z0-9_-]{1,10}$/;

/** Why `q` is not a CDK bootstrap qualifier, or null. */
export function cdkQualifierProblem(q: string): string | null {
  return CDK_QUALIFIER_PATTERN.test(q)
    ? null
    : `must be a CDK bootstrap qualifier: 1–10 letters, digits, "_" and "-" (cdk bootstrap --qualifier; the default is hnb659fds); got ${JSON.stringify(q)}`;
}

/** Why `r` is not an AWS region name, or null. */
export function regionProblem(r: string): string | null {
  return REGION_PATTERN.test(r)
    ? null
    : `must be an AWS region such as us-east-1 or eu-west-1 (lowercase, no wildcards); got ${JSON.stringify(r)}`;
}

/** A 12-digit AWS account id. */
export const ACCOUNT_ID_PATTERN = /^\d{12}$/;
