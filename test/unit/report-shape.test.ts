/**
 * The report's data shaping on SYNTHETIC run directories (test/fixtures/runs): which points go in
 * which chart, best/median/worst, gaps instead of zeros, no-data series, findings and warnings.
 */
import { expect } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../lib/core/errors';
import { allMetricDefs } from '../../lib/collector/catalog';
import { catalogLookup } from '../../lib/report/catalog-lookup';
import { groupCells, spreadOf } from '../../lib/report/cells';
import { loadRun } from '../../lib/report/load';
import {
  buildModel,
  CLOUD_METRICS,
  chartWindows,
  churnRows,
  errorMatrices,
  findingRows,
  LOCAL_METRICS,
  metricPanels,
  reportWarnings,
  scenarioPanels,
} from '../../lib/report/shape';
import { stepFileName } from '../../lib/suite/types';
import { gauge, metricsFile, partialHostileRun, repeatedRun, writeRunDir } from '../fixtures/runs/synthetic';

const FIXTURES = join(__dirname, '..', 'fixtures', 'runs');
const repeated = loadRun(join(FIXTURES, 'synthetic-repeated'));
const hostile = loadRun(join(FIXTURES, 'synthetic-partial-hostile'));
const cloud = loadRun(join(FIXTURES, 'synthetic-cloud'));

describe('spreadOf: best / median / worst over repetitions', () => {
  test.each([
    { values: [100, 300, 200], higherIsBetter: true, expected: { best: 300, median: 200, worst: 100, n: 3 } },
    {
      values: [100, 400, 200, 300],
      higherIsBetter: true,
      expected: { best: 400, median: 250, worst: 100, n: 4 },
    },
    { values: [4, 2, 9], higherIsBetter: false, expected: { best: 2, median: 4, worst: 9, n: 3 } },
    { values: [7], higherIsBetter: true, expected: { best: 7, median: 7, worst: 7, n: 1 } },
  ])('$values (higher is better: $higherIsBetter)', ({ values, higherIsBetter, expected }) => {
    // WHEN
    const spread = spreadOf(values, higherIsBetter);
    // THEN
    expect(spread).toEqual(expected);
  });

  test('no values is unknown (null), not zero', () => {
    expect(spreadOf([], true)).toBeNull();
  });
});

