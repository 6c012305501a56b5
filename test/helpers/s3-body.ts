/**
 * Text of a PutObject body as the S3 mock received it. The SDK's body type also allows streams and
 * blobs; the code under test sends strings or bytes, so anything else fails the test by name.
 */
export function s3BodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  throw new Error(`unexpected PutObject body type: ${Object.prototype.toString.call(body)}`);
}

/** What a mocked GetObject body must offer: the SDK's readers, over text or raw bytes. */
export interface S3MockBody {
  transformToString(encoding?: string): Promise<string>;
  transformToByteArray(): Promise<Uint8Array>;
}

/**
 * A GetObject `Body` for a mock: `transformToByteArray` (how lib/results reads an object, to check
 * its UTF-8) and `transformToString` (lenient, as the SDK's is), over `content`.
 */
export function s3GetBody(content: string | Uint8Array): S3MockBody {
  const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
  return {
    transformToString: () => Promise.resolve(Buffer.from(bytes).toString('utf8')),
    transformToByteArray: () => Promise.resolve(bytes),
  };
}
