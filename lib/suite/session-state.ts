/**
 * The session-state matrix (pure): which session features a pooler keeps, loses, leaks to another
 * client or refuses, and — on RDS Proxy — which pin the client to its server connection.
 *
 * Each feature is a deterministic two-client program (`steps`): client A sets some session state,
 * client B — on the same pool, narrowed where the target allows so both share one server connection —
 * looks for it and sets its own, and A looks for its own again. The programs are data in
 * ./session-programs.ts (re-exported here); lib/exec/session-probe.ts runs a program against a real
 * server (node-postgres), this module decides what the observations mean:
 *
 * - **works**: A saw its own state whenever it looked, and B never saw it;
 * - **lost**: A did not see its own state in a later transaction (it went with a server connection);
 * - **leaks**: B saw A's state (or A's action reached B's state, as `DISCARD ALL` does on a shared
 *   server connection, or state outlived its transaction);
 * - **errors**: a statement failed with an SQLSTATE (the state could not be set or used);
 * - **pins** (RDS Proxy): the proxy kept the client on its server connection; read afterwards from
 *   `DatabaseConnectionsCurrentlySessionPinned` over the minute the probe held the state (`pinnedIn`).
 *
 * Every expectation names its source and is decided from the target's descriptor (capabilities,
 * version, settings: lib/suite/targets.ts), never from a version written down as the truth.
 * Sources (read 2026-11 through the project's search tool):
 * - PgBouncer's "SQL feature map for pooling modes" (https://www.pgbouncer.org/features.html,
 *   pgbouncer/pgbouncer.github.io features.md): per feature, session pooling Yes, transaction pooling
 *   Yes / Never; protocol-level prepared plans Yes in transaction pooling with max_prepared_statements.
 * - PgBouncer's doc/config.md: `server_reset_query` ("When transaction pooling is used, the
 *   server_reset_query is not used"), `track_extra_parameters` (default IntervalStyle, 1.20),
 *   `max_prepared_statements` (1.21); NEWS.md 1.20.0 / 1.21.0 / 1.22.0.
 * - PgBouncer's src/server.c: a NotificationResponse from a server connection no client is linked to
 *   is skipped ("got packet '%c' from server when not linked").
 * - AWS, "Avoiding pinning an RDS Proxy" (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-pinning.html,
 *   the same list in the RDS user guide): the PostgreSQL conditions and the 16 KB rule quoted below.
 * - AWS Database Blog, "Amazon RDS Proxy multiplexing support for PostgreSQL Extended Query Protocol"
 *   (2023-11): named protocol-level statements are not on the pinning list, and whether they survive
 *   multiplexing is not documented, so that cell is measured, not predicted.
 */
import { sessionFeature, type SessionFeatureInfo } from './session-programs';
import {
  SESSION_OUTCOMES,
  type ProbeOrder,
  type SessionExpectation,
  type SessionFeature,
  type SessionFeatureResult,
  type SessionOutcome,
  type SessionProbeError,
  type SessionProbeStep,
  type SessionStateResult,
} from './session-state-kind';
import { sessionHandling, type SessionCleanup, type TargetDescriptor } from './targets';
import type { Verdict } from './types';

export * from './session-state-kind';
export * from './session-programs';

// ---------------------------------------------------------------------------------------------
// Expectations

/** The statement a cleanup runs (PgDoorman's cleanup_server_connections). */
const CLEANUP_STATEMENT: Record<SessionCleanup, string> = {
  role: 'RESET ROLE',
  settings: 'RESET ALL',
  prepared: 'DEALLOCATE ALL',
  cursors: 'CLOSE ALL',
};

type Handling = ReturnType<typeof sessionHandling>;
/** An expectation without SQLSTATEs or pins. */
const NONE = { sqlstates: [], pins: null } as const;

/** The outcome a target should show for a feature, from what the descriptor says it is and can do. */
export function expectSession(feature: SessionFeature, d: TargetDescriptor): SessionExpectation {
  const f = sessionFeature(feature);
  const c = d.capabilities;
  const s = sessionHandling(d);
  const row = f.pgbouncerRow !== null ? `PgBouncer's feature map, "${f.pgbouncerRow}"` : null;
  const none = NONE;
  if (!c.pooled)
    return {
      ...none,
      outcomes: ['works'],
      why: 'a direct connection is one session: its state stays with it and no other client shares its server process',
      sources: ['postgresql'],
    };
  const cleaned = f.cleanedBy !== undefined && (s.cleansOnRelease ?? []).includes(f.cleanedBy);
  if (!c.multiplexes) return expectSessionPool(f, s, cleaned, row);
  if (s.pinsSessions) return expectPinningProxy(f);
  return expectTransactionPool(f, d, s, cleaned, row);
}

