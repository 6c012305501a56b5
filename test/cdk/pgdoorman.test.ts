/**
 * PgDoorman in the template: a lab with a dedicated PgDoorman host (8 worker threads) AND a PgDoorman
 * on the runners. What the construct asks of its driver: ingress only from the runners on its ports
 * (one process: one admin relay port), the pinned tag built only after its commit and the toolchain
 * installer's SHA-256 are checked, a boot timeout long enough for a Rust release build, the host
 * config the bootstrap accepts, and the outputs the runner reads.
 */
import { parseLabOutputs } from '../../lib/config/stack-outputs';
import { parsePoolerHostConfig } from '../../lib/pooler-host/bootstrap';
import { PGDOORMAN_RELEASES, RUSTUP_INIT } from '../../lib/poolers/pgdoorman/releases';
import type { LabStack } from '../../lib/lab-stack';
import { renderIntrinsic } from '../helpers/intrinsic';
import { labFrom, resourcesOfType, synthLab } from './helpers';

const LAB = labFrom({
  name: 'doormen',
  proxies: [],
  poolers: [
    {
      name: 'doorman',
      kind: 'pgdoorman',
      placement: 'dedicated',
      instanceType: 'c7g.2xlarge',
      workerThreads: 8,
      poolModes: ['transaction'],
      poolPercent: 40,
    },
    { name: 'near', kind: 'pgdoorman', placement: 'on-runners', poolPercent: 40 },
  ],
  runners: { count: 2 },
});
const { stack, template } = synthLab(LAB);

function logicalIdOf(s: LabStack, construct: { node: { defaultChild?: unknown } }): string {
  return s.getLogicalId(construct.node.defaultChild as Parameters<LabStack['getLogicalId']>[0]);
}

const host = stack.poolerHosts[0];
if (!host) throw new Error('no pooler host');
const hostSgId = logicalIdOf(stack, host.securityGroup);
const runnersSgId = logicalIdOf(stack, stack.runners.securityGroup);
const instances = resourcesOfType(template, 'AWS::EC2::Instance');
const hostInstanceId = instances.find(([, p]) => p.InstanceType === 'c7g.2xlarge')?.[0] ?? '';
const scripts = new Map(instances.map(([id, p]) => [id, renderIntrinsic(p.UserData)]));
const hostScript = scripts.get(hostInstanceId) ?? '';
const runnerScripts = [...scripts].filter(([id]) => id !== hostInstanceId).map(([, s]) => s);
const release = PGDOORMAN_RELEASES[0];
if (!release) throw new Error('no pinned PgDoorman release');

const hostConfigOf = (script: string): Record<string, unknown> =>
  JSON.parse(
    /<<'PROXYLAB_POOLER_CONFIG'\n([\s\S]*?)\nPROXYLAB_POOLER_CONFIG\n/.exec(script)?.[1] ?? '{}',
  ) as Record<string, unknown>;

/** The host config with the deploy-time tokens filled in, as the instance reads it. */
function asDeployed(config: Record<string, unknown>): string {
  const deployed: Record<string, string> = {
    serverHost: 'lab-writer.abcdefghij.eu-west-1.rds.amazonaws.com',
    region: 'eu-west-1',
    dbSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-AbCdEf',
    adminSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:admin-AbCdEf',
  };
  return JSON.stringify(
    Object.fromEntries(
      Object.entries(config).map(([k, v]) => [
        k,
        typeof v === 'string' && v.includes('PLACEHOLDER_') ? (deployed[k] ?? v) : v,
      ]),
    ),
  );
}

