/**
 * Every lab, synthesized once (one app per lab, beforeAll) for every check that needs its stack:
 * each file in labs/, the fixtures and the shapes other tests synthesize (EXTRA_SHAPES).
 *  - Every lab: valid, synthesizes, cdk-nag AwsSolutions finds nothing unacknowledged, and cfn-lint
 *    prints nothing for its template (below).
 *  - Each shipped lab as users deploy it: portable across accounts and regions, expires by itself,
 *    tagged, and what the cost estimate counts (lab-checks/shipped-labs.ts).
 *  - The IAM policies of each shipped lab, and the fixture the call checks judge by
 *    (lab-checks/iam-policies.ts).
 *  - The operator's policy names each shipped lab's resources, and the longest lab name's, as
 *    CloudFormation deploys them (lab-checks/operator-names.ts).
 * One file, because each of these needs the same synthesized stacks: as three files they made three
 * synths of every shipped lab and loaded aws-cdk-lib three times (bench/README.md "npm test time").
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Stack, Validations } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { addLabChecks } from '../../lib/lab-stack';
import type { LabConfig } from '../../lib/config';
import {
  cfnLintInBackground,
  labFiles,
  labFrom,
  loadLab,
  newTestApp,
  synthLab,
  type SynthesizedLab,
} from './helpers';
import { iamPolicyChecks } from './lab-checks/iam-policies';
import { LONGEST_NAME_SHAPE, operatorNameChecks } from './lab-checks/operator-names';
import { shippedLabChecks } from './lab-checks/shipped-labs';

interface Synthesized extends SynthesizedLab {
  readonly file: string;
  readonly templatePath: string;
  readonly stackName: string;
}

const FILES = labFiles();
const synthesized: Synthesized[] = [];

/**
 * Shapes the shipped labs do not cover, checked the same way (nag + cfn-lint). Every lab another
 * test synthesizes is here or in labs/ (test/helpers/cdk-app.ts: tests synthesize without
 * aws-cdk-lib's built-in validator, as `cdk synth` does; cfn-lint here is the template check).
 */
const EXTRA_SHAPES: Record<string, unknown> = {
  'no-proxy': { name: 'no-proxy', proxies: [] },
  // test/unit/cloud-stack.test.ts (the runner role's grants; its no-proxy variant is below's)
  'two-proxies-one-graviton-runner': {
    name: 'grants',
    aurora: { engineVersion: '16.9', instanceClass: 'db.t4g.medium' },
    proxies: [
      { name: 'pool25', maxConnectionsPercent: 25 },
      { name: 'pool100', maxConnectionsPercent: 100 },
    ],
    runners: { instanceType: 'c7g.large', count: 1 },
  },
  'no-proxy-one-graviton-runner': {
    name: 'grants',
    aurora: { engineVersion: '16.9', instanceClass: 'db.t4g.medium' },
    proxies: [],
    runners: { instanceType: 'c7g.large', count: 1 },
  },
  // test/integration/cloud-runner-userdata.test.ts
  'two-x86-runners-no-proxy': {
    name: 'ud',
    aurora: { engineVersion: '16.9', instanceClass: 'db.t4g.medium' },
    proxies: [],
    runners: { instanceType: 'm7i.large', count: 2 },
  },
  'pooler-host-x86-and-pinned-runner-pooler-no-proxy': {
    name: 'ud-poolers',
    poolers: [
      { name: 'host', kind: 'pgbouncer', placement: 'dedicated', instanceType: 'm7i.xlarge', processes: 4 },
      { name: 'near', kind: 'pgbouncer', placement: 'on-runners', version: '1.24.1' },
    ],
    runners: { count: 2 },
  },
  // with the lab's settings on the proxy (InitQuery, IdleClientTimeout: test/cdk/constructs.test.ts)
  // and on the dedicated pooler (its host config: test/cdk/poolers.test.ts)
  'both-pooler-placements': {
    name: 'poolers',
    proxies: [{ name: 'pool100', settings: { InitQuery: "SET timezone = 'UTC'", IdleClientTimeout: 600 } }],
    poolers: [
      {
        name: 'bouncer',
        kind: 'pgbouncer',
        placement: 'dedicated',
        instanceType: 'm7i.xlarge',
        poolModes: ['transaction', 'session'],
        processes: 4,
        tls: false,
        settings: { server_login_retry: 2, query_wait_timeout: 30 },
      },
      { name: 'near', kind: 'pgbouncer', placement: 'on-runners', version: '1.26.0', processes: 2 },
    ],
    runners: { instanceType: 'c7g.xlarge', count: 2 },
  },
  // labs/private.json's VPC with the network team's endpoints, and a spot runner with a pooler on it.
  'private-shared-endpoints-spot-on-runners': {
    name: 'shared-endpoints',
    region: 'us-east-1',
    proxies: [{ name: 'pool100' }],
    poolers: [{ name: 'near', kind: 'pgbouncer', placement: 'on-runners' }],
    runners: { instanceType: 'c7g.large', count: 2, spot: true },
    network: {
      vpcId: 'vpc-0000000000000a001',
      subnetIds: ['subnet-0000000000000a011', 'subnet-0000000000000a012', 'subnet-0000000000000a013'],
      account: '111122223333',
      egress: 'vpc-endpoints',
      endpoints: 'existing',
      endpointCidrs: ['10.20.0.0/24'],
    },
  },
  'serverless-readers-retained': {
    name: 'serverless',
    aurora: {
      serverless: { minCapacity: 0, maxCapacity: 4 },
      readers: 1,
      logConnections: true,
      snapshotOnDestroy: true,
    },
    proxies: [
      {
        name: 'a',
        maxConnectionsPercent: 30,
        borrowTimeoutSeconds: 0,
        requireTls: false,
        debugLogging: true,
      },
    ],
    runners: { instanceType: 'm7i.large', count: 3, placement: 'spread' },
    results: { retainOnDestroy: true },
  },
  // lab-checks/operator-names.ts: the longest stack name, the longest bucket name
  'longest-lab-name': LONGEST_NAME_SHAPE,
};

