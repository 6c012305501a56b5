/**
 * The runner (lib/runner/runner.ts) end to end through fakes: an in-memory S3 behind
 * aws-sdk-client-mock (shared by every runner, as the real bucket is), mocked Secrets Manager /
 * RDS / Lambda, a fake pgbench that prints a pgbench-shaped summary for whatever argv it gets,
 * and a fake clock. Covers a two-runner split and merge, a pool sweep restored after a failing
 * step, and the DB password never reaching a written object, a log line, argv or an error.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import {
  DescribeDBProxyTargetGroupsCommand,
  ModifyDBProxyTargetGroupCommand,
  RDSClient,
  type ModifyDBProxyTargetGroupCommandInput,
} from '@aws-sdk/client-rds';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type GetObjectCommandInput,
  type ListObjectsV2CommandInput,
  type PutObjectCommandInput,
} from '@aws-sdk/client-s3';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockAws } from '../helpers/aws-calls/recorder';
import { RUNNER } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import { argvNumber } from '../../lib/runner/fleet';
import { runCloudRunner, type RunnerDeps } from '../../lib/runner/runner';
import { exitCodeFor, InfrastructureError } from '../../lib/core/errors';
import { manifestSchema, planSchema } from '../../lib/results/schemas';
import type { RunnerArgs } from '../../lib/aws/runner-args';
import type { Clock, PgbenchExecutor, PgbenchInvocation, PgbenchOutcome } from '../../lib/engine/ports';
import type { ConnectionInfo, RunManifest, StepRecord } from '../../lib/suite/types';
import { s3BodyText } from '../helpers/s3-body';

const PASSWORD = 'Sup3r-s3cret/pw+%with spaces "quoted" \\back';
const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:lab-db-AbCdEf';

const s3Mock = mockAws(S3Client, RUNNER);
const smMock = mockAws(SecretsManagerClient, RUNNER);
const rdsMock = mockAws(RDSClient, RUNNER);
const lambdaMock = mockAws(LambdaClient, RUNNER);

/** In-memory bucket behind the S3 mock. */
let store: Map<string, string>;

beforeEach(() => {
  store = new Map();
  s3Mock.on(PutObjectCommand).callsFake((input: PutObjectCommandInput) => {
    store.set(input.Key as string, s3BodyText(input.Body));
    return {};
  });
  s3Mock.on(GetObjectCommand).callsFake((input: GetObjectCommandInput) => {
    const text = store.get(input.Key as string);
    if (text === undefined)
      throw new NoSuchKey({ message: 'The specified key does not exist.', $metadata: {} });
    return {
      Body: {
        transformToString: () => Promise.resolve(text),
        transformToByteArray: () => Promise.resolve(new TextEncoder().encode(text)),
      },
    };
  });
  s3Mock.on(ListObjectsV2Command).callsFake((input: ListObjectsV2CommandInput) => ({
    Contents: [...store.keys()]
      .filter((k) => k.startsWith(input.Prefix ?? ''))
      .sort()
      .map((Key) => ({ Key })),
    IsTruncated: false,
  }));
  smMock.on(GetSecretValueCommand, { SecretId: SECRET_ARN }).resolves({
    SecretString: JSON.stringify({
      username: 'proxylab',
      password: PASSWORD,
      host: 'writer.example',
      port: 5432,
      dbname: 'postgres',
      engine: 'postgres',
    }),
  });
  lambdaMock
    .on(InvokeCommand)
    .resolves({ StatusCode: 200, Payload: new TextEncoder().encode('{}') as never });
});

afterEach(() => {
  for (const m of [s3Mock, smMock, rdsMock, lambdaMock]) m.reset();
});

/** One clock for all runners of a test: sleeping advances shared virtual time (and yields). */
function sharedClock(): Clock {
  let now = Date.parse('2026-11-21T11:00:00Z');
  return {
    now: () => new Date(now),
    sleep: async (ms) => {
      now += Math.min(ms, 50);
      await new Promise((r) => setImmediate(r));
    },
  };
}

