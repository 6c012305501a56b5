/**
 * LabStack: one CloudFormation stack per lab file, composed of one construct per concern.
 * Environment-agnostic (no account/region, no context lookups): the same template deploys
 * anywhere — unless the lab names an existing VPC (`network`), which CDK looks up in the lab's
 * account and region, binding the stack to them. What it deploys and why: docs/stacks.md.
 */
import { App, CfnOutput, Stack, StackProps, Tags, Validations } from 'aws-cdk-lib';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as CdkNag from 'cdk-nag';
import { Construct } from 'constructs';
import type { LabConfig } from './config';
import { databaseEngineName, databaseInstanceClass } from './config/database';
import { AZ_CONTEXT_KEYS, LAB_OUTPUT_KEYS, stackNameFor } from './config/stack-outputs';
import { resultsBucketName } from './config/lab-resource-names';
import { LabDatabase } from './constructs/database';
import { MetricsCollector } from './constructs/metrics-collector';
import { ExistingLabNetwork, LabNetwork, type LabNetworkPlacement } from './constructs/network';
import { stagedPoolerSource } from './constructs/pooler-sources';
import { LabProxies } from './constructs/proxies';
import { ResultsBucket } from './constructs/results-bucket';
import {
  createPoolerAdminSecret,
  PoolerHost,
  poolerEndpointOf,
  poolerHostConfig,
  releaseOf,
  type PoolerDatabase,
} from './constructs/pooler-host';
import { RunnerFleet, RunnerSoftware, type PoolerSource } from './constructs/runner-fleet';
import type { PoolerRelease } from './poolers/driver';
import { auroraClusterParametersOf, cloudDisruptionsOf } from './config/disruptions';
import { poolerDeployments, type PoolerEndpoint } from './poolers/endpoint';
import { applyLabLifecycle, LabExpiry } from './constructs/ttl';
import { grantCloudRunner, proxylabRunnerSoftware } from './constructs/runner-asset';

export { AZ_CONTEXT_KEYS, LAB_OUTPUT_KEYS, parseLabOutputs, stackNameFor } from './config/stack-outputs';
export type { LabOutputKey, LabOutputs } from './config/stack-outputs';

export interface LabStackProps extends StackProps {
  /** The validated lab. */
  readonly lab: LabConfig;
  /**
   * Runner software installed at boot.
   * @default - the proxylab runner bundle (lib/constructs/runner-asset.ts), installed as /opt/proxylab/runner.js
   */
  readonly runnerSoftware?: RunnerSoftware;
}

export class LabStack extends Stack {
  readonly lab: LabConfig;
  /** The lab's own VPC (LabNetwork) or an existing one (ExistingLabNetwork). */
  readonly network: LabNetworkPlacement;
  readonly database: LabDatabase;
  readonly proxies: LabProxies;
  readonly results: ResultsBucket;
  readonly collector: MetricsCollector;
  readonly runners: RunnerFleet;
  /** One per `dedicated` pooler. */
  readonly poolerHosts: PoolerHost[];
  /** The pooler admin/stats user's secret; null when the lab has no pooler. */
  readonly poolerAdminSecret: secretsmanager.ISecret | null;
  /** Every pooler's stack output entry, in lab order. */
  readonly poolerEndpoints: PoolerEndpoint[];
  readonly expiry: LabExpiry | null;
  /** The zone of the runners and dedicated pooler hosts (a token without the deploy-time zone choice). */
  readonly runnerZone: string;

