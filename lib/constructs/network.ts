import { RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { DEFAULTS } from '../config/defaults';

export interface LabNetworkProps {
  /**
   * Availability Zones to spread subnets over (Aurora needs subnets in at least two).
   * @default DEFAULTS.stack.availabilityZones (2)
   */
  readonly maxAzs?: number;
  /**
   * The Availability Zones, by name (chosen at deploy time so that the runners' instance type is
   * offered in at least one; see lib/operator/availability-zones.ts). Overrides `maxAzs`.
   * @default - the first `maxAzs` zones of the region (Fn::GetAZs: the template stays region-agnostic)
   */
  readonly availabilityZones?: readonly string[];
  /**
   * How long VPC flow log records are kept.
   * @default - one week (logs.RetentionDays.ONE_WEEK)
   */
  readonly flowLogRetention?: logs.RetentionDays;
}

/**
 * The lab's VPC, with no NAT gateway:
 *  - `database` subnets are isolated (no route out): the cluster and every RDS Proxy live there;
 *  - `runners` subnets are public: runners get a public IPv4 address and a security group with no
 *    inbound rules, which reaches SSM, Secrets Manager, Lambda, RDS and the AL2023 repositories
 *    for $0.005/h per runner (a NAT gateway would be $0.045/h plus $0.045/GB; the six interface
 *    endpoints that would be needed instead cost about $0.12/h in 2 AZs);
 *  - an S3 gateway endpoint (free) keeps S3 traffic (results, AL2023 repositories) inside AWS;
 *  - flow logs (all traffic) go to a CloudWatch log group that is deleted with the stack.
 */
export class LabNetwork extends Construct {
  readonly vpc: ec2.Vpc;
  /** Isolated subnets for the cluster and the proxies. */
  readonly databaseSubnets: ec2.SubnetSelection = { subnetGroupName: 'database' };
  /** Public subnets for the runners. */
  readonly runnerSubnets: ec2.SubnetSelection = { subnetGroupName: 'runners' };
  readonly flowLogGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: LabNetworkProps = {}) {
    super(scope, id);
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      ...(props.availabilityZones
        ? { availabilityZones: [...props.availabilityZones] }
        : { maxAzs: props.maxAzs ?? DEFAULTS.stack.availabilityZones }),
      natGateways: 0,
      subnetConfiguration: [
        { name: 'runners', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24, mapPublicIpOnLaunch: false },
        { name: 'database', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 24 },
      ],
      gatewayEndpoints: { S3: { service: ec2.GatewayVpcEndpointAwsService.S3 } },
      // Nothing is ever placed in the default security group; restricting it would add a
      // custom-resource Lambda to every lab for no effect.
      restrictDefaultSecurityGroup: false,
    });
    this.flowLogGroup = new logs.LogGroup(this, 'FlowLogs', {
      retention: props.flowLogRetention ?? logs.RetentionDays.ONE_WEEK,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.vpc.addFlowLog('FlowLog', {
      destination: ec2.FlowLogDestination.toCloudWatchLogs(this.flowLogGroup),
      trafficType: ec2.FlowLogTrafficType.ALL,
    });
  }
}
