/**
 * The accepted RDS for PostgreSQL versions (lib/config/rds-postgres.ts) are creatable: an instance
 * per version, synthesized through the real database construct, passes cfn-lint with no finding
 * (W3691 = deprecated version, E3691 = unknown version, E3062 = class not offered for the version);
 * a retired version (11.22) is flagged, proving the check is live.
 */
import { expect } from '@jest/globals';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as rds from 'aws-cdk-lib/aws-rds';
import { RDS_POSTGRES_VERSIONS } from '../../lib/config';
import { LabDatabase } from '../../lib/constructs/database';
import { cfnLint, labFrom, newTestApp } from './helpers';

let app: App;
let stack: Stack;
let canary: Stack;
const instances = new Map<string, LabDatabase>();

beforeAll(() => {
  app = newTestApp();
  stack = new Stack(app, 'rds-postgres-versions');
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 0, restrictDefaultSecurityGroup: false });
  for (const { version } of RDS_POSTGRES_VERSIONS) {
    const lab = labFrom({ name: 'v', postgres: { engineVersion: version } });
    instances.set(
      version,
      new LabDatabase(stack, `V${version.replace(/\W/g, '_')}`, { vpc, subnets: {}, database: lab.database }),
    );
  }
  canary = new Stack(app, 'rds-postgres-canary');
  new rds.DatabaseInstance(canary, 'Retired', {
    engine: rds.DatabaseInstanceEngine.postgres({ version: rds.PostgresEngineVersion.VER_11_22 }),
    instanceType: new ec2.InstanceType('t4g.micro'),
    vpc: new ec2.Vpc(canary, 'Vpc', { maxAzs: 2, natGateways: 0, restrictDefaultSecurityGroup: false }),
    vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
  });
});

test('each accepted version synthesizes an RDS instance (no cluster) on exactly that EngineVersion', () => {
  for (const [version, db] of instances) {
    expect(db.cluster).toBeUndefined();
    expect(db.engine).toBe('postgres');
    expect(stack.resolve(db.writer.engineVersion)).toBe(version);
    expect(db.writer.engine).toBe('postgres');
  }
});

test('cfn-lint raises nothing for any accepted version, and flags the retired canary', () => {
  const assembly = app.synth();
  const accepted = path.join(assembly.directory, stack.templateFile);
  const retired = path.join(assembly.directory, canary.templateFile);
  const { output } = cfnLint([accepted, retired]);
  const findings = output.split(/\n\s*\n/).filter((block) => block.trim() !== '');
  expect(findings.length).toBeGreaterThan(0);
  for (const f of findings) {
    expect(f).toMatch(/^W3691 /);
    expect(f).toContain(retired);
  }
  expect(output).not.toContain(accepted);
});
