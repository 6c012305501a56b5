/**
 * The cloud disruption path end to end (issue 22): the cloud runner (lib/runner/runner.ts, in-process)
 * runs the `failover` suite's Aurora scenario, scaled down, with every AWS call on moto — S3, Secrets
 * Manager and RDS: an Aurora cluster of a writer and a reader, which moto fails over when asked
 * (FailoverDBCluster flips IsClusterWriter). A local PostgreSQL stands in for the writer endpoint and
 * PgBouncer's transaction pool for an RDS Proxy; when the runner's FailoverDBCluster reaches moto,
 * the stand-in PostgreSQL is restarted (fast), as a real failover drops the writer's sessions. Every
 * call the runner makes is checked against the runner role of labs/failover-aurora.json.
 *
 * Asserted: the runner says what it will inject; the API call, its answer and the writer change
 * polled from DescribeDBClusters are events of every step, on the run's clock, in order, around T0;
 * direct clients saw the restart; nothing acknowledged is lost; the fetched run's report draws the
 * timeline with those events as markers.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { LambdaClient } from '@aws-sdk/client-lambda';
import {
  CreateDBClusterCommand,
  CreateDBInstanceCommand,
  DescribeDBClustersCommand,
  FailoverDBClusterCommand,
  RDSClient,
} from '@aws-sdk/client-rds';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { runnerArgsFromRequest } from '../../lib/aws/run-request';
import { systemClock } from '../../lib/engine/ports';
import { psqlScalarQuery } from '../../lib/exec/libpq';
import { LocalPgbenchExecutor } from '../../lib/exec/pgbench-executor';
import { startLocalStack, type LocalStack } from '../../lib/local/stack';
import { fetchRun } from '../../lib/operator/runs';
import { writeReport } from '../../lib/report';
import { FileSystemBlobStore } from '../../lib/results/fs-blob-store';
import { runCloudRunner } from '../../lib/runner/runner';
import { getSuite, type Suite } from '../../lib/suite/catalog';
import {
  defaultClientTimeouts,
  type DisruptionProbe,
  type DisruptionResult,
} from '../../lib/suite/disruption';
import type { StepRecord } from '../../lib/suite/types';
import { recordAws } from '../helpers/aws-calls/recorder';
import { createDbSecret, LOCAL_STAND_IN, localRunRequest } from '../helpers/cloud-run-request';
import { motoClientConfig, startMoto, type MotoServer } from '../helpers/moto';
import { pgdataTemplate } from '../helpers/pg-template';

const BUCKET = 'proxylab-it-disruption';
const RUN_ID = 'cloud-disruption-1';
const CLUSTER = 'failover-aurora-cluster';
const RUNNER_AURORA = { kind: 'runner', lab: 'failover-aurora' } as const;
/** How long the stand-in writer is down in a failover: ten of the probe's 100 ms intervals. */
const WRITER_DOWN_MS = 1000;

let stack: LocalStack;
let moto: MotoServer;
let tmp: string;

beforeAll(async () => {
  // (started together: neither needs the other)
  // (the cluster: a copy of the tests' data directory template, not an initdb: test/helpers/pg-template.ts)
  [stack, moto] = await Promise.all([
    startLocalStack({
      install: false,
      dataTemplate: pgdataTemplate(),
      // the stand-in pool's setting, visibly: back 2 s after a failed login (PgBouncer's default, 15 s,
      // would outlast this test's 6 s window; test/integration/local-variants.test.ts measures that)
      poolers: [
        { product: 'pgbouncer', processes: 1, instance: 'pgbouncer', settings: { server_login_retry: 2 } },
      ],
    }),
    startMoto(),
  ]);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-it-disruption-'));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await moto?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** The failover suite's Aurora scenario at test scale: 1.5 s warm-up, 6 s window, 2 repetitions. */
function failoverSuite(): Suite {
  const aurora = getSuite('failover').scenarios.find((s) => s.name === 'failover-aurora');
  if (aurora?.probe?.kind !== 'disruption')
    throw new Error('the failover suite has no failover-aurora probe scenario');
  const probe: DisruptionProbe = {
    ...aurora.probe,
    warmupSec: 1.5,
    recoverySec: 6,
    clientTimeouts: defaultClientTimeouts(6),
  };
  return {
    name: 'it-failover',
    description: 'failover-aurora, scaled down',
    scenarios: [{ ...aurora, probe, durationSec: 7.5, repetitions: 2 }],
  };
}

/** An Aurora cluster in moto: a writer and a reader, the lab's identifiers (writer first). */
async function auroraInMoto(rds: RDSClient): Promise<string[]> {
  await rds.send(
    new CreateDBClusterCommand({
      DBClusterIdentifier: CLUSTER,
      Engine: 'aurora-postgresql',
      MasterUsername: 'bench',
      MasterUserPassword: `pw-${randomBytes(6).toString('hex')}`,
    }),
  );
  const ids = [`${CLUSTER}-writer`, `${CLUSTER}-reader1`];
  for (const id of ids)
    await rds.send(
      new CreateDBInstanceCommand({
        DBInstanceIdentifier: id,
        DBClusterIdentifier: CLUSTER,
        Engine: 'aurora-postgresql',
        DBInstanceClass: 'db.t4g.medium',
      }),
    );
  const c = await rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: CLUSTER }));
  const members = c.DBClusters?.[0]?.DBClusterMembers ?? [];
  return [
    ...members.filter((m) => m.IsClusterWriter).map((m) => m.DBInstanceIdentifier as string),
    ...members.filter((m) => !m.IsClusterWriter).map((m) => m.DBInstanceIdentifier as string),
  ];
}

