/**
 * Labs in an existing VPC (lib/constructs/network.ts ExistingLabNetwork), synthesized from the
 * lookups committed in cdk.context.json (fake ids; no AWS call):
 *  - labs/private.json (egress "vpc-endpoints"): no internet gateway, no NAT, no public IP, no
 *    0.0.0.0/0 egress anywhere; every security group's egress is exactly the endpoints, S3's prefix
 *    list, the database, the proxies and the poolers; the interface endpoints are the services the
 *    hosts call, with private DNS, one interface per zone; the user data of every host fetches
 *    nothing from outside the VPC's endpoints (no URL but the CDK staging bucket in the lab's
 *    region, reached through the S3 gateway endpoint);
 *  - labs/existing-vpc.json (egress "internet"): no endpoint, no public IP, HTTPS out as before;
 *  - `endpoints: "existing"`: no endpoint created, HTTPS only to the network team's CIDRs;
 *  - what the lookup says about the subnets is checked, naming `network.subnetIds`.
 * cdk-nag and cfn-lint over these labs run in labs.test.ts (every lab and shape).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { LabConfig } from '../../lib/config';
import { PRIVATE_ENDPOINT_SERVICES } from '../../lib/config/network';
import { createLabStack } from '../../lib/lab-stack';
import { pgbouncerDriver } from '../../lib/poolers/pgbouncer/driver';
import { committedLookups } from '../helpers/lab-context';
import { renderIntrinsic } from '../helpers/intrinsic';
import { testApp } from '../helpers/cdk-app';
import { labFrom, LABS_DIR, loadLab, newTestApp, resourcesOfType, synthLab } from './helpers';

type Json = Record<string, unknown>;

const PRIVATE = loadLab(path.join(LABS_DIR, 'private.json'));
const INTERNET = loadLab(path.join(LABS_DIR, 'existing-vpc.json'));

/** The `network` section of a shipped lab file, as written. */
function networkOf(file: string): Json {
  const raw = JSON.parse(readFileSync(path.join(LABS_DIR, file), 'utf8')) as { network: Json };
  return raw.network;
}

/** A small lab in labs/private.json's VPC, with `network` (and more) changed. */
function privateVariant(changes: Record<string, unknown>, network: Record<string, unknown> = {}): LabConfig {
  const { endpoints: _endpoints, ...base } = networkOf('private.json');
  return labFrom({
    name: 'variant',
    region: PRIVATE.region,
    proxies: [{ name: 'pool100' }],
    network: { ...base, ...network },
    ...changes,
  });
}

/** Every egress a security group has: its inline rules and the separate AWS::EC2::SecurityGroupEgress resources. */
function egressOf(template: Template, sgId: string): Json[] {
  const resources = (template.toJSON() as { Resources: Record<string, unknown> }).Resources;
  const sg = resources[sgId] as { Properties: { SecurityGroupEgress?: Json[] } };
  const separate = resourcesOfType(template, 'AWS::EC2::SecurityGroupEgress')
    .map(([, p]) => p)
    .filter((p) => JSON.stringify(p.GroupId) === JSON.stringify({ 'Fn::GetAtt': [sgId, 'GroupId'] }));
  return [...(sg.Properties.SecurityGroupEgress ?? []), ...separate];
}

/** Where an egress rule goes, in words: `sg:<logical id>`, `pl:<id>`, `cidr:<block>`. */
function destination(rule: Json): string {
  const sg = rule.DestinationSecurityGroupId as { 'Fn::GetAtt'?: string[] } | undefined;
  if (sg?.['Fn::GetAtt']) return `sg:${sg['Fn::GetAtt'][0]}`;
  if (typeof rule.DestinationPrefixListId === 'string') return `pl:${rule.DestinationPrefixListId}`;
  return `cidr:${String(rule.CidrIp ?? rule.CidrIpv6)}`;
}

function logicalIdStartingWith(template: Template, type: string, prefix: string): string {
  const ids = resourcesOfType(template, type)
    .map(([id]) => id)
    .filter((id) => id.startsWith(prefix));
  if (ids.length !== 1) throw new Error(`expected one ${type} ${prefix}…, found ${ids.join(', ')}`);
  return ids[0] as string;
}