describe('loadRun', () => {
  test('reads steps in plan order and keeps metrics/steps.json out of the metrics', () => {
    // GIVEN a fixture whose steps/ listing is alphabetical, not plan order
    // THEN
    expect(repeated.steps.map((s) => s.stepId)).toEqual(repeated.manifest.stepIds);
    expect(repeated.metrics.map((m) => m.name)).toEqual(['local']);
    expect(repeated.missingStepIds).toEqual([]);
  });

  test('a partial run lists its missing steps and the files it could not read', () => {
    expect(hostile.steps).toHaveLength(2);
    expect(hostile.missingStepIds).toEqual([
      'not-yet/direct/c10/simple/persistent/r1',
      'not-yet/direct/c20/simple/persistent/r1',
    ]);
    expect(hostile.problems).toEqual([expect.stringMatching(/^steps\/corrupt\.json: not valid JSON/)]);
  });

  test('a directory without manifest.json is a usage error', () => {
    // GIVEN
    const dir = mkdtempSync(join(tmpdir(), 'report-load-'));
    try {
      // WHEN / THEN
      expect(() => loadRun(dir)).toThrow(UsageError);
      expect(() => loadRun(dir)).toThrow(/no manifest\.json/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a step record that does not fit the types is reported with the field path, the rest still load', () => {
    // GIVEN a run whose second step has clients as a string
    const dir = mkdtempSync(join(tmpdir(), 'report-load-'));
    try {
      const run = repeatedRun('synthetic-bad-field');
      writeRunDir(dir, run);
      const bad = { ...run.steps[1]!, params: { ...run.steps[1]!.params, clients: '20' } };
      writeFileSync(join(dir, 'steps', `${stepFileName(bad.stepId)}.json`), JSON.stringify(bad));
      // WHEN
      const loaded = loadRun(dir);
      // THEN
      expect(loaded.steps).toHaveLength(run.steps.length - 1);
      expect(loaded.problems).toEqual([expect.stringContaining('params.clients')]);
      expect(loaded.missingStepIds).toEqual([run.steps[1]!.stepId]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('scenario charts: which points go where', () => {
  const panels = scenarioPanels(groupCells(repeated.steps));

  test('one panel per scenario, x = its client counts; a scenario of one client count is not drawable', () => {
    expect(panels.map((p) => [p.scenario, p.modes, p.clients, p.drawable])).toEqual([
      ['quick-e1', 'simple, prepared · persistent connections', [20, 60], true],
      ['quick-e3', 'simple · persistent connections, new connection per transaction (-C)', [10], false],
    ]);
  });

  test('one line per target and mode, medians with best/worst from the three repetitions', () => {
    // GIVEN quick-e1 simple: pgbouncer-transaction tps 9000/9500 × (1, 1.1, 0.9)
    const e1 = panels[0]!;
    // THEN every target and protocol is a series of the one chart
    expect(e1.tps.map((l) => l.label)).toEqual([
      'direct · simple',
      'pgbouncer-transaction · simple',
      'direct · prepared',
      'pgbouncer-transaction · prepared',
    ]);
    const pooled = e1.tps[1]!;
    expect(pooled.points[0]?.value).toEqual({ best: 9900, median: 9000, worst: 8100, n: 3 });
    expect(pooled.points[1]?.value?.median).toBeCloseTo(9500);
    expect(e1.repeated).toBe(true);
  });

  test('a refused cell is a gap (null value, flagged troubled), never a zero', () => {
    // GIVEN direct at 60 clients was refused (no tps)
    const direct = panels[0]!.tps[0]!;
    // THEN
    expect(direct.points[1]).toEqual({ clients: 60, value: null, troubled: true });
    expect(direct.points[0]?.value?.median).toBe(10000);
  });

  test('latency lines: p95 keeps lower = better (best is the minimum)', () => {
    const direct95 = panels[0]!.latencyP95Ms[0]!;
    expect(direct95.points[0]?.value).toEqual({ best: 3.6, median: 4, worst: 4.4, n: 3 });
  });

  test('series of one mode per scenario keep their target’s colour; several modes get one colour each', () => {
    expect(panels[0]!.tps.map((l) => [l.label, l.colorIndex])).toEqual([
      ['direct · simple', 0],
      ['pgbouncer-transaction · simple', 1],
      ['direct · prepared', 2],
      ['pgbouncer-transaction · prepared', 3],
    ]);
    const single = scenarioPanels(
      groupCells(
        repeated.steps.filter((s) => s.params.protocol === 'simple' && s.params.connect === 'persistent'),
      ),
    );
    expect(single[0]!.tps.map((l) => [l.label, l.colorIndex])).toEqual([
      ['direct', 0],
      ['pgbouncer-transaction', 1],
    ]);
  });
});

describe('churn: with and without -C', () => {
  test('pairs each -C cell with its persistent twin; cost = persistent median / -C median', () => {
    // GIVEN quick-e3 direct: persistent 17000 × (1, 1.1, 0.9); -C 210 × (1, 1.1, 0.9) plus a 4th repetition at 190
    const rows = churnRows(groupCells(repeated.steps));
    // THEN
    expect(rows.map((r) => r.label)).toEqual(['direct', 'pgbouncer-transaction']);
    const direct = rows[0]!;
    expect(direct.persistent?.median).toBe(17000);
    expect(direct.perTransaction).toEqual({ best: expect.closeTo(231), median: 200, worst: 189, n: 4 });
    expect(direct.churnCost).toBeCloseTo(85);
  });

  test('a -C cell without a persistent twin has an unknown cost, not a guessed one', () => {
    const onlyChurn = repeated.steps.filter((s) => s.params.connect === 'per-transaction');
    const rows = churnRows(groupCells(onlyChurn));
    expect(rows.every((r) => r.persistent === null && r.churnCost === null)).toBe(true);
  });
});

describe('error matrix', () => {
  const [e1] = errorMatrices(groupCells(repeated.steps));

  test('columns sorted by clients, protocol, connect; rows per target', () => {
    expect(e1!.columns.map((c) => `${c.clients}/${c.protocol}`)).toEqual([
      '20/simple',
      '20/prepared',
      '60/simple',
      '60/prepared',
    ]);
    expect(e1!.rows.map((r) => r.label)).toEqual(['direct', 'pgbouncer-transaction']);
  });

  test('error classes are summed over repetitions with one sample line kept', () => {
    const directAt60 = e1!.rows[0]!.cells[2]!;
    expect(directAt60.state).toBe('errors');
    expect(directAt60.errors).toEqual([
      {
        class: 'too-many-connections',
        count: 3,
        sample: expect.stringContaining('remaining connection slots are reserved'),
      },
    ]);
    expect(directAt60.repetitions).toBe(3);
    expect(directAt60.verdictHeld).toBe(true);
    const pooledPrepared = e1!.rows[1]!.cells[1]!;
    expect(pooledPrepared.errors.map((e) => [e.class, e.count])).toEqual([
      ['prepared-statement-missing', 57],
      ['prepared-statement-exists', 51],
    ]);
    expect(e1!.rows[1]!.cells[0]!.state).toBe('ok');
  });
});

describe('metrics over time', () => {
  test('local: wanted panels in order; no-data and error series are listed with their reason, not drawn', () => {
    // WHEN
    const panels = metricPanels('local', repeated.metrics);
    const byTitle = new Map(panels.map((p) => [p.title, p]));
    // THEN
    const waiting = byTitle.get('Clients waiting for a server connection (cl_waiting)')!;
    expect(waiting.lines).toHaveLength(1);
    expect(waiting.lines[0]!.points[3]).toEqual([Date.parse('2026-01-05T10:00:15.000Z'), 30]);
    const maxwait = byTitle.get('Longest wait (maxwait)')!;
    expect(maxwait.lines.map((l) => l.label)).toEqual(['bench / transaction']);
    expect(maxwait.missing).toEqual([
      { label: 'bench_session / session · Sum', status: 'no-data', reason: 'pool never used in the window' },
    ]);
    const backends = byTitle.get('Backends (pg_stat_database numbackends)')!;
    expect(backends.lines).toEqual([]);
    expect(backends.missing[0]?.status).toBe('not-collected');
    const poll = byTitle.get('poll')!;
    expect(poll.lines).toEqual([]);
    expect(poll.missing).toEqual([
      expect.objectContaining({ status: 'error', reason: '3 of 120 polls failed: connection refused' }),
    ]);
  });

  test('step windows: one band per step, or per scenario once a run has more than 60 steps', () => {
    // GIVEN 70 steps in three scenarios
    const windows = Array.from({ length: 70 }, (_, i) => ({
      index: i + 1,
      stepId: `s${i}`,
      scenario: i < 30 ? 'e5-short' : i < 60 ? 'e5-long' : 'e1',
      startMs: i * 1000,
      endMs: i * 1000 + 900,
    }));
    // THEN
    expect(chartWindows(windows.slice(0, 3)).map((w) => w.label)).toEqual(['1', '2', '3']);
    expect(chartWindows(windows)).toEqual([
      { label: 'e5-short', startMs: 0, endMs: 29_900 },
      { label: 'e5-long', startMs: 30_000, endMs: 59_900 },
      { label: 'e1', startMs: 60_000, endMs: 69_900 },
    ]);
  });

  test('cloud: the proxy and instance series share a panel; pinned no-data and memory error stay visible as such', () => {
    const panels = metricPanels('cloud', cloud.metrics);
    const byTitle = new Map(panels.map((p) => [p.title, p]));
    expect(byTitle.get('Database connections')!.lines.map((l) => l.label)).toEqual(['lab-writer', 'pool100']);
    expect(byTitle.get('Session-pinned connections (proxy)')!.missing).toEqual([
      expect.objectContaining({ status: 'no-data', reason: expect.stringContaining('no datapoints') }),
    ]);
    expect(byTitle.get('Freeable memory')!.missing).toEqual([
      expect.objectContaining({ status: 'error', reason: expect.stringContaining('AccessDenied') }),
    ]);
    expect(byTitle.get('Authentication attempts')!.missing[0]?.status).toBe('not-collected');
  });

  test('titles come from the collector catalog: one title per metric name, no title used twice', () => {
    // GIVEN every catalog entry
    const titleByName = new Map<string, Set<string>>();
    for (const d of allMetricDefs())
      titleByName.set(d.name, (titleByName.get(d.name) ?? new Set()).add(d.title));
    // THEN a name shared by Aurora and the proxy (DatabaseConnections) still has one title
    for (const [name, titles] of titleByName)
      expect([name, [...titles]]).toEqual([name, [expect.any(String)]]);
    const titles = [...titleByName.values()].map((t) => [...t][0]);
    expect(new Set(titles).size).toBe(titles.length);
    // and every panel the report always shows is one of them, in catalog words
    for (const w of [...CLOUD_METRICS, ...LOCAL_METRICS])
      expect(titleByName.get(w.name)).toEqual(new Set([w.title]));
  });

  test('bytes are shown in MiB', () => {
    const memory = gauge(
      'cloudwatch',
      'FreeableMemory',
      { DBInstanceIdentifier: 'w' },
      [2 * 1024 ** 3, 512 * 1024 ** 2],
      'Bytes',
    );
    const [panel] = metricPanels('cloud', [
      { name: 'cloudwatch', file: metricsFile('synthetic-mem', [memory]) },
    ]).filter((p) => p.title === 'Freeable memory');
    expect(panel!.unit).toBe('MiB');
    expect(panel!.lines[0]!.points.map(([, v]) => v)).toEqual([2048, 512]);
  });
});

describe('findings and warnings', () => {
  test('scenarios map to their published experiment; a complete run whose verdicts held reproduced it', () => {
    const rows = findingRows(repeated, catalogLookup());
    expect(rows.map((r) => [r.scenario, r.experiment, r.state])).toEqual([
      ['quick-e1', 'E1', 'reproduced'],
      ['quick-e3', 'E3', 'reproduced'],
    ]);
    expect(rows[0]!.finding).toMatch(/prepared/);
  });

  test('a broken verdict contradicts; a partial run with verdicts that held is only "held so far"', () => {
    expect(findingRows(hostile, () => null).map((r) => r.state)).toEqual(['contradicted']);
    const heldButPartial = { ...hostile, steps: hostile.steps.filter((s) => s.verdict.held === true) };
    expect(findingRows(heldButPartial, () => null).map((r) => r.state)).toEqual(['held-so-far']);
  });

  test('a comparison verdict in the manifest counts for its scenario', () => {
    const withComparison = {
      ...repeated,
      manifest: {
        ...repeated.manifest,
        scenarioVerdicts: [
          { scenario: 'quick-e3', expected: '-C pooled ≥ 3 × direct', observed: '1.2 ×', held: false },
        ],
      },
    };
    const rows = findingRows(withComparison, () => null);
    expect(rows[1]).toEqual(
      expect.objectContaining({ scenario: 'quick-e3', state: 'contradicted', broke: 1 }),
    );
    expect(rows[1]!.brokenExamples[0]).toMatch(/1\.2 ×/);
  });

  test.each([
    {
      name: 'repeated',
      run: repeated,
      // the fixtures are runs of the release before plan.json: labelled from the catalog, with a note
      ids: [
        'load-generator-saturated',
        'fewer-transactions',
        'no-plan',
        'pgbouncer-stand-in',
        'metrics-failed',
      ],
    },
    {
      name: 'partial-hostile',
      run: hostile,
      ids: ['partial-run', 'unreadable-files', 'no-plan', 'pgbouncer-stand-in', 'metrics-failed'],
    },
    { name: 'cloud', run: cloud, ids: ['no-plan', 'metrics-failed'] },
  ])('warnings for $name', ({ run, ids }) => {
    expect(reportWarnings(run).map((w) => w.id)).toEqual(ids);
  });

  test('warnings name the steps they apply to', () => {
    const byId = new Map(reportWarnings(repeated).map((w) => [w.id, w]));
    expect(byId.get('load-generator-saturated')!.stepIds).toEqual([
      'quick-e3/pgbouncer-transaction/c10/simple/persistent/r2',
    ]);
    expect(byId.get('fewer-transactions')!.stepIds).toEqual([
      'quick-e3/direct/c10/simple/per-transaction/r4',
    ]);
    expect(reportWarnings(hostile).find((w) => w.id === 'partial-run')!.message).toMatch(
      /2 of 4 planned steps/,
    );
  });

  test('buildModel ties it together for a partial run', () => {
    const model = buildModel(hostile, () => null);
    expect(model.windows.map((w) => w.index)).toEqual([1, 2]);
    expect(model.cells).toHaveLength(2);
  });
});

describe('synthetic fixtures are marked as such', () => {
  test.each(['synthetic-repeated', 'synthetic-partial-hostile', 'synthetic-cloud'])('%s', (name) => {
    const run = loadRun(join(FIXTURES, name));
    expect(run.manifest.runId).toMatch(/^synthetic-/);
    expect(String(run.manifest.settings.synthetic)).toMatch(/SYNTHETIC/);
  });

  test('the committed fixtures are what the builders produce (regenerate with generate.ts)', () => {
    const fresh = repeatedRun();
    expect(repeated.steps).toEqual(fresh.steps);
    expect(repeated.manifest).toEqual(fresh.manifest);
    expect(partialHostileRun().steps).toEqual(hostile.steps);
  });
});
