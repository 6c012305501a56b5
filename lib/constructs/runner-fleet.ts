import { Duration, Lazy, Stack, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { RunnerPlacement } from '../config';
import type { PoolerRelease, PoolerSourceLocation } from '../poolers/driver';
import { DEFAULT_HOST_EGRESS, type HostEgress } from './network';
import type { PoolerHostConfig } from '../poolers/host-config';
import { poolerUserDataCommands } from './pooler-user-data';
import { poolerDriver } from '../poolers/registry';
import { DEFAULTS } from '../config/defaults';
import { logicalIdOf } from './metrics-collector';
import { SPOT_REQUEST_TAG, SpotRequestCanceller } from './spot-request-canceller';

/**
 * The runner software (the suite runner bundle, lib/constructs/runner-asset.ts, unless a caller brings
 * its own): an asset (zip or file) copied to the runner and a command run once after the base
 * tools are installed. The asset lands in `/opt/proxylab/`.
 */
export interface RunnerSoftware {
  readonly asset: s3assets.Asset;
  /** Shell command run as root from /opt/proxylab after download (e.g. `./install.sh`). */
  readonly command: string;
}

export interface RunnerFleetProps {
  readonly vpc: ec2.IVpc;
  /** Subnets for the runners (public ones when `egress.publicIpv4`: each runner gets a public IPv4, no inbound rules). */
  readonly subnets: ec2.SubnetSelection;
  /**
   * How the runners reach AWS APIs and packages (the network decides: lib/constructs/network.ts).
   * @default - a public IPv4 address and HTTPS to anywhere
   */
  readonly egress?: HostEgress;
  /** EC2 instance type; Graviton types (`c7g.large`) get the arm64 AMI, others x86_64. */
  readonly instanceType: string;
  /** How many runners. */
  readonly count: number;
  /**
   * EC2 placement group strategy.
   * @default 'any' - no placement group
   */
  readonly placement?: RunnerPlacement;
  /** Targets the runners connect to on 5432 (the cluster and every proxy). */
  readonly databaseTargets: readonly ec2.IConnectable[];
  /** The DB master secret (read). */
  readonly dbSecret: secretsmanager.ISecret;
  /** Results bucket (write under `runs/`). */
  readonly bucket: s3.IBucket;
  /** The metrics collector (invoke). */
  readonly collector: lambda.IFunction;
  /**
   * Root volume size in GiB (encrypted gp3).
   * @default DEFAULTS.stack.runnerRootVolumeGib (16)
   */
  readonly volumeSizeGib?: number;
  /**
   * Runner software to install at boot.
   * @default - none: the runner has pgbench, psql and Node, and the suite engine is started over SSM
   */
  readonly runnerSoftware?: RunnerSoftware;
  /**
   * Availability Zones that offer `instanceType` (chosen at deploy time with
   * DescribeInstanceTypeOfferings, see lib/operator/availability-zones.ts); runners go only into
   * `subnets` in these zones.
   * @default - any zone of `subnets` (the first one: not every type is offered in every zone)
   */
  readonly availabilityZones?: readonly string[];
  /**
   * How long CloudFormation waits for each runner's boot script to signal success.
   * @default Duration.minutes(20)
   */
  readonly bootTimeout?: Duration;
  /**
   * Run the runners on Spot capacity: a persistent Spot request whose interruption behaviour is
   * `stop` (see SPOT_MARKET_OPTIONS), cancelled by the stack before the runner is deleted
   * (SpotRequestCanceller).
   * @default false - on-demand runners
   */
  readonly spot?: boolean;
}

/**
 * The Spot request of a spot runner. `persistent` + `stop` rather than `one-time` + `terminate`:
 * - EC2 can only *stop* an interrupted Spot Instance when its request is `persistent` ("The Spot
 *   Instance request type must be persistent", EC2 User Guide, interruption-behavior.html; the
 *   SpotMarketOptions API: "persistent Spot Instance requests are only supported when the instance
 *   interruption behavior is either hibernate or stop").
 * - A stopped runner keeps its instance id and its EBS root (the installed runner software, pgbench),
 *   and EC2 starts it again "when capacity is available in the same Availability Zone and for the
 *   same instance type" (same page). The stack's RunnerIds output stays true, so
 *   `proxylab run --run-id <same id>` resumes on the same runner once it is back.
 * - `one-time` + `terminate` would end the runner for good: CloudFormation still lists the
 *   terminated instance, and nothing but a new stack would replace it.
 * The stop path needs an EBS root (the runners have one; instance-store roots cannot stop).
 * No MaxPrice: AWS advises against it (more interruptions); the Spot price is paid, capped at on-demand.
 */
export const SPOT_MARKET_OPTIONS = {
  marketType: 'spot',
  spotOptions: { spotInstanceType: 'persistent', instanceInterruptionBehavior: 'stop' },
} as const;

/** A pooler release's source for a host: where it is, and the read grant a host role needs for it. */
export interface PoolerSource {
  readonly location: PoolerSourceLocation;
  grantRead(role: iam.IRole): void;
}

/** Graviton instance families (`c7g`, `m6gd`, `c6gn`, `t4g`, `r8g`…) run the arm64 AMI. */
export function isGraviton(instanceType: string): boolean {
  const family = instanceType.split('.')[0] ?? '';
  return /^[a-z]+\d+g[a-z]*$/.test(family);
}

/** Directory the runner software is unpacked into. */
const RUNNER_HOME = '/opt/proxylab';

/** Node major version the runners install (AL2023 package `nodejs<major>`, binary `node-<major>`). */
export const RUNNER_NODE_MAJOR = 22;

/**
 * Kernel settings for `-C` (a new connection per transaction): every closed connection to the one
 * target (host, 5432) holds its local port in TIME_WAIT for 60 s, so the default range
 * (32768–60999, ~28k ports) caps new connections at ~470/s per target — errors that would measure
 * the runner, not the pooler. A wider range and `tcp_tw_reuse=1` (reuse a TIME_WAIT port for a new
 * outgoing connection when TCP timestamps prove it safe; Linux ip-sysctl documentation) lift that.
 */
export const RUNNER_SYSCTLS: Readonly<Record<string, string>> = {
  'net.ipv4.ip_local_port_range': '10000 65535',
  'net.ipv4.tcp_tw_reuse': '1',
};

/** Where the sysctls are persisted on the runner. */
export const RUNNER_SYSCTL_FILE = '/etc/sysctl.d/90-proxylab-runner.conf';

/**
 * The first lines of every proxylab boot script (runners and pooler hosts): strict mode, then the
 * CloudFormation helper scripts, so a failure of anything below still reaches CloudFormation
 * through the cfn-signal exit trap.
 */
export function cfnBootstrapCommands(): string[] {
  return [
    'set -euo pipefail',
    // cfn-signal (the exit trap) is not on current AL2023 AMIs (amazonlinux/amazon-linux-2023#768):
    // install it first, so a failure of anything below still reaches CloudFormation.
    'dnf install -y aws-cfn-bootstrap',
  ];
}

/** Node 22 (for the proxylab bundle) plus `packages`, with `node` resolving to it. */
export function nodeInstallCommands(packages: readonly string[]): string[] {
  const node = `node-${RUNNER_NODE_MAJOR}`;
  return [
    // Node 20 reached end of life on 2026-04-30; AL2023 ships nodejs22 as `node-22`.
    `dnf install -y ${[...packages, `nodejs${RUNNER_NODE_MAJOR}`].join(' ')}`,
    `# nodejs${RUNNER_NODE_MAJOR} installs ${node}; make \`node\` resolve to it`,
    `if ! command -v node >/dev/null 2>&1; then alternatives --set node /usr/bin/${node} || ln -sf /usr/bin/${node} /usr/local/bin/node; fi`,
  ];
}

/**
 * The base user data (bash): installs the CloudFormation helper scripts (cfn-signal), pgbench
 * (postgresql17 + -contrib) and Node 22, widens the ephemeral port range, and fails the boot
 * script loudly if pgbench or Node is missing. Shellcheck-clean; exported for tests.
 */
export function baseUserDataCommands(): string[] {
  return [
    ...cfnBootstrapCommands(),
    ...nodeInstallCommands(['postgresql17', 'postgresql17-contrib']),
    `printf '%s\\n' ${Object.entries(RUNNER_SYSCTLS)
      .map(([k, v]) => `'${k} = ${v}'`)
      .join(' ')} > ${RUNNER_SYSCTL_FILE}`,
    `sysctl -p ${RUNNER_SYSCTL_FILE}`,
    'command -v pgbench',
    'pgbench --version',
    'node --version',
    `mkdir -p ${RUNNER_HOME}`,
    `echo "proxylab runner ready" > ${RUNNER_HOME}/READY`,
  ];
}

/**
 * Downloads `software.asset` into /opt/proxylab (unpacking a zip there) and runs `software.command`
 * in that directory. Used by the runners and the pooler hosts (both need the proxylab bundle).
 */
export function softwareInstallCommands(software: RunnerSoftware): string[] {
  const local = `${RUNNER_HOME}/${software.asset.isZipArchive ? 'runner.zip' : 'runner'}`;
  return [
    `mkdir -p ${RUNNER_HOME}`,
    // Own command rather than UserData.addS3DownloadCommand, whose `$(dirname …)` is unquoted (SC2046).
    `aws s3 cp 's3://${software.asset.s3BucketName}/${software.asset.s3ObjectKey}' '${local}'`,
    ...(software.asset.isZipArchive ? ['dnf install -y unzip', `unzip -o "${local}" -d ${RUNNER_HOME}`] : []),
    `cd ${RUNNER_HOME}`,
    software.command,
  ];
}

/**
 * Lets `role` read exactly the software object: Asset.grantRead would add
 * s3:GetObject*, List* and GetBucket* on the whole CDK staging bucket (cdk-nag IAM5). No KMS grant:
 * the bootstrap bucket is SSE-KMS (aws-cdk's bootstrap-template.yaml, `StagingBucket`:
 * `SSEAlgorithm: aws:kms`), by default with the AWS managed key aws/s3 (the CLI passes
 * `FileAssetsBucketKmsKeyId` `AWS_MANAGED_KEY` unless told otherwise), which S3 uses for any
 * principal of the account it lets read the object; `--bootstrap-customer-key` creates a key whose
 * policy allows the account's principals kms:Decrypt through S3 (`kms:CallerAccount`,
 * `kms:ViaService`). A key given with `--bootstrap-kms-key-id` must allow the hosts' roles itself:
 * an IAM grant here would not do without the key policy's consent (KMS Developer Guide, "Key
 * policies"), and `proxylab doctor` checks it (lib/operator/staging-key.ts).
 */
export function grantSoftwareRead(role: iam.IRole, software: RunnerSoftware): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['s3:GetObject'],
      resources: [software.asset.bucket.arnForObjects(software.asset.s3ObjectKey)],
    }),
  );
}

