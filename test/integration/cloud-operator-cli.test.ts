/**
 * The operator's CLI through the real entry point (`node scripts/proxylab.js`, child processes, no
 * AWS call: outputs come from a file): `run --dry-run`, deploy's cost guard, validation errors.
 * The in-process operator tests are test/unit/cloud-operator.test.ts.
 *
 * Every test starts its own CLI processes on its own files and waits for them: they run side by
 * side (test.concurrent), so the file takes about its CPU time over the cores rather than the sum of
 * every process's start-up one after the other (CONTRIBUTING.md "Test time").
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../../lib/operator/operator';
import { AWS_CALL_LOG_ENV } from '../../lib/core/aws-call-log';
import { labOutputsWith, proxyOutputs } from '../helpers/lab-outputs';
import { scratchDir } from '../helpers/scratch';
import { spawnToEnd } from '../helpers/spawn';

interface Exit {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `node scripts/proxylab.js ARGS` to its end, as spawnSync would run it, without blocking the worker. */
async function proxylab(
  cli: string,
  args: readonly string[],
  opts: { readonly env: NodeJS.ProcessEnv; readonly cwd?: string },
): Promise<Exit> {
  const { code, stdout, stderr } = await spawnToEnd(process.execPath, [cli, ...args], {
    env: opts.env,
    ...(opts.cwd === undefined ? {} : { cwd: opts.cwd }),
  });
  return { status: code, stdout, stderr };
}

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

  test.concurrent('run --dry-run prints the exact SendCommand requests and exits 0', async () => {
    const res = await proxylab(
      cli,
      [
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
      { env },
    );
    expect(res.status).toBe(0);
    const printed = JSON.parse(res.stdout) as {
      plan: { suite: string; stepCount: number; maxConnections: { value: number } };
      request: { runId: string; runnerCount: number; targets: { proxies: unknown[] } };
      sendCommands: Array<{
        DocumentName: string;
        InstanceIds: string[];
        Parameters: { commands: string[] };
      }>;
    };
    // the plan `proxylab plan` shows (on stderr in words, in the JSON as data), from the lab file
    expect(res.stderr).toMatch(/^Plan: suite smoke on lab default: 3 scenarios, \d+ steps, 1 runner$/m);
    expect([printed.plan.suite, printed.plan.maxConnections.value]).toEqual(['smoke', 450]);
    expect(printed.plan.stepCount).toBeGreaterThan(0);
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

  test.concurrent(
    'run --dry-run shows the plan before its first AWS call: no credentials, no deployed lab, the preview is still there',
    async () => {
      // GIVEN the lab, no credentials anywhere and no --outputs (the stack outputs would be read)
      const lab = path.join(REPO_ROOT, 'test', 'fixtures', 'labs', 'issue-25-rds-proxy-vs-pgbouncer.json');
      const res = await proxylab(cli, ['run', '--lab', lab, '--suite', 'e5', '--dry-run'], {
        env,
        cwd: REPO_ROOT,
      });
      // THEN the plan, its skipped target and its warnings come first; then why the outputs were not
      // read, and the requests with placeholders (exit 0: a dry run needs no AWS)
      const planAt = res.stderr.search(
        /^Plan: suite e5 on lab rds-proxy-vs-pgbouncer: 2 scenarios, 378 steps, 2 runners$/m,
      );
      const skippedAt = res.stderr.search(
        /^ {4}bouncer-transaction {2}skipped: e5-short runs on targets that are/m,
      );
      const warnAt = res.stderr.search(/^warning: target bouncer-transaction gets no step in suite e5/m);
      const noteAt = res.stderr.search(
        /^note: the stack outputs were not read \(DescribeStacks proxylab-rds-proxy-vs-pgbouncer: .*credentials/m,
      );
      expect([planAt, skippedAt, warnAt, noteAt].every((i) => i >= 0)).toBe(true);
      expect(planAt < skippedAt && skippedAt < warnAt && warnAt < noteAt).toBe(true);
      expect(res.status).toBe(0);
      const printed = JSON.parse(res.stdout) as { request: { suite: string }; placeholders: string[] };
      expect(printed.request.suite).toBe('e5');
      expect(printed.placeholders).toContain('<results bucket: from the stack outputs>');
    },
  );

  test.concurrent(
    "run --suite lab --dry-run on the own-workload lab: the plan and the requests, the lab's scenario in the request, without credentials or an outputs file (placeholders named as such), exit 0",
    async () => {
      // GIVEN the team's own scenarios (labs/own-workload.json, 2 runners), no credentials, no --outputs
      const res = await proxylab(
        cli,
        ['run', '--lab', 'labs/own-workload.json', '--suite', 'lab', '--run-id', 'dry-lab', '--dry-run'],
        { env, cwd: REPO_ROOT },
      );
      // THEN exit 0: the plan in words, then what stands in for the stack outputs, and how to get them
      expect(res.status).toBe(0);
      expect(res.stderr).not.toMatch(/unknown suite|proxylab failed|^error:/m);
      expect(res.stderr).toMatch(/^Plan: suite lab on lab own-workload: 1 scenario, 36 steps, 2 runners$/m);
      expect(res.stderr).toMatch(
        /^note: the stack outputs were not read \(DescribeStacks proxylab-own-workload: [^\n]*\), so the request and the SendCommand requests below hold PLACEHOLDERS/m,
      );
      expect(res.stderr).toMatch(
        /^For the real values, give --outputs FILE with the stack outputs \(`cdk deploy --outputs-file FILE` writes them; `proxylab deploy --lab labs\/own-workload\.json` writes cdk\.out\/outputs-own-workload\.json\), or run with AWS credentials that may read stack proxylab-own-workload/m,
      );
      const printed = JSON.parse(res.stdout) as {
        plan: { suite: string; stepCount: number };
        request: {
          suite: string;
          runnerCount: number;
          bucket: string;
          scenarios: Array<{ name: string; workload: Array<{ file?: { sql: string } }> }>;
          targets: {
            writer: { host: string };
            proxies: Array<{ name: string }>;
            poolers: Array<{ name: string }>;
          };
        };
        sendCommands: Array<{ InstanceIds: string[]; Parameters: { commands: string[] } }>;
        placeholders: string[];
      };
      // the request carries the lab's own scenario, its script text with it: what the runners run
      expect([printed.plan.suite, printed.plan.stepCount]).toEqual(['lab', 36]);
      expect(printed.request).toMatchObject({ suite: 'lab', runnerCount: 2 });
      expect(printed.request.scenarios.map((x) => x.name)).toEqual(['checkout']);
      expect(printed.request.scenarios[0]?.workload[0]?.file?.sql).toMatch(/UPDATE pgbench_accounts/);
      expect(printed.request.targets.proxies.map((p) => p.name)).toEqual(['proxy']);
      expect(printed.request.targets.poolers.map((p) => p.name)).toEqual(['bouncer']);
      // every value only the deployed stack knows is a placeholder, named as one, on stderr too
      expect(printed.request.bucket).toBe('<results bucket: from the stack outputs>');
      expect(printed.request.targets.writer.host).toBe('writer-endpoint.from-the-stack-outputs.invalid');
      expect(printed.sendCommands.map((c) => c.InstanceIds)).toEqual([
        ['<runner instance id 1 of 2: from the stack outputs>'],
        ['<runner instance id 2 of 2: from the stack outputs>'],
      ]);
      expect(printed.sendCommands[0]?.Parameters.commands.at(-1)).toBe(
        "node /opt/proxylab/runner.js --request 's3://<results bucket: from the stack outputs>/runs/dry-lab/request.json' --runner-index 0 --region eu-west-1",
      );
      for (const p of printed.placeholders) expect(res.stderr).toContain(`\n  ${p}\n`);
      expect(printed.placeholders).toEqual(
        expect.arrayContaining([
          '<DB secret ARN: from the stack outputs>',
          'proxy-proxy-endpoint.from-the-stack-outputs.invalid',
          'pooler-bouncer-host.from-the-stack-outputs.invalid',
        ]),
      );
      expect(JSON.stringify(printed.request)).not.toMatch(/password/i);
    },
  );

  test.concurrent(
    'run --dry-run on a failover lab says what it will disrupt; a lab not granted the disruption is refused (2) before any AWS call',
    async () => {
      // GIVEN the outputs of a deployed labs/failover-aurora.json (a writer and a reader)
      const aurora = labOutputsWith({
        labName: 'failover-aurora',
        ...proxyOutputs('failover-aurora', 'pool100'),
      });
      const file = path.join(scratchDir('proxylab-outputs-'), 'outputs.json');
      fs.writeFileSync(
        file,
        JSON.stringify({
          'proxylab-failover-aurora': {
            ...Object.fromEntries(
              Object.entries(aurora).map(([k, v]) => [
                k[0]?.toUpperCase() + k.slice(1),
                Array.isArray(v) ? v.join(',') : typeof v === 'object' ? JSON.stringify(v) : String(v),
              ]),
            ),
            DbInstanceIds: 'fa-writer,fa-reader1',
            DbInstanceResourceIds: 'db-A,db-B',
            DbSecretArn: aurora.dbSecretArn,
          },
        }),
      );
      const run = (lab: string) =>
        proxylab(
          cli,
          [
            'run',
            '--lab',
            path.join(REPO_ROOT, 'labs', lab),
            '--suite',
            'failover',
            '--outputs',
            file,
            '--dry-run',
          ],
          { env },
        );
      // WHEN (the two runs side by side)
      const [res, refused] = await Promise.all([run('failover-aurora.json'), run('default.json')]);
      // THEN the request names the database's identifiers, and what it disrupts is said
      expect(res.status).toBe(0);
      const printed = JSON.parse(res.stdout) as {
        request: { targets: { databaseResources: unknown } };
        disrupts: string[];
      };
      expect(printed.request.targets.databaseResources).toEqual({
        engine: 'aurora-postgresql',
        clusterId: 'failover-aurora-cluster',
        instanceIds: ['fa-writer', 'fa-reader1'],
      });
      expect(printed.disrupts[0]).toBe(
        'failover-aurora: fail the Aurora cluster over to a reader (FailoverDBCluster) on cluster failover-aurora-cluster (instances fa-writer, fa-reader1), 3 time(s), each after a 20 s warm-up, probed for 120 s',
      );
      // the default lab's runners were not granted FailoverDBCluster: refused, naming the lab's suites
      expect(refused.status).toBe(2);
      expect(refused.stderr).toMatch(
        /suite failover injects aurora-failover, which the runners of this lab may not/,
      );
      expect(refused.stdout).toBe('');
    },
  );

  test.concurrent(
    'deploy prices the region it deploys to: refuses over budget (2), refuses an unpriced region (2) unless --force, warns as validate does (--dry-run too); destroy says what is kept',
    async () => {
      // GIVEN a deploy to us-east-1 (priced), one to eu-west-1 (no credentials, no cached prices), with and without --force
      const usEast = { ...env, AWS_REGION: 'us-east-1' };
      // (the four CLI runs are independent: started together, checked one after the other)
      const [over, unpriced, forced, destroy, warned] = await Promise.all([
        proxylab(cli, ['deploy', '--lab', 'labs/default.json', '--max-hourly', '0.05', '--dry-run'], {
          env: usEast,
          cwd: REPO_ROOT,
        }),
        proxylab(cli, ['deploy', '--lab', 'labs/default.json', '--dry-run'], { env, cwd: REPO_ROOT }),
        proxylab(
          cli,
          [
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
          { env, cwd: REPO_ROOT },
        ),
        proxylab(cli, ['destroy', '--lab', 'labs/default.json', '--dry-run'], { env, cwd: REPO_ROOT }),
        // a lab whose suite measures no direct target: validate warns, and so does deploy --dry-run
        proxylab(cli, ['deploy', '--lab', 'labs/e4-pool-share.json', '--dry-run'], {
          env: usEast,
          cwd: REPO_ROOT,
        }),
      ]);
      // THEN to us-east-1: the prices and their date, the cost, then the budget refusal
      expect(over.status).toBe(2);
      expect(over.stdout).toMatch(
        /^us-east-1 prices as of \d{4}-\d{2}-\d{2} .*\nCost estimate for lab "default" in us-east-1 \(region from the deploy environment/,
      );
      expect(over.stdout).toMatch(/exceeds --max-hourly \$0\.05\/h .*refusing to deploy/);
      expect(over.stdout).not.toContain('cdk deploy');
      // the deploy to eu-west-1 (AWS_REGION), which has no prices here: refused in the words
      // `cost` and `validate` use, never priced with another region's list prices
      expect(unpriced.status).toBe(2);
      expect(unpriced.stderr).toMatch(
        /^error: not deployed: region eu-west-1 cannot be priced, .*no prices for region eu-west-1: .*--force deploys without an estimate/m,
      );
      expect(unpriced.stdout).not.toMatch(/Cost estimate|us-east-1/);
      expect(forced.status).toBe(0);
      expect(forced.stdout).toMatch(
        /^warning: region eu-west-1 cannot be priced, .*deploying anyway because --force was given: no cost estimate, no budget check/,
      );
      expect(forced.stdout).toMatch(
        /would run: AWS_PROFILE=lab npx cdk deploy -c lab=\S+\/labs\/default\.json --require-approval never/,
      );
      expect(warned.status).toBe(0);
      expect(warned.stdout).toMatch(
        /^warning \[proxylab:target-not-measured\]: target direct gets no step in suite e4: /m,
      );
      expect(warned.stdout).toMatch(/^would run: npx cdk deploy -c lab=\S+\/labs\/e4-pool-share\.json/m);
      expect(destroy.status).toBe(0);
      expect(destroy.stdout).toMatch(
        /^Dry run: would destroy stack proxylab-default if it is deployed[^]*nothing would be retained[^]*would run: .*npx cdk destroy -c lab=\S+ --force/,
      );
    },
  );

  test.concurrent.each([
    [['run', '--lab', 'labs/default.json', '--suite', 'nope'], /--suite must be one of quick, smoke/],
    [
      ['run', '--lab', 'labs/default.json', '--suite', 'smoke', '--run-id', '../etc'],
      /run id must be letters, digits/,
    ],
    [['run', '--lab', 'labs/missing.json', '--suite', 'smoke'], /missing\.json/],
    [['fetch', 'r1'], /give --lab FILE \(the deployed lab\) or --bucket NAME/],
    [['status', '--bucket', 'Not_A_Bucket'], /--bucket "Not_A_Bucket" is not a valid S3 bucket name/],
  ])('proxylab %j exits 2 before any AWS call', async (args, message) => {
    // The CLI's AWS call audit log stays empty: no call was made.
    const callLog = path.join(scratchDir('proxylab-calls-'), 'calls.jsonl');
    const res = await proxylab(cli, [...args], {
      env: { ...env, [AWS_CALL_LOG_ENV]: callLog },
      cwd: REPO_ROOT,
    });
    expect(res.stderr).toMatch(message);
    expect(res.status).toBe(2);
    expect(fs.existsSync(callLog)).toBe(false);
  });

  test.concurrent.each([
    [['run', '--lab', 'labs/default.json', '--suite', 'smoke', '--dry-run']],
    [['status', 'r1', '--lab', 'labs/default.json']],
    [['fetch', 'r1', '--bucket', 'some-results-bucket']],
    [['extend', '--lab', 'labs/default.json', '--hours', '2']],
  ])(
    'with no region anywhere, proxylab %j is a usage error (2) naming the ways to give one, before any AWS call',
    async (args) => {
      // GIVEN no AWS_REGION, no profile region, a lab without "region"
      const rest: NodeJS.ProcessEnv = { ...env };
      for (const k of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE']) delete rest[k];
      const res = await proxylab(cli, [...args], {
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

  test.concurrent('extend --hours -3 is refused before any AWS client exists', async () => {
    const res = await proxylab(cli, ['extend', '--lab', 'labs/default.json', '--hours', '-3'], {
      env,
      cwd: REPO_ROOT,
    });
    expect(res.stderr).toMatch(/--hours must be a number of hours > 0/);
    expect(res.status).toBe(2);
  });
});
