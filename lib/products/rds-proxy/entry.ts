/**
 * RDS Proxy: AWS runs it in front of the database; no version to probe; pins a session when a client
 * changes session state; whether prepared statements survive its multiplexing is measured, not
 * predicted (AWS documents that it keeps multiplexing extended-protocol connections, 2023-11-10, not
 * whether named statements survive).
 */
import type { ProductEntry, SessionHandling, TargetCapabilities } from '../types';
import { RDS_PROXY_SETTINGS } from './settings';

// RDS Proxy tracks no PostgreSQL parameter: "for PostgreSQL setting a variable leads to session pinning".
const SESSION: SessionHandling = { resetsOnRelease: false, trackedParameters: [], pinsSessions: true };

const CAPABILITIES: TargetCapabilities = {
  pooled: true,
  rollingRestart: null,
  multiplexes: true,
  carriesPreparedStatements: 'measured',
  resizablePool: 'rds-api',
  session: SESSION,
  preparedStatementsSwitch: null,
};

export const RDS_PROXY: ProductEntry = {
  id: 'rds-proxy',
  label: 'RDS Proxy',
  versioned: false,
  kinds: ['rds-proxy'],
  capabilities: () => CAPABILITIES,
  session: () => SESSION,
  prepared: null,
  disruptions: {
    'pooler-pause': { unavailable: 'AWS runs RDS Proxy: it has no PAUSE a lab can send' },
    'pooler-restart': { unavailable: 'AWS runs RDS Proxy: a lab cannot restart it' },
    'aurora-failover': { how: 'the proxy follows the cluster to its new writer (AWS does it)' },
    'rds-reboot-failover': { how: 'the proxy follows the instance to its standby (AWS does it)' },
    'minor-upgrade': {
      how: 'the proxy is not upgraded: it stays up while the engine behind it restarts on the new version, and reconnects to it (AWS does it)',
    },
  },
  settings: RDS_PROXY_SETTINGS,
  sources: [
    'RDS User Guide, "Avoiding pinning an RDS Proxy"',
    'RDS API reference, ConnectionPoolConfiguration and CreateDBProxy',
  ],
};
