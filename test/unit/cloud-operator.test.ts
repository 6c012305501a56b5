/**
 * The operator's side: cdk command lines, what destroy keeps, runner arguments from stack
 * outputs, following a run (S3 + SSM mocked). The CLI through its real entry point is
 * test/integration/cloud-operator-cli.test.ts.
 */
import * as path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, NoSuchKey, S3Client } from '@aws-sdk/client-s3';
import { GetCommandInvocationCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockAws } from '../helpers/aws-calls/recorder';
import { operator } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import {
  awsSettings,
  cdkInvocation,
  followRun,
  REPO_ROOT,
  retainedOnDestroy,
  runnerArgsFromOutputs,
  teardownCommand,
  verdictCounts,
} from '../../lib/operator/operator';
import { runExitCode } from '../../lib/suite/verdict';
import { labOutputsWith, proxyOutputs } from '../helpers/lab-outputs';
import { buildRunRequest, runnerArgsFromRequest, runRequestSchema } from '../../lib/aws/run-request';
import { PRODUCTION_RUNNER_SETTINGS } from '../../lib/aws/runner-args';
import { validateLab } from '../../lib/config';
import type { LabConfig } from '../../lib/config/types';
import { manifestWith, stepRecordWith } from '../helpers/run-files';
import { s3GetBody } from '../helpers/s3-body';
import type { RunManifest } from '../../lib/suite/types';

const s3Mock = mockAws(S3Client, operator('run'));
const ssmMock = mockAws(SSMClient, operator('run'));
afterEach(() => {
  s3Mock.reset();
  ssmMock.reset();
});

function lab(over: Record<string, unknown> = {}): LabConfig {
  const r = validateLab({
    name: 'demo',
    aurora: { engineVersion: '16.9', instanceClass: 'db.t4g.medium', performanceInsights: true },
    proxies: [{ name: 'pool50', maxConnectionsPercent: 50, maxIdleConnectionsPercent: 20 }],
    runners: { instanceType: 'c7g.large', count: 2 },
    ...over,
  });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.lab;
}

const OUTPUTS = labOutputsWith({
  runnerInstanceIds: ['i-0aaaaaaaaaaaaaaaa', 'i-0bbbbbbbbbbbbbbbb'],
  ...proxyOutputs('demo', 'pool50'),
});

describe('cdk command lines', () => {
  test('deploy: absolute lab path, no approval prompt, outputs file; profile and region as env', () => {
    const inv = cdkInvocation(
      'deploy',
      'labs/default.json',
      { profile: 'lab', region: 'eu-west-1' },
      '/home/me/proxylab',
    );
    expect(inv.command).toBe('npx');
    expect(inv.args).toEqual([
      'cdk',
      'deploy',
      '-c',
      'lab=/home/me/proxylab/labs/default.json',
      '--require-approval',
      'never',
      '--outputs-file',
      path.join(REPO_ROOT, 'cdk.out', 'outputs-default.json'),
    ]);
    expect(inv.cwd).toBe(REPO_ROOT);
    expect(inv.env).toEqual({
      AWS_PROFILE: 'lab',
      AWS_REGION: 'eu-west-1',
      AWS_DEFAULT_REGION: 'eu-west-1',
      CDK_DEFAULT_REGION: 'eu-west-1',
    });
    expect(cdkInvocation('destroy', '/x/lab.json', {}).args).toEqual([
      'cdk',
      'destroy',
      '-c',
      'lab=/x/lab.json',
      '--force',
    ]);
    expect(teardownCommand('labs/e1.json', { profile: 'lab' })).toBe(
      'npx proxylab destroy --lab labs/e1.json --profile lab',
    );
  });

  test.each([
    [{ region: 'eu-west-1' }, {}, { region: 'eu-west-1' }],
    [{}, { AWS_REGION: 'us-west-2' }, {}], // the SDK reads the environment itself
    [{}, {}, { region: 'ap-south-1' }], // the lab's hint as the last resort
  ])('region from flags %j and env %j → %j', (flags, env, expected) => {
    expect(awsSettings(flags, lab({ region: 'ap-south-1' }), env)).toEqual(expected);
  });

  test('bad region or profile is refused before anything runs', () => {
    expect(() => awsSettings({ region: 'Frankfurt' }, null, {})).toThrow(
      /--region must look like us-east-1, got "Frankfurt"/,
    );
    expect(() => awsSettings({ profile: 'a b' }, null, {})).toThrow(
      /--profile "a b" is not a valid profile name/,
    );
  });

  test('destroy says what the lab keeps', () => {
    expect(retainedOnDestroy(lab())).toEqual([]);
    const kept = retainedOnDestroy(
      lab({
        results: { retainOnDestroy: true, expireAfterDays: 7 },
        aurora: { engineVersion: '16.9', instanceClass: 'db.t4g.medium', snapshotOnDestroy: true },
      }),
    );
    expect(kept).toHaveLength(2);
    expect(kept[0]).toMatch(/results bucket.*7-day expiry/);
    expect(kept[1]).toMatch(/final Aurora cluster snapshot/);
  });
});