/** A session pool (one server connection per client session). */
function expectSessionPool(
  f: SessionFeatureInfo,
  s: Handling,
  cleaned: boolean,
  row: string | null,
): SessionExpectation {
  const none = NONE;
  if (cleaned && !s.resetsOnRelease && f.scope === 'session')
    return {
      ...none,
      outcomes: ['works'],
      why: `a session pool gives the client one server connection for its whole session, and the pooler resets this state (${CLEANUP_STATEMENT[f.cleanedBy ?? 'settings']}) before the next client gets it`,
      sources: ['pgdoorman-cleanup'],
    };
  if (s.resetsOnRelease || f.scope !== 'session')
    return {
      ...none,
      outcomes: ['works'],
      why:
        'a session pool gives the client one server connection for its whole session' +
        (s.resetsOnRelease
          ? ' and resets it (server_reset_query, DISCARD ALL) before the next client gets it'
          : '') +
        (row ? `; ${row}: Yes in session pooling` : ''),
      sources: s.resetsOnRelease ? ['pgbouncer-features', 'pgbouncer-reset-query'] : ['pgbouncer-features'],
    };
  return {
    ...none,
    outcomes: ['leaks'],
    why: 'a session pool that does not reset a server connection hands its state to the next client',
    sources: ['pgbouncer-reset-query'],
  };
}

/** A proxy that pins a client to its server connection for what AWS lists (RDS Proxy). */
function expectPinningProxy(f: SessionFeatureInfo): SessionExpectation {
  const none = NONE;
  if (f.rdsProxy.pins === null)
    return {
      ...none,
      outcomes: [],
      why: `measured, not predicted: ${f.rdsProxy.condition}`,
      sources: ['rds-proxy-extended-protocol', 'rds-proxy-pinning'],
    };
  return {
    outcomes: ['works'],
    sqlstates: [],
    pins: f.rdsProxy.pins,
    why: f.rdsProxy.pins
      ? `AWS lists "${f.rdsProxy.condition}" as pinning: the client keeps its server connection until it disconnects, so its state works and no other client gets that connection`
      : `${f.rdsProxy.condition}: the state lives inside one transaction, which the proxy keeps on one server connection`,
    sources: ['rds-proxy-pinning'],
  };
}

/** A transaction pool that does not pin (PgBouncer pool_mode = transaction, PgDoorman). */
function expectTransactionPool(
  f: SessionFeatureInfo,
  d: TargetDescriptor,
  s: Handling,
  cleaned: boolean,
  row: string | null,
): SessionExpectation {
  const c = d.capabilities;
  const none = NONE;
  switch (f.scope) {
    case 'transaction':
    case 'statement':
      return {
        ...none,
        outcomes: ['works'],
        why:
          'a transaction pool keeps a transaction on one server connection' +
          (row ? `; ${row}: Yes in transaction pooling` : '') +
          (f.scope === 'transaction' ? ', and the state ends with the transaction' : ''),
        sources: ['pgbouncer-features'],
      };
    case 'protocol':
      if (c.carriesPreparedStatements === 'yes')
        return {
          ...none,
          outcomes: ['works'],
          why: `the pooler carries protocol-level prepared statements (max_prepared_statements ${d.settings.maxPreparedStatements ?? '?'} > 0): each client's names are its own`,
          sources: ['pgbouncer-features', 'pgbouncer-max-prepared-statements'],
        };
      if (c.carriesPreparedStatements === 'no')
        return {
          outcomes: ['errors'],
          sqlstates: ['42P05', '26000'],
          pins: null,
          why: `the pooler does not carry protocol-level prepared statements (${d.version === null ? 'version unknown' : `${d.version}`}${d.settings.maxPreparedStatements === 0 ? ', max_prepared_statements = 0' : ''}): two clients' statements of one name meet on the shared server connection (42P05 already exists) or a client's statement is on another one (26000 does not exist)`,
          sources: ['pgbouncer-features', 'pgbouncer-max-prepared-statements'],
        };
      return { ...none, outcomes: [], why: 'measured, not predicted', sources: [] };
    case 'reset':
      return {
        ...none,
        outcomes: ['leaks'],
        why: "DISCARD ALL runs on the server connection the clients share, so it also resets the other client's state (no reset query runs in transaction pooling)",
        sources: ['pgbouncer-reset-query', 'postgresql'],
      };
    case 'session':
      if (cleaned && f.cleanedBy === 'prepared')
        return {
          ...none,
          outcomes: ['lost', 'leaks'],
          why: `the pooler's cleanup runs DEALLOCATE ALL "if PREPARE was used" when the server connection returns to the pool after the transaction (lost); PgDoorman 3.10.7, measured locally, left a SQL PREPARE on the shared connection (leaks): either is accepted until its documentation and its behaviour agree`,
          sources: ['pgdoorman-cleanup'],
        };
      if (cleaned)
        return {
          ...none,
          outcomes: ['lost'],
          why: `the pooler resets this state (${CLEANUP_STATEMENT[f.cleanedBy ?? 'settings']}) when the server connection returns to the pool after each transaction: A's later transaction does not find it and the next client never sees it`,
          sources: ['pgdoorman-cleanup'],
        };
      if (f.parameter !== undefined && s.trackedParameters.includes(f.parameter))
        return {
          ...none,
          outcomes: ['works'],
          why: `${f.parameter} is a parameter the pooler tracks: it restores each client's value when it hands out a server connection`,
          sources: ['pgbouncer-track-extra-parameters'],
        };
      return {
        ...none,
        outcomes: ['leaks'],
        why:
          `${row ?? 'PgBouncer'}: Never in transaction pooling` +
          (f.parameter !== undefined ? ` (${f.parameter} is not a tracked parameter)` : '') +
          ', and no reset query runs between clients: the next client on that server connection finds the state' +
          (f.id === 'listen-notify'
            ? '; a notification reaching a server connection no client holds is dropped'
            : ''),
        sources:
          f.id === 'listen-notify'
            ? ['pgbouncer-features', 'pgbouncer-reset-query', 'pgbouncer-notification-source']
            : f.parameter !== undefined
              ? ['pgbouncer-features', 'pgbouncer-reset-query', 'pgbouncer-track-extra-parameters']
              : ['pgbouncer-features', 'pgbouncer-reset-query'],
      };
  }
}

