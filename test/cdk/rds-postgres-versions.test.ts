/**
 * The accepted RDS for PostgreSQL versions (lib/config/rds-postgres.ts) are creatable: an instance
 * per version, synthesized through the real database construct, passes cfn-lint with no finding
 * (W3691 = deprecated version, E3691 = unknown version, E3062 = class not offered for the version);
 * a retired version (11.22) is flagged, proving the check is live.
 */
import { expect } from '@jest/globals';
import { App, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as rds from 'aws-cdk-lib/aws-rds';
import { RDS_POSTGRES_VERSIONS } from '../../lib/config';
import type { LabDatabase } from '../../lib/constructs/database';
import { databasePerVersion, expectOnlyCanaryFlagged, newTestApp, testVpc } from './helpers';

let app: App;
let stack: Stack;
let canary: Stack;
let instances: Map<string, LabDatabase>;

beforeAll(() => {
  app = newTestApp();
  stack = new Stack(app, 'rds-postgres-versions');
  instances = databasePerVersion(stack, 'postgres', RDS_POSTGRES_VERSIONS);
  canary = new Stack(app, 'rds-postgres-canary');
  new rds.DatabaseInstance(canary, 'Retired', {
    engine: rds.DatabaseInstanceEngine.postgres({ version: rds.PostgresEngineVersion.VER_11_22 }),
    instanceType: new ec2.InstanceType('t4g.micro'),
    vpc: testVpc(canary),
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
  expectOnlyCanaryFlagged(app, stack, canary, 'W3691');
});
