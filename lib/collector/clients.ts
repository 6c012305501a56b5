/**
 * SDK clients for running the collector from a laptop (`proxylab collect`). The SDK (v3.5xx and
 * later) reads AWS_ENDPOINT_URL and the per-service AWS_ENDPOINT_URL_S3 / _CLOUDWATCH / _PI itself,
 * along with AWS_PROFILE and AWS_REGION; this adds only `forcePathStyle` for S3 when an endpoint
 * override is set (local S3 stand-ins such as moto have no virtual-host buckets), and the audit
 * log `PROXYLAB_AWS_CALL_LOG` (lib/core/aws-call-log.ts) like every client of the CLI.
 */
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { PIClient } from '@aws-sdk/client-pi';
import { S3Client } from '@aws-sdk/client-s3';
import { withAwsCallLog } from '../core/aws-call-log';

export interface ClientOptions {
  readonly region?: string;
  readonly profile?: string;
  /** @default process.env */
  readonly env?: NodeJS.ProcessEnv;
}

export interface CollectorClients {
  readonly cloudwatch: CloudWatchClient;
  readonly pi: PIClient;
  readonly s3: S3Client;
  destroy(): void;
}

export function createCollectorClients(options: ClientOptions = {}): CollectorClients {
  const env = options.env ?? process.env;
  const base = {
    ...(options.region ? { region: options.region } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
  };
  const s3EndpointOverride = Boolean(env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL);
  const cloudwatch = withAwsCallLog(new CloudWatchClient(base), env);
  const pi = withAwsCallLog(new PIClient(base), env);
  const s3 = withAwsCallLog(new S3Client({ ...base, forcePathStyle: s3EndpointOverride }), env);
  return {
    cloudwatch,
    pi,
    s3,
    destroy: () => {
      cloudwatch.destroy();
      pi.destroy();
      s3.destroy();
    },
  };
}