/** `leaks`, `works or lost`, `errors (42P05 | 26000)`, `measured`. */
export function describeSessionExpectation(e: SessionExpectation): string {
  if (e.outcomes.length === 0) return 'measured (not predicted)';
  const base = e.outcomes.join(' or ');
  return e.outcomes.includes('errors') && e.sqlstates.length > 0
    ? `${base} (${e.sqlstates.join(' | ')})`
    : base;
}

// ---------------------------------------------------------------------------------------------
// Observations and their meaning

/** SQLSTATE classes that mean the connection or server went away: infrastructure, never a finding. */
export function isInfrastructureSqlstate(sqlstate: string | null): boolean {
  return sqlstate !== null && (sqlstate.startsWith('08') || sqlstate.startsWith('57'));
}

/** Outcome, lost, leaked, first error and sharing, from the steps as run. */
export function classifySession(
  steps: readonly SessionProbeStep[],
): Pick<SessionFeatureResult, 'outcome' | 'lost' | 'leaked' | 'error' | 'shared'> {
  const failed = steps.find((s) => s.sqlstate !== null || s.error !== null);
  const error: SessionProbeError | null = failed
    ? {
        client: failed.client,
        kind: failed.kind,
        sqlstate: failed.sqlstate,
        message: failed.error ?? `SQLSTATE ${failed.sqlstate ?? '?'}`,
      }
    : null;
  const checks = steps.filter((s) => s.role !== null && s.error === null && s.sqlstate === null);
  const leaked = checks.some(
    (s) =>
      ((s.role === 'other' || s.role === 'scope') && s.present === true) ||
      (s.role === 'victim' && s.present === false),
  );
  const lost = checks.some((s) => s.role === 'own' && s.present !== true);
  const outcome: SessionOutcome = error ? 'errors' : leaked ? 'leaks' : lost ? 'lost' : 'works';
  const pidsOf = (client: string): number[] =>
    steps.filter((s) => s.client === client && s.backendPid !== null).map((s) => s.backendPid as number);
  const a = pidsOf('A');
  const b = pidsOf('B');
  const shared = a.length === 0 || b.length === 0 ? null : b.some((p) => a.includes(p));
  return { outcome, lost, leaked, error, shared };
}