  constructor(scope: Construct, id: string, props: LabStackProps) {
    super(scope, id, {
      description: `proxylab lab "${props.lab.name}": ${databaseEngineName(props.lab.database.engine)} ${props.lab.database.engineVersion}, ${props.lab.proxies.length} RDS prox${props.lab.proxies.length === 1 ? 'y' : 'ies'}, ${props.lab.runners.count} runner(s)`,
      ...props,
    });
    const { lab } = props;
    this.lab = lab;
    // IMDSv2 launch templates get a name derived from the construct path (unique per lab stack)
    // instead of a fixed `Runner1LaunchTemplate` that collides when two labs share an account.
    this.node.setContext('@aws-cdk/aws-ec2:uniqueImdsv2TemplateName', true);

    // Expiry schedule (ttlHours) and the lifecycle tags proxylab:lab / owner / expires-at.
    this.expiry = applyLabLifecycle(this, { name: lab.name, owner: lab.owner, ttlHours: lab.ttlHours });
    for (const [key, value] of Object.entries(lab.tags)) Tags.of(this).add(key, value);

    const existing = lab.network.mode === 'existing' ? lab.network : null;
    // An existing VPC's zones are its subnets'; deploy then chooses only the runners' zones.
    const zones = existing ? null : availabilityZonesFromContext(this);
    const runnerZones = existing ? runnerZonesFromContext(this) : (zones?.runners ?? null);
    this.network = existing
      ? new ExistingLabNetwork(this, 'Network', {
          network: existing,
          ...(runnerZones ? { runnerAvailabilityZones: runnerZones } : {}),
        })
      : new LabNetwork(this, 'Network', zones ? { availabilityZones: zones.vpc } : {});
    const egress = this.network.hostEgress;
    // Hosts without internet get each pinned pooler release from the CDK staging bucket instead
    // (staged by `proxylab deploy`, checked against its published SHA-256 there and on the host).
    const poolerSource = (release: PoolerRelease): PoolerSource | undefined =>
      egress.internet ? undefined : stagedPoolerSource(this, release);
    // An existing VPC's runner subnets are already narrowed to the runner zones.
    const hostZones = !existing && zones ? { availabilityZones: zones.runners } : {};
    this.results = new ResultsBucket(this, 'ResultsBucket', {
      // Named, not generated: the operator's policy names it (lib/config/lab-resource-names.ts).
      bucketName: resultsBucketName(this.stackName, this.account, this.region),
      retainOnDestroy: lab.results.retainOnDestroy,
      expireAfterDays: lab.results.expireAfterDays,
    });
    // The runners and dedicated pooler hosts go into the first subnet of their selection (what
    // ec2.Instance does with vpcSubnets): the writer goes into that zone too, or into another of
    // the database subnets' zones when the lab asks for a cross-zone hop (lab.crossZone).
    const runnerSubnets = zones
      ? { ...this.network.runnerSubnets, availabilityZones: zones.runners }
      : this.network.runnerSubnets;
    this.runnerZone = firstSubnetZone(this.network.vpc.selectSubnets(runnerSubnets).subnets, 'runners');
    const databaseZones = this.network.vpc
      .selectSubnets(this.network.databaseSubnets)
      .subnets.map((sn) => sn.availabilityZone);
    const otherZone = databaseZones.find((z) => z !== this.runnerZone);
    if (lab.crossZone && otherZone === undefined)
      throw new Error(`${this.node.path}: crossZone needs a database subnet outside the runners' zone`);
    this.database = new LabDatabase(this, 'Database', {
      vpc: this.network.vpc,
      subnets: this.network.databaseSubnets,
      database: lab.database,
      writerAvailabilityZone: lab.crossZone ? otherZone : this.runnerZone,
      clusterParameters: auroraClusterParametersOf(lab.suites),
    });
    this.proxies = new LabProxies(this, 'Proxies', {
      vpc: this.network.vpc,
      subnets: this.network.databaseSubnets,
      target: this.database.proxyTarget,
      secret: this.database.secret,
      // Aurora: the target group waits for the writer (aws-cdk issue 31304); an RDS instance is Ref'd already.
      ...(this.database.cluster ? { writer: this.database.writer } : {}),
      otherInstances: this.database.instances
        .filter((i) => i.resource !== this.database.writer)
        .map((i) => i.resource),
      labName: lab.name,
      proxies: lab.proxies,
    });
    this.collector = new MetricsCollector(this, 'Collector', {
      bucket: this.results.bucket,
      dbInstanceResourceIds: this.database.instances.map((i) => i.resourceId),
    });
    // The suite runner and the pooler entry (lib/runner, lib/pooler-host: scripts/runner.ts and scripts/pooler.ts
    // bundled by esbuild) unless a caller brings its own; pooler hosts install the same bundle.
    const runnerSoftware = props.runnerSoftware ?? proxylabRunnerSoftware(this);
    this.runners = this.addRunners(lab, runnerSoftware, hostZones);

    const poolers = this.addPoolers(lab, this.runners, { runnerSoftware, hostZones, poolerSource });
    this.poolerAdminSecret = poolers.adminSecret;
    this.poolerHosts = poolers.hosts;
    this.poolerEndpoints = poolers.endpoints;

    // In an existing VPC the subnet fixes each host's zone, and CDK writes that zone's name too;
    // CloudFormation takes the zone from the network interface's subnet (AWS::EC2::Instance
    // AvailabilityZone is optional), and a literal zone name is what cfn-lint W3010 warns about.
    if (existing)
      for (const host of [...this.runners.instances, ...this.poolerHosts.map((h) => h.instance)])
        host.instance.addPropertyDeletionOverride('AvailabilityZone');

    this.addOutputs();
  }