describe('dedicated PgDoorman host', () => {
  test('inbound only from the runners: the data port, the control and stats ports and ONE admin relay port (one process)', () => {
    // GIVEN every ingress rule of the host's group
    const rules = resourcesOfType(template, 'AWS::EC2::SecurityGroupIngress')
      .map(([, p]) => p)
      .filter((p) => JSON.stringify(p.GroupId) === JSON.stringify({ 'Fn::GetAtt': [hostSgId, 'GroupId'] }));
    // THEN exactly these, each from the runners' group, none from an address range
    expect(rules.map((p) => [p.FromPort, p.ToPort]).sort()).toEqual([
      [6432, 6432],
      [6438, 6438],
      [6439, 6439],
      [6440, 6440],
    ]);
    for (const rule of rules) {
      expect(rule.SourceSecurityGroupId).toEqual({ 'Fn::GetAtt': [runnersSgId, 'GroupId'] });
      expect(rule.CidrIp).toBeUndefined();
    }
  });

  test('user data: rustup-init checked against its published SHA-256 before it runs; the tag’s commit checked before the build', () => {
    // every architecture's installer is pinned with its published checksum
    for (const b of RUSTUP_INIT)
      expect(hostScript).toContain(`${b.arch}) rustup_url='${b.url}'; rustup_sha256='${b.sha256}' ;;`);
    const order = [
      'set -euo pipefail',
      'dnf install -y git',
      'curl --fail --silent --show-error --location',
      'sha256sum -c --strict -',
      '"${pgdoorman_src}/rustup-init" -y --no-modify-path --profile minimal --default-toolchain 1.87.0',
      `git clone --quiet --depth 1 --branch '${release.tag}' '${release.url}'`,
      `if [ "\${pgdoorman_commit}" != '${release.gitCommit}' ]; then`,
      'cargo" build --release --locked --bin pg_doorman',
      `/usr/local/bin/pg_doorman --version | grep -F 'pg_doorman ${release.version}'`,
      'useradd --system',
      'node /opt/proxylab/pooler.js bootstrap --config /etc/proxylab/pooler-doorman.json',
    ].map((s) => hostScript.indexOf(s));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // nothing from the PgBouncer route
    expect(hostScript).not.toContain('pgbouncer');
  });

  test('the host config it bootstraps from: PgDoorman, one process of 8 worker threads, and the bootstrap accepts it', () => {
    const config = hostConfigOf(hostScript);
    expect(config).toMatchObject({
      name: 'doorman',
      product: 'pgdoorman',
      placement: 'dedicated',
      listenAddr: '0.0.0.0',
      processes: 1,
      workerThreads: 8,
      poolModes: ['transaction'],
      version: release.version,
      binaryPath: '/usr/local/bin/pg_doorman',
      sharedBy: 1,
    });
    expect(parsePoolerHostConfig(asDeployed(config), 'pooler-doorman.json')).toMatchObject({
      product: 'pgdoorman',
      workerThreads: 8,
    });
  });

  test('CreationPolicy: the deploy waits 60 minutes (a Rust release build), not PgBouncer’s 20', () => {
    template.hasResource('AWS::EC2::Instance', {
      Properties: { InstanceType: 'c7g.2xlarge' },
      CreationPolicy: { ResourceSignal: { Count: 1, Timeout: 'PT1H' } },
    });
  });
});

describe('PgDoorman on the runners', () => {
  test('every runner builds the same pinned tag, checks it, and bootstraps on 127.0.0.1 with the host’s vCPUs as threads', () => {
    expect(runnerScripts).toHaveLength(2);
    for (const script of runnerScripts) {
      expect(script.indexOf('sha256sum -c --strict -')).toBeGreaterThan(0);
      expect(script.indexOf('sha256sum -c --strict -')).toBeLessThan(
        script.indexOf('"${pgdoorman_src}/rustup-init" -y'),
      );
      expect(script.indexOf(`!= '${release.gitCommit}'`)).toBeLessThan(script.indexOf('cargo" build'));
      const config = hostConfigOf(script);
      // each of the 2 runners opens half of the 40 % (sharedBy 2); worker threads: the runner's vCPUs at boot
      expect(config).toMatchObject({
        name: 'near',
        listenAddr: '127.0.0.1',
        processes: 1,
        workerThreads: null,
        sharedBy: 2,
      });
      expect(parsePoolerHostConfig(asDeployed(config), 'pooler-near.json')).toMatchObject({ sharedBy: 2 });
    }
    // the runners wait for the build too
    template.resourcePropertiesCountIs('AWS::EC2::Instance', { InstanceType: 'c7g.large' }, 2);
    for (const [id, props] of resourcesOfType(template, 'AWS::EC2::Instance'))
      if (props.InstanceType === 'c7g.large')
        expect(
          (template.toJSON() as { Resources: Record<string, { CreationPolicy: unknown }> }).Resources[id]
            ?.CreationPolicy,
        ).toEqual({
          ResourceSignal: { Count: 1, Timeout: 'PT1H' },
        });
  });

  test('PoolerEndpoints: product pgdoorman, one admin port, the cache size the lab gets by default', () => {
    const outputs = template.findOutputs('*') as Record<string, { Value: unknown }>;
    const raw = Object.fromEntries(
      Object.entries(outputs).map(([k, o]) => [
        k,
        renderIntrinsic(o.Value).replace(`PLACEHOLDER_${hostInstanceId}_PrivateIp`, '10.0.1.23'),
      ]),
    );
    const parsed = parseLabOutputs(raw);
    expect(parsed.poolerEndpoints.doorman).toMatchObject({
      product: 'pgdoorman',
      host: '10.0.1.23',
      port: 6432,
      adminPorts: [6440],
      statsPort: 6439,
      controlPort: 6438,
      processes: 1,
      maxPreparedStatements: 8192,
      version: release.version,
    });
    expect(parsed.poolerEndpoints.near).toMatchObject({
      product: 'pgdoorman',
      host: '127.0.0.1',
      adminPorts: [6440],
    });
  });
});
