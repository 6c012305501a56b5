/**
 * Per-construct template assertions: the properties each construct promises (docs/stacks.md),
 * on the default lab and on a variant that turns every knob (serverless, readers, parameters,
 * two proxies, retained bucket, x86 runners in a placement group).
 */
import { expect } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import { createLabStack, LAB_OUTPUT_KEYS } from '../../lib/lab-stack';
import { baseUserDataCommands, isGraviton } from '../../lib/constructs/runner-fleet';
import { labFrom, loadLab, LABS_DIR, newTestApp, resourcesOfType, synthLab, SynthesizedLab } from './helpers';
import { scratchDir } from '../helpers/scratch';

const VARIANT = {
  name: 'variant',
  owner: 'team-db',
  aurora: {
    engineVersion: '16.9',
    serverless: { minCapacity: 0.5, maxCapacity: 8 },
    readers: 2,
    maxConnections: 900,
    logConnections: true,
    snapshotOnDestroy: true,
  },
  proxies: [
    {
      name: 'pool50',
      maxConnectionsPercent: 50,
      maxIdleConnectionsPercent: 10,
      borrowTimeoutSeconds: 30,
      requireTls: false,
      debugLogging: true,
      settings: { InitQuery: "SET timezone = 'UTC', statement_timeout = 5000", IdleClientTimeout: 600 },
    },
    { name: 'pool25', maxConnectionsPercent: 25 },
  ],
  runners: { instanceType: 'm7i.large', count: 2, placement: 'cluster' },
  results: { retainOnDestroy: true, expireAfterDays: 7 },
  tags: { 'cost-center': '42' },
};

let def: SynthesizedLab;
let variant: SynthesizedLab;

beforeAll(() => {
  def = synthLab(loadLab(path.join(LABS_DIR, 'default.json')));
  variant = synthLab(labFrom(VARIANT));
});

/** The one logical id of `type` starting with `prefix` (logical ids are the construct path + hash). */
function logicalIdStartingWith(template: Template, type: string, prefix: string): string {
  const ids = Object.keys(template.findResources(type)).filter((id) => id.startsWith(prefix));
  if (ids.length !== 1)
    throw new Error(`expected one ${type} starting with ${prefix}, found ${ids.join(', ') || 'none'}`);
  return ids[0] as string;
}

describe('stack', () => {
  test('is named after the lab and environment-agnostic', () => {
    // THEN
    expect(def.stack.stackName).toBe('proxylab-default');
    expect(def.stack.environment).toBe('aws://unknown-account/unknown-region');
    expect(JSON.stringify(def.template.toJSON())).not.toMatch(/\b\d{12}\b/);
  });

  test('every output the CLI reads exists, with stable keys', () => {
    // GIVEN
    const outputs = def.template.findOutputs('*');
    // THEN
    // PoolerAdminSecretArn only exists with a pooler (test/cdk/poolers.test.ts); parsing reads its absence as null.
    const withPoolerOnly: string[] = [LAB_OUTPUT_KEYS.poolerAdminSecretArn];
    for (const key of Object.values(LAB_OUTPUT_KEYS).filter((k) => !withPoolerOnly.includes(k)))
      expect(outputs).toHaveProperty(key);
    for (const key of withPoolerOnly) expect(outputs).not.toHaveProperty(key);
    def.template.hasOutput(LAB_OUTPUT_KEYS.proxyNames, { Value: '{"pool100":"default-pool100"}' });
    def.template.hasOutput(LAB_OUTPUT_KEYS.databasePort, { Value: '5432' });
    def.template.hasOutput(LAB_OUTPUT_KEYS.dbInstanceResourceIds, {
      Value: Match.objectLike({
        'Fn::GetAtt': [Match.stringLikeRegexp('^DatabaseClusterwriter'), 'DbiResourceId'],
      }),
    });
  });

  test('instance ids and PI ids list the writer first, then the readers', () => {
    // GIVEN
    const value = JSON.stringify(variant.template.findOutputs(LAB_OUTPUT_KEYS.dbInstanceResourceIds));
    // THEN
    const order = ['writer', 'reader1', 'reader2'].map((r) => value.indexOf(`DatabaseCluster${r}`));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  test('lab tags and lifecycle tags reach resources, but not the proxy target group', () => {
    variant.template.hasResourceProperties('AWS::RDS::DBCluster', {
      Tags: Match.arrayWith([
        { Key: 'cost-center', Value: '42' },
        { Key: 'proxylab:lab', Value: 'variant' },
        { Key: 'proxylab:owner', Value: 'team-db' },
      ]),
    });
    variant.template.allResourcesProperties('AWS::RDS::DBProxyTargetGroup', { Tags: Match.absent() });
  });
});

describe('network', () => {
  test('no NAT gateway; S3 gateway endpoint; subnets do not auto-assign public IPs', () => {
    def.template.resourceCountIs('AWS::EC2::NatGateway', 0);
    def.template.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      VpcEndpointType: 'Gateway',
      ServiceName: Match.objectLike({ 'Fn::Join': Match.arrayWith([Match.arrayWith(['.s3'])]) }),
    });
    def.template.allResourcesProperties('AWS::EC2::Subnet', { MapPublicIpOnLaunch: false });
  });

  test('the S3 gateway endpoint serves the runner and database route tables', () => {
    const [, endpoint] = resourcesOfType(def.template, 'AWS::EC2::VPCEndpoint')[0] ?? [];
    const tables = JSON.stringify(endpoint?.RouteTableIds);
    expect(tables).toMatch(/NetworkVpcrunnersSubnet1RouteTable/);
    expect(tables).toMatch(/NetworkVpcrunnersSubnet2RouteTable/);
    expect(tables).toMatch(/NetworkVpcdatabaseSubnet1RouteTable/);
  });

  test('flow logs of all traffic to a log group with retention, deleted with the stack', () => {
    def.template.hasResourceProperties('AWS::EC2::FlowLog', {
      TrafficType: 'ALL',
      LogDestinationType: 'cloud-watch-logs',
    });
    const flowLogGroup = logicalIdStartingWith(def.template, 'AWS::Logs::LogGroup', 'NetworkFlowLogs');
    expect(def.template.findResources('AWS::Logs::LogGroup')[flowLogGroup]).toMatchObject({
      Properties: { RetentionInDays: 7 },
      DeletionPolicy: 'Delete',
    });
  });
});