  /**
   * The runners, emptied-bucket-first on destroy, with what the runner software needs: read back
   * runs/ (resume, fleet barrier), resize this lab's proxies (sweeps), the suites' disruptions.
   */
  private addRunners(
    lab: LabConfig,
    runnerSoftware: RunnerSoftware,
    hostZones: { readonly availabilityZones?: string[] },
  ): RunnerFleet {
    const runners = new RunnerFleet(this, 'Runners', {
      vpc: this.network.vpc,
      subnets: this.network.runnerSubnets,
      egress: this.network.hostEgress,
      instanceType: lab.runners.instanceType,
      count: lab.runners.count,
      placement: lab.runners.placement,
      spot: lab.runners.spot,
      databaseTargets: [this.database, ...this.proxies.proxies.map((p) => p.proxy)],
      dbSecret: this.database.secret,
      bucket: this.results.bucket,
      collector: this.collector.function,
      ...hostZones,
      runnerSoftware,
    });
    // On destroy the runners go first (they depend on the bucket's emptying): a runner still
    // writing results while the bucket is emptied would make its deletion fail.
    const emptyOnDelete = this.results.emptyOnDelete;
    if (emptyOnDelete) for (const runner of runners.instances) runner.node.addDependency(emptyOnDelete);
    // Runner software needs: read back runs/ (resume, fleet barrier), resize this lab's proxies (sweeps).
    grantCloudRunner(runners.role, {
      bucket: this.results.bucket,
      proxies: this.proxies.proxies.map((p) => p.proxy),
      disruptions: {
        actions: cloudDisruptionsOf(lab.suites, lab.database.engine),
        clusterArn: this.database.cluster?.clusterArn ?? null,
        instanceArns: this.database.instances.map((i) => i.resource.attrDbInstanceArn),
        labName: lab.name,
      },
    });
    return runners;
  }

  /**
   * The lab's self-hosted poolers (PgBouncer, PgDoorman): a dedicated host next to the load, or on
   * every runner at 127.0.0.1; the admin secret they share, and each one's stack output entry.
   */
  private addPoolers(
    lab: LabConfig,
    runners: RunnerFleet,
    shared: {
      readonly runnerSoftware: RunnerSoftware;
      readonly hostZones: { readonly availabilityZones?: string[] };
      readonly poolerSource: (release: PoolerRelease) => PoolerSource | undefined;
    },
  ): {
    adminSecret: secretsmanager.ISecret | null;
    hosts: PoolerHost[];
    endpoints: PoolerEndpoint[];
  } {
    const { runnerSoftware, hostZones, poolerSource } = shared;
    // Self-hosted PgBouncers: a dedicated host next to the load, or on every runner at 127.0.0.1.
    const poolerDb = poolerDatabaseOf(this.database);
    const adminSecret = lab.poolers.length > 0 ? createPoolerAdminSecret(this) : null;
    const hosts: PoolerHost[] = [];
    const endpoints: PoolerEndpoint[] = [];
    if (adminSecret) {
      // The runner software reads it for SHOW POOLS/STATS and admin-console pool resizing.
      adminSecret.grantRead(runners.role);
      for (const pooler of lab.poolers) {
        if (pooler.placement === 'dedicated') {
          const host = new PoolerHost(this, `Pooler-${pooler.name}`, {
            vpc: this.network.vpc,
            subnets: this.network.runnerSubnets,
            egress: this.network.hostEgress,
            pooler,
            database: poolerDb,
            clients: runners.securityGroup,
            adminSecret,
            software: runnerSoftware,
            source: poolerSource(releaseOf(pooler)),
            ...hostZones,
          });
          hosts.push(host);
          endpoints.push(host.endpoint);
        } else {
          const listen = '127.0.0.1';
          // poolPercent is the pooler's share of max_connections in TOTAL (like RDS Proxy's
          // MaxConnectionsPercent): with one PgBouncer per runner, each opens its 1/count of it
          // (sharedBy, applied by the bootstrap and by the runners' pool control alike).
          runners.addPooler(
            releaseOf(pooler),
            poolerHostConfig(
              this,
              pooler,
              poolerDb,
              adminSecret,
              listen,
              poolerDeployments(pooler.placement, lab.runners.count),
            ),
            adminSecret,
            poolerSource(releaseOf(pooler)),
          );
          endpoints.push(poolerEndpointOf(pooler, listen));
        }
      }
    }
    return { adminSecret, hosts, endpoints };
  }

