/**
 * Rendering: escaping (hostile strings in scenario names, targets, step ids, error samples,
 * metric names and reasons), self-containment, the chart options' data, and the Markdown summary.
 * Inputs are the SYNTHETIC fixtures in test/fixtures/runs.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { groupCells } from '../../lib/report/cells';
import { churnOption, latencyOption, metricOption, renderSvg, tpsOption } from '../../lib/report/charts';
import { escapeHtml, html, SafeHtml, trustedSvg } from '../../lib/report/html';
import { writeReport } from '../../lib/report';
import { loadRun } from '../../lib/report/load';
import { renderHtml } from '../../lib/report/render-html';
import { mdText, renderMarkdown } from '../../lib/report/render-md';
import { buildModel, churnRows, metricPanels, scenarioPanels, chartSteps } from '../../lib/report/shape';
import { HOSTILE } from '../fixtures/runs/synthetic';

const FIXTURES = join(__dirname, '..', 'fixtures', 'runs');
const NOW = new Date('2026-01-06T00:00:00.000Z');

describe('escapeHtml and the html template', () => {
  test.each([
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['"onerror=alert(1)', '&quot;onerror=alert(1)'],
    ["' onmouseover='x'", '&#39; onmouseover=&#39;x&#39;'],
    ['</svg>&amp;', '&lt;/svg&gt;&amp;amp;'],
    ['`tick`', '&#96;tick&#96;'],
    ['plain 42 ×', 'plain 42 ×'],
  ])('%s', (input, expected) => {
    expect(escapeHtml(input)).toBe(expected);
  });

  test('interpolations are escaped, SafeHtml and arrays of it are not, null/false vanish', () => {
    // GIVEN
    const inner = html`<b>${'<i>'}</b>`;
    // WHEN
    const out = html`<p title="${'"x'}">${inner}${['<a>', html`<br>`]}${null}${false}${3}</p>`;
    // THEN
    expect(out.value).toBe('<p title="&quot;x"><b>&lt;i&gt;</b>&lt;a&gt;<br>3</p>');
  });

  test('trustedSvg accepts only an svg element', () => {
    expect(trustedSvg('<svg></svg>')).toBeInstanceOf(SafeHtml);
    expect(() => trustedSvg('<script></script>')).toThrow(/expected an <svg>/);
  });
});

describe('hostile strings never become markup', () => {
  const run = loadRun(join(FIXTURES, 'synthetic-partial-hostile'));
  const model = buildModel(run, () => null);
  const page = renderHtml(model, { lookup: () => null, generatedAt: NOW });
  const md = renderMarkdown(model, () => null);

  test.each(Object.entries(HOSTILE))('%s is escaped in report.html', (_name, hostile) => {
    // THEN the raw string is absent, its escaped form is present
    expect(page).not.toContain(hostile);
    expect(page).toContain(escapeHtml(hostile));
  });

  test('no injected element or handler survives anywhere in the page', () => {
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/<img/i);
    expect(page).not.toMatch(/<iframe/i);
    // no event-handler attribute inside any tag (the handler text may appear, escaped, as text)
    expect(page).not.toMatch(/<[a-z][^<>]*\son[a-z]+\s*=/i);
    // the hostile metric name tried to close the inline <style>: only our own styles remain
    expect(page.match(/<\/style>/g)?.length).toBe((page.match(/<style/g) ?? []).length);
  });

  test('the error sample is there for the reader, escaped, in the hover title and the details', () => {
    const escaped = escapeHtml(`other ×3: ${HOSTILE.sample}`);
    expect(page).toContain(`title="expected: succeeds\nobserved: errors: other ×3\n${escaped}"`);
    expect(page).toContain(`<code>${escapeHtml(`other: ${HOSTILE.sample}`)}</code>`);
  });

  test('summary.md escapes markup and table pipes too', () => {
    expect(md).not.toMatch(/<script/i);
    expect(md).not.toMatch(/<img/i);
    expect(md).toContain('evil&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mdText('a|b\nc<d>')).toBe('a\\|b c&lt;d&gt;');
  });
});

describe('report.html is self-contained', () => {
  const model = buildModel(loadRun(join(FIXTURES, 'synthetic-repeated')), () => null);
  const page = renderHtml(model, { lookup: () => null, generatedAt: NOW });

  test('nothing that could fetch: no scripts, no src, only in-page links, CSP default-src none', () => {
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/\ssrc=/i);
    expect(page).not.toMatch(/<link/i);
    expect(page).not.toMatch(/@import|url\((?!#)/i);
    const hrefs = [...page.matchAll(/\shref="([^"]*)"/g)].map((m) => m[1]);
    expect(hrefs.length).toBeGreaterThan(0);
    expect(hrefs.every((h) => h!.startsWith('#'))).toBe(true);
    expect(page).toContain(`content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`);
  });

  test('one inline SVG per chart figure, with unique element ids across charts', () => {
    const figures = page.match(/<figure class="chart"/g) ?? [];
    const svgs = page.match(/<svg /g) ?? [];
    // quick-e1 over 20 and 60 clients (tps + latency, every target and mode a series); quick-e3 ran
    // one client count (no chart of single points) + 1 churn + the metric panels with data
    expect(figures.length).toBe(2 + 1 + 3);
    expect(page).toMatch(
      /data-chart="single-point">simple · persistent connections, new connection per transaction \(-C\): one client count \(10\), so no chart over client counts/,
    );
    expect(svgs.length).toBe(figures.length);
    const ids = [...page.matchAll(/\sid="(zr[^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('a metric with no data is a labelled box, not a chart at zero', () => {
    expect(page).toContain('data-metric="poll"');
    expect(page).toMatch(
      /<strong>poll<\/strong>: no data<ul><li>pg_stat_database · Sum: no data \(3 of 120 polls failed: connection refused\)/,
    );
    expect(page).toContain('bench_session / session · Sum: no data (pool never used in the window)');
  });

  test('warnings come before everything else', () => {
    expect(page.indexOf('data-warning="load-generator-saturated"')).toBeLessThan(
      page.indexOf('id="headline"'),
    );
  });
});

describe('chart options carry the right points', () => {
  const run = loadRun(join(FIXTURES, 'synthetic-repeated'));
  const cells = groupCells(run.steps);
  const [simple] = scenarioPanels(cells);

  test('tps: one chart for the scenario, a median line per target and mode, refused cell null (a gap), band = worst + (best − worst)', () => {
    // WHEN
    const option = tpsOption(simple!, 't');
    const series = option.series as Array<{ name: string; data: unknown[]; stack?: string }>;
    // THEN
    const direct = series.find((s) => s.name === 'direct · simple')!;
    expect(direct.data[0]).toEqual(expect.objectContaining({ value: 10000, symbol: 'circle' }));
    expect(direct.data[1]).toBeNull();
    const worst = series.find((s) => s.name === 'pgbouncer-transaction · simple worst')!;
    const width = series.find((s) => s.name === 'pgbouncer-transaction · simple best')!;
    expect(worst.stack).toBe(width.stack);
    expect(worst.data[0]).toBeCloseTo(8100);
    expect(width.data[0]).toBeCloseTo(1800);
    expect((option.legend as { data: string[] }).data).toEqual([
      'direct · simple',
      'pgbouncer-transaction · simple',
      'direct · prepared',
      'pgbouncer-transaction · prepared',
    ]);
    expect((option.xAxis as { data: string[] }).data).toEqual(['20', '60']);
  });

  test('latency: p95 and p50 per target and mode', () => {
    const names = (latencyOption(simple!, 't').series as Array<{ name: string }>).map((s) => s.name);
    expect(names).toEqual([
      'direct · simple p95',
      'pgbouncer-transaction · simple p95',
      'direct · prepared p95',
      'pgbouncer-transaction · prepared p95',
      'direct · simple p50',
      'pgbouncer-transaction · simple p50',
      'direct · prepared p50',
      'pgbouncer-transaction · prepared p50',
    ]);
  });

  test('churn bars: reusing connections vs -C, medians per target', () => {
    const option = churnOption(churnRows(cells), 't');
    const series = option.series as Array<{ name: string; data: Array<number | null> }>;
    expect(series.map((s) => s.name)).toEqual(['reusing connections', 'new connection per transaction (-C)']);
    expect(series[0]!.data).toEqual([17000, 9800]);
    expect(series[1]!.data).toEqual([200, 1650]);
  });

  test('metric over time: every step is a shaded, numbered window', () => {
    const panel = metricPanels('local', run.metrics)[0]!;
    const windows = chartSteps(run.steps);
    const option = metricOption(panel, windows);
    const first = (
      option.series as Array<{ markArea?: { data: unknown[] }; markLine?: { data: unknown[] } }>
    )[0]!;
    expect(first.markArea!.data).toHaveLength(run.steps.length);
    expect(first.markLine!.data).toHaveLength(run.steps.length);
  });

  test('rendered SVG draws the series inside the plot area', () => {
    const svg = renderSvg(tpsOption(simple!, 't'), { width: 400, height: 300 });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toMatch(/<g clip-path="url\(#zr\d+-c\d+\)">\s*<path d="M/);
  });
});

describe('writeReport', () => {
  test('writes report.html and summary.md, quickly and small', () => {
    const out = mkdtempSync(join(tmpdir(), 'report-write-'));
    try {
      // WHEN
      const r = writeReport(join(FIXTURES, 'synthetic-repeated'), { outDir: out, now: NOW });
      // THEN
      expect(r.htmlPath).toBe(join(out, 'report.html'));
      expect(readFileSync(r.htmlPath, 'utf8').length).toBeGreaterThan(10_000);
      expect(r.bytes).toBeLessThan(1_000_000);
      const md = readFileSync(r.mdPath, 'utf8');
      expect(md).toMatch(/^# proxylab quick — run synthetic-repeated/);
      expect(md).toContain('| E1 | quick-e1 |');
      expect(md).toContain('**Findings**: ✓ as the experiment predicts: E1 (quick-e1), E3 (quick-e3)');
      expect(readFileSync(r.htmlPath, 'utf8')).toContain(
        '<p class="findings-line" id="findings-line"><span class="badge s-reproduced">✓ as the experiment predicts</span> E1 (quick-e1), E3 (quick-e3)</p>',
      );
      // the refused cell: unknown tps, the error class, the verdict that held
      expect(md).toMatch(
        /\| direct \| 60 \| simple \| persistent \| \? \| \? \| too-many-connections ×3 \| ✓ as the experiment predicts: refused: too-many-connections \|/,
      );
      // repeated cells show best / worst
      expect(md).toContain('9,000.0 (best 9,900.0 / worst 8,100.0, n=3)');
      expect(md).toContain('⚠ Load generator saturated in 1 step(s)');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
