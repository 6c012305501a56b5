/**
 * AWS SDK clients built from the settings an AWS user expects: `--profile`, `--region`, and the
 * standard environment (`AWS_PROFILE`, `AWS_REGION`, `AWS_ENDPOINT_URL[_<SERVICE>]`). An endpoint
 * override (moto_server in tests, LocalStack) also switches S3 to path-style addressing.
 * One factory per process, passed down explicitly — no module-level singletons. With
 * `PROXYLAB_AWS_CALL_LOG=FILE` every client appends its calls to FILE (lib/core/aws-call-log.ts:
 * service, operation and resource identifiers, never bodies or secrets) — an audit log for writing
 * an IAM policy or debugging an AccessDenied.
 */
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { RDSClient } from '@aws-sdk/client-rds';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type * as CloudFormation from '@aws-sdk/client-cloudformation';
import type * as EC2 from '@aws-sdk/client-ec2';
import type * as KMS from '@aws-sdk/client-kms';
import type * as Lambda from '@aws-sdk/client-lambda';
import type * as RDS from '@aws-sdk/client-rds';
import type * as S3 from '@aws-sdk/client-s3';
import type * as Scheduler from '@aws-sdk/client-scheduler';
import type * as SecretsManager from '@aws-sdk/client-secrets-manager';
import type * as SSM from '@aws-sdk/client-ssm';
import { withAwsCallLog } from '../core/aws-call-log';
import { UsageError } from '../core/errors';

// Each service's package is loaded when its first client is made: a CLI command that talks to S3
// alone (status, fetch) does not load EC2's or RDS's (a few tenths of a CPU second each per start).
const cloudFormation = (): typeof CloudFormation =>
  require('@aws-sdk/client-cloudformation') as typeof CloudFormation;
const ec2 = (): typeof EC2 => require('@aws-sdk/client-ec2') as typeof EC2;
const kms = (): typeof KMS => require('@aws-sdk/client-kms') as typeof KMS;
const lambda = (): typeof Lambda => require('@aws-sdk/client-lambda') as typeof Lambda;
const rds = (): typeof RDS => require('@aws-sdk/client-rds') as typeof RDS;
const s3 = (): typeof S3 => require('@aws-sdk/client-s3') as typeof S3;
const scheduler = (): typeof Scheduler => require('@aws-sdk/client-scheduler') as typeof Scheduler;
const secretsManager = (): typeof SecretsManager =>
  require('@aws-sdk/client-secrets-manager') as typeof SecretsManager;
const ssm = (): typeof SSM => require('@aws-sdk/client-ssm') as typeof SSM;

export interface AwsSettings {
  readonly region?: string;
  readonly profile?: string;
  /** Endpoint override for every service (tests); otherwise the SDK reads AWS_ENDPOINT_URL itself. */
  readonly endpointUrl?: string;
}

export interface AwsClients {
  readonly s3: S3Client;
  readonly secrets: SecretsManagerClient;
  readonly rds: RDSClient;
  readonly ssm: SSMClient;
  readonly lambda: LambdaClient;
  readonly cloudformation: CloudFormationClient;
}

/** True when S3 requests go to a stand-in endpoint that needs path-style addressing. */
function usesEndpointOverride(settings: AwsSettings, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(settings.endpointUrl || env.AWS_ENDPOINT_URL || env.AWS_ENDPOINT_URL_S3);
}

/** Client configuration shared by every service. */
export function clientConfig(settings: AwsSettings): {
  region?: string;
  profile?: string;
  endpoint?: string;
} {
  return {
    ...(settings.region ? { region: settings.region } : {}),
    ...(settings.profile ? { profile: settings.profile } : {}),
    ...(settings.endpointUrl ? { endpoint: settings.endpointUrl } : {}),
  };
}

/** EventBridge Scheduler, where the lab's expiry schedule lives (lib/operator/extend.ts). */
export function createSchedulerClient(
  settings: AwsSettings = {},
  env: NodeJS.ProcessEnv = process.env,
): SchedulerClient {
  return withAwsCallLog(new (scheduler().SchedulerClient)(clientConfig(settings)), env);
}

/** EC2: zone choice before a deploy (lib/operator/availability-zones.ts), Spot requests in doctor. */
export function createEc2Client(settings: AwsSettings = {}, env: NodeJS.ProcessEnv = process.env): EC2Client {
  return withAwsCallLog(new (ec2().EC2Client)(clientConfig(settings)), env);
}

/** KMS (doctor reads the CDK staging bucket's key and its policy: lib/operator/staging-key.ts). */
export function createKmsClient(settings: AwsSettings = {}, env: NodeJS.ProcessEnv = process.env): KMSClient {
  return withAwsCallLog(new (kms().KMSClient)(clientConfig(settings)), env);
}

export function createS3Client(settings: AwsSettings, env: NodeJS.ProcessEnv = process.env): S3Client {
  return withAwsCallLog(
    new (s3().S3Client)({ ...clientConfig(settings), forcePathStyle: usesEndpointOverride(settings, env) }),
    env,
  );
}

export function createAwsClients(
  settings: AwsSettings = {},
  env: NodeJS.ProcessEnv = process.env,
): AwsClients {
  const base = clientConfig(settings);
  return {
    s3: createS3Client(settings, env),
    secrets: withAwsCallLog(new (secretsManager().SecretsManagerClient)(base), env),
    rds: withAwsCallLog(new (rds().RDSClient)(base), env),
    ssm: withAwsCallLog(new (ssm().SSMClient)(base), env),
    lambda: withAwsCallLog(new (lambda().LambdaClient)(base), env),
    cloudformation: withAwsCallLog(new (cloudFormation().CloudFormationClient)(base), env),
  };
}

/**
 * The region the SDK will use (--region / the lab's region, AWS_REGION, the profile's region),
 * resolved before the first AWS call so that a missing region is a usage error (exit 2) naming
 * the ways to give one, not "Region is missing" from inside the first request.
 */
export async function requireRegion(settings: AwsSettings): Promise<string> {
  if (settings.region) return settings.region;
  const probe = new (s3().S3Client)(clientConfig(settings));
  try {
    const region = await probe.config.region();
    if (region) return region;
  } catch {
    // fall through to the error below
  } finally {
    probe.destroy();
  }
  throw new UsageError(
    `no AWS region: pass --region, set AWS_REGION, give the lab a "region"${settings.profile ? `, or set one for profile ${settings.profile}` : ', or use a profile that has one'}`,
  );
}
