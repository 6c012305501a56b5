/**
 * `runners.spot`: the runners launch from a template with a persistent Spot request that stops
 * them on an interruption, IMDSv2 still required, one template per instance reference; on-demand
 * labs keep no market options. The spot lab passes cdk-nag (addLabChecks throws on a finding) and
 * cfn-lint prints nothing.
 */
import { expect } from '@jest/globals';
import * as path from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { addLabChecks } from '../../lib/lab-stack';
import { cfnLint, labFrom, resourcesOfType, synthLab, type SynthesizedLab } from './helpers';

let spot: SynthesizedLab;
let onDemand: SynthesizedLab;
let templatePath: string;

beforeAll(() => {
  spot = synthLab(labFrom({ name: 'spotty', runners: { count: 2, placement: 'cluster', spot: true } }));
  addLabChecks(spot.app); // as bin/proxylab.ts does: an unacknowledged cdk-nag finding throws here
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

test('on-demand runners (the default) carry no market options', () => {
  for (const [, p] of resourcesOfType(onDemand.template, 'AWS::EC2::LaunchTemplate')) {
    expect(JSON.stringify(p)).not.toMatch(/InstanceMarketOptions/);
    expect(p.LaunchTemplateData).toEqual({ MetadataOptions: { HttpTokens: 'required' } });
  }
});

test('the spot lab is cfn-lint clean', () => {
  const { output } = cfnLint([templatePath]);
  expect(output).toBe('');
});
