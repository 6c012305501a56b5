import { CfnResource, Duration, Fn, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { DEFAULTS } from '../config/defaults';

export interface ResultsBucketProps {
  /**
   * The bucket's name. A lab stack gives it `resultsBucketName` (lib/config/lab-resource-names.ts),
   * the name the operator's policy names.
   * @default - assigned by CloudFormation (`<stack>-<logicalid>-<random>`, cut to fit 63 characters)
   */
  readonly bucketName?: string;
  /**
   * Keep the bucket and its objects when the stack is destroyed.
   * @default DEFAULTS.results.retainOnDestroy (false) - the bucket is emptied (auto-delete custom resource) and removed on destroy
   */
  readonly retainOnDestroy?: boolean;
  /**
   * Objects expire this many days after they are written.
   * @default DEFAULTS.results.expireAfterDays (30)
   */
  readonly expireAfterDays?: number;
  /**
   * How long the auto-delete handler's log lines are kept.
   * @default logs.RetentionDays.ONE_WEEK
   */
  readonly logRetention?: logs.RetentionDays;
}

/** Where runs land: `runs/<runId>/…` (written by runners and the collector). */
export class ResultsBucket extends Construct {
  /** Prefix every writer is limited to. */
  static readonly RUNS_PREFIX = 'runs/';
  readonly bucket: s3.Bucket;
  /**
   * The custom resource that empties the bucket when the stack is deleted (null when retained).
   * Whatever writes into the bucket should depend on it, so it is deleted (stops writing) first.
   */
  readonly emptyOnDelete: CfnResource | null;

  constructor(scope: Construct, id: string, props: ResultsBucketProps = {}) {
    super(scope, id);
    const retain = props.retainOnDestroy ?? DEFAULTS.results.retainOnDestroy;
    this.bucket = new s3.Bucket(this, 'Bucket', {
      ...(props.bucketName === undefined ? {} : { bucketName: props.bucketName }),
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: false,
      lifecycleRules: [
        {
          id: 'expire-results',
          expiration: Duration.days(props.expireAfterDays ?? DEFAULTS.results.expireAfterDays),
        },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      autoDeleteObjects: !retain,
    });
    this.emptyOnDelete = null;
    if (!retain) {
      dropRedundantProviderDependency(this);
      this.emptyOnDelete = this.ownAutoDeleteLogs(props.logRetention ?? logs.RetentionDays.ONE_WEEK);
    }
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Results of short-lived benchmark labs; every writer is this stack\'s own role, and access logging would need a second bucket that outlives the lab (the "nothing left behind" rule).',
    });
  }

  /**
   * The auto-delete handler (a Lambda function aws-cdk-lib creates as a raw CfnResource, with no
   * log group of its own) would create /aws/lambda/<function> at run time, with no retention and
   * owned by nothing: left behind by every destroy. Own it here, and make the custom resource
   * depend on it, so on delete the handler runs (and logs) before the log group goes.
   */
  private ownAutoDeleteLogs(retention: logs.RetentionDays): CfnResource | null {
    const stack = Stack.of(this);
    const handler = stack.node
      .tryFindChild('Custom::S3AutoDeleteObjectsCustomResourceProvider')
      ?.node.tryFindChild('Handler');
    const resource = this.bucket.node.tryFindChild('AutoDeleteObjectsCustomResource');
    const emptyer = resource?.node.defaultChild ?? resource;
    if (!(handler instanceof CfnResource) || !(emptyer instanceof CfnResource)) {
      throw new Error('aws-cdk-lib changed: no S3 auto-delete provider handler or custom resource found');
    }
    const logGroup = new logs.LogGroup(this, 'AutoDeleteLogs', {
      logGroupName: Fn.join('', ['/aws/lambda/', handler.ref]),
      retention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    emptyer.node.addDependency(logGroup);
    return emptyer;
  }

  /** `arn:…:s3:::bucket/runs/*`, the only place writers may put objects. */
  runsObjectsArn(): string {
    return this.bucket.arnForObjects(`${ResultsBucket.RUNS_PREFIX}*`);
  }
}

/**
 * The auto-delete custom resource provider (a stack-level singleton in aws-cdk-lib) declares
 * DependsOn its role, which its handler already GetAtts; cfn-lint flags that (W3005).
 */
function dropRedundantProviderDependency(scope: Construct): void {
  const provider = Stack.of(scope).node.tryFindChild('Custom::S3AutoDeleteObjectsCustomResourceProvider');
  const handler = provider?.node.tryFindChild('Handler');
  if (handler instanceof CfnResource) handler.addDeletionOverride('DependsOn');
}
