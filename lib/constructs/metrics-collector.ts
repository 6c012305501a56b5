import * as path from 'node:path';
import { CfnResource, Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { addLabFunction } from './lab-function';
import { REPO_ROOT } from '../core/repo-root';

/** lambda/collect-metrics/index.ts, resolved from this file (not the working directory). */
const COLLECTOR_ENTRY = path.join(REPO_ROOT, 'lambda', 'collect-metrics', 'index.ts');

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
 * `pi:GetResourceMetrics` on this lab's instances, `s3:PutObject` under `runs/` (the function's
 * shape: lab-function.ts).
 */
export class MetricsCollector extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: MetricsCollectorProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const statements = [
      new iam.PolicyStatement({ actions: ['cloudwatch:GetMetricData'], resources: ['*'] }),
      ...(props.dbInstanceResourceIds.length > 0
        ? [
            new iam.PolicyStatement({
              actions: ['pi:GetResourceMetrics'],
              resources: props.dbInstanceResourceIds.map(
                (id) => `arn:${stack.partition}:pi:${stack.region}:${stack.account}:metrics/rds/${id}`,
              ),
            }),
          ]
        : []),
      new iam.PolicyStatement({
        actions: ['s3:PutObject'],
        resources: [props.bucket.arnForObjects('runs/*')],
      }),
    ];
    const made = addLabFunction(this, {
      entry: COLLECTOR_ENTRY,
      description: 'proxylab: collect CloudWatch / Performance Insights metrics for a run window into S3',
      roleDescription:
        'proxylab metrics collector: read CloudWatch and Performance Insights, write runs/ in the results bucket',
      logRetention: props.logRetention ?? logs.RetentionDays.TWO_WEEKS,
      memorySize: 512,
      timeout: props.timeout ?? Duration.minutes(5),
      environment: { RESULTS_BUCKET: props.bucket.bucketName },
      statements,
      roleAcknowledgements: [
        {
          id: 'AwsSolutions-IAM5[Resource::*]',
          reason:
            'cloudwatch:GetMetricData supports no resource-level permissions (AWS service authorization reference); it is the only action granted on *.',
        },
        {
          id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(props.bucket)}.Arn>/runs/*]`,
          reason:
            "Run ids are chosen at run time; the function may only PutObject under runs/ of this lab's bucket.",
        },
      ],
    });
    this.function = made.function;
    this.role = made.role;
    this.logGroup = made.logGroup;
  }
}
