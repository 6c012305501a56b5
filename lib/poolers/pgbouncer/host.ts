/**
 * PgBouncer on a pooler host (the driver's `host`, pure: paths, file and unit text;
 * lib/pooler-host/bootstrap.ts writes them, lib/pooler-host/agent.ts reads the pid files and
 * sockets). One pooler per name, so a runner could host several co-located poolers.
 *
 *   /etc/proxylab/pgbouncer/<name>-<i>.ini        process i's configuration (0644, no secrets)
 *   /etc/proxylab/pgbouncer/<name>.userlist       auth_file (0600, the pgbouncer user's)
 *   /etc/proxylab/pgbouncer/<name>.key / .crt     client-side TLS key (0600) and self-signed cert
 *   /run/proxylab-pgb/<name>-<i>/                 process i's unix socket directory and pid file
 *                                                 (systemd's RuntimeDirectory of the unit instance)
 *   /var/log/proxylab/pgbouncer-<name>-<i>.log    process i's log
 *
 * A rolling restart's second generation (`rolled`) of process i is instance `<name>-<i>r` of the same
 * template unit: `<name>-<i>r.ini`, /run/proxylab-pgb/<name>-<i>r/, `pgbouncer-<name>-<i>r.log`.
 */
import type {
  PoolerHostFile,
  PoolerHostLayout,
  PoolerHostRenderInput,
  PoolerHostUnit,
  PoolerRollingGeneration,
} from '../driver';
import type { PoolerHostConfig } from '../host-config';
import { renderPgbouncerIni, renderUserlist } from './config';

/** The client connections a host process accepts (its kit setting; proxylab runs at most this many clients). */
export const PGBOUNCER_HOST_MAX_CLIENT_CONN = 10_000;

/** PgBouncer's paths: the neutral layout (the socket file is `.s.PGSQL.<port>`) plus its ini files and userlist. */
export interface PoolerPaths extends PoolerHostLayout {
  readonly iniFile: (i: number) => string;
  readonly userlist: string;
}

/**
 * The host paths of pooler `name`, under `root` (`/` on a host; a temp dir in tests); `rolled`: the
 * second generation's (a rolling restart's replacement of each process).
 */
export function poolerPaths(name: string, root = '/', rolled = false): PoolerPaths {
  if (!/^[A-Za-z][A-Za-z0-9-]*$/.test(name)) throw new Error(`pooler name "${name}" is not a lab name`);
  const j = (...parts: string[]): string => [root.replace(/\/+$/, ''), ...parts].join('/');
  const confDir = j('etc', 'proxylab', 'pgbouncer');
  const g = rolled ? 'r' : '';
  const socketDir = (i: number): string => j('run', 'proxylab-pgb', `${name}-${i}${g}`);
  const iniFile = (i: number): string => `${confDir}/${name}-${i}${g}.ini`;
  return {
    confDir,
    iniFile,
    configFile: iniFile,
    userlist: `${confDir}/${name}.userlist`,
    tlsKey: `${confDir}/${name}.key`,
    tlsCert: `${confDir}/${name}.crt`,
    socketDir,
    pidFile: (i) => `${socketDir(i)}/pgbouncer.pid`,
    logFile: (i) => j('var', 'log', 'proxylab', `pgbouncer-${name}-${i}${g}.log`),
    socketFile: (i, port) => `${socketDir(i)}/.s.PGSQL.${port}`,
  };
}

/** The systemd template unit that runs one PgBouncer process: instance `<name>-<i>`. */
export const PGBOUNCER_UNIT = 'proxylab-pgbouncer@.service';
export function pgbouncerUnitInstance(name: string, i: number, rolled = false): string {
  return `proxylab-pgbouncer@${name}-${i}${rolled ? 'r' : ''}.service`;
}

