/**
 * The pooler matrix (issue 12): direct, RDS Proxy, PgBouncer on a dedicated host and PgBouncer
 * co-located side by side per client count, with TPS, p95, the pooler's CPU (busiest process's mean
 * over the step, from `pgbouncer`/`process_cpu_percent` series) and `poolerSaturated` (absent in
 * older runs: unknown). Hand-built step records (test/helpers/run-files.ts); `compare` matches the
 * pooler targets across two runs.
 */
import { expect } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareRuns } from '../../lib/report/compare';
import { loadRun, type LoadedRun } from '../../lib/report/load';
import { cellText, poolerMatrices, stepPoolerCpu } from '../../lib/report/pooler-matrix';
import { renderHtml } from '../../lib/report/render-html';
import { renderMarkdown } from '../../lib/report/render-md';
import { buildModel } from '../../lib/report/shape';
import { groupCells } from '../../lib/report/cells';
import {
  describeTarget,
  fallbackDescriptor,
  type TargetDescriptor,
  type TargetProbe,
} from '../../lib/suite/targets';
import { stepFileName, type MetricSeries, type StepRecord, type TargetRef } from '../../lib/suite/types';
import { manifestWith, stepRecordWith } from '../helpers/run-files';

const RUN_ID = 'cloud-e5-1';
const T0 = Date.parse('2026-03-01T10:00:00Z');

const TARGETS: ReadonlyArray<{ ref: TargetRef; patch: Partial<TargetDescriptor> }> = [
  { ref: { kind: 'direct', name: 'direct' }, patch: {} },
  { ref: { kind: 'rds-proxy', name: 'pool100' }, patch: {} },
  {
    ref: { kind: 'pgbouncer-session', name: 'bouncer-session' },
    patch: { placement: 'dedicated-host', settings: { maxPreparedStatements: 0, processes: 4 } },
  },
  {
    // a plan from before the process count was recorded: no count shown, never a guessed one
    ref: { kind: 'pgbouncer-transaction', name: 'onrunner-transaction' },
    patch: { placement: 'co-located' },
  },
];

function descriptorOf(ref: TargetRef): TargetDescriptor {
  const t = TARGETS.find((x) => x.ref.name === ref.name);
  return { ...fallbackDescriptor(ref), ...(t?.patch ?? {}) };
}

/** Step i runs 10 s starting at T0 + 20 s × i. */
function step(
  i: number,
  ref: TargetRef,
  clients: number,
  tps: number,
  extra: Partial<StepRecord> = {},
): StepRecord {
  const base = stepRecordWith({});
  const startedAt = new Date(T0 + i * 20_000).toISOString();
  const endedAt = new Date(T0 + i * 20_000 + 10_000).toISOString();
  return stepRecordWith({
    runId: RUN_ID,
    stepId: `e5-short/${ref.name}/c${clients}/simple/persistent/r1`,
    scenario: 'e5-short',
    target: ref,
    params: { ...base.params, clients },
    startedAt,
    endedAt,
    status: 'completed',
    result: base.result ? { ...base.result, tps, latencyP95Ms: 1000 / tps, errors: [] } : null,
    ...extra,
  });
}

function cpuSeries(pooler: string, process: string, points: Array<[number, number]>): MetricSeries {
  return {
    source: 'pgbouncer',
    name: 'process_cpu_percent',
    stat: 'Average',
    unit: 'percent',
    dimensions: { pooler, process },
    points: points.map(([sec, v]) => [new Date(T0 + sec * 1000).toISOString(), v] as const),
    status: 'ok',
  };
}

/** Four targets × two client counts; the dedicated host's 2 processes, the co-located PgBouncer's 1. */
function steps(scale = 1): StepRecord[] {
  const out: StepRecord[] = [];
  let i = 0;
  for (const clients of [100, 400]) {
    for (const { ref } of TARGETS) {
      const sat =
        ref.name === 'bouncer-session'
          ? { poolerSaturated: clients === 400 }
          : ref.name === 'onrunner-transaction'
            ? {} // an older step file: no poolerSaturated field at all
            : { poolerSaturated: null };
      out.push(step(i++, ref, clients, scale * (clients + out.length * 10), sat));
    }
  }
  return out;
}