describe('database', () => {
  test('Aurora PostgreSQL at the lab version, encrypted, no deletion protection, deleted without snapshot', () => {
    def.template.hasResource('AWS::RDS::DBCluster', {
      Properties: Match.objectLike({
        Engine: 'aurora-postgresql',
        EngineVersion: '17.9',
        StorageEncrypted: true,
        DeletionProtection: false,
        MasterUsername: Match.anyValue(),
      }),
      DeletionPolicy: 'Delete',
    });
  });

  test('snapshotOnDestroy takes a final snapshot', () => {
    variant.template.hasResource('AWS::RDS::DBCluster', { DeletionPolicy: 'Snapshot' });
  });

  test('writer on the lab class with 7-day Performance Insights, private', () => {
    def.template.hasResourceProperties('AWS::RDS::DBInstance', {
      DBInstanceClass: 'db.t4g.medium',
      EnablePerformanceInsights: true,
      PerformanceInsightsRetentionPeriod: 7,
      PubliclyAccessible: false,
      DBParameterGroupName: Match.absent(),
    });
  });

  test('credentials are generated into Secrets Manager', () => {
    def.template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: Match.objectLike({ SecretStringTemplate: '{"username":"proxylab"}' }),
    });
  });

  test('serverless v2 with readers and a parameter group carrying the overrides', () => {
    variant.template.hasResourceProperties('AWS::RDS::DBCluster', {
      ServerlessV2ScalingConfiguration: { MinCapacity: 0.5, MaxCapacity: 8 },
    });
    variant.template.hasResourceProperties('AWS::RDS::DBParameterGroup', {
      Family: 'aurora-postgresql16',
      Parameters: { max_connections: '900', log_connections: '1', log_disconnections: '1' },
    });
    const instances = resourcesOfType(variant.template, 'AWS::RDS::DBInstance');
    expect(instances.map(([, p]) => p.DBInstanceClass)).toEqual([
      'db.serverless',
      'db.serverless',
      'db.serverless',
    ]);
    for (const [, p] of instances)
      expect(p.DBParameterGroupName).toEqual({ Ref: expect.stringMatching(/^DatabaseInstanceParameters/) });
  });
});

