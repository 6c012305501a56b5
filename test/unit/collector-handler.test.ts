import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  CloudWatchClient,
  GetMetricDataCommand,
  type GetMetricDataCommandInput,
} from '@aws-sdk/client-cloudwatch';
import { GetResourceMetricsCommand, PIClient } from '@aws-sdk/client-pi';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockAws } from '../helpers/aws-calls/recorder';
import { COLLECTOR } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import { handler } from '../../lambda/collect-metrics/index';
import { UsageError } from '../../lib/core/errors';
import { collectMetrics, LocalRunWriter, parseCollectEvent } from '../../lib/collector';
import type { MetricsFile } from '../../lib/suite/types';
import { s3BodyText } from '../helpers/s3-body';

const cwMock = mockAws(CloudWatchClient, COLLECTOR);
const piMock = mockAws(PIClient, COLLECTOR);
const s3Mock = mockAws(S3Client, COLLECTOR);

// The handler reads the clock (the period depends on the data's age): the test fixes `Date` at NOW
// (only Date is faked; the SDK's timers stay real) and puts the window an hour before it.
const NOW_MS = Date.parse('2026-11-21T11:00:00Z');
const START_MS = NOW_MS - 3_600_000;
const START = new Date(START_MS).toISOString();
const END = new Date(START_MS + 5 * 60_000).toISOString();
const EVENT = {
  runId: 'run-2026-11-21T10-00-00',
  window: { start: START, end: END },
  cluster: {
    clusterId: 'lab-cluster',
    instanceIds: ['lab-writer'],
    piResourceIds: ['db-ABC'],
    instanceClasses: { 'lab-writer': 'db.t4g.medium' },
  },
  proxies: ['lab-proxy'],
};

function answerCloudWatch(): void {
  cwMock.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => ({
    MetricDataResults: (input.MetricDataQueries ?? []).map((q) => ({
      Id: q.Id,
      StatusCode: 'Complete',
      // ClientConnections has no data: a proxy metric that appears only after the first connection
      ...(q.MetricStat?.Metric?.MetricName === 'ClientConnections'
        ? { Timestamps: [], Values: [] }
        : { Timestamps: [new Date(START)], Values: [11] }),
    })),
  }));
}

function answerPi(): void {
  piMock.on(GetResourceMetricsCommand).callsFake((input: { MetricQueries: Array<{ Metric: string }> }) => ({
    MetricList: input.MetricQueries.map((q) => ({
      Key: { Metric: q.Metric },
      DataPoints: [{ Timestamp: new Date(START), Value: 0.5 }],
    })),
  }));
}

function putBody(key: string): MetricsFile {
  const call = s3Mock.commandCalls(PutObjectCommand).find((c) => c.args[0].input.Key === key);
  if (!call) throw new Error(`no PutObject for ${key}`);
  return JSON.parse(s3BodyText(call.args[0].input.Body)) as MetricsFile;
}

const savedBucket = process.env.RESULTS_BUCKET;
beforeEach(() => {
  process.env.RESULTS_BUCKET = 'results-bucket-from-env';
});
afterEach(() => {
  cwMock.reset();
  piMock.reset();
  s3Mock.reset();
  if (savedBucket === undefined) delete process.env.RESULTS_BUCKET;
  else process.env.RESULTS_BUCKET = savedBucket;
});

