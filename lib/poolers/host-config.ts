/**
 * The contract between the stack, the pooler host and the runners for one self-hosted pooler
 * deployment, whatever its product (pure: types and constants, no I/O). The stack
 * (lib/constructs) writes a `PoolerHostConfig` into user data as /etc/proxylab/pooler-<name>.json;
 * the bootstrap and the agent (lib/pooler-host) read it on the host and ask the product's driver
 * (`config.product`) for the files, units and sockets.
 *
 * Older user data wrote `pgbouncerPath` and no `product` (PgBouncer was the only product); the
 * bootstrap's parser still reads that form (lib/pooler-host/bootstrap.ts).
 */
import type { SettingValue } from '../products/types';
import type { PoolMode, PoolerPlacement, PoolerProduct } from './products';

/**
 * What user data writes to /etc/proxylab/pooler-<name>.json on a pooler host (or a runner, for
 * on-runners) before `node /opt/proxylab/pooler.js bootstrap --config <that file>` runs. No secrets:
 * the bootstrap reads them from Secrets Manager.
 */
export interface PoolerHostConfig {
  readonly name: string;
  /** Whose driver renders the files and units (lib/poolers/registry.ts). */
  readonly product: PoolerProduct;
  readonly placement: PoolerPlacement;
  readonly region: string;
  /** Master credentials of the database (JSON secret: username, password, dbname, host, port). */
  readonly dbSecretArn: string;
  /** The pooler admin/stats user (JSON secret: username, password). */
  readonly adminSecretArn: string;
  /** The database writer (Aurora writer endpoint or the RDS instance endpoint). */
  readonly serverHost: string;
  readonly serverPort: number;
  /** `0.0.0.0` on a dedicated host, `127.0.0.1` on runners. */
  readonly listenAddr: string;
  readonly poolModes: readonly PoolMode[];
  readonly processes: number;
  /**
   * Worker threads of each process of a multithreaded product (PgDoorman `worker_threads`); null:
   * the host's vCPU count, read at boot. Absent in host configs written before PgDoorman (PgBouncer
   * has one thread per process).
   */
  readonly workerThreads?: number | null;
  /** The lab's share of max_connections for this pooler in total (not divided). */
  readonly poolPercent: number;
  /** Deployments that split poolPercent: poolerDeployments(placement, runner count). */
  readonly sharedBy: number;
  readonly maxPreparedStatements: number;
  readonly tls: boolean;
  /** The installed binary (from the pinned release: the driver's `host.binaryPath`). */
  readonly binaryPath: string;
  readonly version: string;
  /**
   * The lab's `settings` for this pooler (checked by validate against lib/products/<product>/
   * settings.ts for `version`), typed JSON values the driver renders into the configuration file
   * (`settingText` / TOML literals), never text pasted in. Absent: none (all defaults; also host
   * configs written before settings existed). The bootstrap checks them again against the catalogue.
   */
  readonly settings?: Readonly<Record<string, SettingValue>>;
}

/** The agent's systemd template unit (product-neutral): instance `<name>`. */
export const AGENT_UNIT = 'proxylab-pooler-agent@.service';

export function agentUnitInstance(name: string): string {
  return `proxylab-pooler-agent@${name}.service`;
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