describe('proxies', () => {
  test('named <lab>-<proxy>, TLS required by default, in the isolated subnets', () => {
    def.template.hasResourceProperties('AWS::RDS::DBProxy', {
      DBProxyName: 'default-pool100',
      EngineFamily: 'POSTGRESQL',
      RequireTLS: true,
      DebugLogging: false,
      VpcSubnetIds: [
        { Ref: Match.stringLikeRegexp('^NetworkVpcdatabaseSubnet1') },
        { Ref: Match.stringLikeRegexp('^NetworkVpcdatabaseSubnet2') },
      ],
    });
  });

  test('pool settings come from the lab (idle defaults to half of max)', () => {
    def.template.hasResourceProperties('AWS::RDS::DBProxyTargetGroup', {
      ConnectionPoolConfigurationInfo: {
        MaxConnectionsPercent: 100,
        MaxIdleConnectionsPercent: 50,
        ConnectionBorrowTimeout: 120,
      },
    });
    variant.template.hasResourceProperties('AWS::RDS::DBProxyTargetGroup', {
      ConnectionPoolConfigurationInfo: {
        MaxConnectionsPercent: 50,
        MaxIdleConnectionsPercent: 10,
        ConnectionBorrowTimeout: 30,
      },
    });
    variant.template.hasResourceProperties('AWS::RDS::DBProxyTargetGroup', {
      ConnectionPoolConfigurationInfo: {
        MaxConnectionsPercent: 25,
        MaxIdleConnectionsPercent: 12,
        ConnectionBorrowTimeout: 120,
      },
    });
    variant.template.hasResourceProperties('AWS::RDS::DBProxy', {
      DBProxyName: 'variant-pool50',
      RequireTLS: false,
      DebugLogging: true,
    });
  });

  test("the lab's RDS Proxy settings reach the proxy and its target group; absent ones stay AWS's defaults", () => {
    // GIVEN pool50 with settings { InitQuery, IdleClientTimeout } and pool25 without
    // THEN pool50's target group runs the init query and the proxy closes idle clients after 600 s
    variant.template.hasResourceProperties('AWS::RDS::DBProxyTargetGroup', {
      ConnectionPoolConfigurationInfo: Match.objectLike({
        MaxConnectionsPercent: 50,
        InitQuery: "SET timezone = 'UTC', statement_timeout = 5000",
      }),
    });
    variant.template.hasResourceProperties('AWS::RDS::DBProxy', {
      DBProxyName: 'variant-pool50',
      IdleClientTimeout: 600,
    });
    // AND pool25 (no settings) and the default lab's proxy carry neither property
    variant.template.hasResourceProperties('AWS::RDS::DBProxy', {
      DBProxyName: 'variant-pool25',
      IdleClientTimeout: Match.absent(),
    });
    variant.template.hasResourceProperties('AWS::RDS::DBProxyTargetGroup', {
      ConnectionPoolConfigurationInfo: Match.objectLike({
        MaxConnectionsPercent: 25,
        InitQuery: Match.absent(),
      }),
    });
    def.template.allResourcesProperties('AWS::RDS::DBProxy', { IdleClientTimeout: Match.absent() });
    def.template.allResourcesProperties('AWS::RDS::DBProxyTargetGroup', {
      ConnectionPoolConfigurationInfo: Match.objectLike({ InitQuery: Match.absent() }),
    });
  });

  test('each target group depends on the writer instance (aws-cdk issue 31304) and every reader', () => {
    const writer = logicalIdStartingWith(variant.template, 'AWS::RDS::DBInstance', 'DatabaseClusterwriter');
    const reader2 = logicalIdStartingWith(variant.template, 'AWS::RDS::DBInstance', 'DatabaseClusterreader2');
    const groups = resourcesOfType(variant.template, 'AWS::RDS::DBProxyTargetGroup');
    expect(groups).toHaveLength(2);
    for (const [, , resource] of groups)
      expect(resource.DependsOn).toEqual(expect.arrayContaining([writer, reader2]));
  });

  test('proxy log groups are created by the stack with retention', () => {
    def.template.hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: '/aws/rds/proxy/default-pool100',
      RetentionInDays: 7,
    });
  });

  test('runners may reach every proxy and the cluster on 5432; nothing else may', () => {
    const runnerSg = logicalIdStartingWith(def.template, 'AWS::EC2::SecurityGroup', 'RunnersSecurityGroup');
    const ingress = resourcesOfType(def.template, 'AWS::EC2::SecurityGroupIngress');
    const fromRunners = ingress.filter(([, p]) => JSON.stringify(p.SourceSecurityGroupId).includes(runnerSg));
    expect(fromRunners.map(([, p]) => JSON.stringify(p.GroupId))).toEqual(
      expect.arrayContaining([
        expect.stringContaining('ProxiesSecurityGroup'),
        expect.stringContaining('DatabaseSecurityGroup'),
      ]),
    );
    // Every ingress rule is PostgreSQL from a security group (5432, or the cluster's port attribute
    // where CDK wires proxy → cluster), never from an address range.
    const clusterPort = { 'Fn::GetAtt': [expect.stringMatching(/^DatabaseCluster/), 'Endpoint.Port'] };
    for (const [, p] of ingress) {
      expect(p.IpProtocol).toBe('tcp');
      expect([5432, clusterPort]).toContainEqual(p.FromPort);
      expect(p.SourceSecurityGroupId).toBeDefined();
      expect(p.CidrIp).toBeUndefined();
    }
  });
});

