/**
 * The collector reads the instance metrics of the engine behind `direct` (issue 13 item 3): Aurora's
 * list (CommitLatency, BufferCacheHitRatio…) for Aurora, the RDS instance-level list
 * (FreeStorageSpace, DiskQueueDepth, disk latencies…) for RDS for PostgreSQL; events without an
 * engine are Aurora's, as every event was before.
 */
import {
  CloudWatchClient,
  GetMetricDataCommand,
  type GetMetricDataCommandInput,
} from '@aws-sdk/client-cloudwatch';
import { mockAws } from '../helpers/aws-calls/recorder';
import { COLLECTOR } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import { buildCollectEvent } from '../../lib/aws/collector-invoke';
import { runnerArgsFromOutputs } from '../../lib/operator/operator';
import { buildRunRequest, runnerArgsFromRequest, runRequestSchema } from '../../lib/aws/run-request';
import type { LabOutputs } from '../../lib/config/stack-outputs';
import { validateLab } from '../../lib/config';
import {
  AURORA_INSTANCE_METRICS,
  collectMetrics,
  eventFromFlags,
  metricDef,
  parseCollectEvent,
  planCloudWatchQueries,
  RDS_POSTGRES_INSTANCE_METRICS,
  resourcesFromEvent,
  type RunWriter,
} from '../../lib/collector';
import { UsageError } from '../../lib/core/errors';
import type { MetricsFile } from '../../lib/suite/types';
import { metricsPath } from '../../lib/results/run-paths';

const cwMock = mockAws(CloudWatchClient, COLLECTOR);
afterEach(() => cwMock.reset());

const NOW = new Date('2026-11-21T12:00:00Z');
const WINDOW = { start: '2026-11-21T10:00:00.000Z', end: '2026-11-21T10:30:00.000Z' };
const AURORA_ONLY = [
  'CommitThroughput',
  'CommitLatency',
  'Deadlocks',
  'BufferCacheHitRatio',
  'ConnectionAttempts',
];
const RDS_ONLY = ['FreeStorageSpace', 'ReadLatency', 'WriteLatency', 'DiskQueueDepth'];

class MemoryWriter implements RunWriter {
  readonly files = new Map<string, MetricsFile>();
  writeMetricsFile(name: string, file: MetricsFile): Promise<string> {
    this.files.set(metricsPath(name), file);
    return Promise.resolve(`mem://${metricsPath(name)}`);
  }
}

function event(cluster: Record<string, unknown>) {
  return parseCollectEvent({
    runId: 'r1',
    window: WINDOW,
    cluster: { clusterId: 'pocket-db', instanceIds: ['pocket-db'], piResourceIds: [], ...cluster },
    proxies: ['pocket-proxy'],
  });
}

function instanceMetricNames(ev: ReturnType<typeof event>): string[] {
  const plan = planCloudWatchQueries(resourcesFromEvent(ev), WINDOW, { now: NOW });
  return [...new Set(plan.queries.filter((q) => q.dimensions.DBInstanceIdentifier).map((q) => q.metricName))];
}

describe('which instance metrics, per engine', () => {
  test('RDS for PostgreSQL: the RDS instance-level list, none of the Aurora-only metrics', () => {
    const names = instanceMetricNames(event({ engine: 'postgres' }));
    expect(names).toEqual([
      'CPUUtilization',
      'DatabaseConnections',
      'FreeableMemory',
      'FreeStorageSpace',
      'ReadLatency',
      'WriteLatency',
      'ReadIOPS',
      'WriteIOPS',
      'DiskQueueDepth',
    ]);
    for (const name of AURORA_ONLY) expect(names).not.toContain(name);
  });

  test('Aurora, and an event that names no engine (older CLIs): the Aurora list, none of the RDS-only ones', () => {
    const aurora = instanceMetricNames(event({ engine: 'aurora-postgresql' }));
    expect(instanceMetricNames(event({}))).toEqual(aurora);
    expect(aurora).toEqual(AURORA_INSTANCE_METRICS.filter((d) => !d.burstableOnly).map((d) => d.name));
    for (const name of RDS_ONLY) expect(aurora).not.toContain(name);
  });

  test.each([
    ['postgres', 'db.t4g.micro', true],
    ['postgres', 'db.m7g.large', false],
    ['aurora-postgresql', 'db.t4g.medium', true],
  ])('%s on %s: CPUCreditBalance read: %s', (engine, cls, expected) => {
    const names = instanceMetricNames(event({ engine, instanceClasses: { 'pocket-db': cls } }));
    expect(names.includes('CPUCreditBalance')).toBe(expected);
  });

  test('the catalog owns every RDS metric title and unit (the report looks them up)', () => {
    for (const def of RDS_POSTGRES_INSTANCE_METRICS) {
      expect(metricDef(def.name)).toMatchObject({ title: def.title, unit: def.unit });
    }
    // the RDS user guide gives the disk latencies in seconds, not milliseconds
    expect(metricDef('ReadLatency')?.unit).toBe('Seconds');
    expect(metricDef('FreeStorageSpace')?.unit).toBe('Bytes');
  });

  test('an unknown engine is refused with its path; the flag form carries it', () => {
    expect(() => event({ engine: 'mysql' })).toThrow(UsageError);
    expect(() => event({ engine: 'mysql' })).toThrow(/cluster\.engine/);
    const raw = eventFromFlags({
      runId: 'r1',
      start: WINDOW.start,
      end: WINDOW.end,
      clusterId: 'pocket-db',
      instanceId: ['pocket-db'],
      engine: 'postgres',
    });
    expect(parseCollectEvent(raw).cluster.engine).toBe('postgres');
  });
});

