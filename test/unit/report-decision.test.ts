/**
 * The decision table (lib/report/decision.ts): one table per scenario, one row per target (and
 * protocol / connect mode when the scenario varies them), figures over the cells every target
 * measured with a tps, prices from the run's environment, pinning only over whole metric periods.
 * Runs are written to a scratch directory as the engine writes them and read with loadRun; every
 * expected figure is worked out by hand beside it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadRun } from '../../lib/report/load';
import { groupCells } from '../../lib/report/cells';
import { decisionTables } from '../../lib/report/decision';
import { decisionAnswer, decisionCells, decisionNotes } from '../../lib/report/decision-text';
import { buildModel } from '../../lib/report/shape';
import { renderMarkdown } from '../../lib/report/render-md';
import { stepFileName, type MetricsFile, type RunManifest, type StepRecord } from '../../lib/suite/types';
import type { RunPlan } from '../../lib/suite/plan';
import { manifestWith, stepRecordWith } from '../helpers/run-files';
import { scratchDir } from '../helpers/scratch';

const T0 = Date.parse('2026-11-26T10:00:00Z');
const iso = (sec: number) => new Date(T0 + sec * 1000).toISOString();

interface StepSpec {
  readonly target: 'direct' | 'pool100' | 'bouncer-transaction';
  readonly clients: number;
  readonly rep?: number;
  readonly tps: number | null;
  readonly p50?: number;
  readonly p95?: number;
  readonly processed?: number;
  readonly errors?: StepRecord['result'] extends infer R
    ? R extends { errors: infer E }
      ? E
      : never
    : never;
  /** seconds after T0 */
  readonly start: number;
  readonly end: number;
  readonly held?: { before: number | null; peak: number | null; after: number | null };
}

const KIND = {
  direct: 'direct',
  pool100: 'rds-proxy',
  'bouncer-transaction': 'pgbouncer-transaction',
} as const;

function step(s: StepSpec): StepRecord {
  const id = `s1/${s.target}/c${s.clients}/simple/persistent/r${s.rep ?? 1}`;
  const base = stepRecordWith({});
  return stepRecordWith({
    runId: 'synthetic-decision',
    stepId: id,
    scenario: 's1',
    target: { kind: KIND[s.target], name: s.target },
    params: { ...base.params, clients: s.clients, repetition: s.rep ?? 1, script: 'tpcb-like' },
    startedAt: iso(s.start),
    endedAt: iso(s.end),
    result: {
      ...(base.result as NonNullable<StepRecord['result']>),
      tps: s.tps,
      latencyP50Ms: s.tps === null ? null : (s.p50 ?? 1),
      latencyP95Ms: s.tps === null ? null : (s.p95 ?? 2),
      latencyP99Ms: null,
      transactionsProcessed: s.processed ?? (s.tps === null ? null : s.tps * 10),
      errors: s.errors ?? [],
    },
    ...(s.held ? { serverConnections: s.held } : {}),
  });
}

function writeRun(
  manifest: Partial<RunManifest>,
  steps: readonly StepRecord[],
  metrics: MetricsFile[] = [],
): string {
  const dir = scratchDir('proxylab-decision-');
  mkdirSync(join(dir, 'steps'));
  mkdirSync(join(dir, 'metrics'));
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify(
      manifestWith({
        runId: 'synthetic-decision',
        suite: 'custom',
        stepIds: steps.map((s) => s.stepId),
        stepsCompleted: steps.length,
        ...manifest,
      }),
    ),
  );
  for (const s of steps) {
    const f = stepFileName(s.stepId);
    writeFileSync(
      join(dir, 'steps', `${f}.json`),
      JSON.stringify({
        ...s,
        files: { stdout: `steps/${f}.stdout`, stderr: `steps/${f}.stderr`, log: null },
      }),
    );
    writeFileSync(join(dir, 'steps', `${f}.stdout`), '');
    writeFileSync(join(dir, 'steps', `${f}.stderr`), '');
  }
  metrics.forEach((m, i) =>
    writeFileSync(join(dir, 'metrics', `${i === 0 ? 'cloudwatch' : 'runner'}.json`), JSON.stringify(m)),
  );
  return dir;
}

