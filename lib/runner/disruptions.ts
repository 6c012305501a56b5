/**
 * The disruptions of the cloud runner (the world of the disruption probe,
 * lib/exec/disruption-probe.ts), on the lab's own database only, named by the run request:
 *
 * - `aurora-failover`: FailoverDBCluster with TargetDBInstanceIdentifier = the cluster's first
 *   reader at T0 (read from DescribeDBClusters, so each repetition fails over to the instance that
 *   is a reader then: no fail-back between repetitions). The botocore model: "The name of the DB
 *   instance to promote to the primary DB instance".
 * - `rds-reboot-failover`: RebootDBInstance with ForceFailover ("Specifies whether the reboot is
 *   conducted through a Multi-AZ failover. Constraint: You can't enable force failover if the
 *   instance isn't configured for Multi-AZ").
 * - `rds-reboot`: RebootDBInstance without it.
 * - `minor-upgrade`: ModifyDBCluster (Aurora) / ModifyDBInstance (RDS) to the lowest minor
 *   ValidUpgradeTarget of DescribeDBEngineVersions, ApplyImmediately (./minor-upgrade.ts).
 * - `blue-green-switchover`: CreateBlueGreenDeployment when the group opens (not measured),
 *   SwitchoverBlueGreenDeployment at T0, the deployment and the old blue deleted when it is
 *   restored, whatever happened (./blue-green.ts).
 * - `pooler-restart`: no AWS call: the rolling restart of the group's self-hosted poolers through
 *   their hosts' agents (./pooler-roll.ts).
 *
 * Server-side events on the run's clock: the API call (sent, answered), the writer polled through the
 * window (DescribeDBClusters' IsClusterWriter; DescribeDBInstances' status and AvailabilityZone:
 * a Multi-AZ failover moves the primary to the standby's zone), and, after the window, DescribeEvents
 * of the cluster, each instance and each proxy from the group's start, read again until two reads
 * agree (./rds-events.ts; RDS stamps each event's Date; the runner keeps time with chrony and Amazon
 * Time Sync, which `proxylab doctor` checks). They are stored in every step of the group
 * (DisruptionResult.events). Before the next group the database must be `available` again — on
 * Aurora the cluster and every instance (waitAvailable) — or the run ends as an infrastructure failure.
 *
 * The runner role may call exactly these actions on the lab's ARNs (lib/constructs/runner-asset.ts).
 */
import { FailoverDBClusterCommand, RebootDBInstanceCommand, type RDSClient } from '@aws-sdk/client-rds';
import { InfrastructureError } from '../core/errors';
import type { Target } from '../engine/ports';
import {
  targetProbeEndpoint,
  type DisruptionSession,
  type DisruptionWorld,
  type EventSink,
} from '../exec/disruption-probe';
import { cloudDisruptionUnavailable } from '../config/disruptions';
import type { DatabaseResources } from '../aws/runner-args';
import type { DisruptionAction, DisruptionProbe } from '../suite/disruption';
import type { PlannedStep } from '../suite/expand';
import { minorUpgrade } from './minor-upgrade';
import {
  prepareBlueGreen,
  settleDeployment,
  switchover,
  teardownBlueGreen,
  type BlueGreenDeploymentRun,
  type BlueGreenOptions,
} from './blue-green';
import { poolerRollSession, type PoolerRollDeps } from './pooler-roll';
import { disruptionAction } from '../suite/disruption-actions';
import { readRdsEventsUntilStable, type RdsEventSource } from './rds-events';
import { clusterState, instanceState, type ClusterState } from './rds-state';