/**
 * A series sampled every 2 s from `fromSec` to `toSec` (each point: the mean since the one before),
 * `valueAt(sec)` at each point.
 */
function sampled(
  pooler: string,
  process: string,
  fromSec: number,
  toSec: number,
  valueAt: (sec: number) => number,
): MetricSeries {
  const points: Array<[number, number]> = [];
  for (let sec = fromSec; sec <= toSec; sec += 2) points.push([sec, valueAt(sec)]);
  return cpuSeries(pooler, process, points);
}

const inStep = (sec: number, startSec: number): boolean => sec > startSec && sec <= startSec + 10;

const SERIES: MetricSeries[] = [
  // dedicated host, 5 % when idle; step 2 (c100, 40–50 s): process 0 at 20, 20, 30, 30, 25 (mean 25),
  // process 1 at 10; step 6 (c400, 120–130 s): process 0 at 60, process 1 at 90, 100, 90, 100, 95 (mean 95)
  sampled('bouncer', '0', 0, 200, (sec) =>
    inStep(sec, 40) ? ([20, 20, 30, 30, 25][(sec - 42) / 2] ?? 0) : inStep(sec, 120) ? 60 : 5,
  ),
  sampled('bouncer', '1', 0, 200, (sec) =>
    inStep(sec, 40) ? 10 : inStep(sec, 120) ? ([90, 100, 90, 100, 95][(sec - 122) / 2] ?? 0) : 5,
  ),
  // co-located: 40 during its c100 step (3, 60–70 s); the series stops at 100 s, so nothing during
  // its c400 step (7, 140–150 s) → unknown there
  sampled('onrunner', '0', 0, 100, (sec) => (inStep(sec, 60) ? 40 : 5)),
];

function loadedRun(stepRecords: StepRecord[], series: MetricSeries[]): LoadedRun {
  return {
    dir: '/nowhere',
    manifest: manifestWith({
      runId: RUN_ID,
      mode: 'cloud',
      suite: 'e5',
      stepIds: stepRecords.map((s) => s.stepId),
    }),
    steps: stepRecords,
    metrics: [
      {
        name: 'runner',
        file: {
          schemaVersion: manifestWith({}).schemaVersion,
          runId: RUN_ID,
          window: { start: new Date(T0).toISOString(), end: new Date(T0 + 300_000).toISOString() },
          collectedAt: new Date(T0 + 300_000).toISOString(),
          series,
        },
      },
    ],
    missingStepIds: [],
    unmeasured: [],
    problems: [],
    warnings: [],
    plan: null,
    lab: null,
    descriptorOf: (s) => descriptorOf(s.target),
  };
}