test.each([
  ['default', () => def],
  ['variant', () => variant],
])('%s: no duplicate security group rules (CloudFormation rejects them at deploy)', (_name, get) => {
  // GIVEN the cluster port attribute resolves to 5432 at deploy time
  const norm = (v: unknown): string =>
    JSON.stringify(v).replace(/\{"Fn::GetAtt":\["DatabaseCluster[0-9A-F]+","Endpoint\.Port"\]\}/g, '5432');
  for (const type of ['AWS::EC2::SecurityGroupIngress', 'AWS::EC2::SecurityGroupEgress']) {
    const keys = resourcesOfType(get().template, type).map(([, p]) =>
      norm([
        p.GroupId,
        p.SourceSecurityGroupId ?? p.DestinationSecurityGroupId ?? p.CidrIp,
        p.IpProtocol,
        p.FromPort,
        p.ToPort,
      ]),
    );
    expect(keys.length).toBeGreaterThan(0);
    expect(new Set(keys).size).toBe(keys.length);
  }
});

describe('runner fleet', () => {
  test('AL2023 arm64 for Graviton, IMDSv2 required, encrypted gp3, public IP, SSM profile', () => {
    def.template.hasResourceProperties('AWS::EC2::Instance', {
      InstanceType: 'c7g.large',
      ImageId: { Ref: Match.stringLikeRegexp('al2023amikernel.*arm64') },
      BlockDeviceMappings: [
        Match.objectLike({ Ebs: Match.objectLike({ Encrypted: true, VolumeType: 'gp3' }) }),
      ],
      NetworkInterfaces: [Match.objectLike({ AssociatePublicIpAddress: true })],
    });
    def.template.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateName: Match.stringLikeRegexp('^proxylabdefault'),
      LaunchTemplateData: { MetadataOptions: { HttpTokens: 'required' } },
    });
    def.template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: Match.objectLike({
        Statement: [Match.objectLike({ Principal: { Service: 'ec2.amazonaws.com' } })],
      }),
      ManagedPolicyArns: [
        Match.objectLike({
          'Fn::Join': Match.arrayWith([Match.arrayWith([':iam::aws:policy/AmazonSSMManagedInstanceCore'])]),
        }),
      ],
    });
  });

  test('no inbound rules on the runner security group', () => {
    def.template.hasResourceProperties('AWS::EC2::SecurityGroup', {
      GroupDescription: Match.stringLikeRegexp('^pgbench runners'),
      SecurityGroupIngress: Match.absent(),
    });
  });

  test('x86 types get the x86_64 image; count and placement come from the lab', () => {
    const instances = resourcesOfType(variant.template, 'AWS::EC2::Instance');
    expect(instances).toHaveLength(2);
    for (const [, p] of instances) {
      expect(p.InstanceType).toBe('m7i.large');
      expect(JSON.stringify(p.ImageId)).toMatch(/x8664/);
      expect(p.PlacementGroupName).toEqual({
        'Fn::GetAtt': [expect.stringMatching(/^RunnersPlacement/), 'GroupName'],
      });
    }
    variant.template.hasResourceProperties('AWS::EC2::PlacementGroup', { Strategy: 'cluster' });
  });

  test.each([
    ['c7g.large', true],
    ['t4g.small', true],
    ['c6gn.16xlarge', true],
    ['m7gd.xlarge', true],
    ['c7i.large', false],
    ['m5.large', false],
    ['g5.xlarge', false],
  ])('isGraviton(%s) = %s', (type, expected) => {
    expect(isGraviton(type)).toBe(expected);
  });

  test("runner role: read the secret, write and read back runs/ only, invoke exactly the collector, resize only this lab's proxies", () => {
    const policies = JSON.stringify(
      resourcesOfType(def.template, 'AWS::IAM::Policy')
        .filter(([id]) => id.startsWith('RunnersRole'))
        .map(([, p]) => p),
    );
    expect(policies).toContain('secretsmanager:GetSecretValue');
    expect(policies).toMatch(
      /"Action":"s3:PutObject","Effect":"Allow","Resource":\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["ResultsBucket[0-9A-F]+","Arn"\]\},"\/runs\/\*"\]\]\}/,
    );
    expect(policies).toMatch(
      /"Action":"lambda:InvokeFunction","Effect":"Allow","Resource":\{"Fn::GetAtt":\["CollectorFunction[0-9A-F]+","Arn"\]\}/,
    );
    // Reading back is needed for resume and the fleet barrier (runs/*) and for the runner bundle
    // (exactly its asset object); nothing broader.
    expect(policies).toMatch(
      /"Action":"s3:GetObject","Effect":"Allow","Resource":\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["ResultsBucket[0-9A-F]+","Arn"\]\},"\/runs\/\*"\]\]\}/,
    );
    expect(policies).toMatch(
      /"Action":"s3:ListBucket","Condition":\{"StringLike":\{"s3:prefix":\["runs\/\*"\]\}\}/,
    );
    expect(policies).not.toMatch(/s3:\*|"s3:GetObject\*"|"s3:List\*"|"s3:GetBucket\*"|s3:DeleteObject\*/);
    // The one delete: a runner releases its own run lock (issue 20, defect 1) — the lock keys only,
    // never results.
    const deletes = [
      ...policies.matchAll(/"Action":"s3:DeleteObject","Effect":"Allow","Resource":(\{"Fn::Join".*?\]\]\})/g),
    ];
    expect(deletes.map((m) => m[1])).toEqual([
      expect.stringMatching(
        /^\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["ResultsBucket[0-9A-F]+","Arn"\]\},"\/runs\/\*\/locks\/runner-\*\.lock"\]\]\}$/,
      ),
    ]);
    expect(policies.match(/s3:DeleteObject/g)).toHaveLength(1);
    // Pool sweeps: ModifyDBProxyTargetGroup on this lab's proxies only, never on "*".
    expect(policies).toContain('rds:ModifyDBProxyTargetGroup');
    expect(policies).not.toMatch(
      /"Action":\[?[^\]]*rds:ModifyDBProxyTargetGroup[^\]]*\]?,"Effect":"Allow","Resource":"\*"/,
    );
  });

  test('user data installs pgbench and Node, checks pgbench, installs the runner bundle, and is shellcheck-clean', () => {
    // GIVEN the default lab's user data, asset tokens (bucket, key, region) replaced by placeholders
    const [, props] = resourcesOfType(def.template, 'AWS::EC2::Instance')[0] ?? [];
    const userData = (props?.UserData as { 'Fn::Base64': unknown })['Fn::Base64'];
    const script = renderUserData(userData);
    expect(script).toContain('\ntrap exitTrap EXIT\n' + baseUserDataCommands().join('\n') + '\n');
    expect(script).toContain('dnf install -y postgresql17 postgresql17-contrib nodejs22');
    expect(script).toContain('command -v pgbench');
    expect(script).toContain('/opt/proxylab/runner.js');
    // WHEN
    const file = path.join(scratchDir('userdata-'), 'user-data.sh');
    writeFileSync(file, script);
    const res = spawnSync('shellcheck', ['--shell=bash', file], { encoding: 'utf8' });
    // THEN
    expect(res.error).toBeUndefined();
    expect(`${res.stdout}${res.stderr}`).toBe('');
    expect(res.status).toBe(0);
  });
});

