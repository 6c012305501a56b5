/**
 * The settings a cloud target runs with, as the run request (lib/aws/run-request.ts) carries them to
 * the runners and `proxylab plan` previews them (lib/cost/plan-settings.ts): the lab's
 * (`settings` on its proxies and poolers, checked by validate against lib/products/<product>/
 * settings.ts) and the values proxylab itself sets from lab fields or for its own measurement
 * (`kitSettings`: the catalogue's `setBy` settings). The runner gives both to `describeTarget`, so a
 * cloud plan.json records every target's effective settings (value and whose: lab, default,
 * proxylab) as a local one does.
 *
 * The kit values restate what the stack and the pooler hosts configure — RDS Proxy: the proxy's
 * fields (lib/constructs/proxies.ts); a self-hosted pooler: its host renderer
 * (lib/poolers/<product>/host.ts and config.ts). test/unit/cloud-target-settings.test.ts renders the
 * host files and checks each kit value is what they say. A value only known at boot or per step
 * (the pool size from `poolPercent` and max_connections, PgDoorman's worker threads from the host's
 * vCPUs) is `null`: set by proxylab, recorded without a figure rather than with a guess.
 */
import { z } from 'zod';
import type { ProxyConfig } from './types';
import type { PoolerEndpoint } from '../poolers/endpoint';
import type { PoolMode } from '../poolers/products';
import { poolerDriver } from '../poolers/registry';
import type { SettingValue } from '../products/types';

export type LabSettings = Readonly<Record<string, SettingValue>>;
export type KitSettings = Readonly<Record<string, SettingValue | null>>;

const settingValue = z.union([
  z.number().finite(),
  z.boolean(),
  z.string().max(1000),
  z.array(z.string().max(63)).max(50),
]);
/** A lab's `settings` object in a run request (names and values were checked against the catalogue by validate). */
export const labSettingsSchema = z.record(z.string().max(64), settingValue);
/** proxylab's own values in a run request (null: set by proxylab, figure known only at run time). */
export const kitSettingsSchema = z.record(z.string().max(64), settingValue.nullable());

/**
 * What proxylab sets on an RDS Proxy, by the API's names: the proxy's lab fields
 * (lib/constructs/proxies.ts toPoolSettings), and the authentication it always uses (the database
 * secret, no IAM authentication: `iamAuth: false`, no `defaultAuthScheme`).
 */
export function proxyKitSettings(
  cfg: Pick<
    ProxyConfig,
    | 'maxConnectionsPercent'
    | 'maxIdleConnectionsPercent'
    | 'borrowTimeoutSeconds'
    | 'requireTls'
    | 'debugLogging'
  >,
): KitSettings {
  return {
    MaxConnectionsPercent: cfg.maxConnectionsPercent,
    MaxIdleConnectionsPercent: cfg.maxIdleConnectionsPercent,
    ConnectionBorrowTimeout: cfg.borrowTimeoutSeconds,
    RequireTLS: cfg.requireTls,
    DebugLogging: cfg.debugLogging,
    DefaultAuthScheme: 'NONE',
    IAMAuth: 'DISABLED',
  };
}

/** What the kit values of a pooler depend on: its stack output (PoolerEndpoint), or the lab's pooler. */
export type PoolerKitInput = Pick<PoolerEndpoint, 'product' | 'processes' | 'tls' | 'maxPreparedStatements'>;

/** What proxylab sets on one pool (`mode`) of a self-hosted pooler deployed by the stack. */
export function poolerKitSettings(
  p: PoolerKitInput,
  mode: PoolMode,
  maxPreparedStatements: number | null,
): KitSettings {
  // what the product's host files set (its driver: lib/poolers/<product>/driver.ts host.kitSettings)
  return poolerDriver(p.product).host.kitSettings(p, mode, maxPreparedStatements);
}
