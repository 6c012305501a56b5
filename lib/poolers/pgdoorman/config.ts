/**
 * The one PgDoorman configuration writer (pure text, TOML): `proxylab local` (lib/local/pgdoorman.ts)
 * and the pooler host's bootstrap (./host.ts) both render through here, so the local integration
 * tests run the configuration the cloud runs.
 *
 * Settings whose meaning is not obvious, from PgDoorman's reference (`pg_doorman generate-docs`,
 * general.md and pool.md of 3.10.7) and checked against the 3.10.7 binary:
 * - One `[pools.<alias>]` per pool mode (`bench` transaction, `bench_session` session with
 *   `server_database`), one user each with `pool_size`. PgDoorman has no cap across pools
 *   (`max_db_connections` caps the users of ONE pool), so each mode's pool may open `pool_size`;
 *   proxylab resets every pool between steps (RECONNECT closes idle server connections), so at most
 *   one pool holds connections at a time.
 * - `worker_threads`: "Number of Tokio runtime worker threads … Performance scales linearly up to
 *   the number of CPU cores" (default 4): one process, this many threads.
 * - `prepared_statements` / `prepared_statements_cache_size`: prepared statements are carried
 *   through transaction pooling by a pool-level cache (default on, 8192); the cache size must be > 0
 *   while it is on, so the lab's `maxPreparedStatements` 0 turns `prepared_statements` off.
 * - `server_tls_mode`: TLS to PostgreSQL (`require`, as RDS wants; default `allow`). The local
 *   server has none: `disable` (with the default, 3.10.7 refused every client locally).
 * - `tls_mode` (clients): `require` with a key and certificate, else `disable`.
 * - `pg_hba`: who may log in how; it covers the admin database `pgdoorman` too. Unix-socket
 *   connections are `local` rules (the agent's admin relay ends at the unix socket).
 * - Users: `password` is a verifier (`md5…` or `SCRAM-SHA-256$…`), never plain text; with
 *   `server_username` + `server_password` PgDoorman logs in to PostgreSQL with those (Aurora's
 *   master password is stored as SCRAM, which passthrough could only reuse with the same salt);
 *   without them it reuses the client's proof (passthrough: the local trust server).
 * - Pool, timeout and failure settings are PgDoorman's defaults or the lab's `settings`
 *   (lib/products/pgdoorman/settings.ts): e.g. `query_wait_timeout` is 5 s unless the lab says
 *   otherwise (PgBouncer's is 120 s) — a sweep far above the pool then measures that timeout, as a
 *   team running PgDoorman at its defaults would meet it.
 * - `log_client_connections` / `log_client_disconnections` off: `pgbench -C` would log two lines
 *   per transaction.
 */
import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';
import { PGDOORMAN_SETTINGS } from '../../products/pgdoorman/settings';
import { settingSpec, valueProblem } from '../../products/settings';
import type { SettingValue } from '../../products/types';
import type { PoolMode } from '../products';

/** `pg_doorman 3.10.7`, `PgDoorman 3.10.7`, `3.10` → `3.10.7` / `3.10.0`; null when no version. */
export function parsePgdoormanVersion(text: string): string | null {
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  return m ? `${m[1]}.${m[2]}.${m[3] ?? '0'}` : null;
}

/** The pool (virtual database) a pool mode is served under: transaction = the db name itself. */
export function pgdoormanPoolName(dbname: string, mode: PoolMode): string {
  return mode === 'transaction' ? dbname : `${dbname}_session`;
}

