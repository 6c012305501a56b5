/**
 * The one PgBouncer configuration writer (pure text): the ini of process i of N and the userlist.
 * `proxylab local` (lib/local/pgbouncer.ts) and the pooler host's bootstrap (lib/pooler-host) both render
 * through here, so the local integration tests exercise the configuration the cloud runs.
 *
 * Settings whose meaning is not obvious are cited from PgBouncer's doc/config.md
 * (https://www.pgbouncer.org/config.html, the file doc/config.md in pgbouncer/pgbouncer):
 * - `so_reuseport = 1`: "Specifies whether to set the socket option SO_REUSEPORT … This allows
 *   running multiple PgBouncer instances on the same host listening on the same port and having the
 *   kernel distribute the connections automatically" (PgBouncer ≥ 1.12).
 * - `peer_id` + `[peers]`: with several processes behind one port, a cancel request arrives on a new
 *   connection the kernel may hand to another process; with peering, the process that got it
 *   forwards it to the peer whose id is encoded in the cancel key (PgBouncer ≥ 1.19, pull request
 *   pgbouncer/pgbouncer#666; doc/config.md's "Example configs for 2 peered PgBouncer processes"
 *   lists every process — itself included — in `[peers]` by its unix socket directory). Older
 *   releases get no peering: a cancel then reaches the right process only by chance.
 * - `default_pool_size`: "How many server connections to allow per user/database pair" — so each
 *   pool-mode alias (one user) has a pool of this size in EACH process.
 * - `max_user_connections`: "Do not allow more than this many server connections per user
 *   (regardless of database)" — set to the same size, so the transaction and session aliases of
 *   a process SHARE its part of the pooler's share instead of each opening it (two aliases would
 *   otherwise open twice the share of max_connections). Changeable at run time with `SET` on the
 *   admin console (SHOW CONFIG says `yes` on 1.18.0 and 1.25.2, checked); sweeps set both.
 * - `max_prepared_statements` (≥ 1.21): prepared statements tracked per client in transaction and
 *   statement pooling; 0 turns the support off (the default was 0 until 1.24, 200 since).
 * - `server_tls_sslmode` / `client_tls_sslmode`: libpq-style TLS modes towards the server and
 *   demanded from clients; `require` on the client side needs `client_tls_key_file` and
 *   `client_tls_cert_file`.
 * - `ignore_startup_parameters = extra_float_digits`: pgbench/psql/JDBC send it in the startup
 *   packet; PgBouncer refuses unknown startup parameters unless listed here.
 * - `stats_period = 1`: SHOW STATS averages are recomputed every second (the sampler polls at 1 Hz).
 * - Everything else is PgBouncer's default for the version, or the lab's `settings` (its catalogue:
 *   lib/products/pgbouncer/settings.ts); proxylab sets no pool, timeout or failure setting of its own.
 */
import { PGBOUNCER_PREPARED_SINCE } from '../../products/pgbouncer/entry';
import { PGBOUNCER_SETTINGS } from '../../products/pgbouncer/settings';
import { inVersion, settingSpec, settingText } from '../../products/settings';
import type { SettingValue } from '../../products/types';
import type { PgbouncerPoolMode } from './layout';
import { poolDatabaseAlias } from './layout';

/** The first release with peering (`peer_id`, `[peers]`). */
export const PEERING_SINCE = [1, 19, 0] as const;
export type VersionTriple = readonly [number, number, number];

/** `1.25.2`, `PgBouncer 1.18.0`, `1.22` → [1, 25, 2] …; null when no version is found. */
export function parsePgbouncerVersion(text: string): VersionTriple | null {
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  if (!m) return null;
  return [Number(m[1]), Number(m[2]), m[3] === undefined ? 0 : Number(m[3])];
}

/** The first release with `max_prepared_statements` (the fact is PGBOUNCER_PREPARED_SINCE, lib/suite/targets.ts). */
export const MAX_PREPARED_STATEMENTS_SINCE: VersionTriple = releaseTriple(PGBOUNCER_PREPARED_SINCE);

function releaseTriple(version: string): VersionTriple {
  const v = parsePgbouncerVersion(version);
  if (v === null) throw new Error(`"${version}" is not a PgBouncer release number`);
  return v;
}

