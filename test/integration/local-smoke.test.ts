/**
 * `proxylab local --suite smoke` end to end, through the real CLI, against real PostgreSQL and
 * PgBouncer: the three findings read back from the run directory, the documented files and fields,
 * its report in a real browser, nothing left running, and a run interrupted with SIGINT that keeps its finished steps and
 * resumes under the same --run-id without repeating them (the interrupted runs are the test-only
 * cheap run, RUN_TO_INTERRUPT: they check the life cycle, not the findings). Run on Debian's
 * PgBouncer 1.18 and on the current PgBouncer, ≥ 1.21 (test/helpers/pgbouncer-versions.ts finds it;
 * absent = a failing describe, which the preflight names before jest starts); what the latter's run
 * states follows its version (test/helpers/pgbouncer-defaults.ts), not one release's number.
 *
 * The report in a real browser: the smoke run's own run directory (PgBouncer 1.18), rendered again
 * by `proxylab report`, opened from a file:// URL in Debian's Chromium (headless, fresh profile). The
 * page must load with no console errors and no network request but itself, show its charts with
 * plotted data, and not be blank. The screenshots are kept at <tmpdir>/proxylab-report-browser*.png
 * for a human look. (These tests had a file and a smoke run of their own, report-browser.test.ts:
 * the same command line as the run here but the run id.)
 */
import { expect } from '@jest/globals';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { MetricsFile, RunManifest, StepRecord } from '../../lib/suite/types';
import { stepFileName } from '../../lib/suite/types';
import { planSchema } from '../../lib/results/schemas';
import {
  assertStackGone,
  exitedAs,
  type CliExit,
  type CliRun,
  parseStackLine,
  RUN_TO_INTERRUPT,
  spawnCli,
  type StackLine,
} from '../helpers/local-stack';
import { lookUp } from '../helpers/looked-up';
import { defaultMaxPreparedStatements } from '../helpers/pgbouncer-defaults';
import { envWithPgbouncer, pgbouncerModern } from '../helpers/pgbouncer-versions';
import { supportsMaxPreparedStatements } from '../../lib/poolers/pgbouncer/config';
import { PGBOUNCER_MAX_PREPARED_STATEMENTS_ON } from '../../lib/products/pgbouncer/entry';
import { captureShape, captureText, committedCapture } from '../../scripts/readme-capture';
import { pathToFileURL } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { buildModel } from '../../lib/report/shape';
import { loadRun } from '../../lib/report/load';
import { findChromium } from '../../scripts/preflight';
import { CHROMIUM_ARGS, inkOf, type PageElement, VIEWPORT } from '../helpers/browser-page';

// scripts/preflight.ts (run by npm test) makes sure there is one, or stops before jest.
const CHROMIUM = findChromium();

const STEP = {
  preparedViaTx: 'smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-off/r1',
  simpleViaTx: 'smoke-prepared/pgbouncer-transaction/c5/simple/persistent/ps-off/r1',
  directAboveMax: 'smoke-max-connections/direct/c60/simple/persistent/r1',
  pooledAboveMax: 'smoke-max-connections/pgbouncer-transaction/c60/simple/persistent/r1',
  churnDirect: 'smoke-churn/direct/c5/simple/per-transaction/r1',
  churnPooled: 'smoke-churn/pgbouncer-transaction/c5/simple/per-transaction/r1',
} as const;

const PREPARED_CLASSES = ['prepared-statement-exists', 'prepared-statement-missing', 'portal-missing'];

/** The current PgBouncer, looked up as the file loads: its version names the describe that needs it. */
const modern = lookUp(() =>
  pgbouncerModern('test/integration/local-smoke.test.ts ("on the current PgBouncer")'),
);
const MODERN_LABEL = modern.value?.version ?? '≥ 1.21 (none found)';

let outDir: string;

