/**
 * The physical name CloudFormation gives a resource whose template names none — the tests' model
 * of it (./lab-policies.ts resolves `Ref` and `Fn::GetAtt` with it).
 *
 * CloudFormation names such a resource `<stack>-<logicalId>-<random>` (CloudFormation Template
 * Reference, "Resource custom naming": "CloudFormation might name an Amazon S3 bucket with the
 * following physical ID MyStack-MyBucket-abcdefghijk1"), S3 buckets in lower case. Where the service
 * limits the name, CloudFormation cuts the stack name and the logical id to fit and keeps the
 * random part whole; AWS does not document the cut (moto's issue 3168: "CloudFormation truncates
 * the StackName portion of the bucket name such that it doesn't exceed the limit"). What deployed
 * stacks show (test/unit/cfn-generated-names.test.ts has them):
 *  - the random part has 12 characters;
 *  - stack and logical id together get `max - 2 - 12` characters, where `max` is 62 for an S3
 *    bucket, 63 for a Lambda function and 64 for an IAM role (the longest generated names seen);
 *  - when they do not fit, the stack name keeps at most the larger half of that room (25 of 49 for
 *    a function, 24 of 48 for a bucket, 25 of 50 for a role), even beside a short logical id, and
 *    the logical id gets the rest: a stack name shorter than its half leaves it to the logical id.
 * aws-cdk splits its own generated names the same way (PhysicalName.GENERATE_IF_NEEDED, aws-cdk-lib
 * core/lib/private/physical-name-generator.js: the stack name cut to 25 characters, the id to 24).
 * A policy that matches a generated name by pattern fails for long stack names under this model as
 * it does in AWS; the lab's policies name their resources instead (lib/config/lab-resource-names.ts).
 */

/** The random part of every generated name here: 12 characters, as CloudFormation's. */
export const GENERATED_RANDOM_PART = 'AbCdEfGhIjKl';

interface GeneratedNameRule {
  /** The template property that names the resource when it is given (then nothing is generated). */
  readonly nameProperty: string;
  /** The longest name CloudFormation generates for the type. @default - no limit: nothing is cut */
  readonly max?: number;
  /** The service keeps only lower case (S3 bucket names). @default false */
  readonly lowerCase?: boolean;
}

/**
 * The types whose names the tests resolve with their limits (S3: "General purpose bucket naming
 * rules", 3–63 characters, lower case; Lambda: CreateFunction `FunctionName`, 64; IAM: "IAM object
 * quotas", role names 64; SQS: CreateQueue `QueueName`, 80; CloudWatch Logs: CreateLogGroup
 * `logGroupName`, 512) — `max` lower where deployed names show CloudFormation stopping short.
 * Other types: `<stack>-<logicalId>-<random>`, never cut.
 */
export const GENERATED_NAME_RULES: Readonly<Record<string, GeneratedNameRule>> = {
  'AWS::S3::Bucket': { nameProperty: 'BucketName', max: 62, lowerCase: true },
  'AWS::Lambda::Function': { nameProperty: 'FunctionName', max: 63 },
  'AWS::IAM::Role': { nameProperty: 'RoleName', max: 64 },
  'AWS::SQS::Queue': { nameProperty: 'QueueName', max: 80 },
  'AWS::Logs::LogGroup': { nameProperty: 'LogGroupName', max: 512 },
};

/** The name CloudFormation generates for resource `logicalId` of `type` in stack `stackName`. */
export function cloudFormationGeneratedName(type: string, stackName: string, logicalId: string): string {
  const rule = GENERATED_NAME_RULES[type];
  const room = (rule?.max ?? Number.POSITIVE_INFINITY) - 2 - GENERATED_RANDOM_PART.length;
  let stack = stackName;
  let id = logicalId;
  if (stack.length + id.length > room) {
    stack = stack.slice(0, Math.ceil(room / 2));
    id = id.slice(0, room - stack.length);
  }
  const name = `${stack}-${id}-${GENERATED_RANDOM_PART}`;
  return rule?.lowerCase ? name.toLowerCase() : name;
}
