/**
 * A Blue/Green switchover of the lab's database (issue 42), in three parts:
 *
 * 1. Before the group, not measured (`prepareBlueGreen`): CreateBlueGreenDeployment with Source =
 *    the lab's cluster (Aurora) or instance (RDS) ARN, TargetEngineVersion = the version it runs
 *    now (the copy differs in nothing; the switchover is what is measured), and the source's own
 *    `proxylab:*` tags, so the deployment carries the lab's tag the runner role's grants are
 *    narrowed by. Then DescribeBlueGreenDeployments until its Status is AVAILABLE ("Resources are
 *    available in the green environment", botocore rds model), at most `createTimeoutMs`; a status
 *    of INVALID_CONFIGURATION or the timeout ends it, and the deployment is deleted with its green
 *    copy before the error is thrown.
 * 2. At T0 (`switchover`): SwitchoverBlueGreenDeployment with SwitchoverTimeout ("Default: 300 …
 *    If the switchover takes longer than the specified duration, then any changes are rolled back",
 *    botocore rds model); the deployment's status polled as events on the run's clock until
 *    SWITCHOVER_COMPLETED (or SWITCHOVER_FAILED: the injection fails).
 * 3. After the window, on success and on failure (`teardown`): DeleteBlueGreenDeployment —
 *    DeleteTarget true only before a switchover ("You can't specify this option if the blue/green
 *    deployment status is SWITCHOVER_COMPLETED", botocore rds model) — and after one, the old blue
 *    database, which the switchover renamed with `-old1` (User Guides, "Switching a blue/green
 *    deployment", switchover actions) and which CloudFormation does not know: its instances, then
 *    (Aurora) its cluster, each deletion protection off first if set, SkipFinalSnapshot. The green
 *    copy now holds the lab's original identifiers, which the stack refers to.
 */
import {
  CreateBlueGreenDeploymentCommand,
  DescribeBlueGreenDeploymentsCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  SwitchoverBlueGreenDeploymentCommand,
  type BlueGreenDeployment,
  type RDSClient,
  type Tag,
} from '@aws-sdk/client-rds';
import { InfrastructureError } from '../core/errors';
import type { DatabaseResources } from '../aws/runner-args';
import type { EventSink } from '../exec/disruption-probe';
import { deleteDeployment, deleteOldBlue, type BlueGreenCleanupOptions } from '../aws/blue-green-cleanup';

export interface BlueGreenOptions extends BlueGreenCleanupOptions {
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** How long the green copy may take to be AVAILABLE. @default 5_400_000 (90 min) */
  readonly createTimeoutMs?: number;
  /** The switchover window's poll. @default 1000 */
  readonly pollMs?: number;
}

/** A deployment created for one group: what the switchover and the teardown act on. */
export interface BlueGreenDeploymentRun {
  readonly id: string;
  readonly name: string;
  /** How long the green copy took to be AVAILABLE, ms. */
  readonly createdInMs: number;
}

interface Source {
  readonly arn: string;
  readonly version: string;
  readonly tags: Tag[];
}

async function sourceOf(rds: RDSClient, db: DatabaseResources): Promise<Source> {
  if (db.engine === 'aurora-postgresql' && db.clusterId !== null) {
    const c = (await rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: db.clusterId })))
      .DBClusters?.[0];
    if (!c?.DBClusterArn || !c.EngineVersion)
      throw new InfrastructureError(`cluster ${db.clusterId}: RDS names no DBClusterArn or EngineVersion`);
    return { arn: c.DBClusterArn, version: c.EngineVersion, tags: c.TagList ?? [] };
  }
  const id = db.instanceIds[0];
  if (id === undefined) throw new InfrastructureError('the run request names no DB instance');
  const i = (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances?.[0];
  if (!i?.DBInstanceArn || !i.EngineVersion)
    throw new InfrastructureError(`instance ${id}: RDS names no DBInstanceArn or EngineVersion`);
  return { arn: i.DBInstanceArn, version: i.EngineVersion, tags: i.TagList ?? [] };
}

/** The source's proxylab tags (the lab's, its owner's, its expiry): what the deployment carries. */
function labTags(tags: readonly Tag[]): Tag[] {
  return tags.filter((t) => typeof t.Key === 'string' && t.Key.startsWith('proxylab:'));
}

/** `proxylab-bg-<base36 ms>`: BlueGreenDeploymentName is 1–60 of `[a-zA-Z][a-zA-Z0-9]*(-[a-zA-Z0-9]+)*`, unique per account and region. */
export function deploymentName(now: Date): string {
  return `proxylab-bg-${now.getTime().toString(36)}`;
}

async function describe(rds: RDSClient, id: string): Promise<BlueGreenDeployment | null> {
  const res = await rds.send(new DescribeBlueGreenDeploymentsCommand({ BlueGreenDeploymentIdentifier: id }));
  return res.BlueGreenDeployments?.[0] ?? null;
}

/**
 * Creates the group's deployment and waits until it is AVAILABLE (not measured). On any failure the
 * deployment is deleted with its green copy, then the error is thrown.
 */