const CLOUD_ENV: RunManifest['environment'] = {
  database: { engine: 'aurora-postgresql', instanceClass: 'db.r6g.large' },
  maxConnections: 90,
  serverVersion: '17.9',
  pgbenchVersion: '17.9',
  poolerVersion: 'RDS Proxy (managed, no version); PgBouncer 1.25.2',
  cpus: 2,
  zones: [
    { component: 'writer', zone: 'us-east-1a' },
    { component: 'runner-0', zone: 'us-east-1a' },
  ],
  targetPrices: [
    { target: 'direct', usdPerHour: 0, basis: 'the database itself' },
    { target: 'pool100', usdPerHour: 0.06, basis: 'RDS Proxy pool100: 4 vCPU × $0.015' },
    { target: 'bouncer-transaction', usdPerHour: 0.079278, basis: 'pooler host bouncer' },
  ],
};

/** Pinned connections: 60-s periods; only 10:02:00 and 10:03:00 lie wholly inside the long proxy step. */
const PINNED: MetricsFile = {
  schemaVersion: 1,
  runId: 'synthetic-decision',
  window: { start: iso(0), end: iso(600) },
  collectedAt: iso(700),
  completeness: { complete: true, lastPointAt: iso(540), windowEnd: iso(600), periodSec: 60 },
  series: [
    {
      source: 'cloudwatch',
      name: 'DatabaseConnectionsCurrentlySessionPinned',
      stat: 'Sum',
      unit: 'Count',
      dimensions: { ProxyName: 'lab-pool100' },
      points: [
        [iso(60), 99], // straddles the short proxy step and what came before: never attributed
        [iso(120), 3],
        [iso(180), 5],
        [iso(240), 42], // ends after the long step: not attributed
      ],
      status: 'ok',
    },
  ],
};