describe('pooler matrix', () => {
  const run = loadedRun(steps(), SERIES);
  const [pm] = poolerMatrices(run, groupCells(run.steps));

  test('one column per pooler and placement, one row per client count', () => {
    expect(pm?.columns.map((c) => [c.targetName, c.placementLabel, c.poolMode])).toEqual([
      ['direct', 'direct', null],
      ['pool100', 'RDS Proxy', 'transaction'],
      ['bouncer-session', 'PgBouncer · dedicated host', 'session'],
      ['onrunner-transaction', 'PgBouncer · co-located', 'transaction'],
    ]);
    expect(pm?.rows.map((r) => r.clients)).toEqual([100, 400]);
    expect(pm?.rows[1]?.cells[2]?.tps?.median).toBe(400 + 6 * 10);
  });

  test('a PgBouncer column names its process count when the plan recorded it (one process tops out on one core)', () => {
    expect(pm?.columns.map((c) => c.processes)).toEqual([null, null, 4, null]);
    const md = renderMarkdown(
      buildModel(run, () => null),
      () => null,
    );
    expect(md).toContain('bouncer-session (PgBouncer · dedicated host, 4 processes, session pool)');
    expect(md).toContain('onrunner-transaction (PgBouncer · co-located, transaction pool)');
  });

  test('pooler CPU: busiest process of the step mean; PgBouncer only; unknown where no point fell in the step', () => {
    const [c100, c400] = pm?.rows ?? [];
    // dedicated host: c100 = max(mean(20, 20, 30, 30, 25), 10) = 25; c400 = max(60, mean(90, 100, 90, 100, 95)) = 95
    expect(c100?.cells[2]?.poolerCpuPercent).toBe(25);
    expect(c400?.cells[2]?.poolerCpuPercent).toBe(95);
    // co-located: 40 in its c100 step, nothing in its c400 step → null, never 0
    expect(c100?.cells[3]?.poolerCpuPercent).toBe(40);
    expect(c400?.cells[3]?.poolerCpuPercent).toBeNull();
    // direct and RDS Proxy have no pooler CPU series
    expect(c100?.cells[0]?.poolerCpuPercent).toBeNull();
    expect(c100?.cells[1]?.poolerCpuPercent).toBeNull();
  });

  test("pooler CPU: a target takes only its own pooler's series, not those of a pooler whose name prefixes it", () => {
    // GIVEN poolers `bouncer` (busy) and `bouncer-eu` (idle) — `bouncer-eu-transaction` starts with `bouncer-`
    const eu: TargetRef = { kind: 'pgbouncer-transaction', name: 'bouncer-eu-transaction' };
    const records = [step(0, { kind: 'direct', name: 'direct' }, 100, 100), step(1, eu, 100, 200)];
    const series = [
      sampled('bouncer', '0', 0, 100, (sec) => (inStep(sec, 20) ? 90 : 5)),
      sampled('bouncer-eu', '0', 0, 100, (sec) => (inStep(sec, 20) ? 10 : 5)),
    ];
    // WHEN the matrix is built
    const own = loadedRun(records, series);
    const [matrix] = poolerMatrices(own, groupCells(own.steps));
    // THEN the eu target's CPU is its own pooler's, 10 %, not the other's 90 %
    expect(matrix?.columns.map((c) => c.targetName)).toEqual(['direct', 'bouncer-eu-transaction']);
    expect(matrix?.rows[0]?.cells[1]?.poolerCpuPercent).toBe(10);
  });

  test('poolerSaturated: true / false as recorded; null or an older file without the field is unknown', () => {
    const [c100, c400] = pm?.rows ?? [];
    expect(c100?.cells[2]?.poolerSaturated).toBe(false);
    expect(c400?.cells[2]?.poolerSaturated).toBe(true);
    expect(c400?.cells[1]?.poolerSaturated).toBeNull();
    expect(c400?.cells[3]?.poolerSaturated).toBeNull();
    expect(cellText(c400?.cells[2] ?? null)).toMatch(/pooler CPU 95 % · pooler saturated$/);
  });

  test('a run with one kind of target has no pooler matrix', () => {
    const only = loadedRun(
      steps().filter((s) => s.target.name === 'direct'),
      SERIES,
    );
    expect(poolerMatrices(only, groupCells(only.steps))).toEqual([]);
  });

  test('a step shorter than half a sampling interval has unknown pooler CPU, not the diluted sample', () => {
    // GIVEN samples every 2 s at 0 and 80 % (the interval (2 s, 4 s] averaged 80)
    const series = [
      cpuSeries('b', '0', [
        [0, 0],
        [2, 0],
        [4, 80],
        [6, 0],
      ]),
    ];
    const at = (sec: number) => new Date(T0 + sec * 1000).toISOString();
    // WHEN the step covers 0.7 s of that 2 s interval, THEN it is unknown
    expect(stepPoolerCpu(series, { startedAt: at(2.5), endedAt: at(3.2) })).toBeNull();
    // AND a step covering 1.5 s of it gets that interval's average
    expect(stepPoolerCpu(series, { startedAt: at(2.3), endedAt: at(3.8) })).toBe(80);
  });

  test('stepPoolerCpu ignores points outside the window', () => {
    expect(
      stepPoolerCpu([cpuSeries('b', '0', [[200, 99]])], {
        startedAt: new Date(T0).toISOString(),
        endedAt: new Date(T0 + 10_000).toISOString(),
      }),
    ).toBeNull();
  });

  test('HTML and Markdown show the matrix side by side', () => {
    const model = buildModel(run, () => null);
    const page = renderHtml(model, { lookup: () => null, generatedAt: new Date(T0) });
    expect(page).toContain('data-pooler-matrix="e5-short"');
    for (const label of ['RDS Proxy', 'PgBouncer · dedicated host', 'PgBouncer · co-located'])
      expect(page).toContain(label);
    expect(page).toContain('PgBouncer · dedicated host, 4 processes, session pool');
    expect(page).toContain('⚠ pooler saturated');
    expect(page).toContain('pooler CPU 95 %');
    const md = renderMarkdown(model, () => null);
    expect(md).toContain('**Pooler matrix**');
    expect(md).toMatch(
      /\| clients \| direct \| pool100 \(RDS Proxy, transaction pool\) \| bouncer-session \(PgBouncer · dedicated host, 4 processes, session pool\) \| onrunner-transaction \(PgBouncer · co-located, transaction pool\) \|/,
    );
    expect(md).toMatch(/\| 400 \|.*pooler CPU 95 % · pooler saturated \|/);
  });

  test('a refused cell says so instead of unknown tps and latency', () => {
    // GIVEN direct at 400 clients refused by max_connections: no tps, the refusal recorded as errors
    const records = steps().map((s) =>
      s.target.name === 'direct' && s.params.clients === 400 && s.result
        ? {
            ...s,
            result: {
              ...s.result,
              tps: null,
              latencyP95Ms: null,
              errors: [
                {
                  class: 'too-many-connections' as const,
                  count: 300,
                  sample: 'FATAL:  sorry, too many clients already',
                },
              ],
            },
          }
        : s,
    );
    const refusedRun = loadedRun(records, SERIES);
    const [m] = poolerMatrices(refusedRun, groupCells(refusedRun.steps));
    // WHEN the cells are drawn
    const [c100, c400] = m?.rows ?? [];
    // THEN the refused cell names the refusal; a measured cell is unchanged
    expect(cellText(c400?.cells[0] ?? null)).toBe('refused (too-many-connections)');
    expect(cellText(c100?.cells[0] ?? null)).toMatch(/^[\d,.]+ tps · p95 [\d.]+ ms$/);
    const model = buildModel(refusedRun, () => null);
    expect(renderMarkdown(model, () => null)).toMatch(/\| 400 \| refused \(too-many-connections\) \| /);
    expect(renderHtml(model, { lookup: () => null, generatedAt: new Date(T0) })).toContain(
      '<td data-outcome="no-tps">refused (too-many-connections)</td>',
    );
  });

  test('a cell without tps and errors of another class says failed, with the classes', () => {
    const cell = {
      tps: null,
      latencyP95Ms: null,
      poolerCpuPercent: null,
      poolerSaturated: null,
      troubled: true,
      errorClasses: ['backend-died' as const],
    };
    expect(cellText(cell)).toBe('failed (backend-died)');
    expect(cellText({ ...cell, errorClasses: [] })).toBe('? tps · p95 ? ms');
  });

  test('the direct column head is not repeated; the HTML head has no sub-line for it', () => {
    const page = renderHtml(
      buildModel(run, () => null),
      { lookup: () => null, generatedAt: new Date(T0) },
    );
    expect(page).toContain('<th data-target="direct">direct</th>');
    expect(page).toMatch(
      /<th data-target="pool100">pool100<br><span class="sub">RDS Proxy, transaction pool<\/span><\/th>/,
    );
  });
});

