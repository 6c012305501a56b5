/**
 * `runners.spot`: the runners launch from a template with a persistent Spot request that stops
 * them on an interruption, IMDSv2 still required, one template per instance reference; on-demand
 * labs keep no market options. The spot lab passes cdk-nag (addLabChecks throws on a finding) and
 * cfn-lint prints nothing. Each spot runner has a keeper custom resource that cancels its Spot
 * request before CloudFormation deletes the runner (lib/constructs/spot-request-canceller.ts).
 */
import { expect } from '@jest/globals';
import * as path from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { addLabChecks } from '../../lib/lab-stack';
import { SPOT_REQUEST_RESOURCE_TYPE, SPOT_REQUEST_TAG } from '../../lib/constructs/spot-request-canceller';
import { cfnLint, labFrom, newTestApp, resourcesOfType, synthLab, type SynthesizedLab } from './helpers';

let spot: SynthesizedLab;
let onDemand: SynthesizedLab;
let templatePath: string;

beforeAll(() => {
  // The checks are registered before the first synth, as bin/proxylab.ts does: an unacknowledged
  // cdk-nag finding throws in synthLab. (Registered after it, they would never run: app.synth()
  // returns the assembly Template.fromStack already made, without validating again.)
  const app = newTestApp();
  addLabChecks(app);
  spot = synthLab(labFrom({ name: 'spotty', runners: { count: 2, placement: 'cluster', spot: true } }), app);
  const assembly = spot.app.synth();
  templatePath = path.join(assembly.directory, spot.stack.templateFile);
  onDemand = synthLab(labFrom({ name: 'ondemand', runners: { count: 2 } }));
});

test('spot runners: persistent request, stop on interruption, IMDSv2 required in the same template', () => {
  // THEN one launch template carries both, and every runner launches from it
  spot.template.resourceCountIs('AWS::EC2::LaunchTemplate', 1);
  spot.template.hasResourceProperties('AWS::EC2::LaunchTemplate', {
    LaunchTemplateData: {
      MetadataOptions: { HttpTokens: 'required' },
      InstanceMarketOptions: {
        MarketType: 'spot',
        SpotOptions: {
          SpotInstanceType: 'persistent',
          InstanceInterruptionBehavior: 'stop',
          MaxPrice: Match.absent(),
        },
      },
    },
  });
  const ltId = resourcesOfType(spot.template, 'AWS::EC2::LaunchTemplate')[0]?.[0];
  const instances = resourcesOfType(spot.template, 'AWS::EC2::Instance');
  expect(instances).toHaveLength(2);
  for (const [, p] of instances) {
    expect(p.LaunchTemplate).toEqual({
      LaunchTemplateId: { Ref: ltId },
      Version: { 'Fn::GetAtt': [ltId, 'LatestVersionNumber'] },
    });
    // the stop path needs the EBS root the runners already have
    expect(JSON.stringify(p.BlockDeviceMappings)).toMatch(/"Encrypted":true/);
  }
});

test('each spot runner has one keeper that Refs it, so CloudFormation deletes the keeper first', () => {
  // GIVEN
  const instances = resourcesOfType(spot.template, 'AWS::EC2::Instance');
  const keepers = resourcesOfType(spot.template, SPOT_REQUEST_RESOURCE_TYPE);
  const fns = resourcesOfType(spot.template, 'AWS::Lambda::Function').filter(([, p]) =>
    String(p.Description).includes('Spot request'),
  );
  // THEN one function, one keeper per runner, each naming its own runner by Ref
  expect(fns).toHaveLength(1);
  const fnId = fns[0]?.[0];
  expect(keepers).toHaveLength(instances.length);
  expect(keepers.map(([, p]) => p.InstanceId)).toEqual(
    expect.arrayContaining(instances.map(([id]) => ({ Ref: id }))),
  );
  for (const [keeperId, p, whole] of keepers) {
    const ref = p.InstanceId as { Ref: string };
    // the keeper's logical id follows its runner's (a new runner logical id takes a new keeper along)
    expect(keeperId).toBe(`${ref.Ref}SpotRequest`);
    expect(p.ServiceToken).toEqual({ 'Fn::GetAtt': [fnId, 'Arn'] });
    expect(whole.DeletionPolicy).toBe('Delete');
    // the runner does not depend on its keeper (that would invert the deletion order)
    const runner = instances.find(([id]) => id === ref.Ref)?.[2];
    expect(JSON.stringify(runner?.DependsOn ?? [])).not.toContain(keeperId);
  }
});

test('the keeper function may cancel only Spot requests tagged with this stack, and the template tags them', () => {
  // THEN the launch template tags each request with the stack id
  spot.template.hasResourceProperties('AWS::EC2::LaunchTemplate', {
    LaunchTemplateData: {
      TagSpecifications: [
        {
          ResourceType: 'spot-instances-request',
          Tags: [{ Key: SPOT_REQUEST_TAG, Value: { Ref: 'AWS::StackId' } }],
        },
      ],
    },
  });
  // and the cancel statement is limited to spot-instances-request ARNs with that tag
  spot.template.hasResourceProperties('AWS::IAM::Policy', {
    PolicyDocument: {
      Statement: Match.arrayWith([
        { Action: 'ec2:DescribeInstances', Effect: 'Allow', Resource: '*' },
        {
          Action: 'ec2:CancelSpotInstanceRequests',
          Effect: 'Allow',
          Resource: {
            'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp(':spot-instances-request/\\*$')])],
          },
          Condition: { StringEquals: { [`aws:ResourceTag/${SPOT_REQUEST_TAG}`]: { Ref: 'AWS::StackId' } } },
        },
      ]),
    },
  });
});

test('the keeper function leaves nothing behind: its own log group, deleted with the stack, after it', () => {
  const found = resourcesOfType(spot.template, 'AWS::Lambda::Function').find(([, p]) =>
    String(p.Description).includes('Spot request'),
  );
  if (!found) throw new Error('no keeper function');
  const [, fn, fnWhole] = found;
  const logGroupRef = (fn.LoggingConfig as { LogGroup?: { Ref?: string } } | undefined)?.LogGroup?.Ref;
  expect(logGroupRef).toBeDefined();
  const resources = spot.template.toJSON().Resources as Record<string, Record<string, unknown>>;
  const logGroup = resources[logGroupRef ?? ''] ?? {};
  expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
  expect(logGroup.DeletionPolicy).toBe('Delete');
  // the function waits for its policy, so on delete the policy outlives the function's last call
  expect(fnWhole.DependsOn).toEqual([expect.stringMatching(/SpotRequestsRoleDefaultPolicy/)]);
});

test('on-demand runners (the default) carry no market options', () => {
  for (const [, p] of resourcesOfType(onDemand.template, 'AWS::EC2::LaunchTemplate')) {
    expect(JSON.stringify(p)).not.toMatch(/InstanceMarketOptions/);
    expect(p.LaunchTemplateData).toEqual({ MetadataOptions: { HttpTokens: 'required' } });
  }
  // and no Spot request to keep
  onDemand.template.resourceCountIs(SPOT_REQUEST_RESOURCE_TYPE, 0);
  expect(JSON.stringify(onDemand.template.toJSON())).not.toContain('CancelSpotInstanceRequests');
});

test('the spot lab is cfn-lint clean', () => {
  const { output } = cfnLint([templatePath]);
  expect(output).toBe('');
});
