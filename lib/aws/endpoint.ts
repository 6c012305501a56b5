/** A stack output's `host` or `host:port`, parsed (read by the operator and the runner). */
import { UsageError } from '../core/errors';

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

/** `host` or `host:port` (default port 5432). */
export function parseEndpoint(text: string, what: string): Endpoint {
  const m = /^([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(text.trim());
  if (!m) throw new UsageError(`${what}: expected host or host:port, got "${text}"`);
  const port = m[2] === undefined ? 5432 : Number(m[2]);
  if (port < 1 || port > 65535) throw new UsageError(`${what}: port must be 1–65535, got ${port}`);
  return { host: m[1] as string, port };
}
