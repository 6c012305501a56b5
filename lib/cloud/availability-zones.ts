/**
 * Where the lab's subnets go (issue 14 item 12): not every instance type is offered in every
 * Availability Zone, and an environment-agnostic template always takes the region's first zones
 * (Fn::GetAZs). At deploy time the CLI asks EC2 which zones offer the runners' type and passes the
 * choice to the CDK app as context (AZ_CONTEXT_KEYS); `cdk synth` without it stays region-agnostic.
 *
 * EC2 API: DescribeInstanceTypeOfferings with LocationType `availability-zone` lists one offering
 * per zone that offers the type (filter `instance-type`); DescribeAvailabilityZones with the
 * `zone-type` filter `availability-zone` leaves out Local and Wavelength Zones, and without
 * AllAvailabilityZones lists only the zones enabled for the account.
 */
import {
  DescribeAvailabilityZonesCommand,
  DescribeInstanceTypeOfferingsCommand,
  type EC2Client,
} from '@aws-sdk/client-ec2';
import { UsageError } from '../core/errors';

export interface ZoneChoice {
  /** The VPC's zones (Aurora needs subnets in two), the offering ones first. */
  readonly vpc: readonly string[];
  /** Those of `vpc` that offer the runners' instance type (never empty). */
  readonly runners: readonly string[];
}

/** The zones of the region that offer `instanceType`, sorted by name. */
export async function zonesOffering(ec2: EC2Client, instanceType: string): Promise<string[]> {
  const zones = new Set<string>();
  let token: string | undefined;
  do {
    const res = await ec2.send(
      new DescribeInstanceTypeOfferingsCommand({
        LocationType: 'availability-zone',
        Filters: [{ Name: 'instance-type', Values: [instanceType] }],
        NextToken: token,
      }),
    );
    for (const o of res.InstanceTypeOfferings ?? []) if (o.Location) zones.add(o.Location);
    token = res.NextToken || undefined;
  } while (token);
  return [...zones].sort();
}

/** The region's available, standard Availability Zones, sorted by name. */
export async function regionZones(ec2: EC2Client): Promise<string[]> {
  const res = await ec2.send(
    new DescribeAvailabilityZonesCommand({
      Filters: [
        { Name: 'zone-type', Values: ['availability-zone'] },
        { Name: 'state', Values: ['available'] },
      ],
    }),
  );
  return (res.AvailabilityZones ?? [])
    .map((z) => z.ZoneName)
    .filter((z): z is string => typeof z === 'string' && z !== '')
    .sort();
}

/**
 * Pure choice: `count` zones for the VPC, those offering the type first (all of them when enough
 * do), filled up with other zones; the runners go into the offering ones.
 */
export function chooseZones(
  all: readonly string[],
  offering: readonly string[],
  instanceType: string,
  count = 2,
): ZoneChoice {
  const available = new Set(all);
  const good = offering.filter((z) => available.has(z));
  if (good.length === 0) {
    throw new UsageError(
      `runners.instanceType ${instanceType} is not offered in any Availability Zone of this region (${all.join(', ') || 'none found'}); choose another type or region`,
    );
  }
  if (all.length < count) {
    throw new UsageError(
      `the region has ${all.length} available Availability Zone(s); the lab needs ${count}`,
    );
  }
  const vpc = [...good, ...all.filter((z) => !good.includes(z))].slice(0, count);
  return { vpc, runners: vpc.filter((z) => good.includes(z)) };
}

export async function chooseLabZones(ec2: EC2Client, instanceType: string): Promise<ZoneChoice> {
  const [all, offering] = await Promise.all([regionZones(ec2), zonesOffering(ec2, instanceType)]);
  return chooseZones(all, offering, instanceType);
}

/** The `-c key=value` pairs for `cdk deploy`. */
export function zoneContextArgs(choice: ZoneChoice, keys: { vpc: string; runners: string }): string[] {
  return ['-c', `${keys.vpc}=${choice.vpc.join(',')}`, '-c', `${keys.runners}=${choice.runners.join(',')}`];
}
