/**
 * libpq's `sslmode` on node-postgres (`pg`), for the clients that speak to a target themselves
 * instead of through libpq (the disruption probe, the session probe, the server-connection count).
 *
 * libpq: "prefer: first try an SSL connection; if that fails, try a non-SSL connection" and
 * "require: only try an SSL connection" (PostgreSQL documentation, libpq "Connection Strings",
 * parameter `sslmode`); without a root certificate neither verifies the server's certificate.
 *
 * node-postgres has no such fallback: its `ssl` option either sends the SSLRequest or not, and when
 * the server answers the SSLRequest with 'N' its Connection ends the socket and emits
 * `new Error('The server does not support SSL connections')` (pg 8.23 lib/connection.js `connect`;
 * the `sslmode=prefer` of a connection string is only an alias of `verify-full` there, see
 * pg-connection-string's `deprecatedSslModeWarning`). So `prefer` is done here: a TLS attempt, and,
 * only when the server said it has no TLS, a second attempt without it. Any other failure of the TLS
 * attempt (a handshake error, a server answering something other than 'S' or 'N') is reported as it
 * is, never retried in clear text: the probe does not quietly downgrade a TLS failure.
 */
import type { ClientConfig } from 'pg';
import type { SslMode } from './libpq';

/** What node-postgres's Connection emits when the server answers the SSLRequest with 'N'. */
export const SERVER_WITHOUT_TLS_MESSAGE = 'The server does not support SSL connections';

/** node-postgres's `ssl` for TLS as libpq's `prefer` and `require` do it: encrypted, not verified. */
const TLS_UNVERIFIED: ClientConfig['ssl'] = { rejectUnauthorized: false };

/** node-postgres's `ssl` for each attempt `mode` makes, in order: TLS first for `prefer`. */
export function sslAttempts(mode: SslMode): ReadonlyArray<ClientConfig['ssl']> {
  switch (mode) {
    case 'disable':
      return [false];
    case 'require':
      return [TLS_UNVERIFIED];
    case 'prefer':
      return [TLS_UNVERIFIED, false];
  }
}

/** The server answered the SSLRequest with 'N' (it has no TLS): the one failure `prefer` retries. */
export function isServerWithoutTls(err: unknown): boolean {
  return err instanceof Error && err.message === SERVER_WITHOUT_TLS_MESSAGE;
}

/**
 * Runs `attempt` (a new client, connected) with each of `mode`'s `ssl` options in turn: the next one
 * only after the server said it has no TLS. Resolves with the first that connects; rejects with the
 * last failure.
 */
export async function connectWithSslmode<T>(
  mode: SslMode,
  attempt: (ssl: ClientConfig['ssl']) => Promise<T>,
): Promise<T> {
  const options = sslAttempts(mode);
  for (let i = 0; ; i++) {
    const ssl = options[i];
    try {
      return await attempt(ssl);
    } catch (err) {
      if (i + 1 >= options.length || !isServerWithoutTls(err)) throw err;
    }
  }
}