/** Every URL-like thing a script names: http(s)://…, s3://…, and bare hostnames under amazonaws.com. */
function urlsIn(script: string): string[] {
  return [...script.matchAll(/\b(?:https?|s3|ftp):\/\/[^\s'"]+|\b[\w.-]+\.amazonaws\.com\b/g)].map(
    (m) => m[0],
  );
}

describe('labs/private.json: no internet path', () => {
  const { app, stack, template } = synthLab(PRIVATE);
  const json = template.toJSON() as { Resources: Record<string, { Type: string; Properties?: Json }> };
  const network = PRIVATE.network;
  if (network.mode !== 'existing') throw new Error('labs/private.json names no existing VPC');

  test('every lookup it needs is committed (nothing missing), and the stack is bound to its account and region', () => {
    expect(app.synth().manifest.missing ?? []).toEqual([]);
    expect([stack.account, stack.region]).toEqual([network.account, network.region]);
  });

  test('no VPC, subnet, route, internet gateway, NAT gateway or elastic IP of its own', () => {
    const types = new Set(Object.values(json.Resources).map((r) => r.Type));
    for (const t of [
      'AWS::EC2::VPC',
      'AWS::EC2::Subnet',
      'AWS::EC2::Route',
      'AWS::EC2::RouteTable',
      'AWS::EC2::InternetGateway',
      'AWS::EC2::EgressOnlyInternetGateway',
      'AWS::EC2::VPCGatewayAttachment',
      'AWS::EC2::NatGateway',
      'AWS::EC2::EIP',
    ])
      expect({ type: t, present: types.has(t) }).toEqual({ type: t, present: false });
  });

  test('no host gets a public IP, and every host is in the named subnets', () => {
    const instances = resourcesOfType(template, 'AWS::EC2::Instance');
    expect(instances.length).toBe(PRIVATE.runners.count + 1); // runners + the dedicated PgBouncer host
    for (const [id, p] of instances) {
      const nics = p.NetworkInterfaces as Json[];
      expect({ id, nics: nics.map((n) => n.AssociatePublicIpAddress) }).toEqual({ id, nics: [false] });
      expect(network.subnetIds).toContain(nics[0]?.SubnetId);
    }
    for (const [, p] of resourcesOfType(template, 'AWS::EC2::LaunchTemplate'))
      expect(JSON.stringify(p)).not.toMatch(/AssociatePublicIpAddress"\s*:\s*true/);
  });

  test('no security group rule anywhere reaches 0.0.0.0/0 or ::/0, and no group is left to the default allow-all', () => {
    // Anywhere in the template: inline rules, separate rules, anything else.
    const text = JSON.stringify(json);
    expect(text).not.toContain('0.0.0.0/0');
    expect(text).not.toContain('::/0');
    // CloudFormation gives a group created without inline egress an allow-all rule: every group has one.
    for (const [id, p] of resourcesOfType(template, 'AWS::EC2::SecurityGroup'))
      expect({ id, inline: (p.SecurityGroupEgress as unknown[] | undefined)?.length ?? 0 }).not.toEqual({
        id,
        inline: 0,
      });
  });

  test("the hosts' egress is exactly the endpoints, S3's prefix list, the database, the proxies and the poolers", () => {
    const endpointSg = logicalIdStartingWith(
      template,
      'AWS::EC2::SecurityGroup',
      'NetworkEndpointSecurityGroup',
    );
    const runnerSg = logicalIdStartingWith(template, 'AWS::EC2::SecurityGroup', 'RunnersSecurityGroup');
    const poolerSg = logicalIdStartingWith(template, 'AWS::EC2::SecurityGroup', 'PoolerbouncerSecurityGroup');
    const dbSg = logicalIdStartingWith(template, 'AWS::EC2::SecurityGroup', 'DatabaseSecurityGroup');
    const proxySg = logicalIdStartingWith(template, 'AWS::EC2::SecurityGroup', 'ProxiesSecurityGroup');
    const s3 = 'pl:pl-00000000000000a01'; // cdk.context.json: the S3 prefix list's lookup
    const noTraffic = 'cidr:255.255.255.255/32';
    const rules = (sg: string): string[] =>
      egressOf(template, sg)
        .map((r) => `${destination(r)} ${String(r.IpProtocol)} ${JSON.stringify(r.FromPort)}`)
        .sort();
    expect(rules(runnerSg)).toEqual(
      [
        `${noTraffic} icmp 252`,
        `sg:${endpointSg} tcp 443`,
        `${s3} tcp 443`,
        `sg:${dbSg} tcp 5432`,
        `sg:${proxySg} tcp 5432`,
        `sg:${poolerSg} tcp 6432`,
        `sg:${poolerSg} tcp 6438`,
        `sg:${poolerSg} tcp 6439`,
        `sg:${poolerSg} tcp 6440`,
      ].sort(),
    );
    expect(rules(poolerSg)).toEqual(
      [`${noTraffic} icmp 252`, `sg:${endpointSg} tcp 443`, `${s3} tcp 443`, `sg:${dbSg} tcp 5432`].sort(),
    );
    // The endpoints answer the lab's hosts only, on 443, and send nothing.
    expect(rules(endpointSg)).toEqual([`${noTraffic} icmp 252`]);
    const ingress = resourcesOfType(template, 'AWS::EC2::SecurityGroupIngress')
      .map(([, p]) => p)
      .filter((p) => JSON.stringify(p.GroupId).includes(endpointSg))
      .map(
        (p) =>
          `${(p.SourceSecurityGroupId as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]} ${String(p.FromPort)}`,
      )
      .sort();
    expect(ingress).toEqual([`${poolerSg} 443`, `${runnerSg} 443`].sort());
  });

  test('an interface endpoint per service the hosts call, with private DNS, one interface per zone; S3 through a gateway endpoint', () => {
    const endpoints = resourcesOfType(template, 'AWS::EC2::VPCEndpoint').map(([, p]) => p);
    const iface = endpoints.filter((p) => p.VpcEndpointType === 'Interface');
    expect(iface.map((p) => p.ServiceName).sort()).toEqual(
      PRIVATE_ENDPOINT_SERVICES.map((e) => `com.amazonaws.${network.region}.${e.service}`).sort(),
    );
    for (const p of iface) {
      expect(p).toMatchObject({
        PrivateDnsEnabled: true,
        VpcId: network.vpcId,
        SubnetIds: [...network.subnetIds],
      });
      expect((p.SecurityGroupIds as unknown[]).length).toBe(1);
    }
    const gateways = endpoints.filter((p) => p.VpcEndpointType === 'Gateway');
    expect(gateways).toHaveLength(1);
    expect(JSON.stringify(gateways[0]?.ServiceName)).toMatch(/\.s3"/);
    // The route tables of the lab's subnets, as the committed lookup has them.
    expect(gateways[0]?.RouteTableIds).toEqual(['rtb-0000000000000a011', 'rtb-0000000000000a012']);
  });

  test('the hosts may read exactly the staged PgBouncer source object, keyed by its published SHA-256', () => {
    const release = pgbouncerDriver.releases.find((r) => r.version === PRIVATE.poolers[0]?.version);
    if (!release) throw new Error('no release');
    const policies = JSON.stringify(resourcesOfType(template, 'AWS::IAM::Policy').map(([id, p]) => [id, p]));
    expect(policies).toContain(
      `cdk-hnb659fds-assets-${network.account}-${network.region}/${release.sha256}.gz`,
    );
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyName: Match.stringLikeRegexp('^PoolerbouncerRole'),
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 's3:GetObject',
            Resource: Match.objectLike({
              'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp(`${release.sha256}\\.gz$`)])],
            }),
          }),
        ]),
      },
    });
  });

  describe.each(['runner', 'pooler host'] as const)('the %s user data', (kind) => {
    const scripts = resourcesOfType(template, 'AWS::EC2::Instance')
      .filter(([id]) => id.startsWith(kind === 'runner' ? 'Runners' : 'Pooler'))
      .map(([, p]) => renderIntrinsic(p.UserData));

    test('fetches nothing from outside the VPC endpoints: no URL but the CDK staging bucket of the lab’s account and region', () => {
      expect(scripts.length).toBeGreaterThan(0);
      for (const script of scripts) {
        const urls = urlsIn(script);
        // there is something to check: the runner bundle (and the PgBouncer source on the pooler host)
        expect(urls.length).toBeGreaterThan(0);
        for (const url of urls)
          expect({
            url,
            allowed: /^s3:\/\/cdk-hnb659fds-assets-111122223333-us-east-1\/[0-9a-f]{64}\.(zip|gz)$/.test(url),
          }).toEqual({
            url,
            allowed: true,
          });
        // no download tool, and cfn-signal talks to the CloudFormation API's usual endpoint (no --url)
        expect(script).not.toMatch(/\b(curl|wget)\b/);
        expect(script).toMatch(
          /\/opt\/aws\/bin\/cfn-signal --stack \S+ --resource \S+ --region us-east-1 -e/,
        );
      }
    });

    if (kind === 'pooler host')
      test('builds PgBouncer from the staged copy, checked against its published SHA-256 before anything is built', () => {
        const script = scripts[0] ?? '';
        const release = pgbouncerDriver.releases.find((r) => r.version === PRIVATE.poolers[0]?.version);
        expect(script).toContain(`.gz' "\${pgbouncer_src}/pgbouncer-${release?.version ?? '?'}.tar.gz"`);
        expect(script.indexOf(`echo '${release?.sha256 ?? '?'}  pgbouncer-`)).toBeGreaterThan(-1);
        expect(script.indexOf('sha256sum -c')).toBeLessThan(script.indexOf('./configure'));
      });
  });
});

