/**
 * Self-hosted PgBouncer in the template: a lab with a dedicated pooler host AND a pooler on the
 * runners. Ingress only from the runners on exactly the pooler's ports, IMDSv2, encryption, the
 * pinned release with its checksum verified before the build, the creation signal, the outputs
 * the runner reads, and no secret anywhere in user data.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { findPgbouncerRelease } from '../../lib/config';
import { LAB_OUTPUT_KEYS, parseLabOutputs } from '../../lib/config/stack-outputs';
import { parsePoolerHostConfig } from '../../lib/pooler-host/bootstrap';
import { poolerDriver } from '../../lib/poolers/registry';
import type { LabStack } from '../../lib/lab-stack';
import { renderIntrinsic } from '../helpers/intrinsic';
import { labFrom, resourcesOfType, synthLab } from './helpers';

const BOTH = labFrom({
  name: 'poolers',
  proxies: [{ name: 'pool100' }],
  poolers: [
    {
      name: 'bouncer',
      kind: 'pgbouncer',
      placement: 'dedicated',
      instanceType: 'c7g.xlarge',
      processes: 4,
      poolModes: ['session'],
      version: '1.26.0',
      settings: { server_login_retry: 2, query_wait_timeout: 30, server_check_query: "SELECT 'ok'" },
    },
    { name: 'local', kind: 'pgbouncer', placement: 'on-runners', processes: 2 },
  ],
  runners: { count: 2 },
});
const { stack, template } = synthLab(BOTH);
const resolved = (v: unknown): unknown => stack.resolve(v);

function logicalIdOf(s: LabStack, construct: { node: { defaultChild?: unknown } }): string {
  return s.getLogicalId(construct.node.defaultChild as Parameters<LabStack['getLogicalId']>[0]);
}

const host = stack.poolerHosts[0];
if (!host) throw new Error('no pooler host');
const hostSgId = logicalIdOf(stack, host.securityGroup);
const runnersSgId = logicalIdOf(stack, stack.runners.securityGroup);
// By type, not by construct: userDataCausesReplacement puts a hash of the user data in the logical id.
const hostInstanceId =
  resourcesOfType(template, 'AWS::EC2::Instance').find(([, p]) => p.InstanceType === 'c7g.xlarge')?.[0] ?? '';

function userDataById(): Map<string, string> {
  return new Map(
    resourcesOfType(template, 'AWS::EC2::Instance').map(([id, props]) => [
      id,
      renderIntrinsic(props.UserData),
    ]),
  );
}

describe('dedicated pooler host', () => {
  test('inbound only from the runners, on 6432, 6438 (the agent’s control channel), 6439 and one admin port per process (6440–6443)', () => {
    // GIVEN every ingress rule of the host's group, wherever CDK put it
    const standalone = resourcesOfType(template, 'AWS::EC2::SecurityGroupIngress')
      .map(([, p]) => p)
      .filter((p) => JSON.stringify(p.GroupId) === JSON.stringify({ 'Fn::GetAtt': [hostSgId, 'GroupId'] }));
    const inline = (
      template.findResources('AWS::EC2::SecurityGroup')[hostSgId] as {
        Properties: Record<string, unknown>;
      }
    ).Properties.SecurityGroupIngress;
    // THEN exactly these four, all from the runners' group, none from an address range: the control
    // channel (a rolling restart on request) is reachable from the runners only
    expect(inline).toBeUndefined();
    expect(standalone.map((p) => [p.FromPort, p.ToPort]).sort()).toEqual([
      [6432, 6432],
      [6438, 6438],
      [6439, 6439],
      [6440, 6443],
    ]);
    for (const rule of standalone) {
      expect(rule.SourceSecurityGroupId).toEqual({ 'Fn::GetAtt': [runnersSgId, 'GroupId'] });
      expect(rule.CidrIp).toBeUndefined();
      expect(rule.IpProtocol).toBe('tcp');
    }
  });

  test('the database admits the host on 5432; the host sends only HTTPS anywhere and PostgreSQL to the database', () => {
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      FromPort: 5432,
      ToPort: 5432,
      SourceSecurityGroupId: { 'Fn::GetAtt': [hostSgId, 'GroupId'] },
      GroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^DatabaseSecurityGroup'), 'GroupId'] },
    });
    const sg = template.findResources('AWS::EC2::SecurityGroup')[hostSgId] as {
      Properties: { SecurityGroupEgress: Array<Record<string, unknown>> };
    };
    expect(sg.Properties.SecurityGroupEgress).toEqual([
      expect.objectContaining({ CidrIp: '0.0.0.0/0', FromPort: 443, ToPort: 443 }),
    ]);
    const egress = resourcesOfType(template, 'AWS::EC2::SecurityGroupEgress')
      .map(([, p]) => p)
      .filter((p) => JSON.stringify(p.GroupId) === JSON.stringify({ 'Fn::GetAtt': [hostSgId, 'GroupId'] }));
    expect(egress.map((p) => [p.FromPort, p.ToPort])).toEqual([[5432, 5432]]);
  });

  test('IMDSv2 only, encrypted gp3 root volume, no key pair, Graviton AMI for c7g', () => {
    const [, props] =
      resourcesOfType(template, 'AWS::EC2::Instance').find(([id]) => id === hostInstanceId) ?? [];
    expect(props).toBeDefined();
    expect(props?.InstanceType).toBe('c7g.xlarge');
    expect(props?.KeyName).toBeUndefined();
    expect(props?.BlockDeviceMappings).toEqual([
      {
        DeviceName: '/dev/xvda',
        Ebs: { DeleteOnTermination: true, Encrypted: true, VolumeSize: 16, VolumeType: 'gp3' },
      },
    ]);
    expect(JSON.stringify(props?.ImageId)).toContain('arm64');
    const launchTemplate = JSON.stringify(props?.LaunchTemplate);
    const [ltId] =
      resourcesOfType(template, 'AWS::EC2::LaunchTemplate').find(([id]) => launchTemplate.includes(id)) ?? [];
    expect(ltId).toBeDefined();
    template.hasResource('AWS::EC2::LaunchTemplate', {
      Properties: { LaunchTemplateData: { MetadataOptions: { HttpTokens: 'required' } } },
    });
    const lt = template.findResources('AWS::EC2::LaunchTemplate')[ltId ?? ''] as {
      Properties: { LaunchTemplateData: { MetadataOptions: { HttpTokens: string } } };
    };
    expect(lt.Properties.LaunchTemplateData.MetadataOptions.HttpTokens).toBe('required');
  });

  test('user data: the pinned release, checked with sha256sum -c against its published checksum before the build', () => {
    const script = userDataById().get(hostInstanceId) ?? '';
    const release = findPgbouncerRelease('1.26.0');
    expect(release).toBeDefined();
    const url = `'https://www.pgbouncer.org/downloads/files/1.26.0/pgbouncer-1.26.0.tar.gz'`;
    expect(script).toContain(url);
    const sums = `echo '${release?.sha256}  pgbouncer-1.26.0.tar.gz' > "\${pgbouncer_src}/SHA256SUMS"`;
    expect(script).toContain(sums);
    const check = '(cd "${pgbouncer_src}" && sha256sum -c --strict SHA256SUMS)';
    expect(script).toContain(check);
    // download → checksum → unpack → build → the binary says it is 1.26.0 → bootstrap
    const order = [
      url,
      check,
      'tar -xzf',
      './configure --prefix=/usr/local',
      "/usr/local/bin/pgbouncer --version | grep -F 'PgBouncer 1.26.0'",
      'useradd --system',
      'node /opt/proxylab/pooler.js bootstrap --config /etc/proxylab/pooler-bouncer.json',
    ].map((s) => script.indexOf(s));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // strict mode, so a failed check stops the script (and the exit trap signals failure)
    expect(script.indexOf('set -euo pipefail')).toBeLessThan(order[0] ?? -1);
    // the host config it bootstraps from: listen on every address, 4 processes, session only
    const json = /<<'PROXYLAB_POOLER_CONFIG'\n([\s\S]*?)\nPROXYLAB_POOLER_CONFIG\n/.exec(script)?.[1] ?? '{}';
    expect(JSON.parse(json)).toMatchObject({
      name: 'bouncer',
      product: 'pgbouncer',
      placement: 'dedicated',
      listenAddr: '0.0.0.0',
      processes: 4,
      poolModes: ['session'],
      version: '1.26.0',
      binaryPath: '/usr/local/bin/pgbouncer',
      serverPort: 5432,
      sharedBy: 1,
    });
    // and the bootstrap accepts what user data wrote (the host-config contract)
    expect(parsePoolerHostConfig(asDeployed(json), 'pooler-bouncer.json')).toMatchObject({ name: 'bouncer' });
  });

  test("the lab's settings travel in the host config as typed JSON values, and render into every ini", () => {
    // GIVEN the host's user data (the pooler sets three settings) and a runner's (its pooler sets none)
    const configOf = (script: string): Record<string, unknown> =>
      JSON.parse(
        /<<'PROXYLAB_POOLER_CONFIG'\n([\s\S]*?)\nPROXYLAB_POOLER_CONFIG\n/.exec(script)?.[1] ?? '{}',
      ) as Record<string, unknown>;
    const hostScript = userDataById().get(hostInstanceId) ?? '';
    const runnerScript = [...userDataById()].find(([id]) => id !== hostInstanceId)?.[1] ?? '';
    // THEN the host's config carries them as the lab typed them; the runner's has no settings key
    expect(configOf(hostScript).settings).toEqual({
      server_login_retry: 2,
      query_wait_timeout: 30,
      server_check_query: "SELECT 'ok'",
    });
    expect(configOf(runnerScript)).not.toHaveProperty('settings');
    // AND the bootstrap, reading that file, writes them into each process's ini
    const config = parsePoolerHostConfig(
      asDeployed(JSON.stringify(configOf(hostScript))),
      'pooler-bouncer.json',
    );
    const ini = poolerDriver('pgbouncer')
      .host.render({
        config,
        root: '/r',
        dataPort: 6432,
        poolSizePerProcess: 10,
        dbname: 'postgres',
        dbUser: { username: 'u', password: 'p' },
        adminUser: { username: 'a', password: 'q' },
        workerThreads: 1,
        random: (n) => Buffer.alloc(n),
      })
      .filter((f) => f.path.endsWith('.ini'));
    // 4 processes, each in both generations (a rolling restart's replacement has the same settings)
    expect(ini).toHaveLength(8);
    for (const f of ini) {
      expect(f.text).toMatch(/^server_login_retry = 2$/m);
      expect(f.text).toMatch(/^query_wait_timeout = 30$/m);
      expect(f.text).toMatch(/^server_check_query = SELECT 'ok'$/m);
    }
  });

  test('CreationPolicy: the deploy waits for the boot script, which signals its exit code', () => {
    template.hasResource('AWS::EC2::Instance', {
      Properties: { InstanceType: 'c7g.xlarge' },
      CreationPolicy: { ResourceSignal: { Count: 1, Timeout: 'PT20M' } },
    });
    const script = userDataById().get(hostInstanceId) ?? '';
    expect(script).toMatch(/^trap exitTrap EXIT$/m);
    expect(script).toContain(`/opt/aws/bin/cfn-signal --stack proxylab-poolers --resource ${hostInstanceId}`);
    expect(script).toContain('-e $exitCode');
  });

  test('IAM: SSM core, read the DB and admin secrets and the bundle object, nothing else', () => {
    const roleId = logicalIdOf(stack, host.role);
    const policies = resourcesOfType(template, 'AWS::IAM::Policy').filter(([, p]) =>
      JSON.stringify(p.Roles).includes(roleId),
    );
    const actions = policies.flatMap(([, p]) =>
      (p.PolicyDocument as { Statement: Array<{ Action: string | string[] }> }).Statement.flatMap((s) =>
        Array.isArray(s.Action) ? s.Action : [s.Action],
      ),
    );
    expect([...new Set(actions)].sort()).toEqual([
      's3:GetObject',
      'secretsmanager:DescribeSecret',
      'secretsmanager:GetSecretValue',
    ]);
  });
});

/**
 * The host config as the instance reads it: CloudFormation has replaced the tokens (rendered here
 * as `PLACEHOLDER_…`) with the writer's hostname, the region and the secrets' ARNs.
 */