/** pgbench-shaped stdout: tps = 100 per client, latency 10 ms. */
function pgbenchStdout(argv: readonly string[]): string {
  const clients = argvNumber(argv, '-c', '--client') ?? 1;
  const jobs = argvNumber(argv, '-j', '--jobs') ?? 1;
  const duration = argvNumber(argv, '-T', '--time') ?? 3;
  const tx = clients * 100 * duration;
  return [
    'pgbench (17.2)',
    'transaction type: <builtin: select only>',
    'scaling factor: 1',
    'query mode: simple',
    `number of clients: ${clients}`,
    `number of threads: ${jobs}`,
    'maximum number of tries: 1',
    `duration: ${duration} s`,
    `number of transactions actually processed: ${tx}`,
    'number of failed transactions: 0 (0.000%)',
    'latency average = 10.000 ms',
    'initial connection time = 2.000 ms',
    `tps = ${(clients * 100).toFixed(6)} (without initial connection time)`,
    '',
  ].join('\n');
}

class FakePgbench implements PgbenchExecutor {
  readonly invocations: PgbenchInvocation[] = [];
  private n = 0;
  constructor(private readonly failOnRun: number | null = null) {}

  workDir(name: string): Promise<string> {
    return Promise.resolve(`/tmp/fake/${name}-${this.n++}`);
  }

  run(inv: PgbenchInvocation): Promise<PgbenchOutcome> {
    // a throw below becomes a rejection, as from the real (async) executor
    return new Promise((resolve) => resolve(this.outcome(inv)));
  }

  private outcome(inv: PgbenchInvocation): PgbenchOutcome {
    this.invocations.push(inv);
    if (inv.argv.includes('-i'))
      return {
        stdout: '',
        stderr: 'done.\n',
        exitCode: 0,
        timedOut: false,
        logFiles: [],
        cpuMaxPercent: null,
      };
    const runs = this.invocations.filter((i) => !i.argv.includes('-i')).length;
    if (this.failOnRun !== null && runs === this.failOnRun) {
      // a failure whose message carries the password, as a careless library might
      throw new Error(`could not connect: password=${PASSWORD} rejected`);
    }
    return {
      stdout: pgbenchStdout(inv.argv),
      stderr: '',
      exitCode: 0,
      timedOut: false,
      logFiles: [],
      cpuMaxPercent: 35,
    };
  }
}

interface Harness {
  readonly deps: RunnerDeps;
  readonly executor: FakePgbench;
  readonly logs: string[];
  readonly queries: ConnectionInfo[];
}

function harness(clock: Clock, executor = new FakePgbench()): Harness {
  const logs: string[] = [];
  const queries: ConnectionInfo[] = [];
  const deps: RunnerDeps = {
    s3: new S3Client({ region: 'us-east-1' }),
    secrets: new SecretsManagerClient({ region: 'us-east-1' }),
    rds: new RDSClient({ region: 'us-east-1' }),
    lambda: new LambdaClient({ region: 'us-east-1' }),
    executor,
    query: (conn, sql) => {
      queries.push(conn);
      return Promise.resolve(sql === 'SHOW max_connections' ? '40' : '16.9');
    },
    clock,
    write: (line) => logs.push(line),
    pgbenchVersion: () => Promise.resolve('17.2'),
    cpus: 2,
    pollMs: 10,
  };
  return { deps, executor, logs, queries };
}

/** The runner's arguments as a run request gives them (lib/aws/run-request.ts runnerArgsFromRequest). */
function argsFor(over: Partial<RunnerArgs> = {}): RunnerArgs {
  return {
    runId: 'run-1',
    suite: 'smoke',
    bucket: 'results',
    runnerIndex: 0,
    runnerCount: 1,
    secretArn: SECRET_ARN,
    proxies: [],
    poolers: [],
    poolerAdminSecretArn: null,
    writerEndpoint: { host: 'writer.example', port: 5432 },
    region: 'us-east-1',
    startAt: null,
    collector: null,
    sslmode: 'require',
    poolControl: true,
    endpointUrl: null,
    barrierTimeoutSec: 900,
    proxyTargetKind: 'rds-proxy',
    fleetLeadMs: 5_000,
    fleetPollMs: 1_000,
    testSuites: false,
    pinPeriodMs: null,
    expectVersion: null,
    ...over,
  };
}

