/**
 * The real `proxylab collect` CLI against moto_server: metric data put into moto's CloudWatch for
 * an Aurora instance and an RDS Proxy comes back, with the planned statistics, from moto's S3 as
 * runs/<runId>/metrics/cloudwatch.json. Performance Insights is disabled (moto has no PI API).
 * Each test collects its own run (its own run id, instance and destination): they run side by
 * side (test.concurrent).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CloudWatchClient, PutMetricDataCommand, type MetricDatum } from '@aws-sdk/client-cloudwatch';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { MetricSeries, MetricsFile } from '../../lib/suite/types';
import { runCli } from '../helpers/cli';
import { motoClientConfig, motoEnv, startMoto, type MotoServer } from '../helpers/moto';

const BUCKET = 'proxylab-results-it';
const RUN_ID = 'it-collect-run';

let moto: MotoServer;
let s3: S3Client;
let cloudwatch: CloudWatchClient;

// A 5-minute window that ended a few minutes ago, on whole minutes.
const START_MS = Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000;
const at = (minute: number, second = 0): Date => new Date(START_MS + minute * 60_000 + second * 1000);
const iso = (minute: number): string => at(minute).toISOString();

beforeAll(async () => {
  moto = await startMoto();
  s3 = new S3Client({ ...motoClientConfig(moto), forcePathStyle: true });
  cloudwatch = new CloudWatchClient(motoClientConfig(moto));
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));

  const instance = [{ Name: 'DBInstanceIdentifier', Value: 'lab-writer' }];
  const proxy = [{ Name: 'ProxyName', Value: 'lab-proxy' }];
  const datum = (
    MetricName: string,
    Dimensions: typeof instance,
    Timestamp: Date,
    Value: number,
  ): MetricDatum => ({
    MetricName,
    Dimensions,
    Timestamp,
    Value,
  });
  await cloudwatch.send(
    new PutMetricDataCommand({
      Namespace: 'AWS/RDS',
      MetricData: [
        datum('CPUUtilization', instance, at(1, 10), 10),
        datum('CPUUtilization', instance, at(2, 10), 20),
        datum('CPUUtilization', instance, at(3, 10), 30),
        // two samples in one minute: Average 150, Maximum 200
        datum('DatabaseConnections', instance, at(2, 5), 100),
        datum('DatabaseConnections', instance, at(2, 35), 200),
        // two proxy nodes reporting in the same minute: Sum 12
        datum('ClientConnections', proxy, at(1, 5), 5),
        datum('ClientConnections', proxy, at(1, 6), 7),
        datum('DatabaseConnectionsCurrentlySessionPinned', proxy, at(2, 1), 3),
        datum('DatabaseConnectionsCurrentlySessionPinned', proxy, at(2, 2), 4),
        // latency: Average of 800 and 1200 µs
        datum('DatabaseConnectionsBorrowLatency', proxy, at(3, 1), 800),
        datum('DatabaseConnectionsBorrowLatency', proxy, at(3, 2), 1200),
        // outside the window: must not appear
        datum('CPUUtilization', instance, at(30), 99),
      ],
    }),
  );
});

afterAll(async () => {
  s3?.destroy();
  cloudwatch?.destroy();
  await moto?.stop();
});

async function readMetrics(key: string): Promise<MetricsFile> {
  const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  expect(out.ContentType).toBe('application/json');
  return JSON.parse(await out.Body!.transformToString()) as MetricsFile;
}

function series(file: MetricsFile, name: string, stat: string, dimension: string): MetricSeries {
  const found = file.series.find(
    (s) => s.name === name && s.stat === stat && Object.values(s.dimensions).includes(dimension),
  );
  if (!found)
    throw new Error(
      `no ${name} ${stat} for ${dimension} in ${file.series.map((s) => `${s.name}/${s.stat}`).join(', ')}`,
    );
  return found;
}

test.concurrent(
  'proxylab collect reads moto CloudWatch and writes cloudwatch.json to moto S3 with the values put in',
  async () => {
    // WHEN
    const result = await runCli(
      [
        'collect',
        '--run-id',
        RUN_ID,
        '--start',
        iso(0),
        '--end',
        iso(5),
        '--cluster-id',
        'lab-cluster',
        '--instance-id',
        'lab-writer',
        '--proxy',
        'lab-proxy',
        '--no-pi',
        '--bucket',
        BUCKET,
      ],
      motoEnv(moto),
    );
    // THEN
    expect(result.stderr).not.toMatch(/proxylab failed|error:/);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`s3://${BUCKET}/runs/${RUN_ID}/metrics/cloudwatch.json`);
    expect(result.stdout).toContain('pi: skipped');

    const file = await readMetrics(`runs/${RUN_ID}/metrics/cloudwatch.json`);
    expect(file).toMatchObject({ schemaVersion: 1, runId: RUN_ID, window: { start: iso(0), end: iso(5) } });
    expect(series(file, 'CPUUtilization', 'Average', 'lab-writer')).toMatchObject({
      source: 'cloudwatch',
      unit: 'Percent',
      dimensions: { DBInstanceIdentifier: 'lab-writer' },
      status: 'ok',
      points: [
        [iso(1), 10],
        [iso(2), 20],
        [iso(3), 30],
      ],
    });
    expect(series(file, 'DatabaseConnections', 'Average', 'lab-writer').points).toEqual([[iso(2), 150]]);
    expect(series(file, 'DatabaseConnections', 'Maximum', 'lab-writer').points).toEqual([[iso(2), 200]]);
    expect(series(file, 'ClientConnections', 'Sum', 'lab-proxy')).toMatchObject({
      dimensions: { ProxyName: 'lab-proxy' },
      points: [[iso(1), 12]],
    });
    expect(series(file, 'DatabaseConnectionsCurrentlySessionPinned', 'Sum', 'lab-proxy').points).toEqual([
      [iso(2), 7],
    ]);
    expect(series(file, 'DatabaseConnectionsBorrowLatency', 'Average', 'lab-proxy')).toMatchObject({
      unit: 'Microseconds',
      points: [[iso(3), 1000]],
    });
    // nothing was put for FreeableMemory: recorded as no-data, not as zeros
    expect(series(file, 'FreeableMemory', 'Minimum', 'lab-writer')).toMatchObject({
      status: 'no-data',
      points: [],
    });
    // PI disabled: no pi.json
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `runs/${RUN_ID}/` }));
    expect((listed.Contents ?? []).map((o) => o.Key)).toEqual([`runs/${RUN_ID}/metrics/cloudwatch.json`]);
  },
);

test.concurrent(
  '--engine postgres reads the RDS for PostgreSQL instance metrics (moto), none of the Aurora-only ones',
  async () => {
    // GIVEN an RDS for PostgreSQL instance's own metrics in moto's CloudWatch
    const rds = [{ Name: 'DBInstanceIdentifier', Value: 'pocket-db' }];
    await cloudwatch.send(
      new PutMetricDataCommand({
        Namespace: 'AWS/RDS',
        MetricData: [
          // two samples in one minute: Minimum 18 GiB
          { MetricName: 'FreeStorageSpace', Dimensions: rds, Timestamp: at(1, 5), Value: 19 * 2 ** 30 },
          { MetricName: 'FreeStorageSpace', Dimensions: rds, Timestamp: at(1, 35), Value: 18 * 2 ** 30 },
          // seconds, as RDS publishes them: Average 0.002
          { MetricName: 'ReadLatency', Dimensions: rds, Timestamp: at(2, 5), Value: 0.001 },
          { MetricName: 'ReadLatency', Dimensions: rds, Timestamp: at(2, 6), Value: 0.003 },
          { MetricName: 'CPUCreditBalance', Dimensions: rds, Timestamp: at(3, 5), Value: 144 },
          // Unlimited mode: surplus credits spent (a level) and charged (Sum over the minute: 1.5 + 2)
          { MetricName: 'CPUSurplusCreditBalance', Dimensions: rds, Timestamp: at(4, 5), Value: 30 },
          { MetricName: 'CPUSurplusCreditsCharged', Dimensions: rds, Timestamp: at(4, 5), Value: 1.5 },
          { MetricName: 'CPUSurplusCreditsCharged', Dimensions: rds, Timestamp: at(4, 35), Value: 2 },
        ],
      }),
    );
    const dir = await mkdtemp(path.join(tmpdir(), 'collect-rds-'));
    try {
      const runDir = path.join(dir, 'runs', 'rds-run');
      // WHEN
      const result = await runCli(
        [
          'collect',
          '--run-id',
          'rds-run',
          '--start',
          iso(0),
          '--end',
          iso(5),
          '--cluster-id',
          'pocket-db',
          '--instance-id',
          'pocket-db',
          '--engine',
          'postgres',
          '--instance-class',
          'pocket-db=db.t4g.micro',
          '--no-pi',
          '--out',
          runDir,
        ],
        motoEnv(moto),
      );
      // THEN
      expect({ code: result.code, err: result.code === 0 ? '' : result.stderr }).toEqual({
        code: 0,
        err: '',
      });
      const file = JSON.parse(
        await readFile(path.join(runDir, 'metrics', 'cloudwatch.json'), 'utf8'),
      ) as MetricsFile;
      expect(series(file, 'FreeStorageSpace', 'Minimum', 'pocket-db')).toMatchObject({
        unit: 'Bytes',
        status: 'ok',
        points: [[iso(1), 18 * 2 ** 30]],
      });
      expect(series(file, 'ReadLatency', 'Average', 'pocket-db')).toMatchObject({
        unit: 'Seconds',
        points: [[iso(2), 0.002]],
      });
      expect(series(file, 'CPUCreditBalance', 'Average', 'pocket-db').points).toEqual([[iso(3), 144]]);
      expect(series(file, 'CPUSurplusCreditBalance', 'Maximum', 'pocket-db').points).toEqual([[iso(4), 30]]);
      expect(series(file, 'CPUSurplusCreditsCharged', 'Sum', 'pocket-db')).toMatchObject({
        unit: 'Count',
        points: [[iso(4), 3.5]],
      });
      // nothing put for DiskQueueDepth: read, and recorded as no-data
      expect(series(file, 'DiskQueueDepth', 'Average', 'pocket-db').status).toBe('no-data');
      const names = new Set(file.series.map((s) => s.name));
      for (const auroraOnly of ['CommitLatency', 'BufferCacheHitRatio', 'Deadlocks', 'ConnectionAttempts'])
        expect(names.has(auroraOnly)).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

test.concurrent('--out writes into a local run directory from an event file, nothing to S3', async () => {
  // GIVEN
  const dir = await mkdtemp(path.join(tmpdir(), 'collect-out-'));
  try {
    const eventFile = path.join(dir, 'event.json');
    const runDir = path.join(dir, 'runs', 'local-run');
    const event = {
      runId: 'local-run',
      window: { start: iso(0), end: iso(5) },
      cluster: { clusterId: 'lab-cluster', instanceIds: ['lab-writer'], piResourceIds: ['db-IGNORED'] },
      proxies: ['lab-proxy'],
    };
    await writeFile(eventFile, JSON.stringify(event));
    // WHEN
    const result = await runCli(['collect', '--event', eventFile, '--no-pi', '--out', runDir], motoEnv(moto));
    // THEN
    expect(result.code).toBe(0);
    const file = JSON.parse(
      await readFile(path.join(runDir, 'metrics', 'cloudwatch.json'), 'utf8'),
    ) as MetricsFile;
    expect(series(file, 'ClientConnections', 'Sum', 'lab-proxy').points).toEqual([[iso(1), 12]]);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'runs/local-run/' }));
    expect(listed.Contents ?? []).toEqual([]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.concurrent.each([
  {
    name: 'no destination',
    args: ['--run-id', 'r', '--start', iso(0), '--end', iso(5), '--cluster-id', 'c'],
    message: /no destination/,
  },
  {
    name: 'unsafe run id',
    args: ['--run-id', '../r', '--start', iso(0), '--end', iso(5), '--cluster-id', 'c', '--bucket', BUCKET],
    message: /runId: must be a safe path segment/,
  },
  {
    name: 'missing window',
    args: ['--run-id', 'r', '--cluster-id', 'c', '--bucket', BUCKET],
    message: /missing --start, --end/,
  },
])('usage error ($name) exits 2 and writes nothing', async ({ args, message }) => {
  // WHEN
  const result = await runCli(['collect', ...args], motoEnv(moto));
  // THEN
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(message);
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'runs/r/' }));
  expect(listed.Contents ?? []).toEqual([]);
});
