/**
 * Doctor's checks of a lab without internet egress (network.egress "vpc-endpoints"): its subnets'
 * route tables lead nowhere out, and each runner reaches every VPC endpoint from inside the VPC.
 */
import { DescribeRouteTablesCommand, type EC2Client, type RouteTable } from '@aws-sdk/client-ec2';
import { endpointHostname, type ExistingNetworkConfig } from '../config/network';
import { bad, message, ok, type Check } from './doctor-check';

/** An IPv4 address in a private range (RFC 1918, and 100.64.0.0/10 shared space): inside a VPC. */
export function isPrivateIpv4(ip: string): boolean {
  const m = /^(\d{1,3})\.(\d{1,3})\.\d{1,3}\.\d{1,3}$/.exec(ip);
  if (!m) return false;
  const a = Number(m[1]);
  const b = Number(m[2]);
  return (
    a === 10 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 100 && b >= 64 && b <= 127)
  );
}

/** The endpoint part of one runner's probe: each service answered over HTTPS from an address inside the VPC. */
export function runnerEndpointChecks(
  who: string,
  probe: ReadonlyMap<string, string>,
  network: ExistingNetworkConfig,
  services: readonly string[],
): Check[] {
  return services.map((service) => {
    const host = endpointHostname(service, network.region);
    const title = `${who}: endpoint ${service}`;
    const got = (probe.get(`endpoint.${service}`) ?? 'not run').trim();
    const m = /^(\d{3}) (\S+)$/.exec(got);
    const where =
      network.endpoints === 'create'
        ? "the stack's endpoint (its security group admits 443 from the runners' group)"
        : `the network team's endpoint (in ${network.endpointCidrs.length > 0 ? network.endpointCidrs.join(', ') : 'the VPC'}, private DNS on for ${network.vpcId})`;
    if (!m || m[1] === '000')
      return bad(
        title,
        got === '' ? 'no answer' : got.slice(0, 200),
        `${host} must resolve to ${where} and answer on 443: aws ec2 describe-vpc-endpoints --filters Name=vpc-id,Values=${network.vpcId} Name=service-name,Values=com.amazonaws.${network.region}.${service}; the VPC needs DNS resolution and DNS hostnames on`,
      );
    const ip = m[2] ?? '';
    return isPrivateIpv4(ip)
      ? ok(title, `HTTPS ${m[1]} from ${ip} (inside the VPC)`)
      : bad(
          title,
          `${host} answered from ${ip}, a public address: the request left the VPC`,
          `private DNS must be on for ${where}; and the subnets should have no route out (see the route-table check)`,
        );
  });
}

/** Every route table of `vpcId` (DescribeRouteTables, filter vpc-id), across pages. */
async function describeRouteTables(ec2: EC2Client, vpcId: string): Promise<RouteTable[]> {
  const out: RouteTable[] = [];
  let token: string | undefined;
  do {
    const res = await ec2.send(
      new DescribeRouteTablesCommand({ Filters: [{ Name: 'vpc-id', Values: [vpcId] }], NextToken: token }),
    );
    out.push(...(res.RouteTables ?? []));
    token = res.NextToken || undefined;
  } while (token);
  return out;
}

/**
 * A lab without internet egress: the route table of each of its subnets (its explicit association,
 * else the VPC's main table, as EC2 applies them) has no route to an internet gateway (`igw-`), an
 * egress-only internet gateway or a NAT gateway. A default route elsewhere (a transit gateway, a
 * peering, a firewall endpoint) is reported, not failed: where it leads is the network team's to say.
 */
export async function routeTableChecks(ec2: EC2Client, network: ExistingNetworkConfig): Promise<Check[]> {
  let tables: RouteTable[];
  try {
    tables = await describeRouteTables(ec2, network.vpcId);
  } catch (err) {
    return [
      bad(
        'network: route tables',
        message(err),
        'the CLI needs ec2:DescribeRouteTables (no resource-level permissions: Resource "*"); see proxylab iam-policy --role run',
      ),
    ];
  }
  const main = tables.find((t) => (t.Associations ?? []).some((a) => a.Main === true));
  const bySubnet = new Map<string, RouteTable | undefined>(
    network.subnetIds.map((id) => [
      id,
      tables.find((t) => (t.Associations ?? []).some((a) => a.SubnetId === id)) ?? main,
    ]),
  );
  const subnetsOf = new Map<string, string[]>();
  const missing: string[] = [];
  for (const [subnet, table] of bySubnet) {
    if (!table?.RouteTableId) missing.push(subnet);
    else subnetsOf.set(table.RouteTableId, [...(subnetsOf.get(table.RouteTableId) ?? []), subnet]);
  }
  const checks: Check[] = [];
  if (missing.length > 0)
    checks.push(
      bad(
        'network: route tables',
        `no route table found for ${missing.join(', ')} in ${network.vpcId}`,
        `check network.subnetIds and network.vpcId: aws ec2 describe-subnets --subnet-ids ${missing.join(' ')}`,
      ),
    );
  for (const [id, subnets] of subnetsOf) {
    const table = tables.find((t) => t.RouteTableId === id);
    const routes = table?.Routes ?? [];
    const dest = (r: (typeof routes)[number]): string =>
      r.DestinationCidrBlock ?? r.DestinationIpv6CidrBlock ?? r.DestinationPrefixListId ?? '?';
    const out = routes.filter(
      (r) => (r.GatewayId ?? '').startsWith('igw-') || r.EgressOnlyInternetGatewayId || r.NatGatewayId,
    );
    const title = `network: route table ${id} (${subnets.join(', ')})`;
    if (out.length > 0) {
      checks.push(
        bad(
          title,
          out
            .map(
              (r) => `${dest(r)} → ${r.GatewayId ?? r.EgressOnlyInternetGatewayId ?? r.NatGatewayId ?? '?'}`,
            )
            .join(', ') + ': a way to the internet',
          `the lab is declared without internet egress (network.egress "vpc-endpoints"): give it subnets whose route table has no internet or NAT gateway route, or ask the network team to remove it`,
        ),
      );
      continue;
    }
    const elsewhere = routes
      .filter((r) => r.DestinationCidrBlock === '0.0.0.0/0' || r.DestinationIpv6CidrBlock === '::/0')
      .map(
        (r) =>
          `${dest(r)} → ${r.TransitGatewayId ?? r.VpcPeeringConnectionId ?? r.NetworkInterfaceId ?? r.GatewayId ?? r.CoreNetworkArn ?? '?'}`,
      );
    checks.push(
      ok(
        title,
        `no internet or NAT gateway route${elsewhere.length > 0 ? `; default route ${elsewhere.join(', ')} (where it leads is the network team's)` : ''}`,
      ),
    );
  }
  return checks;
}
