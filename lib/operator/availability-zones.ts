/**
 * Where the lab's subnets go (issue 14 item 12, issue 20 defect 5): not every instance type is
 * offered in every Availability Zone, RDS Proxy is not offered in every zone either, and an
 * environment-agnostic template always takes the region's first zones (Fn::GetAZs). At deploy
 * time the CLI asks EC2 which zones offer the runners' type and passes the choice to the CDK app
 * as context (AZ_CONTEXT_KEYS); `cdk synth` without it stays region-agnostic.
 *
 * Zones are chosen by zone ID. A zone NAME (us-east-1a) maps to a different physical zone in each
 * account; the zone ID (use1-az1) is the same zone in every account, and it is what AWS's
 * restrictions name (RDS_PROXY_UNSUPPORTED_ZONE_IDS). The chosen zones go to CDK by name, the
 * name this account gives that ID.
 *
 * EC2 API: DescribeInstanceTypeOfferings with LocationType `availability-zone-id` lists one
 * offering per zone ID that offers the type (filter `instance-type`); DescribeAvailabilityZones
 * returns each zone's ZoneName and ZoneId, with the `zone-type` filter `availability-zone` leaving
 * out Local and Wavelength Zones, and without AllAvailabilityZones only the zones enabled for the
 * account.
 */
import {
  DescribeAvailabilityZonesCommand,
  DescribeInstanceTypeOfferingsCommand,
  DescribeSubnetsCommand,
  type EC2Client,
} from '@aws-sdk/client-ec2';
import { UsageError } from '../core/errors';

/**
 * Zone IDs where RDS Proxy cannot be created — the one list of them. RDS User Guide (and Aurora
 * User Guide), "Quotas and limitations for RDS Proxy" (rds-proxy.html#rds-proxy.limitations):
 * "US East (N. Virginia) Region does not support RDS Proxy in the use1-az3 Availability Zone.
 * US West (N. California) Region does not support RDS Proxy in the usw1-az2 Availability Zone.
 * When selecting subnets while creating your proxy, make sure that you don't select subnets in the
 * Availability Zones mentioned above." (A proxy given such a subnet among three or more is created
 * without it, silently; with two, CreateDBProxy fails.)
 */
export const RDS_PROXY_UNSUPPORTED_ZONE_IDS: readonly string[] = ['use1-az3', 'usw1-az2'];

/** A zone as this account sees it: its name here, and the ID that is the same in every account. */
export interface Zone {
  readonly name: string;
  readonly id: string;
}

export interface ZoneChoice {
  /** The VPC's zones by name (Aurora needs subnets in two), the offering ones first. */
  readonly vpc: readonly string[];
  /** Those of `vpc` that offer the runners' instance type (never empty). */
  readonly runners: readonly string[];
  /** Zones of the region left out because the lab's RDS Proxies cannot use them. */
  readonly excluded: readonly Zone[];
}

export interface ZoneNeeds {
  /** The runners' EC2 instance type. */
  readonly instanceType: string;
  /** The lab has RDS Proxies: their subnets (the VPC's isolated ones) must avoid RDS_PROXY_UNSUPPORTED_ZONE_IDS. */
  readonly rdsProxy: boolean;
  /** Zones the VPC spans. @default 2 */
  readonly count?: number;
}

/** The zone IDs of the region that offer `instanceType`, sorted. */
export async function zoneIdsOffering(ec2: EC2Client, instanceType: string): Promise<string[]> {
  const ids = new Set<string>();
  let token: string | undefined;
  do {
    const res = await ec2.send(
      new DescribeInstanceTypeOfferingsCommand({
        LocationType: 'availability-zone-id',
        Filters: [{ Name: 'instance-type', Values: [instanceType] }],
        NextToken: token,
      }),
    );
    for (const o of res.InstanceTypeOfferings ?? []) if (o.Location) ids.add(o.Location);
    token = res.NextToken || undefined;
  } while (token);
  return [...ids].sort();
}

