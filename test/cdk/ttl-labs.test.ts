/**
 * Every shipped lab, synthesized through the real LabStack:
 *  - the expiry schedule is there, named after the stack, at now + ttlHours, and its role may
 *    delete only this stack;
 *  - the lifecycle tags are on every taggable resource;
 *  - what the cost estimate counts (lib/cost/shape.ts plus the lab's own counts) is what the
 *    template deploys, so `proxylab cost` cannot silently drift from the stack.
 *
 * Asset bundling is skipped (`aws:cdk:bundling-stacks: []`); it does not change these properties.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { App, CfnResource, TagManager } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { databaseInstanceClass, dbInstanceCount } from '../../lib/config/database';
import { loadLabFile } from '../../lib/config/load';
import { stackNameFor } from '../../lib/config/stack-outputs';
import { RAW_TAGGABLE_TYPES } from '../../lib/constructs/ttl';
import { labDeploymentShape } from '../../lib/cost/shape';
import { createLabStack } from '../../lib/lab-stack';
import { committedLookups } from '../helpers/lab-context';
import { scratchDir } from '../helpers/scratch';

const LABS_DIR = join(__dirname, '..', '..', 'labs');
const labFiles = readdirSync(LABS_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();
const NOW_MS = Date.parse('2026-11-21T10:00:00Z');
/**
 * Types CDK gives a tag manager although CloudFormation has no Tags property for them (cfn-lint
 * E3002); lib/constructs/proxies.ts deletes the tags CDK would render.
 */
const NOT_TAGGABLE_IN_CLOUDFORMATION = new Set(['AWS::RDS::DBProxyTargetGroup']);

interface CfnJson {
  Type: string;
  Properties?: Record<string, unknown>;
}

function tagMap(tags: unknown): Record<string, unknown> {
  if (Array.isArray(tags)) {
    return Object.fromEntries(tags.map((t: { Key?: unknown; Value?: unknown }) => [String(t.Key), t.Value]));
  }
  return tags && typeof tags === 'object' ? (tags as Record<string, unknown>) : {};
}

function lifecycleTagsOf(r: CfnJson): Record<string, unknown> {
  const props = r.Properties ?? {};
  if (r.Type === 'AWS::EC2::LaunchTemplate') {
    const specs = (props.TagSpecifications ?? []) as Array<{ ResourceType?: string; Tags?: unknown }>;
    return tagMap(specs.find((s) => s.ResourceType === 'launch-template')?.Tags);
  }
  return tagMap(props.Tags);
}

