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
 *
 * Server-side events on the run's clock: the API call (sent, answered), the writer polled through the
 * window (DescribeDBClusters' IsClusterWriter; DescribeDBInstances' status and AvailabilityZone:
 * a Multi-AZ failover moves the primary to the standby's zone), and, after the window, DescribeEvents
 * of the cluster, each instance and each proxy from the group's start (RDS stamps each event's Date;
 * the runner keeps time with chrony and Amazon Time Sync, which `proxylab doctor` checks). They are
 * stored in every step of the group (DisruptionResult.events). Before the next group the database
 * must be `available` again, or the run ends as an infrastructure failure.
 *
 * The runner role may call exactly these actions on the lab's ARNs (lib/constructs/runner-asset.ts).
 */
import {
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  FailoverDBClusterCommand,
  paginateDescribeEvents,
  RebootDBInstanceCommand,
  type RDSClient,
  type SourceType,
} from '@aws-sdk/client-rds';
import { InfrastructureError } from '../core/errors';
import type { Target } from '../engine/ports';
import {
  targetProbeEndpoint,
  type DisruptionSession,
  type DisruptionWorld,
  type EventSink,
} from '../exec/disruption-probe';
import { CLOUD_DISRUPTION_ENGINES } from '../config/disruptions';
import type { DatabaseResources } from '../aws/runner-args';
import type { DisruptionAction, DisruptionProbe } from '../suite/disruption';
import { DATABASE_ENGINE_NAMES } from '../suite/engines';
import type { PlannedStep } from '../suite/expand';

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
  /** How long the database may take to be `available` again after the window. @default 1_200_000 (20 min) */
  readonly settleMs?: number;
  /** pgbench's SELECT 1 p50 on a target (the runner's executor); absent: not measured. */
  readonly pgbenchFloor?: (target: Target) => Promise<number | null>;
}

/** Why the runner cannot inject `action` into this lab, or null. */
export function cloudUnavailable(
  action: DisruptionAction,
  o: Pick<CloudDisruptionOptions, 'database' | 'runnerCount'>,
): string | null {
  const engine = CLOUD_DISRUPTION_ENGINES[action];
  if (engine === undefined)
    return action === 'pooler-restart'
      ? "pooler-restart on a lab's pooler hosts is not built on the runner yet (it runs on proxylab local's stack; docs/disruptions.md)"
      : `${action} is a local disruption (proxylab local's throwaway stack), not one of a lab`;
  if (o.database === null)
    return 'the run request does not name the lab database (written by an older CLI): run it again with this one';
  if (o.database.engine !== engine)
    return `${action} needs ${DATABASE_ENGINE_NAMES[engine]}; this lab runs ${DATABASE_ENGINE_NAMES[o.database.engine]}`;
  if (action === 'aurora-failover' && (o.database.clusterId === null || o.database.instanceIds.length < 2))
    return 'the Aurora cluster has no reader to fail over to (aurora.readers must be ≥ 1)';
  if (o.runnerCount > 1)
    return `a disruption is injected once, by one runner: this run has ${o.runnerCount} (use a lab with runners.count 1)`;
  return null;
}

export function cloudDisruptionWorld(o: CloudDisruptionOptions): DisruptionWorld {
  return {
    unavailable: (_step: PlannedStep, spec: DisruptionProbe) => cloudUnavailable(spec.disruption.action, o),
    open: (spec) => Promise.resolve(openSession(o, spec)),
  };
}

function openSession(o: CloudDisruptionOptions, spec: DisruptionProbe): DisruptionSession {
  const db = o.database;
  if (db === null) throw new InfrastructureError('no database named to disrupt');
  const openedAt = o.now();
  let said: EventSink | null = null;
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
        default:
          throw new InfrastructureError(`${spec.disruption.action} is not a cloud disruption`);
      }
    },
    restore: async () => {
      await waitAvailable(o, db);
      if (said !== null) await readEvents(o, db, openedAt, said);
    },
    ...(o.pgbenchFloor ? { pgbenchFloor: o.pgbenchFloor } : {}),
  };
}

