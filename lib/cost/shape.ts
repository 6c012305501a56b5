import { DEFAULTS } from '../config/defaults';
import { createdEndpointServices } from '../config/network';
import type { LabConfig } from '../config/types';

/**
 * What a lab stack deploys that the lab file does not count itself: endpoints, NAT gateways,
 * public addresses, runner volumes, secrets. Mirrors lib/constructs/network.ts and
 * lib/constructs/runner-fleet.ts without loading aws-cdk-lib (the estimate must be cheap and run
 * before any synth); test/cdk/labs.test.ts (lab-checks/shipped-labs.ts) synthesizes the stack and
 * fails when these numbers drift from the template.
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
  /** Root EBS volume per dedicated pooler host, GB (gp3). */
  readonly poolerHostRootVolumeGb: number;
  /** Whether each dedicated pooler host gets a public IPv4 address (it downloads the PgBouncer release). */
  readonly poolerHostsHavePublicIpv4: boolean;
  /** Secrets Manager secrets (the database credentials). */
  readonly secrets: number;
  /** More secrets when the lab has any pooler (the PgBouncer admin/stats user's). */
  readonly poolerSecrets: number;
}

/**
 * lib/constructs/network.ts: DEFAULTS.stack.availabilityZones AZs, no NAT gateway, no interface endpoints (an S3 gateway
 * endpoint, which is free); runners sit in public subnets with a public IPv4 each and no inbound
 * rules. lib/constructs/runner-fleet.ts: DEFAULTS.stack.runnerRootVolumeGib gp3 root volume per runner. database.ts: one
 * generated master secret. lib/constructs/pooler-host.ts: a dedicated pooler host is EC2 like a
 * runner (DEFAULTS.stack.poolerRootVolumeGib gp3, public IPv4 in the runners' subnets), and a lab
 * with any pooler has one more secret (the PgBouncer admin user).
 */
export const LAB_DEPLOYMENT_SHAPE: DeploymentShape = {
  availabilityZones: DEFAULTS.stack.availabilityZones,
  interfaceEndpoints: [],
  natGateways: 0,
  runnersHavePublicIpv4: true,
  runnerRootVolumeGb: DEFAULTS.stack.runnerRootVolumeGib,
  poolerHostRootVolumeGb: DEFAULTS.stack.poolerRootVolumeGib,
  poolerHostsHavePublicIpv4: true,
  secrets: 1,
  poolerSecrets: 1,
};

/**
 * What `lab`'s stack deploys: LAB_DEPLOYMENT_SHAPE for the lab's own VPC; in an existing VPC
 * (lib/constructs/network.ts ExistingLabNetwork) no host has a public IPv4 address, and with
 * `egress: "vpc-endpoints"` and `endpoints: "create"` the stack adds one interface endpoint per
 * PRIVATE_ENDPOINT_SERVICES entry with a network interface in each zone of `network.subnetIds` —
 * counted as one zone per subnet, the most it can be (two subnets in one zone share one).
 */
export function labDeploymentShape(lab: LabConfig): DeploymentShape {
  const n = lab.network;
  if (n.mode === 'create') return LAB_DEPLOYMENT_SHAPE;
  return {
    ...LAB_DEPLOYMENT_SHAPE,
    availabilityZones: n.subnetIds.length,
    interfaceEndpoints: createdEndpointServices(n).map((e) => e.service),
    runnersHavePublicIpv4: false,
    poolerHostsHavePublicIpv4: false,
  };
}
