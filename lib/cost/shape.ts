import { DEFAULTS } from '../config/defaults';

/**
 * What a lab stack deploys that the lab file does not count itself: endpoints, NAT gateways,
 * public addresses, runner volumes, secrets. Mirrors lib/constructs/network.ts and
 * lib/constructs/runner-fleet.ts without loading aws-cdk-lib (the estimate must be cheap and run
 * before any synth); test/cdk/ttl-labs.test.ts synthesizes the stack and fails when
 * these numbers drift from the template.
 */
export interface DeploymentShape {
  /** Availability zones the VPC spans (interface endpoints bill per AZ). */
  readonly availabilityZones: number;
  /** Interface endpoint services, e.g. `ssm`, `ssmmessages`, `ec2messages`. */
  readonly interfaceEndpoints: readonly string[];
  readonly natGateways: number;
  /** Whether each runner gets a public IPv4 address. */
  readonly runnersHavePublicIpv4: boolean;
  /** Root EBS volume per runner, GB (gp3). */
  readonly runnerRootVolumeGb: number;
  /** Secrets Manager secrets (the database credentials). */
  readonly secrets: number;
}

/**
 * lib/constructs/network.ts: DEFAULTS.stack.availabilityZones AZs, no NAT gateway, no interface endpoints (an S3 gateway
 * endpoint, which is free); runners sit in public subnets with a public IPv4 each and no inbound
 * rules. lib/constructs/runner-fleet.ts: DEFAULTS.stack.runnerRootVolumeGib gp3 root volume per runner. database.ts: one
 * generated master secret.
 */
export const LAB_DEPLOYMENT_SHAPE: DeploymentShape = {
  availabilityZones: DEFAULTS.stack.availabilityZones,
  interfaceEndpoints: [],
  natGateways: 0,
  runnersHavePublicIpv4: true,
  runnerRootVolumeGb: DEFAULTS.stack.runnerRootVolumeGib,
  secrets: 1,
};
