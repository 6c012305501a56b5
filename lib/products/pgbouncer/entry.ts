/**
 * PgBouncer: its facts by version (prepared statements, tracked parameters, rolling restart), its
 * settings catalogue (./settings.ts) and how it undergoes each disruption. Sources: doc/config.md and
 * NEWS.md of pgbouncer/pgbouncer (https://www.pgbouncer.org/config.html, /changelog.html).
 */
import type {
  KindFacts,
  ProductEntry,
  ProductSettings,
  RollingRestart,
  SessionHandling,
  SettingValue,
  TargetCapabilities,
} from '../types';
import { versionAtLeast } from '../version';
import { PGBOUNCER_SETTINGS } from './settings';

/** First PgBouncer release whose SIGTERM retires a process for a rolling restart (changelog 1.23.0). */
export const PGBOUNCER_ROLLING_RESTART_SINCE = '1.23';
/** PgBouncer's own default since 1.24; what `on` sets. */
export const PGBOUNCER_MAX_PREPARED_STATEMENTS_ON = 200;
/** First PgBouncer release with max_prepared_statements. */
export const PGBOUNCER_PREPARED_SINCE = '1.21';
/**
 * Parameters PgBouncer restores per client whatever its version (doc/config.md, track_extra_parameters:
 * "By default, PgBouncer tracks client_encoding, datestyle, timezone, standard_conforming_strings and
 * application_name parameters per client"), lowercase as PostgreSQL reports them.
 */
export const PGBOUNCER_TRACKED_PARAMETERS = [
  'client_encoding',
  'datestyle',
  'timezone',
  'standard_conforming_strings',
  'application_name',
] as const;
/**
 * First PgBouncer release with `track_extra_parameters`, whose default (`IntervalStyle`) adds that
 * parameter to the tracked ones (NEWS.md, 1.20.0: "Now PgBouncer also tracks IntervalStyle by default").
 */
export const PGBOUNCER_TRACK_EXTRA_SINCE = '1.20';
/** track_extra_parameters' default (doc/config.md: "Default: IntervalStyle"). */
export const PGBOUNCER_TRACK_EXTRA_DEFAULT = ['intervalstyle'] as const;

function session(k: KindFacts, version: string | null): SessionHandling {
  return {
    resetsOnRelease: k.poolMode === 'session',
    trackedParameters: [
      ...PGBOUNCER_TRACKED_PARAMETERS,
      ...(versionAtLeast(version, PGBOUNCER_TRACK_EXTRA_SINCE) ? PGBOUNCER_TRACK_EXTRA_DEFAULT : []),
    ],
    pinsSessions: false,
  };
}

function capabilities(k: KindFacts, version: string | null, s: ProductSettings): TargetCapabilities {
  const multiplexes = k.poolMode === 'transaction';
  const mps = s.maxPreparedStatements;
  const available = versionAtLeast(version, PGBOUNCER_PREPARED_SINCE);
  const rollingRestart: RollingRestart | null =
    version === null
      ? null
      : versionAtLeast(version, PGBOUNCER_ROLLING_RESTART_SINCE)
        ? 'stops-listening'
        : 'keeps-listening';
  return {
    pooled: true,
    rollingRestart,
    multiplexes,
    carriesPreparedStatements: !multiplexes || (available && mps !== null && mps > 0) ? 'yes' : 'no',
    resizablePool: 'pgbouncer-admin',
    session: session(k, version),
    preparedStatementsSwitch: multiplexes
      ? {
          how: 'pgbouncer-admin',
          available,
          reason: available
            ? null
            : `not available on PgBouncer ${version ?? '(version unknown)'} (needs ≥ ${PGBOUNCER_PREPARED_SINCE})`,
        }
      : null,
  };
}

/**
 * After a failed server login (a connect refused while PostgreSQL restarts counts too), a pool waits
 * `server_login_retry` before it tries again (doc/config.md); its clients wait (or, connecting then,
 * get "server login has been failing") meanwhile. Measured with libpq clients at the defaults: a 0.2 s
 * fast restart gave a 15.3 s wait through PgBouncer 1.18 and 1.24 (2.3 s with server_login_retry = 2).
 * A server that does not answer at all would add `server_connect_timeout` per attempt: not counted
 * (a restarting local or RDS server refuses at once).
 */
function recoveryBoundMs(
  s: Readonly<Record<string, { readonly value: SettingValue | null }>>,
): number | null {
  const retry = s.server_login_retry?.value;
  return typeof retry === 'number' ? retry * 1000 : null;
}

export const PGBOUNCER: ProductEntry = {
  id: 'pgbouncer',
  label: 'PgBouncer',
  versioned: true,
  kinds: ['pgbouncer-transaction', 'pgbouncer-session'],
  capabilities,
  session,
  prepared: { since: PGBOUNCER_PREPARED_SINCE, onValue: PGBOUNCER_MAX_PREPARED_STATEMENTS_ON },
  disruptions: {
    'pooler-pause': { how: 'PAUSE the database on the admin console, restart PostgreSQL, RESUME' },
    'pooler-restart': {
      how: 'a new process on the same port (so_reuseport), then the old one sent SIGTERM (≥ 1.23) or SIGINT (older)',
    },
    'primary-failover': { how: "the ini's [databases] rewritten to the new primary, then RELOAD" },
  },
  settings: PGBOUNCER_SETTINGS,
  recoveryBoundMs,
  sources: [
    'PgBouncer doc/config.md (https://www.pgbouncer.org/config.html)',
    'PgBouncer NEWS.md (https://www.pgbouncer.org/changelog.html): 1.20 IntervalStyle tracked, 1.21 max_prepared_statements, 1.23 rolling restart with SIGTERM, 1.24 max_prepared_statements default 200',
    'pgbouncer/pgbouncer#902 (SIGINT keeps the listening socket before 1.23)',
  ],
};