interface ClusterState {
  readonly status: string | null;
  readonly writer: string | null;
  readonly readers: string[];
}

async function clusterState(rds: RDSClient, clusterId: string): Promise<ClusterState> {
  const res = await rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: clusterId }));
  const c = res.DBClusters?.[0];
  const members = c?.DBClusterMembers ?? [];
  return {
    status: c?.Status ?? null,
    writer: members.find((m) => m.IsClusterWriter === true)?.DBInstanceIdentifier ?? null,
    readers: members
      .filter((m) => m.IsClusterWriter !== true && m.DBInstanceIdentifier)
      .map((m) => m.DBInstanceIdentifier as string),
  };
}

interface InstanceState {
  readonly status: string | null;
  readonly zone: string | null;
}

async function instanceState(rds: RDSClient, id: string): Promise<InstanceState> {
  const res = await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }));
  const i = res.DBInstances?.[0];
  return { status: i?.DBInstanceStatus ?? null, zone: i?.AvailabilityZone ?? null };
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
  let last = { ...before, status: res.DBInstance?.DBInstanceStatus ?? before.status };
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

/** After the window: the database `available` again (writer and every instance), or the run cannot go on. */
async function waitAvailable(o: CloudDisruptionOptions, db: DatabaseResources): Promise<void> {
  const deadline = o.now().getTime() + (o.settleMs ?? 1_200_000);
  let seen = 'unknown';
  for (;;) {
    const ok =
      db.clusterId !== null && db.engine === 'aurora-postgresql'
        ? await clusterState(o.rds, db.clusterId).then((c) => {
            seen = `cluster ${c.status ?? '?'}, writer ${c.writer ?? 'none'}`;
            return c.status === 'available' && c.writer !== null;
          })
        : await instanceState(o.rds, db.instanceIds[0] ?? '').then((i) => {
            seen = `instance ${i.status ?? '?'}`;
            return i.status === 'available';
          });
    if (ok) return;
    if (o.now().getTime() >= deadline)
      throw new InfrastructureError(
        `the database is not available ${Math.round((o.settleMs ?? 1_200_000) / 1000)} s after the disruption (${seen})`,
      );
    await o.sleep(o.pollMs ?? 1000);
  }
}

/** DescribeEvents of the cluster, each instance and each proxy since the group opened, on the run's clock. */
async function readEvents(
  o: CloudDisruptionOptions,
  db: DatabaseResources,
  since: Date,
  event: EventSink,
): Promise<void> {
  const sources: Array<[SourceType, string]> = [
    ...(db.engine === 'aurora-postgresql' && db.clusterId !== null
      ? [['db-cluster', db.clusterId] as [SourceType, string]]
      : []),
    ...db.instanceIds.map((id) => ['db-instance', id] as [SourceType, string]),
    ...o.proxyNames.map((n) => ['db-proxy', n] as [SourceType, string]),
  ];
  const end = o.now();
  for (const [type, id] of sources) {
    try {
      // SourceIdentifier needs its SourceType (botocore: "If SourceIdentifier is supplied, SourceType must also be provided").
      for await (const page of paginateDescribeEvents(
        { client: o.rds, pageSize: 100 },
        { SourceType: type, SourceIdentifier: id, StartTime: since, EndTime: end },
      ))
        for (const e of page.Events ?? [])
          // (the window again on this side: a server that ignores StartTime adds nothing older)
          if (e.Date && e.Date.getTime() >= since.getTime())
            event(
              e.Message ?? '(no message)',
              'rds-events',
              `${type} ${id}${e.EventCategories?.length ? ` [${e.EventCategories.join(', ')}]` : ''}`,
              e.Date,
            );
    } catch (err) {
      event('events-unreadable', 'rds-events', `${type} ${id}: ${(err as Error).message}`);
    }
  }
}