export async function prepareBlueGreen(
  o: BlueGreenOptions,
  db: DatabaseResources,
  log: (line: string) => void,
): Promise<BlueGreenDeploymentRun> {
  const source = await sourceOf(o.rds, db);
  const started = o.now().getTime();
  const name = deploymentName(o.now());
  const res = await o.rds.send(
    new CreateBlueGreenDeploymentCommand({
      BlueGreenDeploymentName: name,
      Source: source.arn,
      TargetEngineVersion: source.version,
      Tags: labTags(source.tags),
    }),
  );
  const id = res.BlueGreenDeployment?.BlueGreenDeploymentIdentifier;
  if (!id) throw new InfrastructureError(`CreateBlueGreenDeployment ${name}: RDS returned no identifier`);
  log(`Blue/Green deployment ${id} (${name}) of ${source.arn} on ${source.version}: creating the green copy`);
  const limit = o.createTimeoutMs ?? 5_400_000;
  let last = res.BlueGreenDeployment?.Status ?? null;
  try {
    for (;;) {
      const d = await describe(o.rds, id);
      const status = d?.Status ?? null;
      if (status !== last) log(`Blue/Green deployment ${id}: ${status ?? '?'}${tasksOf(d)}`);
      last = status;
      if (status === 'AVAILABLE') break;
      if (status === 'INVALID_CONFIGURATION' || status === 'SWITCHOVER_FAILED' || status === null)
        throw new InfrastructureError(
          `Blue/Green deployment ${id} is ${status ?? 'gone'}${d?.StatusDetails ? `: ${d.StatusDetails}` : ''}`,
        );
      const waited = o.now().getTime() - started;
      if (waited >= limit)
        throw new InfrastructureError(
          `Blue/Green deployment ${id} is still ${status} after ${Math.round(waited / 60_000)} min (at most ${Math.round(limit / 60_000)})`,
        );
      await o.sleep(o.blueGreenPollMs ?? 30_000);
    }
  } catch (err) {
    await deleteDeployment(o, id, true, log).catch((e: Error) =>
      log(`Blue/Green deployment ${id} could not be deleted: ${e.message}`),
    );
    throw err;
  }
  const createdInMs = o.now().getTime() - started;
  log(`Blue/Green deployment ${id} AVAILABLE after ${Math.round(createdInMs / 1000)} s`);
  return { id, name, createdInMs };
}

function tasksOf(d: BlueGreenDeployment | null): string {
  const tasks = (d?.Tasks ?? []).map((t) => `${t.Name ?? '?'} ${t.Status ?? '?'}`);
  return tasks.length > 0 ? ` (${tasks.join(', ')})` : '';
}

/** The switchover at T0, and the deployment's status polled through the window. */
export async function switchover(
  o: BlueGreenOptions,
  run: BlueGreenDeploymentRun,
  timeoutSec: number | undefined,
  event: EventSink,
  signal: AbortSignal,
  deadline: number,
): Promise<void> {
  event(
    'api-call',
    'api',
    `SwitchoverBlueGreenDeployment ${run.id} SwitchoverTimeout ${timeoutSec ?? 'default (300)'} s`,
  );
  const res = await o.rds.send(
    new SwitchoverBlueGreenDeploymentCommand({
      BlueGreenDeploymentIdentifier: run.id,
      ...(timeoutSec !== undefined ? { SwitchoverTimeout: timeoutSec } : {}),
    }),
  );
  let last = res.BlueGreenDeployment?.Status ?? null;
  event('api-answered', 'api', `deployment status ${last ?? '?'}`);
  while (!signal.aborted && o.now().getTime() < deadline) {
    await o.sleep(o.pollMs ?? 1000, signal);
    if (signal.aborted) break;
    const d = await describe(o.rds, run.id).catch(() => null);
    if (d === null) continue;
    const status = d.Status ?? null;
    if (status !== last) event('deployment-status', 'writer-poll', `${last ?? '?'} → ${status ?? '?'}`);
    last = status;
    if (status === 'SWITCHOVER_COMPLETED') return;
    if (status === 'SWITCHOVER_FAILED')
      throw new InfrastructureError(
        `the switchover of ${run.id} failed${d.StatusDetails ? `: ${d.StatusDetails}` : ''} (AWS rolls every change back)`,
      );
  }
}

/**
 * After the window, before the database is waited for: a switchover still in progress (a window
 * shorter than it) ends first — the lab's identifiers move from the blue to the green during it, so
 * the database cannot be read by them meanwhile. At most `limitMs`; then the teardown goes on.
 */
export async function settleDeployment(
  o: BlueGreenOptions,
  run: BlueGreenDeploymentRun,
  limitMs: number,
  log: (line: string) => void,
): Promise<void> {
  const deadline = o.now().getTime() + limitMs;
  for (;;) {
    const status = (await describe(o.rds, run.id).catch(() => null))?.Status ?? null;
    if (status !== 'SWITCHOVER_IN_PROGRESS') return;
    if (o.now().getTime() >= deadline) {
      log(
        `Blue/Green deployment ${run.id} still SWITCHOVER_IN_PROGRESS after ${Math.round(limitMs / 1000)} s`,
      );
      return;
    }
    await o.sleep(o.pollMs ?? 1000);
  }
}

/**
 * After the group, on success and on failure: the deployment deleted (with its green copy before a
 * switchover) and, after one, the old blue database. Every step is tried; the errors are thrown
 * together at the end, naming what may be left.
 */
export async function teardownBlueGreen(
  o: BlueGreenOptions,
  run: BlueGreenDeploymentRun,
  db: DatabaseResources,
  log: (line: string) => void,
): Promise<void> {
  const problems: string[] = [];
  const d = await describe(o.rds, run.id).catch((e: Error) => {
    problems.push(`DescribeBlueGreenDeployments ${run.id}: ${e.message}`);
    return null;
  });
  const switched = d?.Status === 'SWITCHOVER_COMPLETED';
  if (d !== null)
    await deleteDeployment(o, run.id, !switched, log).catch((e: Error) =>
      problems.push(`DeleteBlueGreenDeployment ${run.id}: ${e.message}`),
    );
  if (switched) problems.push(...(await deleteOldBlue(o, db, log)));
  if (problems.length > 0)
    throw new InfrastructureError(
      `the Blue/Green teardown left work undone (proxylab destroy deletes what is left): ${problems.join('; ')}`,
    );
}
