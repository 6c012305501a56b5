/**
 * Database credentials from Secrets Manager: the JSON secret RDS generates for a cluster
 * (`username`, `password`, `host`, `port`, `dbname`, `engine`, …). The password goes only into
 * libpq's environment (PGPASSWORD) — never into argv, a log line or a result file — and every
 * error message here names the missing field, never a value.
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { z } from 'zod';
import { InfrastructureError } from '../core/errors';

export interface DbCredentials {
  readonly username: string;
  readonly password: string;
  /** Host and port in the secret (the cluster writer); targets may override the host. */
  readonly host: string | null;
  readonly port: number;
  readonly dbname: string;
}

/** Parse the RDS secret JSON. dbname defaults to `postgres` (RDS omits it for the default DB). */
export function parseDbSecret(secretString: string, secretId: string): DbCredentials {
  const parsed = secretJson(secretString, secretId);
  if (!parsed || typeof parsed !== 'object')
    throw new InfrastructureError(`secret ${secretId}: SecretString is not a JSON object`);
  const obj = parsed as Record<string, unknown>;
  const str = (k: string): string | null => (typeof obj[k] === 'string' && obj[k].length > 0 ? obj[k] : null);
  const username = str('username');
  const password = str('password');
  const missing = [username === null ? 'username' : null, password === null ? 'password' : null].filter(
    (m) => m !== null,
  );
  if (missing.length > 0)
    throw new InfrastructureError(`secret ${secretId}: missing field(s) ${missing.join(', ')}`);
  const rawPort = obj.port;
  const port = typeof rawPort === 'number' ? rawPort : typeof rawPort === 'string' ? Number(rawPort) : 5432;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new InfrastructureError(`secret ${secretId}: field port is not a TCP port`);
  return {
    username: username as string,
    password: password as string,
    host: str('host'),
    port,
    dbname: str('dbname') ?? 'postgres',
  };
}

export async function readDbCredentials(
  client: SecretsManagerClient,
  secretId: string,
): Promise<DbCredentials> {
  return parseDbSecret(await readSecretString(client, secretId), secretId);
}

/** A secret's SecretString; the error names the secret and the SDK error class, never a value. */
async function readSecretString(client: SecretsManagerClient, secretId: string): Promise<string> {
  let secretString: string | undefined;
  try {
    secretString = (await client.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString;
  } catch (err) {
    const name = err instanceof Error ? err.name : 'Error';
    throw new InfrastructureError(`could not read secret ${secretId}: ${name}`, { cause: err });
  }
  if (secretString === undefined)
    throw new InfrastructureError(`secret ${secretId}: no SecretString (binary secrets are not supported)`);
  return secretString;
}

function secretJson(secretString: string, secretId: string): unknown {
  try {
    return JSON.parse(secretString) as unknown;
  } catch {
    throw new InfrastructureError(`secret ${secretId}: SecretString is not JSON`);
  }
}

export interface AdminCredentials {
  readonly username: string;
  readonly password: string;
}

/** The pooler admin secret: JSON `{ "username": …, "password": … }`. */
export async function readAdminCredentials(
  client: SecretsManagerClient,
  secretId: string,
): Promise<AdminCredentials> {
  const obj = secretJson(await readSecretString(client, secretId), secretId);
  const parsed = z.object({ username: z.string().min(1), password: z.string().min(1) }).safeParse(obj);
  if (!parsed.success)
    throw new InfrastructureError(
      `secret ${secretId}: missing field(s) ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}`,
    );
  return parsed.data;
}

/** Replace every occurrence of each secret in `text` by `***` (belt and braces for logs). */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length > 0) out = out.split(s).join('***');
  return out;
}

/** Line logger that scrubs the given secrets from everything it writes. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
}

export function redactingLogger(write: (line: string) => void, secrets: () => readonly string[]): Logger {
  const emit = (level: string, message: string): void =>
    write(`${new Date().toISOString()} ${level} ${redact(message, secrets())}\n`);
  return { info: (m) => emit('info', m), warn: (m) => emit('warn', m) };
}
