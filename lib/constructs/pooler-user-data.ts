/**
 * The one user-data builder for a self-hosted pooler, used by the dedicated pooler host
 * (pooler-host.ts) and by every runner for `on-runners` (runner-fleet.ts): install the pinned
 * release as its product's driver says (PgBouncer: build the upstream tarball after `sha256sum -c`
 * against the published checksum, create the `pgbouncer` system user), write the host config
 * (PoolerHostConfig, no secrets) and run the bootstrap (/opt/proxylab/pooler.js, from the runner
 * bundle), which writes the pooler's configuration, reads the secrets, starts the processes and
 * returns non-zero unless the pooler answers. The script runs under `set -euo pipefail` with a cfn-signal exit trap, so any failure
 * here fails the deploy.
 *
 * Plain bash lines (no CDK): test/integration/cloud-runner-userdata.test.ts renders them from the
 * synthesized template and runs shellcheck on the result.
 */
import type { PoolerRelease, PoolerSourceLocation } from '../poolers/driver';
import type { PoolerHostConfig } from '../poolers/host-config';
import { poolerDriver } from '../poolers/registry';
import { productEntry } from '../products';
import { checkSettings } from '../products/settings';

/** Where the runner bundle's pooler entry lands (unpacked beside runner.js). */
export const POOLER_INSTALL_PATH = '/opt/proxylab/pooler.js';
export function poolerConfigPath(name: string): string {
  return `/etc/proxylab/pooler-${name}.json`;
}

/**
 * Write the host config and run the bootstrap. `config` may hold CDK tokens (secret ARNs, the
 * writer endpoint, the region): they resolve inside the user data, and none of them is a secret.
 */
export function poolerBootstrapCommands(config: PoolerHostConfig): string[] {
  if (!/^[a-z][a-z0-9-]*$/.test(config.name)) throw new Error(`pooler name ${config.name} is not file-safe`);
  checkHostSettings(config);
  const file = poolerConfigPath(config.name);
  const marker = 'PROXYLAB_POOLER_CONFIG';
  return [
    `# pooler ${config.name}: its config (no secrets: the bootstrap reads them from Secrets Manager), then start it and wait until it answers`,
    'mkdir -p /etc/proxylab',
    `cat > ${file} <<'${marker}'`,
    JSON.stringify(config, null, 2),
    marker,
    `chmod 0644 ${file}`,
    `node ${POOLER_INSTALL_PATH} bootstrap --config ${file}`,
  ];
}

/**
 * The lab's settings, checked again against the product's catalogue for the pinned version before
 * they go into user data (validate refused a bad one already; a config built another way must not
 * reach a host). They travel as JSON values: JSON.stringify escapes every line break, so no value can
 * end the heredoc, and the host renders each from its type.
 */
function checkHostSettings(config: PoolerHostConfig): void {
  if (config.settings === undefined) return;
  const cat = productEntry(config.product).settings;
  const problems =
    cat === null
      ? [{ path: `poolers[${config.name}].settings`, message: 'takes no settings' }]
      : checkSettings(cat, config.version, config.settings, `poolers[${config.name}].settings`);
  if (problems.length > 0)
    throw new Error(`pooler ${config.name}: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`);
}

/**
 * Install the release (its product's driver says how) and bootstrap the pooler: what a pooler
 * host and each runner run.
 */
export function poolerUserDataCommands(
  release: PoolerRelease,
  config: PoolerHostConfig,
  /** Where the release's source comes from. @default upstream (its URL) */
  source?: PoolerSourceLocation,
): string[] {
  if (release.version !== config.version)
    throw new Error(`pooler ${config.name}: release ${release.version} is not its version ${config.version}`);
  return [
    ...poolerDriver(release.product).host.installCommands(release, source),
    ...poolerBootstrapCommands(config),
  ];
}
