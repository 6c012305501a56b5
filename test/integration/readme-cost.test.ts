/**
 * The README's "What it costs" table is generated (scripts/cost-table.ts) and must match what
 * `proxylab cost` computes today. If this fails after a price or lab change, run
 * `npx tsx scripts/cost-table.ts --write` and commit README.md and docs/cost.md.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHIPPED_LABS } from '../helpers/shipped-labs';
import {
  COST_TABLE_END,
  COST_TABLE_START,
  extractCostTable,
  renderCostTable,
  replaceCostTable,
} from '../../scripts/cost-table';

const ROOT = join(__dirname, '..', '..');
const generated = renderCostTable();

test.each(['README.md', join('docs', 'cost.md')])(
  '%s carries the generated cost table between the markers',
  (rel) => {
    // GIVEN the committed file
    const text = readFileSync(join(ROOT, rel), 'utf8');
    // WHEN the block between the markers is read
    const committed = extractCostTable(text);
    // THEN it is there and equals a fresh generation
    expect({ file: rel, hasMarkers: committed !== null }).toEqual({ file: rel, hasMarkers: true });
    expect(committed).toBe(generated);
  },
);

test('the table rows are `proxylab cost --json` figures (default lab, through the real CLI)', () => {
  // GIVEN the CLI's JSON for the default lab
  const out = execFileSync(
    process.execPath,
    [join(ROOT, 'scripts', 'proxylab.js'), 'cost', join(ROOT, 'labs', 'default.json'), '--json'],
    {
      encoding: 'utf8',
    },
  );
  const e = JSON.parse(out) as {
    totals: Record<`per${'Hour' | 'Day' | 'Month'}Usd${'Min' | 'Max'}`, number>;
  };
  // THEN the default row shows the same totals, rounded as the table rounds them: a range, its
  // db.t4g.medium writer's Unlimited-mode CPU credits being $0 idle and more under a suite
  const t = e.totals;
  const rowLine = generated.split('\n').find((l) => l.startsWith('| `labs/default.json`'));
  expect(rowLine).toBeDefined();
  expect(rowLine).toContain(
    `| $${t.perHourUsdMin.toFixed(2)}–${t.perHourUsdMax.toFixed(2)} | $${t.perDayUsdMin.toFixed(2)}–${t.perDayUsdMax.toFixed(2)} ` +
      `| $${t.perMonthUsdMin.toFixed(0)}–${t.perMonthUsdMax.toFixed(0)} |`,
  );
});

test('the generated block has a row per lab file', () => {
  for (const f of SHIPPED_LABS) expect(generated).toContain(`| \`labs/${f}.json\` |`);
});

test('replace/extract touch only the marked block', () => {
  const doc = `# Title\n\nbefore\n${COST_TABLE_START}\nold\n${COST_TABLE_END}\nafter\n`;
  const next = replaceCostTable(doc, `${COST_TABLE_START}\nnew\n${COST_TABLE_END}`);
  expect(next).toBe(`# Title\n\nbefore\n${COST_TABLE_START}\nnew\n${COST_TABLE_END}\nafter\n`);
  expect(replaceCostTable('# no markers\n', 'x')).toBeNull();
  expect(extractCostTable('# no markers\n')).toBeNull();
});
