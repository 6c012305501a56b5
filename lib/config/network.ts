/**
 * Where a lab's hosts live and how they reach AWS: the facts the lab schema, the constructs
 * (lib/constructs/network.ts), the cost estimate, `proxylab doctor`, the operator policy and the
 * docs share. Pure data: no aws-cdk-lib, no I/O.
 *
 * Two placements (`LabConfig.network`):
 *  - `create` (the default): the lab's own VPC, runners in public subnets with a public IPv4 each
 *    and no inbound rules, the database in isolated subnets (docs/stacks.md, "Network choice");
 *  - `existing`: a VPC someone else owns (a platform team's), looked up at synth time (CDK's VPC
 *    context provider), every host in the named private subnets without a public address. Its
 *    `egress` says how hosts reach AWS: `internet` (the subnets route to a NAT gateway, a transit
 *    gateway or a proxy the network team runs; nothing in the lab changes that) or
 *    `vpc-endpoints` (no internet path at all: interface endpoints for every AWS API a host calls,
 *    an S3 gateway endpoint, and security groups whose only egress is those endpoints, the
 *    database, the proxies and the poolers).
 */

/**
 * One AWS API a lab host calls, reached in `vpc-endpoints` mode through an interface endpoint
 * `com.amazonaws.<region>.<service>` with private DNS (the service's usual hostname resolves to
 * the endpoint's addresses inside the VPC, so no client is configured differently).
 */
export interface EndpointService {
  /** The endpoint service's last label (`ssm` → com.amazonaws.<region>.ssm, host ssm.<region>.amazonaws.com). */
  readonly service: string;
  /** Who calls it and why, in a few words (docs, cost note, doctor). */
  readonly why: string;
}

/**
 * Every AWS API the runners and pooler hosts call, and nothing else (what the code calls:
 * lib/runner, lib/pooler-host, the user data, the doctor probe):
 *  - the SSM agent (Run Command is how `run` and `doctor` reach a host): `ssm`, `ssmmessages` and
 *    `ec2messages` — Systems Manager User Guide, "Reference: ec2messages, ssmmessages, and other API
 *    operations" (systems-manager-setting-up-messageAPIs.html): the agent talks to all three;
 *  - Secrets Manager: the DB secret and the pooler admin secret (runner, pooler bootstrap, probe).
 *    The secrets are encrypted with the AWS managed key, which Secrets Manager uses on the
 *    caller's behalf: the hosts call no KMS API, so there is no `kms` endpoint;
 *  - Lambda: runner 0 invokes the metrics collector after a run;
 *  - RDS: pool sweeps (ModifyDBProxyTargetGroup, DescribeDBProxyTargetGroups) and disruptions
 *    (FailoverDBCluster, RebootDBInstance) are RDS API calls;
 *  - CloudFormation: `cfn-signal` reports each host's boot to its creation policy through the
 *    CloudFormation API (cfn-signal's `--url` option is "the CloudFormation endpoint";
 *    AWS CloudFormation User Guide, cfn-signal).
 * Not here, on purpose: S3 (the gateway endpoint, free, also carries the AL2023 package
 * repositories and the CDK assets), STS (instance-profile credentials come from the instance
 * metadata service), CloudWatch, CloudWatch Logs and Performance Insights (only the collector
 * calls them, and it runs outside the VPC: see docs/aws.md, "Regulated accounts").
 */
export const PRIVATE_ENDPOINT_SERVICES: readonly EndpointService[] = [
  { service: 'ssm', why: 'SSM agent: registration, Run Command (run, doctor)' },
  { service: 'ssmmessages', why: 'SSM agent: command and session channels' },
  { service: 'ec2messages', why: 'SSM agent: Run Command messages' },
  { service: 'secretsmanager', why: 'the DB and pooler admin secrets' },
  { service: 'lambda', why: 'runner 0 invokes the metrics collector' },
  { service: 'rds', why: 'RDS Proxy pool sweeps and disruptions (RDS API)' },
  { service: 'cloudformation', why: 'cfn-signal: each host reports its boot' },
];

/** The hostname a service's interface endpoint answers for (private DNS) in `region`. */
export function endpointHostname(service: string, region: string): string {
  return `${service}.${region}.amazonaws.com`;
}

/** The AWS-managed prefix list of S3 in `region` (the S3 gateway endpoint's destinations). */
export function s3PrefixListName(region: string): string {
  return `com.amazonaws.${region}.s3`;
}

/** `vpc-` + 8 or 17 lowercase hex digits (EC2 resource ids: the short and the long format). */
export const VPC_ID_PATTERN = /^vpc-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;
export const SUBNET_ID_PATTERN = /^subnet-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;
export const ACCOUNT_ID_PATTERN = /^\d{12}$/;
/** An IPv4 CIDR block such as 10.0.0.0/16 (octets 0–255, prefix 0–32). */
export const IPV4_CIDR_PATTERN =
  /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\/(?:3[0-2]|[12]?\d)$/;

export const NETWORK_EGRESS = ['vpc-endpoints', 'internet'] as const;
export type NetworkEgress = (typeof NETWORK_EGRESS)[number];
export const NETWORK_ENDPOINTS = ['create', 'existing'] as const;
export type NetworkEndpoints = (typeof NETWORK_ENDPOINTS)[number];

/** The lab's own VPC (the default). */
export interface CreatedNetworkConfig {
  readonly mode: 'create';
}

/** A VPC the lab does not own, looked up at synth time. */
export interface ExistingNetworkConfig {
  readonly mode: 'existing';
  /** The account the VPC is in: the stack is bound to it (and to the lab's `region`) for the lookup. */
  readonly account: string;
  readonly region: string;
  readonly vpcId: string;
  /** Private subnets (no route to an internet gateway) in at least two zones: database, proxies, runners, pooler hosts. */
  readonly subnetIds: readonly string[];
  readonly egress: NetworkEgress;
  /**
   * `vpc-endpoints` only: `create` adds the interface endpoints of PRIVATE_ENDPOINT_SERVICES and an
   * S3 gateway endpoint to the VPC; `existing` relies on the network team's (private DNS on, S3
   * gateway on the subnets' route tables) and opens HTTPS to `endpointCidrs` instead.
   */
  readonly endpoints: NetworkEndpoints;
  /** `endpoints: existing`: where the network team's interface endpoints are; empty = the VPC's own CIDR. */
  readonly endpointCidrs: readonly string[];
}

export type NetworkConfig = CreatedNetworkConfig | ExistingNetworkConfig;

/** The lab hosts reach AWS only through VPC endpoints. */
export function isPrivateNetwork(network: NetworkConfig): network is ExistingNetworkConfig {
  return network.mode === 'existing' && network.egress === 'vpc-endpoints';
}

/** The interface endpoints the STACK creates (none unless `vpc-endpoints` with `endpoints: create`). */
export function createdEndpointServices(network: NetworkConfig): readonly EndpointService[] {
  return isPrivateNetwork(network) && network.endpoints === 'create' ? PRIVATE_ENDPOINT_SERVICES : [];
}
