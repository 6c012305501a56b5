/**
 * The runners' user data as CloudFormation will hand it to EC2: rendered from the synthesized
 * template (Fn::Base64 → Fn::Join, intrinsic tokens replaced by placeholders) and checked with
 * shellcheck; it must install the runner bundle where `proxylab run` starts it.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { RUNNER_INSTALL_PATH } from '../../lib/config/stack-outputs';
import { loadLabFile } from '../../lib/config/load';
import { validateLab } from '../../lib/config';
import { createLabStack } from '../../lib/lab-stack';
import { scratchDir } from '../helpers/scratch';

const LABS = path.resolve(__dirname, '..', '..', 'labs');

/** Render an intrinsic-function value to text; tokens become shell-safe placeholders. */
function renderIntrinsic(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    if ('Fn::Base64' in obj) return renderIntrinsic(obj['Fn::Base64']);
    if ('Fn::Join' in obj) {
      const [sep, parts] = obj['Fn::Join'] as [string, unknown[]];
      return parts.map(renderIntrinsic).join(sep);
    }
    if ('Ref' in obj) return `PLACEHOLDER_${String(obj.Ref).replace(/[^A-Za-z0-9]/g, '_')}`;
    if ('Fn::Sub' in obj)
      return String(obj['Fn::Sub']).replace(
        /\$\{([^}]+)\}/g,
        (_m, name: string) => `PLACEHOLDER_${name.replace(/[^A-Za-z0-9]/g, '_')}`,
      );
    if ('Fn::GetAtt' in obj) return `PLACEHOLDER_${(obj['Fn::GetAtt'] as string[]).join('_')}`;
  }
  throw new Error(`cannot render ${JSON.stringify(value)}`);
}

function userDataOf(lab: ReturnType<typeof loadLabFile>): string[] {
  const app = new App({ outdir: scratchDir('proxylab-ud-'), context: { 'aws:cdk:bundling-stacks': [] } });
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
    // … that downloads the bundle asset and installs it where the SSM command runs it
    expect(script).toMatch(
      /\naws s3 cp 's3:\/\/cdk-hnb659fds-assets-PLACEHOLDER_AWS__AccountId-PLACEHOLDER_AWS__Region\/[0-9a-f]{64}\.js' '\/opt\/proxylab\/runner'\n/,
    );
    expect(script).toContain(
      `install -m 0644 /opt/proxylab/runner ${RUNNER_INSTALL_PATH} && node --check ${RUNNER_INSTALL_PATH}`,
    );
    // pgbench and node are installed before the runner is checked with node
    expect(script.indexOf('dnf install')).toBeLessThan(script.indexOf('node --check'));
    // … and shellcheck finds nothing, not even style notes
    const res = shellcheck(script);
    expect(res.output).toBe('');
    expect(res.status).toBe(0);
  });

  test('shellcheck is really checking (a canary with an unquoted expansion is flagged)', () => {
    const res = shellcheck('#!/bin/bash\nmkdir -p $(dirname "/opt/x")\n');
    expect(res.output).toContain('SC2046');
    expect(res.status).not.toBe(0);
  });
});