export function versionAtLeast(v: VersionTriple | null, min: readonly [number, number, number]): boolean {
  if (v === null) return false;
  for (let i = 0; i < 3; i++) {
    const a = v[i] as number;
    const b = min[i] as number;
    if (a !== b) return a > b;
  }
  return true;
}

export function supportsPeering(version: string): boolean {
  return versionAtLeast(parsePgbouncerVersion(version), PEERING_SINCE);
}

export function supportsMaxPreparedStatements(version: string): boolean {
  return versionAtLeast(parsePgbouncerVersion(version), MAX_PREPARED_STATEMENTS_SINCE);
}

export { processPoolSize, totalPoolSize } from '../pool-size';

export type ServerTlsMode = 'disable' | 'prefer' | 'require';

export interface PgbouncerIniInput {
  /** The PgBouncer release that will read this file (`1.18.0`, `1.25.2`): decides peering and max_prepared_statements. */
  readonly version: string;
  /** 0-based. */
  readonly processIndex: number;
  readonly processes: number;
  /** `0.0.0.0`, `127.0.0.1`. */
  readonly listenAddr: string;
  /** The data port every process shares (so_reuseport when processes > 1). */
  readonly listenPort: number;
  /** Unix socket directory of each process, in process order (length = processes). */
  readonly socketDirs: readonly string[];
  readonly server: { readonly host: string; readonly port: number; readonly dbname: string };
  readonly poolModes: readonly PgbouncerPoolMode[];
  /** Per process (processPoolSize). */
  readonly defaultPoolSize: number;
  /** Written only when the version has the setting; null leaves PgBouncer's default. */
  readonly maxPreparedStatements: number | null;
  readonly authType: 'trust' | 'scram-sha-256' | 'md5' | 'plain';
  readonly authFile: string;
  readonly adminUsers: readonly string[];
  readonly statsUsers: readonly string[];
  readonly serverTlsSslmode: ServerTlsMode;
  /** Clients must use TLS (client_tls_sslmode = require) with this key and certificate. */
  readonly clientTls: { readonly keyFile: string; readonly certFile: string } | null;
  /** Per process. */
  readonly logFile: string;
  readonly pidFile: string;
  readonly maxClientConnections: number;
  /** First comment line (who wrote it). */
  readonly header?: string;
  /**
   * so_reuseport even with one process, so a rolling restart can start a second process on the
   * port (the local stand-in's pooler-restart disruption). @default false (set when processes > 1)
   */
  readonly reusePort?: boolean;
  /**
   * The lab's `settings` for this pooler (checked against lib/products/pgbouncer/settings.ts for
   * `version`), written after proxylab's own lines; a name proxylab sets itself (`setBy`) or one the
   * catalogue lacks is refused here too, and every value is rendered from its type (`settingText`).
   * `ignore_startup_parameters` adds to the extra_float_digits proxylab always lists.
   */
  readonly settings?: Readonly<Record<string, SettingValue>>;
}

