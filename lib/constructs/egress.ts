/**
 * Security-group egress that is exactly what was added: shared by the proxies (lib/constructs/proxies.ts)
 * and the hosts of a lab without internet egress (lib/constructs/network.ts ExistingLabNetwork).
 */
import { Stack } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';

/**
 * The rule CDK uses to mean "no egress" (aws-cdk-lib aws-ec2/lib/security-group.ts, MATCH_NO_TRAFFIC):
 * no host has 255.255.255.255, and ICMP type 252 code 86 does not exist.
 */
export const NO_TRAFFIC_EGRESS = {
  cidrIp: '255.255.255.255/32',
  description: 'Disallow all traffic',
  ipProtocol: 'icmp',
  fromPort: 252,
  toPort: 86,
} as const;

/**
 * Keeps `sg`'s egress to exactly its added rules, by keeping CDK's no-traffic rule inline.
 *
 * CloudFormation gives a security group created without egress rules allow-all egress
 * (AWS::EC2::SecurityGroup: "if you do not add egress rules, we add egress rules that allow all
 * outbound IPv4 and IPv6 traffic. Otherwise, we do not add them"). With `allowAllOutbound: false`
 * CDK puts NO_TRAFFIC_EGRESS inline for that reason, but `addEgressRule` removes it first
 * (`removeNoTrafficRule`) and then writes a rule toward another security group — or with a token
 * port, as the database port is — as a separate AWS::EC2::SecurityGroupEgress resource (a security
 * group peer and a token port cannot be inlined: `canInlineRule`). The group itself then has no
 * egress, CloudFormation creates it with allow-all, and the proxy could reach anything until (and
 * unless) the separate rule's creation happens to remove it. Keeping the no-traffic rule inline
 * means the group is never created without egress rules: what it may reach is the separate rules
 * and nothing else. (Cross-group rules stay separate resources, as the same page asks: "To
 * cross-reference two security groups … use the AWS::EC2::SecurityGroupEgress and
 * AWS::EC2::SecurityGroupIngress resources".)
 *
 * Only for groups whose inline egress CDK leaves empty or at the no-traffic rule; a validation
 * fails synthesis, naming the group, if CDK inlined any other egress rule (this override would drop it).
 */
export function keepNoTrafficEgressInline(sg: ec2.SecurityGroup): void {
  const cfn = sg.node.defaultChild as ec2.CfnSecurityGroup;
  const cdkInline = cfn.securityGroupEgress;
  sg.node.addValidation({
    validate: () => {
      const rules = (Stack.of(sg).resolve(cdkInline) as Array<Record<string, unknown>> | undefined) ?? [];
      const isNoTraffic = (r: Record<string, unknown>): boolean =>
        (['cidrIp', 'ipProtocol', 'fromPort', 'toPort'] as const).every((k) => r[k] === NO_TRAFFIC_EGRESS[k]);
      const other = rules.filter((r) => !isNoTraffic(r));
      return other.length === 0
        ? []
        : [
            `${sg.node.path}: inline egress ${JSON.stringify(other)} would be replaced by the no-traffic rule; ` +
              'add egress to this group only toward security groups (separate rules)',
          ];
    },
  });
  cfn.addPropertyOverride('SecurityGroupEgress', [
    {
      CidrIp: NO_TRAFFIC_EGRESS.cidrIp,
      Description: NO_TRAFFIC_EGRESS.description,
      IpProtocol: NO_TRAFFIC_EGRESS.ipProtocol,
      FromPort: NO_TRAFFIC_EGRESS.fromPort,
      ToPort: NO_TRAFFIC_EGRESS.toPort,
    },
  ]);
}