export interface CloudDisruptionOptions {
  readonly rds: RDSClient;
  /** The lab's database as the request names it; null: an older CLI did not (nothing to disrupt). */
  readonly database: DatabaseResources | null;
  /** The lab's RDS Proxies (DBProxyName): their events are read too. */
  readonly proxyNames: readonly string[];
  /** Runners of the run: a disruption is injected by one runner only. */
  readonly runnerCount: number;
  /** Where the ledger is written and read: the writer endpoint (direct). */
  readonly ledger: Target;
  /** Wall clock (the run's), and a sleep that ends early when `signal` aborts. */
  readonly now: () => Date;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** How often the writer is polled through the window. @default 1000 */
  readonly pollMs?: number;
  /**
   * How long the database may take to be `available` again after the window (Aurora: the cluster,
   * its writer and every instance). @default 1_200_000 (20 min)
   */
  readonly settleMs?: number;
  /** At most this many reads of a group's RDS events (./rds-events.ts). @default RDS_EVENT_READS (4) */
  readonly eventReads?: number;
  /** Between two reads of a group's RDS events. @default RDS_EVENT_READ_DELAY_MS (30 s) */
  readonly eventReadDelayMs?: number;
  /** pgbench's SELECT 1 p50 on a target (the runner's executor); absent: not measured. */
  readonly pgbenchFloor?: (target: Target) => Promise<number | null>;
  /**
   * Creates the ledger table on the writer if it is not there (the probe's own DDL), before a
   * Blue/Green deployment copies the database: on Aurora the green copy follows the blue by logical
   * replication, and "the database schema and DDL commands are not replicated" (PostgreSQL docs,
   * "Logical Replication — Restrictions"), so a table made after the copy would be missing on the
   * green the clients write to after the switchover. Absent: not made before (the group makes it).
   */
  readonly ensureLedger?: () => Promise<void>;
  /** A Blue/Green switchover's waits (./blue-green.ts); absent: its defaults. */
  readonly blueGreen?: Pick<BlueGreenOptions, 'blueGreenPollMs' | 'createTimeoutMs' | 'deleteTimeoutMs'>;
  /** The lab's pooler hosts and their control keys (`pooler-restart`, ./pooler-roll.ts); absent: none. */
  readonly poolerRoll?: PoolerRollDeps;
}

/**
 * Why the runner cannot inject `action` into this lab, or null: lib/config/disruptions.ts, where the
 * plan before a run asks the same question.
 */
export function cloudUnavailable(
  action: DisruptionAction,
  o: Pick<CloudDisruptionOptions, 'database' | 'runnerCount' | 'poolerRoll'>,
): string | null {
  return cloudDisruptionUnavailable(action, { ...o, poolers: o.poolerRoll?.poolers ?? [] });
}

export function cloudDisruptionWorld(o: CloudDisruptionOptions): DisruptionWorld {
  return {
    unavailable: (_step: PlannedStep, spec: DisruptionProbe) => cloudUnavailable(spec.disruption.action, o),
    open: async (spec, steps, _targets, log) => {
      const record = disruptionAction(spec.disruption.action);
      // on the pooler hosts, through their agents: no AWS call, nothing to wait for after
      if (record.onPoolerHosts === true && o.poolerRoll)
        return poolerRollSession({ roll: o.poolerRoll, ledger: o.ledger, ...pgbenchFloorOf(o) }, steps);
      // an action that replaces the database (a Blue/Green switchover): its deployment is created
      // before the group (not measured), after the ledger table it must copy
      const db = o.database;
      let bg: BlueGreenDeploymentRun | null = null;
      if (record.replacesDatabase === true && db !== null) {
        await o.ensureLedger?.();
        bg = await prepareBlueGreen(blueGreenOptions(o), db, log);
      }
      return openSession(o, spec, bg, log);
    },
  };
}

function blueGreenOptions(o: CloudDisruptionOptions): BlueGreenOptions {
  return {
    rds: o.rds,
    now: o.now,
    sleep: o.sleep,
    ...(o.pollMs !== undefined ? { pollMs: o.pollMs } : {}),
    ...o.blueGreen,
  };
}

function pgbenchFloorOf(o: CloudDisruptionOptions): Pick<CloudDisruptionOptions, 'pgbenchFloor'> {
  return o.pgbenchFloor ? { pgbenchFloor: o.pgbenchFloor } : {};
}