/** Fixture labs (test/fixtures/labs): RDS for PostgreSQL Multi-AZ with every option set. */
const FIXTURES = [path.join(__dirname, '..', 'fixtures', 'labs', 'pocket-multi-az.json')];

beforeAll(() => {
  const sources: Array<[string, LabConfig]> = [
    ...FILES.map((f): [string, LabConfig] => [f, loadLab(f)]),
    ...FIXTURES.map((f): [string, LabConfig] => [f, loadLab(f)]),
    ...Object.entries(EXTRA_SHAPES).map(([k, raw]): [string, LabConfig] => [`(shape ${k})`, labFrom(raw)]),
  ];
  for (const [file, lab] of sources) {
    // cdk-nag is not registered here: the tests below run it on each app with validateScope, which
    // is what the plugin addLabChecks registers runs at synth (that wiring: its own test below).
    const made = synthLab(lab);
    const assembly = made.app.synth(); // the assembly Template.fromStack made in synthLab
    synthesized.push({
      ...made,
      file,
      templatePath: path.join(assembly.directory, made.stack.templateFile),
      stackName: made.stack.stackName,
    });
  }
}, 300_000);

/** The synth of labs/ file `labPath` (or `(shape NAME)`) made above (for the checks in lab-checks/). */
function synthesizedLab(labPath: string): SynthesizedLab {
  const found = synthesized.find((s) => s.file === labPath);
  if (!found) throw new Error(`${labPath} was not synthesized: not a file in labs/ nor a shape`);
  return found;
}

test('labs/ holds the default lab, one lab per published experiment E1–E6 and one per network mode', () => {
  const names = FILES.map((f) => path.basename(f, '.json'));
  expect(names).toContain('default');
  for (const e of ['e1', 'e2', 'e3', 'e4', 'e5', 'e6'])
    expect(names.some((n) => n.startsWith(`${e}-`))).toBe(true);
  // network: the lab's own VPC (the rest), an existing VPC without internet, one with it
  const modes = FILES.map((f) => {
    const n = loadLab(f).network;
    return n.mode === 'create' ? 'create' : `existing/${n.egress}`;
  });
  expect(new Set(modes)).toEqual(new Set(['create', 'existing/vpc-endpoints', 'existing/internet']));
  expect(names).toContain('private');
});

test.each(FILES.map((f) => [path.basename(f)]))('%s says which published setup it stands in for', (base) => {
  const lab = loadLab(path.join(path.dirname(FILES[0] ?? ''), base));
  if (base === 'default.json') expect(lab.description).toMatch(/db\.t4g\.medium/);
  else if (base === 'pocket.json') expect(lab.description).toMatch(/Can show:.*Cannot show:/s);
  // a team's own question rather than a published setup: it says what it asks and how to preview it
  else if (base === 'own-workload.json')
    expect(lab.description).toMatch(
      /own question.*proxylab plan --lab labs\/own-workload\.json --suite lab/s,
    );
  // the disruption labs (DISRUPT, issue 22) stand in for no one write-up: they say what they can show
  else if (base.startsWith('failover-'))
    expect(lab.description).toMatch(/^The disruption lab .*Can show:.*Cannot show:/s);
  else if (lab.network.mode === 'existing')
    // an existing-VPC lab says where the regulated-account guide is, and that its ids are placeholders
    expect(lab.description).toMatch(/Regulated accounts.*fake placeholders.*cdk\.context\.json/s);
  else expect(lab.description).toMatch(/^Stands in for E[1-6]\b.*Differs:/s);
});