function asDeployed(json: string): string {
  const deployed: Record<string, string> = {
    serverHost: 'lab-writer.abcdefghij.eu-west-1.rds.amazonaws.com',
    region: 'eu-west-1',
    dbSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-AbCdEf',
    adminSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:admin-AbCdEf',
  };
  const config = JSON.parse(json) as Record<string, unknown>;
  for (const [key, value] of Object.entries(config))
    if (typeof value === 'string' && value.includes('PLACEHOLDER_')) {
      const v = deployed[key];
      if (v === undefined)
        throw new Error(`host config ${key} is a token no test value stands in for: ${value}`);
      config[key] = v;
    }
  return JSON.stringify(config);
}

describe('pooler on the runners', () => {
  test('every runner builds the same release and bootstraps on 127.0.0.1 before it signals', () => {
    const runnerScripts = [...userDataById()].filter(([id]) => id !== hostInstanceId).map(([, s]) => s);
    expect(runnerScripts).toHaveLength(2);
    const release = findPgbouncerRelease('1.25.2');
    for (const script of runnerScripts) {
      expect(script).toContain(`echo '${release?.sha256}  pgbouncer-1.25.2.tar.gz'`);
      expect(script).toContain('sha256sum -c --strict SHA256SUMS');
      const json =
        /<<'PROXYLAB_POOLER_CONFIG'\n([\s\S]*?)\nPROXYLAB_POOLER_CONFIG\n/.exec(script)?.[1] ?? '{}';
      // each of the 2 runners opens half of the pooler's 90 % of max_connections (sharedBy 2)
      expect(JSON.parse(json)).toMatchObject({
        name: 'local',
        listenAddr: '127.0.0.1',
        processes: 2,
        poolPercent: 90,
        sharedBy: 2,
      });
      // and the bootstrap on the runner accepts what user data wrote (the host-config contract)
      expect(parsePoolerHostConfig(asDeployed(json), 'pooler-local.json')).toMatchObject({ sharedBy: 2 });
      // after the bundle (pooler.js) is installed
      expect(script.indexOf('node --check /opt/proxylab/pooler.js')).toBeLessThan(
        script.indexOf('node /opt/proxylab/pooler.js bootstrap'),
      );
    }
    // the runners still signal through their CreationPolicy
    template.resourcePropertiesCountIs('AWS::EC2::Instance', { InstanceType: 'c7g.large' }, 2);
  });

  test('the runners may read the admin secret', () => {
    const adminSecret = stack.poolerAdminSecret;
    expect(adminSecret).not.toBeNull();
    const secretRef = resolved(adminSecret?.secretArn);
    const runnerRoleId = logicalIdOf(stack, stack.runners.role);
    const statements = resourcesOfType(template, 'AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Roles).includes(runnerRoleId))
      .flatMap(([, p]) => (p.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement);
    expect(statements).toContainEqual(
      expect.objectContaining({
        Action: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
        Resource: secretRef,
      }),
    );
  });
});

describe('secrets and outputs', () => {
  test('one admin secret, generated: username pgbouncer_admin, letters and digits only', () => {
    template.resourceCountIs('AWS::SecretsManager::Secret', 2); // the DB master secret and this one
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: {
        SecretStringTemplate: '{"username":"pgbouncer_admin"}',
        GenerateStringKey: 'password',
        ExcludePunctuation: true,
      },
    });
  });

  test('no secret value in any user data: only ARNs, which the bootstrap resolves', () => {
    for (const [, script] of userDataById()) {
      expect(script).not.toMatch(/resolve:secretsmanager|SecretString|password/i);
    }
  });

  test('PoolerEndpoints and PoolerAdminSecretArn parse as the runner reads them', () => {
    // GIVEN the outputs with the deploy-time values filled in
    const outputs = template.findOutputs('*') as Record<string, { Value: unknown }>;
    const raw = Object.fromEntries(
      Object.entries(outputs).map(([k, o]) => [
        k,
        renderIntrinsic(o.Value).replace(`PLACEHOLDER_${hostInstanceId}_PrivateIp`, '10.0.1.23'),
      ]),
    );
    // WHEN parsed
    const parsed = parseLabOutputs(raw);
    // THEN one entry per pooler, host = the private IP or 127.0.0.1
    expect(parsed.poolerEndpoints).toEqual({
      bouncer: {
        name: 'bouncer',
        product: 'pgbouncer',
        placement: 'dedicated',
        host: '10.0.1.23',
        port: 6432,
        adminPorts: [6440, 6441, 6442, 6443],
        statsPort: 6439,
        controlPort: 6438,
        poolModes: ['session'],
        processes: 4,
        poolPercent: 90,
        maxPreparedStatements: 200,
        version: '1.26.0',
        tls: true,
      },
      local: {
        name: 'local',
        product: 'pgbouncer',
        placement: 'on-runners',
        host: '127.0.0.1',
        port: 6432,
        adminPorts: [6440, 6441],
        statsPort: 6439,
        controlPort: 6438,
        poolModes: ['transaction', 'session'],
        processes: 2,
        poolPercent: 90,
        maxPreparedStatements: 200,
        version: '1.25.2',
        tls: true,
      },
    });
    expect(parsed.poolerAdminSecretArn).toMatch(/^PLACEHOLDER_PoolerAdminSecret/);
  });

  test('a lab without poolers: no pooler resources, PoolerEndpoints {}, no admin secret output', () => {
    const plain = synthLab(labFrom({ name: 'plain' }));
    plain.template.resourceCountIs('AWS::SecretsManager::Secret', 1);
    plain.template.resourcePropertiesCountIs('AWS::EC2::Instance', { InstanceType: 'c7g.xlarge' }, 0);
    const outputs = plain.template.findOutputs('*') as Record<string, { Value: unknown }>;
    expect(outputs[LAB_OUTPUT_KEYS.poolerEndpoints]?.Value).toBe('{}');
    expect(outputs[LAB_OUTPUT_KEYS.poolerAdminSecretArn]).toBeUndefined();
    for (const [, props] of resourcesOfType(plain.template, 'AWS::EC2::Instance'))
      expect(renderIntrinsic(props.UserData)).not.toContain('pgbouncer');
  });
});
