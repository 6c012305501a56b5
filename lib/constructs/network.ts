import { Annotations, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { DEFAULTS } from '../config/defaults';
import {
  createdEndpointServices,
  s3PrefixListName,
  type EndpointService,
  type ExistingNetworkConfig,
} from '../config/network';
import { keepNoTrafficEgressInline } from './egress';

/**
 * How a lab host (a runner, a pooler host) reaches AWS APIs and its packages: whether it gets a
 * public IPv4 address, and the HTTPS egress rules its security group needs. The network decides;
 * the hosts ask (RunnerFleet, PoolerHost).
 */
export interface HostEgress {
  /** Hosts get a public IPv4 address (public subnets, no inbound rules). */
  readonly publicIpv4: boolean;
  /** The hosts can reach the internet (a pooler release may come from its upstream URL). */
  readonly internet: boolean;
  /** Adds the HTTPS egress `securityGroup` needs for AWS APIs, S3 and the OS repositories. */
  allowHttps(securityGroup: ec2.SecurityGroup, description: string): void;
}

/**
 * The lab's own VPC (LabNetwork) or an existing one (ExistingLabNetwork), as the other constructs
 * see it: where the database and the hosts go, and how hosts reach AWS.
 */
export interface LabNetworkPlacement {
  readonly vpc: ec2.IVpc;
  /** The cluster, its instances and the proxies. */
  readonly databaseSubnets: ec2.SubnetSelection;
  /** The runners and pooler hosts (already narrowed to the runner zones for an existing VPC). */
  readonly runnerSubnets: ec2.SubnetSelection;
  readonly hostEgress: HostEgress;
}

/** A public IPv4 address and HTTPS to anywhere: the lab's own VPC (LabNetwork), and the hosts' default. */
export const DEFAULT_HOST_EGRESS: HostEgress = {
  publicIpv4: true,
  internet: true,
  allowHttps: (sg, description) => sg.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), description),
};

/** HTTPS to anywhere: the lab's own VPC (with a public IPv4 per host), and an existing VPC with internet egress (without). */
function internetEgress(publicIpv4: boolean): HostEgress {
  return { ...DEFAULT_HOST_EGRESS, publicIpv4 };
}

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
 *    for $0.005/h per runner (a NAT gateway would be $0.045/h plus $0.045/GB; the seven interface
 *    endpoints that would be needed instead, PRIVATE_ENDPOINT_SERVICES in lib/config/network.ts,
 *    cost about $0.14/h in 2 AZs: 7 × 2 × $0.01 per endpoint-zone-hour, plus $0.01/GB);
 *  - an S3 gateway endpoint (free) keeps S3 traffic (results, AL2023 repositories) inside AWS;
 *  - flow logs (all traffic) go to a CloudWatch log group that is deleted with the stack.
 */
