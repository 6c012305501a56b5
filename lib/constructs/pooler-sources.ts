/**
 * A pooler release's source archive as a CDK file asset, for hosts without internet egress
 * (`network.egress: "vpc-endpoints"`): the host fetches it from the CDK staging bucket through the
 * S3 gateway endpoint instead of its upstream URL, and checks the same published SHA-256.
 *
 * The asset is keyed by the release's PUBLISHED SHA-256 (`sourceHash`), not by hashing a file at
 * synth: the template (`s3://<staging bucket>/<sha256>.gz`) is the same whether or not the archive
 * is on this machine, so `cdk synth` works offline (CI synthesizes every lab without it). The file
 * only has to exist when `cdk deploy` publishes the assets (cdk-assets resolves a file asset's path
 * against the cloud assembly directory with path.resolve, so this absolute path is read where it
 * is): `proxylab deploy` stages it first
 * (lib/operator/pooler-sources.ts: download, check the SHA-256, keep). Without it, synth warns
 * (`proxylab:pooler-source-not-staged`) and the asset upload would fail naming the file.
 */
import { existsSync } from 'node:fs';
import { Annotations, FileAssetPackaging, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import type { PoolerRelease } from '../poolers/driver';
import { poolerSourcePath } from '../poolers/sources';
import type { PoolerSource } from './runner-fleet';

const staged = new WeakMap<Stack, Map<string, PoolerSource>>();

/** The staged copy of `release` in `scope`'s stack (one asset per release and stack). */
export function stagedPoolerSource(
  scope: Construct,
  release: PoolerRelease,
  /** @default poolerSourcePath(release) */
  file: string = poolerSourcePath(release),
): PoolerSource {
  const stack = Stack.of(scope);
  const perStack = staged.get(stack) ?? new Map<string, PoolerSource>();
  staged.set(stack, perStack);
  const key = `${release.product}-${release.version}`;
  const known = perStack.get(key);
  if (known) return known;
  const sha256 = release.sha256;
  // A git release (PgDoorman) has none: lab validation refuses it without internet (driver.host.needsInternet).
  if (sha256 === undefined || !/^[0-9a-f]{64}$/.test(sha256))
    throw new Error(
      `${release.product} ${release.version}: no published SHA-256 to key its staged source by`,
    );
  const location = stack.synthesizer.addFileAsset({
    sourceHash: sha256,
    fileName: file,
    packaging: FileAssetPackaging.FILE,
  });
  if (!existsSync(file))
    Annotations.of(stack).addWarningV2(
      'proxylab:pooler-source-not-staged',
      `${release.product} ${release.version} is not staged at ${file}: \`proxylab deploy\` downloads it (checking SHA-256 ${sha256}) before \`cdk deploy\` uploads it; a plain \`cdk deploy\` would fail to upload it`,
    );
  const bucket = s3.Bucket.fromBucketName(
    stack,
    `PoolerSourceBucket-${key.replace(/\W/g, '-')}`,
    location.bucketName,
  );
  const source: PoolerSource = {
    location: { kind: 's3', uri: `s3://${location.bucketName}/${location.objectKey}` },
    // Exactly this object (as grantSoftwareRead does for the runner bundle, which says why there is
    // no KMS grant: the bootstrap bucket is SSE-KMS, by default with the AWS managed key aws/s3).
    grantRead: (role: iam.IRole) =>
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['s3:GetObject'],
          resources: [bucket.arnForObjects(location.objectKey)],
        }),
      ),
  };
  perStack.set(key, source);
  return source;
}
