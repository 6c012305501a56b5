/**
 * The decision table's price columns (issue 41): a local run priced at a cloud region's prices
 * (`proxylab local --price-region`, lib/cost/local-prices.ts) shows $/h, $ per M tx and the
 * production bill for every row with a tps, marked "local throughput, cloud prices"; a pooler's host
 * type is the smallest of its family whose vCPUs cover the measured CPU at 70 % (lib/report/decision-prices.ts).
 * Runs are written as the engine writes them and read with loadRun; figures worked out beside them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { localRunPrices, localTargetPrices } from '../../lib/cost/local-prices';
import { linesText, POOLER_HOST_TARGET_UTILISATION, productionBill } from '../../lib/cost/production';
import { PRICE_TABLES_COMMITTED, type PriceTable } from '../../lib/cost/price-table';
import { manifestSchema, parseRunFile } from '../../lib/results/schemas';
import { groupCells } from '../../lib/report/cells';
import { decisionTables } from '../../lib/report/decision';
import { rowProduction } from '../../lib/report/decision-prices';
import { DECISION_HEADER, decisionCells, decisionNotes } from '../../lib/report/decision-text';
import { loadRun } from '../../lib/report/load';
import { renderHtml } from '../../lib/report/render-html';
import { renderMarkdown } from '../../lib/report/render-md';
import { buildModel } from '../../lib/report/shape';
import { directTarget, poolerTarget } from '../../lib/suite/targets';
import {
  stepFileName,
  type MetricsFile,
  type RunManifest,
  type StepRecord,
  type TargetPrice,
} from '../../lib/suite/types';
import { manifestWith, stepRecordWith } from '../helpers/run-files';
import { scratchDir } from '../helpers/scratch';

const US = PRICE_TABLES_COMMITTED['us-east-1'] as PriceTable;
/** eu-west-1 as a Price List answer would give it: us-east-1's figures × 1.1, dated the day read. */
const EU: PriceTable = {
  ...US,
  region: 'eu-west-1',
  asOf: '2026-11-28',
  ec2Instances: Object.fromEntries(
    Object.entries(US.ec2Instances).map(([k, v]) => [k, { ...v, usdPerHour: v.usdPerHour * 1.1 }]),
  ),
};
const T0 = Date.parse('2026-11-28T10:00:00Z');
const iso = (sec: number) => new Date(T0 + sec * 1000).toISOString();
const POOLERS = [{ product: 'pgbouncer', processes: 1, instance: 'pgbouncer' }];
const REFS = [
  directTarget(),
  poolerTarget('pgbouncer', 'pgbouncer', 'transaction'),
  poolerTarget('pgbouncer', 'pgbouncer', 'session'),
];

function step(
  target: 'direct' | 'pgbouncer-transaction' | 'pgbouncer-session',
  tps: number | null,
  start: number,
): StepRecord {
  const base = stepRecordWith({});
  const kind =
    target === 'direct'
      ? 'direct'
      : target === 'pgbouncer-session'
        ? 'pgbouncer-session'
        : 'pgbouncer-transaction';
  return stepRecordWith({
    runId: 'local-priced',
    stepId: `s1/${target}/c10/simple/persistent/r1`,
    scenario: 's1',
    target: { kind, name: target },
    params: { ...base.params, clients: 10, repetition: 1, script: 'tpcb-like' },
    startedAt: iso(start),
    endedAt: iso(start + 10),
    result: {
      ...(base.result as NonNullable<StepRecord['result']>),
      tps,
      latencyP50Ms: tps === null ? null : 1,
      latencyP95Ms: tps === null ? null : 2,
      latencyP99Ms: null,
      transactionsProcessed: tps === null ? null : tps * 10,
      errors: [],
    },
  });
}

/** The busiest PgBouncer process at `percent` % of one core through the transaction pool's step. */
function cpu(percent: number): MetricsFile {
  return {
    schemaVersion: 1,
    runId: 'local-priced',
    window: { start: iso(0), end: iso(60) },
    collectedAt: iso(60),
    series: [
      {
        source: 'pgbouncer',
        name: 'process_cpu_percent',
        stat: 'mean',
        unit: 'percent',
        dimensions: { pooler: 'pgbouncer', process: '0' },
        points: [
          [iso(10), percent],
          [iso(15), percent],
          [iso(20), percent],
        ],
        status: 'ok',
      },
    ],
  };
}