export class LabNetwork extends Construct implements LabNetworkPlacement {
  readonly vpc: ec2.Vpc;
  /** Isolated subnets for the cluster and the proxies. */
  readonly databaseSubnets: ec2.SubnetSelection = { subnetGroupName: 'database' };
  /** Public subnets for the runners. */
  readonly runnerSubnets: ec2.SubnetSelection = { subnetGroupName: 'runners' };
  readonly flowLogGroup: logs.LogGroup;
  /** Public IPv4 per host and HTTPS to anywhere (no NAT gateway: the address is the way out). */
  readonly hostEgress: HostEgress = internetEgress(true);

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

export interface ExistingLabNetworkProps {
  /** The lab's `network` (an existing VPC), validated. */
  readonly network: ExistingNetworkConfig;
  /**
   * Availability Zones (names) that offer the runners' instance type (deploy chooses them, see
   * lib/operator/availability-zones.ts); runners and pooler hosts go only into subnets there.
   * @default - every zone of `network.subnetIds`
   */
  readonly runnerAvailabilityZones?: readonly string[];
}

/** What the VPC lookup returns while the context is missing (aws-cdk-lib DUMMY_VPC_PROPS: vpc-12345). */
function lookupPending(vpc: ec2.IVpc, network: ExistingNetworkConfig): boolean {
  return vpc.vpcId !== network.vpcId;
}

/**
 * An existing VPC (the lab's `network` object), looked up at synth time with CDK's VPC context
 * provider (`Vpc.fromLookup`: DescribeVpcs, DescribeSubnets, DescribeRouteTables; VPN gateways are
 * not asked for, `returnVpnGateways: false`). The stack must be bound to the VPC's account and
 * region (createLabStack does it). Every lab resource goes into `network.subnetIds`: the database
 * subnet group and the proxies (two zones at least), the runners and the pooler hosts (no public
 * IPv4: the subnets must be private), and — with `egress: "vpc-endpoints"` and
 * `endpoints: "create"` — one interface endpoint per PRIVATE_ENDPOINT_SERVICES entry (private DNS,
 * one network interface per zone) and an S3 gateway endpoint on the subnets' route tables.
 *
 * Security groups, `vpc-endpoints`: the hosts' HTTPS egress goes to the endpoints' security group
 * (created) or to `endpointCidrs` (the network team's), and to the S3 prefix list
 * (`com.amazonaws.<region>.s3`, looked up: PrefixList.fromLookup, a Cloud Control context query) —
 * never to 0.0.0.0/0. DNS to the VPC resolver needs no rule: "Security groups don't filter traffic
 * destined to and from … Amazon Domain Name Services (DNS)" (Amazon VPC User Guide, security group
 * rules). `internet`: HTTPS to anywhere, through whatever the subnets route to.
 *
 * No flow logs: the VPC is the network team's, and so is its logging.
 */
export class ExistingLabNetwork extends Construct implements LabNetworkPlacement {
  readonly vpc: ec2.IVpc;
  readonly databaseSubnets: ec2.SubnetSelection;
  readonly runnerSubnets: ec2.SubnetSelection;
  readonly hostEgress: HostEgress;
  /** The interface endpoints this stack created (none unless vpc-endpoints with endpoints: create). */
  readonly interfaceEndpoints: ec2.InterfaceVpcEndpoint[] = [];
  /** The endpoints' security group: HTTPS in from the lab's hosts only. */
  readonly endpointSecurityGroup: ec2.SecurityGroup | null = null;
  readonly s3GatewayEndpoint: ec2.GatewayVpcEndpoint | null = null;
  private readonly sealed = new WeakSet<ec2.SecurityGroup>();

  constructor(scope: Construct, id: string, props: ExistingLabNetworkProps) {
    super(scope, id);
    const { network } = props;
    this.vpc = ec2.Vpc.fromLookup(this, 'Vpc', { vpcId: network.vpcId, returnVpnGateways: false });
    const subnets = this.selectSubnets(network, props.runnerAvailabilityZones);
    this.databaseSubnets = { subnets: subnets.all };
    this.runnerSubnets = { subnets: subnets.runners };

    if (network.egress === 'internet') {
      this.hostEgress = internetEgress(false);
      return;
    }
    // S3 (results, the CDK assets, the AL2023 repositories) through the gateway endpoint: its prefix list.
    const s3 = ec2.PrefixList.fromLookup(this, 'S3PrefixList', {
      prefixListName: s3PrefixListName(network.region),
    });
    const services = createdEndpointServices(network);
    let endpointSg: ec2.SecurityGroup | null = null;
    if (services.length > 0) {
      endpointSg = new ec2.SecurityGroup(this, 'EndpointSecurityGroup', {
        vpc: this.vpc,
        description: 'proxylab VPC interface endpoints: HTTPS in from the lab hosts only',
        allowAllOutbound: false,
      });
      for (const e of services)
        this.interfaceEndpoints.push(this.addInterfaceEndpoint(e, endpointSg, subnets.all));
      this.s3GatewayEndpoint = new ec2.GatewayVpcEndpoint(this, 'S3', {
        vpc: this.vpc,
        service: ec2.GatewayVpcEndpointAwsService.S3,
        subnets: [{ subnets: subnets.all }],
      });
      this.endpointSecurityGroup = endpointSg;
    }
    const cidrs = network.endpointCidrs.length > 0 ? network.endpointCidrs : [this.vpc.vpcCidrBlock];
    this.hostEgress = {
      publicIpv4: false,
      internet: false,
      allowHttps: (sg, description) => {
        // Every egress rule of such a host is then a separate resource (toward a security group or
        // a prefix list): keep the no-traffic rule inline, or CloudFormation would create the
        // group with allow-all egress (lib/constructs/egress.ts).
        if (endpointSg && !this.sealed.has(sg)) {
          keepNoTrafficEgressInline(sg);
          this.sealed.add(sg);
        }
        if (endpointSg)
          endpointSg.connections.allowFrom(sg, ec2.Port.tcp(443), `${description}: VPC interface endpoints`);
        else
          for (const cidr of cidrs)
            sg.addEgressRule(
              ec2.Peer.ipv4(cidr),
              ec2.Port.tcp(443),
              `${description}: VPC interface endpoints (network team)`,
            );
        sg.addEgressRule(
          ec2.Peer.prefixList(s3.prefixListId),
          ec2.Port.tcp(443),
          `${description}: S3 gateway endpoint`,
        );
      },
    };
  }

