import {
  CloudWatchClient,
  CloudWatchServiceException,
  GetMetricDataCommand,
  InvalidParameterValueException,
  type GetMetricDataCommandInput,
  type MetricDataResult,
} from '@aws-sdk/client-cloudwatch';
import {
  GetResourceMetricsCommand,
  InvalidArgumentException,
  PIClient,
  PIServiceException,
} from '@aws-sdk/client-pi';
import { attributeMock, mockAws } from '../helpers/aws-calls/recorder';
import { COLLECTOR, operator } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import {
  fetchCloudWatch,
  fetchPi,
  planCloudWatchQueries,
  planPiRequests,
  type LabResources,
} from '../../lib/collector';

const cwMock = mockAws(CloudWatchClient, COLLECTOR);
const piMock = mockAws(PIClient, COLLECTOR);

afterEach(() => {
  cwMock.reset();
  piMock.reset();
});

const NOW = new Date('2026-11-21T12:00:00Z');
const WINDOW = { start: '2026-11-21T10:00:00Z', end: '2026-11-21T10:03:00Z' };
const T0 = Date.parse(WINDOW.start);
const minute = (i: number): Date => new Date(T0 + i * 60_000);

function lab(instances: number, proxies: number): LabResources {
  return {
    clusterId: 'lab-cluster',
    instanceIds: Array.from({ length: instances }, (_, i) => `inst-${i + 1}`),
    piResourceIds: Array.from({ length: instances }, (_, i) => `db-RES${i + 1}`),
    proxies: Array.from({ length: proxies }, (_, i) => `proxy-${i + 1}`),
  };
}

/** Answers every query of a GetMetricData input with `valueOf(id, minute)` for minutes 0..2. */
function echoResults(
  input: GetMetricDataCommandInput,
  valueOf: (id: string, i: number) => number,
): MetricDataResult[] {
  return (input.MetricDataQueries ?? []).map((q) => ({
    Id: q.Id,
    StatusCode: 'Complete',
    Timestamps: [minute(0), minute(1), minute(2)],
    Values: [0, 1, 2].map((i) => valueOf(q.Id!, i)),
  }));
}

const throttle = (): CloudWatchServiceException =>
  new CloudWatchServiceException({
    name: 'Throttling',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message: 'Rate exceeded',
  });

const noSleep = { sleep: (): Promise<void> => Promise.resolve(), random: (): number => 0.5 };

