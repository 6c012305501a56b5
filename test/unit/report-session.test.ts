/**
 * The report's session-state matrix and added-latency table on SYNTHETIC run directories (hand-made
 * to the result types, not measurements): what each cell and row shows, the pins read from the
 * collector's CloudWatch file (only whole periods inside a feature's window; no file or no data is
 * unknown, never "no pin"), the zones beside the latency, and `compare` of two runs.
 */
import { expect } from '@jest/globals';
import { catalogLookup } from '../../lib/report/catalog-lookup';
import {
  compareSessions,
  sessionComparisonMd,
  sessionSections,
  sessionSectionsMd,
} from '../../lib/report/render-session';
import { fmtAdded, fmtLatency, latencyTable, zoneNote } from '../../lib/report/latency';
import { loadRun } from '../../lib/report/load';
import { renderHtml } from '../../lib/report/render-html';
import { renderMarkdown } from '../../lib/report/render-md';
import { buildModel } from '../../lib/report/shape';
import { sessionMatrix } from '../../lib/report/session-matrix';
import {
  classifySession,
  expectSession,
  PINNED_METRIC,
  type SessionFeature,
  type SessionFeatureResult,
  type SessionProbeStep,
  type SessionStateResult,
} from '../../lib/suite/session-state';
import { describeTarget, type TargetDescriptor } from '../../lib/suite/targets';
import type { ComponentZone, MetricsFile, StepRecord } from '../../lib/suite/types';
import { makeManifest, makeStep, metricsFile, writeRunDir } from '../fixtures/runs/synthetic';
import { scratchDir } from '../helpers/scratch';

const TX = describeTarget(
  { kind: 'pgbouncer-transaction', name: 'pgbouncer-transaction' },
  { version: '1.18.0', maxPreparedStatements: null },
);
const DIRECT = describeTarget({ kind: 'direct', name: 'direct' }, { version: '15.18' });
const PROXY = describeTarget({ kind: 'rds-proxy', name: 'pool100' }, { version: null });

function check(
  client: string,
  role: SessionProbeStep['role'],
  present: boolean,
  pid: number,
): SessionProbeStep {
  return {
    client,
    kind: 'check',
    role,
    sql: 'SELECT …',
    backendPid: pid,
    value: present ? '41s' : '0',
    present,
    sqlstate: null,
    error: null,
    ms: 1,
  };
}

/** A feature whose B saw A's state on A's server process (`leak`), or did not (each client its own). */
function feature(
  f: SessionFeature,
  d: TargetDescriptor,
  leak: boolean,
  pinWatch: SessionFeatureResult['pinWatch'] = null,
): SessionFeatureResult {
  const steps = [check('B', 'other', leak, leak ? 7 : 8), check('A', 'own', true, 7)];
  return { feature: f, expected: expectSession(f, d), ...classifySession(steps), steps, pinWatch };
}

function sessionStep(
  runId: string,
  d: TargetDescriptor,
  result: SessionStateResult,
  startSec: number,
): StepRecord {
  const base = makeStep(runId, {
    scenario: 'session-state',
    target: d.kind,
    targetName: d.name,
    clients: 2,
    tps: null,
    startSec,
  });
  return {
    ...base,
    result: null,
    probe: result,
    verdict: { expected: 'succeeds (session-state)', observed: '…', held: true },
  };
}

const at = (sec: number): string =>
  new Date(Date.parse('2026-01-05T10:00:00.000Z') + sec * 1000).toISOString();

function sessionRun(runId: string, withMetrics: boolean): string {
  const watch = (startSec: number): SessionFeatureResult['pinWatch'] => ({
    metric: PINNED_METRIC,
    dimensions: { ProxyName: 'lab-pool100' },
    periodSec: 60,
    start: at(startSec),
    end: at(startSec + 125),
  });
  const steps = [
    sessionStep(
      runId,
      DIRECT,
      {
        kind: 'session-state',
        order: 'interleaved',
        sharing: 'none needed',
        features: [feature('set-session', DIRECT, false), feature('advisory-xact-lock', DIRECT, false)],
      },
      0,
    ),
    sessionStep(
      runId,
      TX,
      {
        kind: 'session-state',
        order: 'interleaved',
        sharing: 'pool of one',
        features: [feature('set-session', TX, true), feature('advisory-xact-lock', TX, false)],
      },
      10,
    ),
    sessionStep(
      runId,
      PROXY,
      {
        kind: 'session-state',
        order: 'interleaved',
        sharing: 'RDS Proxy: not narrowed',
        features: [
          feature('set-session', PROXY, false, watch(100)),
          feature('advisory-xact-lock', PROXY, false, watch(300)),
        ],
      },
      100,
    ),
  ];
  const metrics: Record<string, MetricsFile> = withMetrics
    ? {
        cloudwatch: metricsFile(runId, [
          {
            source: 'cloudwatch',
            name: PINNED_METRIC,
            stat: 'Sum',
            unit: 'Count',
            dimensions: { ProxyName: 'lab-pool100' },
            // 10:02 lies inside set-session's window (10:01:40–10:03:45): pinned; 10:06 inside advisory-xact-lock's: 0;
            // 10:01 starts before set-session's window: a neighbour's pin, never charged to it
            points: [
              [at(60), 5],
              [at(120), 1],
              [at(360), 0],
            ],
            status: 'ok',
          },
        ]),
      }
    : {};
  return writeRunDir(scratchDir('proxylab-report-session-'), {
    manifest: makeManifest(runId, {
      suite: 'session-state',
      mode: 'cloud',
      stepIds: steps.map((s) => s.stepId),
    }),
    steps,
    metrics,
  });
}

