import * as path from 'node:path';
import { CfnResource, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

/** lambda/collect-metrics/index.ts, resolved from this file (not the working directory). */
const COLLECTOR_ENTRY = path.join(__dirname, '..', '..', 'lambda', 'collect-metrics', 'index.ts');

/**
 * The logical id cdk-nag prints for a bucket's ARN in IAM5 findings (`<ResultsBucket260A22AD.Arn>`),
 * resolved at construction time so acknowledgements name the exact finding.
 */
export function logicalIdOf(bucket: s3.IBucket): string {
  const resource = bucket.node.defaultChild;
  if (!(resource instanceof CfnResource))
    throw new Error(`${bucket.node.path} has no CloudFormation resource`);
  return Stack.of(resource).resolve(resource.logicalId) as string;
}

export interface MetricsCollectorProps {
  /** Results bucket; the function writes under `runs/` only. */
  readonly bucket: s3.IBucket;
  /** DbiResourceIds (`db-…`) of this lab's instances: the only Performance Insights resources it may read. */
  readonly dbInstanceResourceIds: readonly string[];
  /**
   * Log retention of the function's explicit log group.
   * @default - two weeks
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Function timeout.
   * @default - 5 minutes
   */
  readonly timeout?: Duration;
}

/**
 * The metrics collector Lambda (logic in lambda/collect-metrics and lib/collector). Least
 * privilege by hand (no managed policies): write its own log group, `cloudwatch:GetMetricData`,
 * `pi:GetResourceMetrics` on this lab's instances, `s3:PutObject` under `runs/`.
 * Bundled with the local esbuild, never Docker.
 */
export class MetricsCollector extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: MetricsCollectorProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.TWO_WEEKS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description:
        'proxylab metrics collector: read CloudWatch and Performance Insights, write runs/ in the results bucket',
    });
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({ actions: ['cloudwatch:GetMetricData'], resources: ['*'] }),
    );
    if (props.dbInstanceResourceIds.length > 0) {
      this.role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['pi:GetResourceMetrics'],
          resources: props.dbInstanceResourceIds.map(
            (id) => `arn:${stack.partition}:pi:${stack.region}:${stack.account}:metrics/rds/${id}`,
          ),
        }),
      );
    }
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:PutObject'],
        resources: [props.bucket.arnForObjects('runs/*')],
      }),
    );

    this.function = new NodejsFunction(this, 'Function', {
      entry: COLLECTOR_ENTRY,
      handler: 'handler',
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 512,
      timeout: props.timeout ?? Duration.minutes(5),
      role: this.role,
      logGroup: this.logGroup,
      environment: { RESULTS_BUCKET: props.bucket.bucketName },
      description: 'proxylab: collect CloudWatch / Performance Insights metrics for a run window into S3',
      bundling: {
        forceDockerBundling: false,
        minify: true,
        sourceMap: false,
        target: 'node24',
        format: OutputFormat.CJS,
        // The SDK v3 clients are bundled (pinned to the versions we test with), not taken from the runtime.
        externalModules: [],
      },
    });

    // The function must wait for its inline policy (CDK adds that), but a DependsOn on the role it
    // already GetAtts is redundant (cfn-lint W3005): state the one dependency that matters.
    const policy = this.role.node.tryFindChild('DefaultPolicy')?.node.defaultChild;
    if (policy instanceof CfnResource) {
      (this.function.node.defaultChild as CfnResource).addOverride('DependsOn', [stack.getLogicalId(policy)]);
    }

    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'cloudwatch:GetMetricData supports no resource-level permissions (AWS service authorization reference); it is the only action granted on *.',
    });
    Validations.of(this.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(props.bucket)}.Arn>/runs/*]`,
      reason:
        "Run ids are chosen at run time; the function may only PutObject under runs/ of this lab's bucket.",
    });
  }
}
