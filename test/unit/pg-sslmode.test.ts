/**
 * libpq's sslmode on node-postgres (lib/exec/pg-sslmode.ts): which `ssl` option each attempt gets,
 * and that only the server's "no TLS here" ('N' to the SSLRequest) makes `prefer` try again in
 * plain text. The real servers are in test/integration/pg-probe-sslmode.test.ts.
 */
import type { ClientConfig } from 'pg';
import { connectWithSslmode, SERVER_WITHOUT_TLS_MESSAGE, sslAttempts } from '../../lib/exec/pg-sslmode';
import type { SslMode } from '../../lib/exec/libpq';

const TLS = { rejectUnauthorized: false };

test.each([
  ['disable', [false]],
  ['require', [TLS]],
  ['prefer', [TLS, false]],
] as const)('sslmode %s: node-postgres ssl per attempt %j', (mode, attempts) => {
  expect(sslAttempts(mode)).toEqual(attempts);
});

/** An attempt that fails with `failures` in turn, then connects; records the `ssl` of each try. */
function attempts(failures: readonly Error[]) {
  const tried: Array<ClientConfig['ssl']> = [];
  const attempt = (ssl: ClientConfig['ssl']): Promise<string> => {
    tried.push(ssl);
    const failure = failures[tried.length - 1];
    return failure ? Promise.reject(failure) : Promise.resolve(`connected with ssl ${JSON.stringify(ssl)}`);
  };
  return { tried, attempt };
}

test.each([
  ['prefer, TLS offered', 'prefer', [], 'connected with ssl {"rejectUnauthorized":false}', [TLS]],
  [
    "prefer, the server answers 'N'",
    'prefer',
    [new Error(SERVER_WITHOUT_TLS_MESSAGE)],
    'connected with ssl false',
    [TLS, false],
  ],
  ['disable', 'disable', [], 'connected with ssl false', [false]],
] as const)('%s: connects (%s)', async (_what, mode, failures, connected, tried) => {
  // GIVEN
  const a = attempts(failures);
  // WHEN
  const result = await connectWithSslmode(mode as SslMode, a.attempt);
  // THEN
  expect(result).toBe(connected);
  expect(a.tried).toEqual(tried);
});

test.each([
  [
    "require, the server answers 'N': refused, never retried in plain text",
    'require',
    new Error(SERVER_WITHOUT_TLS_MESSAGE),
    [TLS],
  ],
  [
    'prefer, a TLS failure other than "no TLS here": reported as is, never downgraded',
    'prefer',
    new Error('There was an error establishing an SSL connection'),
    [TLS],
  ],
  [
    'prefer, the server refuses the login: reported as is',
    'prefer',
    Object.assign(new Error('password authentication failed for user "bench"'), { code: '28P01' }),
    [TLS],
  ],
] as const)('%s', async (_what, mode, failure, tried) => {
  // GIVEN
  const a = attempts([failure, failure]);
  // WHEN / THEN
  await expect(connectWithSslmode(mode as SslMode, a.attempt)).rejects.toBe(failure);
  expect(a.tried).toEqual(tried);
});
