/**
 * The disruptions of `proxylab local`, for real on the throwaway stack (the world of the disruption
 * probe, lib/exec/disruption-probe.ts):
 *
 * - `postgres-restart`: the postmaster stopped (fast: SIGINT; immediate: SIGQUIT, crash recovery on
 *   start) and started again on the same port and data directory.
 * - `backend-terminate`: `pg_terminate_backend` of every client backend of the bench role (the
 *   probes' direct sessions and PgBouncer's server connections).
 * - `pooler-pause`: the planned-maintenance recipe on the pooler of each selected pooled target:
 *   PAUSE its transaction pools (PgBouncer returns once their server connections are closed;
 *   PgDoorman only stops handing them out), restart PostgreSQL (fast), RESUME.
 * - `pooler-restart`: each selected target's own pooler replaced as its product documents it
 *   (LocalPooler.rollingRestart): PgBouncer a new process on the same port (so_reuseport, its own
 *   socket directory), then the old one sent the signal its version documents (SIGTERM since 1.23,
 *   SIGINT before: lib/poolers/pgbouncer/signals.ts), put back on its first files after the
 *   window; PgDoorman SIGUSR2, its binary upgrade (./pgdoorman-upgrade.ts).
 * - `primary-failover`: a streaming standby is made before the warm-up (pg_basebackup, not
 *   measured); at T0 the primary is stopped (fast: its WAL reaches the standby before it exits), the
 *   standby promoted (pg_promote), and each selected pooler re-pointed to it as an operator would
 *   (PgBouncer: the ini's [databases] rewritten, RELOAD; PgDoorman: its pools' server_port
 *   rewritten, RELOAD). Direct clients connect to both nodes with libpq's multi-host rule,
 *   target_session_attrs=read-write. After the window the standby is removed and the first primary
 *   started again (its data is from before T0: the run's later steps do not need what the probes
 *   wrote), and the poolers re-pointed back.
 * - `minor-upgrade`: a stand-in, named as such in its events and the plan (`minorUpgradeStandIn`):
 *   when another installed build of the stack's PostgreSQL major has another minor version
 *   ($PROXYLAB_PG_MINOR_BIN, lib/local/binaries.ts findOtherMinorBuild), a fast stop and a start of
 *   the same data directory with that build's postgres (compatible within a major), put back on the
 *   stack's own build after the window; else a fast restart. AWS's preparation is not reproduced.
 *
 * A pooler action on a product whose entry says it cannot undergo it (lib/products `disruptions`), or
 * whose version lacks the means (PgDoorman's PAUSE before 3.3.2), is not available, with the reason.
 * Every pooler event names the pooler it was done to (`PgBouncer bouncer-default 1.24.1: …`).
 *
 * Each stop is one the stack's InfrastructureWatch expects (PostgresCluster.stopPlanned, the
 * pooler's retired processes); a server that does not come back is still a failure.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InfrastructureError } from '../core/errors';
import type { Target } from '../engine/ports';
import {
  pgbenchSelectFloor,
  type DisruptionSession,
  type DisruptionWorld,
  type EventSink,
} from '../exec/disruption-probe';
import type { ProbeEndpoint } from '../exec/pg-probe';
import { psqlQueryOne } from '../exec/psql';
import type { DisruptionAction, DisruptionProbe } from '../suite/disruption';
import type { PlannedStep } from '../suite/expand';
import type { Suite } from '../suite/scenario';
import { minorUpgradeStandInScenario } from '../suite/experiments/disruptions';
import { KINDS } from '../products/kinds';
import { productEntry } from '../products';
import { poolerDriver } from '../poolers/registry';
import { findOtherMinorBuild, type LocalBinaries, type PostgresBuild } from './binaries';
import type { LocalPooler } from './pooler';
import { BENCH_DB, BENCH_USER, startStandby, type PostgresCluster } from './postgres';
import type { LocalStack } from './stack';

/** The disruptions the local stack can do. */
export const LOCAL_DISRUPTIONS: readonly DisruptionAction[] = [
  'postgres-restart',
  'backend-terminate',
  'pooler-pause',
  'pooler-restart',
  'primary-failover',
  'minor-upgrade',
];

/** Finds another minor build of the stack's PostgreSQL major, or null (tests pass a fake). */
export type MinorBuildFinder = (current: PostgresBuild) => PostgresBuild | null;

/** What the local stack does for `minor-upgrade`, with the words its events and the plan say. */
export type MinorUpgradeStandIn =
  | {
      readonly kind: 'other-build';
      readonly from: PostgresBuild;
      readonly to: PostgresBuild;
      readonly what: string;
      readonly words: string;
    }
  | { readonly kind: 'fast-restart'; readonly what: string; readonly words: string };

