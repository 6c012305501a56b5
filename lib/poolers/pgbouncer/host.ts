/**
 * Where a pooler host keeps its PgBouncer files and how systemd runs its processes (pure: paths and
 * unit text; lib/pooler-host/bootstrap.ts writes them, lib/pooler-host/agent.ts reads the pid
 * files and sockets). One pooler per name, so a runner could host several co-located poolers.
 *
 *   /etc/proxylab/pgbouncer/<name>-<i>.ini        process i's configuration (0644, no secrets)
 *   /etc/proxylab/pgbouncer/<name>.userlist       auth_file (0600, the pgbouncer user's)
 *   /etc/proxylab/pgbouncer/<name>.key / .crt     client-side TLS key (0600) and self-signed cert
 *   /run/proxylab-pgb/<name>-<i>/                 process i's unix socket directory and pid file
 *                                                 (systemd's RuntimeDirectory of the unit instance)
 *   /var/log/proxylab/pgbouncer-<name>-<i>.log    process i's log
 */
import type { PoolerHostConfig } from './layout';

export interface PoolerPaths {
  readonly confDir: string;
  readonly iniFile: (i: number) => string;
  readonly userlist: string;
  readonly tlsKey: string;
  readonly tlsCert: string;
  readonly socketDir: (i: number) => string;
  readonly pidFile: (i: number) => string;
  readonly logFile: (i: number) => string;
  /** The socket file PgBouncer creates in its socket dir for `port`: `.s.PGSQL.<port>`. */
  readonly socketFile: (i: number, port: number) => string;
}

/** The host paths of pooler `name`, under `root` (`/` on a host; a temp dir in tests). */
export function poolerPaths(name: string, root = '/'): PoolerPaths {
  if (!/^[A-Za-z][A-Za-z0-9-]*$/.test(name)) throw new Error(`pooler name "${name}" is not a lab name`);
  const j = (...parts: string[]): string => [root.replace(/\/+$/, ''), ...parts].join('/');
  const confDir = j('etc', 'proxylab', 'pgbouncer');
  const socketDir = (i: number): string => j('run', 'proxylab-pgb', `${name}-${i}`);
  return {
    confDir,
    iniFile: (i) => `${confDir}/${name}-${i}.ini`,
    userlist: `${confDir}/${name}.userlist`,
    tlsKey: `${confDir}/${name}.key`,
    tlsCert: `${confDir}/${name}.crt`,
    socketDir,
    pidFile: (i) => `${socketDir(i)}/pgbouncer.pid`,
    logFile: (i) => j('var', 'log', 'proxylab', `pgbouncer-${name}-${i}.log`),
    socketFile: (i, port) => `${socketDir(i)}/.s.PGSQL.${port}`,
  };
}

/** The systemd template unit that runs one PgBouncer process: instance `<name>-<i>`. */
export const PGBOUNCER_UNIT = 'proxylab-pgbouncer@.service';
/** The agent's template unit: instance `<name>`. */
export const AGENT_UNIT = 'proxylab-pooler-agent@.service';

export function pgbouncerUnitInstance(name: string, i: number): string {
  return `proxylab-pgbouncer@${name}-${i}.service`;
}

export function agentUnitInstance(name: string): string {
  return `proxylab-pooler-agent@${name}.service`;
}

/**
 * systemd units. PgBouncer runs in the foreground (no `-d`: systemd supervises it, Type=simple),
 * as the unprivileged `user`. Stop is PgBouncer's "safe shutdown", SIGINT (it stops accepting and
 * exits once every server connection is released), with a short TimeoutStopSec after which systemd
 * sends SIGKILL. Not SIGTERM: since PgBouncer 1.23 that waits for every client to disconnect, and
 * the immediate shutdown is SIGQUIT (lib/poolers/pgbouncer/signals.ts). Each instance's socket directory
 * /run/proxylab-pgb/<name>-<i> is its RuntimeDirectory: created (owned by `user`) at every start,
 * also after a reboot empties /run.
 */
export function pgbouncerUnit(c: Pick<PoolerHostConfig, 'pgbouncerPath'>, user: string): string {
  return [
    '[Unit]',
    'Description=PgBouncer %i (proxylab pooler)',
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `User=${user}`,
    `Group=${user}`,
    'RuntimeDirectory=proxylab-pgb/%i',
    'RuntimeDirectoryMode=0755',
    `ExecStart=${c.pgbouncerPath} /etc/proxylab/pgbouncer/%i.ini`,
    'ExecReload=/bin/kill -HUP $MAINPID',
    'KillSignal=SIGINT',
    'TimeoutStopSec=15',
    'Restart=on-failure',
    'RestartSec=2',
    'LimitNOFILE=65536',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

export function agentUnit(user: string, poolerJs = '/opt/proxylab/pooler.js'): string {
  return [
    '[Unit]',
    'Description=proxylab pooler agent %i (admin relays, per-process CPU)',
    'After=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `User=${user}`,
    `Group=${user}`,
    `ExecStart=/usr/bin/env node ${poolerJs} agent --config /etc/proxylab/pooler-%i.json`,
    'Restart=on-failure',
    'RestartSec=2',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}
