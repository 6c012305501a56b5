/**
 * Two `proxylab local` on one run directory never write into the same run, end to end against real
 * PostgreSQL and PgBouncer through the real CLI: the same --run-id is refused while the first holds
 * it, and two default run ids started together make two intact runs. (Split from
 * local-infra-failure.test.ts so its timed kill tests run without these beside them.) Each test
 * starts its own stacks and waits mostly on pgbench's fixed -T: the two run side by side
 * (test.concurrent), each in its own run id or directory. The runs are the test-only cheap ones
 * (RUN_TO_INTERRUPT): what is checked is who writes where, not a finding — and, on one of the two
 * default-id runs, that `--price-region` prices every row with a tps (issue 41).
 */
import { expect } from '@jest/globals';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PRICE_TABLES_COMMITTED, type PriceTable } from '../../lib/cost/price-table';
import { writeCachedTable } from '../../lib/cost/pricelist/cache';
import { isoDate } from '../../lib/cost/pricelist/table';
import { groupCells } from '../../lib/report/cells';
import { decisionTables } from '../../lib/report/decision';
import { loadRun } from '../../lib/report/load';
import type { RunManifest, StepRecord } from '../../lib/suite/types';
import { exitedAs, RUN_TO_INTERRUPT, spawnCli } from '../helpers/local-stack';
import { scratchDir } from '../helpers/scratch';

const outDir = scratchDir('proxylab-two-runs-');
const TODAY = isoDate(new Date());

/** A price cache with eu-west-1 read today (us-east-1's committed figures, as a Price List answer is stored). */
function euWest1PriceCache(): string {
  const root = scratchDir('prices-');
  const us = PRICE_TABLES_COMMITTED['us-east-1'] as PriceTable;
  const text = JSON.stringify({ ...us, region: 'eu-west-1', asOf: TODAY }).replace(
    /"source":"[^"]+"/g,
    '"source":"aws-price-list-api"',
  );
  writeCachedTable(root, JSON.parse(text) as PriceTable);
  return root;
}
let attempt = 0;

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}

function allSteps(runDir: string): StepRecord[] {
  return fs
    .readdirSync(path.join(runDir, 'steps'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => readJson<StepRecord>(path.join(runDir, 'steps', f)));
}

describe('two proxylab local on one --out', () => {
  test.concurrent(
    'the same --run-id: the second is refused naming the holder, the first completes intact',
    async () => {
      const runId = `twice-${++attempt}`;
      const args = RUN_TO_INTERRUPT.args(outDir, runId);
      const first = spawnCli(args);
      await first.waitForStdout(RUN_TO_INTERRUPT.started(1), 60_000);
      const second = spawnCli(args);
      expect(await exitedAs(second, 2)).toEqual({ code: 2 });
      expect(second.stderr()).toMatch(
        new RegExp(
          `run ${runId} is already being written: it is held by pid ${first.child.pid} on \\S+ since`,
        ),
      );
      expect(second.stdout()).not.toMatch(/Starting PostgreSQL|Resuming/);
      expect(await exitedAs(first, 0)).toEqual({ code: 0 });
      const m = readJson<RunManifest>(path.join(outDir, runId, 'manifest.json'));
      expect(m.status).toBe('completed');
      expect(m.stepsCompleted).toBe(RUN_TO_INTERRUPT.steps);
    },
    150_000,
  );

  test.concurrent(
    'default run ids, started together: two runs intact in two directories',
    async () => {
      // A directory per attempt: a retry must not count the first attempt's runs. The short run (-T 1
      // steps): both only have to complete. (The test above keeps -T 3: its first run must still
      // hold the run id when the second CLI has started.)
      const out = path.join(outDir, `defaults-${++attempt}`);
      const args = RUN_TO_INTERRUPT.args(out, undefined, { short: true });
      // The second also prices its targets at eu-west-1 (`--price-region`, issue 41) from a cache
      // this test writes (no AWS call): its decision table is checked below, at no extra run's cost.
      const cache = euWest1PriceCache();
      const [a, b] = [
        spawnCli(args),
        spawnCli([...args, '--price-region', 'eu-west-1'], { PROXYLAB_PRICE_CACHE: cache }),
      ];
      expect(await Promise.all([exitedAs(a, 0), exitedAs(b, 0)])).toEqual([{ code: 0 }, { code: 0 }]);
      const runs = fs.readdirSync(out).sort();
      expect(runs).toHaveLength(2);
      for (const id of runs) {
        expect(id).toMatch(/^local-\d{8}-\d{6}-[0-9a-f]{4}$/);
        const m = readJson<RunManifest>(path.join(out, id, 'manifest.json'));
        expect(m).toMatchObject({ runId: id, status: 'completed', stepsCompleted: RUN_TO_INTERRUPT.steps });
        expect(allSteps(path.join(out, id))).toHaveLength(RUN_TO_INTERRUPT.steps);
        expect(fs.existsSync(path.join(out, id, 'metrics', 'local.json'))).toBe(true);
        // --no-report (RUN_TO_INTERRUPT): no report written, and the output says how to write it
        expect(fs.existsSync(path.join(out, id, 'report.html'))).toBe(false);
        expect(fs.existsSync(path.join(out, id, 'summary.md'))).toBe(false);
      }
      for (const run of [a, b])
        expect(run.stdout()).toMatch(/^Report not written \(--no-report\): proxylab report \S+ writes it$/m);
      // --price-region: every row with a tps has $/h, $ per M tx and a production bill, marked as
      // local throughput at eu-west-1's prices with their date; the other run is not priced.
      const priced = /^Run directory: (\S+)$/m.exec(b.stdout())?.[1] ?? '';
      expect(b.stdout()).toContain(`Prices: eu-west-1 prices as of ${TODAY} (AWS Price List, cached today)`);
      const rows = (dir: string) => {
        const run = loadRun(dir);
        return decisionTables(run, groupCells(run.steps)).flatMap((t) => t.rows);
      };
      const withTps = rows(priced).filter((r) => r.tps !== null);
      expect(withTps.length).toBeGreaterThan(1);
      for (const r of withTps) {
        expect([r.label, r.usdPerMillionTransactions]).toEqual([r.label, expect.any(Number)]);
        expect(r.production?.usdPerMillionTransactions).toEqual(expect.any(Number));
        expect(r.production?.pricedAs).toBe(`local throughput, cloud prices (eu-west-1 as of ${TODAY})`);
      }
      const other = runs.map((id) => path.join(out, id)).find((d) => d !== priced) ?? '';
      expect(rows(other).every((r) => r.usdPerHour === null && r.production === null)).toBe(true);
    },
    240_000,
  );
});