describe('labs/existing-vpc.json: an existing VPC with its own way to the internet', () => {
  const { template } = synthLab(INTERNET);

  test('no endpoint, no VPC of its own, no public IP; hosts keep HTTPS to anywhere and PgBouncer from upstream', () => {
    expect(resourcesOfType(template, 'AWS::EC2::VPCEndpoint')).toHaveLength(0);
    expect(resourcesOfType(template, 'AWS::EC2::VPC')).toHaveLength(0);
    for (const [, p] of resourcesOfType(template, 'AWS::EC2::Instance'))
      expect((p.NetworkInterfaces as Json[]).map((n) => n.AssociatePublicIpAddress)).toEqual([false]);
    const runnerSg = logicalIdStartingWith(template, 'AWS::EC2::SecurityGroup', 'RunnersSecurityGroup');
    expect(egressOf(template, runnerSg).map((r) => `${destination(r)} ${String(r.FromPort)}`)).toContain(
      'cidr:0.0.0.0/0 443',
    );
  });

  test('with a pooler on the runners, its source is the upstream release (the subnets route to the internet)', () => {
    const lab = labFrom({
      name: 'variant',
      region: INTERNET.region,
      proxies: [],
      poolers: [{ name: 'near', kind: 'pgbouncer', placement: 'on-runners' }],
      network: networkOf('existing-vpc.json'),
    });
    const { template: t } = synthLab(lab);
    const script =
      resourcesOfType(t, 'AWS::EC2::Instance').map(([, p]) => renderIntrinsic(p.UserData))[0] ?? '';
    expect(script).toMatch(/curl .* 'https:\/\/www\.pgbouncer\.org\/downloads\/files\//);
  });
});

describe('egress "vpc-endpoints" with the network team\'s endpoints (endpoints: "existing")', () => {
  test.each([
    ['the VPC CIDR by default', {}, ['10.20.0.0/16']],
    [
      'endpointCidrs when given',
      { endpointCidrs: ['10.0.0.0/24', '10.0.1.0/24'] },
      ['10.0.0.0/24', '10.0.1.0/24'],
    ],
  ])('no endpoint is created; HTTPS goes to %s and to S3’s prefix list only', (_what, extra, cidrs) => {
    // GIVEN
    const lab = privateVariant({}, { endpoints: 'existing', ...extra });
    // WHEN
    const { template } = synthLab(lab);
    // THEN
    expect(resourcesOfType(template, 'AWS::EC2::VPCEndpoint')).toHaveLength(0);
    const runnerSg = logicalIdStartingWith(template, 'AWS::EC2::SecurityGroup', 'RunnersSecurityGroup');
    const https = egressOf(template, runnerSg)
      .filter((r) => r.FromPort === 443)
      .map(destination)
      .sort();
    expect(https).toEqual([...cidrs.map((c) => `cidr:${c}`), 'pl:pl-00000000000000a01'].sort());
    expect(JSON.stringify(template.toJSON())).not.toContain('0.0.0.0/0');
  });

  test('a pooler on the runners installs from the staged source too', () => {
    const lab = privateVariant(
      { poolers: [{ name: 'near', kind: 'pgbouncer', placement: 'on-runners' }] },
      { endpoints: 'existing' },
    );
    const { template } = synthLab(lab);
    const script =
      resourcesOfType(template, 'AWS::EC2::Instance').map(([, p]) => renderIntrinsic(p.UserData))[0] ?? '';
    expect(script).not.toMatch(/\b(curl|wget)\b|https?:\/\//);
    expect(script).toMatch(
      /aws s3 cp 's3:\/\/cdk-hnb659fds-assets-111122223333-us-east-1\/[0-9a-f]{64}\.gz'/,
    );
  });
});

describe('what the lookup says about network.subnetIds is checked at synth, naming the field', () => {
  /** A fake VPC lookup: one public, one private and two isolated subnets (one shares a zone). */
  const VPC = 'vpc-0000000000000c001';
  const lookupKey = `vpc-provider:account=111122223333:filter.vpc-id=${VPC}:region=us-east-1:returnAsymmetricSubnets=true:returnVpnGateways=false`;
  const subnet = (id: string, az: string): Json => ({
    subnetId: id,
    cidr: '10.9.0.0/24',
    availabilityZone: az,
    routeTableId: `rtb-${id.slice(-5)}`,
  });
  const lookup = {
    vpcId: VPC,
    vpcCidrBlock: '10.9.0.0/16',
    ownerAccountId: '111122223333',
    availabilityZones: [],
    subnetGroups: [
      { name: 'Public', type: 'Public', subnets: [subnet('subnet-0000000000000c011', 'us-east-1a')] },
      {
        name: 'Isolated',
        type: 'Isolated',
        subnets: [
          subnet('subnet-0000000000000c021', 'us-east-1a'),
          subnet('subnet-0000000000000c022', 'us-east-1a'),
        ],
      },
    ],
  };
  const synthWith =
    (subnetIds: string[], context: Record<string, unknown> = {}): (() => void) =>
    () => {
      const app = testApp({ context: { ...committedLookups(), [lookupKey]: lookup, ...context } });
      createLabStack(app, privateVariant({}, { vpcId: VPC, subnetIds }));
    };

  test.each([
    [
      ['subnet-0000000000000c021', 'subnet-0000000000000c099'],
      /network\.subnetIds\[1\]: subnet-0000000000000c099 is not a subnet of vpc-0000000000000c001/,
    ],
    [
      ['subnet-0000000000000c011', 'subnet-0000000000000c021'],
      /network\.subnetIds\[0\]: subnet-0000000000000c011 routes to an internet gateway/,
    ],
    [
      ['subnet-0000000000000c021', 'subnet-0000000000000c022'],
      /network\.subnetIds: all in us-east-1a; the database subnet group .* at least two Availability Zones/,
    ],
  ])('%j is refused', (ids, message) => {
    expect(synthWith(ids)).toThrow(message);
  });

  test("runner zones from deploy must include one of the subnets' zones", () => {
    const app = testApp({
      context: { ...committedLookups(), 'proxylab:runnerAvailabilityZones': 'us-east-1d' },
    });
    expect(() => createLabStack(app, PRIVATE)).toThrow(
      /network\.subnetIds: none is in a zone that offers the runners' instance type \(us-east-1d\)/,
    );
  });

  test("runner zones from deploy narrow the runners' subnets", () => {
    const app = newTestApp();
    app.node.setContext('proxylab:runnerAvailabilityZones', 'us-east-1b');
    const { template } = synthLab(PRIVATE, app);
    for (const [, p] of resourcesOfType(template, 'AWS::EC2::Instance'))
      expect((p.NetworkInterfaces as Json[])[0]?.SubnetId).toBe('subnet-0000000000000a012');
  });

  test('without the lookup in the context, synth reports it missing (the CLI then looks it up) instead of failing', () => {
    // GIVEN no committed lookup for this VPC
    const app = testApp();
    // WHEN
    createLabStack(app, privateVariant({}, { vpcId: 'vpc-0000000000000d001' }));
    const missing = (app.synth().manifest.missing ?? []).map((m) => m.key);
    // THEN
    expect(missing).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^vpc-provider:account=111122223333:filter\.vpc-id=vpc-0000000000000d001:/),
      ]),
    );
  });
});
