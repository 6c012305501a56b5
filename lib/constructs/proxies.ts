import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { CfnResource } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { keepNoTrafficEgressInline } from './egress';
import type { ProxyConfig } from '../config';
import { RDS_PROXY_SETTINGS } from '../products/rds-proxy/settings';
import { settingSpec, valueProblem } from '../products/settings';

export interface LabProxiesProps {
  readonly vpc: ec2.IVpc;
  /** Subnets for the proxies (isolated ones). */
  readonly subnets: ec2.SubnetSelection;
  /** What the proxies target: `ProxyTarget.fromCluster` (Aurora) or `.fromInstance` (RDS for PostgreSQL). */
  readonly target: rds.ProxyTarget;
  /** The database's master secret: the proxies authenticate to the database with it. */
  readonly secret: secretsmanager.ISecret;
  /**
   * The Aurora writer instance. Each proxy's target group depends on it (aws-cdk issue 31304: the
   * target group can race the writer's configuration and fail registration).
   * @default - no DependsOn: an RDS instance target is Ref'd by the target group already (cfn-lint W3005)
   */
  readonly writer?: CfnResource;
  /**
   * The database's other instances (Aurora readers); the target group waits for them too.
   * @default - none
   */
  readonly otherInstances?: readonly CfnResource[];
  /** Lab name: RDS proxy names are `<lab>-<proxy>` (unique per account and region). */
  readonly labName: string;
  /** The lab's proxies, defaults applied. Zero proxies is allowed. */
  readonly proxies: readonly ProxyConfig[];
  /**
   * Retention of the proxies' CloudWatch log groups (`/aws/rds/proxy/<name>`), created here so
   * they are deleted with the stack.
   * @default - one week
   */
  readonly logRetention?: logs.RetentionDays;
}

export interface LabProxy {
  /** Lab-local name (`pool100`). */
  readonly name: string;
  /** RDS proxy name (`<lab>-<name>`). */
  readonly physicalName: string;
  readonly proxy: rds.DatabaseProxy;
}

/** Zero or more RDS Proxies in front of the database (Aurora cluster or RDS instance), each with its own pool settings. */
export class LabProxies extends Construct {
  readonly proxies: LabProxy[];
  /** Shared by every proxy; allows PostgreSQL from the runners (added by the runner fleet). */
  readonly securityGroup: ec2.SecurityGroup;

  constructor(scope: Construct, id: string, props: LabProxiesProps) {
    super(scope, id);
    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: 'RDS Proxies: PostgreSQL from the lab runners; out to the database',
      allowAllOutbound: false,
    });
    this.proxies = props.proxies.map((config) => {
      const physicalName = `${props.labName}-${config.name}`;
      const scopeForProxy = new Construct(this, config.name);
      // The proxy writes /aws/rds/proxy/<name> itself: owned here (with a retention) and ordered
      // before the proxy (DependsOn below), so the proxy never creates it first and cannot write
      // into it again after the stack deleted it.
      const logGroup = new logs.LogGroup(scopeForProxy, 'Logs', {
        logGroupName: `/aws/rds/proxy/${physicalName}`,
        retention: props.logRetention ?? logs.RetentionDays.ONE_WEEK,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      const proxy = new rds.DatabaseProxy(scopeForProxy, 'Proxy', {
        dbProxyName: physicalName,
        proxyTarget: props.target,
        secrets: [props.secret],
        vpc: props.vpc,
        vpcSubnets: props.subnets,
        securityGroups: [this.securityGroup],
        ...toPoolSettings(config),
        iamAuth: false,
      });
      proxy.node.addDependency(logGroup);
      // DependsOn: the writer (issue 31304) and every other instance, and NOT the cluster: the
      // target group already Refs it, and cfn-lint flags the redundant DependsOn (W3005).
      const targetGroup = proxy.node.findChild('ProxyTargetGroup') as CfnResource;
      const stack = Stack.of(this);
      const instanceIds = [...(props.writer ? [props.writer] : []), ...(props.otherInstances ?? [])].map(
        (r) => stack.getLogicalId(r),
      );
      if (instanceIds.length > 0) targetGroup.addOverride('DependsOn', instanceIds);
      // CDK tags the target group, but AWS::RDS::DBProxyTargetGroup has no Tags property
      // (cfn-lint E3002; CloudFormation ignores or rejects it). Stack-wide tags must not reach it.
      targetGroup.addDeletionOverride('Properties.Tags');
      return { name: config.name, physicalName, proxy };
    });
    // Proxy → database ingress/egress is added by ProxyTarget.bind (allowDefaultPortFrom);
    // adding it again here would create a duplicate rule that fails at deploy time.
    keepNoTrafficEgressInline(this.securityGroup);
  }
}

/**
 * Lab pool settings → DatabaseProxy props. The lab's `settings` (checked by validate against
 * lib/products/rds-proxy/settings.ts) give `InitQuery` and `IdleClientTimeout`: aws-cdk-lib's
 * DatabaseProxyOptions `initQuery?: string` (→ the target group's
 * ConnectionPoolConfigurationInfo.InitQuery) and `idleClientTimeout?: cdk.Duration` (→ the proxy's
 * IdleClientTimeout, in seconds) — node_modules/aws-cdk-lib/aws-rds/lib/proxy.d.ts (2.276.0). Its doc
 * comment on initQuery still says "not currently supported for PostgreSQL"; the RDS API reference
 * (ConnectionPoolConfiguration.InitQuery) no longer restricts it, and the catalogue cites that.
 * Absent: the props are left out, so the template keeps AWS's defaults (no init query, 1,800 s).
 */
function toPoolSettings(
  config: ProxyConfig,
): Pick<
  rds.DatabaseProxyProps,
  | 'maxConnectionsPercent'
  | 'maxIdleConnectionsPercent'
  | 'borrowTimeout'
  | 'requireTLS'
  | 'debugLogging'
  | 'initQuery'
  | 'idleClientTimeout'
> {
  const initQuery = checkedSetting(config, 'InitQuery');
  const idle = checkedSetting(config, 'IdleClientTimeout');
  return {
    maxConnectionsPercent: config.maxConnectionsPercent,
    maxIdleConnectionsPercent: config.maxIdleConnectionsPercent,
    borrowTimeout: Duration.seconds(config.borrowTimeoutSeconds),
    requireTLS: config.requireTls,
    debugLogging: config.debugLogging,
    ...(typeof initQuery === 'string' ? { initQuery } : {}),
    ...(typeof idle === 'number' ? { idleClientTimeout: Duration.seconds(idle) } : {}),
  };
}

/**
 * The lab's value of one RDS Proxy setting, checked again against the catalogue (validate refused a
 * bad one already; a config built some other way must not reach the template either). undefined: not set.
 */
function checkedSetting(config: ProxyConfig, name: 'InitQuery' | 'IdleClientTimeout'): unknown {
  if (!Object.hasOwn(config.settings, name)) return undefined;
  const value = config.settings[name];
  const spec = settingSpec(RDS_PROXY_SETTINGS, name);
  const bad = spec === undefined ? 'is not in the catalogue' : valueProblem(spec, value);
  if (bad !== null)
    throw new Error(`proxies[${config.name}].settings.${name} ${bad}, got ${JSON.stringify(value)}`);
  return value;
}