/** A libpq connect-string value: quoted when it has spaces or quotes (single quotes, `\` escapes). */
function connValue(v: string): string {
  return /^[A-Za-z0-9_./:-]+$/.test(v) ? v : `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** An ini value must stay on one line: a newline would start a new (attacker-chosen) setting. */
function oneLine(name: string, v: string): string {
  if (/[\r\n]/.test(v)) throw new Error(`PgBouncer setting ${name}: value must not contain a line break`);
  return v;
}

export function renderPgbouncerIni(p: PgbouncerIniInput): string {
  if (!Number.isInteger(p.processes) || p.processes < 1)
    throw new Error(`processes must be an integer ≥ 1, got ${p.processes}`);
  if (!Number.isInteger(p.processIndex) || p.processIndex < 0 || p.processIndex >= p.processes)
    throw new Error(`processIndex must be 0–${p.processes - 1}, got ${p.processIndex}`);
  if (p.socketDirs.length !== p.processes)
    throw new Error(`one unix socket directory per process: ${p.socketDirs.length} for ${p.processes}`);
  if (!Number.isInteger(p.defaultPoolSize) || p.defaultPoolSize < 1)
    throw new Error(`default_pool_size must be an integer ≥ 1, got ${p.defaultPoolSize}`);
  if (p.poolModes.length === 0) throw new Error('at least one pool mode');
  const peering = p.processes > 1 && supportsPeering(p.version);
  const mps = p.maxPreparedStatements !== null && supportsMaxPreparedStatements(p.version);
  const socketDir = p.socketDirs[p.processIndex] as string;
  const lines: string[] = [
    `; ${p.header ?? 'written by proxylab'}: PgBouncer ${p.version}, process ${p.processIndex + 1} of ${p.processes}`,
    '[databases]',
  ];
  for (const mode of p.poolModes) {
    const alias = poolDatabaseAlias(p.server.dbname, mode);
    lines.push(
      oneLine(
        alias,
        `${alias} = host=${connValue(p.server.host)} port=${p.server.port} dbname=${connValue(p.server.dbname)} pool_mode=${mode}`,
      ),
    );
  }
  lines.push('');
  if (peering) {
    // Peer ids are 1-based (peer_id 0 means "no peering"); each peer is reached on its unix socket.
    lines.push('[peers]');
    p.socketDirs.forEach((dir, i) =>
      lines.push(oneLine('peers', `${i + 1} = host=${dir} port=${p.listenPort}`)),
    );
    lines.push('');
  }
  const set = (name: string, value: string | number): void => {
    lines.push(oneLine(name, `${name} = ${value}`));
  };
  lines.push('[pgbouncer]');
  set('listen_addr', p.listenAddr);
  set('listen_port', p.listenPort);
  set('unix_socket_dir', socketDir);
  if (p.processes > 1 || p.reusePort === true) set('so_reuseport', 1);
  if (peering) set('peer_id', p.processIndex + 1);
  set('auth_type', p.authType);
  set('auth_file', p.authFile);
  set('admin_users', p.adminUsers.join(','));
  if (p.statsUsers.length > 0) set('stats_users', p.statsUsers.join(','));
  set('pool_mode', p.poolModes[0] as string);
  set('default_pool_size', p.defaultPoolSize);
  set('max_user_connections', p.defaultPoolSize);
  set('max_client_conn', p.maxClientConnections);
  if (mps) set('max_prepared_statements', p.maxPreparedStatements);
  set('server_tls_sslmode', p.serverTlsSslmode);
  if (p.clientTls) {
    set('client_tls_sslmode', 'require');
    set('client_tls_key_file', p.clientTls.keyFile);
    set('client_tls_cert_file', p.clientTls.certFile);
  }
  const team = teamSettings(p.settings ?? {}, p.version);
  set('ignore_startup_parameters', ['extra_float_digits', ...team.ignoreStartupParameters].join(','));
  for (const [name, text] of team.lines) set(name, text);
  set('log_connections', 0);
  set('log_disconnections', 0);
  set('stats_period', 1);
  set('logfile', p.logFile);
  set('pidfile', p.pidFile);
  lines.push('');
  return lines.join('\n');
}

/**
 * The lab's settings as ini lines, each checked against the catalogue (a name proxylab sets, one the
 * catalogue or this version lacks, or a bad value throws: validate.ts reports them before any work).
 */
function teamSettings(
  settings: Readonly<Record<string, SettingValue>>,
  version: string,
): { lines: Array<[string, string]>; ignoreStartupParameters: string[] } {
  const lines: Array<[string, string]> = [];
  let ignoreStartupParameters: string[] = [];
  for (const [name, value] of Object.entries(settings)) {
    const spec = settingSpec(PGBOUNCER_SETTINGS, name);
    if (spec === undefined || spec.setBy !== undefined || !inVersion(spec, version))
      throw new Error(
        `PgBouncer ${version} setting ${name}: not one a lab may set (proxylab validate names why)`,
      );
    if (name === 'ignore_startup_parameters' && Array.isArray(value))
      ignoreStartupParameters = (value as readonly string[]).filter((v) => v !== 'extra_float_digits');
    else lines.push([name, settingText(spec, value)]);
  }
  return { lines, ignoreStartupParameters };
}

/**
 * auth_file contents: one `"user" "password"` line each. doc/config.md ("Authentication file
 * format"): "There should be at least 2 fields, surrounded by double quotes … Double quotes in a
 * field value can be escaped by writing two double quotes."
 */
export function renderUserlist(
  users: ReadonlyArray<{ readonly username: string; readonly password: string }>,
): string {
  const q = (s: string, what: string): string => {
    if (/[\r\n]/.test(s)) throw new Error(`userlist ${what} must not contain a line break`);
    return `"${s.replace(/"/g, '""')}"`;
  };
  return users.map((u) => `${q(u.username, 'user name')} ${q(u.password, 'password')}\n`).join('');
}
