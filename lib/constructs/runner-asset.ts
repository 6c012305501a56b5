/**
 * The runner software as a CDK asset: the directory holding the esbuild bundles of scripts/runner.ts
 * and scripts/pooler.ts (runner.js, pooler.js; a zip asset), which the runner fleet's and the pooler
 * hosts' user data unpack into /opt/proxylab. Bundled once per process (every lab stack of an app
 * shares it).
 */
import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as rds from 'aws-cdk-lib/aws-rds';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import type { Construct } from 'constructs';
import { logicalIdOf } from './metrics-collector';
import { runnerBundleOnce } from './runner-bundle';
import { CLOUD_RUN_LOCK_KEY_PATTERN, RUNNER_INSTALL_PATH } from '../config/stack-outputs';
import { POOLER_INSTALL_PATH } from './pooler-user-data';
import { OLD_BLUE_SUFFIX, runnerDisruptionGrants } from '../config/disruptions';
import { TAG_LAB } from '../config/expiry';

/** What the RunnerFleet seam takes: the asset and the install command (run in /opt/proxylab). */
export interface RunnerSoftwareSpec {
  readonly asset: s3assets.Asset;
  readonly command: string;
}

/** Shell run after the zip is unpacked into /opt/proxylab: make sure Node can load both files. */
function runnerInstallCommand(): string {
  return `node --check ${RUNNER_INSTALL_PATH} && node --check ${POOLER_INSTALL_PATH} && echo "proxylab runner installed at ${RUNNER_INSTALL_PATH}, pooler at ${POOLER_INSTALL_PATH}"`;
}

export function proxylabRunnerSoftware(scope: Construct, id = 'RunnerBundle'): RunnerSoftwareSpec {
  const asset = new s3assets.Asset(Stack.of(scope), id, { path: runnerBundleOnce().dir });
  return { asset, command: runnerInstallCommand() };
}

export interface CloudRunnerGrants {
  /** The lab's results bucket: runners read back what they wrote under runs/. */
  readonly bucket: s3.IBucket;
  /** This lab's proxies: pool sweeps resize them. */
  readonly proxies: readonly rds.DatabaseProxy[];
  /**
   * The AWS disruptions the lab's suites inject (lib/config/disruptions.ts) and the lab's own
   * database ARNs they act on. Absent or no actions: no disruption grant.
   */
  readonly disruptions?: {
    readonly actions: readonly string[];
    /** The Aurora cluster's ARN; null for RDS for PostgreSQL. */
    readonly clusterArn: string | null;
    /** Every DB instance of the lab (writer and readers). */
    readonly instanceArns: readonly string[];
    /** The lab's name: the value of its `proxylab:lab` tag, which grants on generated names require. */
    readonly labName: string;
  };
}

/**
 * What the runner software needs beyond the fleet's base role (which may already PutObject under
 * runs/, read the DB secret and invoke the collector):
 *  - s3:GetObject under runs/ and s3:ListBucket restricted to the runs/ prefix — resume reads the
 *    manifest and lists finished steps; the fleet barrier reads plans and parts;
 *  - s3:DeleteObject on the run-lock keys only (`runs/<id>/locks/runner-<i>.lock`): a runner
 *    releases its lock when it ends, so a resume on a replacement runner is not refused;
 *  - rds:DescribeDBProxyTargetGroups on this lab's proxies and rds:ModifyDBProxyTargetGroup on their
 *    `default` target groups only (pool-percent sweeps, then restore);
 *  - for the disruptions the lab's suites inject, and only then: rds:FailoverDBCluster on the
 *    lab's cluster and its instances and rds:DescribeDBClusters on the cluster (aurora-failover: the
 *    writer polled through the window), rds:RebootDBInstance on its instances (rds-reboot,
 *    rds-reboot-failover), rds:DescribeDBInstances on its instances (the rebooted instance polled;
 *    after an Aurora failover, every instance waited for before the next repetition),
 *    rds:ModifyDBCluster on the cluster (Aurora) or rds:ModifyDBInstance on its instances (RDS) for
 *    a minor upgrade, and rds:DescribeEvents and rds:DescribeDBEngineVersions, which take no resource.
 */
