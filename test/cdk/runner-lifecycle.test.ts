/**
 * What a real account would expose (issue 14): runner software that never updates, a boot failure
 * the deploy does not see, ephemeral ports under `-C`, runners in a zone without their type, an
 * expiry failure nobody sees, log groups left behind, and a destroy racing the runners' writes.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import { createLabStack, AZ_CONTEXT_KEYS } from '../../lib/lab-stack';
import { RUNNER_SYSCTLS } from '../../lib/constructs/runner-fleet';
import { loadLab, LABS_DIR, newTestApp, resourcesOfType, synthLab, type SynthesizedLab } from './helpers';
import { scratchDir } from '../helpers/scratch';

const DEFAULT = loadLab(path.join(LABS_DIR, 'default.json'));
let defaultSynth: SynthesizedLab | undefined;
/** labs/default.json as `cdk synth` makes it, synthesized once for the tests that only read it. */
function synthDefault(): SynthesizedLab {
  defaultSynth ??= synthLab(DEFAULT);
  return defaultSynth;
}

/** The one element of a list (fails the test otherwise). */
function only<T>(items: readonly T[]): T {
  const [first, ...rest] = items;
  if (first === undefined || rest.length > 0) throw new Error(`expected exactly one, got ${items.length}`);
  return first;
}

/** User data of each runner, with every intrinsic rendered as a placeholder. */
function userDataOf(template: Template): Array<[string, string]> {
  return resourcesOfType(template, 'AWS::EC2::Instance').map(([id, props]) => {
    const join = (props.UserData as { 'Fn::Base64': { 'Fn::Join': [string, unknown[]] } })['Fn::Base64'][
      'Fn::Join'
    ];
    return [id, join[1].map((p) => (typeof p === 'string' ? p : 'PLACEHOLDER')).join(join[0])];
  });
}

/** A lab stack whose runner software is a file with the given content. */
function withRunnerSoftware(content: string): Template {
  const file = path.join(scratchDir('runner-sw-'), 'runner.js');
  writeFileSync(file, content);
  const app = newTestApp();
  const asset = new s3assets.Asset(new Stack(app, 'AssetHolder'), 'Software', { path: file });
  return Template.fromStack(createLabStack(app, DEFAULT, { runnerSoftware: { asset, command: 'true' } }));
}

describe('runner software updates (item 1)', () => {
  test('new runner software replaces the runners: the instance logical id follows the user data', () => {
    const a = resourcesOfType(withRunnerSoftware('// v1\n'), 'AWS::EC2::Instance').map(([id]) => id);
    const b = resourcesOfType(withRunnerSoftware('// v2\n'), 'AWS::EC2::Instance').map(([id]) => id);
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
    expect(a[0]).not.toEqual(b[0]);
  });
});

describe('boot failures fail the deploy (item 11)', () => {
  const { template } = synthDefault();

  test('each runner has a creation policy waiting for one signal', () => {
    for (const [, , whole] of resourcesOfType(template, 'AWS::EC2::Instance'))
      expect(whole.CreationPolicy).toEqual({ ResourceSignal: { Count: 1, Timeout: 'PT20M' } });
  });

  test('the boot script signals its own exit code to its own instance, after installing cfn-signal and Node 22', () => {
    for (const [id, script] of userDataOf(template)) {
      expect(script).toMatch(/^#!\/bin\/bash\nfunction exitTrap\(\)\{\nexitCode=\$\?\n/);
      expect(script).toContain(`/opt/aws/bin/cfn-signal --stack proxylab-default --resource ${id} `);
      expect(script).toContain('trap exitTrap EXIT');
      expect(script).toContain('dnf install -y aws-cfn-bootstrap\n');
      expect(script).toContain('dnf install -y postgresql17 postgresql17-contrib nodejs22');
      expect(script).not.toContain('nodejs20');
      expect(script.indexOf('aws-cfn-bootstrap')).toBeLessThan(script.indexOf('postgresql17'));
    }
  });
});

describe('ephemeral ports under -C (item 10)', () => {
  test('user data widens the port range and reuses TIME_WAIT ports, persistently', () => {
    const { template } = synthDefault();
    for (const [, script] of userDataOf(template)) {
      expect(script).toContain(
        "printf '%s\\n' 'net.ipv4.ip_local_port_range = 10000 65535' 'net.ipv4.tcp_tw_reuse = 1' > /etc/sysctl.d/90-proxylab-runner.conf",
      );
      expect(script).toContain('sysctl -p /etc/sysctl.d/90-proxylab-runner.conf');
    }
    expect(RUNNER_SYSCTLS['net.ipv4.tcp_tw_reuse']).toBe('1');
  });
});

describe('runner Availability Zone (item 12)', () => {
  test('without context the template stays region-agnostic (Fn::GetAZs)', () => {
    const { template } = synthDefault();
    const subnets = resourcesOfType(template, 'AWS::EC2::Subnet').map(([, p]) =>
      JSON.stringify(p.AvailabilityZone),
    );
    expect(subnets.every((az) => az.includes('Fn::GetAZs'))).toBe(true);
  });

  test('with the zones the CLI chose, the VPC uses them and the runners sit in the offering zone', () => {
    // GIVEN c7g.large offered in eu-west-1b only (the CLI put it first, then another zone)
    const app = newTestApp();
    app.node.setContext(AZ_CONTEXT_KEYS.vpc, 'eu-west-1b,eu-west-1a');
    app.node.setContext(AZ_CONTEXT_KEYS.runners, 'eu-west-1b');
    // WHEN
    const { template } = synthLab(DEFAULT, app);
    // THEN
    const subnets = resourcesOfType(template, 'AWS::EC2::Subnet');
    expect(new Set(subnets.map(([, p]) => p.AvailabilityZone))).toEqual(
      new Set(['eu-west-1a', 'eu-west-1b']),
    );
    // (with a public IPv4 the subnet sits in NetworkInterfaces[0].SubnetId)
    const runnerSubnets = resourcesOfType(template, 'AWS::EC2::Instance').map(
      ([, p]) => /"SubnetId":\{"Ref":"([^"]+)"\}/.exec(JSON.stringify(p))?.[1],
    );
    expect(runnerSubnets.length).toBeGreaterThan(0);
    for (const ref of runnerSubnets) {
      const subnet = subnets.find(([sid]) => sid === ref);
      expect(subnet?.[1].AvailabilityZone).toBe('eu-west-1b');
      expect(subnet?.[1].MapPublicIpOnLaunch).toBe(false);
    }
  });

  test('runner zones outside the VPC zones are refused', () => {
    const app = newTestApp();
    app.node.setContext(AZ_CONTEXT_KEYS.vpc, 'eu-west-1a,eu-west-1c');
    app.node.setContext(AZ_CONTEXT_KEYS.runners, 'eu-west-1b');
    expect(() => synthLab(DEFAULT, app)).toThrow(/must be a subset/);
  });
});

