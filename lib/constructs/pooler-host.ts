import { Duration, Lazy, Stack, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { PoolerConfig } from '../config';
import { DEFAULTS } from '../config/defaults';
import type { PoolerRelease } from '../poolers/driver';
import { poolerDriver } from '../poolers/registry';
import { poolerEndpointOf } from '../config/pooler-endpoint';
import {
  adminPortOf,
  POOLER_CONTROL_PORT,
  POOLER_STATS_PORT,
  type PoolerEndpoint,
} from '../poolers/endpoint';
import type { PoolerHostConfig } from '../poolers/host-config';
import { poolerUserDataCommands } from './pooler-user-data';
import {
  cfnBootstrapCommands,
  grantSoftwareRead,
  isGraviton,
  nodeInstallCommands,
  softwareInstallCommands,
  type PoolerSource,
  type RunnerSoftware,
} from './runner-fleet';
import { DEFAULT_HOST_EGRESS, type HostEgress } from './network';

/** (lib/config/pooler-endpoint.ts: the run's dry run describes an undeployed pooler the same way) */
export { poolerEndpointOf };

/**
 * What a pooler needs of the database, and nothing more: where the writer is, its master secret,
 * and something to open 5432 on. Aurora (LabDatabase's cluster) and an RDS for PostgreSQL instance
 * both fit, so the pooler does not care which engine the lab runs.
 */
export interface PoolerDatabase {
  /** Hostname of the writer (Aurora writer endpoint, or the RDS instance endpoint); may be a token. */
  readonly writerHost: string;
  readonly port: number;
  /** Master credentials (JSON: username, password, …); the bootstrap reads them at boot. */
  readonly secret: secretsmanager.ISecret;
  /** The database's connections: its security group gains an inbound rule on `port` from the pooler. */
  readonly connectable: ec2.IConnectable;
}

/** The admin/stats user of every pooler's admin console (PgBouncer: admin_users, stats_users; contract 12/13). The name predates other products and stays: it is in deployed secrets. */
export const POOLER_ADMIN_USERNAME = 'pgbouncer_admin';

/**
 * One Secrets Manager secret per lab with a pooler: `{ "username": "pgbouncer_admin", "password": … }`,
 * generated at deploy time (never in the template or user data). Letters and digits only: it is
 * written into the pooler's credential file (PgBouncer's userlist), where quotes would need escaping.
 */
export function createPoolerAdminSecret(scope: Construct, id = 'PoolerAdminSecret'): secretsmanager.Secret {
  const secret = new secretsmanager.Secret(scope, id, {
    description:
      // one secret for every pooler of the lab; the text is kept so deployed templates do not change
      'proxylab: PgBouncer admin/stats user (SHOW POOLS/STATS, pool resizing) for every pooler of the lab',
    generateSecretString: {
      secretStringTemplate: JSON.stringify({ username: POOLER_ADMIN_USERNAME }),
      generateStringKey: 'password',
      excludePunctuation: true,
      passwordLength: 32,
    },
  });
  Validations.of(secret).acknowledge({
    id: 'AwsSolutions-SMG4',
    reason:
      'The pooler admin secret lives as long as the lab (hours) and is written into PgBouncer userlists at boot; rotating it would leave the poolers with the old password mid-experiment.',
  });
  return secret;
}

/** The release a validated pooler names (validation guarantees its driver lists it). */
export function releaseOf(pooler: PoolerConfig): PoolerRelease {
  const driver = poolerDriver(pooler.kind);
  const release = driver.releases.find((r) => r.version === pooler.version);
  if (!release)
    throw new Error(
      `pooler ${pooler.name}: ${driver.displayName} ${pooler.version} is not in lib/poolers/${driver.product}/releases.ts (validate the lab first)`,
    );
  return release;
}

/** The host config user data writes for `pooler` (no secrets). */
export function poolerHostConfig(
  scope: Construct,
  pooler: PoolerConfig,
  database: PoolerDatabase,
  adminSecret: secretsmanager.ISecret,
  listenAddr: string,
  /** Pooler deployments splitting poolPercent (poolerDeployments). @default 1 (a dedicated host) */
  sharedBy = 1,
): PoolerHostConfig {
  const driver = poolerDriver(pooler.kind);
  return {
    name: pooler.name,
    product: driver.product,
    placement: pooler.placement,
    region: Stack.of(scope).region,
    dbSecretArn: database.secret.secretArn,
    adminSecretArn: adminSecret.secretArn,
    serverHost: database.writerHost,
    serverPort: database.port,
    listenAddr,
    poolModes: pooler.poolModes,
    processes: pooler.processes,
    workerThreads: pooler.workerThreads,
    poolPercent: pooler.poolPercent,
    sharedBy,
    maxPreparedStatements: pooler.maxPreparedStatements,
    tls: pooler.tls,
    binaryPath: driver.host.binaryPath,
    version: pooler.version,
    // only when the lab sets some: a lab without settings keeps the host config (and user data) it had
    ...(Object.keys(pooler.settings).length > 0 ? { settings: pooler.settings } : {}),
  };
}

/**
 * The ports the runners reach a pooler on: data, stats, the agent's control channel (a rolling
 * restart on request, authenticated by a key from the admin secret too), one admin relay per process.
 */
export function poolerPorts(pooler: Pick<PoolerConfig, 'kind' | 'processes'>): ec2.Port[] {
  const { processes } = pooler;
  const admin =
    processes === 1
      ? ec2.Port.tcp(adminPortOf(0))
      : ec2.Port.tcpRange(adminPortOf(0), adminPortOf(processes - 1));
  return [
    ec2.Port.tcp(poolerDriver(pooler.kind).host.dataPort),
    ec2.Port.tcp(POOLER_STATS_PORT),
    ec2.Port.tcp(POOLER_CONTROL_PORT),
    admin,
  ];
}

export interface PoolerHostProps {
  readonly vpc: ec2.IVpc;
  /** Subnets for the host (the runners' subnets: public ones in the lab's own VPC, where it downloads the pinned release). */
  readonly subnets: ec2.SubnetSelection;
  /**
   * How the host reaches AWS APIs and packages (lib/constructs/network.ts).
   * @default - a public IPv4 address and HTTPS to anywhere
   */
  readonly egress?: HostEgress;
  /**
   * Where the pinned release's source comes from: a staged copy in S3 for hosts without internet
   * (lib/constructs/pooler-sources.ts).
   * @default - its upstream URL
   */
  readonly source?: PoolerSource;
  /** The lab's pooler (placement `dedicated`, defaults applied). */
  readonly pooler: PoolerConfig;
  readonly database: PoolerDatabase;
  /** The pgbench runners: the only clients allowed in. */
  readonly clients: ec2.ISecurityGroup;
  readonly adminSecret: secretsmanager.ISecret;
  /** The proxylab bundle (brings /opt/proxylab/pooler.js), as the runners install it. */
  readonly software: RunnerSoftware;
  /**
   * Availability Zones the host may go into (the runners' zones: the pooler sits next to the load).
   * @default - any zone of `subnets`
   */
  readonly availabilityZones?: readonly string[];
  /**
   * Root volume size in GiB (encrypted gp3).
   * @default DEFAULTS.stack.poolerRootVolumeGib (16)
   */
  readonly volumeSizeGib?: number;
  /**
   * How long CloudFormation waits for the boot script (build + bootstrap) to signal success.
   * @default the driver's host.bootMinutes (PgBouncer 20, PgDoorman 60: a Rust release build)
   */
  readonly bootTimeout?: Duration;
}

/**
 * A dedicated pooler host (any product: its driver installs and configures it): EC2 like the runners (AL2023, arm64 for Graviton, IMDSv2 only,
 * encrypted gp3 root volume, no key pair, managed through SSM). Inbound only from the runners'
 * security group on the pooler's data port, the agent's stats port and the admin relay ports; outbound
 * HTTPS (packages, the release tarball, AWS APIs) and PostgreSQL to the writer. User data builds
 * the pinned release after checking its published SHA-256, then bootstraps the pooler; the
 * instance signals CloudFormation with the script's result (CreationPolicy), so a failed install
 * fails the deploy.
 */
export class PoolerHost extends Construct {
  readonly instance: ec2.Instance;
  readonly securityGroup: ec2.SecurityGroup;
  readonly role: iam.Role;
  readonly pooler: PoolerConfig;
  /** The stack output entry (host = the instance's private IP). */
  readonly endpoint: PoolerEndpoint;

  constructor(scope: Construct, id: string, props: PoolerHostProps) {
    super(scope, id);
    const { pooler } = props;
    if (pooler.placement !== 'dedicated' || pooler.instanceType === null)
      throw new Error(
        `${this.node.path}: pooler ${pooler.name} is not a dedicated pooler with an instanceType`,
      );
    this.pooler = pooler;
    const release = releaseOf(pooler);
    const product = poolerDriver(pooler.kind).displayName;

    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: `${product} host ${pooler.name}: inbound from the runners only; outbound HTTPS and PostgreSQL to the writer`,
      allowAllOutbound: false,
    });
    const egress = props.egress ?? DEFAULT_HOST_EGRESS;
    if (!egress.internet && !props.source)
      throw new Error(
        `${this.node.path}: pooler ${pooler.name}: the host has no internet path, so the ${product} ${pooler.version} source must be staged (props.source)`,
      );
    egress.allowHttps(
      this.securityGroup,
      egress.internet
        ? `AWS APIs, SSM, the AL2023 repositories and the ${product} release`
        : 'AWS APIs, SSM and the AL2023 repositories',
    );
    for (const port of poolerPorts(pooler)) {
      // Adds the ingress here and the matching egress on the runners' group (it allows no outbound by default).
      this.securityGroup.connections.allowFrom(props.clients, port, `runners to ${product} ${pooler.name}`);
    }
    this.securityGroup.connections.allowTo(
      props.database.connectable,
      ec2.Port.tcp(props.database.port),
      `${product} ${pooler.name} to PostgreSQL`,
    );

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
      description: `proxylab pooler host ${pooler.name}: SSM managed, read the DB and pooler admin secrets`,
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('AmazonSSMManagedInstanceCore')],
    });
    props.database.secret.grantRead(this.role);
    props.adminSecret.grantRead(this.role);
    grantSoftwareRead(this.role, props.software);
    props.source?.grantRead(this.role);

    const config = poolerHostConfig(this, pooler, props.database, props.adminSecret, '0.0.0.0');
    // The same order as on a runner: base tools, the proxylab bundle (brings pooler.js), the pooler.
    const commands = [
      ...cfnBootstrapCommands(),
      ...nodeInstallCommands(['postgresql17']),
      'psql --version',
      'node --version',
      ...softwareInstallCommands(props.software),
      ...poolerUserDataCommands(release, config, props.source?.location),
    ];

    const userData = ec2.UserData.forLinux({ shebang: '#!/bin/bash' });
    const arm = isGraviton(pooler.instanceType);
    this.instance = new ec2.Instance(this, 'Host', {
      vpc: props.vpc,
      vpcSubnets: props.availabilityZones
        ? { ...props.subnets, availabilityZones: [...props.availabilityZones] }
        : props.subnets,
      instanceType: new ec2.InstanceType(pooler.instanceType),
      machineImage: ec2.MachineImage.latestAmazonLinux2023({
        cpuType: arm ? ec2.AmazonLinuxCpuType.ARM_64 : ec2.AmazonLinuxCpuType.X86_64,
      }),
      securityGroup: this.securityGroup,
      role: this.role,
      userData,
      // A new bundle or release must replace the host: a user-data change on an EBS-backed
      // instance only stops and starts it, and the new script never runs.
      userDataCausesReplacement: true,
      requireImdsv2: true,
      associatePublicIpAddress: egress.publicIpv4,
      blockDevices: [
        {
          deviceName: '/dev/xvda',
          volume: ec2.BlockDeviceVolume.ebs(props.volumeSizeGib ?? DEFAULTS.stack.poolerRootVolumeGib, {
            encrypted: true,
            volumeType: ec2.EbsDeviceVolumeType.GP3,
            deleteOnTermination: true,
          }),
        },
      ],
    });
    // The script's exit code reaches CloudFormation (cfn-signal in an EXIT trap, set up first).
    userData.addSignalOnExitCommand(this.instance);
    userData.addCommands(Lazy.string({ produce: () => commands.join('\n') }));
    this.instance.instance.cfnOptions.creationPolicy = {
      resourceSignal: {
        count: 1,
        timeout: (
          props.bootTimeout ?? Duration.minutes(poolerDriver(pooler.kind).host.bootMinutes ?? 20)
        ).toIsoString(),
      },
    };
    this.endpoint = poolerEndpointOf(pooler, this.instance.instancePrivateIp);

    Validations.of(this.instance).acknowledge({
      id: 'AwsSolutions-EC28',
      reason:
        'The pooler agent reports per-process CPU to the runners (POOLER_STATS_PORT), sampled during every step; 1-minute detailed monitoring would add cost without being read.',
    });
    Validations.of(this.instance).acknowledge({
      id: 'AwsSolutions-EC29',
      reason:
        'Pooler hosts are disposable and recreated by a redeploy; termination protection would block `proxylab destroy`.',
    });
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AmazonSSMManagedInstanceCore]',
      reason:
        'AmazonSSMManagedInstanceCore is the AWS-maintained minimum for the SSM agent (the only way in: no SSH, no key pair).',
    });
  }
}