describe('GetMetricData for an RDS for PostgreSQL lab (mocked CloudWatch)', () => {
  test('instance metrics by DBInstanceIdentifier, proxy metrics by ProxyName, titles from the catalog', async () => {
    // GIVEN CloudWatch answers every query with one point
    cwMock.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => ({
      MetricDataResults: (input.MetricDataQueries ?? []).map((q) => ({
        Id: q.Id,
        StatusCode: 'Complete',
        Timestamps: [new Date(WINDOW.start)],
        Values: [1],
      })),
    }));
    const writer = new MemoryWriter();
    // WHEN the pocket lab's event (db.t4g.micro) is collected
    await collectMetrics(event({ engine: 'postgres', instanceClasses: { 'pocket-db': 'db.t4g.micro' } }), {
      cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
      pi: null,
      writer,
      now: () => NOW,
    });
    // THEN the request names the RDS instance metrics with the instance dimension
    const queries = cwMock
      .commandCalls(GetMetricDataCommand)
      .flatMap((c) => c.args[0].input.MetricDataQueries ?? []);
    const instance = (name: string) =>
      queries.filter(
        (q) =>
          q.MetricStat?.Metric?.MetricName === name &&
          q.MetricStat.Metric.Namespace === 'AWS/RDS' &&
          JSON.stringify(q.MetricStat.Metric.Dimensions) ===
            JSON.stringify([{ Name: 'DBInstanceIdentifier', Value: 'pocket-db' }]),
      );
    for (const name of [...RDS_ONLY, 'CPUUtilization', 'FreeableMemory', 'CPUCreditBalance'])
      expect({ name, n: instance(name).length > 0 }).toEqual({ name, n: true });
    expect(instance('FreeStorageSpace').map((q) => q.MetricStat?.Stat)).toEqual(['Minimum']);
    for (const name of AURORA_ONLY)
      expect(queries.some((q) => q.MetricStat?.Metric?.MetricName === name)).toBe(false);
    // the proxy metrics as before
    expect(
      queries.some(
        (q) =>
          q.MetricStat?.Metric?.MetricName === 'ClientConnections' &&
          q.MetricStat.Metric.Dimensions?.[0]?.Name === 'ProxyName',
      ),
    ).toBe(true);
    // and the written series carry the catalog's unit
    const written = writer.files.get('metrics/cloudwatch.json');
    const latency = written?.series.find((s) => s.name === 'ReadLatency');
    expect(latency).toMatchObject({
      unit: 'Seconds',
      status: 'ok',
      dimensions: { DBInstanceIdentifier: 'pocket-db' },
    });
  });
});

describe('the engine reaches the collector event from the stack outputs', () => {
  const OUTPUTS: LabOutputs = {
    labName: 'pocket',
    runnerInstanceIds: ['i-0aaaaaaaaaaaaaaaa'],
    resultsBucketName: 'b',
    clusterIdentifier: 'pocket-db',
    clusterEndpoint: 'pocket-db.x.eu-west-1.rds.amazonaws.com',
    clusterReaderEndpoint: 'pocket-db.x.eu-west-1.rds.amazonaws.com',
    databasePort: 5432,
    dbInstanceIds: ['pocket-db'],
    dbInstanceResourceIds: ['db-P'],
    proxyEndpoints: {},
    proxyNames: {},
    dbSecretArn: 'arn:aws:secretsmanager:eu-west-1:1:secret:pocket',
    collectorFunctionName: 'pocket-collector',
    databaseEngine: 'postgres',
    dbInstanceClass: 'db.t4g.micro',
    componentZones: {},
    poolerEndpoints: {},
    poolerAdminSecretArn: null,
  };

  /** The runner arguments for a pocket-like RDS for PostgreSQL lab deployed as OUTPUTS. */
  function pocketRunnerArgs(): ReturnType<typeof runnerArgsFromOutputs> {
    const r = validateLab({
      name: 'pocket',
      postgres: { engineVersion: '17.9', instanceClass: 'db.t4g.micro' },
    });
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    return runnerArgsFromOutputs(OUTPUTS, r.lab, { runId: 'r', suite: 'quick', region: null, startAt: 'x' });
  }

  test('RDS for PostgreSQL outputs → a postgres event with the instance class; the run names its database', () => {
    const args = pocketRunnerArgs();
    if (!args.collector) throw new Error('no collector spec');
    const ev = buildCollectEvent(args.collector, 'r', WINDOW, 'results-bucket');
    expect(ev.cluster).toMatchObject({
      engine: 'postgres',
      instanceClasses: { 'pocket-db': 'db.t4g.micro' },
    });
    expect(args.database).toEqual({ engine: 'postgres', instanceClass: 'db.t4g.micro' });
  });

  test('the run request carries the database; an older request without it reads as null', () => {
    const args = pocketRunnerArgs();
    const request = runRequestSchema.parse(JSON.parse(JSON.stringify(buildRunRequest(args, 1))));
    expect(request.targets.database).toEqual({ engine: 'postgres', instanceClass: 'db.t4g.micro' });
    expect(request.settings.collector?.engine).toBe('postgres');
    expect(runnerArgsFromRequest(request, 0).database).toEqual({
      engine: 'postgres',
      instanceClass: 'db.t4g.micro',
    });
    const { database: _dropped, ...olderTargets } = request.targets;
    const older = runRequestSchema.parse({ ...request, targets: olderTargets });
    expect(runnerArgsFromRequest(older, 0).database).toBeNull();
  });
});