test('the runner-software seam downloads the asset, unpacks it and runs the command (shellcheck-clean)', () => {
  // GIVEN a lab stack with a zip asset as runner software
  const dir = scratchDir('runner-sw-');
  writeFileSync(path.join(dir, 'install.sh'), '#!/bin/sh\necho hi\n');
  const app = newTestApp();
  const stack = new Stack(app, 'seam');
  const asset = new s3assets.Asset(stack, 'Software', { path: dir });
  const lab = createLabStack(app, labFrom({ name: 'seam' }), {
    runnerSoftware: { asset, command: './install.sh' },
  });
  // WHEN the user data is rendered with placeholders for deploy-time values
  const [, props] = resourcesOfType(Template.fromStack(lab), 'AWS::EC2::Instance')[0] ?? [];
  const joined = (props?.UserData as { 'Fn::Base64': { 'Fn::Join': [string, unknown[]] } })['Fn::Base64'][
    'Fn::Join'
  ][1];
  const script = joined.map((part) => (typeof part === 'string' ? part : 'PLACEHOLDER')).join('');
  // THEN
  expect(script).toMatch(
    /\nmkdir -p \/opt\/proxylab\n[^]*\naws s3 cp 's3:\/\/PLACEHOLDER\/[0-9a-f]{64}\.zip' '\/opt\/proxylab\/runner\.zip'\n/,
  );
  expect(script).toMatch(
    /unzip -o "\/opt\/proxylab\/runner\.zip" -d \/opt\/proxylab\ncd \/opt\/proxylab\n\.\/install\.sh$/,
  );
  expect(script.indexOf('command -v pgbench')).toBeLessThan(script.indexOf('./install.sh'));
  const file = path.join(dir, 'user-data.sh');
  writeFileSync(file, script);
  const res = spawnSync('shellcheck', ['--shell=bash', file], { encoding: 'utf8' });
  expect(`${res.stdout}${res.stderr}`).toBe('');
});

