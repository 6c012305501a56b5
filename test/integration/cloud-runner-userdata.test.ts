/**
 * The runners' user data as CloudFormation will hand it to EC2: rendered from the synthesized
 * template (Fn::Base64 → Fn::Join, intrinsic tokens replaced by placeholders) and checked with
 * shellcheck; it must install the runner bundle where `proxylab run` starts it.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { RUNNER_INSTALL_PATH } from '../../lib/config/stack-outputs';
import { POOLER_INSTALL_PATH } from '../../lib/constructs/pooler-user-data';
import { loadLabFile } from '../../lib/config/load';
import { validateLab } from '../../lib/config';
import { createLabStack } from '../../lib/lab-stack';
import { renderIntrinsic } from '../helpers/intrinsic';
import { testApp } from '../helpers/cdk-app';
import { committedLookups } from '../helpers/lab-context';
import { scratchDir } from '../helpers/scratch';

const LABS = path.resolve(__dirname, '..', '..', 'labs');

function userDataOf(lab: ReturnType<typeof loadLabFile>): string[] {
  // the committed lookups: labs in an existing VPC synthesize from them
  const app = testApp({ context: committedLookups() });
  const template = Template.fromStack(createLabStack(app, lab));
  const instances = template.findResources('AWS::EC2::Instance') as Record<
    string,
    { Properties: { UserData: unknown } }
  >;
  return Object.values(instances).map((i) => renderIntrinsic(i.Properties.UserData));
}

function shellcheck(script: string): { output: string; status: number | null } {
  const file = path.join(scratchDir('proxylab-ud-'), 'user-data.sh');
  fs.writeFileSync(file, script);
  const res = spawnSync('shellcheck', ['--shell=bash', '--severity=style', file], { encoding: 'utf8' });
  if (res.error) throw res.error;
  return { output: `${res.stdout}${res.stderr}`, status: res.status };
}

describe('runner user data', () => {
  const labs = [
    ['labs/default.json', loadLabFile(path.join(LABS, 'default.json'))],
    [
      'two x86 runners, no proxy',
      (() => {
        const r = validateLab({
          name: 'ud',
          aurora: { engineVersion: '16.9', instanceClass: 'db.t4g.medium' },
          proxies: [],
          runners: { instanceType: 'm7i.large', count: 2 },
        });
        if (!r.ok) throw new Error(JSON.stringify(r.problems));
        return r.lab;
      })(),
    ],
  ] as const;

  test.each(labs)('%s: rendered from the template, installs runner.js, passes shellcheck', (_name, lab) => {
    // GIVEN the synthesized template; WHEN its user data is rendered
    const scripts = userDataOf(lab);
    // THEN every runner gets the same script, but for the instance its exit trap signals …
    expect(scripts).toHaveLength(lab.runners.count);
    expect(new Set(scripts.map((s) => s.replace(/--resource \S+/, '--resource ID'))).size).toBe(1);
    expect(new Set(scripts).size).toBe(lab.runners.count);
    const script = scripts[0] as string;
    expect(script.startsWith('#!/bin/bash\n')).toBe(true);
    // … that downloads the bundle asset (runner.js + pooler.js) and unpacks it where the SSM command runs it
    expect(script).toMatch(
      /\naws s3 cp 's3:\/\/cdk-hnb659fds-assets-PLACEHOLDER_AWS__AccountId-PLACEHOLDER_AWS__Region\/[0-9a-f]{64}\.zip' '\/opt\/proxylab\/runner\.zip'\n/,
    );
    expect(script).toContain('unzip -o "/opt/proxylab/runner.zip" -d /opt/proxylab\n');
    expect(script).toContain(`node --check ${RUNNER_INSTALL_PATH} && node --check ${POOLER_INSTALL_PATH}`);
    // pgbench and node are installed before the runner is checked with node
    expect(script.indexOf('dnf install')).toBeLessThan(script.indexOf('node --check'));
    // … and shellcheck finds nothing, not even style notes
    const res = shellcheck(script);
    expect(res.output).toBe('');
    expect(res.status).toBe(0);
  });

  test('pooler host and runners with a pooler: rendered from the template, each passes shellcheck', () => {
    // GIVEN a lab with both placements (the host on x86, to cover the other AMI too)
    const r = validateLab({
      name: 'ud-poolers',
      poolers: [
        { name: 'host', kind: 'pgbouncer', placement: 'dedicated', instanceType: 'm7i.xlarge', processes: 4 },
        { name: 'near', kind: 'pgbouncer', placement: 'on-runners', version: '1.24.1' },
      ],
      runners: { count: 2 },
    });
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    // WHEN rendered
    const scripts = userDataOf(r.lab);
    // THEN three scripts (the host, two runners), each building PgBouncer and bootstrapping a pooler …
    expect(scripts).toHaveLength(3);
    for (const script of scripts) {
      expect(script).toContain('sha256sum -c --strict SHA256SUMS');
      expect(script).toMatch(
        /\nnode \/opt\/proxylab\/pooler\.js bootstrap --config \/etc\/proxylab\/pooler-(host|near)\.json$/,
      );
      // … and shellcheck finds nothing
      const res = shellcheck(script);
      expect(res.output).toBe('');
      expect(res.status).toBe(0);
    }
    expect(scripts.filter((s) => s.includes('pooler-near.json'))).toHaveLength(2);
  });

  test('a PgDoorman host and PgDoorman on the runners: each script checks before it builds and passes shellcheck', () => {
    // GIVEN a lab with both placements of PgDoorman
    const r = validateLab({
      name: 'ud-doorman',
      poolers: [
        { name: 'doorman', kind: 'pgdoorman', placement: 'dedicated', instanceType: 'c7g.2xlarge' },
        { name: 'near', kind: 'pgdoorman', placement: 'on-runners', workerThreads: 2 },
      ],
      runners: { count: 1 },
    });
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    // WHEN rendered
    const scripts = userDataOf(r.lab);
    // THEN two scripts, each checking rustup-init and the tag's commit before the build …
    expect(scripts).toHaveLength(2);
    for (const script of scripts) {
      expect(script).toContain('sha256sum -c --strict -');
      expect(script).toMatch(/if \[ "\$\{pgdoorman_commit\}" != '[0-9a-f]{40}' \]; then/);
      expect(script).toMatch(
        /\nnode \/opt\/proxylab\/pooler\.js bootstrap --config \/etc\/proxylab\/pooler-(doorman|near)\.json$/,
      );
      // … and shellcheck finds nothing
      const res = shellcheck(script);
      expect(res.output).toBe('');
      expect(res.status).toBe(0);
    }
  });

  test('labs/private.json (no internet): the runner and the pooler host fetch from S3 only, and pass shellcheck', () => {
    // GIVEN the lab without internet (a dedicated PgBouncer host) WHEN rendered
    const scripts = userDataOf(loadLabFile(path.join(LABS, 'private.json')));
    // THEN the runner and the host, each fetching only from the staging bucket, shellcheck-clean
    expect(scripts).toHaveLength(2);
    const host = scripts.find((s) => s.includes('pooler-bouncer.json')) ?? '';
    expect(host).toMatch(
      /\naws s3 cp 's3:\/\/cdk-hnb659fds-assets-111122223333-us-east-1\/[0-9a-f]{64}\.gz' "\$\{pgbouncer_src\}\/pgbouncer-[\d.]+\.tar\.gz"\n/,
    );
    for (const script of scripts) {
      expect(script).not.toMatch(/\bcurl\b|https?:\/\//);
      const res = shellcheck(script);
      expect(res.output).toBe('');
      expect(res.status).toBe(0);
    }
  });

  test('shellcheck is really checking (a canary with an unquoted expansion is flagged)', () => {
    const res = shellcheck('#!/bin/bash\nmkdir -p $(dirname "/opt/x")\n');
    expect(res.output).toContain('SC2046');
    expect(res.status).not.toBe(0);
  });
});