  private addOutputs(): void {
    const K = LAB_OUTPUT_KEYS;
    const out = (key: string, value: string, description: string): void => {
      new CfnOutput(this, key, { value, description });
    };
    const db = this.database;
    out(K.labName, this.lab.name, 'Lab name');
    out(
      K.runnerInstanceIds,
      joinList(this.runners.instances.map((i) => i.instanceId)),
      'Runner EC2 instance ids, comma-separated',
    );
    out(K.resultsBucketName, this.results.bucket.bucketName, 'Results bucket (runs/ prefix)');
    // RDS for PostgreSQL has no cluster: the Cluster* outputs carry the instance (docs/stacks.md).
    out(K.clusterIdentifier, db.identifier, db.outputDescriptions.identifier);
    out(K.clusterEndpoint, db.writerEndpoint.hostname, db.outputDescriptions.writerEndpoint);
    out(K.clusterReaderEndpoint, db.readerEndpoint.hostname, db.outputDescriptions.readerEndpoint);
    out(K.databasePort, '5432', 'PostgreSQL port of the database and every proxy');
    out(K.databaseEngine, this.lab.database.engine, 'aurora-postgresql or postgres (RDS for PostgreSQL)');
    out(
      K.dbInstanceClass,
      databaseInstanceClass(this.lab.database) ?? 'serverless',
      'DB instance class of the writer (serverless for Aurora Serverless v2)',
    );
    out(
      K.dbInstanceIds,
      joinList(this.database.instances.map((i) => i.instanceIdentifier)),
      'DB instance identifiers, writer first, comma-separated',
    );
    out(
      K.dbInstanceResourceIds,
      joinList(this.database.instances.map((i) => i.resourceId)),
      'Performance Insights ids (DbiResourceId), same order as DbInstanceIds',
    );
    out(
      K.proxyEndpoints,
      this.toJsonString(Object.fromEntries(this.proxies.proxies.map((p) => [p.name, p.proxy.endpoint]))),
      'JSON: lab proxy name -> proxy endpoint hostname',
    );
    out(
      K.proxyNames,
      this.toJsonString(Object.fromEntries(this.proxies.proxies.map((p) => [p.name, p.physicalName]))),
      'JSON: lab proxy name -> RDS proxy name',
    );
    out(K.dbSecretArn, this.database.secret.secretArn, 'Secrets Manager ARN of the master credentials');
    out(
      K.poolerEndpoints,
      this.toJsonString(Object.fromEntries(this.poolerEndpoints.map((e) => [e.name, e]))),
      'JSON: pooler name -> PgBouncer endpoint (host, port, admin and stats ports, settings)',
    );
    // Only with a pooler: an output needs a non-empty Value, and parseLabOutputs reads a missing
    // PoolerAdminSecretArn as "no pooler" (null), exactly as it would read "".
    if (this.poolerAdminSecret)
      out(
        K.poolerAdminSecretArn,
        this.poolerAdminSecret.secretArn,
        'Secrets Manager ARN of the PgBouncer admin/stats user (JSON: username, password)',
      );
    // Where each component runs, so a run records its zones (environment.zones): the writer's
    // configured zone (null when RDS chooses it: a Multi-AZ RDS instance), each runner's and each
    // dedicated pooler host's (Fn::GetAtt AvailabilityZone).
    out(
      K.componentZones,
      this.toJsonString({
        writer: this.database.writerAvailabilityZone,
        ...Object.fromEntries(
          this.runners.instances.map((r, i) => [`runner-${i}`, r.instanceAvailabilityZone]),
        ),
        ...Object.fromEntries(
          this.poolerHosts.map((h) => [`pooler:${h.pooler.name}`, h.instance.instanceAvailabilityZone]),
        ),
      }),
      'JSON: component (writer, runner-<i>, pooler:<name>) -> Availability Zone (null: chosen by RDS)',
    );
    out(
      K.collectorFunctionName,
      this.collector.function.functionName,
      'Metrics collector Lambda function name',
    );
  }
}