/** The second generation a rolling restart starts process i in (the driver's `host.rollingGeneration`). */
export const PGBOUNCER_ROLLING_GENERATION: PoolerRollingGeneration = {
  layout: (name, root) => poolerPaths(name, root, true),
  processUnit: (name, i) => pgbouncerUnitInstance(name, i, true),
};

/**
 * systemd units. PgBouncer runs in the foreground (no `-d`: systemd supervises it, Type=simple),
 * as the unprivileged `user`. Stop is PgBouncer's "safe shutdown", SIGINT (it stops accepting and
 * exits once every server connection is released), with a short TimeoutStopSec after which systemd
 * sends SIGKILL. Not SIGTERM: since PgBouncer 1.23 that waits for every client to disconnect, and
 * the immediate shutdown is SIGQUIT (lib/poolers/pgbouncer/signals.ts). Each instance's socket directory
 * /run/proxylab-pgb/<name>-<i> is its RuntimeDirectory: created (owned by `user`) at every start,
 * also after a reboot empties /run.
 */
export function pgbouncerUnit(c: Pick<PoolerHostConfig, 'binaryPath'>, user: string): string {
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
    `ExecStart=${c.binaryPath} /etc/proxylab/pgbouncer/%i.ini`,
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

/** The template unit of PgBouncer's processes. */
export function pgbouncerUnits(c: Pick<PoolerHostConfig, 'binaryPath'>, user: string): PoolerHostUnit[] {
  return [{ file: PGBOUNCER_UNIT, text: pgbouncerUnit(c, user) }];
}

/**
 * The userlist (0600: passwords) and one ini per process (0644, no secrets): scram-sha-256 for
 * clients, TLS to the server, client TLS with the host's self-signed pair when `tls`.
 */
export function renderPgbouncerHostFiles(input: PoolerHostRenderInput): PoolerHostFile[] {
  const { config } = input;
  const p = poolerPaths(config.name, input.root);
  const socketDirs = Array.from({ length: config.processes }, (_, i) => p.socketDir(i));
  const files: PoolerHostFile[] = [
    { path: p.userlist, text: renderUserlist([input.dbUser, input.adminUser]), mode: 0o600 },
  ];
  // generation 0 for every process, then generation 1 (a rolling restart's replacement: its own
  // socket directory and pid file, the others' sockets as its peers)
  for (const rolled of [false, true]) {
    const g = poolerPaths(config.name, input.root, rolled);
    for (let i = 0; i < config.processes; i++) {
      const dirs = socketDirs.map((d, j) => (j === i ? g.socketDir(i) : d));
      files.push({ path: g.iniFile(i), text: processIni(input, i, dirs, g), mode: 0o644 });
    }
  }
  return files;
}

function processIni(
  input: PoolerHostRenderInput,
  i: number,
  socketDirs: readonly string[],
  g: PoolerPaths,
): string {
  const { config } = input;
  const p = poolerPaths(config.name, input.root);
  return renderPgbouncerIni({
    header: `written by proxylab pooler bootstrap for ${config.name}`,
    version: config.version,
    processIndex: i,
    processes: config.processes,
    listenAddr: config.listenAddr,
    listenPort: input.dataPort,
    socketDirs,
    server: { host: config.serverHost, port: config.serverPort, dbname: input.dbname },
    poolModes: config.poolModes,
    defaultPoolSize: input.poolSizePerProcess,
    maxPreparedStatements: config.maxPreparedStatements,
    authType: 'scram-sha-256',
    authFile: p.userlist,
    adminUsers: [input.adminUser.username],
    statsUsers: [input.adminUser.username],
    serverTlsSslmode: 'require',
    clientTls: config.tls ? { keyFile: p.tlsKey, certFile: p.tlsCert } : null,
    logFile: g.logFile(i),
    pidFile: g.pidFile(i),
    maxClientConnections: PGBOUNCER_HOST_MAX_CLIENT_CONN,
    // even one process: a rolling restart binds a second one to the port beside it
    reusePort: true,
    ...(config.settings !== undefined ? { settings: config.settings } : {}),
  });
}
