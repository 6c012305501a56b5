import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { AuroraConfig } from '../config';
import { DEFAULTS } from '../config/defaults';
import { findEngineVersion } from '../config/engine-versions';

export interface LabDatabaseProps {
  readonly vpc: ec2.IVpc;
  /** Subnets for the cluster (isolated ones). */
  readonly subnets: ec2.SubnetSelection;
  /** The lab's `aurora` section, defaults applied. */
  readonly aurora: AuroraConfig;
  /**
   * Master user name stored in the generated secret.
   * @default 'proxylab'
   */
  readonly masterUsername?: string;
  /**
   * Database created at cluster creation.
   * @default 'proxylab'
   */
  readonly databaseName?: string;
}

/** One DB instance of the cluster, for outputs and Performance Insights ARNs. */
export interface LabDbInstance {
  /** Construct id: `writer`, `reader1`, … */
  readonly role: string;
  /** DBInstanceIdentifier (token). */
  readonly instanceIdentifier: string;
  /** DbiResourceId (`db-…`, token): the Performance Insights identifier. */
  readonly resourceId: string;
  readonly resource: rds.CfnDBInstance;
}

/**
 * Aurora PostgreSQL: a writer (+ readers) on the lab's class or serverless v2; a DB parameter group
 * only when the lab overrides something (`max_connections`, `log_connections` /
 * `log_disconnections`); Performance Insights with the free 7-day retention; encrypted storage;
 * master credentials generated into Secrets Manager; deleted without a final snapshot unless
 * `snapshotOnDestroy`.
 */
export class LabDatabase extends Construct {
  readonly cluster: rds.DatabaseCluster;
  readonly secret: secretsmanager.ISecret;
  readonly securityGroup: ec2.SecurityGroup;
  /** Writer first, then readers in order. */
  readonly instances: LabDbInstance[];
  /** The writer's CfnDBInstance (proxies' target groups depend on it). */
  readonly writer: rds.CfnDBInstance;
  readonly parameterGroup: rds.ParameterGroup | undefined;

  constructor(scope: Construct, id: string, props: LabDatabaseProps) {
    super(scope, id);
    const { aurora } = props;
    const entry = findEngineVersion(aurora.engineVersion);
    if (!entry)
      throw new Error(
        `${this.node.path}: engine version ${aurora.engineVersion} is not in ACCEPTED_ENGINE_VERSIONS (validate the lab first)`,
      );
    const engine = rds.DatabaseClusterEngine.auroraPostgres({
      version: rds.AuroraPostgresEngineVersion[entry.cdkKey],
    });

    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: 'Aurora cluster: PostgreSQL from the lab runners and proxies only',
      allowAllOutbound: false,
    });

    const parameters = toInstanceParameters(aurora);
    this.parameterGroup =
      Object.keys(parameters).length > 0
        ? new rds.ParameterGroup(this, 'InstanceParameters', {
            engine,
            description: 'proxylab instance parameters (max_connections, connection logging)',
            parameters,
          })
        : undefined;

    const instanceOptions = {
      enablePerformanceInsights: aurora.performanceInsights,
      performanceInsightRetention: aurora.performanceInsights
        ? rds.PerformanceInsightRetention.DEFAULT
        : undefined,
      parameterGroup: this.parameterGroup,
      publiclyAccessible: false,
      // A benchmark must not change version under the experiment.
      autoMinorVersionUpgrade: false,
    };
    const capacity = aurora.capacity;
    const makeInstance = (name: string, isReader: boolean): rds.IClusterInstance =>
      capacity.kind === 'provisioned'
        ? rds.ClusterInstance.provisioned(name, {
            ...instanceOptions,
            instanceType: new ec2.InstanceType(capacity.instanceClass.replace(/^db\./, '')),
          })
        : rds.ClusterInstance.serverlessV2(name, { ...instanceOptions, scaleWithWriter: isReader });

    this.cluster = new rds.DatabaseCluster(this, 'Cluster', {
      engine,
      writer: makeInstance('writer', false),
      readers: Array.from({ length: aurora.readers }, (_, i) => makeInstance(`reader${i + 1}`, true)),
      serverlessV2MinCapacity: capacity.kind === 'serverless' ? capacity.minCapacityAcu : undefined,
      serverlessV2MaxCapacity: capacity.kind === 'serverless' ? capacity.maxCapacityAcu : undefined,
      vpc: props.vpc,
      vpcSubnets: props.subnets,
      securityGroups: [this.securityGroup],
      credentials: rds.Credentials.fromGeneratedSecret(props.masterUsername ?? DEFAULTS.stack.masterUsername),
      defaultDatabaseName: props.databaseName ?? DEFAULTS.stack.databaseName,
      storageEncrypted: true,
      iamAuthentication: true,
      deletionProtection: false,
      removalPolicy: aurora.snapshotOnDestroy ? RemovalPolicy.SNAPSHOT : RemovalPolicy.DESTROY,
    });
    if (!this.cluster.secret) throw new Error(`${this.node.path}: the cluster has no generated secret`);
    this.secret = this.cluster.secret;

    this.instances = this.cluster.node.children.flatMap((child) => {
      const resource = child.node.defaultChild;
      if (!(resource instanceof rds.CfnDBInstance)) return [];
      return [
        {
          role: child.node.id,
          instanceIdentifier: resource.ref,
          resourceId: resource.attrDbiResourceId,
          resource,
        },
      ];
    });
    const writer = this.instances.find((i) => i.role === 'writer');
    if (!writer) throw new Error(`${this.node.path}: the cluster has no writer instance`);
    this.writer = writer.resource;

    Validations.of(this.cluster).acknowledge({
      id: 'AwsSolutions-RDS10',
      reason:
        'A lab is torn down after its experiment (ttlHours); deletion protection would block `proxylab destroy`.',
    });
    Validations.of(this.cluster).acknowledge({
      id: 'AwsSolutions-RDS11',
      reason:
        "RDS Proxy for PostgreSQL always listens on 5432; the cluster keeps the same port so a target is the same URL with another host. Only the lab's own security groups can reach it.",
    });
    Validations.of(this.cluster.node.findChild('Secret')).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The master secret lives as long as the lab (hours); rotating it mid-experiment would break pgbench sessions and proxy auth during a measured step.',
    });
  }
}

/** Maps the lab's Aurora settings to instance-level (DB parameter group) parameters. */
function toInstanceParameters(aurora: AuroraConfig): Record<string, string> {
  const out: Record<string, string> = {};
  if (aurora.maxConnections !== null) out.max_connections = String(aurora.maxConnections);
  if (aurora.logConnections) {
    out.log_connections = '1';
    out.log_disconnections = '1';
  }
  return out;
}