describe('decision table of a cloud run', () => {
  const steps = [
    // 50 clients: every target has a tps; three repetitions of the proxy (spread)
    step({
      target: 'direct',
      clients: 50,
      tps: 1000,
      p50: 2,
      p95: 4,
      start: 0,
      end: 20,
      held: { before: 3, peak: 53, after: 5 },
    }),
    step({
      target: 'pool100',
      clients: 50,
      rep: 1,
      tps: 900,
      p50: 3,
      p95: 6,
      start: 90,
      end: 110,
      held: { before: 40, peak: 60, after: 45 },
    }),
    step({
      target: 'pool100',
      clients: 50,
      rep: 2,
      tps: 990,
      p50: 3,
      p95: 6,
      start: 115,
      end: 245,
      held: { before: 4, peak: 52, after: 48 },
    }),
    step({
      target: 'pool100',
      clients: 50,
      rep: 3,
      tps: 810,
      p50: 3,
      p95: 6,
      start: 250,
      end: 270,
      held: { before: 4, peak: 50, after: 48 },
    }),
    step({
      target: 'bouncer-transaction',
      clients: 50,
      tps: 1200,
      p50: 2.5,
      p95: 5,
      start: 300,
      end: 320,
      held: { before: 3, peak: 30, after: 30 },
    }),
    // 100 clients: direct refused (no tps), the pools queue
    step({
      target: 'direct',
      clients: 100,
      tps: null,
      errors: [{ class: 'too-many-connections', count: 1, sample: 'FATAL: sorry, too many clients already' }],
      start: 330,
      end: 331,
      held: { before: 3, peak: 88, after: 3 },
    }),
    step({
      target: 'pool100',
      clients: 100,
      tps: 950,
      start: 340,
      end: 360,
      held: { before: 3, peak: 90, after: 90 },
    }),
    step({
      target: 'bouncer-transaction',
      clients: 100,
      tps: 1100,
      start: 370,
      end: 390,
      held: { before: 3, peak: 30, after: 30 },
    }),
  ];
  const dir = writeRun(
    {
      mode: 'cloud',
      environment: CLOUD_ENV,
      settings: { proxies: [{ name: 'pool100', dbProxyName: 'lab-pool100' }] },
    },
    steps,
    [PINNED],
  );
  const run = loadRun(dir);
  const [table] = decisionTables(run, groupCells(run.steps));

  test('rows are compared only at the cells every target measured with a tps', () => {
    expect(table?.shared).toEqual([
      { clients: 50, script: 'tpcb-like' },
      { clients: 100, script: 'tpcb-like' },
    ]);
    expect(table?.comparable).toEqual([{ clients: 50, script: 'tpcb-like' }]);
    expect(table?.rows.map((r) => r.label)).toEqual(['direct', 'pool100', 'bouncer-transaction']);
  });

  test('throughput with the spread of repetitions, latency added over direct in the same cells', () => {
    const [direct, proxy, bouncer] = table?.rows ?? [];
    expect(direct?.tps).toEqual({ median: 1000, best: 1000, worst: 1000, n: 1 });
    // the proxy's three repetitions 900 / 990 / 810: median 900, best 990, worst 810
    expect(proxy?.tps).toEqual({ median: 900, best: 990, worst: 810, n: 3 });
    expect([proxy?.addedP50Ms, proxy?.addedP95Ms]).toEqual([1, 2]); // 3 − 2, 6 − 4
    expect([bouncer?.addedP50Ms, bouncer?.addedP95Ms]).toEqual([0.5, 1]);
    expect([direct?.addedP50Ms, direct?.addedP95Ms]).toEqual([null, null]);
  });

  test('errors over every shared cell: the refusal is named, with the cell', () => {
    const [direct, proxy] = table?.rows ?? [];
    // 1 error line ÷ (10 000 transactions + 1)
    expect(direct?.errorRate).toBeCloseTo(1 / 10001, 9);
    expect(direct?.errorText).toBe('refused at 100 clients (too-many-connections ×1)');
    expect([proxy?.errorRate, proxy?.errorText]).toEqual([0, null]);
  });

  test('the connections held on the database: the peak, and what was already held when a step began', () => {
    const [direct, proxy] = table?.rows ?? [];
    expect([direct?.connectionsPeak, direct?.connectionsBefore]).toEqual([88, 3]);
    // 40 held before the proxy's first step: another target's leftovers, visible
    expect([proxy?.connectionsPeak, proxy?.connectionsBefore]).toEqual([90, 40]);
  });

  test('pinning only over whole CloudWatch periods inside a step; n/a where nothing pins', () => {
    const [direct, proxy, bouncer] = table?.rows ?? [];
    // only the 130-s repetition covers whole periods (10:02 → 3, 10:03 → 5); 99 and 42 straddle
    expect(proxy?.pinning).toEqual({ kind: 'measured', max: 5, steps: 1, of: 4 });
    expect(direct?.pinning).toEqual({ kind: 'not-applicable' });
    expect(bouncer?.pinning).toEqual({ kind: 'not-applicable' });
  });

  test('$/h from the run’s environment, $ per million transactions at the measured rate', () => {
    const [direct, proxy, bouncer] = table?.rows ?? [];
    expect(direct?.usdPerMillionTransactions).toBe(0);
    // $0.06 ÷ (900 tps × 3600 s) × 10⁶ = $0.018519
    expect(proxy?.usdPerMillionTransactions).toBeCloseTo((0.06 / (900 * 3600)) * 1e6, 9);
    expect(bouncer?.usdPerMillionTransactions).toBeCloseTo((0.079278 / (1200 * 3600)) * 1e6, 9);
    expect(decisionCells(table!, proxy!)).toEqual([
      'pool100',
      '900.0 (best 990.0 / worst 810.0, n=3)',
      '3.00 / 6.00 / ?',
      '+1.00 / +2.00',
      'none',
      '90 (40)',
      'max 5 (whole periods in 1 of 4 steps)',
      'not published by RDS Proxy',
      '$0.06',
      '$0.0185',
      '–', // a run recorded before the production bill: not priced in production
      'script not recorded (no plan.json)',
    ]);
    expect(decisionNotes(table!)).toEqual([
      'Compared at 50 clients.',
      'Errors only (some target had no tps there): 100 clients.',
    ]);
  });

  test('summary.md opens with the decision table', () => {
    const md = renderMarkdown(
      buildModel(run, () => null),
      () => null,
    );
    const lines = md.split('\n');
    const heading = lines.findIndex((l) => l === '## Decision table');
    expect(heading).toBeGreaterThan(0);
    expect(heading).toBeLessThan(6); // right after the title and the run line
    expect(md.indexOf('## Decision table')).toBeLessThan(md.indexOf('## Findings'));
    expect(md).toMatch(/\| pool100 \| 900\.0 \(best 990\.0 \/ worst 810\.0, n=3\) \|/);
  });
});