export interface PgdoormanTomlInput {
  /** The PgDoorman release that reads this file (recorded in the header). */
  readonly version: string;
  readonly listenAddr: string;
  readonly listenPort: number;
  /** Where the unix socket `.s.PGSQL.<port>` (the admin console's way in) is created. */
  readonly unixSocketDir: string;
  readonly server: { readonly host: string; readonly port: number; readonly dbname: string };
  readonly poolModes: readonly PoolMode[];
  /** Server connections of each pool (`pool_size`). */
  readonly poolSize: number;
  readonly workerThreads: number;
  /** `prepared_statements_cache_size`; 0 turns `prepared_statements` off. */
  readonly preparedStatementsCacheSize: number;
  /** `trust`: a throwaway local stack; `scram-sha-256`: everyone else. */
  readonly clientAuth: 'trust' | 'scram-sha-256';
  /** Where TCP clients may come from (`127.0.0.1/32`, `0.0.0.0/0`). */
  readonly clientCidr: string;
  /** The one user of every pool: its verifier, and its server password (null: passthrough). */
  readonly user: {
    readonly username: string;
    readonly verifier: string;
    readonly serverPassword: string | null;
  };
  readonly admin: { readonly username: string; readonly password: string };
  readonly serverTlsMode: 'disable' | 'require';
  readonly clientTls: { readonly keyFile: string; readonly certFile: string } | null;
  readonly maxClientConnections: number;
  /** First comment line (who wrote it). */
  readonly header?: string;
  /**
   * The lab's `settings` for this pooler (checked against lib/products/pgdoorman/settings.ts), each in
   * its section (`general`, or every pool), rendered from its type: TOML numbers, booleans, strings.
   */
  readonly settings?: Readonly<Record<string, SettingValue>>;
}

/** A TOML basic string: quotes, backslashes and control characters escaped; no line breaks allowed. */
function str(name: string, v: string): string {
  if (/[\r\n]/.test(v)) throw new Error(`PgDoorman setting ${name}: value must not contain a line break`);
  const escaped = [...v]
    .map((c) => {
      const code = c.charCodeAt(0);
      if (c === '\\' || c === '"') return `\\${c}`;
      return code < 0x20 || code === 0x7f ? `\\u${code.toString(16).padStart(4, '0')}` : c;
    })
    .join('');
  return `"${escaped}"`;
}

/** A TOML key: bare when it can be, else quoted. */
function key(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : str('key', k);
}

function positiveInt(name: string, v: number, min = 1): void {
  if (!Number.isInteger(v) || v < min) throw new Error(`${name} must be an integer ≥ ${min}, got ${v}`);
}

/**
 * The lab's settings as TOML lines of the general section and of each pool, checked against the
 * catalogue (a name proxylab sets or one it lacks throws: validate.ts reports them first).
 */
function teamSettings(settings: Readonly<Record<string, SettingValue>>): {
  general: string[];
  pool: string[];
} {
  const out = { general: [] as string[], pool: [] as string[] };
  for (const [name, value] of Object.entries(settings)) {
    const spec = settingSpec(PGDOORMAN_SETTINGS, name);
    if (spec === undefined || spec.setBy !== undefined)
      throw new Error(`PgDoorman setting ${name}: not one a lab may set (proxylab validate names why)`);
    const bad = valueProblem(spec, value);
    if (bad !== null) throw new Error(`PgDoorman setting ${name} ${bad}`);
    const text =
      typeof value === 'string'
        ? str(name, value)
        : Array.isArray(value)
          ? `[${(value as readonly string[]).map((v) => str(name, v)).join(', ')}]`
          : String(value);
    (spec.section === 'pool' ? out.pool : out.general).push(`${name} = ${text}`);
  }
  return out;
}

