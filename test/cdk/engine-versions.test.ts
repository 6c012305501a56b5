/**
 * The accepted engine versions (lib/config/engine-versions.ts) are creatable: a cluster per
 * version, synthesized through the real database construct, passes cfn-lint with no warning
 * (W3690 = deprecated version, E3691 = unknown version). Retired ones are refused by validation.
 */
import { expect } from '@jest/globals';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as rds from 'aws-cdk-lib/aws-rds';
import {
  ACCEPTED_ENGINE_VERSIONS,
  DEFAULT_ENGINE_VERSION,
  RETIRED_ENGINE_VERSIONS,
  validateLab,
} from '../../lib/config';
import { LabDatabase } from '../../lib/constructs/database';
import { cfnLint, labFrom, newTestApp } from './helpers';

let app: App;
let stack: Stack;
let canary: Stack;
const clusters = new Map<string, LabDatabase>();

beforeAll(() => {
  app = newTestApp();
  stack = new Stack(app, 'engine-versions');
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 0, restrictDefaultSecurityGroup: false });
  for (const { version } of ACCEPTED_ENGINE_VERSIONS) {
    const lab = labFrom({ name: 'v', aurora: { engineVersion: version } });
    clusters.set(
      version,
      new LabDatabase(stack, `V${version.replace(/\W/g, '_')}`, { vpc, subnets: {}, database: lab.database }),
    );
  }
  // A canary on a retired version, to prove cfn-lint does flag deprecation where it applies.
  canary = new Stack(app, 'engine-canary');
  new rds.DatabaseCluster(canary, 'Retired', {
    engine: rds.DatabaseClusterEngine.auroraPostgres({ version: rds.AuroraPostgresEngineVersion.VER_15_6 }),
    writer: rds.ClusterInstance.provisioned('writer', { instanceType: new ec2.InstanceType('t4g.medium') }),
    vpc: new ec2.Vpc(canary, 'Vpc', { maxAzs: 2, natGateways: 0, restrictDefaultSecurityGroup: false }),
    vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
  });
});

test('the list is non-empty, unique, contains the default and maps to real aws-cdk-lib constants', () => {
  const versions = ACCEPTED_ENGINE_VERSIONS.map((e) => e.version);
  expect(new Set(versions).size).toBe(versions.length);
  expect(versions).toContain(DEFAULT_ENGINE_VERSION);
  for (const e of ACCEPTED_ENGINE_VERSIONS) {
    expect(rds.AuroraPostgresEngineVersion[e.cdkKey].auroraPostgresFullVersion).toBe(e.version);
  }
});

test('no version is both accepted and retired', () => {
  for (const e of ACCEPTED_ENGINE_VERSIONS) expect(RETIRED_ENGINE_VERSIONS).not.toContain(e.version);
});

test('each accepted version synthesizes a cluster on exactly that EngineVersion', () => {
  for (const [version, db] of clusters) {
    const cfn = db.cluster?.node.defaultChild as rds.CfnDBCluster;
    expect(stack.resolve(cfn.engineVersion)).toBe(version);
  }
});

test('cfn-lint raises nothing (no W3690 deprecation, no E3691 unknown version) for any accepted version', () => {
  // WHEN (one cfn-lint run over both templates)
  const assembly = app.synth();
  const accepted = path.join(assembly.directory, stack.templateFile);
  const retired = path.join(assembly.directory, canary.templateFile);
  const { output } = cfnLint([accepted, retired]);
  // THEN the canary (15.6) is flagged, and nothing else is reported at all
  const findings = output.split(/\n\s*\n/).filter((block) => block.trim() !== '');
  expect(findings.length).toBeGreaterThan(0);
  for (const f of findings) {
    expect(f).toMatch(/^W3690 /);
    expect(f).toContain(retired);
  }
  expect(output).not.toContain(accepted);
});

test.each(['15.6', '13.12', '16.2'])(
  'retired %s is refused as no longer creatable, listing the allowed versions',
  (version) => {
    const r = validateLab({ name: 'x', aurora: { engineVersion: version } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([
      expect.objectContaining({
        path: 'aurora.engineVersion',
        value: version,
        message: expect.stringMatching(
          new RegExp(
            `^Aurora PostgreSQL ${version.replace('.', '\\.')} is no longer creatable.*15\\.8.*17\\.9`,
          ),
        ),
      }),
    ]);
  },
);