describe('fetchCloudWatch', () => {
  test('batches at 500 queries per GetMetricData call and keeps every series', async () => {
    // GIVEN 40 instances × 13 + 2 proxies × 10 = 540 queries
    const plan = planCloudWatchQueries(lab(40, 2), WINDOW, { now: NOW });
    expect(plan.queries).toHaveLength(540);
    cwMock.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => ({
      MetricDataResults: echoResults(input, (id, i) => Number(id.split('_')[0]!.slice(1)) * 10 + i),
    }));
    // WHEN
    const result = await fetchCloudWatch(new CloudWatchClient({ region: 'us-east-1' }), plan, {
      retry: noSleep,
    });
    // THEN
    expect(cwMock).toHaveReceivedCommandTimes(GetMetricDataCommand, 2);
    const sizes = cwMock
      .commandCalls(GetMetricDataCommand)
      .map((c) => c.args[0].input.MetricDataQueries?.length);
    expect(sizes).toEqual([500, 40]);
    expect(result.calls).toBe(2);
    expect(result.series).toHaveLength(540);
    expect(result.series.every((s) => s.status === 'ok')).toBe(true);
    // series 537 (q537) came from the second call: values 5370, 5371, 5372 in time order
    const last = result.series[537]!;
    expect(last.points).toEqual([
      [minute(0).toISOString(), 5370],
      [minute(1).toISOString(), 5371],
      [minute(2).toISOString(), 5372],
    ]);
  });

  test('sends the planned statistic, dimensions, period and window', async () => {
    // GIVEN
    const plan = planCloudWatchQueries(lab(0, 1), WINDOW, { now: NOW });
    cwMock.on(GetMetricDataCommand).resolves({ MetricDataResults: [] });
    // WHEN
    await fetchCloudWatch(new CloudWatchClient({ region: 'us-east-1' }), plan);
    // THEN
    expect(cwMock).toHaveReceivedCommandWith(GetMetricDataCommand, {
      StartTime: new Date('2026-11-21T10:00:00Z'),
      EndTime: new Date('2026-11-21T10:03:00Z'),
      ScanBy: 'TimestampAscending',
      MetricDataQueries: expect.arrayContaining([
        expect.objectContaining({
          MetricStat: {
            Metric: {
              Namespace: 'AWS/RDS',
              MetricName: 'DatabaseConnectionsCurrentlySessionPinned',
              Dimensions: [{ Name: 'ProxyName', Value: 'proxy-1' }],
            },
            Period: 60,
            Stat: 'Sum',
          },
        }),
      ]),
    });
  });

  test('follows NextToken and merges the pages of a series in time order', async () => {
    // GIVEN
    const plan = planCloudWatchQueries(lab(0, 1), WINDOW, { now: NOW });
    const pinned = plan.queries.find((q) => q.metricName === 'DatabaseConnectionsCurrentlySessionPinned')!;
    cwMock
      .on(GetMetricDataCommand, { NextToken: undefined })
      .resolves({
        MetricDataResults: [
          { Id: pinned.id, StatusCode: 'PartialData', Timestamps: [minute(0), minute(1)], Values: [3, 4] },
        ],
        NextToken: 'page-2',
      })
      .on(GetMetricDataCommand, { NextToken: 'page-2' })
      .resolves({
        MetricDataResults: [{ Id: pinned.id, StatusCode: 'Complete', Timestamps: [minute(2)], Values: [5] }],
      });
    // WHEN
    const result = await fetchCloudWatch(new CloudWatchClient({ region: 'us-east-1' }), plan);
    // THEN
    expect(cwMock).toHaveReceivedCommandTimes(GetMetricDataCommand, 2);
    expect(cwMock).toHaveReceivedNthCommandWith(2, GetMetricDataCommand, { NextToken: 'page-2' });
    const series = result.series.find((s) => s.name === pinned.metricName)!;
    expect(series.status).toBe('ok');
    expect(series.points.map(([, v]) => v)).toEqual([3, 4, 5]);
  });

  test('retries a throttled call with backoff, then succeeds', async () => {
    // GIVEN
    const plan = planCloudWatchQueries(lab(1, 0), WINDOW, { now: NOW });
    cwMock
      .on(GetMetricDataCommand)
      .rejectsOnce(throttle())
      .rejectsOnce(throttle())
      .callsFake((input: GetMetricDataCommandInput) => ({ MetricDataResults: echoResults(input, () => 42) }));
    const delays: number[] = [];
    // WHEN
    const result = await fetchCloudWatch(new CloudWatchClient({ region: 'us-east-1' }), plan, {
      retry: {
        sleep: (ms) => {
          delays.push(ms);
          return Promise.resolve();
        },
        random: () => 0.5,
        baseDelayMs: 100,
      },
    });
    // THEN
    expect(cwMock).toHaveReceivedCommandTimes(GetMetricDataCommand, 3);
    expect(delays).toEqual([50, 100]); // jitter 0.5 × (100, 200)
    expect(result.calls).toBe(3);
    expect(result.series.every((s) => s.status === 'ok' && s.points.length === 3)).toBe(true);
  });

  test('a batch that keeps failing marks only its own series as errors', async () => {
    // GIVEN 540 queries: the first call (500) is throttled every time, the second answers
    const plan = planCloudWatchQueries(lab(40, 2), WINDOW, { now: NOW });
    cwMock.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => {
      if (input.MetricDataQueries!.length === 500) throw throttle();
      return { MetricDataResults: echoResults(input, () => 7) };
    });
    // WHEN
    const result = await fetchCloudWatch(new CloudWatchClient({ region: 'us-east-1' }), plan, {
      retry: { ...noSleep, maxAttempts: 3 },
    });
    // THEN
    expect(cwMock).toHaveReceivedCommandTimes(GetMetricDataCommand, 4); // 3 attempts + 1
    const statuses = result.series.map((s) => s.status);
    expect(statuses.slice(0, 500).every((s) => s === 'error')).toBe(true);
    expect(statuses.slice(500).every((s) => s === 'ok')).toBe(true);
    expect(result.series[0]!.reason).toMatch(/GetMetricData failed: Throttling: Rate exceeded/);
    expect(result.series[0]!.points).toEqual([]);
  });

  test('a non-retryable error is not retried', async () => {
    // GIVEN
    const plan = planCloudWatchQueries(lab(1, 0), WINDOW, { now: NOW });
    cwMock.on(GetMetricDataCommand).rejects(
      new InvalidParameterValueException({
        $metadata: { httpStatusCode: 400 },
        message: 'The parameter Period is invalid',
      }),
    );
    // WHEN
    const result = await fetchCloudWatch(new CloudWatchClient({ region: 'us-east-1' }), plan, {
      retry: noSleep,
    });
    // THEN
    expect(cwMock).toHaveReceivedCommandTimes(GetMetricDataCommand, 1);
    expect(new Set(result.series.map((s) => s.reason))).toEqual(
      new Set(['GetMetricData failed: InvalidParameterValueException: The parameter Period is invalid']),
    );
  });

  test('per-query Forbidden is an error, an empty answer is no-data, the others are kept', async () => {
    // GIVEN
    const plan = planCloudWatchQueries(lab(1, 0), WINDOW, { now: NOW });
    const [forbidden, empty] = [plan.queries[0]!, plan.queries[1]!];
    cwMock.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => ({
      MetricDataResults: echoResults(input, () => 1).map((r) =>
        r.Id === forbidden.id
          ? { Id: r.Id, StatusCode: 'Forbidden', Messages: [{ Code: 'Forbidden', Value: 'not authorized' }] }
          : r.Id === empty.id
            ? { Id: r.Id, StatusCode: 'Complete', Timestamps: [], Values: [] }
            : r,
      ),
    }));
    // WHEN
    const result = await fetchCloudWatch(new CloudWatchClient({ region: 'us-east-1' }), plan);
    // THEN
    expect(result.series[0]).toMatchObject({
      status: 'error',
      reason: 'CloudWatch status Forbidden: Forbidden: not authorized',
    });
    expect(result.series[1]).toMatchObject({ status: 'no-data', points: [] });
    expect(result.series.slice(2).every((s) => s.status === 'ok')).toBe(true);
  });

  test('proxy gauges summed over periods longer than a minute are scaled to per-minute totals', async () => {
    // GIVEN a 2-day window: period 120 s
    const plan = planCloudWatchQueries(
      lab(0, 1),
      { start: '2026-11-19T11:00:00Z', end: '2026-11-21T11:00:00Z' },
      { now: NOW },
    );
    expect(plan.periodSec).toBe(120);
    cwMock.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => ({
      MetricDataResults: echoResults(input, () => 200),
    }));
    // WHEN
    const result = await fetchCloudWatch(new CloudWatchClient({ region: 'us-east-1' }), plan);
    // THEN gauge: 200 over two minutes is 100 per minute; event count and latency unchanged
    const byName = new Map(result.series.map((s) => [s.name, s]));
    expect(byName.get('ClientConnections')).toMatchObject({
      stat: 'SumPerMinute',
      points: expect.arrayContaining([[minute(0).toISOString(), 100]]) as unknown, // @types/jest types matchers as any
    });
    expect(byName.get('QueryRequests')).toMatchObject({
      stat: 'Sum',
      points: expect.arrayContaining([[minute(0).toISOString(), 200]]) as unknown, // @types/jest types matchers as any
    });
    expect(byName.get('QueryDatabaseResponseLatency')).toMatchObject({ stat: 'Average' });
  });
});