export function renderPgdoormanToml(p: PgdoormanTomlInput): string {
  positiveInt('pool_size', p.poolSize);
  positiveInt('worker_threads', p.workerThreads);
  positiveInt('prepared_statements_cache_size', p.preparedStatementsCacheSize, 0);
  positiveInt('max_connections', p.maxClientConnections);
  if (p.poolModes.length === 0) throw new Error('at least one pool mode');
  if (!/^[\d.]+\/\d+$/.test(p.clientCidr))
    throw new Error(`client CIDR "${p.clientCidr}" is not an IPv4 CIDR`);
  const prepared = p.preparedStatementsCacheSize > 0;
  const method = p.clientAuth;
  const tcp = p.clientTls ? 'hostssl' : 'host';
  const team = teamSettings(p.settings ?? {});
  const lines: string[] = [
    `# ${p.header ?? 'written by proxylab'}: PgDoorman ${p.version}`,
    '[general]',
    `host = ${str('host', p.listenAddr)}`,
    `port = ${p.listenPort}`,
    `unix_socket_dir = ${str('unix_socket_dir', p.unixSocketDir)}`,
    `worker_threads = ${p.workerThreads}`,
    `max_connections = ${p.maxClientConnections}`,
    `admin_username = ${str('admin_username', p.admin.username)}`,
    `admin_password = ${str('admin_password', p.admin.password)}`,
    `prepared_statements = ${prepared}`,
    ...(prepared ? [`prepared_statements_cache_size = ${p.preparedStatementsCacheSize}`] : []),
    `server_tls_mode = ${str('server_tls_mode', p.serverTlsMode)}`,
    ...(p.clientTls
      ? [
          'tls_mode = "require"',
          `tls_private_key = ${str('tls_private_key', p.clientTls.keyFile)}`,
          `tls_certificate = ${str('tls_certificate', p.clientTls.certFile)}`,
        ]
      : ['tls_mode = "disable"']),
    ...team.general,
    'log_client_connections = false',
    'log_client_disconnections = false',
    'pg_hba = """',
    `local all all ${method}`,
    `${tcp} all all ${p.clientCidr} ${method}`,
    '"""',
    '',
  ];
  for (const mode of p.poolModes) {
    const pool = pgdoormanPoolName(p.server.dbname, mode);
    lines.push(
      `[pools.${key(pool)}]`,
      `server_host = ${str('server_host', p.server.host)}`,
      `server_port = ${p.server.port}`,
      `server_database = ${str('server_database', p.server.dbname)}`,
      `pool_mode = "${mode}"`,
      ...team.pool,
      '',
      `[[pools.${key(pool)}.users]]`,
      `username = ${str('username', p.user.username)}`,
      `password = ${str('password', p.user.verifier)}`,
      ...(p.user.serverPassword !== null
        ? [
            `server_username = ${str('server_username', p.user.username)}`,
            `server_password = ${str('server_password', p.user.serverPassword)}`,
          ]
        : []),
      `pool_size = ${p.poolSize}`,
      '',
    );
  }
  return lines.join('\n');
}

/**
 * The same configuration with every pool's `pool_size` set to `size` (what a resize writes before
 * `RELOAD`). Only the lines renderPgdoormanToml writes are touched; a text without any is refused.
 */
export function withPoolSize(text: string, size: number): string {
  positiveInt('pool_size', size);
  let n = 0;
  const out = text.replace(/^pool_size = \d+$/gm, () => {
    n++;
    return `pool_size = ${size}`;
  });
  if (n === 0) throw new Error('the PgDoorman configuration has no pool_size line to change');
  return out;
}

/**
 * The same configuration with every pool's `server_port` set to `port` (what re-pointing the pooler
 * to a promoted standby on the same host writes before `RELOAD`). Only the lines renderPgdoormanToml
 * writes are touched; a text without any is refused.
 */
export function withServerPort(text: string, port: number): string {
  positiveInt('server_port', port);
  let n = 0;
  const out = text.replace(/^server_port = \d+$/gm, () => {
    n++;
    return `server_port = ${port}`;
  });
  if (n === 0) throw new Error('the PgDoorman configuration has no server_port line to change');
  return out;
}

/**
 * A SCRAM-SHA-256 verifier for `password` (RFC 5802/7677, the form pg_authid stores and PgDoorman's
 * `password` accepts): `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`, base64. The salt
 * is the caller's (16 random bytes on a host; fixed in tests).
 */
export function scramVerifier(password: string, salt: Buffer, iterations = 4096): string {
  if (salt.length < 8) throw new Error('a SCRAM salt of at least 8 bytes');
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** PostgreSQL's md5 verifier, `md5` + md5(password + username): for a trust-only local stack's placeholder. */
export function md5Verifier(username: string, password: string): string {
  return `md5${createHash('md5')
    .update(password + username)
    .digest('hex')}`;
}
