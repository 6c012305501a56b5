/**
 * Timing of the collected metrics: PI points stamped like CloudWatch's (period start), each source
 * saying whether it covered the window to its end, and burstable instances getting CPU credits.
 */
import {
  CloudWatchClient,
  GetMetricDataCommand,
  type GetMetricDataCommandInput,
} from '@aws-sdk/client-cloudwatch';
import { GetResourceMetricsCommand, PIClient } from '@aws-sdk/client-pi';
import { mockAws } from '../helpers/aws-calls/recorder';
import { COLLECTOR } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import { buildCollectEvent } from '../../lib/aws/collector-invoke';
import { instanceClassesOf, runnerArgsFromOutputs } from '../../lib/operator/operator';
import { labOutputsWith } from '../helpers/lab-outputs';
import {
  collectMetrics,
  fetchPi,
  planCloudWatchQueries,
  planPiRequests,
  resourcesFromEvent,
  windowCompleteness,
  type RunWriter,
} from '../../lib/collector';
import { validateLab } from '../../lib/config';
import type { MetricSeries, MetricsFile } from '../../lib/suite/types';
import { metricsPath } from '../../lib/results/run-paths';

const cwMock = mockAws(CloudWatchClient, COLLECTOR);
const piMock = mockAws(PIClient, COLLECTOR);
afterEach(() => {
  cwMock.reset();
  piMock.reset();
});

const NOW = new Date('2026-11-21T12:00:00Z');
const WINDOW = { start: '2026-11-21T10:00:00.000Z', end: '2026-11-21T10:05:00.000Z' };
const T0 = Date.parse(WINDOW.start);
const minute = (i: number): Date => new Date(T0 + i * 60_000);

class MemoryWriter implements RunWriter {
  readonly files = new Map<string, unknown>();
  writeMetricsFile(name: string, file: MetricsFile): Promise<string> {
    this.files.set(metricsPath(name), file);
    return Promise.resolve(`mem://${metricsPath(name)}`);
  }
}

describe('Performance Insights alignment (issue 14 item 2)', () => {
  test('GetResourceMetrics asks for period-start timestamps, as CloudWatch stamps them', async () => {
    // GIVEN
    piMock.on(GetResourceMetricsCommand).resolves({ MetricList: [] });
    const plan = planPiRequests(
      { clusterId: 'c', instanceIds: ['w'], piResourceIds: ['db-ABC'], proxies: [] },
      WINDOW,
      { now: NOW },
    );
    // WHEN
    await fetchPi(new PIClient({ region: 'us-east-1' }), plan);
    // THEN every request carries PeriodAlignment START_TIME (the API default is END_TIME)
    expect(piMock).toHaveReceivedCommandWith(GetResourceMetricsCommand, {
      Identifier: 'db-ABC',
      PeriodInSeconds: 60,
      PeriodAlignment: 'START_TIME',
    });
    for (const call of piMock.commandCalls(GetResourceMetricsCommand))
      expect(call.args[0].input.PeriodAlignment).toBe('START_TIME');
  });
});

