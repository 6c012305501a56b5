/**
 * PgDoorman: one multithreaded process; prepared statements carried by a pool-level cache; session
 * state cleaned when a client changed it. Sources: its configuration reference and changelog
 * (ozontech/pg_doorman, documentation/*, at v3.10.7).
 */
import type {
  KindFacts,
  ProductEntry,
  ProductSettings,
  SessionCleanup,
  SessionHandling,
  SettingValue,
  TargetCapabilities,
} from '../types';
import { versionAtLeast } from '../version';
import { PGDOORMAN_SETTINGS } from './settings';

/**
 * PgDoorman carries prepared statements through transaction pooling with `prepared_statements`
 * (a pool-level cache; on by default): already in 1.7.7, the oldest release in its changelog.
 */
export const PGDOORMAN_PREPARED_SINCE = '1.7.7';

/**
 * PgDoorman's `cleanup_server_connections` (a pool setting, default true; proxylab leaves it): "When
 * enabled and the session was modified, pg_doorman sends: `RESET ROLE`, plus conditionally `RESET
 * ALL` (if SET was used), `DEALLOCATE ALL` (if PREPARE was used), `CLOSE ALL` (if cursors were
 * opened)" — "Prevents state leaking between clients in transaction mode" (the configuration
 * reference pg_doorman 3.10.7 carries; its 3.12.0 changelog turns the setting into off / adaptive /
 * always modes, not pinned here).
 */
export const PGDOORMAN_CLEANUP: readonly SessionCleanup[] = ['role', 'settings', 'prepared', 'cursors'];

// PgDoorman tracks no parameter a client SETs (sync_server_parameters is off by default) but cleans up.
function session(): SessionHandling {
  return {
    resetsOnRelease: false,
    trackedParameters: [],
    pinsSessions: false,
    cleansOnRelease: PGDOORMAN_CLEANUP,
  };
}

function capabilities(k: KindFacts, version: string | null, s: ProductSettings): TargetCapabilities {
  const multiplexes = k.poolMode === 'transaction';
  const mps = s.maxPreparedStatements;
  return {
    pooled: true,
    rollingRestart: null,
    multiplexes,
    // its pool-level cache carries them while `prepared_statements` is on (cache size > 0)
    carriesPreparedStatements:
      !multiplexes || (versionAtLeast(version, PGDOORMAN_PREPARED_SINCE) && mps !== null && mps > 0)
        ? 'yes'
        : 'no',
    resizablePool: 'pgdoorman-reload',
    session: session(),
    // PgDoorman reads prepared_statements at start: no per-step switch (the target runs each cell once)
    preparedStatementsSwitch: null,
  };
}

/**
 * PgDoorman has no login back-off: a checkout after the server is back opens a server connection at
 * once, which may take up to `connect_timeout` (3 s by default, general.md).
 */
function recoveryBoundMs(
  s: Readonly<Record<string, { readonly value: SettingValue | null }>>,
): number | null {
  const connect = s.connect_timeout?.value;
  return typeof connect === 'number' ? connect : null;
}

export const PGDOORMAN: ProductEntry = {
  id: 'pgdoorman',
  label: 'PgDoorman',
  versioned: true,
  kinds: ['pgdoorman-transaction', 'pgdoorman-session'],
  capabilities,
  session,
  prepared: { since: PGDOORMAN_PREPARED_SINCE, onValue: null },
  disruptions: {
    'pooler-pause': { how: 'PAUSE on the admin console, restart PostgreSQL, RESUME (admin-commands.md)' },
    'pooler-restart': {
      how: 'SIGUSR2: the binary upgrade — a new process takes the listener and clients migrate where possible, the old one drains (signals.md)',
    },
    'primary-failover': {
      how: "the pools' server_host/server_port rewritten to the new primary, then RELOAD",
    },
  },
  settings: PGDOORMAN_SETTINGS,
  recoveryBoundMs,
  sources: [
    'PgDoorman configuration reference, documentation/ru/src/reference/{general,pool}.md at v3.10.7',
    'PgDoorman documentation/en/src/operations/signals.md (SIGUSR2 binary upgrade, SIGHUP reload) and observability/admin-commands.md (PAUSE, RESUME) at v3.10.7',
    'PgDoorman changelog (documentation/en/src/changelog.md)',
  ],
};
