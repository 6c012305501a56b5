/**
 * The RDS Proxy security group may reach the database port of the database's security group and
 * nothing else (issue 20, defect 4). CDK writes that rule as a separate AWS::EC2::SecurityGroupEgress
 * (the port is a token) and drops its inline no-traffic placeholder; a group created with no inline
 * egress gets CloudFormation's allow-all. These tests read the synthesized template: the group's
 * own egress is exactly the no-traffic rule, and its only other egress is the database port.
 */
import * as path from 'node:path';
import { expect } from '@jest/globals';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Template } from 'aws-cdk-lib/assertions';
import { createLabStack } from '../../lib/lab-stack';
import { loadLab, LABS_DIR, newTestApp, resourcesOfType, synthLab } from './helpers';

const NO_TRAFFIC = {
  CidrIp: '255.255.255.255/32',
  Description: 'Disallow all traffic',
  IpProtocol: 'icmp',
  FromPort: 252,
  ToPort: 86,
};

function oneId(template: Template, type: string, prefix: RegExp): string {
  const ids = Object.keys(template.findResources(type)).filter((id) => prefix.test(id));
  if (ids.length !== 1)
    throw new Error(`expected one ${type} matching ${prefix}, found ${ids.join(', ') || 'none'}`);
  return ids[0] as string;
}

test.each([
  ['pocket.json', 'RDS for PostgreSQL instance', /^DatabaseInstance/],
  ['default.json', 'Aurora cluster', /^DatabaseCluster[0-9A-F]+$/],
])(
  '%s (%s): the proxies may reach the database port of the database group, nothing else',
  (file, _kind, db) => {
    // GIVEN a lab with RDS Proxies
    const { template } = synthLab(loadLab(path.join(LABS_DIR, file)));
    const proxySg = oneId(template, 'AWS::EC2::SecurityGroup', /^ProxiesSecurityGroup/);
    const dbSg = oneId(template, 'AWS::EC2::SecurityGroup', /^DatabaseSecurityGroup/);
    const dbId = oneId(
      template,
      db.source.includes('Instance') ? 'AWS::RDS::DBInstance' : 'AWS::RDS::DBCluster',
      db,
    );
    // WHEN / THEN the group's own egress is the no-traffic rule only: CloudFormation adds no allow-all
    const resources = template.toJSON().Resources as Record<string, { Properties: Record<string, unknown> }>;
    const group = resources[proxySg] as { Properties: Record<string, unknown> };
    expect(group.Properties.SecurityGroupEgress).toEqual([NO_TRAFFIC]);
    // and its one separate egress rule is TCP to the database group on the database port
    const egress = resourcesOfType(template, 'AWS::EC2::SecurityGroupEgress').filter(
      ([, p]) => JSON.stringify(p.GroupId) === JSON.stringify({ 'Fn::GetAtt': [proxySg, 'GroupId'] }),
    );
    const port = { 'Fn::GetAtt': [dbId, 'Endpoint.Port'] };
    expect(egress.map(([, p]) => ({ ...p, Description: undefined }))).toEqual([
      {
        GroupId: { 'Fn::GetAtt': [proxySg, 'GroupId'] },
        IpProtocol: 'tcp',
        FromPort: port,
        ToPort: port,
        DestinationSecurityGroupId: { 'Fn::GetAtt': [dbSg, 'GroupId'] },
        Description: undefined,
      },
    ]);
    // nowhere in the template does the proxy group get an address range or all protocols
    const text = JSON.stringify([group, ...egress.map(([, p]) => p)]);
    expect(text).not.toContain('0.0.0.0/0');
    expect(text).not.toContain('"IpProtocol":"-1"');
  },
);

test('an inline egress rule on the proxy group fails synthesis instead of being dropped', () => {
  // GIVEN the pocket lab's stack and an address-range egress rule CDK would put inline
  const stack = createLabStack(newTestApp(), loadLab(path.join(LABS_DIR, 'pocket.json')));
  stack.proxies.securityGroup.addEgressRule(ec2.Peer.ipv4('10.0.0.0/8'), ec2.Port.tcp(443));
  // WHEN / THEN
  expect(() => Template.fromStack(stack)).toThrow(/Proxies\/SecurityGroup: inline egress .*10\.0\.0\.0\/8/);
});
