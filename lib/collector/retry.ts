/**
 * Retry of throttled or transient AWS calls with exponential backoff and full jitter, on top of
 * the SDK's own retries (CloudWatch GetMetricData allows about 50 TPS per Region; a collector
 * invoked once per run can afford to wait). Sleep and randomness are injectable for tests.
 */

export interface RetryOptions {
  /** Total attempts including the first. @default 6 */
  readonly maxAttempts?: number;
  /** @default 200 */
  readonly baseDelayMs?: number;
  /** @default 10000 */
  readonly maxDelayMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Returns [0, 1). @default Math.random */
  readonly random?: () => number;
}

const THROTTLING_NAMES = new Set([
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
]);

const TRANSIENT_NAMES = new Set([
  'InternalServiceError',
  'InternalFailure',
  'ServiceUnavailable',
  'InternalServerError',
]);

/** True for throttling and transient server errors, the ones worth waiting for. */
export function isRetryableError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as {
    name?: unknown;
    $retryable?: unknown;
    $metadata?: { httpStatusCode?: unknown };
    $fault?: unknown;
  };
  if (typeof e.name === 'string' && (THROTTLING_NAMES.has(e.name) || TRANSIENT_NAMES.has(e.name)))
    return true;
  if (e.$retryable && typeof e.$retryable === 'object') return true;
  const status = e.$metadata?.httpStatusCode;
  if (status === 429) return true;
  if (typeof status === 'number' && status >= 500 && e.$fault === 'server') return true;
  return false;
}

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function withRetry<T>(call: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const maxAttempts = options.maxAttempts ?? 6;
  const baseDelayMs = options.baseDelayMs ?? 200;
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  const sleep = options.sleep ?? realSleep;
  const random = options.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= maxAttempts || !isRetryableError(err)) throw err;
      const capMs = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
      await sleep(Math.floor(random() * capMs));
    }
  }
}

/** `Name: message` of an error, for a series' `reason`. */
export function describeError(err: unknown): string {
  if (err instanceof Error)
    return err.name && err.name !== 'Error' ? `${err.name}: ${err.message}` : err.message;
  return String(err);
}
