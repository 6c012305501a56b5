/**
 * Text of a PutObject body as the S3 mock received it. The SDK's body type also allows streams and
 * blobs; the code under test sends strings or bytes, so anything else fails the test by name.
 */
export function s3BodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  throw new Error(`unexpected PutObject body type: ${Object.prototype.toString.call(body)}`);
}
