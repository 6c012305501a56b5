import { CloudWatchServiceException } from '@aws-sdk/client-cloudwatch';
import { InvalidArgumentException, PIServiceException } from '@aws-sdk/client-pi';
import { UsageError } from '../../lib/core/errors';
import {
  createCollectorClients,
  eventFromFlags,
  isRetryableError,
  parseCollectEvent,
  withRetry,
} from '../../lib/collector';

describe('isRetryableError', () => {
  const cw = (name: string, httpStatusCode: number, fault: 'client' | 'server' = 'client') =>
    new CloudWatchServiceException({ name, $fault: fault, $metadata: { httpStatusCode }, message: name });
  test.each([
    ['CloudWatch Throttling', cw('Throttling', 400), true],
    [
      'PI ThrottlingException',
      new PIServiceException({ name: 'ThrottlingException', $fault: 'client', $metadata: {}, message: 'x' }),
      true,
    ],
    ['TooManyRequestsException', cw('TooManyRequestsException', 429), true],
    ['any HTTP 429', cw('Whatever', 429), true],
    ['server fault 503', cw('ServiceUnavailable', 503, 'server'), true],
    ['PI InternalServiceError', cw('InternalServiceError', 500, 'server'), true],
    [
      '$retryable set by the SDK',
      Object.assign(cw('SomethingElse', 400), { $retryable: { throttling: false } }),
      true,
    ],
    [
      'PI InvalidArgumentException',
      new InvalidArgumentException({ $metadata: { httpStatusCode: 400 }, message: 'bad metric' }),
      false,
    ],
    ['access denied', cw('AccessDenied', 403), false],
    ['a plain Error', new Error('boom'), false],
    ['not an error', 'Throttling', false],
  ])('%s → %p', (_name, err, expected) => {
    expect(isRetryableError(err)).toBe(expected);
  });
});

describe('withRetry', () => {
  test('gives up after maxAttempts with the last error, delays growing and capped', async () => {
    // GIVEN
    const delays: number[] = [];
    let calls = 0;
    const call = async (): Promise<never> => {
      calls++;
      throw new CloudWatchServiceException({
        name: 'Throttling',
        $fault: 'client',
        $metadata: {},
        message: `try ${calls}`,
      });
    };
    // WHEN
    const result = withRetry(call, {
      maxAttempts: 5,
      baseDelayMs: 100,
      maxDelayMs: 300,
      random: () => 0.999,
      sleep: async (ms) => void delays.push(ms),
    });
    // THEN
    await expect(result).rejects.toThrow('try 5');
    expect(calls).toBe(5);
    expect(delays).toEqual([99, 199, 299, 299]);
  });
});

describe('eventFromFlags', () => {
  const base = { runId: 'r', start: '2026-11-21T10:00:00Z', end: '2026-11-21T10:10:00Z', clusterId: 'c' };

  test('repeatable flags become lists, --instance-class pairs a map, and the result validates', () => {
    // WHEN
    const event = parseCollectEvent(
      eventFromFlags({
        ...base,
        instanceId: ['w', 'r1'],
        instanceClass: ['w=db.t4g.medium'],
        piResourceId: ['db-W'],
        proxy: ['p1', 'p2'],
      }),
    );
    // THEN
    expect(event.cluster).toEqual({
      clusterId: 'c',
      instanceIds: ['w', 'r1'],
      piResourceIds: ['db-W'],
      instanceClasses: { w: 'db.t4g.medium' },
    });
    expect(event.proxies).toEqual(['p1', 'p2']);
  });

  test.each([
    [{ runId: 'r' }, /missing --start, --end, --cluster-id/],
    [{ ...base, instanceClass: ['db.t4g.medium'] }, /--instance-class must be ID=CLASS/],
    [{ ...base, instanceClass: ['w='] }, /--instance-class must be ID=CLASS/],
  ])('%p is a usage error', (flags, message) => {
    expect(() => eventFromFlags(flags)).toThrow(UsageError);
    expect(() => eventFromFlags(flags)).toThrow(message);
  });
});

describe('createCollectorClients', () => {
  test.each([
    [{ AWS_ENDPOINT_URL: 'http://127.0.0.1:5000' }, true],
    [{ AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000' }, true],
    [{}, false],
  ])('env %p → S3 forcePathStyle %p', async (env, expected) => {
    // WHEN
    const clients = createCollectorClients({ region: 'us-east-1', env });
    try {
      // THEN
      expect(clients.s3.config.forcePathStyle).toBe(expected);
      expect(await clients.cloudwatch.config.region()).toBe('us-east-1');
    } finally {
      clients.destroy();
    }
  });
});