test('the lab name matches the file name (stack proxylab-<file>)', () => {
  for (const s of synthesized.filter((x) => x.file.endsWith('.json'))) {
    expect(s.stackName).toBe(`proxylab-${path.basename(s.file, '.json')}`);
  }
});

test('cdk-nag AwsSolutions: zero unacknowledged findings in every lab', () => {
  for (const s of synthesized) {
    // WHEN
    const report = new AwsSolutionsChecks().validateScope(s.app);
    // THEN
    const findings = report.violations.flatMap((v) =>
      v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`),
    );
    expect({ lab: s.file, findings }).toEqual({ lab: s.file, findings: [] });
  }
});

test('cdk-nag is live: an unacknowledged finding is reported', () => {
  // GIVEN a stack with a bucket that breaks AwsSolutions-S1/S10 and no acknowledgement
  const app = newTestApp();
  const stack = new Stack(app, 'nag-canary');
  new s3.Bucket(stack, 'Plain');
  // WHEN
  const report = new AwsSolutionsChecks().validateScope(app);
  // THEN
  expect(report.violations.map((v) => v.ruleName)).toEqual(
    expect.arrayContaining(['AwsSolutions-S1', 'AwsSolutions-S10']),
  );
});

test('with the checks registered as bin/proxylab.ts does, an unacknowledged finding fails synthesis', () => {
  // GIVEN
  const app = newTestApp();
  new s3.Bucket(new Stack(app, 'nag-canary'), 'Plain');
  addLabChecks(app);
  // WHEN / THEN
  expect(() => app.synth()).toThrow(/AwsSolutions-S10/);
});

test('every acknowledgement carries a concrete reason', () => {
  for (const s of synthesized) {
    const reasons: string[] = [];
    for (const c of s.app.node.findAll()) {
      for (const m of c.node.metadata) {
        if (m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY) {
          reasons.push(...Object.values(m.data as Record<string, string>).map(String));
        }
      }
    }
    expect(reasons.length).toBeGreaterThan(0);
    for (const r of reasons) expect(r.length).toBeGreaterThan(40);
  }
});

// Concurrent: it starts right after beforeAll, and the file's other tests run while cfn-lint does.
test.concurrent(
  'cfn-lint prints nothing for any synthesized lab',
  async () => {
    // WHEN (one cfn-lint process for all templates: its start-up would be paid once per process)
    const { output, status } = await cfnLintInBackground(synthesized.map((s) => s.templatePath));
    // THEN
    expect(output).toBe('');
    expect(status).toBe(0);
  },
  300_000,
);

test('the synthesized templates are real lab stacks (sanity for the lint above)', () => {
  for (const s of synthesized) {
    const template = JSON.parse(readFileSync(s.templatePath, 'utf8')) as {
      Resources: Record<string, { Type: string }>;
    };
    const types = new Set(Object.values(template.Resources).map((r) => r.Type));
    const rdsPostgres = Object.values(template.Resources).some(
      (r) =>
        r.Type === 'AWS::RDS::DBInstance' &&
        (r as { Properties?: { Engine?: string } }).Properties?.Engine === 'postgres',
    );
    // An RDS for PostgreSQL lab has a DB instance and no cluster; an Aurora lab has the cluster.
    if (rdsPostgres) expect(types).not.toContain('AWS::RDS::DBCluster');
    const expected = [
      rdsPostgres ? 'AWS::RDS::DBInstance' : 'AWS::RDS::DBCluster',
      'AWS::EC2::Instance',
      'AWS::S3::Bucket',
      'AWS::Lambda::Function',
    ];
    if (!s.file.includes('no-proxy')) expected.push('AWS::RDS::DBProxy');
    for (const t of expected) {
      expect(types).toContain(t);
    }
  }
});

shippedLabChecks(
  FILES.map((f) => path.basename(f)),
  synthesizedLab,
);

iamPolicyChecks(synthesizedLab);

operatorNameChecks(
  [
    ...FILES.map((f): [string, LabConfig] => [f, loadLab(f)]),
    ['(shape longest-lab-name)', labFrom(LONGEST_NAME_SHAPE)],
  ],
  synthesizedLab,
);