function openSession(
  o: CloudDisruptionOptions,
  spec: DisruptionProbe,
  bg: BlueGreenDeploymentRun | null = null,
  log: (line: string) => void = () => undefined,
): DisruptionSession {
  const db = o.database;
  if (db === null) throw new InfrastructureError('no database named to disrupt');
  const openedAt = o.now();
  let said: EventSink | null = null;
  let timelineNote: string | null = null;
  return {
    endpoint: (_step, target) => targetProbeEndpoint(target),
    ledgerEndpoint: () => targetProbeEndpoint(o.ledger),
    inject: async (event, signal) => {
      said = event;
      // Polled until the change is seen or the recovery window is over: the clients keep writing.
      const deadline = o.now().getTime() + spec.recoverySec * 1000;
      switch (spec.disruption.action) {
        case 'aurora-failover':
          return auroraFailover(o, db, event, signal, deadline);
        case 'rds-reboot-failover':
          return rdsReboot(o, db, true, event, signal, deadline);
        case 'rds-reboot':
          return rdsReboot(o, db, false, event, signal, deadline);
        case 'minor-upgrade':
          return minorUpgrade(o, db, event, signal, deadline);
        case 'blue-green-switchover':
          if (bg === null) throw new InfrastructureError('no Blue/Green deployment was created');
          return switchover(
            blueGreenOptions(o),
            bg,
            spec.disruption.switchoverTimeoutSec,
            event,
            signal,
            deadline,
          );
        default:
          throw new InfrastructureError(`${spec.disruption.action} is not a cloud disruption`);
      }
    },
    restore: async () => {
      try {
        if (bg !== null) await settleDeployment(blueGreenOptions(o), bg, o.settleMs ?? 1_200_000, log);
        await waitAvailable(o, db);
      } finally {
        // on success and on failure: nothing of the deployment may stay billable
        if (bg !== null) await teardownBlueGreen(blueGreenOptions(o), bg, db, log);
      }
      if (said !== null)
        timelineNote = await readRdsEventsUntilStable(
          {
            rds: o.rds,
            now: o.now,
            sleep: (ms) => o.sleep(ms),
            ...(o.eventReads !== undefined ? { reads: o.eventReads } : {}),
            ...(o.eventReadDelayMs !== undefined ? { delayMs: o.eventReadDelayMs } : {}),
          },
          [...eventSources(o, db), ...(bg !== null ? [['blue-green-deployment', bg.id] as const] : [])],
          openedAt,
          said,
        );
    },
    timelineNote: () => timelineNote,
    ...(o.pgbenchFloor ? { pgbenchFloor: o.pgbenchFloor } : {}),
  };
}

async function auroraFailover(
  o: CloudDisruptionOptions,
  db: DatabaseResources,
  event: EventSink,
  signal: AbortSignal,
  deadline: number,
): Promise<void> {
  const clusterId = db.clusterId as string;
  const before = await clusterState(o.rds, clusterId);
  // The lab's own order (writer first) among the readers the cluster has now.
  const target = [...db.instanceIds, ...before.readers].find((id) => before.readers.includes(id));
  if (target === undefined)
    throw new InfrastructureError(
      `cluster ${clusterId} has no reader to fail over to (writer ${before.writer ?? '?'})`,
    );
  event('api-call', 'api', `FailoverDBCluster ${clusterId} → ${target} (writer ${before.writer ?? '?'})`);
  const res = await o.rds.send(
    new FailoverDBClusterCommand({ DBClusterIdentifier: clusterId, TargetDBInstanceIdentifier: target }),
  );
  event('api-answered', 'api', `cluster status ${res.DBCluster?.Status ?? '?'}`);
  let last: ClusterState = before;
  while (!signal.aborted && o.now().getTime() < deadline) {
    await o.sleep(o.pollMs ?? 1000, signal);
    if (signal.aborted) break;
    const now = await clusterState(o.rds, clusterId).catch(() => null);
    if (now === null) continue;
    if (now.status !== last.status) event('cluster-status', 'writer-poll', now.status ?? '?');
    if (now.writer !== null && now.writer !== last.writer) {
      event('writer-changed', 'writer-poll', `${last.writer ?? '?'} → ${now.writer}`);
      if (now.writer === target && now.status === 'available') return;
    }
    last = now.writer === null ? { ...now, writer: last.writer } : now;
    if (last.writer === target && now.status === 'available') return;
  }
}

async function rdsReboot(
  o: CloudDisruptionOptions,
  db: DatabaseResources,
  failover: boolean,
  event: EventSink,
  signal: AbortSignal,
  deadline: number,
): Promise<void> {
  const id = db.instanceIds[0];
  if (id === undefined) throw new InfrastructureError('the run request names no DB instance');
  const before = await instanceState(o.rds, id);
  event(
    'api-call',
    'api',
    `RebootDBInstance ${id}${failover ? ' ForceFailover' : ''} (zone ${before.zone ?? '?'})`,
  );
  const res = await o.rds.send(
    new RebootDBInstanceCommand({ DBInstanceIdentifier: id, ...(failover ? { ForceFailover: true } : {}) }),
  );
  event('api-answered', 'api', `instance status ${res.DBInstance?.DBInstanceStatus ?? '?'}`);
  let last = { zone: before.zone, status: res.DBInstance?.DBInstanceStatus ?? before.status };
  let left = last.status !== 'available';
  while (!signal.aborted && o.now().getTime() < deadline) {
    await o.sleep(o.pollMs ?? 1000, signal);
    if (signal.aborted) break;
    const now = await instanceState(o.rds, id).catch(() => null);
    if (now === null) continue;
    if (now.status !== last.status) event('instance-status', 'writer-poll', now.status ?? '?');
    if (now.zone !== null && last.zone !== null && now.zone !== last.zone)
      event('writer-changed', 'writer-poll', `primary in ${last.zone} → ${now.zone}`);
    if (now.status !== 'available') left = true;
    last = { status: now.status, zone: now.zone ?? last.zone };
    if (left && now.status === 'available') return;
  }
}