describe('fetchPi', () => {
  const piAnswer = (metrics: string[], value: number) => ({
    MetricList: metrics.map((Metric) => ({
      Key: { Metric },
      DataPoints: [
        { Timestamp: minute(0), Value: value },
        { Timestamp: minute(1), Value: undefined },
        { Timestamp: minute(2), Value: value + 1 },
      ],
    })),
  });

  test('one GetResourceMetrics call per instance, ServiceType RDS, DbiResourceId, planned period', async () => {
    // GIVEN
    const plan = planPiRequests(lab(2, 0), WINDOW);
    piMock.on(GetResourceMetricsCommand).callsFake((input: { MetricQueries: Array<{ Metric: string }> }) =>
      piAnswer(
        input.MetricQueries.map((q) => q.Metric),
        9,
      ),
    );
    // WHEN
    const result = await fetchPi(new PIClient({ region: 'us-east-1' }), plan);
    // THEN
    expect(piMock).toHaveReceivedCommandTimes(GetResourceMetricsCommand, 2);
    expect(piMock).toHaveReceivedCommandWith(GetResourceMetricsCommand, {
      ServiceType: 'RDS',
      Identifier: 'db-RES2',
      PeriodInSeconds: 60,
      MetricQueries: expect.arrayContaining([{ Metric: 'db.User.total_auth_attempts.avg' }]),
    });
    expect(result.series).toHaveLength(10);
    const load = result.series.find((s) => s.name === 'db.load' && s.dimensions.DbiResourceId === 'db-RES1')!;
    // the point without a Value is unknown, not zero: left out
    expect(load).toMatchObject({ source: 'pi', stat: 'avg', status: 'ok' });
    expect(load.points).toEqual([
      [minute(0).toISOString(), 9],
      [minute(2).toISOString(), 10],
    ]);
  });

  test('batches at 15 metric queries per call', async () => {
    // GIVEN 20 counters for one instance
    const piMetrics = Array.from({ length: 20 }, (_, i) => ({
      name: `db.Custom.c${i}`,
      title: `custom counter ${i}`,
      stat: 'avg' as const,
      unit: null,
    }));
    const plan = planPiRequests(lab(1, 0), WINDOW, { piMetrics });
    piMock.on(GetResourceMetricsCommand).callsFake((input: { MetricQueries: Array<{ Metric: string }> }) =>
      piAnswer(
        input.MetricQueries.map((q) => q.Metric),
        1,
      ),
    );
    // WHEN
    const result = await fetchPi(new PIClient({ region: 'us-east-1' }), plan);
    // THEN
    const sizes = piMock
      .commandCalls(GetResourceMetricsCommand)
      .map((c) => c.args[0].input.MetricQueries?.length);
    expect(sizes).toEqual([15, 5]);
    expect(result.series.filter((s) => s.status === 'ok')).toHaveLength(20);
  });

  test('follows NextToken', async () => {
    // GIVEN
    const plan = planPiRequests(lab(1, 0), WINDOW);
    piMock
      .on(GetResourceMetricsCommand, { NextToken: undefined })
      .resolves({
        MetricList: [{ Key: { Metric: 'db.load.avg' }, DataPoints: [{ Timestamp: minute(0), Value: 1.5 }] }],
        NextToken: 'n2',
      })
      .on(GetResourceMetricsCommand, { NextToken: 'n2' })
      .resolves({
        MetricList: [{ Key: { Metric: 'db.load.avg' }, DataPoints: [{ Timestamp: minute(1), Value: 2.5 }] }],
      });
    // WHEN
    const result = await fetchPi(new PIClient({ region: 'us-east-1' }), plan);
    // THEN
    expect(piMock).toHaveReceivedCommandTimes(GetResourceMetricsCommand, 2);
    expect(result.series.find((s) => s.name === 'db.load')!.points.map(([, v]) => v)).toEqual([1.5, 2.5]);
    expect(result.series.find((s) => s.name === 'db.User.numbackends')).toMatchObject({ status: 'no-data' });
  });

  test('retries PI throttling', async () => {
    // GIVEN
    const plan = planPiRequests(lab(1, 0), WINDOW);
    piMock
      .on(GetResourceMetricsCommand)
      .rejectsOnce(
        new PIServiceException({
          name: 'ThrottlingException',
          $fault: 'client',
          $metadata: { httpStatusCode: 400 },
          message: 'Rate exceeded',
        }),
      )
      .callsFake((input: { MetricQueries: Array<{ Metric: string }> }) =>
        piAnswer(
          input.MetricQueries.map((q) => q.Metric),
          3,
        ),
      );
    // WHEN
    const result = await fetchPi(new PIClient({ region: 'us-east-1' }), plan, { retry: noSleep });
    // THEN
    expect(piMock).toHaveReceivedCommandTimes(GetResourceMetricsCommand, 2);
    expect(result.series.every((s) => s.status === 'ok')).toBe(true);
  });

  test('an invalid metric name costs only its own series', async () => {
    // GIVEN PI rejects any call that includes db.SQL.Queries.avg
    const plan = planPiRequests(lab(1, 0), WINDOW);
    piMock.on(GetResourceMetricsCommand).callsFake((input: { MetricQueries: Array<{ Metric: string }> }) => {
      const metrics = input.MetricQueries.map((q) => q.Metric);
      if (metrics.includes('db.SQL.Queries.avg')) {
        throw new InvalidArgumentException({
          $metadata: { httpStatusCode: 400 },
          message: 'Unknown metric db.SQL.Queries.avg',
        });
      }
      return piAnswer(metrics, 2);
    });
    // WHEN
    const result = await fetchPi(new PIClient({ region: 'us-east-1' }), plan);
    // THEN 1 combined call + 5 single-metric calls
    expect(piMock).toHaveReceivedCommandTimes(GetResourceMetricsCommand, 6);
    const bad = result.series.find((s) => s.name === 'db.SQL.Queries')!;
    expect(bad).toMatchObject({
      status: 'error',
      reason: expect.stringContaining('InvalidArgumentException: Unknown metric') as unknown, // @types/jest types matchers as any
    });
    expect(result.series.filter((s) => s.status === 'ok').map((s) => s.name)).toEqual([
      'db.load',
      'db.Transactions.xact_commit',
      'db.User.numbackends',
      'db.User.total_auth_attempts',
    ]);
  });

  test('a failing instance does not lose the other instance', async () => {
    // GIVEN
    const plan = planPiRequests(lab(2, 0), WINDOW);
    piMock
      .on(GetResourceMetricsCommand, { Identifier: 'db-RES1' })
      .rejects(
        new PIServiceException({
          name: 'NotAuthorizedException',
          $fault: 'client',
          $metadata: { httpStatusCode: 400 },
          message: 'no PI',
        }),
      )
      .on(GetResourceMetricsCommand, { Identifier: 'db-RES2' })
      .callsFake((input: { MetricQueries: Array<{ Metric: string }> }) =>
        piAnswer(
          input.MetricQueries.map((q) => q.Metric),
          1,
        ),
      );
    // WHEN
    const result = await fetchPi(new PIClient({ region: 'us-east-1' }), plan, { retry: noSleep });
    // THEN
    const byInstance = (id: string) =>
      result.series.filter((s) => s.dimensions.DbiResourceId === id).map((s) => s.status);
    expect(byInstance('db-RES1')).toEqual(['error', 'error', 'error', 'error', 'error']);
    expect(byInstance('db-RES2')).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
  });
});