function disruptionOf(r: StepRecord): DisruptionResult {
  if (r.probe?.kind !== 'disruption') throw new Error(`${r.stepId}: no disruption result (${r.note ?? ''})`);
  return r.probe;
}

test('an Aurora failover through the cloud runner: the API call, the writer change and the clients on one clock, rendered as a timeline', async () => {
  // GIVEN moto's S3, secret and Aurora cluster (writer + reader), and a request naming them
  const s3Setup = new S3Client({ ...motoClientConfig(moto), forcePathStyle: true });
  await s3Setup.send(new CreateBucketCommand({ Bucket: BUCKET }));
  const setupRds = new RDSClient(motoClientConfig(moto));
  const instanceIds = await auroraInMoto(setupRds);
  expect(instanceIds).toHaveLength(2);
  const secretArn = await createDbSecret(
    moto,
    'it-disruption-db',
    stack.postgres.port,
    `pw-${randomBytes(6).toString('hex')}`,
  );
  const request = localRunRequest({
    runId: RUN_ID,
    bucket: BUCKET,
    secretArn,
    postgresPort: stack.postgres.port,
    proxyPort: stack.pgbouncer.port,
    runnerCount: 1,
  });
  const args = {
    ...runnerArgsFromRequest(request, 0, LOCAL_STAND_IN),
    suite: 'it-failover',
    databaseResources: { engine: 'aurora-postgresql', clusterId: CLUSTER, instanceIds },
  } as const;
  // The runner's RDS client, recorded as the lab's runner role; a failover that reaches moto also
  // restarts the stand-in writer, as AWS's drops the writer's sessions. The writer stays down for
  // WRITER_DOWN_MS, as a real failover's writer does for seconds: a bare fast restart on a tmpfs is
  // over in under the probe's 100 ms interval, and a client that connects for each write can then
  // miss it (it did once: a direct step saw no error), while the cloud rules judge
  // direct clients by the outage they see (lib/suite/experiments/disruptions.ts CLOUD_FAILOVER_RULES).
  const rds = recordAws(new RDSClient(motoClientConfig(moto)), RUNNER_AURORA);
  const restarts: Array<Promise<void>> = [];
  rds.middlewareStack.add(
    (next) => async (input) => {
      const out = await next(input);
      if ((input.input as { TargetDBInstanceIdentifier?: unknown }).TargetDBInstanceIdentifier !== undefined)
        restarts.push(
          stack.postgres
            .stopPlanned('fast')
            .then(() => new Promise((r) => setTimeout(r, WRITER_DOWN_MS)))
            .then(() => stack.postgres.start()),
        );
      return out;
    },
    { step: 'initialize', name: 'itFailoverRestartsTheWriter' },
  );
  const suite = failoverSuite();
  const lines: string[] = [];
  // WHEN the runner runs it
  const out = await runCloudRunner(args, {
    s3: recordAws(new S3Client({ ...motoClientConfig(moto), forcePathStyle: true }), RUNNER_AURORA),
    secrets: recordAws(new SecretsManagerClient(motoClientConfig(moto)), RUNNER_AURORA),
    rds,
    lambda: recordAws(new LambdaClient(motoClientConfig(moto)), RUNNER_AURORA),
    executor: new LocalPgbenchExecutor({ pgbench: stack.bins.pgbench, workRoot: path.join(tmp, 'work') }),
    query: psqlScalarQuery(stack.bins.psql),
    clock: systemClock,
    write: (l) => lines.push(l),
    cpus: 2,
    pollMs: 200,
    // (moto's events are all there at the first read: two reads agree, 0.2 s apart, not 30 s)
    eventReadDelayMs: 200,
    suiteCatalog: (name) => (name === suite.name ? suite : getSuite(name)),
  });
  await Promise.all(restarts);
  const log = lines.join('');

  // THEN the run completed, the cluster failed over twice (once per repetition, to the reader of the moment)
  expect(out.result.manifest.status).toBe('completed');
  expect(restarts).toHaveLength(2);
  expect(log).toMatch(/FailoverDBCluster failover-aurora-cluster → failover-aurora-cluster-reader1/);
  expect(log).toMatch(/FailoverDBCluster failover-aurora-cluster → failover-aurora-cluster-writer/);
  const after = await setupRds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: CLUSTER }));
  expect(after.DBClusters?.[0]?.DBClusterMembers?.find((m) => m.IsClusterWriter)?.DBInstanceIdentifier).toBe(
    instanceIds[0],
  );
  void FailoverDBClusterCommand; // (the call the middleware above recognizes by its target)

  // the fetched run: every step measured, with the events on the run's clock
  const dest = path.join(tmp, 'fetched');
  await fetchRun(
    new S3Client({ ...motoClientConfig(moto), forcePathStyle: true }),
    BUCKET,
    RUN_ID,
    new FileSystemBlobStore(dest),
  );
  const steps: StepRecord[] = fs
    .readdirSync(path.join(dest, 'steps'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dest, 'steps', f), 'utf8')) as StepRecord);
  // direct and the proxy stand-in, both connect modes, 2 repetitions
  expect(steps.map((s) => `${s.target.name} ${s.params.connect}`).sort()).toEqual(
    [
      'direct persistent',
      'direct per-transaction',
      'pgbouncer-transaction persistent',
      'pgbouncer-transaction per-transaction',
    ]
      .flatMap((x) => [x, x])
      .sort(),
  );
  for (const s of steps) {
    expect(s.status).toBe('completed');
    const d = disruptionOf(s);
    // the hard verdict: nothing acknowledged is missing, every unknown outcome resolved
    expect(d.writes.acknowledgedMissing).toBe(0);
    expect(d.writes.unknownCommitted + d.writes.unknownNotCommitted).toBe(d.writes.unknown);
    expect(d.writes.acknowledged).toBeGreaterThan(20);
    // the API call, its answer and the writer poll, in this order, at or after T0
    const names = d.events.map((e) => `${e.source}:${e.name}`);
    expect(names.slice(0, 2)).toEqual(['api:api-call', 'api:api-answered']);
    expect(names).toContain('writer-poll:writer-changed');
    const at = (n: string) => d.events.find((e) => e.name === n)?.atMs ?? NaN;
    expect(at('api-call')).toBeGreaterThanOrEqual(0);
    expect(at('api-call')).toBeLessThan(1000);
    expect(at('writer-changed')).toBeGreaterThanOrEqual(at('api-answered'));
    expect(d.t0).not.toBeNull();
  }
  // direct clients saw the writer go away (held verdict: errors expected)
  const direct = steps.filter((s) => s.target.name === 'direct');
  expect(direct.some((s) => disruptionOf(s).errors.length > 0)).toBe(true);
  expect(direct.map((s) => s.verdict.held)).not.toContain(false);
  // repetitions alternate the target order (plan order of the first step of each group)
  const plan = JSON.parse(fs.readFileSync(path.join(dest, 'plan.json'), 'utf8')) as {
    steps: Array<{ stepId: string; target: { name: string } }>;
  };
  const firstOf = (rep: string) => plan.steps.find((s) => s.stepId.endsWith(`/${rep}`))?.target.name;
  expect(firstOf('r1')).not.toBe(firstOf('r2'));

  // the report draws the timeline of the disruption with the events as markers
  const report = writeReport(dest, { now: new Date('2026-11-27T00:00:00Z') });
  const html = fs.readFileSync(report.htmlPath, 'utf8');
  expect(html).toMatch(/data-chart="timeline" data-repetition="1"/);
  expect(html).toMatch(/dashed lines: the disruption's events, T0 [^:]+:[^<]*api-call[^<]*writer-changed/);
  expect(fs.readFileSync(report.mdPath, 'utf8')).toMatch(/failover-aurora/);
}, 240_000);
