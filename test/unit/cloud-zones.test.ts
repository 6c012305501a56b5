/**
 * Where the lab's subnets go (lib/operator/availability-zones.ts): chosen by zone ID — the runners'
 * type must be offered there, and with RDS Proxies none of the zone IDs RDS Proxy does not support
 * (RDS_PROXY_UNSUPPORTED_ZONE_IDS) — and handed to CDK by this account's zone names. EC2 through
 * aws-sdk-client-mock.
 */
import {
  DescribeAvailabilityZonesCommand,
  DescribeInstanceTypeOfferingsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { mockAws } from '../helpers/aws-calls/recorder';
import { operator } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import {
  chooseLabZones,
  chooseZones,
  RDS_PROXY_UNSUPPORTED_ZONE_IDS,
  zoneContextArgs,
  type Zone,
} from '../../lib/operator/availability-zones';
import { cdkInvocation } from '../../lib/operator/operator';
import { UsageError } from '../../lib/core/errors';
import { AZ_CONTEXT_KEYS } from '../../lib/config/stack-outputs';

const ec2Mock = mockAws(EC2Client, operator('deploy'));
afterEach(() => ec2Mock.reset());

/**
 * us-east-1 as one account might see it: zone names map to IDs per account, so here us-east-1a is
 * use1-az3 — the zone RDS Proxy does not support — and us-east-1c is use1-az1.
 */
const USE1: Zone[] = [
  { name: 'us-east-1a', id: 'use1-az3' },
  { name: 'us-east-1b', id: 'use1-az6' },
  { name: 'us-east-1c', id: 'use1-az1' },
  { name: 'us-east-1d', id: 'use1-az2' },
];

describe('chooseLabZones (EC2)', () => {
  test('asks EC2 for offerings by zone ID and the zone names and IDs, and puts the runners there', async () => {
    // GIVEN c7g.large offered in use1-az1 and use1-az3 (both pages), and a lab without RDS Proxies
    ec2Mock.on(DescribeAvailabilityZonesCommand).resolves({
      AvailabilityZones: [...USE1].reverse().map((z) => ({ ZoneName: z.name, ZoneId: z.id })),
    });
    ec2Mock
      .on(DescribeInstanceTypeOfferingsCommand)
      .resolvesOnce({
        InstanceTypeOfferings: [
          { InstanceType: 'c7g.large', LocationType: 'availability-zone-id', Location: 'use1-az1' },
        ],
        NextToken: 'page2',
      })
      .resolvesOnce({
        InstanceTypeOfferings: [
          { InstanceType: 'c7g.large', LocationType: 'availability-zone-id', Location: 'use1-az3' },
        ],
      });
    // WHEN
    const choice = await chooseLabZones(new EC2Client({ region: 'us-east-1' }), {
      instanceType: 'c7g.large',
      rdsProxy: false,
    });
    // THEN the exact requests: offerings per zone ID for this type (both pages), standard zones only
    expect(ec2Mock).toHaveReceivedCommandWith(DescribeInstanceTypeOfferingsCommand, {
      LocationType: 'availability-zone-id',
      Filters: [{ Name: 'instance-type', Values: ['c7g.large'] }],
    });
    expect(ec2Mock).toHaveReceivedCommandWith(DescribeInstanceTypeOfferingsCommand, { NextToken: 'page2' });
    expect(ec2Mock).toHaveReceivedCommandWith(DescribeAvailabilityZonesCommand, {
      Filters: [
        { Name: 'zone-type', Values: ['availability-zone'] },
        { Name: 'state', Values: ['available'] },
      ],
    });
    // the offering IDs, by this account's names
    expect(choice).toEqual({
      vpc: ['us-east-1a', 'us-east-1c'],
      runners: ['us-east-1a', 'us-east-1c'],
      excluded: [],
    });
    // AND cdk deploy gets them as context
    const inv = cdkInvocation(
      'deploy',
      'labs/default.json',
      {},
      '/repo',
      zoneContextArgs(choice, AZ_CONTEXT_KEYS),
    );
    expect(inv.args).toEqual(
      expect.arrayContaining([
        '-c',
        'proxylab:availabilityZones=us-east-1a,us-east-1c',
        'proxylab:runnerAvailabilityZones=us-east-1a,us-east-1c',
      ]),
    );
  });

  test('with RDS Proxies the zone whose ID RDS Proxy does not support is left out, whatever its name', async () => {
    // GIVEN the same offerings and a lab with a proxy
    ec2Mock.on(DescribeAvailabilityZonesCommand).resolves({
      AvailabilityZones: USE1.map((z) => ({ ZoneName: z.name, ZoneId: z.id })),
    });
    ec2Mock.on(DescribeInstanceTypeOfferingsCommand).resolves({
      InstanceTypeOfferings: ['use1-az1', 'use1-az3'].map((id) => ({
        InstanceType: 'c7g.large',
        LocationType: 'availability-zone-id',
        Location: id,
      })),
    });
    // WHEN
    const choice = await chooseLabZones(new EC2Client({ region: 'us-east-1' }), {
      instanceType: 'c7g.large',
      rdsProxy: true,
    });
    // THEN us-east-1a (use1-az3 in this account) is not used, and the VPC fills up with another zone
    expect(choice).toEqual({
      vpc: ['us-east-1c', 'us-east-1b'],
      runners: ['us-east-1c'],
      excluded: [{ name: 'us-east-1a', id: 'use1-az3' }],
    });
  });
});

describe('chooseZones (pure)', () => {
  const zones = (...ids: string[]): Zone[] => ids.map((id, i) => ({ name: `r-${'abcdef'[i]}`, id }));

  test.each([
    [
      'one zone offers it: the VPC fills up with another',
      zones('z1', 'z2', 'z3'),
      ['z3'],
      false,
      { vpc: ['r-c', 'r-a'], runners: ['r-c'] },
    ],
    [
      'the first two offer it',
      zones('z1', 'z2', 'z3'),
      ['z1', 'z2', 'z3'],
      false,
      { vpc: ['r-a', 'r-b'], runners: ['r-a', 'r-b'] },
    ],
    [
      'usw1-az2 is kept without proxies',
      zones('usw1-az2', 'usw1-az1'),
      ['usw1-az2', 'usw1-az1'],
      false,
      { vpc: ['r-a', 'r-b'], runners: ['r-a', 'r-b'] },
    ],
    [
      'usw1-az2 is left out with proxies',
      zones('usw1-az2', 'usw1-az1', 'usw1-az3'),
      ['usw1-az2', 'usw1-az1', 'usw1-az3'],
      true,
      { vpc: ['r-b', 'r-c'], runners: ['r-b', 'r-c'] },
    ],
  ])('%s', (_what, all, offering, rdsProxy, expected) => {
    expect(chooseZones(all, offering, { instanceType: 't', rdsProxy })).toMatchObject(expected);
  });

  test('the list is the documented one (RDS Proxy limitations page)', () => {
    expect(RDS_PROXY_UNSUPPORTED_ZONE_IDS).toEqual(['use1-az3', 'usw1-az2']);
  });

  test('no zone offers the type: a usage error naming the type', () => {
    expect(() => chooseZones(zones('a', 'b'), [], { instanceType: 'x9z.large', rdsProxy: false })).toThrow(
      UsageError,
    );
    expect(() => chooseZones(zones('a', 'b'), [], { instanceType: 'x9z.large', rdsProxy: false })).toThrow(
      /x9z\.large is not offered/,
    );
  });

  test('the type is offered only where RDS Proxy is not: a usage error naming both', () => {
    expect(() =>
      chooseZones(zones('use1-az3', 'use1-az1', 'use1-az2'), ['use1-az3'], {
        instanceType: 'c7g.large',
        rdsProxy: true,
      }),
    ).toThrow(
      /c7g\.large is not offered in any usable Availability Zone .*RDS Proxy, which does not support zone use1-az3/,
    );
  });

  test('too few zones left once RDS Proxy’s are out: a usage error saying why', () => {
    expect(() =>
      chooseZones(zones('usw1-az1', 'usw1-az2'), ['usw1-az1'], { instanceType: 't', rdsProxy: true }),
    ).toThrow(
      /1 usable Availability Zone\(s\) \(r-a \(usw1-az1\); left out for RDS Proxy.*usw1-az2\); the lab needs 2/,
    );
  });
});