  private addInterfaceEndpoint(
    e: EndpointService,
    sg: ec2.SecurityGroup,
    subnets: ec2.ISubnet[],
  ): ec2.InterfaceVpcEndpoint {
    return new ec2.InterfaceVpcEndpoint(this, `Endpoint-${e.service}`, {
      vpc: this.vpc,
      service: new ec2.InterfaceVpcEndpointAwsService(e.service),
      // The service's usual hostname resolves to the endpoint inside the VPC: SDKs, the AWS CLI,
      // the SSM agent and cfn-signal need no endpoint URL. Needs DNS hostnames and DNS resolution
      // on in the VPC (AWS PrivateLink Guide, "Private DNS").
      privateDnsEnabled: true,
      // One network interface per zone (the endpoint bills per zone-hour).
      subnets: { subnets, onePerAz: true },
      securityGroups: [sg],
      // Ingress only from the lab's hosts (hostEgress.allowHttps), not from the whole VPC CIDR.
      open: false,
    });
  }

  /**
   * The lab's subnets from the lookup, by id, checked: every id is in the VPC, none is public (a
   * route to an internet gateway: hosts here get no public IP), they span two zones at least, and
   * some are in the runners' zones. Every problem at once, naming `network.subnetIds`.
   */
  private selectSubnets(
    network: ExistingNetworkConfig,
    runnerZones: readonly string[] | undefined,
  ): { all: ec2.ISubnet[]; runners: ec2.ISubnet[] } {
    const vpc = this.vpc;
    if (lookupPending(vpc, network)) {
      // The first pass of `cdk synth` before the lookup (or a test without the context): CDK
      // reports the missing context, the CLI looks it up and synthesizes again. Nothing here is
      // deployed; tests check that no context is missing.
      Annotations.of(this).addInfo(
        `network.vpcId ${network.vpcId}: not in the CDK context yet (cdk.context.json); cdk synth looks it up with your credentials`,
      );
      const dummy = [...vpc.privateSubnets];
      return { all: dummy, runners: dummy };
    }
    const kinds: Array<[string, readonly ec2.ISubnet[]]> = [
      ['public', vpc.publicSubnets],
      ['private', vpc.privateSubnets],
      ['isolated', vpc.isolatedSubnets],
    ];
    const byId = new Map<string, { subnet: ec2.ISubnet; kind: string }>();
    for (const [kind, list] of kinds) for (const subnet of list) byId.set(subnet.subnetId, { subnet, kind });
    const problems: string[] = [];
    const all: ec2.ISubnet[] = [];
    network.subnetIds.forEach((id, i) => {
      const found = byId.get(id);
      if (!found)
        problems.push(
          `network.subnetIds[${i}]: ${id} is not a subnet of ${network.vpcId} (its subnets: ${[...byId.keys()].join(', ') || 'none'})`,
        );
      else if (found.kind === 'public')
        problems.push(
          `network.subnetIds[${i}]: ${id} routes to an internet gateway (CDK's lookup classes it public); the lab's hosts get no public IP, so name private subnets (a NAT or transit gateway route for egress "internet", none for "vpc-endpoints")`,
        );
      else all.push(found.subnet);
    });
    const zones = [...new Set(all.map((s) => s.availabilityZone))].sort();
    if (problems.length === 0 && zones.length < 2)
      problems.push(
        `network.subnetIds: all in ${zones.join(', ') || 'no zone'}; the database subnet group (and RDS Proxy) needs subnets in at least two Availability Zones`,
      );
    const runners = runnerZones ? all.filter((s) => runnerZones.includes(s.availabilityZone)) : all;
    if (problems.length === 0 && runners.length === 0)
      problems.push(
        `network.subnetIds: none is in a zone that offers the runners' instance type (${(runnerZones ?? []).join(', ')}); the subnets are in ${zones.join(', ')}`,
      );
    if (problems.length > 0) throw new Error(`${this.node.path}: ${problems.join('; ')}`);
    return { all, runners };
  }
}