describe('compare across pooler targets', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'proxylab-pooler-compare-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  function writeRun(name: string, records: StepRecord[]): string {
    const dir = join(tmp, name);
    mkdirSync(join(dir, 'steps'), { recursive: true });
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify(
        manifestWith({ runId: name, mode: 'cloud', suite: 'e5', stepIds: records.map((s) => s.stepId) }),
      ),
    );
    for (const r of records)
      writeFileSync(
        join(dir, 'steps', `${stepFileName(r.stepId)}.json`),
        JSON.stringify({ ...r, runId: name }),
      );
    return dir;
  }

  test('every pooler target cell is matched by target name and compared', () => {
    // GIVEN two runs of the same four targets, B twice as fast
    const a = loadRun(writeRun('a', steps(1)));
    const b = loadRun(writeRun('b', steps(2)));
    expect(a.problems).toEqual([]);
    // WHEN
    const cmp = compareRuns(a, b);
    // THEN all 8 cells match, pooler targets included, each at ratio 2
    expect(cmp.matched).toHaveLength(8);
    expect(cmp.onlyA).toEqual([]);
    const names = new Set(cmp.matched.map((c) => c.key.target.name));
    expect(names).toEqual(new Set(['direct', 'pool100', 'bouncer-session', 'onrunner-transaction']));
    for (const c of cmp.matched) expect(c.ratio).toBeCloseTo(2);
  });
});