/**
 * `count` EC2 runners: AL2023 (arm64 for Graviton), IMDSv2 only, encrypted gp3 root volume, no
 * inbound rules, managed through SSM. They may reach the cluster and every proxy on 5432, read
 * the DB secret, write under `runs/` in the results bucket and invoke the collector.
 */
export class RunnerFleet extends Construct {
  readonly instances: ec2.Instance[];
  readonly role: iam.Role;
  readonly securityGroup: ec2.SecurityGroup;
  /** The commands every runner runs at boot (each instance wraps them with its own cfn-signal). */
  readonly userData: ec2.UserData;
  /** Spot runners only: the custom resources that cancel each runner's Spot request on deletion. */
  readonly spotRequests: SpotRequestCanceller | null;
  /** How the runners reach AWS (the network's HostEgress). */
  readonly egress: HostEgress;
  private hasRunnerSoftware = false;
  private poolerName: string | null = null;
  private poolerBootMinutes = 20;

  constructor(scope: Construct, id: string, props: RunnerFleetProps) {
    super(scope, id);
    const arm = isGraviton(props.instanceType);

    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description:
        'pgbench runners: no inbound; outbound HTTPS (SSM, AWS APIs, AL2023 repositories over S3) and PostgreSQL',
      allowAllOutbound: false,
    });
    const egress = props.egress ?? DEFAULT_HOST_EGRESS;
    this.egress = egress;
    egress.allowHttps(this.securityGroup, 'AWS APIs, SSM and the AL2023 repositories');
    for (const target of props.databaseTargets) {
      this.securityGroup.connections.allowTo(target, ec2.Port.tcp(5432), 'runners to PostgreSQL');
    }

    this.role = this.createRole(props);

    this.userData = ec2.UserData.forLinux({ shebang: '#!/bin/bash' });
    this.userData.addCommands(...baseUserDataCommands());
    if (props.runnerSoftware) this.addRunnerSoftware(props.runnerSoftware);
    // A pooler on the runners (addPooler, after this) may build for longer than 20 minutes (PgDoorman:
    // its driver's host.bootMinutes): the timeout is read when the template is rendered.
    const bootTimeout = Lazy.string({
      produce: () =>
        (props.bootTimeout ?? Duration.minutes(Math.max(20, this.poolerBootMinutes))).toIsoString(),
    });

    const placementGroup = this.placementGroupFor(props.placement);
    const spotTemplate = props.spot ? this.spotLaunchTemplate() : undefined;

    const machineImage = ec2.MachineImage.latestAmazonLinux2023({
      cpuType: arm ? ec2.AmazonLinuxCpuType.ARM_64 : ec2.AmazonLinuxCpuType.X86_64,
    });
    this.instances = Array.from({ length: props.count }, (_, i) =>
      this.createRunner(i, props, { machineImage, placementGroup, spotTemplate, bootTimeout }),
    );
    // Without this a deleted runner's persistent request reopens and launches a new instance
    // outside the stack (lib/constructs/spot-request-canceller.ts).
    this.spotRequests = null;
    if (spotTemplate) {
      const spotRequests = new SpotRequestCanceller(this, 'SpotRequests');
      for (const instance of this.instances) spotRequests.track(instance);
      this.spotRequests = spotRequests;
    }

    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AmazonSSMManagedInstanceCore]',
      reason:
        'AmazonSSMManagedInstanceCore is the AWS-maintained minimum for the SSM agent (Run Command is how the CLI drives runners); hand-copying it would drift from what the agent needs.',
    });
    Validations.of(this.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(props.bucket)}.Arn>/runs/*]`,
      reason: "Run ids are chosen at run time; runners may only PutObject under runs/ of this lab's bucket.",
    });
  }

  /** The runners' role: SSM managed, read the DB secret, write under runs/, invoke the collector. */
  private createRole(props: RunnerFleetProps): iam.Role {
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
      description: 'proxylab runner: SSM managed, read the DB secret, write runs/, invoke the collector',
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('AmazonSSMManagedInstanceCore')],
    });
    props.dbSecret.grantRead(role);
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:PutObject'],
        resources: [props.bucket.arnForObjects('runs/*')],
      }),
    );
    // Exactly this function (grantInvoke would add `<arn>:*`, every version and alias).
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: [props.collector.functionArn],
      }),
    );
    return role;
  }

  /** The EC2 placement group of `placement`; none for 'any' (the default). */
  private placementGroupFor(placement: RunnerPlacement | undefined): ec2.PlacementGroup | undefined {
    return placement && placement !== 'any'
      ? new ec2.PlacementGroup(this, 'Placement', {
          strategy:
            placement === 'cluster' ? ec2.PlacementGroupStrategy.CLUSTER : ec2.PlacementGroupStrategy.SPREAD,
        })
      : undefined;
  }

  /**
   * The spot runners' launch template. ec2.Instance has no market options (AWS::EC2::Instance has no
   * InstanceMarketOptions either): spot runners launch from a template that carries them, with
   * IMDSv2 required in the same template (requireImdsv2 would add a second template, and an
   * instance takes only one). The template tags each Spot request with the stack id
   * ("spot-instances-request" is one of the four resource types a launch template can tag, EC2 API
   * LaunchTemplateTagSpecificationRequest): the canceller may cancel requests with that tag only.
   */
  private spotLaunchTemplate(): ec2.CfnLaunchTemplate {
    return new ec2.CfnLaunchTemplate(this, 'SpotLaunchTemplate', {
      launchTemplateData: {
        metadataOptions: { httpTokens: 'required' },
        instanceMarketOptions: {
          marketType: SPOT_MARKET_OPTIONS.marketType,
          spotOptions: { ...SPOT_MARKET_OPTIONS.spotOptions },
        },
        tagSpecifications: [
          {
            resourceType: 'spot-instances-request',
            tags: [{ key: SPOT_REQUEST_TAG, value: Stack.of(this).stackId }],
          },
        ],
      },
    });
  }

  /**
   * Runner `i`: its instance, its own user data (the exit trap signals it alone), its boot signal
   * and its cdk-nag notes.
   */
  private createRunner(
    i: number,
    props: RunnerFleetProps,
    shared: {
      readonly machineImage: ec2.IMachineImage;
      readonly placementGroup: ec2.PlacementGroup | undefined;
      readonly spotTemplate: ec2.CfnLaunchTemplate | undefined;
      readonly bootTimeout: string;
    },
  ): ec2.Instance {
    const { machineImage, placementGroup, spotTemplate, bootTimeout } = shared;
    // Each runner has its own copy of the user data: its exit trap signals this instance only.
    const userData = ec2.UserData.forLinux({ shebang: '#!/bin/bash' });
    const instance = new ec2.Instance(this, `Runner${i + 1}`, {
      vpc: props.vpc,
      vpcSubnets: props.availabilityZones
        ? { ...props.subnets, availabilityZones: [...props.availabilityZones] }
        : props.subnets,
      instanceType: new ec2.InstanceType(props.instanceType),
      machineImage,
      securityGroup: this.securityGroup,
      role: this.role,
      userData,
      // New runner software (a new asset key in the user data) must replace the instance: an
      // EBS-backed instance is only stopped and started on a user-data change, and the new user
      // data never runs (aws-cdk-lib ec2.InstanceProps.userDataCausesReplacement).
      userDataCausesReplacement: true,
      requireImdsv2: spotTemplate === undefined,
      associatePublicIpAddress: this.egress.publicIpv4,
      placementGroup,
      blockDevices: [
        {
          deviceName: '/dev/xvda',
          volume: ec2.BlockDeviceVolume.ebs(props.volumeSizeGib ?? DEFAULTS.stack.runnerRootVolumeGib, {
            encrypted: true,
            volumeType: ec2.EbsDeviceVolumeType.GP3,
            deleteOnTermination: true,
          }),
        },
      ],
    });
    if (spotTemplate) {
      instance.instance.launchTemplate = {
        launchTemplateId: spotTemplate.ref,
        version: spotTemplate.attrLatestVersionNumber,
      };
    }
    // The boot script's exit code reaches CloudFormation (cfn-signal in an EXIT trap): a runner
    // whose packages or runner software failed to install fails the deploy, not the first run.
    userData.addSignalOnExitCommand(instance);
    // The shared commands (base + runner software), rendered when the template is.
    userData.addCommands(
      Lazy.string({ produce: () => this.userData.render().replace(/^#!\/bin\/bash\n/, '') }),
    );
    instance.instance.cfnOptions.creationPolicy = {
      resourceSignal: { count: 1, timeout: bootTimeout },
    };
    Validations.of(instance).acknowledge({
      id: 'AwsSolutions-EC28',
      reason:
        'Runner CPU is sampled by the suite engine itself (load-generator saturation check); 1-minute detailed monitoring would add cost without being read.',
    });
    Validations.of(instance).acknowledge({
      id: 'AwsSolutions-EC29',
      reason:
        'Runners are disposable and recreated by a redeploy; termination protection would block `proxylab destroy`.',
    });
    return instance;
  }

  /**
   * Installs the runner software: downloads `software.asset` to
   * /opt/proxylab and runs `software.command` there. Call at most once, before synthesis.
   */
  addRunnerSoftware(software: RunnerSoftware): void {
    if (this.hasRunnerSoftware)
      throw new Error(`${this.node.path}: runner software is already installed; addRunnerSoftware runs once`);
    this.hasRunnerSoftware = true;
    this.userData.addCommands(...softwareInstallCommands(software));
    grantSoftwareRead(this.role, software);
  }

  /**
   * Runs a self-hosted pooler on every runner (placement `on-runners`, listening on 127.0.0.1): the same
   * install and bootstrap as a dedicated pooler host (pooler-user-data.ts), after the runner
   * software (which brings pooler.js) and before the runner signals CloudFormation. The runners
   * may read `adminSecret` (the bootstrap writes it into the pooler's credentials; the runner software
   * uses it for SHOW POOLS/STATS and pool resizing). At most one pooler: all listen on the same ports.
   */
  addPooler(
    release: PoolerRelease,
    config: PoolerHostConfig,
    adminSecret: secretsmanager.ISecret,
    /** Where the release's source comes from (a staged copy without internet). @default upstream */
    source?: PoolerSource,
  ): void {
    if (!this.hasRunnerSoftware)
      throw new Error(`${this.node.path}: add the runner software (it brings pooler.js) before a pooler`);
    if (this.poolerName !== null)
      throw new Error(
        `${this.node.path}: pooler ${this.poolerName} already runs on the runners; ${config.name} would need the same ports`,
      );
    if (!this.egress.internet && !source)
      throw new Error(
        `${this.node.path}: pooler ${config.name}: the runners have no internet path, so the ${release.product} ${release.version} source must be staged (the source argument)`,
      );
    this.poolerName = config.name;
    this.poolerBootMinutes = poolerDriver(release.product).host.bootMinutes ?? 20;
    this.userData.addCommands(...poolerUserDataCommands(release, config, source?.location));
    source?.grantRead(this.role);
    adminSecret.grantRead(this.role);
  }
}