describe('what the table says when it cannot compare or price', () => {
  test('a local run is not priced; a run from before serverConnections says "not recorded"', () => {
    const dir = writeRun({ mode: 'local' }, [
      step({ target: 'direct', clients: 5, tps: 500, start: 0, end: 10 }),
    ]);
    const run = loadRun(dir);
    const [table] = decisionTables(run, groupCells(run.steps));
    const cells = decisionCells(table!, table!.rows[0]!);
    expect(cells[5]).toBe('not recorded');
    expect(cells[8]).toBe('not priced (local run; --price-region REGION prices it)');
    expect(decisionNotes(table!)).toContain('One target only: nothing to compare it with in this scenario.');
  });

  test('no cell where every target has a tps: figures are each row’s own, marked † not comparable', () => {
    const dir = writeRun({ mode: 'local' }, [
      step({
        target: 'direct',
        clients: 60,
        tps: null,
        errors: [{ class: 'too-many-connections', count: 1, sample: 'x' }],
        start: 0,
        end: 1,
      }),
      step({ target: 'bouncer-transaction', clients: 60, tps: 3000, start: 2, end: 12 }),
    ]);
    const run = loadRun(dir);
    const [table] = decisionTables(run, groupCells(run.steps));
    expect(table?.comparableFigures).toBe(false);
    expect(decisionCells(table!, table!.rows[1]!)[1]).toBe('3,000.0 †');
    expect(decisionCells(table!, table!.rows[1]!)[3]).toBe('not comparable');
    expect(decisionNotes(table!)[0]).toMatch(/^† Not comparable: no cell every target ran has a tps/);
  });
});

