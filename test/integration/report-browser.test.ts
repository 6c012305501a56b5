/**
 * The report in a real browser: a REAL run directory from the `smoke` suite (`proxylab local`
 * against a throwaway PostgreSQL + PgBouncer), rendered by `proxylab report`, opened from a
 * file:// URL in Debian's Chromium (headless, fresh profile). The page must load with no console
 * errors and no network request but itself, show its charts with plotted data, and not be blank.
 *
 * The screenshots are kept at <tmpdir>/proxylab-report-browser*.png for a human look.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { buildModel } from '../../lib/report/shape';
import { loadRun } from '../../lib/report/load';
import { findChromium } from '../../scripts/preflight';

/**
 * The part of a DOM element the page functions below use. The project compiles without the DOM
 * lib (it is node code), so playwright's element types do not resolve here.
 */
interface PageElement {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): { readonly length: number };
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { readonly width: number };
}

const REPO_ROOT = resolve(__dirname, '..', '..');
const CLI = join(REPO_ROOT, 'scripts', 'proxylab.js');
// scripts/preflight.ts (run by npm test) makes sure there is one, or stops before jest.
const CHROMIUM = findChromium();
function fail(message: string): never {
  throw new Error(message);
}
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const VIEWPORT = { width: 1280, height: 1000 };

function cli(args: readonly string[]): string {
  return execFileSync(process.execPath, [CLI, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 240_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Share of pixels that are not (near) white, and how many distinct colours, decoded by the browser itself. */
async function inkOf(page: Page, png: Buffer): Promise<{ inked: number; colours: number }> {
  return page.evaluate(async (b64: string) => {
    // Runs in the page; the project compiles without the DOM lib, so name the few browser APIs used.
    interface Img {
      src: string;
      width: number;
      height: number;
      decode(): Promise<void>;
    }
    interface Ctx {
      drawImage(img: Img, x: number, y: number): void;
      getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
    }
    interface Canvas {
      width: number;
      height: number;
      getContext(kind: '2d'): Ctx | null;
    }
    const browser = globalThis as unknown as {
      Image: new () => Img;
      document: { createElement(tag: 'canvas'): Canvas };
    };
    const img = new browser.Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const canvas = browser.document.createElement('canvas');
    canvas.width = img.width;
    canvas.height = img.height;
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2d context');
    ctx.drawImage(img, 0, 0);
    const { data } = ctx.getImageData(0, 0, img.width, img.height);
    let inked = 0;
    const colours = new Set<number>();
    for (let i = 0; i < data.length; i += 4) {
      const r = data[i]!;
      const g = data[i + 1]!;
      const b = data[i + 2]!;
      if (255 * 3 - (r + g + b) > 60) inked++;
      colours.add((r << 16) | (g << 8) | b);
    }
    return { inked: inked / (data.length / 4), colours: colours.size };
  }, png.toString('base64'));
}

describe('report.html from a real smoke run, in headless Chromium', () => {
  let work: string;
  let runDir: string;
  let reportPath: string;
  let localOutput: string;
  let reportOutput: string;
  let context: BrowserContext;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'report-browser-'));
    // GIVEN a real run directory made by the smoke suite through the real CLI
    localOutput = cli([
      'local',
      '--suite',
      'smoke',
      '--out',
      join(work, 'runs'),
      '--run-id',
      'smoke-browser',
      '--no-install',
    ]);
    runDir = join(work, 'runs', 'smoke-browser');
    // WHEN the report is written by `proxylab report` into its own directory
    reportOutput = cli(['report', runDir, '--out', join(work, 'report')]);
    reportPath = join(work, 'report', 'report.html');
    context = await chromium.launchPersistentContext(join(work, 'profile'), {
      executablePath: CHROMIUM ?? fail('Chromium not found: set PROXYLAB_CHROMIUM (npm test checks first)'),
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: VIEWPORT,
    });
  }, 300_000);

  afterAll(async () => {
    await context?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('proxylab local wrote the report at the end of the run, proxylab report printed its paths', () => {
    expect(localOutput).toContain(`Report: ${join(runDir, 'report.html')}`);
    expect(existsSync(join(runDir, 'report.html'))).toBe(true);
    expect(reportOutput).toMatch(
      new RegExp(
        `^Report: ${reportPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ KiB, \\d+ ms\\)$`,
        'm',
      ),
    );
    expect(readFileSync(join(work, 'report', 'summary.md'), 'utf8')).toMatch(
      /^# proxylab smoke — run smoke-browser/,
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
    const shot = await page.screenshot({ path: join(tmpdir(), 'proxylab-report-browser.png') });
    await page.screenshot({ path: join(tmpdir(), 'proxylab-report-browser-full.png'), fullPage: true });
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