/** A local PgBouncer-like proxy target, no pool control. */
const PGB_PROXY: Partial<RunnerArgs> = {
  proxies: [
    {
      name: 'pgbouncer-transaction',
      endpoint: { host: 'proxy.example', port: 5432 },
      dbProxyName: 'pgbouncer-transaction',
      lab: null,
    },
  ],
  proxyTargetKind: 'pgbouncer-transaction',
  poolControl: false,
};

const COLLECTOR: RunnerArgs['collector'] = {
  functionName: 'f',
  clusterId: 'c',
  instanceIds: ['w'],
  piResourceIds: [],
  proxies: [],
};

function storedSteps(runId = 'run-1'): StepRecord[] {
  return [...store.entries()]
    .filter(([k]) => k.startsWith(`runs/${runId}/steps/`) && k.endsWith('.json'))
    .map(([, v]) => JSON.parse(v) as StepRecord);
}

describe('runners other than 0 execute the plan runner 0 stored', () => {
  test('without plan.json in S3, runner 2 waits, then fails naming the object (it never expands on its own)', async () => {
    const r1 = harness(sharedClock());
    const args = argsFor({ ...PGB_PROXY, runnerCount: 2, runnerIndex: 1, barrierTimeoutSec: 1 });
    await expect(runCloudRunner(args, r1.deps)).rejects.toThrow(
      /runner 1 \(of 2\): runner 0 did not store plan\.json within 1 s \(s3:\/\/[^)]*\/runs\/run-1\/plan\.json\)/,
    );
    expect(r1.executor.invocations).toHaveLength(0);
  });
});

describe('two runners split each step and runner 0 merges', () => {
  test('clients divided, init once, parts kept, tps summed, one manifest', async () => {
    // GIVEN two runners of the smoke suite (a local PgBouncer-like proxy target, no pool control)
    const clock = sharedClock();
    const common = { ...PGB_PROXY, runnerCount: 2, startAt: '2026-11-21T11:00:00.000Z' };
    const r0 = harness(clock);
    const r1 = harness(clock);
    // WHEN both run at once
    const [out0, out1] = await Promise.all([
      runCloudRunner(argsFor({ ...common, runnerIndex: 0 }), r0.deps),
      runCloudRunner(argsFor({ ...common, runnerIndex: 1 }), r1.deps),
    ]);
    // THEN both completed the same plan
    expect(out0.result.manifest.status).toBe('completed');
    expect(out1.result.manifest.status).toBe('completed');
    // the fake pgbench never refuses, so the merged "direct above max_connections is refused" step
    // broke: runner 0 (which judges the merged records) says so; runner 1 only completed its parts
    expect(
      storedSteps().find((s) => s.stepId === 'smoke-max-connections/direct/c60/simple/persistent/r1')?.verdict
        .held,
    ).toBe(false);
    expect([out0.allHeld, out1.allHeld]).toEqual([false, true]);
    // one plan, written by runner 0, that both executed
    const plan = planSchema.parse(JSON.parse(store.get('runs/run-1/plan.json') as string));
    expect(plan.steps.map((s) => s.stepId)).toEqual(out0.result.manifest.stepIds);
    expect(out1.result.records.map((r) => r.stepId)).toEqual(plan.steps.map((s) => s.stepId));
    const steps = storedSteps();
    expect(steps.map((s) => s.stepId).sort()).toEqual([...out0.result.manifest.stepIds].sort());
    // data loaded by runner 0 only
    expect(r0.executor.invocations.filter((i) => i.argv.includes('-i'))).toHaveLength(1);
    expect(r1.executor.invocations.filter((i) => i.argv.includes('-i'))).toHaveLength(0);
    // the 5-client churn step: runner 0 ran 3 clients, runner 1 ran 2; the merged record has 5 and their summed tps
    const churn = steps.find((s) => s.stepId === 'smoke-churn/direct/c5/simple/per-transaction/r1');
    expect(churn?.params.clients).toBe(5);
    expect(churn?.parts?.map((p) => [p.runnerId, p.clients, p.result?.tps])).toEqual([
      ['runner-0', 3, 300],
      ['runner-1', 2, 200],
    ]);
    expect(churn?.result?.tps).toBe(500);
    expect(churn?.result?.clients).toBe(5);
    const clientsRun = (h: Harness): number[] =>
      h.executor.invocations
        .filter((i) => !i.argv.includes('-i'))
        .map((i) => argvNumber(i.argv, '-c', '--client') ?? -1);
    // every step's clients add up across the two runners
    expect(clientsRun(r0).map((c, i) => c + (clientsRun(r1)[i] ?? 0))).toEqual(
      steps.length > 0
        ? out0.result.manifest.stepIds
            .map((id) => steps.find((s) => s.stepId === id))
            // a cell the target cannot run (prepared statements on a pooler of unknown version) runs no pgbench
            .filter((s) => s?.status !== 'not-available')
            .map((s) => s?.params.clients)
        : [],
    );
    // one manifest, written by runner 0, for the cloud, with both runners in its settings
    const manifest = JSON.parse(store.get('runs/run-1/manifest.json') as string) as RunManifest;
    expect(manifest).toMatchObject({
      mode: 'cloud',
      status: 'completed',
      stepsCompleted: steps.length,
      settings: { runnerCount: 2 },
    });
    // barrier objects exist per step, under this attempt
    expect(
      [...store.keys()].some((k) =>
        k.startsWith(
          'runs/run-1/fleet/2026-11-21T11_00_00.000Z/smoke-churn_direct_c5_simple_per-transaction_r1/plan.json',
        ),
      ),
    ).toBe(true);
  });
});

