import { CfnResource, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { DEFAULTS } from '../config/defaults';

export interface ResultsBucketProps {
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
}

/** Where runs land: `runs/<runId>/…` (written by runners and the collector). */
export class ResultsBucket extends Construct {
  /** Prefix every writer is limited to. */
  static readonly RUNS_PREFIX = 'runs/';
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: ResultsBucketProps = {}) {
    super(scope, id);
    const retain = props.retainOnDestroy ?? DEFAULTS.results.retainOnDestroy;
    this.bucket = new s3.Bucket(this, 'Bucket', {
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
    if (!retain) dropRedundantProviderDependency(this);
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Results of short-lived benchmark labs; every writer is this stack\'s own role, and access logging would need a second bucket that outlives the lab (the "nothing left behind" rule).',
    });
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