/**
 * The two smoke runs the describes below read: `--suite smoke` on PgBouncer 1.18, as users run it,
 * and smoke's scenarios at -T 1 (test-smoke-short) on the current PgBouncer with two processes.
 * Each starts its own stack and most of its time is pgbench's fixed -T, so both start in the root
 * beforeAll and run side by side, beside the interrupted runs (test.concurrent); each describe's
 * beforeAll waits for its own.
 */
let smokeRun: CliRun;
let smokeModernRun: CliRun | Error;

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}

function step(runDir: string, id: string): StepRecord {
  return readJson<StepRecord>(path.join(runDir, 'steps', `${stepFileName(id)}.json`));
}

beforeAll(() => {
  outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-local-smoke-'));
  // GIVEN nothing but the binaries; WHEN the real CLI runs the smoke suite
  smokeRun = spawnCli([
    'local',
    '--suite',
    'smoke',
    '--out',
    outDir,
    '--run-id',
    'smoke-e2e',
    '--no-install',
  ]);
  try {
    const { file } = modern.get();
    // smoke's scenarios and findings at -T 1 (test-smoke-short): what this run adds is a current
    // PgBouncer, its prepared statements and two processes, not smoke's -T 3 again
    smokeModernRun = spawnCli(
      [
        'local',
        '--test-suite',
        'test-smoke-short',
        '--out',
        outDir,
        '--run-id',
        'smoke-modern',
        '--no-install',
        '--pooler-processes',
        '2',
      ],
      envWithPgbouncer(file),
    );
  } catch (err) {
    // fails the describe that needs it, not the others
    smokeModernRun = err as Error;
  }
});

afterAll(() => {
  fs.rmSync(outDir, { recursive: true, force: true });
});