/** The first event of the stand-in, and the first words of its plan title and events: never "upgrade". */
const STAND_IN = 'stand-in';

/**
 * The local stand-in of a minor upgrade: a restart onto another installed minor build of the same
 * major when `find` sees one, else a fast restart — never called an upgrade when it is not one.
 */
export function minorUpgradeStandIn(
  current: PostgresBuild,
  find: MinorBuildFinder = findOtherMinorBuild,
): MinorUpgradeStandIn {
  const other = find(current);
  const major = current.version.split('.')[0] ?? current.version;
  if (other === null) {
    const what = `fast restart (no second PostgreSQL ${major} minor build installed; a real minor upgrade restarts the engine like this, plus AWS's preparation)`;
    return { kind: 'fast-restart', what, words: `${STAND_IN}: ${what}` };
  }
  const what = `fast restart onto another installed PostgreSQL ${major} minor build, ${current.version} → ${other.version} (${other.bindir}; the same data directory, back on ${current.version} after the window; AWS's preparation is not reproduced)`;
  return { kind: 'other-build', from: current, to: other, what, words: `${STAND_IN}: ${what}` };
}

/**
 * The suite as the local stack runs it: each `minor-upgrade` scenario replaced by its stand-in
 * (local timing, titled by `standIn`'s words, lib/suite/experiments/disruptions.ts). The same suite
 * when it has none.
 */
export function withLocalStandIns(suite: Suite, standIn: MinorUpgradeStandIn): Suite {
  const isMinor = (s: Suite['scenarios'][number]): boolean =>
    s.probe?.kind === 'disruption' && s.probe.disruption.action === 'minor-upgrade';
  if (!suite.scenarios.some(isMinor)) return suite;
  return {
    ...suite,
    scenarios: suite.scenarios.map((s) => (isMinor(s) ? minorUpgradeStandInScenario(standIn.words) : s)),
  };
}

/** `suite` as this stack runs it: with the stand-in its binaries allow (`withLocalStandIns`). */
export function localSuite(suite: Suite, bins: Pick<LocalBinaries, 'bindir' | 'serverVersion'>): Suite {
  return withLocalStandIns(suite, minorUpgradeStandIn({ bindir: bins.bindir, version: bins.serverVersion }));
}

export function localDisruptionWorld(
  stack: LocalStack,
  findMinorBuild: MinorBuildFinder = findOtherMinorBuild,
): DisruptionWorld {
  return {
    unavailable: (step, spec) => unavailable(stack, step, spec),
    open: (spec, steps) => openSession(stack, spec, steps, findMinorBuild),
  };
}

/** The pooler actions: each acts on the pooler of every pooled target of the group, as its product does it. */
const POOLER_ACTIONS: readonly DisruptionAction[] = ['pooler-pause', 'pooler-restart', 'primary-failover'];

/** `PgBouncer bouncer-fast-retry 1.24.1`: what a pooler event names. */
export function poolerName(p: Pick<LocalPooler, 'product' | 'instance' | 'version'>): string {
  return `${poolerDriver(p.product).displayName} ${p.instance} ${p.version}`;
}

/** The poolers behind the group's targets, each once, in the stack's order. */
function groupPoolers(stack: LocalStack, steps: readonly PlannedStep[]): LocalPooler[] {
  const used = new Set(steps.map((s) => stack.poolerFor(s.target)).filter((p) => p !== null));
  return stack.poolers.filter((p) => used.has(p));
}

/** The aliases of a pooler's transaction pools (what PAUSE acts on). */
function transactionAliases(p: LocalPooler): string[] {
  return Object.entries(p.pools)
    .filter(([, mode]) => mode === 'transaction')
    .map(([alias]) => alias);
}

/**
 * Why a pooled target's product cannot undergo `action` here (its entry's `disruptions`, its
 * version's lifecycle), or null.
 */
export function poolerUnavailable(
  action: DisruptionAction,
  descriptor: PlannedStep['descriptor'],
): string | null {
  if (!POOLER_ACTIONS.includes(action) || !descriptor.capabilities.pooled) return null;
  const entry = productEntry(KINDS[descriptor.kind].product);
  const how = entry.disruptions[action];
  if (how === undefined) return `${entry.label} does not undergo ${action}`;
  if ('unavailable' in how) return how.unavailable;
  if (action === 'pooler-pause' && descriptor.version !== null) {
    const driver = poolerDriver(entry.id);
    if (driver.lifecycle.pause(descriptor.version, null) === null)
      return `${entry.label} ${descriptor.version} has no PAUSE on its admin console`;
  }
  return null;
}