describe.each(labFiles)('%s', (file) => {
  const lab = loadLabFile(join(LABS_DIR, file));
  const app = new App({
    outdir: scratchDir('proxylab-cdk-test-'),
    context: { ...committedLookups(), 'aws:cdk:bundling-stacks': [], 'proxylab:now': '2026-11-21T10:00:00Z' },
  });
  const stack = createLabStack(app, lab);
  const template = Template.fromStack(stack);
  const shape = labDeploymentShape(lab);
  const resources = template.toJSON().Resources as Record<string, CfnJson>;
  const ofType = (type: string) => Object.values(resources).filter((r) => r.Type === type);
  // Every shipped lab must expire by itself: an opt-out (`ttlHours: null`) is for users' own files.
  if (lab.ttlHours === null) throw new Error(`${file}: shipped labs must set ttlHours`);
  const expiresAt = new Date(NOW_MS + lab.ttlHours * 3_600_000).toISOString().replace('.000Z', 'Z');

  test('expiry schedule at now + ttlHours; its role may delete only this stack', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      Name: `${stackNameFor(lab.name)}-expiry`,
      ScheduleExpression: `at(${expiresAt.slice(0, 19)})`,
      ScheduleExpressionTimezone: 'UTC',
    });
    template.hasOutput('ExpiresAt', { Value: expiresAt });
    const deletes = Object.values(template.findResources('AWS::IAM::Policy'))
      .flatMap(
        (p) =>
          (
            p as {
              Properties: { PolicyDocument: { Statement: Array<{ Action: unknown; Resource: unknown }> } };
            }
          ).Properties.PolicyDocument.Statement,
      )
      .filter((st) => JSON.stringify(st.Action).includes('cloudformation:'));
    expect(deletes).toEqual([
      expect.objectContaining({ Action: 'cloudformation:DeleteStack', Resource: { Ref: 'AWS::StackId' } }),
    ]);
  });

  test('lifecycle tags on every taggable resource', () => {
    const expected = {
      'proxylab:lab': lab.name,
      'proxylab:owner': lab.owner ?? 'unspecified',
      'proxylab:expires-at': expiresAt,
    };
    const missing: string[] = [];
    let checked = 0;
    for (const c of stack.node.findAll()) {
      if (!(c instanceof CfnResource)) continue;
      const id = stack.resolve(c.logicalId) as string;
      const r = resources[id];
      if (!r) continue;
      const taggable =
        (TagManager.isTaggable(c) || TagManager.isTaggableV2(c) || c.cfnResourceType in RAW_TAGGABLE_TYPES) &&
        !NOT_TAGGABLE_IN_CLOUDFORMATION.has(c.cfnResourceType);
      const hasTags = r.Properties?.Tags !== undefined;
      if (!taggable && !hasTags) continue;
      checked++;
      const tags = lifecycleTagsOf(r);
      for (const [k, v] of Object.entries(expected))
        if (tags[k] !== v) missing.push(`${id} (${r.Type}): ${k}=${String(tags[k])}`);
    }
    expect(missing).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  test('what the cost estimate counts is what the template deploys', () => {
    // Database instances: writer + readers (one for RDS for PostgreSQL), on the lab's class (or serverless).
    const dbInstances = ofType('AWS::RDS::DBInstance');
    expect(dbInstances).toHaveLength(dbInstanceCount(lab.database));
    for (const db of dbInstances)
      expect(db.Properties?.DBInstanceClass).toBe(databaseInstanceClass(lab.database) ?? 'db.serverless');
    // One RDS Proxy per lab proxy.
    expect(ofType('AWS::RDS::DBProxy')).toHaveLength(lab.proxies.length);
    // Dedicated pooler hosts (`Pooler-<name>/Host`): one per such pooler, its type, volume and address.
    const isPoolerHost = ([id]: [string, unknown]): boolean => id.startsWith('Pooler');
    const instances = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::EC2::Instance');
    const hosts = instances.filter(isPoolerHost).map(([, r]) => r);
    const dedicated = lab.poolers.filter((p) => p.placement === 'dedicated');
    expect(hosts.map((h) => h.Properties?.InstanceType).sort()).toEqual(
      dedicated.map((p) => p.instanceType).sort(),
    );
    for (const h of hosts) {
      const bdm = h.Properties?.BlockDeviceMappings as Array<{
        Ebs?: { VolumeSize?: number; VolumeType?: string };
      }>;
      expect(bdm.map((b) => [b.Ebs?.VolumeSize, b.Ebs?.VolumeType])).toEqual([
        [shape.poolerHostRootVolumeGb, 'gp3'],
      ]);
      const nics = (h.Properties?.NetworkInterfaces ?? []) as Array<{ AssociatePublicIpAddress?: boolean }>;
      expect(nics.some((n) => n.AssociatePublicIpAddress === true)).toBe(shape.poolerHostsHavePublicIpv4);
    }
    // Runners: count × type, root volume size, public IPv4 or not.
    const runners = instances.filter((e) => !isPoolerHost(e)).map(([, r]) => r);
    expect(runners).toHaveLength(lab.runners.count);
    for (const r of runners) {
      expect(r.Properties?.InstanceType).toBe(lab.runners.instanceType);
      const bdm = r.Properties?.BlockDeviceMappings as Array<{
        Ebs?: { VolumeSize?: number; VolumeType?: string };
      }>;
      expect(bdm.map((b) => [b.Ebs?.VolumeSize, b.Ebs?.VolumeType])).toEqual([
        [shape.runnerRootVolumeGb, 'gp3'],
      ]);
      const nics = (r.Properties?.NetworkInterfaces ?? []) as Array<{ AssociatePublicIpAddress?: boolean }>;
      expect(nics.some((n) => n.AssociatePublicIpAddress === true)).toBe(shape.runnersHavePublicIpv4);
    }
    // Network: NAT gateways, elastic IPs, interface endpoints, AZs.
    expect(ofType('AWS::EC2::NatGateway')).toHaveLength(shape.natGateways);
    expect(ofType('AWS::EC2::EIP')).toHaveLength(shape.natGateways);
    const interfaceEndpoints = ofType('AWS::EC2::VPCEndpoint').filter(
      (e) => e.Properties?.VpcEndpointType === 'Interface',
    );
    expect(interfaceEndpoints.map((e) => String(e.Properties?.ServiceName).split('.').pop()).sort()).toEqual(
      [...shape.interfaceEndpoints].sort(),
    );
    if (lab.network.mode === 'create') {
      const azs = new Set(
        ofType('AWS::EC2::Subnet').map((s) => JSON.stringify(s.Properties?.AvailabilityZone)),
      );
      expect(azs.size).toBe(shape.availabilityZones);
    } else {
      // An existing VPC: no subnet of the stack's own; each endpoint has one interface per subnet
      // (one per zone: the committed lookup puts the lab's subnets in distinct zones).
      expect(ofType('AWS::EC2::Subnet')).toHaveLength(0);
      for (const e of interfaceEndpoints)
        expect((e.Properties?.SubnetIds as unknown[]).length).toBe(shape.availabilityZones);
    }
    // Secrets.
    expect(ofType('AWS::SecretsManager::Secret')).toHaveLength(
      shape.secrets + (lab.poolers.length > 0 ? shape.poolerSecrets : 0),
    );
  });
});