describe('proxylab collect from a laptop: the same reads, judged by the operator run policy', () => {
  // The CLI runs this code with the operator's credentials (proxylab iam-policy --role run).
  beforeAll(() => {
    attributeMock(cwMock, operator('run'));
    attributeMock(piMock, operator('run'));
  });
  afterAll(() => {
    attributeMock(cwMock, COLLECTOR);
    attributeMock(piMock, COLLECTOR);
  });

  test('CloudWatch GetMetricData and Performance Insights GetResourceMetrics for the lab', async () => {
    // GIVEN one instance and one proxy
    const cwPlan = planCloudWatchQueries(lab(1, 1), WINDOW, { now: NOW });
    cwMock.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => ({
      MetricDataResults: echoResults(input, () => 1),
    }));
    piMock.on(GetResourceMetricsCommand).resolves({ MetricList: [] });
    // WHEN
    const cw = await fetchCloudWatch(new CloudWatchClient({ region: 'us-east-1' }), cwPlan, {
      retry: noSleep,
    });
    const pi = await fetchPi(new PIClient({ region: 'us-east-1' }), planPiRequests(lab(1, 0), WINDOW));
    // THEN both answered (the calls are checked against the operator's policy after the test)
    expect(cw.series.every((s) => s.status === 'ok')).toBe(true);
    expect(piMock).toHaveReceivedCommandTimes(GetResourceMetricsCommand, 1);
    expect(pi.series.length).toBeGreaterThan(0);
  });
});