export function grantCloudRunner(role: iam.Role, grants: CloudRunnerGrants): void {
  grantDisruptions(role, grants.disruptions);
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: ['s3:GetObject'],
      resources: [grants.bucket.arnForObjects('runs/*')],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: ['s3:DeleteObject'],
      resources: [grants.bucket.arnForObjects(CLOUD_RUN_LOCK_KEY_PATTERN)],
    }),
  );
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(grants.bucket)}.Arn>/${CLOUD_RUN_LOCK_KEY_PATTERN}]`,
    reason:
      'Run ids and runner indexes are chosen at run time; runners may delete only run-lock objects (runs/<id>/locks/runner-<i>.lock), never results.',
  });
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: ['s3:ListBucket'],
      resources: [grants.bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': ['runs/*'] } },
    }),
  );
  if (grants.proxies.length > 0) {
    // Each action on the resource type it takes (Service Authorization Reference, Amazon RDS):
    // DescribeDBProxyTargetGroups on the proxy (`db-proxy:prx-…`), ModifyDBProxyTargetGroup on the
    // target group (`target-group:prx-tg-…`).
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['rds:DescribeDBProxyTargetGroups'],
        resources: grants.proxies.map((proxy) => proxy.dbProxyArn),
      }),
    );
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['rds:ModifyDBProxyTargetGroup'],
        resources: grants.proxies.map(targetGroupArnOf),
      }),
    );
  }
}

/** The ARN of a DatabaseProxy's `default` target group (the L1 child aws-cdk-lib creates). */
function targetGroupArnOf(proxy: rds.DatabaseProxy): string {
  const child = proxy.node.tryFindChild('ProxyTargetGroup');
  if (!(child instanceof rds.CfnDBProxyTargetGroup)) {
    throw new Error(`proxy ${proxy.node.path} has no ProxyTargetGroup child (aws-cdk-lib changed?)`);
  }
  return child.attrTargetGroupArn;
}

/**
 * The disruption grants (grantCloudRunner). Each action on the resource types the Service
 * Authorization Reference lists for it (Amazon RDS): FailoverDBCluster on `cluster` (required) and
 * `db` (the TargetDBInstanceIdentifier); RebootDBInstance on `db`; DescribeDBClusters on `cluster`
 * and DescribeDBInstances on `db` (each only where its disruption polls it: DescribeDBInstances for
 * both kinds, the runner naming each instance by its DBInstanceIdentifier — a call without one, e.g.
 * with a `db-cluster-id` Filter, is authorized on `db:*`, every instance of the account, which is not
 * granted); DescribeEvents on no resource type at all (only `*` can allow it).
 */
function grantDisruptions(role: iam.Role, d: CloudRunnerGrants['disruptions']): void {
  if (!d || d.actions.length === 0) return;
  const arns = { cluster: d.clusterArn, instances: d.instanceArns, '*': ['*'] } as const;
  // a lab without a cluster runs RDS for PostgreSQL: the statements an action needs on the other engine are left out
  const engine = d.clusterArn === null ? 'postgres' : 'aurora-postgresql';
  const stack = Stack.of(role);
  for (const g of runnerDisruptionGrants(d.actions, engine)) {
    // a statement on the cluster needs the cluster (an Aurora lab's; none on RDS for PostgreSQL)
    if (g.on.includes('cluster') && d.clusterArn === null) continue;
    const resources = g.on.flatMap((on) => {
      if (on.startsWith('account:') || on.startsWith('old-blue:'))
        return [
          stack.formatArn({
            service: 'rds',
            resource: on.slice(on.indexOf(':') + 1),
            resourceName: on.startsWith('old-blue:') ? `*${OLD_BLUE_SUFFIX}` : '*',
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ];
      const a = arns[on as keyof typeof arns];
      return a === null ? [] : typeof a === 'string' ? [a] : [...a];
    });
    const tagKey = g.labTag === 'request' ? 'aws:RequestTag' : 'aws:ResourceTag';
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: [...g.actions],
        resources,
        ...(g.labTag !== undefined
          ? { conditions: { StringEquals: { [`${tagKey}/${TAG_LAB}`]: d.labName } } }
          : {}),
      }),
    );
    for (const on of g.on.filter((x) => x.startsWith('account:') || x.startsWith('old-blue:')))
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:${on.slice(on.indexOf(':') + 1)}:*${on.startsWith('old-blue:') ? OLD_BLUE_SUFFIX : ''}]`,
        reason:
          'A Blue/Green deployment and its green copies get names RDS generates, the old blue the lab identifier + -old1 (read while it is deleted); the RDS and Aurora User Guides ("Authorizing access to blue/green deployment operations") say policies "can\'t contain partial resource name patterns such as my-db-prefix-*. Only wildcards (*) are supported". What changes or deletes an existing resource, and the deployment itself, is limited to the lab\'s proxylab:lab tag (aws:ResourceTag / aws:RequestTag condition).',
      });
    if (g.on.includes('*'))
      Validations.of(role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'rds:DescribeEvents and rds:DescribeDBEngineVersions take no resource (Service Authorization Reference: no resource types), so only * can allow them; they read the event log the disruption lab aligns on the run clock and the upgrade targets of an engine version, nothing else.',
      });
  }
}