describe('E6: PgDoorman beside PgBouncer with 1 and 8 processes', () => {
  const E6_TARGETS: ReadonlyArray<{ ref: TargetRef; patch: Partial<TargetDescriptor> }> = [
    { ref: { kind: 'direct', name: 'direct' }, patch: {} },
    {
      ref: { kind: 'pgbouncer-transaction', name: 'bouncer1-transaction' },
      patch: {
        placement: 'dedicated-host',
        version: '1.25.2',
        settings: { maxPreparedStatements: 200, processes: 1 },
      },
    },
    {
      ref: { kind: 'pgbouncer-transaction', name: 'bouncer8-transaction' },
      patch: {
        placement: 'dedicated-host',
        version: '1.25.2',
        settings: { maxPreparedStatements: 200, processes: 8 },
      },
    },
    {
      ref: { kind: 'pgdoorman-transaction', name: 'doorman-transaction' },
      patch: {
        placement: 'dedicated-host',
        version: '3.10.7',
        settings: { maxPreparedStatements: 8192, processes: 1, workerThreads: 8 },
      },
    },
  ];
  const e6Steps = E6_TARGETS.map(({ ref }, i) => step(i, ref, 120, 1000 * (i + 1)));
  // PgDoorman's one process at 400 % of one core (4 of its 8 threads' cores) during its step (60–70 s)
  const doormanCpu: MetricSeries = {
    ...sampled('doorman', '0', 0, 100, (sec) => (inStep(sec, 60) ? 400 : 10)),
    source: 'pgdoorman',
  };
  const run: LoadedRun = {
    ...loadedRun(e6Steps, [doormanCpu]),
    descriptorOf: (s) => {
      const t = E6_TARGETS.find((x) => x.ref.name === s.target.name);
      return { ...fallbackDescriptor(s.target), ...(t?.patch ?? {}) };
    },
  };

  test('PgDoorman’s column names its worker threads, PgBouncer’s its processes; its CPU comes from its own series', () => {
    // WHEN
    const [pm] = poolerMatrices(run, groupCells(run.steps));
    // THEN
    expect(pm?.columns.map((c) => [c.targetName, c.placementLabel, c.processes, c.workerThreads])).toEqual([
      ['direct', 'direct', null, null],
      ['bouncer1-transaction', 'PgBouncer · dedicated host', 1, null],
      ['bouncer8-transaction', 'PgBouncer · dedicated host', 8, null],
      ['doorman-transaction', 'PgDoorman · dedicated host', 1, 8],
    ]);
    expect(pm?.rows[0]?.cells[3]?.poolerCpuPercent).toBe(400);
    // the PgBouncers have no series in this run: unknown, never 0
    expect(pm?.rows[0]?.cells[1]?.poolerCpuPercent).toBeNull();
    const md = renderMarkdown(
      buildModel(run, () => null),
      () => null,
    );
    expect(md).toContain(
      'doorman-transaction (PgDoorman · dedicated host, 8 worker threads, transaction pool)',
    );
    expect(md).toContain('bouncer8-transaction (PgBouncer · dedicated host, 8 processes, transaction pool)');
    expect(md).toContain("PgDoorman's at 100 × its worker threads");
  });
});