/** Whatever the collector found about the window's completeness (tested in collector-window.test.ts). */
const ANY_COMPLETENESS: unknown = expect.objectContaining({ periodSec: 60 });
describe('collect-metrics handler', () => {
  beforeEach(() => {
    jest.useFakeTimers({
      now: NOW_MS,
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  test('writes cloudwatch.json and pi.json under runs/<runId>/metrics/ in the environment bucket', async () => {
    // GIVEN
    answerCloudWatch();
    answerPi();
    s3Mock.on(PutObjectCommand).resolves({});
    // WHEN
    const summary = await handler(EVENT);
    // THEN
    expect(s3Mock).toHaveReceivedCommandTimes(PutObjectCommand, 2);
    expect(s3Mock).toHaveReceivedCommandWith(PutObjectCommand, {
      Bucket: 'results-bucket-from-env',
      Key: 'runs/run-2026-11-21T10-00-00/metrics/cloudwatch.json',
      ContentType: 'application/json',
    });
    const cw = putBody('runs/run-2026-11-21T10-00-00/metrics/cloudwatch.json');
    expect(cw).toMatchObject({
      schemaVersion: 1,
      runId: EVENT.runId,
      window: { start: START, end: END },
      collectedAt: new Date(NOW_MS).toISOString(),
    });
    // 13 instance + the three credit series of a db.t4g (balance, surplus balance, surplus charged) + 10 proxy
    expect(cw.series).toHaveLength(26);
    for (const name of ['CPUCreditBalance', 'CPUSurplusCreditBalance', 'CPUSurplusCreditsCharged'])
      expect(cw.series.find((s) => s.name === name)).toMatchObject({ status: 'ok', points: [[START, 11]] });
    expect(cw.series.find((s) => s.name === 'ClientConnections')).toMatchObject({
      status: 'no-data',
      dimensions: { ProxyName: 'lab-proxy' },
    });
    const pi = putBody('runs/run-2026-11-21T10-00-00/metrics/pi.json');
    expect(pi.series.map((s) => `${s.name}.${s.stat}`)).toContain('db.User.total_auth_attempts.avg');
    expect(summary).toEqual({
      runId: EVENT.runId,
      window: cw.window,
      cloudwatch: {
        periodSec: 60,
        series: { ok: 25, noData: 1, error: 0 },
        calls: 1,
        written: 's3://results-bucket-from-env/runs/run-2026-11-21T10-00-00/metrics/cloudwatch.json',
        completeness: ANY_COMPLETENESS,
      },
      pi: {
        periodSec: 60,
        series: { ok: 5, noData: 0, error: 0 },
        calls: 1,
        written: 's3://results-bucket-from-env/runs/run-2026-11-21T10-00-00/metrics/pi.json',
        completeness: ANY_COMPLETENESS,
      },
      written: [
        's3://results-bucket-from-env/runs/run-2026-11-21T10-00-00/metrics/cloudwatch.json',
        's3://results-bucket-from-env/runs/run-2026-11-21T10-00-00/metrics/pi.json',
      ],
    });
  });

  test('the event bucket wins over RESULTS_BUCKET; skipPi reads no PI and writes no pi.json', async () => {
    // GIVEN
    answerCloudWatch();
    s3Mock.on(PutObjectCommand).resolves({});
    // WHEN
    const summary = await handler({ ...EVENT, bucket: 'other-bucket', skipPi: true });
    // THEN
    expect(piMock).toHaveReceivedCommandTimes(GetResourceMetricsCommand, 0);
    expect(s3Mock).toHaveReceivedCommandTimes(PutObjectCommand, 1);
    expect(s3Mock).toHaveReceivedCommandWith(PutObjectCommand, { Bucket: 'other-bucket' });
    expect(summary.pi).toBeNull();
  });

  test.each([
    { name: 'runId with a slash', patch: { runId: 'a/b' }, field: /runId: must be a safe path segment/ },
    { name: 'runId with ..', patch: { runId: 'a..b' }, field: /runId: must not contain "\.\."/ },
    {
      name: 'window.start not a timestamp',
      patch: { window: { start: 'today', end: EVENT.window.end } },
      field: /window\.start: must be an ISO-8601/,
    },
    {
      name: 'window reversed',
      patch: { window: { start: END, end: START } },
      field: /window\.end: must be after window\.start/,
    },
    {
      name: 'instanceIds not a list',
      patch: { cluster: { clusterId: 'c', instanceIds: 'lab-writer' } },
      field: /cluster\.instanceIds/,
    },
    { name: 'proxies with an empty name', patch: { proxies: [''] }, field: /proxies\.0/ },
  ])('invalid event ($name) is refused before any AWS call, naming the field', async ({ patch, field }) => {
    // WHEN
    const result = handler({ ...EVENT, ...patch });
    // THEN
    await expect(result).rejects.toThrow(UsageError);
    await expect(handler({ ...EVENT, ...patch })).rejects.toThrow(field);
    expect(cwMock).toHaveReceivedCommandTimes(GetMetricDataCommand, 0);
    expect(s3Mock).toHaveReceivedCommandTimes(PutObjectCommand, 0);
  });

  test('no bucket in the event nor the environment is an error naming bucket', async () => {
    // GIVEN
    delete process.env.RESULTS_BUCKET;
    // WHEN / THEN
    await expect(handler(EVENT)).rejects.toThrow(/bucket: the event names no bucket/);
    expect(cwMock).toHaveReceivedCommandTimes(GetMetricDataCommand, 0);
  });
});

describe('collectMetrics to a local run directory', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'collector-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('writes metrics/cloudwatch.json in the run directory with collectedAt from the clock', async () => {
    // GIVEN
    answerCloudWatch();
    const event = parseCollectEvent({ ...EVENT, skipPi: true });
    // WHEN
    const summary = await collectMetrics(event, {
      cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
      pi: null,
      writer: new LocalRunWriter(dir),
      now: () => new Date(START_MS + 30 * 60_000),
    });
    // THEN
    const file = path.join(dir, 'metrics', 'cloudwatch.json');
    expect(summary.written).toEqual([file]);
    const written = JSON.parse(await readFile(file, 'utf8')) as MetricsFile;
    expect(written.collectedAt).toBe(new Date(START_MS + 30 * 60_000).toISOString());
    expect(written.series.filter((s) => s.status === 'ok')).toHaveLength(25);
  });
});
