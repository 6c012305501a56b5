/**
 * `proxylab compare`: ratio per cell, the marker beyond the spread between repetitions, "no
 * repetitions" said rather than guessed, cells in one run only. SYNTHETIC runs (builders in
 * test/fixtures/runs/synthetic.ts) written to a temporary directory.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareCell, compareRuns, renderCompareHtml, writeComparison } from '../../lib/report/compare';
import { loadRun } from '../../lib/report/load';
import {
  makeManifest,
  makeStep,
  partialHostileRun,
  repeatedRun,
  writeRunDir,
} from '../fixtures/runs/synthetic';

describe('compareCell', () => {
  test.each([
    {
      name: 'difference larger than either spread',
      a: { best: 110, median: 100, worst: 90, n: 3 },
      b: { best: 165, median: 150, worst: 135, n: 3 },
      marker: 'beyond-spread',
      ratio: 1.5,
    },
    {
      name: 'difference within the spread',
      a: { best: 120, median: 100, worst: 80, n: 3 },
      b: { best: 125, median: 110, worst: 95, n: 3 },
      marker: 'within-spread',
      ratio: 1.1,
    },
    {
      name: 'one repetition on one side: spread unknown',
      a: { best: 100, median: 100, worst: 100, n: 1 },
      b: { best: 300, median: 200, worst: 100, n: 3 },
      marker: 'no-repetitions',
      ratio: 2,
    },
  ])('$name', ({ a, b, marker, ratio }) => {
    // WHEN
    const c = compareCell(a, b);
    // THEN
    expect(c.marker).toBe(marker);
    expect(c.ratio).toBeCloseTo(ratio);
  });

  test('no tps on one side: not comparable, no ratio', () => {
    expect(compareCell(null, { best: 1, median: 1, worst: 1, n: 1 })).toEqual({
      ratio: null,
      marker: 'not-comparable',
      note: 'no tps in A',
    });
  });

  test('without repetitions the note says so instead of judging', () => {
    const one = { best: 100, median: 100, worst: 100, n: 1 };
    expect(compareCell(one, { ...one, median: 500, best: 500, worst: 500 }).note).toMatch(
      /no repetitions in either run: spread unknown/,
    );
  });
});

describe('compareRuns on two synthetic runs', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'report-compare-'));
    // GIVEN A: the repeated run; B: the same with quick-e1's simple/direct cells 1.5 × faster,
    // the 4th churn repetition dropped, and a new 100-client cell.
    writeRunDir(join(dir, 'A'), repeatedRun('synthetic-A'));
    const b = repeatedRun('synthetic-B', 1.5);
    const extra = makeStep('synthetic-B', {
      scenario: 'quick-e1',
      target: 'direct',
      clients: 100,
      tps: 5000,
      startSec: 900,
    });
    const steps = [...b.steps.filter((s) => s.params.repetition !== 4), extra];
    writeRunDir(join(dir, 'B'), {
      ...b,
      steps,
      manifest: makeManifest('synthetic-B', { stepIds: steps.map((s) => s.stepId) }),
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('ratios and markers per cell', () => {
    // WHEN
    const model = compareRuns(loadRun(join(dir, 'A')), loadRun(join(dir, 'B')));
    const find = (
      scenario: string,
      target: string,
      clients: number,
      protocol: string,
      connect = 'persistent',
    ) =>
      model.matched.find(
        (c) =>
          c.key.scenario === scenario &&
          c.key.target.name === target &&
          c.key.clients === clients &&
          c.key.protocol === protocol &&
          c.key.connect === connect,
      )!;
    // THEN: scaled cell, 10000±1000 → 15000±1500: beyond the spread
    const scaled = find('quick-e1', 'direct', 20, 'simple');
    expect(scaled.ratio).toBeCloseTo(1.5);
    expect(scaled.marker).toBe('beyond-spread');
    // an unchanged cell
    const same = find('quick-e3', 'pgbouncer-transaction', 10, 'simple');
    expect(same.ratio).toBeCloseTo(1);
    expect(same.marker).toBe('within-spread');
    // refused on both sides: no ratio, said so
    const refused = find('quick-e1', 'direct', 60, 'simple');
    expect(refused.marker).toBe('not-comparable');
    expect(refused.note).toBe('no tps in either run');
    // -C direct: A has 4 repetitions, B 3 — still matched
    expect(find('quick-e3', 'direct', 10, 'simple', 'per-transaction').a?.n).toBe(4);
    // cells in one run only
    expect(model.onlyA).toEqual([]);
    expect(model.onlyB.map((c) => c.key.clients)).toEqual([100]);
  });

  test('compare opens with the two runs’ decision tables side by side, row by row', () => {
    // WHEN
    const r = writeComparison(join(dir, 'A'), join(dir, 'B'), { outDir: join(dir, 'out-decision') });
    // THEN the decision table comes before the cell-by-cell tables
    expect(r.markdown.indexOf('## Decision table, A beside B')).toBeGreaterThan(0);
    expect(r.markdown.indexOf('## Decision table, A beside B')).toBeLessThan(
      r.markdown.indexOf('## Cell by cell'),
    );
    // B's quick-e1 direct·simple is 1.5 × A's over the cells every target measured with a tps (20 clients)
    const pair = r.model.decisions.find((p) => p.scenario === 'quick-e1' && p.label === 'direct · simple');
    expect(pair?.ratio).toBeCloseTo(1.5);
    expect(r.markdown).toContain(
      '| quick-e1 | direct · simple | 10,000.0 (best 11,000.0 / worst 9,000.0, n=3) | 15,000.0 (best 16,500.0 / worst 13,500.0, n=3) | 1.50 × |',
    );
    expect(readFileSync(r.htmlPath, 'utf8')).toContain(
      '<section id="decision"><h2>Decision table, A beside B</h2>',
    );
  });

  test('writeComparison writes compare.md / compare.html and returns the Markdown', () => {
    const out = join(dir, 'out');
    // WHEN
    const r = writeComparison(join(dir, 'A'), join(dir, 'B'), { outDir: out });
    // THEN
    expect(readFileSync(r.mdPath, 'utf8')).toBe(r.markdown);
    expect(r.markdown).toMatch(
      /^12 cells in both runs; 4 differ by more than the spread between repetitions/m,
    );
    expect(r.markdown).toContain(
      '| direct · 20c · simple · persistent | 10,000.0 (best 11,000.0 / worst 9,000.0, n=3) | 15,000.0 (best 16,500.0 / worst 13,500.0, n=3) | 1.50 × | ⚠ beyond spread | ✓ → ✓ |',
    );
    expect(r.markdown).toMatch(
      /## Only in B\n\n\| scenario \| cell \| tps \|\n\|---\|---\|---\|\n\| quick-e1 \| direct · 100c · simple · persistent \| 5,000.0 \|/,
    );
    const page = readFileSync(r.htmlPath, 'utf8');
    expect(page).toContain('data-chart="ratio"');
    expect(page).not.toMatch(/<script/i);
  });

  test('hostile names stay escaped in compare.html', () => {
    const hostileDir = join(dir, 'H');
    writeRunDir(hostileDir, partialHostileRun());
    const page = renderCompareHtml(compareRuns(loadRun(hostileDir), loadRun(hostileDir))).page;
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/<img/i);
    expect(page).toContain('evil&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});
