/**
 * A minor-version upgrade of the lab's database, applied immediately, at T0 (issue 42):
 *
 * 1. the version now (DescribeDBClusters / DescribeDBInstances EngineVersion) and its upgrade
 *    targets (DescribeDBEngineVersions with Engine and EngineVersion; each DBEngineVersion's
 *    ValidUpgradeTarget is "A list of engine versions that this database engine version can be
 *    upgraded to", each UpgradeTarget's IsMajorVersionUpgrade "Indicates whether upgrading to the
 *    target version requires upgrading the major version" — botocore rds model). The target is the
 *    lowest one that is not a major upgrade; none: the run says so, naming the version.
 * 2. ModifyDBCluster (Aurora: DBClusterIdentifier) or ModifyDBInstance (RDS: DBInstanceIdentifier)
 *    with EngineVersion and ApplyImmediately true ("Changing this parameter results in an outage. The
 *    change is applied during the next maintenance window unless ApplyImmediately is enabled").
 * 3. The database polled through the window as for a failover: its status and engine version (and
 *    on Aurora its writer) as events on the run's clock, until it is `available` on the new version.
 *
 * The lab stays on the new version: `plan` says so before the run.
 */
import {
  DescribeDBEngineVersionsCommand,
  ModifyDBClusterCommand,
  ModifyDBInstanceCommand,
  type RDSClient,
} from '@aws-sdk/client-rds';
import { InfrastructureError } from '../core/errors';
import type { DatabaseResources } from '../aws/runner-args';
import type { EventSink } from '../exec/disruption-probe';
import { clusterState, instanceState } from './rds-state';

export interface MinorUpgradeOptions {
  readonly rds: RDSClient;
  readonly now: () => Date;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly pollMs?: number;
}

function minorOf(v: string): number[] {
  return v.split('.').map((p) => Number(p));
}

/** a < b as versions (`16.4` < `16.10`). */
function olderThan(a: string, b: string): boolean {
  const x = minorOf(a);
  const y = minorOf(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d < 0;
  }
  return false;
}

/**
 * The next minor version AWS offers for `engine` `version`: the lowest ValidUpgradeTarget with
 * IsMajorVersionUpgrade false (DescribeDBEngineVersions), or an InfrastructureError naming it.
 */
export async function nextMinorTarget(rds: RDSClient, engine: string, version: string): Promise<string> {
  const res = await rds.send(new DescribeDBEngineVersionsCommand({ Engine: engine, EngineVersion: version }));
  const targets = (res.DBEngineVersions ?? [])
    .flatMap((v) => v.ValidUpgradeTarget ?? [])
    .filter((t) => t.IsMajorVersionUpgrade === false && typeof t.EngineVersion === 'string')
    .map((t) => t.EngineVersion as string)
    .filter((t) => olderThan(version, t))
    .sort((a, b) => (olderThan(a, b) ? -1 : olderThan(b, a) ? 1 : 0));
  const next = targets[0];
  if (next === undefined)
    throw new InfrastructureError(
      `${engine} ${version} has no minor upgrade target (DescribeDBEngineVersions lists no ValidUpgradeTarget with IsMajorVersionUpgrade false): the lab cannot undergo a minor upgrade now`,
    );
  return next;
}

interface Polled {
  readonly status: string | null;
  readonly version: string | null;
  readonly writer: string | null;
}

async function poll(rds: RDSClient, db: DatabaseResources): Promise<Polled> {
  if (db.engine === 'aurora-postgresql' && db.clusterId !== null) {
    const c = await clusterState(rds, db.clusterId);
    return { status: c.status, version: c.version, writer: c.writer };
  }
  const i = await instanceState(rds, db.instanceIds[0] ?? '');
  return { status: i.status, version: i.version, writer: null };
}

/** The upgrade at T0 and the poll through the window (ends when the database is available on `to`). */
export async function minorUpgrade(
  o: MinorUpgradeOptions,
  db: DatabaseResources,
  event: EventSink,
  signal: AbortSignal,
  deadline: number,
): Promise<void> {
  const aurora = db.engine === 'aurora-postgresql' && db.clusterId !== null;
  const id = aurora ? db.clusterId : db.instanceIds[0];
  if (id === undefined) throw new InfrastructureError('the run request names no DB instance');
  const before = await poll(o.rds, db);
  if (before.version === null) throw new InfrastructureError(`${id}: RDS names no EngineVersion`);
  const to = await nextMinorTarget(o.rds, db.engine, before.version);
  const call = aurora ? 'ModifyDBCluster' : 'ModifyDBInstance';
  event('api-call', 'api', `${call} ${id} EngineVersion ${before.version} → ${to} ApplyImmediately`);
  const status = aurora
    ? (
        await o.rds.send(
          new ModifyDBClusterCommand({ DBClusterIdentifier: id, EngineVersion: to, ApplyImmediately: true }),
        )
      ).DBCluster?.Status
    : (
        await o.rds.send(
          new ModifyDBInstanceCommand({
            DBInstanceIdentifier: id,
            EngineVersion: to,
            ApplyImmediately: true,
          }),
        )
      ).DBInstance?.DBInstanceStatus;
  event('api-answered', 'api', `${aurora ? 'cluster' : 'instance'} status ${status ?? '?'}`);
  let last: Polled = { ...before, status: status ?? before.status };
  while (!signal.aborted && o.now().getTime() < deadline) {
    await o.sleep(o.pollMs ?? 1000, signal);
    if (signal.aborted) break;
    const now = await poll(o.rds, db).catch(() => null);
    if (now === null) continue;
    const kind = aurora ? 'cluster-status' : 'instance-status';
    if (now.status !== last.status) event(kind, 'writer-poll', now.status ?? '?');
    if (now.version !== null && now.version !== last.version)
      event('engine-version', 'writer-poll', `${last.version ?? '?'} → ${now.version}`);
    if (now.writer !== null && last.writer !== null && now.writer !== last.writer)
      event('writer-changed', 'writer-poll', `${last.writer} → ${now.writer}`);
    last = {
      status: now.status,
      version: now.version ?? last.version,
      writer: now.writer ?? last.writer,
    };
    if (last.version === to && now.status === 'available') return;
  }
}
