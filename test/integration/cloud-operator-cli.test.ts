/**
 * The operator's CLI through the real entry point (`node scripts/proxylab.js`, child processes, no
 * AWS call: outputs come from a file): `run --dry-run`, deploy's cost guard, validation errors.
 * The in-process operator tests are test/unit/cloud-operator.test.ts.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../../lib/operator/operator';
import { AWS_CALL_LOG_ENV } from '../../lib/core/aws-call-log';
import { labOutputsWith, proxyOutputs } from '../helpers/lab-outputs';
import { scratchDir } from '../helpers/scratch';

const OUTPUTS = labOutputsWith({
  runnerInstanceIds: ['i-0aaaaaaaaaaaaaaaa', 'i-0bbbbbbbbbbbbbbbb'],
  ...proxyOutputs('demo', 'pool50'),
});

describe('CLI (real entry, no AWS)', () => {
  const cli = path.join(REPO_ROOT, 'scripts', 'proxylab.js');
  const outputsFile = path.join(scratchDir('proxylab-outputs-'), 'outputs.json');
  const flat = Object.fromEntries(
    Object.entries({ ...OUTPUTS, labName: 'default' }).map(([k, v]) => [
      k[0]?.toUpperCase() + k.slice(1),
      Array.isArray(v) ? v.join(',') : typeof v === 'object' ? JSON.stringify(v) : String(v),
    ]),
  );
  fs.writeFileSync(
    outputsFile,
    JSON.stringify({
      'proxylab-default': {
        ...flat,
        DbInstanceIds: 'demo-writer',
        DbInstanceResourceIds: 'db-ABC',
        DbSecretArn: OUTPUTS.dbSecretArn,
      },
    }),
  );
  const env = {
    ...process.env,
    AWS_REGION: 'eu-west-1',
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_EC2_METADATA_DISABLED: 'true',
  };

  test('run --dry-run prints the exact SendCommand requests and exits 0', () => {
    const res = spawnSync(
      process.execPath,
      [
        cli,
        'run',
        '--lab',
        path.join(REPO_ROOT, 'labs', 'default.json'),
        '--suite',
        'smoke',
        '--outputs',
        outputsFile,
        '--run-id',
        'dry-1',
        '--dry-run',
      ],
      { encoding: 'utf8', env },
    );
    expect(res.status).toBe(0);
    const printed = JSON.parse(res.stdout) as {
      request: { runId: string; runnerCount: number; targets: { proxies: unknown[] } };
      sendCommands: Array<{
        DocumentName: string;
        InstanceIds: string[];
        Parameters: { commands: string[] };
      }>;
    };
    // the request the runners will read from S3 (endpoints described, no secret)
    expect(printed.request).toMatchObject({ runId: 'dry-1', runnerCount: 2 });
    expect(printed.request.targets.proxies.length).toBeGreaterThan(0);
    expect(JSON.stringify(printed.request)).not.toMatch(/password/i);
    const requests = printed.sendCommands;
    expect(requests.map((r) => [r.DocumentName, r.InstanceIds])).toEqual([
      ['AWS-RunShellScript', ['i-0aaaaaaaaaaaaaaaa']],
      ['AWS-RunShellScript', ['i-0bbbbbbbbbbbbbbbb']],
    ]);
    expect(requests[1]?.Parameters.commands.at(-1)).toBe(
      'node /opt/proxylab/runner.js --request s3://proxylab-demo-results/runs/dry-1/request.json --runner-index 1 --region eu-west-1',
    );
  });

  test('deploy prices the region it deploys to: refuses over budget (2), refuses an unpriced region (2) unless --force; destroy says what is kept', () => {
    // GIVEN the deploy goes to us-east-1 (priced): the cost comes first, then the budget refusal
    const usEast = { ...env, AWS_REGION: 'us-east-1' };
    const over = spawnSync(
      process.execPath,
      [cli, 'deploy', '--lab', 'labs/default.json', '--max-hourly', '0.05', '--dry-run'],
      { encoding: 'utf8', env: usEast, cwd: REPO_ROOT },
    );
    expect(over.status).toBe(2);
    expect(over.stdout).toMatch(
      /^Cost estimate for lab "default" in us-east-1 \(region from the deploy environment/,
    );
    expect(over.stdout).toMatch(/exceeds --max-hourly \$0\.05\/h .*refusing to deploy/);
    expect(over.stdout).not.toContain('cdk deploy');
    // GIVEN the deploy goes to eu-west-1 (AWS_REGION), which has no price table: refused in the
    // words `cost` and `validate` use, never priced with another region's list prices
    const unpriced = spawnSync(process.execPath, [cli, 'deploy', '--lab', 'labs/default.json', '--dry-run'], {
      encoding: 'utf8',
      env,
      cwd: REPO_ROOT,
    });
    expect(unpriced.status).toBe(2);
    expect(unpriced.stderr).toMatch(
      /^error: not deployed: region eu-west-1 has no price table in lib\/cost\/price-table\.ts.*--force deploys without an estimate/m,
    );
    expect(unpriced.stdout).not.toMatch(/Cost estimate|us-east-1/);
    const forced = spawnSync(
      process.execPath,
      [
        cli,
        'deploy',
        '--lab',
        'labs/default.json',
        '--max-hourly',
        '0.05',
        '--force',
        '--dry-run',
        '--profile',
        'lab',
      ],
      { encoding: 'utf8', env, cwd: REPO_ROOT },
    );
    expect(forced.status).toBe(0);
    expect(forced.stdout).toMatch(
      /^warning: region eu-west-1 has no price table .*deploying anyway because --force was given: no cost estimate, no budget check/,
    );
    expect(forced.stdout).toMatch(
      /would run: AWS_PROFILE=lab npx cdk deploy -c lab=\S+\/labs\/default\.json --require-approval never/,
    );
    const destroy = spawnSync(process.execPath, [cli, 'destroy', '--lab', 'labs/default.json', '--dry-run'], {
      encoding: 'utf8',
      env,
      cwd: REPO_ROOT,
    });
    expect(destroy.status).toBe(0);
    expect(destroy.stdout).toMatch(
      /^Dry run: would destroy stack proxylab-default if it is deployed[^]*nothing would be retained[^]*would run: .*npx cdk destroy -c lab=\S+ --force/,
    );
  });

  test.each([
    [['run', '--lab', 'labs/default.json', '--suite', 'nope'], /--suite must be one of quick, smoke/],
    [
      ['run', '--lab', 'labs/default.json', '--suite', 'smoke', '--run-id', '../etc'],
      /run id must be letters, digits/,
    ],
    [['run', '--lab', 'labs/missing.json', '--suite', 'smoke'], /missing\.json/],
    [['fetch', 'r1'], /give --lab FILE \(the deployed lab\) or --bucket NAME/],
    [['status', '--bucket', 'Not_A_Bucket'], /--bucket "Not_A_Bucket" is not a valid S3 bucket name/],
  ])('proxylab %j exits 2 before any AWS call', (args, message) => {
    // The CLI's AWS call audit log stays empty: no call was made.
    const callLog = path.join(scratchDir('proxylab-calls-'), 'calls.jsonl');
    const res = spawnSync(process.execPath, [cli, ...args], {
      encoding: 'utf8',
      env: { ...env, [AWS_CALL_LOG_ENV]: callLog },
      cwd: REPO_ROOT,
    });
    expect(res.stderr).toMatch(message);
    expect(res.status).toBe(2);
    expect(fs.existsSync(callLog)).toBe(false);
  });

  test.each([
    [['run', '--lab', 'labs/default.json', '--suite', 'smoke', '--dry-run']],
    [['status', 'r1', '--lab', 'labs/default.json']],
    [['fetch', 'r1', '--bucket', 'some-results-bucket']],
    [['extend', '--lab', 'labs/default.json', '--hours', '2']],
  ])(
    'with no region anywhere, proxylab %j is a usage error (2) naming the ways to give one, before any AWS call',
    (args) => {
      // GIVEN no AWS_REGION, no profile region, a lab without "region"
      const rest: NodeJS.ProcessEnv = { ...env };
      for (const k of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE']) delete rest[k];
      const res = spawnSync(process.execPath, [cli, ...args], {
        encoding: 'utf8',
        env: rest,
        cwd: REPO_ROOT,
      });
      expect(res.stderr).toMatch(
        /^error: no AWS region: pass --region, set AWS_REGION, give the lab a "region"/m,
      );
      expect(res.stderr).not.toMatch(/Region is missing|credentials/i);
      expect(res.status).toBe(2);
    },
  );

  test('extend --hours -3 is refused before any AWS client exists', () => {
    const res = spawnSync(process.execPath, [cli, 'extend', '--lab', 'labs/default.json', '--hours', '-3'], {
      encoding: 'utf8',
      env,
      cwd: REPO_ROOT,
    });
    expect(res.stderr).toMatch(/--hours must be a number of hours > 0/);
    expect(res.status).toBe(2);
  });
});
