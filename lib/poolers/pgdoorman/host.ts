/**
 * PgDoorman on a pooler host (the driver's `host`, pure: paths, file and unit text;
 * lib/pooler-host/bootstrap.ts writes them, lib/pooler-host/agent.ts reads the pid file and relays
 * to the socket). One multithreaded process per deployment (`<name>-0`).
 *
 *   /etc/proxylab/pgdoorman/<name>-0.toml         the configuration (0600: admin and server passwords)
 *   /etc/proxylab/pgdoorman/<name>.key / .crt     client-side TLS key (0600) and self-signed cert
 *   /run/proxylab-pgd/<name>-0/                   unix socket directory and pid file (RuntimeDirectory)
 *   /var/log/proxylab/pgdoorman-<name>-0.log      its log (stdout, appended by systemd)
 */
import type { PoolerHostFile, PoolerHostLayout, PoolerHostRenderInput, PoolerHostUnit } from '../driver';
import type { PoolerHostConfig } from '../host-config';
import { renderPgdoormanToml, scramVerifier } from './config';

/** The client connections a host process accepts (its kit setting; proxylab runs at most this many clients). */
export const PGDOORMAN_HOST_MAX_CONNECTIONS = 10_000;

/** PgDoorman's paths: the neutral layout plus its configuration file. */
export interface PgdoormanPaths extends PoolerHostLayout {
  readonly configFile: (i: number) => string;
}

export function pgdoormanPaths(name: string, root = '/'): PgdoormanPaths {
  if (!/^[A-Za-z][A-Za-z0-9-]*$/.test(name)) throw new Error(`pooler name "${name}" is not a lab name`);
  const j = (...parts: string[]): string => [root.replace(/\/+$/, ''), ...parts].join('/');
  const confDir = j('etc', 'proxylab', 'pgdoorman');
  const socketDir = (i: number): string => j('run', 'proxylab-pgd', `${name}-${i}`);
  return {
    confDir,
    configFile: (i) => `${confDir}/${name}-${i}.toml`,
    tlsKey: `${confDir}/${name}.key`,
    tlsCert: `${confDir}/${name}.crt`,
    socketDir,
    // PgDoorman in the foreground writes no pid file: the unit's ExecStartPost does.
    pidFile: (i) => `${socketDir(i)}/pg_doorman.pid`,
    logFile: (i) => j('var', 'log', 'proxylab', `pgdoorman-${name}-${i}.log`),
    socketFile: (i, port) => `${socketDir(i)}/.s.PGSQL.${port}`,
  };
}

export const PGDOORMAN_UNIT = 'proxylab-pgdoorman@.service';
export function pgdoormanUnitInstance(name: string, i: number): string {
  return `proxylab-pgdoorman@${name}-${i}.service`;
}

/**
 * The systemd template unit, after upstream's pg_doorman.service (v3.10.7): Type=notify (PgDoorman
 * says READY=1 once it listens; NotifyAccess=exec lets a binary upgrade's child take MAINPID over),
 * stop with SIGTERM, PgDoorman's immediate shutdown, KillMode=mixed. Two choices differ from
 * upstream, which uses `systemctl reload` for a binary upgrade (SIGUSR2): here ExecReload re-reads
 * the configuration (SIGHUP; proxylab resizes pools by rewriting the file and reloading), and a
 * binary upgrade is `kill -USR2` or the admin console's UPGRADE. Never SIGINT: without a TTY it
 * starts a binary upgrade. The pid file the agent reads is written after READY=1.
 */
export function pgdoormanUnit(c: Pick<PoolerHostConfig, 'binaryPath'>, user: string): string {
  return [
    '[Unit]',
    'Description=PgDoorman %i (proxylab pooler)',
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=notify',
    'NotifyAccess=exec',
    `User=${user}`,
    `Group=${user}`,
    'RuntimeDirectory=proxylab-pgd/%i',
    'RuntimeDirectoryMode=0755',
    `ExecStart=${c.binaryPath} /etc/proxylab/pgdoorman/%i.toml`,
    "ExecStartPost=/bin/sh -c 'echo $$MAINPID > /run/proxylab-pgd/%i/pg_doorman.pid'",
    'ExecReload=/bin/kill -HUP $MAINPID',
    'KillSignal=SIGTERM',
    'KillMode=mixed',
    'TimeoutStopSec=15',
    'Restart=on-failure',
    'RestartSec=2',
    'LimitNOFILE=65536',
    'StandardOutput=append:/var/log/proxylab/pgdoorman-%i.log',
    'StandardError=inherit',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

export function pgdoormanUnits(c: Pick<PoolerHostConfig, 'binaryPath'>, user: string): PoolerHostUnit[] {
  return [{ file: PGDOORMAN_UNIT, text: pgdoormanUnit(c, user) }];
}

/**
 * The configuration of the one process (0600): SCRAM for every client (the database user's
 * verifier made here with a fresh salt; PgDoorman logs in to the server with the plain password,
 * TLS required), client TLS with the host's self-signed pair when `tls`.
 */
export function renderPgdoormanHostFiles(input: PoolerHostRenderInput): PoolerHostFile[] {
  const { config } = input;
  if (config.processes !== 1)
    throw new Error(
      `PgDoorman runs one multithreaded process; pooler ${config.name} asks for ${config.processes}`,
    );
  const p = pgdoormanPaths(config.name, input.root);
  const text = renderPgdoormanToml({
    header: `written by proxylab pooler bootstrap for ${config.name}`,
    version: config.version,
    listenAddr: config.listenAddr,
    listenPort: input.dataPort,
    unixSocketDir: p.socketDir(0),
    server: { host: config.serverHost, port: config.serverPort, dbname: input.dbname },
    poolModes: config.poolModes,
    poolSize: input.poolSizePerProcess,
    workerThreads: input.workerThreads,
    preparedStatementsCacheSize: config.maxPreparedStatements,
    clientAuth: 'scram-sha-256',
    clientCidr: config.listenAddr === '127.0.0.1' ? '127.0.0.1/32' : '0.0.0.0/0',
    user: {
      username: input.dbUser.username,
      verifier: scramVerifier(input.dbUser.password, input.random(16)),
      serverPassword: input.dbUser.password,
    },
    admin: input.adminUser,
    serverTlsMode: 'require',
    clientTls: config.tls ? { keyFile: p.tlsKey, certFile: p.tlsCert } : null,
    maxClientConnections: PGDOORMAN_HOST_MAX_CONNECTIONS,
    ...(config.settings !== undefined ? { settings: config.settings } : {}),
  });
  return [{ path: p.configFile(0), text, mode: 0o600 }];
}