describe('runner arguments from the stack outputs', () => {
  test('proxies carry their RDS name and the lab pool values; the collector gets the DB proxy names', () => {
    const args = runnerArgsFromOutputs(OUTPUTS, lab(), {
      runId: 'r1',
      suite: 'e4',
      region: 'eu-west-1',
      startAt: '2026-11-21T11:00:00.000Z',
    });
    expect(args.proxies).toEqual([
      {
        name: 'pool50',
        endpoint: { host: 'demo-pool50.proxy-x.eu-west-1.rds.amazonaws.com', port: 5432 },
        dbProxyName: 'demo-pool50',
        lab: { maxConnectionsPercent: 50, maxIdleConnectionsPercent: 20 },
        // what the runners record as its effective settings: the lab's (none) and proxylab's
        settings: {},
        kitSettings: {
          MaxConnectionsPercent: 50,
          MaxIdleConnectionsPercent: 20,
          ConnectionBorrowTimeout: 120,
          RequireTLS: true,
          DebugLogging: false,
          DefaultAuthScheme: 'NONE',
          IAMAuth: 'DISABLED',
        },
      },
    ]);
    expect(args.collector).toEqual({
      functionName: 'demo-collector',
      clusterId: 'demo-cluster',
      instanceIds: ['demo-writer'],
      piResourceIds: ['db-ABC'],
      proxies: ['demo-pool50'],
      instanceClasses: { 'demo-writer': 'db.t4g.medium' },
      engine: 'aurora-postgresql',
    });
    // the run environment will name the database the stack outputs describe
    expect(args.database).toEqual({ engine: 'aurora-postgresql', instanceClass: 'db.r6g.large' });
    // and the runner reads back exactly that from the run request (JSON in S3), with the production
    // settings the request does not carry: TLS required, pool control on, proxies as RDS Proxies
    const json = JSON.stringify(buildRunRequest(args, 2));
    expect(json).not.toMatch(/sslmode|poolControl|proxyTargetKind|endpointUrl/);
    const request = runRequestSchema.parse(JSON.parse(json));
    const runner = runnerArgsFromRequest(request, 0);
    expect(runner).toEqual({ ...args, ...PRODUCTION_RUNNER_SETTINGS, runnerIndex: 0, runnerCount: 2 });
    expect([runner.sslmode, runner.poolControl, runner.proxyTargetKind]).toEqual([
      'require',
      true,
      'rds-proxy',
    ]);
  });

  test('no Performance Insights ids when the lab turned PI off', () => {
    const off = lab({
      aurora: { engineVersion: '16.9', instanceClass: 'db.t4g.medium', performanceInsights: false },
    });
    expect(
      runnerArgsFromOutputs(OUTPUTS, off, { runId: 'r', suite: 'quick', region: null, startAt: 'x' })
        .collector?.piResourceIds,
    ).toEqual([]);
  });
});