describe('the session matrix', () => {
  test('a column per target, a row per feature, each cell with its outcome and verdict', () => {
    // GIVEN a run of two features on three targets WHEN the matrix is made
    const m = sessionMatrix(loadRun(sessionRun('synthetic-session', true)));
    // THEN
    expect(m?.columns.map((c) => c.target)).toEqual(['direct', 'pgbouncer-transaction', 'pool100']);
    expect(m?.rows.map((r) => [r.feature, ...r.cells.map((c) => c?.state)])).toEqual([
      ['set-session', 'works', 'leaks', 'works'],
      ['advisory-xact-lock', 'works', 'works', 'works'],
    ]);
    expect(m?.rows.flatMap((r) => r.cells.map((c) => c?.held))).toEqual([true, true, true, true, true, true]);
  });

  test('pins come from whole minutes inside each feature’s window, with the source named', () => {
    const m = sessionMatrix(loadRun(sessionRun('synthetic-session-pins', true)));
    const proxy = (f: string) => m?.rows.find((r) => r.feature === f)?.cells[2];
    expect(proxy('set-session')?.pins).toMatchObject({
      pinned: true,
      source: expect.stringContaining('ProxyName=lab-pool100'),
    });
    expect(proxy('set-session')?.pinsHeld).toBe(true);
    // AWS: no pin for transaction-level advisory locks, and the metric agrees
    expect(proxy('advisory-xact-lock')?.pins?.pinned).toBe(false);
    expect(proxy('advisory-xact-lock')?.pinsHeld).toBe(true);
    // targets that do not pin carry no pin at all
    expect(m?.rows[0]?.cells[1]?.pins).toBeNull();
  });

  test('without the collector’s file a pin is unknown, and says how to get it', () => {
    const m = sessionMatrix(loadRun(sessionRun('synthetic-session-nometrics', false)));
    const cell = m?.rows[0]?.cells[2];
    expect(cell?.pins?.pinned).toBeNull();
    expect(cell?.pins?.detail).toMatch(/proxylab collect/);
    expect(cell?.pinsHeld).toBeNull();
  });

  test('report.html and summary.md draw it, with the expectation and its sources on hover', () => {
    const run = loadRun(sessionRun('synthetic-session-render', true));
    const model = buildModel(run, catalogLookup());
    const page = renderHtml(model, {
      lookup: catalogLookup(),
      generatedAt: new Date('2026-01-05T12:00:00Z'),
    });
    expect(page).toContain(
      'data-feature="set-session" data-target="pgbouncer-transaction" data-outcome="leaks" data-held="true"',
    );
    expect(page).toContain(
      'title="expected: leaks\nwhy: PgBouncer&#39;s feature map, &quot;SET/RESET&quot;: Never in transaction pooling',
    );
    expect(page).toContain('https://www.pgbouncer.org/features.html');
    // the probe scenario has no generic pgbench section
    expect(page).not.toContain('data-scenario="session-state"');
    const md = renderMarkdown(model, catalogLookup());
    expect(md).toContain('| SET (session) | ✓ works | ✓ leaks | ✓ works · pins |');
    expect(md).toContain('| advisory lock (transaction) | ✓ works | ✓ works | ✓ works · no pin |');
  });
});

/** A latency run: direct and a transaction pool, 3 repetitions, p50/p99 per repetition. */
function latencyRun(
  runId: string,
  added: readonly number[],
  zones: readonly ComponentZone[] | null = null,
): string {
  const steps: StepRecord[] = [];
  let t = 0;
  added.forEach((a, i) => {
    const rep = i + 1;
    for (const [target, p50, p99] of [
      ['direct', 0.1, 0.5],
      ['pgbouncer-transaction', 0.1 + a, 0.5 + 4 * a],
    ] as const) {
      const s = makeStep(runId, {
        scenario: 'latency-single',
        target,
        clients: 1,
        tps: 5000,
        p50,
        repetition: rep,
        startSec: (t += 4),
        durationSec: 3,
      });
      steps.push({ ...s, result: s.result ? { ...s.result, latencyP99Ms: p99 } : null });
    }
  });
  return writeRunDir(scratchDir('proxylab-report-latency-'), {
    manifest: makeManifest(runId, {
      suite: 'latency',
      stepIds: steps.map((s) => s.stepId),
      ...(zones
        ? {
            environment: {
              maxConnections: 40,
              serverVersion: '17.9',
              pgbenchVersion: '17.9',
              poolerVersion: null,
              cpus: 2,
              zones,
            },
          }
        : {}),
    }),
    steps,
    metrics: {},
  });
}