describe('proxylab local --suite smoke', () => {
  let runDir: string;
  let exit: CliExit;
  let stdout: string;
  let stack: StackLine | null;

  beforeAll(async () => {
    exit = await exitedAs(smokeRun, 0);
    stdout = smokeRun.stdout();
    stack = parseStackLine(stdout);
    runDir = path.join(outDir, 'smoke-e2e');
  }, 110_000);

  test('exits 0 with every verdict held and prints the tables and the run directory', () => {
    expect(exit).toEqual({ code: 0 });
    expect(stdout).toMatch(/target\s+clients\s+protocol\s+connect\s+tps\s+p95 ms\s+errors\s+verdict/);
    expect(stdout).toContain(`Run directory: ${runDir}`);
    expect(stdout).toMatch(/All verdicts held: \d+ held, 0 broke/);
    // and the report, written after the run (unless --no-report)
    expect(stdout).toMatch(new RegExp(`^Report: ${runDir}/report\\.html \\(\\d+ KiB, \\d+ ms\\)$`, 'm'));
    expect(fs.statSync(path.join(runDir, 'report.html')).size).toBeGreaterThan(1000);
    expect(fs.existsSync(path.join(runDir, 'summary.md'))).toBe(true);
  });

  test("the README's capture has the shape of this run: the same steps in order, notes and totals", () => {
    // GIVEN the capture scripts/readme-capture.ts wrote into the README from a real run
    const committed = committedCapture(
      fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8'),
    );
    expect(committed).not.toBeNull();
    // WHEN both are reduced to what must agree (figures, ports, paths and times left out)
    const real = captureShape(captureText(stdout, outDir));
    // THEN a step added or dropped (6 in the README where a run has 8), a changed note or total shows here
    expect(captureShape(committed ?? '')).toEqual(real);
    expect(real.filter((l) => /^[>✓✗·] \[/.test(l)).length).toBeGreaterThan(6);
  });

  test('prepared through the transaction pool fails with prepared-statement errors while simple succeeds', () => {
    const prepared = step(runDir, STEP.preparedViaTx);
    const preparedErrors = prepared.result?.errors.filter((e) => PREPARED_CLASSES.includes(e.class)) ?? [];
    expect(preparedErrors.reduce((n, e) => n + e.count, 0)).toBeGreaterThan(0);
    expect(prepared.result?.abortedClients).toBeGreaterThan(0);
    expect(prepared.verdict.held).toBe(true);

    const simple = step(runDir, STEP.simpleViaTx);
    expect(simple.result?.complete).toBe(true);
    expect(simple.result?.errors).toEqual([]);
    expect(simple.result?.tps).toBeGreaterThan(0);
    expect(simple.verdict.held).toBe(true);
  });

  test('direct above max_connections is refused while the pooled run with the same clients succeeds', () => {
    const direct = step(runDir, STEP.directAboveMax);
    expect(direct.params.clients).toBe(60);
    expect(direct.result?.complete).toBe(false);
    const refused = direct.result?.errors.find((e) => e.class === 'too-many-connections');
    expect(refused?.sample).toMatch(/remaining connection slots are reserved/);
    expect(direct.verdict.held).toBe(true);

    const pooled = step(runDir, STEP.pooledAboveMax);
    expect(pooled.params.clients).toBe(60);
    expect(pooled.result?.complete).toBe(true);
    expect(pooled.result?.abortedClients).toBe(0);
    expect(pooled.result?.clients).toBe(60);
    expect(pooled.result?.tps).toBeGreaterThan(0);
  });

  test('-C churn through the pooler is at least 3 × direct', () => {
    const direct = step(runDir, STEP.churnDirect);
    const pooled = step(runDir, STEP.churnPooled);
    expect(direct.result?.tpsMode).toBe('including-connections');
    expect(pooled.result?.tpsMode).toBe('including-connections');
    const ratio = (pooled.result?.tps ?? 0) / (direct.result?.tps ?? Infinity);
    expect(ratio).toBeGreaterThanOrEqual(3);
    const manifest = readJson<RunManifest>(path.join(runDir, 'manifest.json'));
    const comparison = manifest.scenarioVerdicts?.find((v) => v.scenario === 'smoke-churn');
    expect(comparison?.held).toBe(true);
  });

  test('the manifest has the documented fields and no secrets', () => {
    const m = readJson<RunManifest>(path.join(runDir, 'manifest.json'));
    expect(m).toMatchObject({
      schemaVersion: 1,
      runId: 'smoke-e2e',
      suite: 'smoke',
      mode: 'local',
      status: 'completed',
      // 6 measured steps + the 2 max_prepared_statements-on cells PgBouncer 1.18 records as not available
      stepsCompleted: 8,
    });
    // the measured steps, plus the ps-on cells PgBouncer 1.18 cannot run (recorded as not available)
    expect(m.stepIds.filter((id) => !id.includes('/ps-on/'))).toEqual(Object.values(STEP));
    expect(m.stepIds.filter((id) => id.includes('/ps-on/'))).toHaveLength(2);
    expect(m.environment.maxConnections).toBe(40);
    expect(m.environment.serverVersion).toMatch(/^\d+\.\d+/);
    expect(m.environment.pgbenchVersion).toMatch(/^\d+\.\d+/);
    expect(m.environment.poolerVersion).toMatch(/^1\.\d+/);
    expect(m.environment.cpus).toBeGreaterThan(0);
    expect(Date.parse(m.endedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(m.startedAt));
    expect(JSON.stringify(m)).not.toMatch(/password|PGPASSWORD|secret/i);
  });

  test('every step file has the documented fields and raw output beside it', () => {
    for (const id of Object.values(STEP)) {
      const r = step(runDir, id);
      expect(r).toMatchObject({
        stepId: id,
        runId: 'smoke-e2e',
        target: { kind: expect.any(String), name: expect.any(String) },
      });
      expect(Object.keys(r.params)).toEqual(
        expect.arrayContaining(['clients', 'protocol', 'connect', 'script', 'durationSec', 'repetition']),
      );
      expect(Object.keys(r.result ?? {})).toEqual(
        expect.arrayContaining([
          'tps',
          'tpsMode',
          'latencyAvgMs',
          'latencyP50Ms',
          'latencyP95Ms',
          'latencyP99Ms',
          'series',
          'errors',
          'abortedClients',
          'complete',
        ]),
      );
      expect(Object.keys(r.verdict)).toEqual(['expected', 'observed', 'held']);
      expect(fs.readFileSync(path.join(runDir, r.files.stdout), 'utf8')).toMatch(/pgbench \(\d+/);
      expect(fs.existsSync(path.join(runDir, r.files.stderr))).toBe(true);
      expect(r.command[0]).toBe('pgbench');
      // no throwaway temp path in the result: the script is named relative to <workdir>
      expect(JSON.stringify(r)).not.toContain(os.tmpdir() + '/proxylab-local-');
    }
    expect(step(runDir, STEP.churnDirect).result?.transactionType).toMatch(/^<workdir>\/.*\.sql$/);
    // a step that ran transactions has percentiles from the logs and a per-second series
    const simple = step(runDir, STEP.simpleViaTx);
    expect(simple.result?.latencyP95Ms).toBeGreaterThan(0);
    expect(simple.result?.series?.length).toBeGreaterThanOrEqual(2);
    expect(simple.files.log).not.toBeNull();
  });

  test('metrics/local.json holds PgBouncer and pg_stat_database samples', () => {
    const metrics = readJson<MetricsFile>(path.join(runDir, 'metrics', 'local.json'));
    const named = (source: string, name: string) =>
      metrics.series.find(
        (s) => s.source === source && s.name === name && s.dimensions.database !== 'bench_session',
      );
    for (const [source, name] of [
      ['pgbouncer', 'cl_active'],
      ['pgbouncer', 'cl_waiting'],
      ['pgbouncer', 'sv_active'],
      ['pg_stat_database', 'numbackends'],
      ['pg_stat_database', 'xact_commit'],
    ] as const) {
      expect(named(source, name)?.points.length).toBeGreaterThan(3);
    }
    // 60 clients on a pool of 10: clients waited in PgBouncer at some point
    expect(Math.max(...(named('pgbouncer', 'cl_waiting')?.points.map((p) => p[1]) ?? [0]))).toBeGreaterThan(
      0,
    );
    const windows = readJson<{ steps: Array<{ stepId: string }> }>(
      path.join(runDir, 'metrics', 'steps.json'),
    );
    expect(windows.steps.map((w) => w.stepId)).toEqual(Object.values(STEP));
  });

  test('leaves no PostgreSQL or PgBouncer running and removes its temporary directory', async () => {
    expect(stack).not.toBeNull();
    await assertStackGone(stack!);
  });
});

describe('proxylab local on a run id that already completed', () => {
  test("starts no server, exits 0, and reports the run's own duration (not 0:00)", async () => {
    // GIVEN the completed smoke-e2e run of the describe above
    const runDir = path.join(outDir, 'smoke-e2e');
    const m = readJson<RunManifest>(path.join(runDir, 'manifest.json'));
    expect(m.status).toBe('completed');
    const ranSec = (Date.parse(m.endedAt!) - Date.parse(m.startedAt)) / 1000;
    // WHEN the same command runs again
    const again = spawnCli([
      'local',
      '--suite',
      'smoke',
      '--out',
      outDir,
      '--run-id',
      'smoke-e2e',
      '--no-install',
      '--json',
    ]);
    // THEN
    expect(await exitedAs(again, 0)).toEqual({ code: 0 });
    expect(again.stderr()).toContain('Run smoke-e2e is already complete; nothing to run.');
    expect(again.stderr()).not.toContain('Starting PostgreSQL');
    const out = JSON.parse(again.stdout()) as { wallSec: number; status: string };
    expect(out.status).toBe('completed');
    expect(ranSec).toBeGreaterThan(1);
    expect(out.wallSec).toBeCloseTo(ranSec, 0);
    // (a CLI start is 1-2 CPU-s; 30 s ran out once at load 38 beside the concurrent runs)
  }, 60_000);
});

describe('proxylab local interrupted with SIGINT', () => {
  test.concurrent(
    'keeps finished steps, stops everything, and resumes with the same --run-id without repeating them',
    async () => {
      // GIVEN a run interrupted after its first two steps
      const runId = 'run-int';
      const args = RUN_TO_INTERRUPT.args(outDir, runId);
      const first = spawnCli(args);
      await first.waitForStdout(RUN_TO_INTERRUPT.measured(2), 60_000);
      first.child.kill('SIGINT');
      const runDir = path.join(outDir, runId);

      // THEN it ended as interrupted, exit 130 (128 + SIGINT), with the finished steps on disk and nothing running
      expect(await exitedAs(first, 130)).toEqual({ code: 130 });
      const m = readJson<RunManifest>(path.join(runDir, 'manifest.json'));
      expect(m.status).toBe('interrupted');
      expect(m.stepsCompleted).toBeGreaterThanOrEqual(2);
      expect(m.stepsCompleted).toBeLessThan(RUN_TO_INTERRUPT.steps);
      const kept = m.stepIds.slice(0, m.stepsCompleted);
      const keptStart = new Map(kept.map((id) => [id, step(runDir, id).startedAt]));
      await assertStackGone(parseStackLine(first.stdout())!);
      expect(first.stdout()).toContain(
        `Resume (finished steps are kept): npx proxylab local --test-suite test-steps --run-id ${runId} --out ${outDir}`,
      );

      // WHEN the same run id runs again
      const second = spawnCli(args);

      // THEN it resumed: the kept steps were not repeated, the rest ran, every verdict held
      expect(await exitedAs(second, 0)).toEqual({ code: 0 });
      expect(second.stdout()).toContain(
        `Resuming run ${runId}: ${m.stepsCompleted} of ${RUN_TO_INTERRUPT.steps} steps already done.`,
      );
      for (const id of kept) {
        expect(second.stdout()).not.toContain(
          `> [${m.stepIds.indexOf(id) + 1}/${RUN_TO_INTERRUPT.steps}] ${id}`,
        );
        expect(step(runDir, id).startedAt).toBe(keptStart.get(id));
      }
      const m2 = readJson<RunManifest>(path.join(runDir, 'manifest.json'));
      expect(m2.status).toBe('completed');
      expect(m2.stepsCompleted).toBe(RUN_TO_INTERRUPT.steps);
      expect(m2.startedAt).toBe(m.startedAt);
      await assertStackGone(parseStackLine(second.stdout())!);
    },
    110_000,
  );

  test.concurrent(
    'a reader that goes away (`| head`) stops the run like Ctrl-C: no EPIPE crash, manifest says interrupted, exit 141',
    async () => {
      // GIVEN a run whose stdout reader closes once the first step has started (the short run: the
      // reader goes as a step starts, not inside its window)
      const runId = 'run-pipe';
      const run = spawnCli(RUN_TO_INTERRUPT.args(outDir, runId, { short: true }));
      await run.waitForStdout(RUN_TO_INTERRUPT.started(1), 60_000);
      const stackLine = parseStackLine(run.stdout());
      run.child.stdout!.destroy();
      // THEN
      const code = await run.exit;
      expect(run.stderr()).not.toMatch(/EPIPE|Unhandled 'error' event/);
      expect(code).toBe(141);
      const m = readJson<RunManifest>(path.join(outDir, runId, 'manifest.json'));
      expect(m.status).toBe('interrupted');
      expect(m.stepsCompleted).toBeLessThan(RUN_TO_INTERRUPT.steps);
      await assertStackGone(stackLine!);
    },
    90_000,
  );
});

describe('on PgBouncer 1.18 (Debian): the max_prepared_statements-on cells are not available, not broken', () => {
  test('plan.json lists every step with its descriptor; the ps-on cells are recorded as not available', () => {
    const runDir = path.join(outDir, 'smoke-e2e');
    const plan = planSchema.parse(readJson(path.join(runDir, 'plan.json')));
    const manifest = readJson<RunManifest>(path.join(runDir, 'manifest.json'));
    expect(plan.steps.map((s) => s.stepId)).toEqual(manifest.stepIds);
    expect(plan.environment.poolerVersion).toMatch(/^1\.18/);
    expect(manifest.environment.maxPreparedStatements).toBeNull();
    const on = plan.steps.filter((s) => s.params.preparedStatements === 'on');
    expect(on.length).toBe(2);
    for (const s of on) {
      expect(s.unavailable).toMatch(/^not available on PgBouncer 1\.18\.\d+ \(needs ≥ 1\.21\)$/);
      const rec = step(runDir, s.stepId);
      expect([rec.status, rec.verdict.held]).toEqual(['not-available', null]);
    }
  });
});

describe('report.html of the smoke run, in headless Chromium', () => {
  let work: string;
  let runDir: string;
  let reportPath: string;
  let localOutput: string;
  let reportOutput: string;
  let context: BrowserContext;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'report-browser-'));
    // GIVEN the real run directory the smoke suite made through the real CLI (smoke-e2e, above)
    expect(await exitedAs(smokeRun, 0)).toEqual({ code: 0 });
    localOutput = smokeRun.stdout();
    runDir = path.join(outDir, 'smoke-e2e');
    // WHEN the report is written by `proxylab report` into its own directory
    const report = spawnCli(['report', runDir, '--out', path.join(work, 'report')]);
    expect(await exitedAs(report, 0)).toEqual({ code: 0 });
    reportOutput = report.stdout();
    reportPath = path.join(work, 'report', 'report.html');
    const executablePath = CHROMIUM;
    if (executablePath === null)
      throw new Error('Chromium not found: set PROXYLAB_CHROMIUM (npm test checks first)');
    context = await chromium.launchPersistentContext(path.join(work, 'profile'), {
      executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: VIEWPORT,
    });
  }, 180_000);

  afterAll(async () => {
    await context?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('proxylab local wrote the report at the end of the run, proxylab report printed its paths', () => {
    expect(localOutput).toContain(`Report: ${path.join(runDir, 'report.html')}`);
    expect(fs.existsSync(path.join(runDir, 'report.html'))).toBe(true);
    expect(reportOutput).toMatch(
      new RegExp(
        `^Report: ${reportPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ KiB, \\d+ ms\\)$`,
        'm',
      ),
    );
    expect(fs.readFileSync(path.join(work, 'report', 'summary.md'), 'utf8')).toMatch(
      /^# proxylab smoke — run smoke-e2e/,
    );
  });

  test('loads from disk with no console errors and no request but the file itself; charts are drawn; not blank', async () => {
    const page = await context.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    const url = pathToFileURL(reportPath).href;

    // WHEN
    const response = await page.goto(url, { waitUntil: 'load' });

    // THEN it loaded, said nothing wrong, fetched nothing
    expect(response?.ok()).toBe(true);
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);

    // the charts: as many as the run's data calls for, each one SVG with plotted marks
    const model = buildModel(loadRun(runDir), () => null);
    const figures = await page.$$eval('figure.chart', (els: readonly PageElement[]) =>
      els.map((f) => {
        const svg = f.querySelector('svg');
        return {
          kind: f.getAttribute('data-chart'),
          svgs: f.querySelectorAll('svg').length,
          width: svg ? svg.getBoundingClientRect().width : 0,
          // series lines (clipped to the plot area) and data symbols/bars (not the silent step shading)
          plotted: f.querySelectorAll(
            'svg g[clip-path] path, svg [ecmeta_ssr_type="chart"]:not([ecmeta_silent="true"])',
          ).length,
        };
      }),
    );
    const count = (kind: string): number => figures.filter((f) => f.kind === kind).length;
    // one tps chart per scenario over two or more client counts; smoke's scenarios each ran one
    // client count, so each says so in a sentence instead of drawing single points
    const drawable = model.panels.filter(
      (p) => p.drawable && p.tps.some((l) => l.points.some((pt) => pt?.value)),
    ).length;
    expect(count('tps')).toBe(drawable);
    const singlePoint = await page.$$eval(
      '[data-chart="single-point"]',
      (els: readonly PageElement[]) => els.length,
    );
    expect(singlePoint).toBe(model.panels.filter((p) => !p.drawable).length);
    expect(singlePoint + drawable).toBe(model.panels.length);
    expect(model.panels.length).toBeGreaterThanOrEqual(3);
    // the decision table comes first, one table per scenario
    const decisions = await page.$$eval(
      '#decision table.decision',
      (els: readonly PageElement[]) => els.length,
    );
    expect(decisions).toBe(model.decisions.length);
    expect(count('churn')).toBe(new Set(model.churn.map((r) => r.scenario)).size);
    expect(count('metric')).toBe(model.metricPanels.filter((p) => p.lines.length > 0).length);
    expect(count('metric')).toBeGreaterThanOrEqual(3);
    for (const f of figures) {
      expect(f).toEqual(expect.objectContaining({ svgs: 1 }));
      expect(f.width).toBeGreaterThan(200);
      expect(f.plotted).toBeGreaterThan(0);
    }

    // the error matrix carries a real pgbench error line on hover
    const titles = await page.$$eval('td[data-state="errors"]', (tds: readonly PageElement[]) =>
      tds.map((td) => td.getAttribute('title') ?? ''),
    );
    expect(titles.some((t) => /prepared statement "P_0"/.test(t))).toBe(true);
    expect(
      titles.some((t) =>
        /too-many-connections ×\d+: .*(remaining connection slots|too many clients)/.test(t),
      ),
    ).toBe(true);

    // and it is not blank: compared with an empty page of the same size
    const shot = await page.screenshot({ path: path.join(os.tmpdir(), 'proxylab-report-browser.png') });
    await page.screenshot({
      path: path.join(os.tmpdir(), 'proxylab-report-browser-full.png'),
      fullPage: true,
    });
    const blankPage = await context.newPage();
    await blankPage.setContent('<!doctype html><html><body></body></html>');
    const blank = await blankPage.screenshot();
    const ink = await inkOf(blankPage, shot);
    const blankInk = await inkOf(blankPage, blank);
    expect(blankInk.inked).toBe(0);
    expect(ink.inked).toBeGreaterThan(0.03);
    expect(ink.colours).toBeGreaterThan(50);
    expect(shot.length).toBeGreaterThan(blank.length * 5);
    await blankPage.close();
    await page.close();
  }, 120_000);
});