describe('followRun', () => {
  const since = new Date('2026-11-21T11:00:00Z');
  function manifest(status: string, endedAt: string | null, stepIds = ['a', 'b']): string {
    return JSON.stringify(
      manifestWith({
        runId: 'r1',
        suite: 'quick',
        mode: 'cloud',
        status: status as RunManifest['status'],
        startedAt: '2026-11-21T10:59:00Z',
        endedAt,
        stepIds,
      }),
    );
  }
  const deps = (lines: string[]) => ({
    s3: new S3Client({ region: 'us-east-1' }),
    ssm: new SSMClient({ region: 'us-east-1' }),
    bucket: 'b',
    runId: 'r1',
    sent: [
      {
        instanceId: 'i-0aaaaaaaaaaaaaaaa',
        runnerIndex: 0,
        commandId: '11111111-2222-3333-4444-555555555555',
      },
    ],
    since,
    pollMs: 1000,
    print: (l: string) => lines.push(l),
    sleep: () => Promise.resolve(),
    now: () => new Date('2026-11-21T11:01:00Z'),
  });

  test('prints progress until the manifest of THIS attempt ends (an older interrupted one does not count)', async () => {
    s3Mock
      .on(GetObjectCommand, { Key: 'runs/r1/manifest.json' })
      .resolvesOnce({
        Body: s3GetBody(manifest('interrupted', '2026-11-21T10:30:00Z')),
      } as never)
      .resolvesOnce({
        Body: s3GetBody(manifest('running', null)),
      } as never)
      .resolves({
        Body: s3GetBody(manifest('completed', '2026-11-21T11:05:00Z')),
      } as never);
    s3Mock
      .on(ListObjectsV2Command)
      .resolvesOnce({ Contents: [] })
      .resolvesOnce({ Contents: [{ Key: 'runs/r1/steps/a.json' }] })
      .resolves({ Contents: [{ Key: 'runs/r1/steps/a.json' }, { Key: 'runs/r1/steps/b.json' }] });
    ssmMock.on(GetCommandInvocationCommand).resolves({ Status: 'InProgress', StatusDetails: 'InProgress' });
    const lines: string[] = [];
    const p = await followRun(deps(lines));
    expect(p.status).toBe('completed');
    expect(lines[lines.length - 1]).toMatch(/^r1 \[quick\] completed: 2\/2 steps/);
    expect(lines.some((l) => /running: 1\/2 steps, elapsed 2:00, ETA 2:00/.test(l))).toBe(true);
  });

  test('a runner command that failed before the run ended is an error with its stderr', async () => {
    s3Mock.on(GetObjectCommand).rejects(new NoSuchKey({ message: 'no', $metadata: {} }));
    s3Mock.on(ListObjectsV2Command).resolves({ Contents: [] });
    ssmMock.on(GetCommandInvocationCommand).resolves({
      Status: 'Failed',
      StatusDetails: 'Failed',
      StandardErrorContent: 'proxylab runner not installed at /opt/proxylab/runner.js',
    });
    await expect(followRun(deps([]))).rejects.toThrow(
      /runner command ended before the run did: i-0aaaaaaaaaaaaaaaa Failed: proxylab runner not installed/,
    );
  });
});

describe('verdictCounts: `proxylab run` counts scenario comparisons like `proxylab local`', () => {
  function store(scenarioHeld: boolean | null): void {
    const steps = ['a/direct/r1', 'a/pgbouncer-transaction/r1'].map((stepId) =>
      stepRecordWith({ runId: 'r1', stepId, verdict: { expected: 'succeeds', observed: 'ok', held: true } }),
    );
    s3Mock.on(ListObjectsV2Command).resolves({
      Contents: steps.map((r) => ({ Key: `runs/r1/steps/${r.stepId.replace(/\//g, '_')}.json` })),
    });
    for (const r of steps)
      s3Mock
        .on(GetObjectCommand, { Key: `runs/r1/steps/${r.stepId.replace(/\//g, '_')}.json` })
        .resolves({ Body: s3GetBody(JSON.stringify(r)) } as never);
    const manifest = manifestWith({
      runId: 'r1',
      mode: 'cloud',
      stepIds: steps.map((r) => r.stepId),
      stepsCompleted: 2,
      scenarioVerdicts: [
        { scenario: 'a', expected: 'pooled -C ≥ 3 × direct -C', observed: '1.1 ×', held: scenarioHeld },
      ],
    });
    s3Mock
      .on(GetObjectCommand, { Key: 'runs/r1/manifest.json' })
      .resolves({ Body: s3GetBody(JSON.stringify(manifest)) } as never);
  }

  test('every step held but a comparison broke: 1 broken, exit code 1', async () => {
    store(false);
    const totals = await verdictCounts(new S3Client({ region: 'us-east-1' }), 'b', 'r1');
    expect(totals).toEqual({ held: 2, broke: 1, informational: 0, comparisonsBroke: 1 });
    expect(runExitCode(true, totals)).toBe(1);
  });

  test('every step and comparison held: exit code 0; a run that did not complete: 1', async () => {
    store(true);
    const totals = await verdictCounts(new S3Client({ region: 'us-east-1' }), 'b', 'r1');
    expect(totals).toEqual({ held: 3, broke: 0, informational: 0, comparisonsBroke: 0 });
    expect(runExitCode(true, totals)).toBe(0);
    expect(runExitCode(false, totals)).toBe(1);
  });

  test('a malformed step record in S3 is an error naming the object and field', async () => {
    store(true);
    s3Mock.on(GetObjectCommand, { Key: 'runs/r1/steps/a_direct_r1.json' }).resolves({
      Body: s3GetBody(JSON.stringify({ ...stepRecordWith({}), status: 'done' })),
    } as never);
    await expect(verdictCounts(new S3Client({ region: 'us-east-1' }), 'b', 'r1')).rejects.toMatchObject({
      code: 'run-file-invalid',
      file: 's3://b/runs/r1/steps/a_direct_r1.json',
      field: 'status',
    });
  });
});