describe('window completeness per source', () => {
  const series = (points: Array<[string, number]>): MetricSeries => ({
    source: 'cloudwatch',
    name: 'DatabaseConnections',
    stat: 'Average',
    unit: 'Count',
    dimensions: {},
    points,
    status: points.length > 0 ? 'ok' : 'no-data',
  });

  test.each([
    ['the last period (10:04) is in', [minute(0), minute(4)], true, '2026-11-21T10:04:00.000Z'],
    ['the last two minutes are missing', [minute(0), minute(2)], false, '2026-11-21T10:02:00.000Z'],
    ['no datapoint at all', [], false, null],
  ])('%s', (_what, times, complete, last) => {
    const c = windowCompleteness(
      [series(times.map((t) => [t.toISOString(), 1])), series([])],
      WINDOW.end,
      60,
    );
    expect(c).toEqual({ complete, lastPointAt: last, windowEnd: WINDOW.end, periodSec: 60 });
  });

  test('collectMetrics records completeness in the summary and in each written file', async () => {
    // GIVEN CloudWatch has published up to 10:02 only (collected right after the run)
    cwMock.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => ({
      MetricDataResults: (input.MetricDataQueries ?? []).map((q) => ({
        Id: q.Id,
        StatusCode: 'Complete',
        Timestamps: [minute(0), minute(1), minute(2)],
        Values: [1, 2, 3],
      })),
    }));
    piMock.on(GetResourceMetricsCommand).callsFake((input: { MetricQueries: Array<{ Metric: string }> }) => ({
      MetricList: input.MetricQueries.map((q) => ({
        Key: { Metric: q.Metric },
        DataPoints: [0, 1, 2, 3, 4].map((i) => ({ Timestamp: minute(i), Value: i })),
      })),
    }));
    const writer = new MemoryWriter();
    // WHEN
    const summary = await collectMetrics(
      {
        runId: 'r1',
        window: WINDOW,
        cluster: { clusterId: 'c', instanceIds: ['w'], piResourceIds: ['db-ABC'] },
        proxies: [],
      },
      {
        cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
        pi: new PIClient({ region: 'us-east-1' }),
        writer,
        now: () => NOW,
      },
    );
    // THEN CloudWatch is incomplete (last point 10:02), PI complete (10:04 + 60 s reaches 10:05)
    expect(summary.cloudwatch.completeness).toMatchObject({
      complete: false,
      lastPointAt: '2026-11-21T10:02:00.000Z',
    });
    expect(summary.pi?.completeness).toMatchObject({
      complete: true,
      lastPointAt: '2026-11-21T10:04:00.000Z',
    });
    expect(writer.files.get('metrics/cloudwatch.json')).toMatchObject({ completeness: { complete: false } });
    expect(writer.files.get('metrics/pi.json')).toMatchObject({ completeness: { complete: true } });
  });
});

describe('CPU credits on burstable classes (issue 14 item 4)', () => {
  const OUTPUTS = labOutputsWith({
    resultsBucketName: 'b',
    dbInstanceIds: ['demo-writer', 'demo-reader1'],
    dbInstanceResourceIds: ['db-A', 'db-B'],
  });
  const labWith = (aurora: Record<string, unknown>) => {
    const r = validateLab({ name: 'demo', aurora: { engineVersion: '16.9', ...aurora }, proxies: [] });
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    return r.lab;
  };

  test('the runner-0 collector event names each instance class, so CPUCreditBalance is planned', () => {
    // GIVEN a db.t4g.medium lab (default, e1, e2)
    const lab = labWith({ instanceClass: 'db.t4g.medium', readers: 1 });
    // WHEN the CLI builds the runners' collector spec and runner 0 the event from it
    const args = runnerArgsFromOutputs(OUTPUTS, lab, {
      runId: 'r',
      suite: 'quick',
      region: null,
      startAt: 'x',
    });
    const event = buildCollectEvent(args.collector!, 'r', WINDOW, 'results-bucket');
    const plan = planCloudWatchQueries(resourcesFromEvent(event), WINDOW, { now: NOW });
    // THEN
    expect(event.cluster.instanceClasses).toEqual({
      'demo-writer': 'db.t4g.medium',
      'demo-reader1': 'db.t4g.medium',
    });
    const credits = plan.queries.filter((q) => q.metricName === 'CPUCreditBalance');
    expect(credits.map((q) => q.dimensions.DBInstanceIdentifier)).toEqual(['demo-writer', 'demo-reader1']);
  });

  test('serverless instances are not burstable', () => {
    const lab = labWith({ serverless: { minCapacity: 0.5, maxCapacity: 4 } });
    expect(instanceClassesOf(lab, ['w'])).toEqual({ w: 'db.serverless' });
  });
});
