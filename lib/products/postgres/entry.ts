/** PostgreSQL itself: the `direct` target, no pool; its settings are the database's, not a lab pooler's. */
import type { ProductEntry, SessionHandling, TargetCapabilities } from '../types';

const SESSION: SessionHandling = { resetsOnRelease: false, trackedParameters: [], pinsSessions: false };

const CAPABILITIES: TargetCapabilities = {
  pooled: false,
  rollingRestart: null,
  multiplexes: false,
  carriesPreparedStatements: 'yes',
  resizablePool: null,
  session: SESSION,
  preparedStatementsSwitch: null,
};

export const POSTGRES: ProductEntry = {
  id: 'postgres',
  label: 'PostgreSQL',
  versioned: true,
  kinds: ['direct'],
  capabilities: () => CAPABILITIES,
  session: () => SESSION,
  prepared: null,
  disruptions: {
    'primary-failover': {
      how: "libpq's multi-host list with target_session_attrs=read-write finds the new primary",
    },
  },
  settings: null,
  sources: ['PostgreSQL documentation, libpq connection parameters (target_session_attrs)'],
};
