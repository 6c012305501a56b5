/**
 * Every shipped lab as users deploy it, checked on the one synth of it that test/cdk/labs.test.ts
 * makes (which registers these tests with shippedLabChecks):
 *  - the expiry schedule is there, named after the stack, at now + ttlHours, and its role may
 *    delete only this stack;
 *  - the lifecycle tags are on every taggable resource;
 *  - what the cost estimate counts (lib/cost/shape.ts plus the lab's own counts) is what the
 *    template deploys, so `proxylab cost` cannot silently drift from the stack;
 *  - sharing a lab means sharing its template: it deploys into any account and region unchanged —
 *    no 12-digit account id, no region name, no literal ARN (only `${AWS::Partition}` /
 *    `${AWS::Region}` / `${AWS::AccountId}` through Fn::Sub, or Ref AWS::Partition inside
 *    Fn::Join), no context lookups, and the stack's own environment left unresolved — except a lab
 *    in an existing VPC, which CDK looks up in one account and region (committed in
 *    cdk.context.json): bound to exactly those, and to nothing else.
 *
 * Asset bundling is skipped (`aws:cdk:bundling-stacks: []`, test/helpers/cdk-app.ts): it only
 * changes an asset's hash, not these properties, and saves an esbuild run per lab.
 */
import { join } from 'node:path';
import { CfnResource, TagManager, Token } from 'aws-cdk-lib';
import { databaseInstanceClass, dbInstanceCount } from '../../../lib/config/database';
import { loadLabFile } from '../../../lib/config/load';
import { stackNameFor } from '../../../lib/config/stack-outputs';
import { RAW_TAGGABLE_TYPES } from '../../../lib/constructs/ttl';
import { labDeploymentShape } from '../../../lib/cost/shape';
import { LABS_DIR, TEST_NOW, type SynthesizedLab } from '../helpers';

const NOW_MS = Date.parse(TEST_NOW);
/**
 * Types CDK gives a tag manager although CloudFormation has no Tags property for them (cfn-lint
 * E3002); lib/constructs/proxies.ts deletes the tags CDK would render.
 */
const NOT_TAGGABLE_IN_CLOUDFORMATION = new Set(['AWS::RDS::DBProxyTargetGroup']);

interface CfnJson {
  Type: string;
  Properties?: Record<string, unknown>;
}