function writeLocalRun(targetPrices: readonly TargetPrice[] | null, metrics: MetricsFile | null): string {
  const steps = [
    step('direct', 1000, 0),
    step('pgbouncer-transaction', 800, 10),
    step('pgbouncer-session', null, 30), // refused: no tps, so no $ per M tx
  ];
  const dir = scratchDir('proxylab-priced-');
  mkdirSync(join(dir, 'steps'));
  mkdirSync(join(dir, 'metrics'));
  const manifest: RunManifest = manifestWith({
    runId: 'local-priced',
    suite: 'custom',
    mode: 'local',
    stepIds: steps.map((s) => s.stepId),
    stepsCompleted: steps.length,
  });
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({ ...manifest, environment: { ...manifest.environment, targetPrices } }),
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
  if (metrics) writeFileSync(join(dir, 'metrics', 'local.json'), JSON.stringify(metrics));
  return dir;
}

const tableOf = (dir: string) => {
  const run = loadRun(dir);
  const [table] = decisionTables(run, groupCells(run.steps));
  if (!table) throw new Error('no decision table');
  return { run, table };
};

describe('a local run with --price-region eu-west-1', () => {
  test('every row with a tps shows $/h, $ per M tx and its production bill, marked local throughput at cloud prices', () => {
    // GIVEN the run's targets priced at eu-west-1 (as `proxylab local --price-region eu-west-1` records them)
    // and PgBouncer measured at 100 % of one core
    const prices = localRunPrices(EU, REFS, POOLERS, null);
    const { table } = tableOf(writeLocalRun(prices, cpu(100)));
    const [direct, tx, session] = table.rows;
    // THEN direct adds $0; the transaction pool is priced as its production HA pair per hour
    expect(direct?.usdPerHour).toBe(0);
    expect(direct?.usdPerMillionTransactions).toBe(0);
    // 100 % of one core ÷ 70 % = 1.43 vCPUs → c7g.large (2 vCPUs), the smallest c7g with enough:
    // 2 × $0.07975/h × 720 + 2 × 16 GB × $0.08 + $0.0225 × 720 = $133.60 a month = $0.185556/h
    const pair = 2 * 0.0725 * 1.1 * 720 + 2 * 16 * 0.08 + 0.0225 * 720;
    expect(tx?.production?.usdPerMonth).toBeCloseTo(pair, 2);
    expect(tx?.usdPerHour).toBeCloseTo(pair / 720, 5);
    expect(tx?.usdPerMillionTransactions).toBeCloseTo((pair / 720 / (800 * 3600)) * 1e6, 6);
    expect(tx?.production?.basis).toMatch(
      /^c7g\.large \(2 vCPU\), the smallest of its family covering the measured 100 % of one core at 70 % target utilisation: 2 × c7g\.large in two zones/,
    );
    // the session pool had no tps: priced per hour, no $ per M tx
    expect(session?.tps).toBeNull();
    expect(session?.usdPerMillionTransactions).toBeNull();
    const cells = decisionCells(table, tx!);
    expect(cells).toHaveLength(DECISION_HEADER.length);
    expect(cells[DECISION_HEADER.indexOf('$ per M tx')]).toMatch(/^\$0\.0\d+$/);
    expect(cells[DECISION_HEADER.indexOf('production $/month ($ per M tx)')]).toMatch(
      /^\$133\.6\d \(\$0\.0\d+\)$/,
    );
    // AND the notes say where the prices come from, with their date, and which host type and why
    const notes = decisionNotes(table).join('\n');
    expect(notes).toContain(
      'Production at local throughput, cloud prices (eu-west-1 as of 2026-11-28), per 30-day month on top of the database: $/h and $ per M tx are the production option per hour.',
    );
    expect(notes).toMatch(/pgbouncer-transaction — c7g\.large \(2 vCPU\), the smallest/);
  });

  test('summary.md and report.html show the production column and the marked prices', () => {
    const { run } = tableOf(writeLocalRun(localRunPrices(EU, REFS, POOLERS, null), cpu(100)));
    const md = renderMarkdown(
      buildModel(run, () => null),
      () => null,
    );
    expect(md).toContain('| production $/month ($ per M tx) |');
    expect(md).toContain('local throughput, cloud prices (eu-west-1 as of 2026-11-28)');
    const page = renderHtml(
      buildModel(run, () => null),
      { lookup: () => null, generatedAt: new Date(T0) },
    );
    expect(page).toContain('<th>production $/month ($ per M tx)</th>');
    expect(page).toContain('local throughput, cloud prices (eu-west-1 as of 2026-11-28)');
    expect(page).toMatch(/<td>\$133\.6\d \(\$0\.0\d+\)<\/td>/);
  });

  test.each([
    [5, 'c7g.medium', 1], // 0.07 vCPU
    [69, 'c7g.medium', 1], // 0.99 vCPU
    [71, 'c7g.large', 2], // 1.01 vCPU
    [250, 'c7g.xlarge', 4], // 3.6 vCPU (a multithreaded pooler above one core)
  ])('pooler CPU %s %% of one core → %s', (percent, type, vcpus) => {
    const [, tx] = localRunPrices(EU, REFS, POOLERS, null);
    const got = rowProduction(tx?.production ?? null, percent, 800);
    expect(got?.basis.startsWith(`${type} (${vcpus} vCPU), the smallest`)).toBe(true);
    const chosen = tx?.production?.hostChoices?.find((c) => c.type === type);
    expect(got?.usdPerMonth).toBe(chosen?.usdPerMonth);
    expect(POOLER_HOST_TARGET_UTILISATION).toBe(0.7);
  });

  test('two PgBouncer processes: the busiest one × 2 is what the host must carry', () => {
    const two = [{ product: 'pgbouncer', processes: 2, instance: 'pgbouncer' }];
    const [, tx] = localRunPrices(EU, REFS, two, null);
    // 60 % × 2 = 1.2 cores ÷ 0.7 = 1.7 vCPUs → c7g.large, not c7g.medium
    expect(rowProduction(tx?.production ?? null, 60, 800)?.basis).toMatch(
      /^c7g\.large \(2 vCPU\), the smallest of its family covering the measured 60 % of one core × 2 processes/,
    );
  });

  test("CPU not measured: the default host type (the runners' default), saying so", () => {
    const { table } = tableOf(writeLocalRun(localRunPrices(EU, REFS, POOLERS, null), null));
    const tx = table.rows[1];
    expect(tx?.poolerCpuPercent).toBeNull();
    expect(tx?.production?.basis).toMatch(
      /^pooler CPU not measured, so the default host type: 2 × c7g\.large in two zones/,
    );
    expect(tx?.usdPerMillionTransactions).not.toBeNull();
  });

  test("more CPU than the largest priced type: unknown, never the largest type's price", () => {
    const [, tx] = localRunPrices(EU, REFS, POOLERS, null);
    const got = rowProduction(tx?.production ?? null, 10_000, 800);
    expect(got).toMatchObject({ usdPerMonth: null, usdPerHour: null, usdPerMillionTransactions: null });
    expect(got?.basis).toMatch(
      /needs 142\.9 vCPUs at 70 % target utilisation: more than the largest priced type \(c7g\.16xlarge, 64 vCPUs\)/,
    );
  });

  test('a lab pooler on a dedicated host keeps its type: no choice left to the CPU', () => {
    const lab = {
      runners: { instanceType: 'c7g.large' },
      poolers: [{ name: 'pgbouncer', placement: 'dedicated', instanceType: 'm7g.xlarge' }],
    } as unknown as Parameters<typeof localRunPrices>[3];
    const [, tx] = localRunPrices(EU, REFS, POOLERS, lab);
    expect(tx?.production?.hostChoices).toBeNull();
    expect(rowProduction(tx?.production ?? null, 5, 800)?.basis).toMatch(/^2 × m7g\.xlarge in two zones/);
  });

  test('what the run records passes the run file schema', () => {
    const prices = localTargetPrices(
      [{ name: 'pgbouncer-transaction', product: 'PgBouncer' }],
      EU,
      'c7g.large',
    );
    const dir = writeLocalRun(prices, null);
    expect(() => loadRun(dir)).not.toThrow();
    expect(loadRun(dir).manifest.environment.targetPrices?.[0]?.production?.hostChoices?.length).toBe(8);
    // a hostile value is refused where read, naming the field
    const bad = JSON.stringify({
      ...manifestWith({}),
      environment: {
        ...manifestWith({}).environment,
        targetPrices: [{ ...prices[0], production: { ...prices[0]?.production, targetUtilisation: 7 } }],
      },
    });
    expect(() => parseRunFile(manifestSchema, 'manifest.json', bad)).toThrow(/targetUtilisation/);
  });
});