describe('a failed expiry is visible (item 7)', () => {
  const { template } = synthDefault();

  test('the schedule has a dead-letter queue its role may send to, and an alarm on it', () => {
    const [queueId] = only(resourcesOfType(template, 'AWS::SQS::Queue'));
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      Target: Match.objectLike({ DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queueId, 'Arn'] } } }),
    });
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Sid: 'DeadLetterFailedExpiry',
            Effect: 'Allow',
            Action: 'sqs:SendMessage',
            Resource: { 'Fn::GetAtt': [queueId, 'Arn'] },
          },
        ]),
      },
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    template.hasOutput('ExpiryFailedAlarmName', {});
  });
});

describe('nothing left behind (item 8)', () => {
  const { template } = synthDefault();
  const json = template.toJSON() as { Resources: Record<string, Record<string, unknown>> };

  test('the S3 auto-delete handler logs into a log group the stack owns, kept until the emptying is done', () => {
    const [handlerId] = only(
      Object.keys(json.Resources).filter(
        (id) =>
          json.Resources[id]?.Type === 'AWS::Lambda::Function' && id.startsWith('CustomS3AutoDeleteObjects'),
      ),
    ).split(' ');
    const [groupId, props, whole] = only(
      resourcesOfType(template, 'AWS::Logs::LogGroup').filter(
        ([, p]) =>
          JSON.stringify(p.LogGroupName) ===
          JSON.stringify({ 'Fn::Join': ['', ['/aws/lambda/', { Ref: handlerId }]] }),
      ),
    );
    expect(props.RetentionInDays).toBe(7);
    expect(whole.DeletionPolicy).toBe('Delete');
    const [, , cr] = only(resourcesOfType(template, 'Custom::S3AutoDeleteObjects'));
    expect(cr.DependsOn).toEqual(expect.arrayContaining([groupId]));
  });

  test('each RDS Proxy is created after, and deleted before, its own log group', () => {
    const groups = resourcesOfType(template, 'AWS::Logs::LogGroup').filter(([, p]) =>
      String(p.LogGroupName).startsWith('/aws/rds/proxy/'),
    );
    const proxies = resourcesOfType(template, 'AWS::RDS::DBProxy');
    expect(proxies.length).toBeGreaterThan(0);
    for (const [, p, whole] of proxies) {
      const group = groups.find(([, g]) => g.LogGroupName === `/aws/rds/proxy/${String(p.DBProxyName)}`);
      expect(group).toBeDefined();
      expect(whole.DependsOn).toEqual(expect.arrayContaining([group?.[0]]));
    }
  });
});

describe('destroy during a run (item 9)', () => {
  test('runners are terminated before the bucket is emptied (they depend on the emptying)', () => {
    const { template } = synthDefault();
    const [crId] = only(resourcesOfType(template, 'Custom::S3AutoDeleteObjects'));
    for (const [, , whole] of resourcesOfType(template, 'AWS::EC2::Instance'))
      expect(whole.DependsOn).toEqual(expect.arrayContaining([crId]));
  });
});
