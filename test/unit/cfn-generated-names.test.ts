/**
 * The tests' model of the names CloudFormation generates (test/helpers/aws-calls/cfn-names.ts)
 * against names deployed stacks show, and what it means for a policy that matches such a name by
 * pattern: `<stack>-<logicalid>*` misses the shipped e1 and e3 labs' results bucket and expiry role,
 * which is why the stack names them itself (lib/config/lab-resource-names.ts).
 */
import {
  cloudFormationGeneratedName,
  GENERATED_NAME_RULES,
  GENERATED_RANDOM_PART,
} from '../helpers/aws-calls/cfn-names';

/** A generated name without its random part (`-` and 12 characters). */
const withoutRandomPart = (name: string): string => name.slice(0, -(GENERATED_RANDOM_PART.length + 1));

// CDK's singleton handlers' logical ids, the same in every app.
const BUCKET_DEPLOYMENT_FUNCTION = 'CustomCDKBucketDeployment8693BB64968944B69AAFB0CC9EB8756C81C01536';
const BUCKET_DEPLOYMENT_ROLE = 'CustomCDKBucketDeployment8693BB64968944B69AAFB0CC9EB8756CServiceRole89A01265';
const AUTO_DELETE_FUNCTION = 'CustomS3AutoDeleteObjectsCustomResourceProviderHandler9D90184F';
const AUTO_DELETE_ROLE = 'CustomS3AutoDeleteObjectsCustomResourceProviderRole3B1BD092';

describe('the generated name, as deployed stacks show it', () => {
  // Names from public repositories' logs and READMEs (their random parts left out). Where the public
  // name is already cut, the stack name and logical id are continued past the cut (`…-main-sandbox`,
  // a hash's last digit): any continuation gives the same name.
  test.each([
    // short stack name: the logical id takes the rest of the room (49 for a function, 50 for a role)
    [
      'AWS::Lambda::Function',
      'OpenNextDemoStack',
      BUCKET_DEPLOYMENT_FUNCTION,
      'OpenNextDemoStack-CustomCDKBucketDeployment8693BB6',
    ],
    [
      'AWS::Lambda::Function',
      'AppStack',
      BUCKET_DEPLOYMENT_FUNCTION,
      'AppStack-CustomCDKBucketDeployment8693BB64968944B6',
    ],
    [
      'AWS::Lambda::Function',
      'Multiverse-Test',
      AUTO_DELETE_FUNCTION,
      'Multiverse-Test-CustomS3AutoDeleteObjectsCustomRes',
    ],
    [
      'AWS::IAM::Role',
      'SapAnalyzer4Stack',
      BUCKET_DEPLOYMENT_ROLE,
      'SapAnalyzer4Stack-CustomCDKBucketDeployment8693BB64',
    ],
    [
      'AWS::IAM::Role',
      'SamArbBotStack',
      AUTO_DELETE_ROLE,
      'SamArbBotStack-CustomS3AutoDeleteObjectsCustomResou',
    ],
    // long stack name: cut to 25 characters (a trailing hyphen kept), the logical id to the rest
    [
      'AWS::IAM::Role',
      'amplify-sampleprojectapp-dev-sandbox-0a1b2c3d',
      BUCKET_DEPLOYMENT_ROLE,
      'amplify-sampleprojectapp--CustomCDKBucketDeployment',
    ],
    [
      'AWS::Lambda::Function',
      'amplify-projectrespawnweb-main-branch-0a1b2c3d4e',
      'myFunctionrebuildlambdaF1A2B3C4D',
      'amplify-projectrespawnweb-myFunctionrebuildlambdaF',
    ],
    // … even beside a short logical id
    [
      'AWS::Lambda::Function',
      'amplify-d1eeg2gu6ddc3z-main-branch-0a1b2c3d4e',
      'lightweightAgent',
      'amplify-d1eeg2gu6ddc3z-ma-lightweightAgent',
    ],
    // S3 buckets: lower case, 48 characters of room, 24 for a long stack name
    [
      'AWS::S3::Bucket',
      'cdk-covid19-glue-stack-pipeline',
      'PipelineArtifactsBucketAEA9A052',
      'cdk-covid19-glue-stack-p-pipelineartifactsbucketa',
    ],
    [
      'AWS::S3::Bucket',
      'cnadspipelinestack',
      'PipelineArtifactsBucket7D04D0D0',
      'cnadspipelinestack-pipelineartifactsbucket7d04d0d',
    ],
    [
      'AWS::S3::Bucket',
      'codepipelinestack',
      'PipelineArtifactsBucketAEA9A052',
      'codepipelinestack-pipelineartifactsbucketaea9a052',
    ],
    // CloudFormation Template Reference, "Resource custom naming": MyStack-MyBucket-abcdefghijk1
    ['AWS::S3::Bucket', 'MyStack', 'MyBucket', 'mystack-mybucket'],
  ])('%s in stack %s, logical id %s → %s-<random>', (type, stack, logicalId, deployed) => {
    // WHEN
    const name = cloudFormationGeneratedName(type, stack, logicalId);
    // THEN
    expect(withoutRandomPart(name)).toBe(deployed);
    expect(name.length).toBeLessThanOrEqual(GENERATED_NAME_RULES[type]?.max ?? 0);
  });
});

describe('a policy pattern on a generated name', () => {
  // The results bucket and the expiry role of a lab stack, as they were before the stack named them.
  test.each([
    ['proxylab-default', 'AWS::S3::Bucket', 'ResultsBucket260A22AD', true],
    ['proxylab-default', 'AWS::IAM::Role', 'ExpiryDeleteStackRoleF1DA1020', true],
    ['proxylab-e2-client-sweep', 'AWS::IAM::Role', 'ExpiryDeleteStackRoleF1DA1020', true],
    ['proxylab-e1-prepared-statements', 'AWS::S3::Bucket', 'ResultsBucket260A22AD', false],
    ['proxylab-e1-prepared-statements', 'AWS::IAM::Role', 'ExpiryDeleteStackRoleF1DA1020', false],
    ['proxylab-e3-connection-churn', 'AWS::S3::Bucket', 'ResultsBucket260A22AD', false],
    ['proxylab-e3-connection-churn', 'AWS::IAM::Role', 'ExpiryDeleteStackRoleF1DA1020', false],
  ])('%s: %s %s matches `<stack>-<name without its hash>*`: %s', (stack, type, logicalId, matches) => {
    // GIVEN the pattern the operator policy had (`<stack>-resultsbucket*`, `<stack>-ExpiryDeleteStackRole*`)
    const pattern = `${stack}-${logicalId.slice(0, -8)}`;
    const lower = type === 'AWS::S3::Bucket';
    // WHEN CloudFormation names the resource
    const name = cloudFormationGeneratedName(type, stack, logicalId);
    // THEN the pattern holds only where nothing was cut
    expect(name.startsWith(lower ? pattern.toLowerCase() : pattern)).toBe(matches);
  });
});