describe('pool sweep', () => {
  test('the lab value is restored after a failing step, and the run is reported failed', async () => {
    // GIVEN a proxy deployed at 100/50 that applies a change after one describe
    const state = { max: 100, idle: 50 };
    let pending: typeof state | null = null;
    rdsMock.on(ModifyDBProxyTargetGroupCommand).callsFake((input: ModifyDBProxyTargetGroupCommandInput) => {
      pending = {
        max: input.ConnectionPoolConfig?.MaxConnectionsPercent ?? 0,
        idle: input.ConnectionPoolConfig?.MaxIdleConnectionsPercent ?? 0,
      };
      return {};
    });
    let lagged = false;
    rdsMock.on(DescribeDBProxyTargetGroupsCommand).callsFake(() => {
      if (pending && lagged) {
        Object.assign(state, pending);
        pending = null;
        lagged = false;
      } else if (pending) lagged = true;
      return {
        TargetGroups: [
          {
            Status: pending ? 'modifying' : 'available',
            ConnectionPoolConfig: { MaxConnectionsPercent: state.max, MaxIdleConnectionsPercent: state.idle },
          },
        ],
      };
    });
    // and a pgbench that fails on the second measured step (the 50 % one)
    const h = harness(sharedClock(), new FakePgbench(2));
    // WHEN the E4 sweep (25/50/75/100 %) runs
    const run = runCloudRunner(
      argsFor({
        suite: 'e4',
        proxies: [
          {
            name: 'pool100',
            endpoint: { host: 'proxy.example', port: 5432 },
            dbProxyName: 'lab-pool100',
            lab: { maxConnectionsPercent: 100, maxIdleConnectionsPercent: 50 },
          },
        ],
      }),
      h.deps,
    );
    // THEN it fails …
    await expect(run).rejects.toThrow(/run run-1 failed/);
    // … after applying 25 % then 50 %, and the last change puts the lab's 100/50 back
    const applied = rdsMock
      .commandCalls(ModifyDBProxyTargetGroupCommand)
      .map((c) => c.args[0].input.ConnectionPoolConfig);
    expect(applied).toEqual([
      { MaxConnectionsPercent: 25, MaxIdleConnectionsPercent: 25 },
      { MaxConnectionsPercent: 50, MaxIdleConnectionsPercent: 50 },
      { MaxConnectionsPercent: 100, MaxIdleConnectionsPercent: 50 },
    ]);
    expect(state).toEqual({ max: 100, idle: 50 });
    expect(rdsMock).toHaveReceivedCommandWith(ModifyDBProxyTargetGroupCommand, {
      DBProxyName: 'lab-pool100',
      TargetGroupName: 'default',
    });
    // the finished 25 % step is in S3, the failed one is not (a resume retries it)
    expect(storedSteps().map((s) => s.params.poolPercent)).toEqual([25]);
    const manifest = JSON.parse(store.get('runs/run-1/manifest.json') as string) as RunManifest;
    expect(manifest.status).toBe('failed');
  });
});