describe('the added-latency table', () => {
  const isLatency = (s: string): boolean => catalogLookup()(s)?.experiment === 'LATENCY';

  test('target minus direct per repetition: median and range, in µs below a millisecond', () => {
    // GIVEN repetitions adding 40, 60 and 50 µs at p50 (and 4 × that at p99)
    const t = latencyTable(loadRun(latencyRun('synthetic-latency', [0.04, 0.06, 0.05])), isLatency);
    // THEN one row, the median added and the range
    expect(t.rows).toHaveLength(1);
    const [row] = t.rows;
    expect(row?.target).toBe('pgbouncer-transaction');
    expect(row?.addedP50Ms?.median).toBeCloseTo(0.05, 9);
    expect(fmtAdded(row?.addedP50Ms ?? null)).toBe('+50 µs (+40 µs … +60 µs, n=3)');
    expect(fmtAdded(row?.addedP99Ms ?? null)).toBe('+200 µs (+160 µs … +240 µs, n=3)');
    expect(row?.mode).toBe('back to back');
  });

  test.each([
    [0.0834, '83 µs'],
    [1.2749, '1.27 ms'],
    [null, '?'],
  ])('fmtLatency(%s) is %s', (ms, text) => {
    expect(fmtLatency(ms)).toBe(text);
  });

  test.each<[string, ComponentZone[], string | null]>([
    [
      'runner and writer in one zone',
      [
        { component: 'writer', zone: 'us-east-1a' },
        { component: 'runner-0', zone: 'us-east-1a' },
      ],
      null,
    ],
    [
      'runner in another zone',
      [
        { component: 'writer', zone: 'us-east-1a' },
        { component: 'runner-0', zone: 'us-east-1b' },
      ],
      'runner-0 (us-east-1b) is not in the writer',
    ],
    [
      'writer zone unknown',
      [
        { component: 'writer', zone: null },
        { component: 'runner-0', zone: 'us-east-1b' },
      ],
      null,
    ],
  ])('zones: %s', (_n, zones, note) => {
    const got = zoneNote(zones);
    if (note === null) expect(got).toBeNull();
    else expect(got).toContain(note);
  });

  test('the zones travel into summary.md beside the table', () => {
    const run = loadRun(
      latencyRun(
        'synthetic-latency-zones',
        [0.05],
        [
          { component: 'writer', zone: 'us-east-1a' },
          { component: 'runner-0', zone: 'us-east-1b' },
        ],
      ),
    );
    const md = sessionSectionsMd(sessionSections(run, catalogLookup()));
    expect(md).toContain(
      'Zones: writer us-east-1a · runner-0 us-east-1b — runner-0 (us-east-1b) is not in the writer',
    );
    expect(md).toContain('| back to back | simple | pgbouncer-transaction | 100 µs | 150 µs | +50 µs |');
  });
});

describe('compare', () => {
  test('session cells that changed and the added latency A → B, beyond the spread or not', () => {
    const a = sessionSections(
      loadRun(latencyRun('synthetic-latency-a', [0.04, 0.05, 0.06])),
      catalogLookup(),
    );
    const b = sessionSections(loadRun(latencyRun('synthetic-latency-b', [0.4, 0.5, 0.6])), catalogLookup());
    const c = compareSessions(a, b);
    expect(c.latency).toHaveLength(1);
    expect(c.latency[0]?.p50Change).toBeCloseTo(0.45, 9);
    expect(c.latency[0]?.beyondSpread).toBe(true);
    const s1 = sessionSections(loadRun(sessionRun('synthetic-session-a', true)), catalogLookup());
    const s2 = sessionSections(loadRun(sessionRun('synthetic-session-b', false)), catalogLookup());
    const cells = compareSessions(s1, s2).cells;
    expect(cells.filter((x) => x.changed).map((x) => [x.feature, x.target, x.a, x.b])).toEqual([
      ['SET (session)', 'pool100', 'works · pins', 'works · pin ?'],
      ['advisory lock (transaction)', 'pool100', 'works · no pin', 'works · pin ?'],
    ]);
  });

  test('compare.md lists only the cells that changed, and says how many did not', () => {
    const s1 = sessionSections(loadRun(sessionRun('synthetic-session-c', true)), catalogLookup());
    const s2 = sessionSections(loadRun(sessionRun('synthetic-session-d', false)), catalogLookup());
    const md = sessionComparisonMd(compareSessions(s1, s2));
    expect(md).toContain('6 cells (feature × target) in both runs, 2 changed:');
    expect(md).toContain('| SET (session) | pool100 | works · pins | works · pin ? |');
    expect(md).not.toContain('| SET (session) | direct |');
  });
});