/**
 * What the poolers take from the database construct, in one place: the writer endpoint, the port,
 * the master secret and the security group to open (the seam an RDS for PostgreSQL instance fits too).
 */
function poolerDatabaseOf(database: LabDatabase): PoolerDatabase {
  return {
    writerHost: database.writerEndpoint.hostname,
    port: database.writerEndpoint.port,
    secret: database.secret,
    connectable: database,
  };
}

function availabilityZonesFromContext(scope: Construct): { vpc: string[]; runners: string[] } | null {
  const list = (key: string): string[] | null => {
    const v: unknown = scope.node.tryGetContext(key);
    if (v === undefined) return null;
    const items = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : null;
    const names = items?.map((x) => String(x).trim()).filter((x) => x !== '') ?? [];
    if (names.length === 0 || names.some((n) => !/^[a-z]{2}(-[a-z]+)+-\d[a-z]$/.test(n)))
      throw new Error(
        `context ${key} must be Availability Zone names (eu-west-1a,eu-west-1b), got ${JSON.stringify(v)}`,
      );
    return names;
  };
  const vpc = list(AZ_CONTEXT_KEYS.vpc);
  const runners = list(AZ_CONTEXT_KEYS.runners);
  if (vpc === null && runners === null) return null;
  if (vpc === null || runners === null || runners.some((z) => !vpc.includes(z)))
    throw new Error(
      `context ${AZ_CONTEXT_KEYS.runners} must be a subset of ${AZ_CONTEXT_KEYS.vpc}, and both given together`,
    );
  return { vpc, runners };
}

/** The zone of the first subnet (where ec2.Instance puts an instance given the selection). */
function firstSubnetZone(subnets: readonly { availabilityZone: string }[], what: string): string {
  const [first] = subnets;
  if (!first) throw new Error(`the lab VPC has no ${what} subnet`);
  return first.availabilityZone;
}

/** An existing VPC: only the runners' zones come from deploy (the VPC's are its subnets'). */
function runnerZonesFromContext(scope: Construct): string[] | null {
  const v: unknown = scope.node.tryGetContext(AZ_CONTEXT_KEYS.runners);
  if (v === undefined) return null;
  const items = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : null;
  const names = items?.map((x) => String(x).trim()).filter((x) => x !== '') ?? [];
  if (names.length === 0 || names.some((n) => !/^[a-z]{2}(-[a-z]+)+-\d[a-z]$/.test(n)))
    throw new Error(
      `context ${AZ_CONTEXT_KEYS.runners} must be Availability Zone names (eu-west-1a,eu-west-1b), got ${JSON.stringify(v)}`,
    );
  return names;
}

/** Comma-joins values that may be tokens (Fn::Join at deploy time). */
function joinList(values: readonly string[]): string {
  return values.length === 0 ? '' : values.join(',');
}

/**
 * Builds the stack for a lab: named `proxylab-<name>`, environment-agnostic — or, with an existing
 * VPC, bound to the VPC's account and the lab's region, as CDK's context lookups require ("Cannot
 * retrieve value from context provider … since account/region are not specified at the stack
 * level": aws-cdk-lib ContextProvider.getValue).
 */
export function createLabStack(
  scope: Construct,
  lab: LabConfig,
  props: Omit<LabStackProps, 'lab'> = {},
): LabStack {
  const n = lab.network;
  const env = n.mode === 'existing' ? { env: { account: n.account, region: n.region } } : {};
  return new LabStack(scope, stackNameFor(lab.name), { ...env, ...props, lab });
}

/**
 * The checks every lab app runs at synthesis: cdk-nag AwsSolutions as a CDK policy-validation
 * plugin. An unacknowledged finding makes `app.synth()` (and `cdk synth`) fail.
 */
export function addLabChecks(app: App): void {
  Validations.of(app).addPlugins(new (cdkNag().AwsSolutionsChecks)(app));
}

// Loaded when the checks are added, not with the stack: a test file that builds lab stacks without
// these checks (most of test/cdk) does not load every cdk-nag rule (≈ 0.3 CPU-s under jest).
const cdkNag = (): typeof CdkNag => require('cdk-nag') as typeof CdkNag;