describe('a database that restarts under a step (issue 21)', () => {
  test('the step is not measured, the run failed with the cause, the runner exits 1', async () => {
    // GIVEN a pgbench whose second measured step meets a database that is starting up again (a reboot)
    class RestartingDatabase extends FakePgbench {
      private measured = 0;
      override run(inv: PgbenchInvocation): Promise<PgbenchOutcome> {
        if (!inv.argv.includes('-i') && ++this.measured === 2) {
          this.invocations.push(inv);
          return Promise.resolve({
            stdout: '',
            stderr:
              'pgbench: error: connection to server at "writer.example" (10.0.0.5), port 5432 failed: FATAL:  the database system is starting up\n' +
              'pgbench: error: could not create connection for setup\n',
            exitCode: 1,
            timedOut: false,
            logFiles: [],
            cpuMaxPercent: 3,
          });
        }
        return super.run(inv);
      }
    }
    const h = harness(sharedClock(), new RestartingDatabase());
    // WHEN the runner runs the smoke suite against a proxy target
    const run = runCloudRunner(argsFor(PGB_PROXY), h.deps);
    // THEN it fails as an infrastructure failure (exit 1), naming the class and the SQLSTATE
    const err = await run.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InfrastructureError);
    expect((err as Error).message).toMatch(
      /^run run-1 failed: infrastructure failure: step \S+ was not measured: infrastructure: server-stopped ×1: .*SQLSTATE 57P03/,
    );
    expect(exitCodeFor(err)).toBe(1);
    // AND the step is in S3 as not measured, with no verdict; the manifest says failed (resumable)
    const steps = storedSteps();
    const unmeasured = steps.filter((r) => r.status === 'infrastructure-error');
    expect(unmeasured).toHaveLength(1);
    expect(unmeasured[0]?.verdict.held).toBeNull();
    const manifest = JSON.parse(store.get('runs/run-1/manifest.json') as string) as RunManifest;
    expect(manifest.status).toBe('failed');
    expect(manifest.stepsCompleted).toBe(steps.length - 1);
  });
});

describe('the DB password', () => {
  test('reaches pgbench and psql only through PGPASSWORD, never an object, a log line, argv or an error', async () => {
    // GIVEN a run whose second pgbench throws an error that quotes the password
    const h = harness(sharedClock(), new FakePgbench(2));
    const args = argsFor({ ...PGB_PROXY, collector: COLLECTOR });
    // WHEN
    let error: unknown = null;
    try {
      await runCloudRunner(args, h.deps);
    } catch (err) {
      error = err;
    }
    // THEN the password was used where it must be
    expect(h.executor.invocations.length).toBeGreaterThan(1);
    for (const inv of h.executor.invocations) {
      expect(inv.env.PGPASSWORD).toBe(PASSWORD);
      expect(inv.argv.join(' ')).not.toContain(PASSWORD);
    }
    expect(h.queries.every((q) => q.env?.PGPASSWORD === PASSWORD)).toBe(true);
    expect(
      h.executor.invocations
        .filter((i) => !i.argv.includes('-i'))
        .every((i) => i.env.PGSSLMODE === 'require'),
    ).toBe(true);
    // … and nowhere else: every object written, every log line, the error, the collector payload
    expect(store.size).toBeGreaterThan(2);
    const forms = [PASSWORD, JSON.stringify(PASSWORD).slice(1, -1)];
    for (const [key, text] of store)
      expect({ key, leaked: forms.some((f) => text.includes(f)) }).toEqual({ key, leaked: false });
    expect(h.logs.length).toBeGreaterThan(3);
    expect(h.logs.join('')).not.toContain(PASSWORD);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('password=*** rejected');
    for (const call of lambdaMock.commandCalls(InvokeCommand)) {
      expect(new TextDecoder().decode(call.args[0].input.Payload as Uint8Array)).not.toContain(PASSWORD);
    }
    // the failure is recorded in the manifest — redacted there too
    const manifest = store.get('runs/run-1/manifest.json') ?? '';
    expect(manifest).toContain('"status": "failed"');
  });
});

