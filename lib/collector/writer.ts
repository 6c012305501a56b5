/** Where metrics files go: an S3 results bucket or a local results root (the parent of runs/). */
import { mkdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { MetricsWriter } from './collect';

export class S3MetricsWriter implements MetricsWriter {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async writeJson(key: string, body: unknown): Promise<string> {
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: JSON.stringify(body, null, 2) + '\n',
        ContentType: 'application/json',
      }),
    );
    return `s3://${this.bucket}/${key}`;
  }
}

export class LocalMetricsWriter implements MetricsWriter {
  /** @param rootDir directory that contains `runs/` (keys are `runs/<runId>/metrics/...`). */
  constructor(private readonly rootDir: string) {}

  async writeJson(key: string, body: unknown): Promise<string> {
    const file = path.resolve(this.rootDir, key);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify(body, null, 2) + '\n', 'utf8');
    return file;
  }
}
