/**
 * Deleting what a Blue/Green deployment of the lab's database leaves (shared by the runner's
 * teardown, lib/runner/blue-green.ts, and `proxylab destroy`, lib/operator/blue-green-destroy.ts):
 *
 * - the deployment: DeleteBlueGreenDeployment, with DeleteTarget (its green copy too) only before a
 *   switchover ("You can't specify this option if the blue/green deployment status is
 *   SWITCHOVER_COMPLETED", botocore rds model);
 * - after a switchover, the old blue database: AWS renames the blue resources by appending `-old1`
 *   (RDS and Aurora User Guides, "Switching a blue/green deployment", switchover actions), and
 *   CloudFormation does not know them. Its instances (deletion protection off first if set), then —
 *   once they are gone, since a cluster with instances cannot be deleted — its Aurora cluster,
 *   SkipFinalSnapshot: the lab's data lives on in the green copy.
 *
 * Each resource is named by its identifier (the lab's own, with the suffix): the calls are authorized
 * on that resource's ARN and the lab's `proxylab:lab` tag, which the old blue keeps.
 */
import {
  DeleteBlueGreenDeploymentCommand,
  DeleteDBClusterCommand,
  DeleteDBInstanceCommand,
  DescribeBlueGreenDeploymentsCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  ModifyDBClusterCommand,
  ModifyDBInstanceCommand,
  paginateDescribeBlueGreenDeployments,
  type BlueGreenDeployment,
  type RDSClient,
} from '@aws-sdk/client-rds';
import type { DatabaseResources } from './runner-args';
import { OLD_BLUE_SUFFIX } from '../suite/disruption-actions';

export interface BlueGreenCleanupOptions {
  readonly rds: RDSClient;
  readonly now: () => Date;
  readonly sleep: (ms: number) => Promise<void>;
  /** Between two reads of the deployment or an instance being deleted. @default 30_000 */
  readonly blueGreenPollMs?: number;
  /** How long the old blue's instances may take to be deleted before its cluster. @default 1_800_000 (30 min) */
  readonly deleteTimeoutMs?: number;
}

export { OLD_BLUE_SUFFIX };

export async function deleteDeployment(
  o: Pick<BlueGreenCleanupOptions, 'rds'>,
  id: string,
  deleteTarget: boolean,
  log: (line: string) => void,
): Promise<void> {
  await o.rds.send(
    new DeleteBlueGreenDeploymentCommand({
      BlueGreenDeploymentIdentifier: id,
      ...(deleteTarget ? { DeleteTarget: true } : {}),
    }),
  );
  log(`Blue/Green deployment ${id} deleted${deleteTarget ? ' with its green copy (DeleteTarget)' : ''}`);
}

/** The old blue's identifiers: each of the lab's, with the switchover's suffix. */
export function oldBlueOf(db: DatabaseResources): { cluster: string | null; instances: string[] } {
  return {
    cluster:
      db.engine === 'aurora-postgresql' && db.clusterId !== null ? `${db.clusterId}${OLD_BLUE_SUFFIX}` : null,
    instances: db.instanceIds.map((id) => `${id}${OLD_BLUE_SUFFIX}`),
  };
}

const notFound = (e: Error): boolean => /NotFound/.test(e.name) || /NotFound/.test(e.message);

/** Whether a read by identifier finds the resource: a NotFound fault says no, any other error yes (still there, as far as known). */
async function exists(read: () => Promise<readonly unknown[] | undefined>): Promise<boolean> {
  try {
    return ((await read()) ?? []).length > 0;
  } catch (e) {
    return !notFound(e as Error);
  }
}

/** Deletes the old blue instances, waits until they are gone, then deletes the old cluster. Returns the problems. */
export async function deleteOldBlue(
  o: BlueGreenCleanupOptions,
  db: DatabaseResources,
  log: (line: string) => void,
): Promise<string[]> {
  const old = oldBlueOf(db);
  const problems: string[] = [];
  for (const id of old.instances)
    await deleteOldInstance(o, id, log).catch((e: Error) => {
      if (!notFound(e)) problems.push(`DeleteDBInstance ${id}: ${e.message}`);
    });
  if (old.cluster === null) return problems;
  const started = o.now().getTime();
  for (;;) {
    const left = await instancesLeft(o.rds, old.instances);
    if (left.length === 0) break;
    if (o.now().getTime() - started >= (o.deleteTimeoutMs ?? 1_800_000)) {
      problems.push(
        `old instances still being deleted: ${left.join(', ')}; cluster ${old.cluster} not deleted`,
      );
      return problems;
    }
    await o.sleep(o.blueGreenPollMs ?? 30_000);
  }
  await deleteOldCluster(o, old.cluster, log).catch((e: Error) => {
    if (!notFound(e)) problems.push(`DeleteDBCluster ${old.cluster}: ${e.message}`);
  });
  return problems;
}