/** One line: `leaks: B saw statement_timeout = 41s on A's server process 1234`. */
export function describeSessionResult(r: SessionFeatureResult): string {
  const other = r.steps.find(
    (s) =>
      ((s.role === 'other' || s.role === 'scope') && s.present === true) ||
      (s.role === 'victim' && s.present === false),
  );
  const own = r.steps.find((s) => s.role === 'own' && s.present !== true && s.error === null);
  const shared =
    r.shared === true
      ? 'B shared A’s server connection'
      : r.shared === false
        ? 'B never shared A’s server connection'
        : 'sharing unknown';
  switch (r.outcome) {
    case 'errors':
      return `errors: ${r.error?.client ?? '?'} ${r.error?.kind ?? ''} failed${r.error?.sqlstate ? ` with SQLSTATE ${r.error.sqlstate}` : ''}: ${r.error?.message ?? ''} (${shared})`;
    case 'leaks':
      return `leaks: ${other ? `${other.client} ${other.role === 'victim' ? 'lost its own state' : 'found the state'} (${other.value ?? 'null'}) on server process ${other.backendPid ?? '?'}` : 'state crossed clients'}${r.lost ? '; A also lost its own' : ''} (${shared})`;
    case 'lost':
      return `lost: A's later check read ${own?.value ?? 'null'} on server process ${own?.backendPid ?? '?'} (${shared})`;
    case 'works':
      return `works (${shared})`;
  }
}

/** Sequential for a session pool (B can only share A's server connection after A left), else interleaved. */
export function probeOrder(d: Pick<TargetDescriptor, 'capabilities'>): ProbeOrder {
  return d.capabilities.pooled && !d.capabilities.multiplexes ? 'sequential' : 'interleaved';
}

/**
 * The step's verdict from the expectation and the probe. A leak cannot be observed when B never shared
 * A's server connection: then an expected leak is not judged (held null), never called broken.
 */
export function judgeSession(e: SessionExpectation, r: SessionFeatureResult): Verdict {
  const expected = `${describeSessionExpectation(e)} — ${e.why}`;
  const observed = describeSessionResult(r);
  if (e.outcomes.length === 0) return { expected, observed, held: null };
  if (e.outcomes.includes('leaks') && r.shared === false && r.outcome !== 'leaks')
    return { expected, observed: `${observed}: a leak could not be observed`, held: null };
  let held = e.outcomes.includes(r.outcome);
  if (held && r.outcome === 'errors' && e.sqlstates.length > 0)
    held = r.error?.sqlstate != null && e.sqlstates.includes(r.error.sqlstate);
  return { expected, observed, held };
}

/**
 * The verdict of a session-state step: every feature judged against its own expectation; the step
 * breaks when one feature does, holds when some held and none broke, and is informational otherwise.
 */
export function judgeSessionState(r: SessionStateResult): Pick<Verdict, 'observed' | 'held'> {
  const judged = r.features.map((f) => ({ f, v: judgeSession(f.expected, f) }));
  const count = (o: SessionOutcome): number => r.features.filter((f) => f.outcome === o).length;
  const tally = SESSION_OUTCOMES.map((o) => `${count(o)} ${o}`).join(', ');
  const broke = judged.filter((j) => j.v.held === false);
  const held = broke.length > 0 ? false : judged.some((j) => j.v.held === true) ? true : null;
  const observed =
    `${r.features.length} features: ${tally}` +
    (broke.length > 0
      ? `; broke: ${broke.map((j) => `${j.f.feature} (expected ${describeSessionExpectation(j.f.expected)}, ${describeSessionResult(j.f)})`).join('; ')}`
      : '');
  return { observed, held };
}

// ---------------------------------------------------------------------------------------------
// Pins (RDS Proxy), read afterwards from CloudWatch

export const PINNED_METRIC = 'DatabaseConnectionsCurrentlySessionPinned';

export interface PinObservation {
  /** true: some minute fully inside the window showed a pinned connection; false: every such minute 0; null: unknown. */
  readonly pinned: boolean | null;
  /** Where it was read, in words (`CloudWatch DatabaseConnectionsCurrentlySessionPinned (Sum) …`). */
  readonly source: string;
  readonly detail: string;
}

/**
 * Whether the probe's session was pinned, from the metric's points (period starts, one per minute):
 * only periods that lie entirely inside the window count, so a neighbouring step's pin is never
 * charged to this one (the probe holds its state for a whole aligned minute on a target that pins).
 * No such period with data: unknown (null), never "not pinned".
 */
export function pinnedIn(
  points: ReadonlyArray<readonly [string, number]>,
  window: { readonly start: string; readonly end: string },
  periodSec = 60,
): Pick<PinObservation, 'pinned' | 'detail'> {
  const start = Date.parse(window.start);
  const end = Date.parse(window.end);
  const inside = points.filter(([t]) => {
    const at = Date.parse(t);
    return at >= start && at + periodSec * 1000 <= end;
  });
  if (inside.length === 0)
    return {
      pinned: null,
      detail: `no ${periodSec}-s datapoint lies inside ${window.start} – ${window.end}`,
    };
  const max = Math.max(...inside.map(([, v]) => v));
  return {
    pinned: max >= 1,
    detail: `max ${max} over ${inside.length} minute(s) from ${inside[0]?.[0] ?? '?'}`,
  };
}