describe('collecting the run window', () => {
  test('runner 0 invokes the collector only once the metrics of the last minutes are published', async () => {
    // GIVEN a clock that jumps by whatever is slept, and a collector that notes when it is called
    let now = Date.parse('2026-11-21T11:00:00Z');
    const slept: number[] = [];
    const clock: Clock = {
      now: () => new Date(now),
      sleep: async (ms) => {
        slept.push(ms);
        now += ms;
        await new Promise((r) => setImmediate(r));
      },
    };
    const invokedAt: number[] = [];
    lambdaMock.on(InvokeCommand).callsFake(() => {
      invokedAt.push(now);
      return { StatusCode: 200, Payload: new TextEncoder().encode('{}') };
    });
    const h = harness(clock);
    const args = argsFor({ ...PGB_PROXY, collector: COLLECTOR });
    // WHEN
    const out = await runCloudRunner(args, { ...h.deps, metricsSettleMs: 300_000 });
    // THEN the collector ran once, at least 5 minutes after the window it collects ended
    expect(out.collector).toBe('invoked');
    expect(invokedAt).toHaveLength(1);
    const payload = JSON.parse(
      new TextDecoder().decode(
        lambdaMock.commandCalls(InvokeCommand)[0]?.args[0].input.Payload as Uint8Array,
      ),
    ) as { window: { end: string } };
    expect(invokedAt[0]).toBeGreaterThanOrEqual(Date.parse(payload.window.end) + 300_000);
    expect(h.logs.join('')).toMatch(/waiting \d+ s for CloudWatch and PI/);
  });
});

describe('the run lock at the end of a run (issue 20, defect 1)', () => {
  test('a release the bucket refuses is logged with the key to delete, not swallowed; the run still succeeds', async () => {
    // GIVEN a bucket that refuses the lock's deletion (a role without s3:DeleteObject on it)
    s3Mock.on(DeleteObjectCommand).rejects(
      new S3ServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'Access Denied',
      }),
    );
    const h = harness(sharedClock());
    // WHEN the run ends
    const out = await runCloudRunner(argsFor({ ...PGB_PROXY }), h.deps);
    // THEN it completed, and the log says the lock stayed, where, and how to remove it
    expect(out.result.manifest.status).toBe('completed');
    const warning = h.logs.find((l) => l.includes('could not release the run lock'));
    expect(warning).toMatch(
      /warn could not release the run lock s3:\/\/results\/runs\/run-1\/locks\/runner-0\.lock: AccessDenied: Access Denied; a resume of run run-1 on another runner is refused until it is deleted \(aws s3 rm s3:\/\/results\/runs\/run-1\/locks\/runner-0\.lock\)/,
    );
  });
});

describe('the runner software version', () => {
  test('a runner whose runner.js is not the CLI version refuses to run, naming both versions', async () => {
    // GIVEN the CLI expects version aaaa…, the runner runs bbbb…
    const h = harness(sharedClock());
    const args = argsFor({ poolControl: false, expectVersion: 'aaaaaaaaaaaaaaaa' });
    // WHEN / THEN
    await expect(
      runCloudRunner(args, { ...h.deps, softwareVersion: () => 'bbbbbbbbbbbbbbbb' }),
    ).rejects.toThrow(
      /runner software version bbbbbbbbbbbbbbbb is not the CLI's version aaaaaaaaaaaaaaaa.*proxylab deploy/,
    );
    // nothing ran, nothing was read
    expect(h.executor.invocations).toHaveLength(0);
    expect(smMock).not.toHaveReceivedCommand(GetSecretValueCommand);
  });

  test('the same version runs', async () => {
    const h = harness(sharedClock());
    const args = argsFor({ poolControl: false, expectVersion: 'aaaaaaaaaaaaaaaa' });
    const out = await runCloudRunner(args, { ...h.deps, softwareVersion: () => 'aaaaaaaaaaaaaaaa' });
    expect(out.result.manifest.status).toBe('completed');
  });
});

