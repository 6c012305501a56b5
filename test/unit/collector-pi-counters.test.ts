/**
 * Defect: one Performance Insights counter list served both engines, but RDS for PostgreSQL and
 * Aurora PostgreSQL document different counters (Aurora's `db.SQL.Queries`, RDS's list without
 * `db.User.total_auth_attempts`), and PI answers a name the instance lacks with an error series.
 * Every counter the collector asks for must be in that engine's documented list
 * (test/fixtures/aws-docs/pi-counters.json: both user guides' tables, with source and retrieval date).
 */
import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { GetResourceMetricsCommand, PIClient } from '@aws-sdk/client-pi';
import { mockAws } from '../helpers/aws-calls/recorder';
import { COLLECTOR } from '../helpers/aws-calls/principals';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  CLOUD_REPORT_METRICS,
  metricDef,
  piMetricsFor,
  RDS_POSTGRES_REPORT_METRICS,
} from '../../lib/collector/catalog';
import { collectMetrics, parseCollectEvent, type RunWriter } from '../../lib/collector';
import { planPiRequests } from '../../lib/collector/plan';
import type { DatabaseEngine } from '../../lib/suite/engines';

const piMock = mockAws(PIClient, COLLECTOR);
const cwMock = mockAws(CloudWatchClient, COLLECTOR);
afterEach(() => {
  piMock.reset();
  cwMock.reset();
});

interface DocumentedCounters {
  readonly retrieved: string;
  readonly engines: Record<DatabaseEngine, { readonly source: string; readonly counters: readonly string[] }>;
  readonly loadMetric: { readonly name: string; readonly source: string };
}

const DOCUMENTED = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'aws-docs', 'pi-counters.json'), 'utf8'),
) as DocumentedCounters;

const ENGINES: readonly DatabaseEngine[] = ['aurora-postgresql', 'postgres'];

/** The names (without the `.avg` suffix) that `engine`'s documented list does not have. */
function undocumented(engine: DatabaseEngine, names: readonly string[]): string[] {
  const known = new Set([...DOCUMENTED.engines[engine].counters, DOCUMENTED.loadMetric.name]);
  return names.filter((n) => !known.has(n));
}

const WINDOW = { start: '2026-11-21T10:00:00Z', end: '2026-11-21T11:00:00Z' };

test('the fixture says where each list comes from and when it was read', () => {
  expect(DOCUMENTED.retrieved).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  expect(DOCUMENTED.engines['aurora-postgresql'].source).toMatch(
    /^https:\/\/docs\.aws\.amazon\.com\/AmazonRDS\/latest\/AuroraUserGuide\/USER_PerfInsights_Counters/,
  );
  expect(DOCUMENTED.engines.postgres.source).toMatch(
    /^https:\/\/docs\.aws\.amazon\.com\/AmazonRDS\/latest\/UserGuide\/USER_PerfInsights_Counters/,
  );
});

test.each(ENGINES)('every counter the collector plans for %s is in its documented list', (engine) => {
  // WHEN the real planner builds the PI requests for a lab on this engine
  const plan = planPiRequests(
    { clusterId: 'c', instanceIds: ['w'], piResourceIds: ['db-RES1'], proxies: [], engine },
    WINDOW,
  );
  const names = plan.requests.flatMap((r) => r.queries.map((q) => q.name));
  // THEN
  expect(names.length).toBeGreaterThan(0);
  expect(undocumented(engine, names)).toEqual([]);
  expect(piMetricsFor(engine).map((d) => d.name)).toEqual(names);
});

test.each<[DatabaseEngine, string]>([
  // the single list's spelling, documented by neither engine
  ['aurora-postgresql', 'db.SQL.queries'],
  ['postgres', 'db.SQL.queries'],
  // Aurora's counters that RDS for PostgreSQL does not document
  ['postgres', 'db.SQL.Queries'],
  ['postgres', 'db.User.total_auth_attempts'],
])('%s: %s is reported as undocumented', (engine, name) => {
  expect(undocumented(engine, [name])).toEqual([name]);
});

test('Aurora keeps the counters E3 reads (total_auth_attempts) and RDS for PostgreSQL does not ask for it', () => {
  expect(piMetricsFor('aurora-postgresql').map((d) => d.name)).toContain('db.User.total_auth_attempts');
  expect(piMetricsFor('postgres').map((d) => d.name)).not.toContain('db.User.total_auth_attempts');
});

test.each<[DatabaseEngine, readonly string[]]>([
  ['aurora-postgresql', CLOUD_REPORT_METRICS],
  ['postgres', RDS_POSTGRES_REPORT_METRICS],
])(
  'the report for %s shows only PI panels the collector collects there, each with a catalog title',
  (engine, reportNames) => {
    // GIVEN the PI counters the report asks for on this engine
    const piNames = reportNames.filter((n) => n.startsWith('db.'));
    const collected = piMetricsFor(engine).map((d) => d.name);
    // THEN
    expect(piNames.filter((n) => !collected.includes(n))).toEqual([]);
    for (const name of reportNames) expect(metricDef(name)?.title).toEqual(expect.any(String));
  },
);

test.each<[DatabaseEngine | undefined, DatabaseEngine]>([
  ['postgres', 'postgres'],
  ['aurora-postgresql', 'aurora-postgresql'],
  // events from older CLIs name no engine: Aurora, the only engine there was
  [undefined, 'aurora-postgresql'],
])('an event with engine %s asks PI only for the %s counters (mocked PI)', async (engine, listOf) => {
  // GIVEN PI answers with no datapoints
  piMock.on(GetResourceMetricsCommand).resolves({ MetricList: [] });
  cwMock.on(GetMetricDataCommand).resolves({ MetricDataResults: [] });
  const event = parseCollectEvent({
    runId: 'r1',
    window: WINDOW,
    cluster: {
      clusterId: 'db',
      instanceIds: ['db'],
      piResourceIds: ['db-RES1'],
      ...(engine ? { engine } : {}),
    },
    proxies: [],
  });
  const writer: RunWriter = { writeMetricsFile: (name) => Promise.resolve(`mem://metrics/${name}.json`) };
  // WHEN
  await collectMetrics(event, {
    cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
    pi: new PIClient({ region: 'us-east-1' }),
    writer,
    now: () => new Date('2026-11-21T12:00:00Z'),
  });
  // THEN
  const asked = piMock
    .commandCalls(GetResourceMetricsCommand)
    .flatMap((c) => c.args[0].input.MetricQueries ?? [])
    .map((q) => q.Metric?.replace(/\.avg$/, '') ?? '');
  expect(asked).toEqual(piMetricsFor(listOf).map((d) => d.name));
  expect(undocumented(listOf, asked)).toEqual([]);
});
