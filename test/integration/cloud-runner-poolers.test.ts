/**
 * A suite through the cloud runner's PgBouncer targets (lib/runner/runner.ts in-process) with S3 and
 * Secrets Manager on moto, a local PostgreSQL standing in for Aurora and a local 2-process
 * PgBouncer (rendered by the shared configuration module) standing in for the dedicated pooler
 * host; the pooler agent runs in-process, relaying each process's admin console to TCP and serving
 * per-process CPU. The suite is a scaled-down E4 pool sweep (25 % then 50 %) over both pool modes:
 * the sweep must go through every process's admin console (sv_active stays within the pool of each
 * step), and the fetched run must hold SHOW POOLS/STATS series and process_cpu_percent per process.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { RDSClient } from '@aws-sdk/client-rds';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { startPoolerAgent, type PoolerAgent } from '../../lib/pooler-host/agent';
import { runCloudRunner } from '../../lib/runner/runner';
import { RUNNER } from '../helpers/aws-calls/principals';
import { recordAws } from '../helpers/aws-calls/recorder';
import type { RunnerArgs } from '../../lib/aws/runner-args';
import { fetchRun } from '../../lib/operator/runs';
import { psqlAdminRows } from '../../lib/runner/pooler-targets';
import { psqlScalarQuery } from '../../lib/exec/libpq';
import { systemClock } from '../../lib/engine/ports';
import { FileSystemBlobStore } from '../../lib/results/fs-blob-store';
import { LocalPgbenchExecutor } from '../../lib/exec/pgbench-executor';
import { findFreePort } from '../../lib/local/ports-free';
import { BENCH_DB, BENCH_USER } from '../../lib/local/postgres';
import type { PoolerPaths } from '../../lib/poolers/pgbouncer/host';
import { planSchema } from '../../lib/results/schemas';
import { getSuite, type Suite } from '../../lib/suite/catalog';
import { SELF_HOSTED_TRANSACTION_POOL, SESSION_POOL } from '../../lib/suite/experiments/common';
import type { MetricsFile, StepRecord } from '../../lib/suite/types';
import { startLocalStack, type LocalStack } from '../../lib/local/stack';
import { motoClientConfig, startMoto, type MotoServer } from '../helpers/moto';
import { pgdataTemplate } from '../helpers/pg-template';

const BUCKET = 'proxylab-it-poolers';
const RUN_ID = 'cloud-poolers-1';

let stack: LocalStack;
let moto: MotoServer;
let agent: PoolerAgent | null = null;
let tmp: string;

beforeAll(async () => {
  // (started together: neither needs the other)
  [stack, moto] = await Promise.all([
    // a copy of the tests' data directory template, not an initdb (test/helpers/pg-template.ts)
    startLocalStack({ poolerProcesses: 2, poolPercent: 25, install: false, dataTemplate: pgdataTemplate() }),
    startMoto(),
  ]);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-it-poolers-'));
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await stack?.stop();
  await moto?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** E4 scaled down: 60 clients (1.5 × 40) sleeping 5 ms per transaction, 25 % then 50 %, 3 s each. */
function sweepSuite(): Suite {
  const e4 = getSuite('e4').scenarios[0];
  if (!e4) throw new Error('suite e4 has no scenario');
  return {
    name: 'it-sweep',
    description: 'pool sweep through the PgBouncer targets',
    scenarios: [
      {
        ...e4,
        name: 'it-sweep',
        script: { parts: [{ file: { name: 'sleep.sql', sql: 'SELECT pg_sleep(0.005);\n' } }] },
        jobs: 2,
        durationSec: 3,
        scale: 1,
        targets: [SELF_HOSTED_TRANSACTION_POOL, SESSION_POOL],
        poolPercents: [25, 50],
      },
    ],
  };
}