describe('the errors column counts hung client-attempts (issue 40)', () => {
  const lockSample = {
    at: iso(14),
    ok: true,
    clients: 12,
    benchClients: 11,
    active: 9,
    idle: 3,
    idleInTransaction: 0,
    waits: [{ type: 'Lock', event: 'advisory', count: 9 }],
    locksWaiting: 9,
    locksHeld: 4,
    oldestXactSec: 13,
    oldestQuerySec: 13,
    blocker: {
      pid: 77,
      state: 'idle',
      backendType: 'client backend',
      applicationName: 'pgbench',
      stateSec: 13.2,
      xactSec: null,
      blocking: 9,
    },
  };

  /** The transaction pool's cell at 16 clients hung: 160 transactions logged, then stopped. */
  function hungStep(activity: boolean): StepRecord {
    const s = step({ target: 'bouncer-transaction', clients: 16, tps: null, start: 2, end: 16 });
    return {
      ...s,
      status: 'hung',
      result: {
        ...(s.result as NonNullable<StepRecord['result']>),
        transactionsProcessed: null,
        series: [
          {
            t: T0 / 1000 + 2,
            transactions: 160,
            latencyAvgMs: 1,
            latencyMaxMs: 2,
            lagAvgMs: null,
            skipped: null,
          },
        ],
        errors: [{ class: 'timeout', count: 16, sample: 'stopped by the harness' }],
      },
      ...(activity ? { databaseActivity: { intervalMs: 1000, samples: [lockSample] } } : {}),
    };
  }

  test('a hung cell is never "< 0.1 %": its 16 unfinished attempts over all attempts, and what held it', () => {
    const dir = writeRun({ mode: 'local' }, [
      step({ target: 'direct', clients: 16, tps: 800, processed: 8000, start: 0, end: 1 }),
      hungStep(true),
    ]);
    const run = loadRun(dir);
    const [table] = decisionTables(run, groupCells(run.steps));
    const [direct, pool] = table?.rows ?? [];
    expect(direct?.errorRate).toBe(0);
    // 16 hung ÷ (160 logged transactions + 16)
    expect(pool?.errorRate).toBeCloseTo(16 / 176, 9);
    expect(pool?.errorText).toBe(
      'hung at 16 clients (9 clients waiting on Lock/advisory held by a backend of pgbench (pid 77) idle for 13 s (pg_locks: 9 waiting, 4 held))',
    );
    // led by the unfinished attempts, never by a rate like "< 0.1 %"
    expect(decisionCells(table!, pool!)[4]).toMatch(
      /^HUNG: 16 of 176 client-attempts unfinished — hung at 16 clients \(9 clients/,
    );
  });

  test('a hung step whose transactions are unknown: the rate is unknown, the hang still named', () => {
    const s = hungStep(false);
    const dir = writeRun({ mode: 'local' }, [{ ...s, result: { ...s.result!, series: null } }]);
    const run = loadRun(dir);
    const [table] = decisionTables(run, groupCells(run.steps));
    expect(table?.rows[0]?.errorRate).toBeNull();
    expect(decisionCells(table!, table!.rows[0]!)[4]).toBe(
      'HUNG: 16 of ? client-attempts unfinished — hung at 16 clients (the database was not sampled)',
    );
  });

  test('a run written before hung existed (status timeout, no database activity) still reads, as hung', () => {
    const s = hungStep(false);
    const dir = writeRun({ mode: 'local' }, [{ ...s, status: 'timeout' }]);
    const run = loadRun(dir);
    expect(run.steps[0]?.databaseActivity).toBeUndefined();
    const [table] = decisionTables(run, groupCells(run.steps));
    expect(table?.rows[0]?.errorText).toBe('hung at 16 clients (the database was not sampled)');
  });
});

describe('the answer line above each table (issue 40, item 4)', () => {
  test('clean targets named, cheapest unpriced locally, each other target with what stopped it', () => {
    const s = step({ target: 'bouncer-transaction', clients: 16, tps: null, start: 2, end: 16 });
    const hung: StepRecord = {
      ...s,
      status: 'hung',
      result: {
        ...(s.result as NonNullable<StepRecord['result']>),
        transactionsProcessed: 100,
        errors: [{ class: 'timeout', count: 16, sample: 'stopped by the harness' }],
      },
      databaseActivity: {
        intervalMs: 1000,
        samples: [
          {
            at: iso(14),
            ok: true,
            clients: 5,
            benchClients: 5,
            active: 3,
            idle: 2,
            idleInTransaction: 0,
            waits: [{ type: 'Lock', event: 'advisory', count: 3 }],
            locksWaiting: 3,
            locksHeld: 4,
            oldestXactSec: 12,
            oldestQuerySec: 12,
            blocker: null,
          },
        ],
      },
    };
    const dir = writeRun({ mode: 'local' }, [
      step({ target: 'direct', clients: 16, tps: 800, start: 0, end: 1 }),
      hung,
      step({
        target: 'pool100',
        clients: 16,
        tps: null,
        errors: [{ class: 'too-many-connections', count: 1, sample: 'x' }],
        start: 17,
        end: 18,
      }),
    ]);
    const loaded = loadRun(dir);
    // the plan.json part the answer reads: the script each step ran (a session advisory lock)
    const script = 'SELECT pg_advisory_lock(1);\nSELECT pg_advisory_unlock(1);\n';
    const plan = {
      runnerCount: 1,
      steps: loaded.steps.map((x) => ({
        stepId: x.stepId,
        scenario: x.scenario,
        script: { parts: [{ file: { name: 'locks.sql', sql: script } }] },
      })),
    } as unknown as RunPlan;
    const run = { ...loaded, plan };
    const [table] = decisionTables(run, groupCells(run.steps));
    expect(decisionAnswer(table!)).toBe(
      'Answer: Ran without errors, hangs or session breakage: direct; cheapest per million transactions: unpriced; ' +
        'no two targets had a tps at the same client count: not compared. ' +
        'bouncer-transaction: not suitable: session advisory lock (lines 1, 2) leaks through a transaction pool ' +
        '(PgBouncer unknown; expected, not measured: --suite session measures it) — ' +
        'hung (hung at 16 clients (3 clients waiting on Lock/advisory (pg_locks: 3 waiting, 4 held))). ' +
        'pool100: refused connections (refused at 16 clients (too-many-connections ×1)).',
    );
    // and summary.md puts it above the table
    const md = renderMarkdown(
      buildModel(run, () => null),
      () => null,
    );
    expect(md.indexOf('**Answer: Ran without errors, hangs or session breakage: direct;')).toBeLessThan(
      md.indexOf('| target |'),
    );
  });

  test('without the script (no plan.json) a hang is named as a hang, never explained by a guessed feature', () => {
    const dir = writeRun({ mode: 'local' }, [
      step({ target: 'direct', clients: 16, tps: 800, start: 0, end: 1 }),
      {
        ...step({
          target: 'bouncer-transaction',
          clients: 16,
          tps: null,
          processed: 100,
          errors: [{ class: 'timeout', count: 16, sample: 'stopped by the harness' }],
          start: 2,
          end: 16,
        }),
        status: 'hung',
      },
    ]);
    const run = loadRun(dir);
    const [table] = decisionTables(run, groupCells(run.steps));
    expect(decisionAnswer(table!)).toMatch(/ bouncer-transaction: hung \(hung at 16 clients/);
    expect(decisionAnswer(table!)).not.toMatch(/not suitable/);
  });
});