// Two PgBouncer processes sharing the port (the shared configuration module, as on a pooler host):
// the max_prepared_statements switch and the pool resets must reach both.
describe(`smoke's findings at -T 1 (--test-suite test-smoke-short) on PgBouncer ${MODERN_LABEL} with --pooler-processes 2`, () => {
  let runDir: string;
  let exit: CliExit;
  let stdout: string;
  let version: string;

  beforeAll(async () => {
    if (smokeModernRun instanceof Error) throw smokeModernRun;
    version = modern.get().version;
    const run = smokeModernRun;
    exit = await exitedAs(run, 0);
    stdout = run.stdout();
    runDir = path.join(outDir, 'smoke-modern');
    expect(parseStackLine(stdout)).not.toBeNull();
    await assertStackGone(parseStackLine(stdout) as StackLine);
  }, 110_000);

  test('exits 0 with every verdict held', () => {
    expect(exit).toEqual({ code: 0 });
    expect(stdout).toMatch(/All verdicts held: \d+ held, 0 broke/);
  });

  test('prepared through the transaction pool fails with max_prepared_statements = 0 and succeeds with it on', () => {
    // a PgBouncer ≥ 1.21 has the setting: both cells are measured, none is "not available"
    expect(supportsMaxPreparedStatements(version)).toBe(true);
    const off = step(runDir, 'smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-off/r1');
    const on = step(runDir, 'smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-on/r1');
    const prepared = (r: StepRecord) =>
      (r.result?.errors ?? [])
        .filter((e) => PREPARED_CLASSES.includes(e.class))
        .reduce((n, e) => n + e.count, 0);
    expect(prepared(off)).toBeGreaterThan(0);
    expect(off.verdict).toMatchObject({ held: true });
    expect(on.result).toMatchObject({ complete: true, abortedClients: 0, errors: [] });
    expect(on.result?.tps).toBeGreaterThan(0);
    expect(on.verdict).toMatchObject({ expected: 'succeeds', held: true });
  });

  test('the environment, plan and report state the pooler version and its prepared-statement setting', () => {
    const manifest = readJson<RunManifest>(path.join(runDir, 'manifest.json'));
    // the stack leaves max_prepared_statements at the version's own default (200 since 1.24)
    const atStart = defaultMaxPreparedStatements(version);
    expect(manifest.environment).toMatchObject({ poolerVersion: version, maxPreparedStatements: atStart });
    const plan = planSchema.parse(readJson(path.join(runDir, 'plan.json')));
    const cell = (ps: 'off' | 'on') =>
      plan.steps.find(
        (s) =>
          s.scenario === 'smoke-prepared' &&
          s.params.protocol === 'prepared' &&
          s.params.preparedStatements === ps,
      )?.descriptor;
    expect(cell('off')).toMatchObject({
      version,
      settings: { maxPreparedStatements: 0 },
      capabilities: { multiplexes: true, carriesPreparedStatements: 'no' },
    });
    expect(cell('on')).toMatchObject({
      settings: { maxPreparedStatements: PGBOUNCER_MAX_PREPARED_STATEMENTS_ON, processes: 2 },
      capabilities: { carriesPreparedStatements: 'yes' },
    });
    // the plan records the process count on the PgBouncer targets only
    expect(plan.targets.map((t) => [t.name, t.settings.processes])).toEqual([
      ['direct', undefined],
      ['pgbouncer-transaction', 2],
      ['pgbouncer-session', 2],
    ]);
    const summary = fs.readFileSync(path.join(runDir, 'summary.md'), 'utf8');
    expect(summary).toContain(`A local PgBouncer ${version} stands in for RDS Proxy`);
    expect(summary).toContain(`max_prepared_statements ${String(atStart)} at start`);
    expect(summary).toMatch(/pgbouncer-transaction \(max_prepared_statements on\)/);
  });

  test('two processes: pools summed per database, CPU per process, poolerSaturated judged on PgBouncer steps', () => {
    expect(stdout).toMatch(
      new RegExp(
        `PgBouncer ${version.replace(/\./g, '\\.')} on 127\\.0\\.0\\.1:\\d+ \\(2 processes, so_reuseport\\)`,
      ),
    );
    const manifest = readJson<RunManifest>(path.join(runDir, 'manifest.json'));
    expect(manifest.settings).toMatchObject({ poolerProcesses: 2, poolSize: 10, poolSizePerProcess: 5 });
    const metrics = readJson<MetricsFile>(path.join(runDir, 'metrics', 'local.json'));
    for (const process of ['0', '1']) {
      const cpu = metrics.series.find(
        (s) => s.name === 'process_cpu_percent' && s.dimensions.process === process,
      );
      expect(cpu?.status).toBe('ok');
    }
    const active = metrics.series.find(
      (s) => s.source === 'pgbouncer' && s.name === 'cl_active' && s.dimensions.database === 'bench',
    );
    expect(Math.max(...(active?.points ?? []).map((p) => p[1]))).toBeGreaterThan(0);
    const on = step(runDir, 'smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-on/r1');
    expect(typeof on.poolerSaturated).toBe('boolean');
    const direct = fs
      .readdirSync(path.join(runDir, 'steps'))
      .filter((f) => f.includes('direct') && f.endsWith('.json'))
      .map((f) => readJson<StepRecord>(path.join(runDir, 'steps', f)));
    expect(direct.length).toBeGreaterThan(0);
    for (const r of direct) expect(r.poolerSaturated).toBeNull();
  });
});