describe('results bucket', () => {
  test('encrypted, TLS-only, public access blocked, expires objects, emptied and deleted on destroy', () => {
    def.template.hasResource('AWS::S3::Bucket', {
      Properties: Match.objectLike({
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        LifecycleConfiguration: {
          Rules: Match.arrayWith([Match.objectLike({ ExpirationInDays: 30, Status: 'Enabled' })]),
        },
      }),
      DeletionPolicy: 'Delete',
    });
    def.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      }),
    });
    def.template.hasResource('Custom::S3AutoDeleteObjects', {});
  });

  test('retainOnDestroy keeps the bucket and does not empty it', () => {
    variant.template.hasResource('AWS::S3::Bucket', {
      Properties: Match.objectLike({
        LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ ExpirationInDays: 7 })]) },
      }),
      DeletionPolicy: 'Retain',
    });
    expect(Object.keys(variant.template.findResources('Custom::S3AutoDeleteObjects'))).toEqual([]);
  });
});

describe('metrics collector', () => {
  test('NodejsFunction on the handler with RESULTS_BUCKET and an explicit log group', () => {
    def.template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      Runtime: Match.stringLikeRegexp('^nodejs'),
      Environment: { Variables: { RESULTS_BUCKET: { Ref: Match.stringLikeRegexp('^ResultsBucket') } } },
      LoggingConfig: { LogGroup: { Ref: Match.stringLikeRegexp('^CollectorLogs') } },
    });
    def.template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 14 });
  });

  test('least privilege: logs on its group, GetMetricData, PI on this lab’s instances, PutObject under runs/', () => {
    // GIVEN
    const [, policy] =
      resourcesOfType(def.template, 'AWS::IAM::Policy').find(([id]) => id.startsWith('CollectorRole')) ?? [];
    const statements = (policy?.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement;
    // THEN
    expect(statements.map((s) => s.Action)).toEqual([
      ['logs:CreateLogStream', 'logs:PutLogEvents'],
      'cloudwatch:GetMetricData',
      'pi:GetResourceMetrics',
      's3:PutObject',
    ]);
    expect(statements[1]?.Resource).toBe('*');
    const pi = JSON.stringify(statements[2]?.Resource);
    expect(pi).toMatch(/:pi:.*metrics\/rds\/.*"DatabaseClusterwriter[0-9A-F]+","DbiResourceId"/);
    expect(JSON.stringify(statements[3]?.Resource)).toContain('/runs/*');
    def.template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: Match.objectLike({
        Statement: [Match.objectLike({ Principal: { Service: 'lambda.amazonaws.com' } })],
      }),
      ManagedPolicyArns: Match.absent(),
    });
  });

  test('PI permission covers the writer and every reader', () => {
    const [, policy] =
      resourcesOfType(variant.template, 'AWS::IAM::Policy').find(([id]) => id.startsWith('CollectorRole')) ??
      [];
    const statements = (policy?.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement;
    const pi = statements.find((s) => s.Action === 'pi:GetResourceMetrics');
    expect(pi?.Resource).toHaveLength(3);
  });
});

/** User data as the instance will see it: a string, or Fn::Join with tokens as placeholders. */
function renderUserData(userData: unknown): string {
  if (typeof userData === 'string') return userData;
  const join = (userData as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (!join) throw new Error(`unexpected user data shape: ${JSON.stringify(userData).slice(0, 200)}`);
  return join[1].map((part) => (typeof part === 'string' ? part : 'PLACEHOLDER')).join(join[0]);
}
