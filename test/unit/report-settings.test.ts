/**
 * The report's Settings section (lib/report/settings.ts): from the plan's descriptors
 * (`settings.effective`), one table per product with the lab's values (*), proxylab's (†) and the
 * failure and timeout defaults, any setting that differs between targets, and the variants' differences;
 * escaped in report.html and summary.md; absent for a plan without recorded settings.
 */
import { join } from 'node:path';
import { loadRun, type LoadedRun } from '../../lib/report/load';
import { renderHtml } from '../../lib/report/render-html';
import { renderMarkdown } from '../../lib/report/render-md';
import { settingsHtml, settingsMarkdown, settingsSection } from '../../lib/report/settings';
import { buildModel } from '../../lib/report/shape';
import type { RunPlan } from '../../lib/suite/plan';
import { describeTarget, directTarget, managedProxyTarget, poolerTarget } from '../../lib/suite/targets';

const FIXTURES = join(__dirname, '..', 'fixtures', 'runs');
const HOSTILE_QUERY = "SET application_name = '<script>alert(1)</script>|`x`'";

const TARGETS = [
  describeTarget(directTarget(), { version: '16.4' }),
  describeTarget(managedProxyTarget('pool50'), {
    version: null,
    settings: { InitQuery: HOSTILE_QUERY },
    kitSettings: { MaxConnectionsPercent: 50 },
  }),
  describeTarget(poolerTarget('pgbouncer', 'bouncer-default', 'transaction'), {
    version: '1.25.2',
    maxPreparedStatements: 200,
    settings: {},
    kitSettings: { pool_mode: 'transaction', default_pool_size: null },
  }),
  describeTarget(poolerTarget('pgbouncer', 'bouncer-fast-retry', 'transaction'), {
    version: '1.25.2',
    maxPreparedStatements: 200,
    settings: { server_login_retry: 2 },
    kitSettings: { pool_mode: 'transaction', default_pool_size: null },
  }),
];

/** A run whose plan.json holds `targets` (the rest of the plan is not what this section reads). */
function withPlan(run: LoadedRun, targets = TARGETS): LoadedRun {
  return { ...run, plan: { targets, steps: [], scenarios: [] } as unknown as RunPlan };
}

test('one table per product, a column per target; the lab set, failure/timeout and differing rows', () => {
  const s = settingsSection({ plan: { targets: TARGETS } as unknown as RunPlan });
  expect(s?.tables.map((t) => [t.product, t.targets])).toEqual([
    ['RDS Proxy', ['pool50']],
    ['PgBouncer', ['bouncer-default-transaction', 'bouncer-fast-retry-transaction']],
  ]);
  const bouncer = s?.tables[1];
  const row = (name: string) => bouncer?.rows.find((r) => r.name === name)?.cells;
  expect(row('server_login_retry')).toEqual(['15 s', '2 s *']);
  expect(row('query_wait_timeout')).toEqual(['120 s', '120 s']);
  expect(row('default_pool_size')).toBeUndefined(); // pool area, same on both: not shown
  expect(row('client_tls_sslmode')).toBeUndefined(); // auth area, same on both
  const proxy = s?.tables[0];
  expect(proxy?.rows.find((r) => r.name === 'InitQuery')?.cells).toEqual([`${HOSTILE_QUERY} *`]);
  expect(proxy?.rows.find((r) => r.name === 'IdleClientTimeout')?.cells).toEqual(['1800 s']);
  // THEN the variants: same kind, different poolers
  expect(s?.differences).toEqual([
    'bouncer-default-transaction vs bouncer-fast-retry-transaction: server_login_retry 15 s (default) vs 2 s (lab)',
  ]);
});

test('escaped in both renderers: a lab value cannot become markup or a Markdown table cell', () => {
  const md = settingsMarkdown({ plan: { targets: TARGETS } as unknown as RunPlan }).join('\n');
  expect(md).toContain('## Settings');
  expect(md).toContain(
    "| InitQuery | SET application_name = '&lt;script&gt;alert(1)&lt;/script&gt;\\|\\`x\\`' * |",
  );
  expect(md).not.toContain('<script>');
  const page = settingsHtml({ plan: { targets: TARGETS } as unknown as RunPlan }).value;
  expect(page).toContain('<section id="settings"><h2>Settings</h2>');
  expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  expect(page).not.toContain('<script>');
  expect(page).toContain(
    '<li>bouncer-default-transaction vs bouncer-fast-retry-transaction: server_login_retry 15 s (default) vs 2 s (lab)</li>',
  );
});

test('the section is in report.html and summary.md, after the findings; none without recorded settings', () => {
  const run = loadRun(join(FIXTURES, 'synthetic-repeated'));
  const model = buildModel(withPlan(run), () => null);
  const page = renderHtml(model, { lookup: () => null, generatedAt: new Date('2026-01-06T00:00:00Z') });
  expect(page.indexOf('id="settings"')).toBeGreaterThan(page.indexOf('id="findings"'));
  const md = renderMarkdown(model, () => null);
  expect(md.indexOf('## Settings')).toBeGreaterThan(md.indexOf('## Findings: published, then measured'));
  // a plan of an older release, and no plan at all: no section
  const old = TARGETS.map((t) => ({
    ...t,
    settings: { maxPreparedStatements: t.settings.maxPreparedStatements },
  }));
  expect(settingsSection(withPlan(run, old))).toBeNull();
  expect(settingsMarkdown({ plan: null })).toEqual([]);
  expect(
    renderMarkdown(
      buildModel(run, () => null),
      () => null,
    ),
  ).not.toContain('## Settings');
});