/** The region's available, standard Availability Zones (name and ID), sorted by name. */
export async function regionZones(ec2: EC2Client): Promise<Zone[]> {
  const res = await ec2.send(
    new DescribeAvailabilityZonesCommand({
      Filters: [
        { Name: 'zone-type', Values: ['availability-zone'] },
        { Name: 'state', Values: ['available'] },
      ],
    }),
  );
  return (res.AvailabilityZones ?? [])
    .filter((z) => z.ZoneName && z.ZoneId)
    .map((z) => ({ name: z.ZoneName as string, id: z.ZoneId as string }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Pure choice: `count` zones for the VPC, by zone ID. With RDS Proxies the zones it does not
 * support are left out first. Of the rest, those offering the runners' type come first (all of
 * them when enough do), filled up with other zones; the runners go into the offering ones.
 */
export function chooseZones(
  all: readonly Zone[],
  offeringIds: readonly string[],
  needs: ZoneNeeds,
): ZoneChoice {
  const count = needs.count ?? 2;
  const excluded = needs.rdsProxy ? all.filter((z) => RDS_PROXY_UNSUPPORTED_ZONE_IDS.includes(z.id)) : [];
  const usable = all.filter((z) => !excluded.includes(z));
  const offering = new Set(offeringIds);
  const good = usable.filter((z) => offering.has(z.id));
  const listed = (zones: readonly Zone[]): string =>
    zones.map((z) => `${z.name} (${z.id})`).join(', ') || 'none found';
  const why =
    excluded.length > 0
      ? `; left out for RDS Proxy, which does not support zone ${excluded.map((z) => z.id).join(', ')}`
      : '';
  if (good.length === 0) {
    throw new UsageError(
      `runners.instanceType ${needs.instanceType} is not offered in any usable Availability Zone of this region ` +
        `(${listed(usable)}${why}); choose another type or region`,
    );
  }
  if (usable.length < count) {
    throw new UsageError(
      `the region has ${usable.length} usable Availability Zone(s) (${listed(usable)}${why}); the lab needs ${count}`,
    );
  }
  const vpc = [...good, ...usable.filter((z) => !good.includes(z))].slice(0, count);
  return {
    vpc: vpc.map((z) => z.name),
    runners: vpc.filter((z) => good.includes(z)).map((z) => z.name),
    excluded,
  };
}

export async function chooseLabZones(ec2: EC2Client, needs: ZoneNeeds): Promise<ZoneChoice> {
  const [all, offering] = await Promise.all([regionZones(ec2), zoneIdsOffering(ec2, needs.instanceType)]);
  return chooseZones(all, offering, needs);
}

/** The `-c key=value` pairs for `cdk deploy`. */
export function zoneContextArgs(choice: ZoneChoice, keys: { vpc: string; runners: string }): string[] {
  return ['-c', `${keys.vpc}=${choice.vpc.join(',')}`, '-c', `${keys.runners}=${choice.runners.join(',')}`];
}

/** One of an existing VPC's subnets as EC2 describes it (DescribeSubnets). */
export interface SubnetZone {
  readonly subnetId: string;
  readonly vpcId: string;
  readonly zone: Zone;
}

/** The lab's subnets with their zones (DescribeSubnets, SubnetIds; EC2 fails naming an unknown id). */
export async function describeSubnetZones(
  ec2: EC2Client,
  subnetIds: readonly string[],
): Promise<SubnetZone[]> {
  const res = await ec2.send(new DescribeSubnetsCommand({ SubnetIds: [...subnetIds] }));
  return (res.Subnets ?? [])
    .filter((s) => s.SubnetId && s.VpcId && s.AvailabilityZone && s.AvailabilityZoneId)
    .map((s) => ({
      subnetId: s.SubnetId as string,
      vpcId: s.VpcId as string,
      zone: { name: s.AvailabilityZone as string, id: s.AvailabilityZoneId as string },
    }));
}

/**
 * An existing VPC (lab `network`): its subnets fix the zones, so the choice is only where the
 * runners go — the subnets' zones that offer their type. Refused (naming `network.subnetIds`), before
 * CloudFormation would fail on it: a subnet EC2 does not know or that is in another VPC, fewer than
 * two zones (the DB subnet group), a zone RDS Proxy does not support when the lab has proxies.
 */
export function chooseZonesInSubnets(
  subnets: readonly SubnetZone[],
  offeringIds: readonly string[],
  needs: ZoneNeeds & { readonly vpcId: string; readonly subnetIds: readonly string[] },
): { readonly runners: readonly string[] } {
  const problems: string[] = [];
  needs.subnetIds.forEach((id, i) => {
    const s = subnets.find((x) => x.subnetId === id);
    if (!s)
      problems.push(`network.subnetIds[${i}] ${id}: EC2 does not describe it in this account and region`);
    else if (s.vpcId !== needs.vpcId)
      problems.push(`network.subnetIds[${i}] ${id}: in ${s.vpcId}, not network.vpcId ${needs.vpcId}`);
    else if (needs.rdsProxy && RDS_PROXY_UNSUPPORTED_ZONE_IDS.includes(s.zone.id))
      problems.push(
        `network.subnetIds[${i}] ${id}: in zone ${s.zone.name} (${s.zone.id}), where RDS Proxy cannot be created ("Quotas and limitations for RDS Proxy"); name a subnet in another zone`,
      );
  });
  const mine = subnets.filter((s) => needs.subnetIds.includes(s.subnetId) && s.vpcId === needs.vpcId);
  const zones = [...new Map(mine.map((s) => [s.zone.id, s.zone])).values()];
  if (problems.length === 0 && zones.length < 2)
    problems.push(
      `network.subnetIds: all in ${zones.map((z) => `${z.name} (${z.id})`).join(', ') || 'no zone'}; the database subnet group needs subnets in at least two Availability Zones`,
    );
  const offering = new Set(offeringIds);
  const runners = zones.filter((z) => offering.has(z.id)).map((z) => z.name);
  if (problems.length === 0 && runners.length === 0)
    problems.push(
      `runners.instanceType ${needs.instanceType} is not offered in any zone of network.subnetIds (${zones.map((z) => `${z.name} (${z.id})`).join(', ')}); choose another type or add a subnet in a zone that offers it`,
    );
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return { runners: runners.sort() };
}

/** deploy, existing VPC: the runners' zones among the lab's subnets. */
export async function chooseExistingVpcZones(
  ec2: EC2Client,
  needs: ZoneNeeds & { readonly vpcId: string; readonly subnetIds: readonly string[] },
): Promise<{ readonly runners: readonly string[] }> {
  const [subnets, offering] = await Promise.all([
    describeSubnetZones(ec2, needs.subnetIds),
    zoneIdsOffering(ec2, needs.instanceType),
  ]);
  return chooseZonesInSubnets(subnets, offering, needs);
}
