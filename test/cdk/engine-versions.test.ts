/**
 * The accepted engine versions are creatable, for both engines a lab can deploy:
 *  - Aurora PostgreSQL (lib/config/engine-versions.ts): a cluster per version, synthesized through
 *    the real database construct, passes cfn-lint with no warning (W3690 = deprecated version,
 *    E3691 = unknown version). Retired ones are refused by validation.
 *  - RDS for PostgreSQL (lib/config/rds-postgres.ts): an instance per version passes cfn-lint with
 *    no finding (W3691 = deprecated version, E3691 = unknown version, E3062 = class not offered for
 *    the version); a retired version (11.22) is flagged, proving the check is live.
 * Both engines' stacks are in one app and go through one cfn-lint run (its start-up is the cost).
 */
import { expect } from '@jest/globals';
import { App, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as rds from 'aws-cdk-lib/aws-rds';
import {
  ACCEPTED_ENGINE_VERSIONS,
  DEFAULT_ENGINE_VERSION,
  RDS_POSTGRES_VERSIONS,
  RETIRED_ENGINE_VERSIONS,
  validateLab,
} from '../../lib/config';
import type { LabDatabase } from '../../lib/constructs/database';
import {
  databasePerVersion,
  expectOnlyCanaryFlagged,
  lintCanaryPairs,
  newTestApp,
  testVpc,
  type CanaryLint,
  type CanaryPair,
} from './helpers';

let app: App;
let stack: Stack;
let canary: Stack;
let clusters: Map<string, LabDatabase>;
let pgStack: Stack;
let pgCanary: Stack;
let instances: Map<string, LabDatabase>;
/** The one cfn-lint run over all four templates, made by whichever engine's test asks first. */
let lint: CanaryLint | undefined;
function lintOnce(): CanaryLint {
  lint ??= lintCanaryPairs(app, [aurora(), postgres()]);
  return lint;
}
const aurora = (): CanaryPair => ({ accepted: stack, canary, code: 'W3690' });
const postgres = (): CanaryPair => ({ accepted: pgStack, canary: pgCanary, code: 'W3691' });

beforeAll(() => {
  app = newTestApp();
  stack = new Stack(app, 'engine-versions');
  clusters = databasePerVersion(stack, 'aurora', ACCEPTED_ENGINE_VERSIONS);
  // A canary on a retired version, to prove cfn-lint does flag deprecation where it applies.
  canary = new Stack(app, 'engine-canary');
  new rds.DatabaseCluster(canary, 'Retired', {
    engine: rds.DatabaseClusterEngine.auroraPostgres({ version: rds.AuroraPostgresEngineVersion.VER_15_6 }),
    writer: rds.ClusterInstance.provisioned('writer', { instanceType: new ec2.InstanceType('t4g.medium') }),
    vpc: testVpc(canary),
    vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
  });
  pgStack = new Stack(app, 'rds-postgres-versions');
  instances = databasePerVersion(pgStack, 'postgres', RDS_POSTGRES_VERSIONS);
  pgCanary = new Stack(app, 'rds-postgres-canary');
  new rds.DatabaseInstance(pgCanary, 'Retired', {
    engine: rds.DatabaseInstanceEngine.postgres({ version: rds.PostgresEngineVersion.VER_11_22 }),
    instanceType: new ec2.InstanceType('t4g.micro'),
    vpc: testVpc(pgCanary),
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
  // One cfn-lint run over the templates: the canary (15.6) is flagged with W3690, and nothing else is
  // reported at all (but the RDS for PostgreSQL canary's own finding: its test below)
  expectOnlyCanaryFlagged(lintOnce(), aurora());
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

describe('RDS for PostgreSQL', () => {
  test('each accepted version synthesizes an RDS instance (no cluster) on exactly that EngineVersion', () => {
    for (const [version, db] of instances) {
      expect(db.cluster).toBeUndefined();
      expect(db.engine).toBe('postgres');
      expect(pgStack.resolve(db.writer.engineVersion)).toBe(version);
      expect(db.writer.engine).toBe('postgres');
    }
  });

  test('cfn-lint raises nothing for any accepted version, and flags the retired canary', () => {
    // (the one cfn-lint run of this file: the 11.22 canary flagged with W3691, nothing on the accepted instances)
    expectOnlyCanaryFlagged(lintOnce(), postgres());
  });
});