/** The settle poll's verdict, and what it saw (for the message when it gives up). */
interface Settled {
  readonly ok: boolean;
  readonly seen: string;
}

/**
 * After the window: the database `available` again, or the run cannot go on. On Aurora that is the
 * cluster `available` with a writer AND every instance of the lab `available`: neither the cluster's
 * Status nor its members say how each instance is (botocore's DBClusterMember has
 * DBInstanceIdentifier, IsClusterWriter, DBClusterParameterGroupStatus and PromotionTier, no status),
 * and the cluster is `available` again once the failover is completed ("The status returns to
 * Available when the failover is completed", Aurora User Guide, "Failing over an Amazon Aurora DB
 * cluster") while the old writer may still be rebooting as a reader. The next repetition's
 * FailoverDBCluster would target it and fail with InvalidDBInstanceStateFault ("The DB instance isn't
 * in a valid state", one of FailoverDBCluster's errors in the model).
 *
 * Each instance is read with DescribeDBInstances by its DBInstanceIdentifier, not with the
 * `db-cluster-id` Filter the API also offers: IAM authorizes a call naming an instance on that
 * instance's `db` ARN (Service Authorization Reference, Amazon RDS: DescribeDBInstances, resource
 * type `db`), which the runner role is granted for the lab's own instances only
 * (lib/constructs/runner-asset.ts); a call without an identifier — a filtered one — is authorized on
 * `arn:aws:rds:<region>:<account>:db:*`, every instance of the account, which this role never gets.
 */
async function waitAvailable(o: CloudDisruptionOptions, db: DatabaseResources): Promise<void> {
  const settleMs = o.settleMs ?? 1_200_000;
  const deadline = o.now().getTime() + settleMs;
  const cluster = db.engine === 'aurora-postgresql' ? db.clusterId : null;
  const waitedFor =
    cluster !== null
      ? `cluster ${cluster} available with a writer and each of its instances (${db.instanceIds.join(', ')}) available`
      : `instance ${db.instanceIds[0] ?? '?'} available`;
  for (;;) {
    const s =
      cluster !== null
        ? await auroraSettled(o.rds, cluster, db.instanceIds)
        : await instanceState(o.rds, db.instanceIds[0] ?? '').then((i): Settled => ({
            ok: i.status === 'available',
            seen: `instance ${i.status ?? '?'}`,
          }));
    if (s.ok) return;
    if (o.now().getTime() >= deadline)
      throw new InfrastructureError(
        `the database is not available ${Math.round(settleMs / 1000)} s after the disruption (${s.seen}); waited for ${waitedFor}`,
      );
    await o.sleep(o.pollMs ?? 1000);
  }
}

/** The cluster available with a writer, then every instance of the lab available (each read by its identifier). */
async function auroraSettled(
  rds: RDSClient,
  clusterId: string,
  instanceIds: readonly string[],
): Promise<Settled> {
  const c = await clusterState(rds, clusterId);
  const seen = `cluster ${c.status ?? '?'}, writer ${c.writer ?? 'none'}`;
  if (c.status !== 'available' || c.writer === null) return { ok: false, seen };
  const states = await Promise.all(instanceIds.map((id) => instanceState(rds, id)));
  return {
    ok: states.every((i) => i.status === 'available'),
    seen: `${seen}; ${instanceIds.map((id, k) => `${id} ${states[k]?.status ?? '?'}`).join(', ')}`,
  };
}

/** Whose RDS events a group reads: the cluster (Aurora), each instance, each proxy. */
function eventSources(o: CloudDisruptionOptions, db: DatabaseResources): RdsEventSource[] {
  return [
    ...(db.engine === 'aurora-postgresql' && db.clusterId !== null
      ? [['db-cluster', db.clusterId] as const]
      : []),
    ...db.instanceIds.map((id) => ['db-instance', id] as const),
    ...o.proxyNames.map((n) => ['db-proxy', n] as const),
  ];
}