/** An EC2 instance's one root volume (gp3 of `rootGb`) and whether a network interface asks for a public IPv4. */
function expectRootAndIpv4(instance: CfnJson, rootGb: number, publicIpv4: boolean): void {
  const bdm = instance.Properties?.BlockDeviceMappings as Array<{
    Ebs?: { VolumeSize?: number; VolumeType?: string };
  }>;
  expect(bdm.map((b) => [b.Ebs?.VolumeSize, b.Ebs?.VolumeType])).toEqual([[rootGb, 'gp3']]);
  const nics = (instance.Properties?.NetworkInterfaces ?? []) as Array<{
    AssociatePublicIpAddress?: boolean;
  }>;
  expect(nics.some((n) => n.AssociatePublicIpAddress === true)).toBe(publicIpv4);
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

/** Every string in a JSON value, with its path. */
function strings(value: unknown, path = '$'): Array<{ path: string; text: string }> {
  if (typeof value === 'string') return [{ path, text: value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => [
      ...strings(k, `${path}.<key>`),
      ...strings(v, `${path}.${k}`),
    ]);
  if (typeof value === 'number') return [{ path, text: String(value) }];
  return [];
}

// Asset hashes (64 hex digits) can contain 12 decimal digits in a row by chance; they name
// content, not an account.
const ASSET_HASH = /[0-9a-f]{64}/g;
const ACCOUNT_ID = /(?<![0-9])[0-9]{12}(?![0-9])/;
const REGION =
  /\b(?:us|eu|ap|sa|ca|me|af|il|mx|cn)(?:-gov|-iso[a-z]*)?-(?:north|south|east|west|central|northeast|northwest|southeast|southwest)-\d\b/;
/** `arn:` followed by anything but the end of the string (Fn::Join piece) or `${` (Fn::Sub). */
const LITERAL_ARN = /arn:(?!\$\{|$)/;

/**
 * The tests above, one describe per labs/ file (`default.json`, …), on `synthesized(path)`: the
 * lab's one synth, made in a beforeAll that runs before these (labs.test.ts).
 */
export function shippedLabChecks(
  labFiles: readonly string[],
  synthesized: (labPath: string) => SynthesizedLab,
): void {
  describe.each(labFiles)('%s', (file) => {
    const lab = loadLabFile(join(LABS_DIR, file));
    const shape = labDeploymentShape(lab);
    // Every shipped lab must expire by itself: an opt-out (`ttlHours: null`) is for users' own files.
    if (lab.ttlHours === null) throw new Error(`${file}: shipped labs must set ttlHours`);
    const expiresAt = new Date(NOW_MS + lab.ttlHours * 3_600_000).toISOString().replace('.000Z', 'Z');
    let app: SynthesizedLab['app'];
    let stack: SynthesizedLab['stack'];
    let template: SynthesizedLab['template'];
    let json: { Resources: Record<string, CfnJson> };
    let resources: Record<string, CfnJson>;
    let all: Array<{ path: string; text: string }>;
    const ofType = (type: string) => Object.values(resources).filter((r) => r.Type === type);

    beforeAll(() => {
      ({ app, stack, template } = synthesized(join(LABS_DIR, file)));
      json = template.toJSON() as typeof json;
      resources = json.Resources;
      // Logical ids (hash suffixes, ports: `...SecurityGroupB892058454325...`) name template entries, not accounts.
      const logicalIds = (['Resources', 'Outputs', 'Parameters', 'Conditions'] as const)
        .flatMap((section) =>
          Object.keys((json as Record<string, Record<string, unknown> | undefined>)[section] ?? {}),
        )
        .sort((a, b) => b.length - a.length);
      // (`includes` first: the same result, without a split and join of every string for each of ~130 ids)
      const scrub = (text: string): string =>
        logicalIds.reduce(
          (t, id) => (t.includes(id) ? t.split(id).join('<id>') : t),
          text.replace(ASSET_HASH, '<hash>'),
        );
      all = strings(json).map((s) => ({ ...s, text: scrub(s.text) }));
    });

    const network = lab.network;
    if (network.mode === 'existing') {
      // An existing VPC is looked up in its account and region: such a lab is bound to them by design.
      test("the stack is bound to the VPC's account and the lab's region, and every lookup is committed", () => {
        expect([stack.account, stack.region]).toEqual([network.account, lab.region]);
        expect(app.synth().manifest.missing ?? []).toEqual([]);
      });

      test("the only account id and region in the template are the lab's", () => {
        const texts = strings(json).map((s) => ({ ...s, text: s.text.replace(ASSET_HASH, '<hash>') }));
        const accounts = new Set(
          texts.flatMap((s) => s.text.match(new RegExp(ACCOUNT_ID.source, 'g')) ?? []),
        );
        const regions = new Set(texts.flatMap((s) => s.text.match(new RegExp(REGION.source, 'g')) ?? []));
        expect([...accounts]).toEqual([network.account]);
        expect([...regions]).toEqual([network.region]);
      });
    } else {
      test('the stack has no account or region of its own and made no context lookups', () => {
        expect(Token.isUnresolved(stack.account)).toBe(true);
        expect(Token.isUnresolved(stack.region)).toBe(true);
        expect(app.synth().manifest.missing ?? []).toEqual([]);
      });

      test('no 12-digit account id', () => {
        expect(all.filter((s) => ACCOUNT_ID.test(s.text))).toEqual([]);
      });

      test('no region name', () => {
        expect(all.filter((s) => REGION.test(s.text))).toEqual([]);
      });

      test('no literal ARN: partition, region and account come from pseudo parameters', () => {
        expect(all.filter((s) => LITERAL_ARN.test(s.text))).toEqual([]);
        // AND the ARNs that are there use the pseudo parameters (the checks above would pass on an empty template)
        const text = JSON.stringify(json);
        expect(text).toContain('"Ref":"AWS::Partition"');
        expect(text).toMatch(
          /\$\{AWS::Partition\}:iam::\$\{AWS::AccountId\}:role\/cdk-[a-z0-9]+-cfn-exec-role-\$\{AWS::AccountId\}-\$\{AWS::Region\}/,
        );
      });
    }

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
          (TagManager.isTaggable(c) ||
            TagManager.isTaggableV2(c) ||
            c.cfnResourceType in RAW_TAGGABLE_TYPES) &&
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
      for (const h of hosts)
        expectRootAndIpv4(h, shape.poolerHostRootVolumeGb, shape.poolerHostsHavePublicIpv4);
      // Runners: count × type, root volume size, public IPv4 or not.
      const runners = instances.filter((e) => !isPoolerHost(e)).map(([, r]) => r);
      expect(runners).toHaveLength(lab.runners.count);
      for (const r of runners) {
        expect(r.Properties?.InstanceType).toBe(lab.runners.instanceType);
        expectRootAndIpv4(r, shape.runnerRootVolumeGb, shape.runnersHavePublicIpv4);
      }
      // Network: NAT gateways, elastic IPs, interface endpoints, AZs.
      expect(ofType('AWS::EC2::NatGateway')).toHaveLength(shape.natGateways);
      expect(ofType('AWS::EC2::EIP')).toHaveLength(shape.natGateways);
      const interfaceEndpoints = ofType('AWS::EC2::VPCEndpoint').filter(
        (e) => e.Properties?.VpcEndpointType === 'Interface',
      );
      expect(
        interfaceEndpoints.map((e) => String(e.Properties?.ServiceName).split('.').pop()).sort(),
      ).toEqual([...shape.interfaceEndpoints].sort());
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

  describe('the detectors themselves', () => {
    test.each([
      ['arn:aws:iam::123456789012:role/x', true, true, false],
      ['arn:aws-cn:s3:::bucket', false, false, false],
      ['ec2.eu-west-1.amazonaws.com', false, false, true],
      ['arn:${AWS::Partition}:iam::${AWS::AccountId}:role/x', false, false, false],
      ['arn:', false, false, false],
      ['cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}', false, false, false],
      ['at(2026-11-21T18:00:00)', false, false, false],
    ])('%s → account %s', (text, account, _arnAws, region) => {
      expect(ACCOUNT_ID.test(text)).toBe(account);
      expect(REGION.test(text)).toBe(region);
    });

    test.each([
      ['arn:aws:iam::123456789012:role/x', true],
      ['arn:aws-cn:s3:::bucket', true],
      ['arn:${AWS::Partition}:iam::${AWS::AccountId}:role/x', false],
      ['arn:', false],
    ])('literal ARN %s → %s', (text, literal) => {
      expect(LITERAL_ARN.test(text)).toBe(literal);
    });
  });
}