describe('the run names its database (issue 13)', () => {
  test('the request says RDS for PostgreSQL db.t4g.micro: manifest and plan environments say so', async () => {
    const h = harness(sharedClock());
    const args = argsFor({ ...PGB_PROXY, database: { engine: 'postgres', instanceClass: 'db.t4g.micro' } });
    const out = await runCloudRunner(args, h.deps);
    expect(out.result.manifest.environment.database).toEqual({
      engine: 'postgres',
      instanceClass: 'db.t4g.micro',
    });
    const manifest = manifestSchema.parse(JSON.parse(store.get('runs/run-1/manifest.json') as string));
    expect(manifest.environment.database).toEqual({ engine: 'postgres', instanceClass: 'db.t4g.micro' });
    const plan = planSchema.parse(JSON.parse(store.get('runs/run-1/plan.json') as string));
    expect(plan.environment.database).toEqual({ engine: 'postgres', instanceClass: 'db.t4g.micro' });
  });

  test('a request that does not say (older CLI): recorded as null, not guessed', async () => {
    const h = harness(sharedClock());
    const out = await runCloudRunner(argsFor({ ...PGB_PROXY }), h.deps);
    expect(out.result.manifest.environment.database).toBeNull();
  });
});

describe('connecting to the targets (runCloudRunnerInner phase 2)', () => {
  const ADMIN_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:lab-pooler-admin-AbCdEf';
  const POOLER: RunnerArgs['poolers'][number] = {
    name: 'bouncer',
    product: 'pgbouncer',
    placement: 'dedicated',
    host: 'pooler.example',
    port: 6432,
    adminPorts: [6500, 6501],
    statsPort: 6600,
    poolModes: ['transaction'],
    processes: 2,
    poolPercent: 25,
    maxPreparedStatements: 200,
    version: '1.25.2',
    tls: false,
  };

  test('a pooler whose admin console does not answer ends the run naming it, before anything is planned', async () => {
    // GIVEN a lab with a dedicated PgBouncer that refuses its admin connection
    smMock
      .on(GetSecretValueCommand, { SecretId: ADMIN_ARN })
      .resolves({ SecretString: JSON.stringify({ username: 'pgbouncer_admin', password: 'admin-pw' }) });
    const h = harness(sharedClock());
    const deps: RunnerDeps = {
      ...h.deps,
      adminQuery: () => Promise.reject(new Error('connection to pooler.example:6500 refused')),
    };
    // WHEN
    const run = runCloudRunner(argsFor({ poolers: [POOLER], poolerAdminSecretArn: ADMIN_ARN }), deps);
    // THEN an infrastructure error (exit code of one), naming the pooler, its admin port and the cause
    const err = await run.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InfrastructureError);
    expect((err as Error).message).toBe(
      'runner 0 (of 1): pooler bouncer (pooler.example:6500) did not answer on its admin console: connection to pooler.example:6500 refused',
    );
    expect(h.executor.invocations).toHaveLength(0);
    expect(store.has('runs/run-1/plan.json')).toBe(false);
  });

  test('a lab with poolers but no admin secret output is refused as a usage error (redeploy)', async () => {
    const h = harness(sharedClock());
    await expect(
      runCloudRunner(argsFor({ poolers: [POOLER], poolerAdminSecretArn: null }), h.deps),
    ).rejects.toThrow('the lab has self-hosted poolers but no PoolerAdminSecretArn output; redeploy');
    expect(store.has('runs/run-1/plan.json')).toBe(false);
  });
});

describe('test-only suites (lib/suite/test-suites.ts) need --test-suites on', () => {
  test('a production runner refuses test-steps as an unknown suite; with testSuites it runs its four steps', async () => {
    // GIVEN a request for the test-only suite
    const refused = harness(sharedClock());
    // WHEN a runner with production settings reads it THEN it is an unknown suite
    await expect(
      runCloudRunner(argsFor({ ...PGB_PROXY, suite: 'test-steps' }), refused.deps),
    ).rejects.toThrow(/unknown suite "test-steps"; valid suites: quick, smoke/);
    expect(refused.executor.invocations).toHaveLength(0);
    // WHEN the runner was started with --test-suites on THEN it runs it
    const h = harness(sharedClock());
    const out = await runCloudRunner(
      argsFor({ ...PGB_PROXY, suite: 'test-steps', testSuites: true }),
      h.deps,
    );
    expect(out.result.manifest).toMatchObject({
      suite: 'test-steps',
      status: 'completed',
      stepsCompleted: 4,
    });
  });
});
