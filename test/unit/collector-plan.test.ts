import { UsageError } from '../../lib/core/errors';
import {
  chooseCloudWatchPeriodSec,
  choosePiPeriodSec,
  chunk,
  planCloudWatchQueries,
  planPiRequests,
  type LabResources,
} from '../../lib/collector';

const NOW = new Date('2026-11-21T12:00:00Z');
const HOUR_WINDOW = { start: '2026-11-21T10:00:00Z', end: '2026-11-21T11:00:00Z' };

function lab(instances: number, proxies: number, instanceClasses?: Record<string, string>): LabResources {
  return {
    clusterId: 'lab-cluster',
    instanceIds: Array.from({ length: instances }, (_, i) => `lab-instance-${i + 1}`),
    piResourceIds: Array.from({ length: instances }, (_, i) => `db-RESOURCE${i + 1}`),
    proxies: Array.from({ length: proxies }, (_, i) => `lab-proxy-${i + 1}`),
    instanceClasses,
  };
}

describe('planCloudWatchQueries', () => {
  // 13 instance queries: CPUUtilization (Avg, Max), DatabaseConnections (Avg, Max), FreeableMemory
  // (Avg, Min) and 7 single-stat metrics; burstable classes add three: CPUCreditBalance,
  // CPUSurplusCreditBalance and CPUSurplusCreditsCharged (Unlimited mode).
  // 10 proxy queries: the ten RDS Proxy metrics of PROXY_METRICS, one statistic each.
  test.each<{
    instances: number;
    proxies: number;
    classes: Record<string, string> | undefined;
    expected: number;
  }>([
    { instances: 1, proxies: 0, classes: undefined, expected: 13 },
    { instances: 1, proxies: 1, classes: undefined, expected: 23 },
    { instances: 2, proxies: 2, classes: undefined, expected: 46 },
    { instances: 3, proxies: 1, classes: { 'lab-instance-1': 'db.t4g.medium' }, expected: 13 * 3 + 3 + 10 },
    {
      instances: 2,
      proxies: 0,
      classes: { 'lab-instance-1': 'db.t3.large', 'lab-instance-2': 'db.t4g.medium' },
      expected: 32,
    },
    { instances: 1, proxies: 0, classes: { 'lab-instance-1': 'db.r6g.large' }, expected: 13 },
  ])(
    '$instances instance(s), $proxies proxy(ies), classes $classes → $expected queries',
    ({ instances, proxies, classes, expected }) => {
      // WHEN
      const plan = planCloudWatchQueries(lab(instances, proxies, classes), HOUR_WINDOW, { now: NOW });
      // THEN
      expect(plan.queries).toHaveLength(expected);
    },
  );

  test.each([
    ['CPUCreditBalance', 'Average'],
    ['CPUSurplusCreditBalance', 'Maximum'],
    ['CPUSurplusCreditsCharged', 'Sum'],
  ])('%s (%s) only for burstable (db.t*) instances, on both engines', (metricName, stat) => {
    for (const engine of ['aurora-postgresql', 'postgres'] as const) {
      // GIVEN a burstable and a memory-optimized instance
      const resources = {
        ...lab(2, 0, { 'lab-instance-1': 'db.t4g.micro', 'lab-instance-2': 'db.r7g.large' }),
        engine,
      };
      // WHEN
      const plan = planCloudWatchQueries(resources, HOUR_WINDOW, { now: NOW });
      // THEN
      const credit = plan.queries.filter((q) => q.metricName === metricName);
      expect(credit.map((q) => [q.namespace, q.stat, q.dimensions])).toEqual([
        ['AWS/RDS', stat, { DBInstanceIdentifier: 'lab-instance-1' }],
      ]);
    }
  });

  test.each([
    ['ClientConnections', 'Sum'],
    ['DatabaseConnections', 'Sum'],
    ['DatabaseConnectionsCurrentlySessionPinned', 'Sum'],
    ['DatabaseConnectionsCurrentlyBorrowed', 'Sum'],
    ['MaxDatabaseConnectionsAllowed', 'Sum'],
    ['QueryRequests', 'Sum'],
    ['ClientConnectionsReceived', 'Sum'],
    ['DatabaseConnectionsSetupFailed', 'Sum'],
    ['DatabaseConnectionsBorrowLatency', 'Average'],
    ['QueryDatabaseResponseLatency', 'Average'],
  ])('proxy metric %s is read with %s, by ProxyName', (metricName, stat) => {
    // WHEN
    const plan = planCloudWatchQueries(lab(0, 1), HOUR_WINDOW, { now: NOW });
    // THEN
    const queries = plan.queries.filter((q) => q.metricName === metricName);
    expect(queries).toEqual([
      expect.objectContaining({ namespace: 'AWS/RDS', stat, dimensions: { ProxyName: 'lab-proxy-1' } }),
    ]);
  });

  test.each([
    ['CPUUtilization', ['Average', 'Maximum']],
    ['FreeableMemory', ['Average', 'Minimum']],
    ['CommitLatency', ['Average']],
    ['ConnectionAttempts', ['Sum']],
  ])('instance metric %s is read with %p, by DBInstanceIdentifier', (metricName, stats) => {
    // WHEN
    const plan = planCloudWatchQueries(lab(1, 0), HOUR_WINDOW, { now: NOW });
    // THEN
    const queries = plan.queries.filter((q) => q.metricName === metricName);
    expect(queries.map((q) => q.stat)).toEqual(stats);
    for (const q of queries) expect(q.dimensions).toEqual({ DBInstanceIdentifier: 'lab-instance-1' });
  });

  test('query ids are valid GetMetricData ids and unique', () => {
    // WHEN
    const plan = planCloudWatchQueries(lab(3, 2, { 'lab-instance-2': 'db.t4g.medium' }), HOUR_WINDOW, {
      now: NOW,
    });
    // THEN
    const ids = plan.queries.map((q) => q.id);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z0-9_]*$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('duplicate instance ids and proxy names are planned once', () => {
    // GIVEN
    const resources: LabResources = {
      clusterId: 'c',
      instanceIds: ['a', 'a'],
      piResourceIds: [],
      proxies: ['p', 'p'],
    };
    // WHEN
    const plan = planCloudWatchQueries(resources, HOUR_WINDOW, { now: NOW });
    // THEN
    expect(plan.queries).toHaveLength(23);
  });

  test('the query window is widened to whole periods', () => {
    // GIVEN
    const window = { start: '2026-11-21T10:00:30Z', end: '2026-11-21T10:20:10Z' };
    // WHEN
    const plan = planCloudWatchQueries(lab(1, 0), window, { now: NOW });
    // THEN
    expect(plan.periodSec).toBe(60);
    expect(plan.window.start.toISOString()).toBe('2026-11-21T10:00:00.000Z');
    expect(plan.window.end.toISOString()).toBe('2026-11-21T10:21:00.000Z');
  });

  test('an empty or reversed window is a usage error naming the field', () => {
    expect(() =>
      planCloudWatchQueries(lab(1, 0), { start: HOUR_WINDOW.end, end: HOUR_WINDOW.start }, { now: NOW }),
    ).toThrow(UsageError);
    expect(() => planCloudWatchQueries(lab(1, 0), { start: 'soon', end: HOUR_WINDOW.end })).toThrow(
      /window\.start/,
    );
  });
});

describe('period choice', () => {
  const at = (iso: string): number => Date.parse(iso);

  test.each([
    {
      name: '20-minute run, just finished',
      start: '2026-11-21T11:30:00Z',
      end: '2026-11-21T11:50:00Z',
      expected: 60,
    },
    { name: '1-day window', start: '2026-11-20T11:00:00Z', end: '2026-11-21T11:00:00Z', expected: 60 },
    {
      name: '2-day window (1440 points max)',
      start: '2026-11-19T11:00:00Z',
      end: '2026-11-21T11:00:00Z',
      expected: 120,
    },
    { name: '7-day window', start: '2026-11-14T11:00:00Z', end: '2026-11-21T11:00:00Z', expected: 420 },
    {
      name: 'run 20 days ago (1-minute data expired)',
      start: '2026-11-01T10:00:00Z',
      end: '2026-11-01T11:00:00Z',
      expected: 300,
    },
    {
      name: 'run 100 days ago (5-minute data expired)',
      start: '2026-08-13T10:00:00Z',
      end: '2026-08-13T11:00:00Z',
      expected: 3600,
    },
  ])('CloudWatch: $name → $expected s', ({ start, end, expected }) => {
    // WHEN
    const period = chooseCloudWatchPeriodSec(at(start), at(end), { now: NOW });
    // THEN
    expect(period).toBe(expected);
    expect(period % 60).toBe(0);
    expect((at(end) - at(start)) / 1000 / period).toBeLessThanOrEqual(1440);
  });

  test.each([
    { name: '1-hour window', seconds: 3600, min: undefined, expected: 60 },
    { name: '2-day window', seconds: 2 * 86400, min: undefined, expected: 300 },
    { name: '30-day window', seconds: 30 * 86400, min: undefined, expected: 3600 },
    { name: '10 minutes at per-second resolution', seconds: 600, min: 1 as const, expected: 1 },
    { name: '1 hour, per-second asked but too many points', seconds: 3600, min: 1 as const, expected: 60 },
  ])('Performance Insights: $name → $expected s', ({ seconds, min, expected }) => {
    // WHEN
    const period = choosePiPeriodSec(0, seconds * 1000, { minPiPeriodSec: min });
    // THEN
    expect(period).toBe(expected);
    expect([1, 60, 300, 3600, 86400]).toContain(period);
  });
});

describe('planPiRequests', () => {
  test('one request per instance with the five Aurora PostgreSQL counters, ServiceType RDS identifiers', () => {
    // WHEN
    const plan = planPiRequests(lab(2, 1), HOUR_WINDOW);
    // THEN
    expect(plan.periodSec).toBe(60);
    expect(plan.requests.map((r) => r.identifier)).toEqual(['db-RESOURCE1', 'db-RESOURCE2']);
    expect(plan.requests[0]!.queries.map((q) => q.metric)).toEqual([
      'db.load.avg',
      'db.Transactions.xact_commit.avg',
      'db.User.numbackends.avg',
      'db.User.total_auth_attempts.avg',
      'db.SQL.Queries.avg',
    ]);
  });

  test('RDS for PostgreSQL gets its own documented counters: no total_auth_attempts, no db.SQL.Queries', () => {
    // WHEN
    const plan = planPiRequests({ ...lab(1, 0), engine: 'postgres' }, HOUR_WINDOW);
    // THEN
    expect(plan.requests[0]!.queries.map((q) => q.metric)).toEqual([
      'db.load.avg',
      'db.Transactions.xact_commit.avg',
      'db.User.numbackends.avg',
    ]);
  });

  test('more than 15 counters are split into calls of at most 15', () => {
    // GIVEN
    const piMetrics = Array.from({ length: 32 }, (_, i) => ({
      name: `db.Custom.c${i}`,
      title: `custom counter ${i}`,
      stat: 'avg' as const,
      unit: null,
    }));
    // WHEN
    const plan = planPiRequests(lab(1, 0), HOUR_WINDOW, { piMetrics });
    // THEN
    expect(plan.requests.map((r) => r.queries.length)).toEqual([15, 15, 2]);
    expect(plan.requests.flatMap((r) => r.queries.map((q) => q.name))).toEqual(piMetrics.map((m) => m.name));
  });

  test('no PI resource ids, no requests', () => {
    const plan = planPiRequests(
      { clusterId: 'c', instanceIds: ['i'], piResourceIds: [], proxies: [] },
      HOUR_WINDOW,
    );
    expect(plan.requests).toEqual([]);
  });
});

test('chunk splits at the limit and keeps order', () => {
  const items = Array.from({ length: 1201 }, (_, i) => i);
  const parts = chunk(items, 500);
  expect(parts.map((p) => p.length)).toEqual([500, 500, 201]);
  expect(parts.flat()).toEqual(items);
});
