/**
 * The start loop of the stand-in's servers (PostgreSQL, PgBouncer, PgDoorman): pick a free TCP port
 * below 32768, start the server on it, and, when another process took the port between the check and
 * the server's bind, try again on another one. Each server says how it recognizes a taken port.
 */
import { InfrastructureError } from '../core/errors';
import { findFreePort } from './ports-free';

/** What one start on `port` came to: the started server, or why it did not start (already cleaned up). */
export type PortStart<T> =
  | { readonly started: T }
  | {
      /** Why it did not start (the end of its log, or what was seen): the text of the errors. */
      readonly failed: string;
      /** Known without reading `failed`: another process answers on the port (or shares it). */
      readonly portTaken?: boolean;
    };

export interface PortRetryPolicy {
  /** The server's name in the errors: "PostgreSQL did not start on port …". */
  readonly server: string;
  /** How many ports to try before giving up. */
  readonly tries: number;
  /** Does a failed start's text say the port was taken (then another port is tried)? */
  readonly portTaken: (failed: string) => boolean;
  /** Ports never to choose (the other servers of the stack). */
  readonly exclude?: Iterable<number>;
  /** Picks the port to try, given those to avoid (the ports tried so far among them). @default findFreePort */
  readonly choosePort?: (exclude: ReadonlySet<number>) => Promise<number>;
}

/**
 * Starts the server with `start(port)` on up to `policy.tries` ports. A failure that is not a taken
 * port throws at once ("<server> did not start on port <port>: <why>"); a taken port moves on to
 * another; when every try found its port taken, the error names the ports tried and the last reason.
 * What `start` throws is passed on as it is.
 */
export async function startOnFreePort<T>(
  policy: PortRetryPolicy,
  start: (port: number) => Promise<PortStart<T>>,
): Promise<T> {
  const excluded = new Set(policy.exclude ?? []);
  const choose = policy.choosePort ?? ((exclude: ReadonlySet<number>) => findFreePort(exclude));
  const tried: number[] = [];
  let lastError = '';
  for (let attempt = 0; attempt < policy.tries; attempt++) {
    const port = await choose(excluded);
    excluded.add(port);
    tried.push(port);
    const outcome = await start(port);
    if ('started' in outcome) return outcome.started;
    lastError = outcome.failed;
    if (outcome.portTaken === true || policy.portTaken(outcome.failed)) continue;
    throw new InfrastructureError(`${policy.server} did not start on port ${port}: ${lastError}`);
  }
  throw new InfrastructureError(
    `${policy.server} could not bind a free port after ${policy.tries} attempts (ports ${tried.join(', ')}): ${lastError}`,
  );
}