function unavailable(stack: LocalStack, step: PlannedStep, spec: DisruptionProbe): string | null {
  const action = spec.disruption.action;
  if (!LOCAL_DISRUPTIONS.includes(action))
    return `${action} is a cloud disruption (an RDS or Aurora API call): run it on a lab with proxylab run`;
  // the database itself is the local stack's whatever its descriptor's placement; a pooler must be local
  if (step.descriptor.placement !== 'local' && step.descriptor.capabilities.pooled)
    return `${step.target.name} is not a target of the local stack`;
  if (
    action === 'pooler-pause' &&
    step.descriptor.capabilities.pooled &&
    !step.descriptor.capabilities.multiplexes
  )
    return 'PAUSE waits until every client of a session pool disconnects (doc/usage.md): not a maintenance recipe for session pools';
  if (action === 'primary-failover' && !fs.existsSync(`${stack.bins.bindir}/pg_basebackup`))
    return `primary-failover needs pg_basebackup beside postgres, not found in ${stack.bins.bindir}`;
  return poolerUnavailable(action, step.descriptor);
}

function endpointOf(target: Target, hosts: ProbeEndpoint['hosts'], readWrite: boolean): ProbeEndpoint {
  const c = target.connection();
  const list = hosts.map((h) => `${h.host}:${h.port}`).join(',');
  return {
    hosts,
    user: c.user,
    dbname: c.dbname,
    sslmode: 'disable',
    targetSessionAttrs: readWrite ? 'read-write' : 'any',
    label: `${list}/${c.dbname}${readWrite ? ' target_session_attrs=read-write' : ''}`,
  };
}

function ledgerAt(port: number): ProbeEndpoint {
  return {
    hosts: [{ host: '127.0.0.1', port }],
    user: BENCH_USER,
    dbname: BENCH_DB,
    sslmode: 'disable',
    targetSessionAttrs: 'read-write',
    label: `ledger 127.0.0.1:${port}/${BENCH_DB}`,
  };
}

/** Fast or immediate stop, then start, with each moment named. */
async function restartPostgres(
  pg: PostgresCluster,
  mode: 'fast' | 'immediate',
  event: EventSink,
): Promise<void> {
  event(
    'stop-issued',
    'local',
    `${mode} shutdown (${mode === 'fast' ? 'SIGINT' : 'SIGQUIT'} to the postmaster)`,
  );
  await pg.stopPlanned(mode);
  event('server-down', 'local', 'postmaster exited');
  event('start-issued', 'local', null);
  await pg.start();
  event('server-up', 'local', 'accepting connections');
}

/** The streaming standby a failover promotes, made before the warm-up (not measured). */
function startFailoverStandby(stack: LocalStack): ReturnType<typeof startStandby> {
  const pg = stack.postgres;
  return startStandby({
    bins: stack.bins,
    baseDir: stack.baseDir,
    runAs: stack.runAs,
    maxConnections: pg.maxConnections,
    superuserReservedConnections: Number(pg.settings.superuser_reserved_connections ?? 3),
    primary: pg,
    name: 'pg-standby',
    excludePorts: new Set(stack.poolers.map((p) => p.port)),
  });
}

/** pg_terminate_backend of every client backend of the bench role, each moment named. */
async function terminateBackends(pg: PostgresCluster, event: EventSink): Promise<void> {
  event('terminate-issued', 'local', `pg_terminate_backend of every client backend of ${BENCH_USER}`);
  const rows = await psqlQueryOne(
    pg.superuserTarget(),
    `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND usename = '${BENCH_USER}' AND pid <> pg_backend_pid()`,
    10000,
  );
  event('terminated', 'local', `${rows[0]?.n ?? '?'} backends`);
}

/**
 * The minor-upgrade stand-in at T0, each moment named: onto the other build, or a fast restart.
 * Returns whether the server now runs the other build.
 */
async function injectMinorStandIn(
  pg: PostgresCluster,
  standIn: MinorUpgradeStandIn,
  event: EventSink,
): Promise<boolean> {
  event(STAND_IN, 'local', standIn.what);
  if (standIn.kind === 'fast-restart') {
    await restartPostgres(pg, 'fast', event);
    return false;
  }
  event(
    'stop-issued',
    'local',
    `fast shutdown (SIGINT to the postmaster), PostgreSQL ${standIn.from.version}`,
  );
  await pg.stopPlanned('fast');
  event('server-down', 'local', 'postmaster exited');
  event(
    'start-issued',
    'local',
    `PostgreSQL ${standIn.to.version} from ${standIn.to.bindir} on the same data directory`,
  );
  await pg.start(undefined, path.join(standIn.to.bindir, 'postgres'));
  event('server-up', 'local', `accepting connections, PostgreSQL ${standIn.to.version}`);
  return true;
}