describe('a local run with PgBouncer and PgDoorman side by side (e6-local)', () => {
  // described as the local stack describes them (capabilities from version and settings)
  const LOCAL: ReadonlyArray<{ ref: TargetRef; probe: TargetProbe }> = [
    {
      ref: { kind: 'pgbouncer-transaction', name: 'pgbouncer-1p-transaction' },
      probe: { version: '1.25.2', maxPreparedStatements: 200, processes: 1 },
    },
    {
      ref: { kind: 'pgdoorman-transaction', name: 'pgdoorman-transaction' },
      probe: { version: '3.10.7', maxPreparedStatements: 8192, processes: 1, workerThreads: 2 },
    },
  ];
  const descriptor = (ref: TargetRef): TargetDescriptor =>
    describeTarget(ref, LOCAL.find((x) => x.ref.name === ref.name)?.probe ?? { version: null });
  const records = LOCAL.map(({ ref }, i) => step(i, ref, 30, 1000));
  const base = loadedRun(records, []);
  // the environment names the first pooler only; a plan exists, so the descriptors speak
  const run: LoadedRun = {
    ...base,
    manifest: {
      ...base.manifest,
      mode: 'local',
      environment: { ...base.manifest.environment, poolerVersion: '3.10.7', maxPreparedStatements: 8192 },
    },
    plan: {
      schemaVersion: base.manifest.schemaVersion,
      runId: RUN_ID,
      suite: 'e6-local',
      mode: 'local',
      createdAt: new Date(T0).toISOString(),
      environment: base.manifest.environment,
      targets: LOCAL.map((t) => descriptor(t.ref)),
      runnerCount: 1,
      steps: [],
    },
    descriptorOf: (s) => descriptor(s.target),
  };

  test('each local pooler is described by its own product, version and prepared-statement setting', () => {
    // WHEN
    const warnings = buildModel(run, () => null).warnings;
    // THEN PgBouncer's note names only PgBouncer's target, with its own version and setting …
    const bouncer = warnings.find((w) => w.id === 'pgbouncer-stand-in')?.message ?? '';
    expect(bouncer).toMatch(
      /^A local PgBouncer 1\.25\.2 stands in for RDS Proxy \(pgbouncer-1p-transaction\): max_prepared_statements 200 at start/,
    );
    expect(bouncer).not.toContain('pgdoorman');
    // … and PgDoorman gets a note of its own
    expect(warnings.filter((w) => w.id === 'pooler-stand-in').map((w) => w.message)).toEqual([
      expect.stringMatching(
        /^A local PgDoorman 3\.10\.7 with 2 worker threads \(pgdoorman-transaction\) .*carries prepared statements across server connections \(cache of 8192\)/,
      ),
    ]);
  });

  test('the headline names every pooler and its version', () => {
    const md = renderMarkdown(
      buildModel(run, () => null),
      () => null,
    );
    expect(md).toContain('PgBouncer 1.25.2, PgDoorman 3.10.7');
    expect(md).toContain('Local stand-in (PostgreSQL and its poolers on one machine)');
  });
});