describe('a local run with --price-region eu-west-1 --app-hosts 4', () => {
  test('the pooler rows show the per-app-host figures cost --app-hosts prints, and the note says so', () => {
    // GIVEN the run's targets priced as `proxylab local --price-region eu-west-1 --app-hosts 4` records them
    const prices = localRunPrices(EU, REFS, POOLERS, null, { appHosts: 4 });
    const { table } = tableOf(writeLocalRun(prices, cpu(100)));
    const [, tx] = table.rows;
    // THEN the production option is the pooler on 4 application hosts: $0 added, no host type picked
    // from the measured CPU (100 % of one core would have picked the c7g.large HA pair, $133.60)
    const [, recorded] = prices;
    expect(recorded?.production).toMatchObject({ appHosts: 4, hostChoices: null, usdPerMonth: 0 });
    expect(tx?.production).toMatchObject({ usdPerMonth: 0, usdPerHour: 0, usdPerMillionTransactions: 0 });
    expect(tx?.usdPerHour).toBe(0);
    const cells = decisionCells(table, tx!);
    expect(cells[DECISION_HEADER.indexOf('production $/month ($ per M tx)')]).toBe('$0 ($0)');
    // AND its lines are the ones `cost --app-hosts 4` prints for the same pooler
    const lab = {
      runners: { instanceType: 'c7g.large' },
      proxies: [],
      poolers: [{ name: 'pgbouncer', kind: 'pgbouncer', placement: 'runners', instanceType: null }],
      database: { engine: 'postgres', instanceClass: 'db.t4g.medium', multiAz: false },
    } as unknown as Parameters<typeof productionBill>[0];
    const bill = productionBill(lab, EU, { appHosts: 4 }).options[0];
    expect(tx?.production?.basis).toBe(linesText(bill?.lines ?? []));
    const notes = decisionNotes(table).join('\n');
    expect(notes).toContain(
      'pgbouncer-transaction — PgBouncer on 4 application host(s) adds no host or load balancer of its own',
    );
    expect(notes).not.toContain('two zones');
  });

  test('without --app-hosts the same run is priced as the HA pair (the default)', () => {
    const [, tx] = localRunPrices(EU, REFS, POOLERS, null);
    expect(tx?.production?.appHosts).toBeNull();
    expect(tx?.production?.basis).toMatch(/^2 × c7g\.large in two zones .*Network Load Balancer/);
  });

  test.each([0, 1.5, -2, 'four'])(
    'a recorded appHosts of %j is refused where read, naming the field',
    (n) => {
      const [, tx] = localRunPrices(EU, REFS, POOLERS, null, { appHosts: 4 });
      const bad = JSON.stringify({
        ...manifestWith({}),
        environment: {
          ...manifestWith({}).environment,
          targetPrices: [{ ...tx, production: { ...tx?.production, appHosts: n } }],
        },
      });
      expect(() => parseRunFile(manifestSchema, 'manifest.json', bad)).toThrow(/appHosts/);
    },
  );
});

describe('a local run without --price-region', () => {
  test('says how to price it, and has no production figures', () => {
    const { table } = tableOf(writeLocalRun(null, cpu(50)));
    const tx = table.rows[1];
    expect(tx?.usdPerHour).toBeNull();
    expect(tx?.production).toBeNull();
    expect(decisionCells(table, tx!)[DECISION_HEADER.indexOf('$/h')]).toBe(
      'not priced (local run; --price-region REGION prices it)',
    );
    expect(decisionCells(table, tx!)[DECISION_HEADER.indexOf('production $/month ($ per M tx)')]).toBe('–');
  });
});