async function deleteOldInstance(
  o: BlueGreenCleanupOptions,
  id: string,
  log: (line: string) => void,
): Promise<void> {
  const i = (await o.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances?.[0];
  if (i?.DBInstanceStatus === 'deleting') return;
  if (i?.DeletionProtection === true)
    await o.rds.send(
      new ModifyDBInstanceCommand({
        DBInstanceIdentifier: id,
        DeletionProtection: false,
        ApplyImmediately: true,
      }),
    );
  // An Aurora instance takes no final snapshot of its own (the cluster's is the snapshot): the
  // parameter applies to RDS for PostgreSQL.
  await o.rds.send(
    new DeleteDBInstanceCommand({
      DBInstanceIdentifier: id,
      ...(i?.DBClusterIdentifier ? {} : { SkipFinalSnapshot: true }),
    }),
  );
  log(`old blue instance ${id} deleted`);
}

async function instancesLeft(rds: RDSClient, ids: readonly string[]): Promise<string[]> {
  const left: string[] = [];
  for (const id of ids) {
    const there = await exists(
      async () => (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances,
    );
    if (there) left.push(id);
  }
  return left;
}

async function deleteOldCluster(
  o: BlueGreenCleanupOptions,
  id: string,
  log: (line: string) => void,
): Promise<void> {
  const c = (await o.rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: id }))).DBClusters?.[0];
  if (c?.Status === 'deleting') return;
  if (c?.DeletionProtection === true)
    await o.rds.send(
      new ModifyDBClusterCommand({
        DBClusterIdentifier: id,
        DeletionProtection: false,
        ApplyImmediately: true,
      }),
    );
  await o.rds.send(new DeleteDBClusterCommand({ DBClusterIdentifier: id, SkipFinalSnapshot: true }));
  log(`old blue cluster ${id} deleted`);
}

/** Whether `d`'s source or target is one of the lab's database resources (or their `-old1`). */
export function deploymentOfLab(d: BlueGreenDeployment, db: DatabaseResources, labName: string): boolean {
  const ids = [
    ...(db.clusterId !== null ? [`cluster:${db.clusterId}`] : []),
    ...db.instanceIds.map((i) => `db:${i}`),
  ];
  const names = ids.flatMap((id) => [id, `${id}${OLD_BLUE_SUFFIX}`]);
  const ofLab = (arn: string | undefined): boolean =>
    arn !== undefined && names.some((n) => arn.endsWith(`:${n}`));
  const tagged = (d.TagList ?? []).some((t) => t.Key === 'proxylab:lab' && t.Value === labName);
  return tagged || ofLab(d.Source) || ofLab(d.Target);
}

/**
 * What `proxylab destroy` deletes before the stack: every Blue/Green deployment of the lab's
 * database (DescribeBlueGreenDeployments, by its source or target or the lab's tag) and the old
 * blue, whatever a failed run left. Returns what it did and what it could not, in words.
 */
export async function cleanUpBlueGreen(
  o: BlueGreenCleanupOptions,
  db: DatabaseResources,
  labName: string,
  log: (line: string) => void,
): Promise<string[]> {
  const problems: string[] = [];
  let did = 0;
  const say = (line: string): void => {
    did++;
    log(line);
  };
  const going: string[] = [];
  for await (const page of paginateDescribeBlueGreenDeployments({ client: o.rds, pageSize: 100 }, {}))
    for (const d of page.BlueGreenDeployments ?? []) {
      const id = d.BlueGreenDeploymentIdentifier;
      if (!id || !deploymentOfLab(d, db, labName)) continue;
      going.push(id);
      if (d.Status === 'DELETING') continue;
      await deleteDeployment(o, id, d.Status !== 'SWITCHOVER_COMPLETED', say).catch((e: Error) =>
        problems.push(`DeleteBlueGreenDeployment ${id}: ${e.message}`),
      );
    }
  // the stack's database cannot go while a deployment of it is still being deleted
  problems.push(...(await waitDeploymentsGone(o, going)));
  // an old blue outlives its deployment when a teardown stopped halfway: looked for in any case
  problems.push(...(await deleteOldBlue(o, db, say)));
  if (did === 0 && problems.length === 0) log('no Blue/Green leftovers of the lab to delete');
  return problems;
}

/** Polls each deployment until DescribeBlueGreenDeployments no longer finds it; returns those still there. */
async function waitDeploymentsGone(o: BlueGreenCleanupOptions, ids: readonly string[]): Promise<string[]> {
  const started = o.now().getTime();
  let left = [...ids];
  while (left.length > 0) {
    const still: string[] = [];
    for (const id of left) {
      const there = await exists(
        async () =>
          (await o.rds.send(new DescribeBlueGreenDeploymentsCommand({ BlueGreenDeploymentIdentifier: id })))
            .BlueGreenDeployments,
      );
      if (there) still.push(id);
    }
    left = still;
    if (left.length === 0) break;
    if (o.now().getTime() - started >= (o.deleteTimeoutMs ?? 1_800_000))
      return [`Blue/Green deployments still being deleted: ${left.join(', ')}`];
    await o.sleep(o.blueGreenPollMs ?? 30_000);
  }
  return [];
}
