import { RemovalPolicy, Token, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { AuroraConfig, DatabaseConfig, PostgresDatabaseConfig } from '../config';
import { DEFAULTS } from '../config/defaults';
import { findEngineVersion } from '../config/engine-versions';
import { findRdsPostgresVersion } from '../config/rds-postgres';

export interface LabDatabaseProps {
  readonly vpc: ec2.IVpc;
  /** Subnets for the database (isolated ones). */
  readonly subnets: ec2.SubnetSelection;
  /** The lab's database (`aurora` or `postgres` section), defaults applied. */
  readonly database: DatabaseConfig;
  /**
   * The Availability Zone of the writer (Aurora's writer instance, or the RDS for PostgreSQL
   * instance): the lab puts it in the runners' zone so no target's hop to the database crosses zones
   * unless the lab asks for it (`crossZone`). Ignored for a Multi-AZ RDS instance (CloudFormation
   * refuses AvailabilityZone with MultiAZ; the primary's zone is RDS's choice).
   * @default - none: RDS chooses ("A random, system-chosen Availability Zone", aws-cdk-lib
   * ClusterInstanceOptions.availabilityZone / DatabaseInstanceProps.availabilityZone)
   */
  readonly writerAvailabilityZone?: string;
  /**
   * Aurora cluster parameters the lab's disruptions need (a Blue/Green switchover:
   * rds.logical_replication), from their records (lib/suite/disruption-actions.ts). Empty or absent:
   * the engine's default cluster parameter group, as before.
   */
  readonly clusterParameters?: Readonly<Record<string, string>>;
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

/** One DB instance of the database, for outputs and Performance Insights ARNs. */
export interface LabDbInstance {
  /** `writer`, `reader1`, … (an RDS for PostgreSQL instance is the `writer`). */
  readonly role: string;
  /** DBInstanceIdentifier (token). */
  readonly instanceIdentifier: string;
  /** DbiResourceId (`db-…`, token): the Performance Insights identifier. */
  readonly resourceId: string;
  readonly resource: rds.CfnDBInstance;
}

/** Stack output descriptions of the database's identifier and endpoints (they differ by engine). */
export interface LabDbOutputDescriptions {
  readonly identifier: string;
  readonly writerEndpoint: string;
  readonly readerEndpoint: string;
}

/** Where clients connect: a hostname (token) and the port. */
export interface LabDbEndpoint {
  readonly hostname: string;
  readonly port: number;
}

/**
 * The lab's database, engine-neutral to its users: the secret, the writer endpoint, `connections`
 * (security group rules), the DB instances with identifiers and resource ids, and the RDS Proxy
 * target. Two engines behind it:
 *
 * - Aurora PostgreSQL: a writer (+ readers) on the lab's class or serverless v2.
 * - RDS for PostgreSQL: one DB instance on the lab's class and gp3 storage, single-AZ unless
 *   `multiAz` (a synchronous standby, not readable).
 *
 * Both: a DB parameter group only when the lab overrides something (`max_connections`,
 * `log_connections` / `log_disconnections`); Performance Insights with the free 7-day retention;
 * encrypted storage; master credentials generated into Secrets Manager; deleted without a final
 * snapshot unless `snapshotOnDestroy`.
 */
export class LabDatabase extends Construct implements ec2.IConnectable {
  readonly engine: DatabaseConfig['engine'];
  /** The Aurora cluster; undefined for RDS for PostgreSQL. */
  readonly cluster: rds.DatabaseCluster | undefined;
  /** The RDS for PostgreSQL instance; undefined for Aurora. */
  readonly instance: rds.DatabaseInstance | undefined;
  readonly secret: secretsmanager.ISecret;
  readonly securityGroup: ec2.SecurityGroup;
  /** Security group rules to the database (runners, poolers: `connections.allowDefaultPortFrom(x)`). */
  readonly connections: ec2.Connections;
  /** Writer first, then readers in order (one instance for RDS for PostgreSQL). */
  readonly instances: LabDbInstance[];
  /** The writer's CfnDBInstance (proxies' target groups depend on it). */
  readonly writer: rds.CfnDBInstance;
  /** Where writes go: Aurora's cluster endpoint, or the RDS instance endpoint. */
  readonly writerEndpoint: LabDbEndpoint;
  /** Aurora's reader endpoint; the instance endpoint for RDS for PostgreSQL (it has no readers). */
  readonly readerEndpoint: LabDbEndpoint;
  /** Aurora's cluster identifier, or the RDS DB instance identifier (the ClusterIdentifier output). */
  readonly identifier: string;
  /** What RDS Proxies target. */
  readonly proxyTarget: rds.ProxyTarget;
  readonly parameterGroup: rds.ParameterGroup | undefined;
  /** How the stack outputs describe `identifier` and the endpoints for this engine. */
  readonly outputDescriptions: LabDbOutputDescriptions;
  /** The zone the writer was placed in (`writerAvailabilityZone`), null when RDS chooses it. */
  readonly writerAvailabilityZone: string | null;

  constructor(scope: Construct, id: string, props: LabDatabaseProps) {
    super(scope, id);
    this.engine = props.database.engine;
    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description:
        props.database.engine === 'postgres'
          ? 'RDS for PostgreSQL instance: PostgreSQL from the lab runners and proxies only'
          : 'Aurora cluster: PostgreSQL from the lab runners and proxies only',
      allowAllOutbound: false,
    });
    const built =
      props.database.engine === 'postgres'
        ? this.buildInstance(props, props.database)
        : this.buildCluster(props, props.database);
    this.cluster = built.cluster;
    this.instance = built.instance;
    this.secret = built.secret;
    this.connections = built.connections;
    this.instances = built.instances;
    this.writerEndpoint = built.writerEndpoint;
    this.readerEndpoint = built.readerEndpoint;
    this.identifier = built.identifier;
    this.proxyTarget = built.proxyTarget;
    this.parameterGroup = built.parameterGroup;
    this.outputDescriptions = built.outputDescriptions;
    this.writerAvailabilityZone =
      props.writerAvailabilityZone === undefined ||
      (props.database.engine === 'postgres' && props.database.multiAz)
        ? null
        : props.writerAvailabilityZone;
    const writer = this.instances.find((i) => i.role === 'writer');
    if (!writer) throw new Error(`${this.node.path}: the database has no writer instance`);
    this.writer = writer.resource;
    // In an existing VPC the runners' zone is a looked-up subnet's, a literal name: the writer is
    // pinned there on purpose (same-zone measurements), which is what cfn-lint's W3010 warns about.
    if (this.writerAvailabilityZone !== null && !Token.isUnresolved(this.writerAvailabilityZone))
      this.writer.addMetadata('cfn-lint', {
        config: {
          ignore_checks: ['W3010'],
          ignore_reasons: {
            W3010:
              "the writer is placed in the runners' zone, a zone of the lab's own subnets, so runners and writer share a zone",
          },
        },
      });
  }

  private buildCluster(props: LabDatabaseProps, aurora: AuroraConfig): Built {
    const entry = findEngineVersion(aurora.engineVersion);
    if (!entry)
      throw new Error(
        `${this.node.path}: engine version ${aurora.engineVersion} is not in ACCEPTED_ENGINE_VERSIONS (validate the lab first)`,
      );
    const engine = rds.DatabaseClusterEngine.auroraPostgres({
      version: rds.AuroraPostgresEngineVersion[entry.cdkKey],
    });

    const parameterGroup = this.instanceParameterGroup(engine, aurora);

    const instanceOptions = {
      enablePerformanceInsights: aurora.performanceInsights,
      performanceInsightRetention: aurora.performanceInsights
        ? rds.PerformanceInsightRetention.DEFAULT
        : undefined,
      parameterGroup,
      publiclyAccessible: false,
      // A benchmark must not change version under the experiment.
      autoMinorVersionUpgrade: false,
    };
    const capacity = aurora.capacity;
    // Only the writer is placed: the suites load it; readers stay where RDS puts them.
    const writerZone =
      props.writerAvailabilityZone !== undefined ? { availabilityZone: props.writerAvailabilityZone } : {};
    const makeInstance = (name: string, isReader: boolean): rds.IClusterInstance =>
      capacity.kind === 'provisioned'
        ? rds.ClusterInstance.provisioned(name, {
            ...instanceOptions,
            ...(isReader ? {} : writerZone),
            instanceType: new ec2.InstanceType(capacity.instanceClass.replace(/^db\./, '')),
          })
        : rds.ClusterInstance.serverlessV2(name, {
            ...instanceOptions,
            ...(isReader ? {} : writerZone),
            scaleWithWriter: isReader,
          });

    const cluster = new rds.DatabaseCluster(this, 'Cluster', {
      engine,
      // Aurora I/O-Optimized (StorageType aurora-iopt1); absent keeps Aurora Standard, the default.
      ...(aurora.storageType === 'io-optimized'
        ? { storageType: rds.DBClusterStorageType.AURORA_IOPT1 }
        : {}),
      writer: makeInstance('writer', false),
      readers: Array.from({ length: aurora.readers }, (_, i) => makeInstance(`reader${i + 1}`, true)),
      // aws-cdk-lib DatabaseClusterProps.parameters: "The parameters in the DBClusterParameterGroup
      // to create automatically" (none: the engine's default group, as before)
      ...(Object.keys(props.clusterParameters ?? {}).length > 0
        ? { parameters: { ...props.clusterParameters } }
        : {}),
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
    if (!cluster.secret) throw new Error(`${this.node.path}: the cluster has no generated secret`);

    const instances = cluster.node.children.flatMap((child) => {
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
    acknowledgeLabDatabase(cluster, 'cluster');
    acknowledgeSecretRotation(cluster.node.findChild('Secret'));
    return {
      cluster,
      instance: undefined,
      secret: cluster.secret,
      connections: cluster.connections,
      instances,
      writerEndpoint: { hostname: cluster.clusterEndpoint.hostname, port: 5432 },
      readerEndpoint: { hostname: cluster.clusterReadEndpoint.hostname, port: 5432 },
      identifier: cluster.clusterIdentifier,
      proxyTarget: rds.ProxyTarget.fromCluster(cluster),
      parameterGroup,
      outputDescriptions: {
        identifier: 'Aurora cluster identifier',
        writerEndpoint: 'Writer endpoint hostname',
        readerEndpoint: 'Reader endpoint hostname',
      },
    };
  }

  private buildInstance(props: LabDatabaseProps, pg: PostgresDatabaseConfig): Built {
    const entry = findRdsPostgresVersion(pg.engineVersion);
    if (!entry)
      throw new Error(
        `${this.node.path}: RDS for PostgreSQL version ${pg.engineVersion} is not in RDS_POSTGRES_VERSIONS (validate the lab first)`,
      );
    const engine = rds.DatabaseInstanceEngine.postgres({ version: rds.PostgresEngineVersion[entry.cdkKey] });
    const parameterGroup = this.instanceParameterGroup(engine, pg);
    const instance = new rds.DatabaseInstance(this, 'Instance', {
      engine,
      instanceType: new ec2.InstanceType(pg.instanceClass.replace(/^db\./, '')),
      allocatedStorage: pg.allocatedStorageGb,
      storageType: rds.StorageType.GP3,
      multiAz: pg.multiAz,
      // CloudFormation: AvailabilityZone cannot be given for a Multi-AZ instance.
      ...(props.writerAvailabilityZone !== undefined && !pg.multiAz
        ? { availabilityZone: props.writerAvailabilityZone }
        : {}),
      vpc: props.vpc,
      vpcSubnets: props.subnets,
      securityGroups: [this.securityGroup],
      credentials: rds.Credentials.fromGeneratedSecret(props.masterUsername ?? DEFAULTS.stack.masterUsername),
      databaseName: props.databaseName ?? DEFAULTS.stack.databaseName,
      parameterGroup,
      storageEncrypted: true,
      iamAuthentication: true,
      deletionProtection: false,
      publiclyAccessible: false,
      // A benchmark must not change version under the experiment.
      autoMinorVersionUpgrade: false,
      enablePerformanceInsights: pg.performanceInsights,
      performanceInsightRetention: pg.performanceInsights
        ? rds.PerformanceInsightRetention.DEFAULT
        : undefined,
      removalPolicy: pg.snapshotOnDestroy ? RemovalPolicy.SNAPSHOT : RemovalPolicy.DESTROY,
    });
    if (!instance.secret) throw new Error(`${this.node.path}: the instance has no generated secret`);
    const resource = instance.node.defaultChild;
    if (!(resource instanceof rds.CfnDBInstance))
      throw new Error(`${this.node.path}: the instance has no CfnDBInstance`);

    acknowledgeLabDatabase(instance, 'instance');
    if (!pg.multiAz)
      Validations.of(instance).acknowledge({
        id: 'AwsSolutions-RDS3',
        reason:
          'Single-AZ is the lab default (postgres.multiAz false): a benchmark lab lives for hours and a standby doubles its cost; set multiAz to measure with one.',
      });
    acknowledgeSecretRotation(instance.node.findChild('Secret'));
    const endpoint = { hostname: instance.dbInstanceEndpointAddress, port: 5432 };
    return {
      cluster: undefined,
      instance,
      secret: instance.secret,
      connections: instance.connections,
      instances: [
        {
          role: 'writer',
          instanceIdentifier: instance.instanceIdentifier,
          resourceId: instance.instanceResourceId ?? resource.attrDbiResourceId,
          resource,
        },
      ],
      writerEndpoint: endpoint,
      readerEndpoint: endpoint,
      identifier: instance.instanceIdentifier,
      proxyTarget: rds.ProxyTarget.fromInstance(instance),
      parameterGroup,
      // RDS for PostgreSQL has no cluster: the Cluster* outputs carry the instance (docs/stacks.md).
      outputDescriptions: {
        identifier: 'RDS for PostgreSQL DB instance identifier (no cluster)',
        writerEndpoint: 'Writer (DB instance) endpoint hostname',
        readerEndpoint: 'The DB instance endpoint again (RDS for PostgreSQL has no readers)',
      },
    };
  }

  /** A DB parameter group only when the lab overrides something (toInstanceParameters). */
  private instanceParameterGroup(
    engine: rds.IEngine,
    db: Parameters<typeof toInstanceParameters>[0],
  ): rds.ParameterGroup | undefined {
    const parameters = toInstanceParameters(db);
    if (Object.keys(parameters).length === 0) return undefined;
    return new rds.ParameterGroup(this, 'InstanceParameters', {
      engine,
      description: 'proxylab instance parameters (max_connections, connection logging)',
      parameters,
    });
  }
}

/** What each engine's builder hands back to the engine-neutral construct (those fields of it). */
type Built = Pick<
  LabDatabase,
  | 'cluster'
  | 'instance'
  | 'secret'
  | 'connections'
  | 'instances'
  | 'writerEndpoint'
  | 'readerEndpoint'
  | 'identifier'
  | 'proxyTarget'
  | 'parameterGroup'
  | 'outputDescriptions'
>;

/** What both engines' database acknowledges to cdk-nag: no deletion protection, the default port. */
function acknowledgeLabDatabase(database: Construct, noun: 'cluster' | 'instance'): void {
  Validations.of(database).acknowledge({
    id: 'AwsSolutions-RDS10',
    reason:
      'A lab is torn down after its experiment (ttlHours); deletion protection would block `proxylab destroy`.',
  });
  Validations.of(database).acknowledge({
    id: 'AwsSolutions-RDS11',
    reason: `RDS Proxy for PostgreSQL always listens on 5432; the ${noun} keeps the same port so a target is the same URL with another host. Only the lab's own security groups can reach it.`,
  });
}

function acknowledgeSecretRotation(secret: Construct): void {
  Validations.of(secret).acknowledge({
    id: 'AwsSolutions-SMG4',
    reason:
      'The master secret lives as long as the lab (hours); rotating it mid-experiment would break pgbench sessions and proxy auth during a measured step.',
  });
}

/**
 * Maps the lab's settings to instance-level (DB parameter group) parameters. Aurora PostgreSQL and
 * RDS for PostgreSQL use the same names for these three (`max_connections`, `log_connections`,
 * `log_disconnections`, booleans as 1/0 in both engines' default parameter groups).
 */
function toInstanceParameters(db: {
  readonly maxConnections: number | null;
  readonly logConnections: boolean;
}): Record<string, string> {
  const out: Record<string, string> = {};
  if (db.maxConnections !== null) out.max_connections = String(db.maxConnections);
  if (db.logConnections) {
    out.log_connections = '1';
    out.log_disconnections = '1';
  }
  return out;
}
