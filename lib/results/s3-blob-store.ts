/**
 * BlobStore over `s3://<bucket>/runs/<runId>/` (the same layout the local run directory has,
 * lib/results/run-paths.ts), and the S3 reads and writes it is made of. Here, beside the filesystem
 * store (fs-blob-store.ts), so every side that writes or reads a run in the bucket — the runner
 * (through lib/aws/s3-sink.ts), the operator, the collector Lambda — uses the same store and paths.
 */
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { decodeUtf8, FileReadError, READ_LIMITS } from '../core/read';
import { readKindOf, type BlobStore } from './blob-store';
import { runKeyPrefix } from './run-paths';

/** List every key under a prefix (follows continuation tokens). */
export async function listKeys(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const obj of page.Contents ?? []) if (obj.Key) keys.push(obj.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

function isNotFound(err: unknown): boolean {
  return (
    err instanceof NoSuchKey ||
    (err instanceof Error && (err.name === 'NoSuchKey' || err.name === 'NotFound'))
  );
}

/**
 * Read an object as text; null when it does not exist. With `maxBytes`, an object whose
 * Content-Length is larger is refused before its body is read (a FileReadError naming it, exit 2).
 * The body is UTF-8 as a file of a run directory is (lib/core/read.ts decodeUtf8): a byte that is
 * not is a FileReadError naming the object and the byte offset, never a U+FFFD in silence — unless
 * `strict` is false (captured program output, read leniently as on disk).
 */
export async function getText(
  s3: S3Client,
  bucket: string,
  key: string,
  maxBytes?: number,
  strict = true,
): Promise<string | null> {
  try {
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    if (!res.Body) return null;
    if (maxBytes !== undefined && res.ContentLength !== undefined && res.ContentLength > maxBytes) {
      // The body is a stream: leaving it unread would hold the connection open.
      (res.Body as { destroy?: () => void }).destroy?.();
      throw new FileReadError(
        `s3://${bucket}/${key}`,
        `is ${res.ContentLength} bytes; a file of this kind may be at most ${maxBytes} bytes`,
        'file-too-large',
      );
    }
    return decodeUtf8(await res.Body.transformToByteArray(), `s3://${bucket}/${key}`, strict);
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

export async function putText(
  s3: S3Client,
  bucket: string,
  key: string,
  body: string,
  contentType: string,
): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }));
}

/**
 * BlobStore under a key prefix of a bucket. A PutObject is atomic: a reader gets the old object or
 * the new one, never part of one.
 */
export class S3BlobStore implements BlobStore {
  constructor(
    private readonly s3: S3Client,
    readonly bucket: string,
    /** Ends with `/` (`runs/<runId>/`). */
    readonly prefix: string,
  ) {}

  where(key: string): string {
    return `s3://${this.bucket}/${this.prefix}${key}`;
  }

  read(key: string): Promise<string | null> {
    const kind = readKindOf(key);
    return getText(this.s3, this.bucket, this.prefix + key, READ_LIMITS[kind], kind !== 'capture');
  }

  write(key: string, body: string, contentType = 'application/octet-stream'): Promise<void> {
    return putText(this.s3, this.bucket, this.prefix + key, body, contentType);
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys = await listKeys(this.s3, this.bucket, this.prefix + prefix);
    return keys.map((k) => k.slice(this.prefix.length)).sort();
  }
}

/** The store of one run in the results bucket. */
export function runBlobs(s3: S3Client, bucket: string, runId: string): S3BlobStore {
  return new S3BlobStore(s3, bucket, runKeyPrefix(runId));
}
