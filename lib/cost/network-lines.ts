/**
 * The estimate's network and secrets phases (./estimate.ts): VPC interface endpoints, NAT
 * gateways, public IPv4 addresses, and the Secrets Manager secrets.
 */
import { assumed, fixed, HOURS_PER_MONTH, type CostLine } from './cost-line';
import type { CostInputs } from './inputs';
import { poolerHosts } from './compute-lines';

/** VPC interface endpoints, NAT gateways and public IPv4 addresses (NAT, runners, pooler hosts). */
export function networkLines({ lab, table, shape, usage }: CostInputs): CostLine[] {
  const lines: CostLine[] = [];
  if (shape.interfaceEndpoints.length > 0) {
    const n = shape.interfaceEndpoints.length * shape.availabilityZones;
    const price = table.interfaceEndpointPerAzHour;
    const zones =
      lab.network.mode === 'existing'
        ? `${shape.availabilityZones} zones (one per subnet of network.subnetIds, at most)`
        : `${shape.availabilityZones} AZs`;
    lines.push(
      fixed(
        'network',
        `VPC interface endpoints ${shape.interfaceEndpoints.length} × ${shape.availabilityZones} zones (${shape.interfaceEndpoints.join(', ')})`,
        n,
        'endpoint-AZ-hour',
        price.usd,
        price.source,
        `${shape.interfaceEndpoints.length} endpoints × ${zones} × $${price.usd}/h; a partial hour bills as a full one`,
      ),
    );
    const gb = table.interfaceEndpointPerGb;
    lines.push(
      assumed(
        'network',
        `VPC interface endpoint data ${usage.endpointGbPerHour} GB/h (assumed)`,
        usage.endpointGbPerHour,
        'GB',
        gb.usd,
        gb.source,
        `assumed ${usage.endpointGbPerHour} GB per hour × $${gb.usd}/GB (API calls and SSM polling are kilobytes; S3 traffic takes the free gateway endpoint)`,
      ),
    );
  }
  if (shape.natGateways > 0) {
    const price = table.natGatewayPerHour;
    lines.push(
      fixed(
        'network',
        `NAT gateway × ${shape.natGateways}`,
        shape.natGateways,
        'gateway-hour',
        price.usd,
        price.source,
        `${shape.natGateways} × $${price.usd}/h; data processed ($${table.natGatewayPerGb.usd}/GB) not included`,
      ),
    );
  }
  const poolerIps = shape.poolerHostsHavePublicIpv4 ? poolerHosts(lab).length : 0;
  const publicIps = shape.natGateways + (shape.runnersHavePublicIpv4 ? lab.runners.count : 0) + poolerIps;
  if (publicIps > 0) {
    const price = table.publicIpv4PerHour;
    const why = [
      shape.natGateways > 0 ? `${shape.natGateways} NAT gateway EIP(s)` : '',
      shape.runnersHavePublicIpv4 ? `${lab.runners.count} runner(s)` : '',
      poolerIps > 0 ? `${poolerIps} pooler host(s)` : '',
    ]
      .filter((s) => s !== '')
      .join(' + ');
    lines.push(
      fixed(
        'network',
        `Public IPv4 × ${publicIps}`,
        publicIps,
        'address-hour',
        price.usd,
        price.source,
        `${why} × $${price.usd}/h`,
      ),
    );
  }
  return lines;
}

/** Secrets Manager: the stack's secrets, and the pooler admin secret when the lab has poolers. */
export function secretLines({ lab, table, shape }: CostInputs): CostLine[] {
  const sec = table.secretPerMonth;
  const secrets = shape.secrets + (lab.poolers.length > 0 ? shape.poolerSecrets : 0);
  return [
    fixed(
      'other',
      `Secrets Manager × ${secrets}`,
      secrets / HOURS_PER_MONTH,
      'secret-month',
      sec.usd,
      sec.source,
      `${secrets} secret(s) × $${sec.usd}/month ÷ ${HOURS_PER_MONTH} h`,
    ),
  ];
}
