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
 *
 * A pooler action on a product whose entry says it cannot undergo it (lib/products `disruptions`), or
 * whose version lacks the means (PgDoorman's PAUSE before 3.3.2), is not available, with the reason.
 * Every pooler event names the pooler it was done to (`PgBouncer bouncer-default 1.24.1: …`).
 *
 * Each stop is one the stack's InfrastructureWatch expects (PostgresCluster.stopPlanned, the
 * pooler's retired processes); a server that does not come back is still a failure.
 */
import * as fs from 'node:fs';
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
import { KINDS } from '../products/kinds';
import { productEntry } from '../products';
import { poolerDriver } from '../poolers/registry';
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
];

export function localDisruptionWorld(stack: LocalStack): DisruptionWorld {
  return {
    unavailable: (step, spec) => unavailable(stack, step, spec),
    open: (spec, steps) => openSession(stack, spec, steps),
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

async function openSession(
  stack: LocalStack,
  spec: DisruptionProbe,
  steps: readonly PlannedStep[],
): Promise<DisruptionSession> {
  const pg = stack.postgres;
  const poolers = groupPoolers(stack, steps);
  const action = spec.disruption.action;
  const standby =
    action === 'primary-failover'
      ? await startStandby({
          bins: stack.bins,
          baseDir: stack.baseDir,
          runAs: stack.runAs,
          maxConnections: pg.maxConnections,
          superuserReservedConnections: Number(pg.settings.superuser_reserved_connections ?? 3),
          primary: pg,
          name: 'pg-standby',
          excludePorts: new Set(stack.poolers.map((p) => p.port)),
        })
      : null;
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
        case 'backend-terminate': {
          event('terminate-issued', 'local', `pg_terminate_backend of every client backend of ${BENCH_USER}`);
          const rows = await psqlQueryOne(
            pg.superuserTarget(),
            `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND usename = '${BENCH_USER}' AND pid <> pg_backend_pid()`,
            10000,
          );
          event('terminated', 'local', `${rows[0]?.n ?? '?'} backends`);
          return;
        }
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
      if (pg.plannedDown() !== null)
        throw new InfrastructureError('PostgreSQL is still down after the disruption');
    },
    pgbenchFloor: (target) => pgbenchSelectFloor(stack.executor, target),
  };
}