async function openSession(
  stack: LocalStack,
  spec: DisruptionProbe,
  steps: readonly PlannedStep[],
  findMinorBuild: MinorBuildFinder,
): Promise<DisruptionSession> {
  const pg = stack.postgres;
  const poolers = groupPoolers(stack, steps);
  const action = spec.disruption.action;
  const standIn =
    action === 'minor-upgrade'
      ? minorUpgradeStandIn({ bindir: stack.bins.bindir, version: stack.bins.serverVersion }, findMinorBuild)
      : null;
  let onOtherBuild = false;
  const standby = action === 'primary-failover' ? await startFailoverStandby(stack) : null;
  let primaryPort = pg.port;
  /** Each pooler's events name it: a row of a PgDoorman target shows what was done to PgDoorman. */
  const each = (
    f: (p: LocalPooler, say: (name: string, detail: string) => void) => Promise<void>,
    event: EventSink,
  ) =>
    Promise.all(
      poolers.map((p) => f(p, (name, detail) => event(name, 'local', `${poolerName(p)}: ${detail}`))),
    );
  return {
    endpoint: (step, target) => {
      const c = target.connection();
      const failover = standby !== null && !step.descriptor.capabilities.pooled;
      return endpointOf(
        target,
        failover
          ? [
              { host: c.host, port: pg.port },
              { host: c.host, port: standby.port },
            ]
          : [{ host: c.host, port: c.port }],
        failover,
      );
    },
    ledgerEndpoint: () => ledgerAt(primaryPort),
    inject: async (event) => {
      switch (action) {
        case 'postgres-restart':
          return restartPostgres(pg, spec.disruption.shutdown ?? 'fast', event);
        case 'backend-terminate':
          return terminateBackends(pg, event);
        case 'pooler-pause': {
          await each(async (p, say) => {
            const aliases = transactionAliases(p);
            say('pause-issued', `PAUSE ${aliases.join(', ')}`);
            await p.pause(aliases);
            const drains = poolerDriver(p.product).lifecycle.pause(p.version, null)?.drainsServers ?? false;
            say(
              'paused',
              drains ? 'server connections released and closed' : 'no new server connection handed out',
            );
          }, event);
          await restartPostgres(pg, 'fast', event);
          await each(async (p, say) => {
            const aliases = transactionAliases(p);
            say('resume-issued', `RESUME ${aliases.join(', ')}`);
            await p.resume(aliases);
            say('resumed', 'handing server connections out again');
          }, event);
          return;
        }
        case 'pooler-restart':
          await each((p, say) => p.rollingRestart(say), event);
          return;
        case 'primary-failover': {
          if (standby === null) throw new InfrastructureError('no standby to fail over to');
          event('stop-issued', 'local', `primary 127.0.0.1:${pg.port}: fast shutdown`);
          await pg.stopPlanned('fast');
          event('server-down', 'local', 'primary exited');
          event('promote-issued', 'local', `standby 127.0.0.1:${standby.port}: pg_promote()`);
          await standby.promote();
          primaryPort = standby.port;
          event('promote-finished', 'local', 'the standby accepts writes');
          await each(async (p, say) => {
            await p.repoint(standby.port);
            say('pooler-repointed', `its pools → 127.0.0.1:${standby.port}, RELOAD`);
          }, event);
          return;
        }
        case 'minor-upgrade':
          if (standIn === null) throw new InfrastructureError('no minor-upgrade stand-in chosen');
          onOtherBuild = await injectMinorStandIn(pg, standIn, event);
          return;
        default:
          throw new InfrastructureError(`${action} is not a local disruption`);
      }
    },
    restore: async () => {
      if (action === 'pooler-restart') for (const p of poolers) await p.restoreAfterRoll();
      if (standby !== null) {
        await standby.stop();
        fs.rmSync(`${stack.baseDir}/pg-standby`, { recursive: true, force: true });
        if (pg.plannedDown() !== null) await pg.start();
        primaryPort = pg.port;
        for (const p of poolers) if (p.serverPort() !== pg.port) await p.repoint(pg.port);
      }
      if (onOtherBuild) {
        // back on the stack's own build (outside the window): the later steps and reports name it
        await pg.stopPlanned('fast');
        await pg.start();
        onOtherBuild = false;
      }
      if (pg.plannedDown() !== null)
        throw new InfrastructureError('PostgreSQL is still down after the disruption');
    },
    pgbenchFloor: (target) => pgbenchSelectFloor(stack.executor, target),
  };
}
