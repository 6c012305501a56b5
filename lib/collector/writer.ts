/**
 * Where a run's metrics files go: the results bucket (`s3://<bucket>/runs/<runId>/<path>`) or a
 * local run directory (`<runDir>/<path>`). Paths are relative to the run directory
 * (`metrics/cloudwatch.json`), as in the layout at the top of lib/suite/types.ts.
 */
import * as path from 'node:path';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { writeFileAtomic } from '../core/atomic-write';

export interface RunWriter {
  /** Write one JSON document at `relativePath` inside the run directory; returns where it went. */
  writeJson(relativePath: string, body: unknown): Promise<string>;
}

function serialize(body: unknown): string {
  return JSON.stringify(body, null, 2) + '\n';
}

export class S3RunWriter implements RunWriter {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly runId: string,
  ) {}

  async writeJson(relativePath: string, body: unknown): Promise<string> {
    const key = `runs/${this.runId}/${relativePath}`;
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: serialize(body),
        ContentType: 'application/json',
      }),
    );
    return `s3://${this.bucket}/${key}`;
  }
}

export class LocalRunWriter implements RunWriter {
  /** @param runDir the run directory itself (`runs/<runId>`), resolved by the caller. */
  constructor(private readonly runDir: string) {}

  writeJson(relativePath: string, body: unknown): Promise<string> {
    const file = path.join(this.runDir, relativePath);
    writeFileAtomic(file, serialize(body));
    return Promise.resolve(file);
  }
}