test('a pool sweep through both pool modes of a 2-process pooler: resized through every admin console, sampled into the run', async () => {
  const s3 = new S3Client({ ...motoClientConfig(moto), forcePathStyle: true });
  const secrets = new SecretsManagerClient(motoClientConfig(moto));
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  const dbSecret = await secrets.send(
    new CreateSecretCommand({
      Name: 'it-poolers-db',
      SecretString: JSON.stringify({
        username: BENCH_USER,
        password: `pw-${randomBytes(6).toString('hex')}`,
        dbname: BENCH_DB,
      }),
    }),
  );
  // the local PgBouncer's admin user (trust auth on the stand-in)
  const adminSecret = await secrets.send(
    new CreateSecretCommand({
      Name: 'it-poolers-admin',
      SecretString: JSON.stringify({
        username: 'postgres',
        password: `adm-${randomBytes(6).toString('hex')}`,
      }),
    }),
  );
  const pgb = stack.pgbouncer;
  const taken = new Set([stack.postgres.port, pgb.port]);
  const adminPorts: number[] = [];
  for (let i = 0; i < 2; i++) {
    const port = await findFreePort(taken);
    taken.add(port);
    adminPorts.push(port);
  }
  const statsPort = await findFreePort(taken);
  // The agent over the local stack's files: its socket dirs and pid files stand in for /run/proxylab-pgb.
  const proc = (i: number) => {
    const p = pgb.processes[i];
    if (!p) throw new Error(`no process ${i}`);
    return p;
  };
  const paths: PoolerPaths = {
    confDir: tmp,
    iniFile: (i) => proc(i).iniFile,
    configFile: (i) => proc(i).iniFile,
    userlist: path.join(tmp, 'userlist'),
    tlsKey: path.join(tmp, 'key'),
    tlsCert: path.join(tmp, 'crt'),
    socketDir: (i) => proc(i).admin.host,
    pidFile: (i) => proc(i).pidFile,
    logFile: (i) => proc(i).logFile,
    socketFile: (i, port) => path.join(proc(i).admin.host, `.s.PGSQL.${port}`),
  };
  agent = await startPoolerAgent({
    config: { name: 'bouncer', product: 'pgbouncer', processes: 2, listenAddr: '127.0.0.1' },
    paths,
    dataPort: pgb.port,
    adminPort: (i) => adminPorts[i] as number,
    statsPort,
  });

  const args: RunnerArgs = {
    runId: RUN_ID,
    suite: 'it-sweep',
    bucket: BUCKET,
    runnerIndex: 0,
    runnerCount: 1,
    secretArn: dbSecret.ARN ?? '',
    proxies: [],
    poolers: [
      {
        name: 'bouncer',
        product: 'pgbouncer',
        placement: 'dedicated',
        host: '127.0.0.1',
        port: pgb.port,
        adminPorts,
        statsPort,
        poolModes: ['transaction', 'session'],
        processes: 2,
        poolPercent: 25,
        maxPreparedStatements: 200,
        version: pgb.version,
        tls: false,
      },
    ],
    poolerAdminSecretArn: adminSecret.ARN ?? null,
    writerEndpoint: { host: '127.0.0.1', port: stack.postgres.port },
    region: null,
    startAt: null,
    collector: null,
    sslmode: 'disable',
    poolControl: false,
    endpointUrl: null,
    barrierTimeoutSec: 60,
    proxyTargetKind: 'rds-proxy',
    fleetLeadMs: 5_000,
    fleetPollMs: 1_000,
    testSuites: false,
    pinPeriodMs: null,
    expectVersion: null,
  };
  const lines: string[] = [];
  const suite = sweepSuite();
  // every admin statement, by the relay port it went to
  const sent = new Map<number, string[]>();
  const realAdmin = psqlAdminRows(stack.bins.psql);
  // The runner's own clients are recorded: every call is checked against the runner role (e5 has poolers).
  const out = await runCloudRunner(args, {
    s3: recordAws(new S3Client({ ...motoClientConfig(moto), forcePathStyle: true }), RUNNER),
    secrets: recordAws(new SecretsManagerClient(motoClientConfig(moto)), RUNNER),
    rds: recordAws(new RDSClient(motoClientConfig(moto)), RUNNER),
    lambda: recordAws(new LambdaClient(motoClientConfig(moto)), RUNNER),
    executor: new LocalPgbenchExecutor({ pgbench: stack.bins.pgbench, workRoot: path.join(tmp, 'work') }),
    query: psqlScalarQuery(stack.bins.psql),
    adminQuery: (conn, statements, timeoutMs) => {
      sent.set(conn.port, [...(sent.get(conn.port) ?? []), ...statements]);
      return realAdmin(conn, statements, timeoutMs);
    },
    clock: systemClock,
    write: (l) => lines.push(l),
    cpus: 2,
    pollMs: 50,
    poolerSampleMs: 300,
    suiteCatalog: (name) => (name === suite.name ? suite : getSuite(name)),
  });
  const log = lines.join('');
  expect(out.result.manifest.status).toBe('completed');
  expect(log).toMatch(/pooler bouncer \(dedicated, 2 process\(es\)\): PgBouncer \d+\.\d+\.\d+/);
  // 50 % of 40 = 20 → 10 on each of the 2 processes; the restore puts back 25 % → 5 each
  expect(log).toMatch(/pooler bouncer: default_pool_size 10 on each of 2 process\(es\) \(50 %\)/);
  expect(log).toMatch(/pooler bouncer: default_pool_size 5 on each of 2 process\(es\) \(25 %\)/);
  // the sweep, the reset and the restore reached EACH process's admin console through its relay
  for (const port of adminPorts) {
    const s = sent.get(port) ?? [];
    expect(s).toContain('SET default_pool_size = 10');
    expect(s).toContain('SET default_pool_size = 5');
    expect(s).toContain('KILL bench_session');
    expect(s).toContain('SHOW POOLS');
  }
  for (const p of pgb.processes) {
    const conf = await psqlScalarQuery(stack.bins.psql)(
      { host: p.admin.host, port: pgb.port, user: 'postgres', dbname: 'pgbouncer', env: {} },
      'SHOW CONFIG',
    );
    expect(
      conf
        .split('\n')
        .find((l) => l.startsWith('default_pool_size|'))
        ?.split('|')[1],
    ).toBe('5');
  }

  const dest = path.join(tmp, 'fetched');
  await fetchRun(s3, BUCKET, RUN_ID, new FileSystemBlobStore(dest));
  const steps: StepRecord[] = fs
    .readdirSync(path.join(dest, 'steps'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dest, 'steps', f), 'utf8')) as StepRecord);
  expect(steps.map((s) => `${s.target.name} ${s.params.poolPercent}`).sort()).toEqual([
    'bouncer-session 25',
    'bouncer-session 50',
    'bouncer-transaction 25',
    'bouncer-transaction 50',
  ]);
  for (const s of steps) {
    expect(s.status).toBe('completed');
    expect(s.result?.tps ?? 0).toBeGreaterThan(0);
    expect(typeof s.poolerSaturated).toBe('boolean'); // measured: not null
  }
  // the fetched plan says what the pooler targets were: a dedicated host of 2 processes (direct: none)
  const plan = planSchema.parse(JSON.parse(fs.readFileSync(path.join(dest, 'plan.json'), 'utf8')));
  expect(plan.targets.map((t) => [t.name, t.placement, t.settings.processes])).toEqual([
    ['direct', 'managed', undefined],
    ['bouncer-transaction', 'dedicated-host', 2],
    ['bouncer-session', 'dedicated-host', 2],
  ]);
  const metrics = JSON.parse(
    fs.readFileSync(path.join(dest, 'metrics', 'runner.json'), 'utf8'),
  ) as MetricsFile;
  const series = (name: string, dims: Record<string, string>) =>
    metrics.series.find(
      (s) =>
        s.source === 'pgbouncer' &&
        s.name === name &&
        Object.entries(dims).every(([k, v]) => s.dimensions[k] === v),
    );
  for (const [db, mode] of [
    [BENCH_DB, 'transaction'],
    [`${BENCH_DB}_session`, 'session'],
  ] as const) {
    for (const name of ['cl_active', 'sv_active', 'cl_waiting', 'total_xact_count']) {
      const s = series(name, { pooler: 'bouncer', database: db, pool_mode: mode });
      expect(s?.status).toBe('ok');
    }
  }
  for (const process of ['0', '1']) {
    const cpu = series('process_cpu_percent', { pooler: 'bouncer', process });
    expect(cpu?.unit).toBe('percent');
    expect(cpu?.points.length ?? 0).toBeGreaterThan(3);
    expect(Math.max(...(cpu?.points ?? []).map((p) => p[1]))).toBeGreaterThan(0);
  }
  // The sweep really resized the pool: sv_active (summed over both processes) stays within each
  // step's pool and exceeds the small one in the 50 % step.
  const sv = series('sv_active', { pooler: 'bouncer', database: BENCH_DB, pool_mode: 'transaction' });
  const maxIn = (s: StepRecord): number => {
    const pts = (sv?.points ?? []).filter(([at]) => at >= s.startedAt && at <= s.endedAt).map((p) => p[1]);
    return pts.length > 0 ? Math.max(...pts) : -1;
  };
  const tx = (pct: number) => {
    const s = steps.find((x) => x.target.name === 'bouncer-transaction' && x.params.poolPercent === pct);
    if (!s) throw new Error(`no transaction step at ${pct} %`);
    return s;
  };
  expect(maxIn(tx(25))).toBeGreaterThan(0);
  expect(maxIn(tx(25))).toBeLessThanOrEqual(10);
  expect(maxIn(tx(50))).toBeGreaterThan(10);
  expect(maxIn(tx(50))).toBeLessThanOrEqual(20);
}, 180_000);
