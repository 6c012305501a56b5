/**
 * Text from a run is data in every output (issue 38, item 3): Markdown link and image syntax in an
 * error sample does not render in summary.md; control characters (ESC, BEL, C1) and bidirectional
 * formatting characters (the marks U+200E, U+200F, U+061C, the overrides and isolates) are shown
 * as `\xNN` / `\uNNNN` on the terminal, in summary.md, compare.md, and report.html — its escaped
 * text and the chart SVGs inlined in it alike.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { forTerminal, forTerminalLine } from '../../lib/core/terminal-text';
import { writeComparison, writeReport } from '../../lib/report';
import { escapeHtml, trustedSvg } from '../../lib/report/html';
import { mdText } from '../../lib/report/md';
import { makeManifest, makeStep, writeRunDir } from '../fixtures/runs/synthetic';
import { scratchDir } from '../helpers/scratch';

const NOW = new Date('2026-01-06T00:00:00.000Z');

/** Every character that must never reach an output raw. */
const BIDI = [
  '\u200e',
  '\u200f',
  '\u061c',
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
];
const CONTROLS = ['\x1b', '\x07', '\x00', '\x0d', '\x7f', '\u0085', '\u009b'];
// eslint-disable-next-line no-control-regex -- finding raw control characters is the point
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

const LINK = '[click here](https://evil.example/login)';
const IMAGE = '![pixel](https://evil.example/track.png)';
const SAMPLE = `FATAL:  terminating connection ${IMAGE} ${LINK} \x1b]0;owned\x07 \u009b31m`;
const SCENARIO = `smoke\u202eevil\u200e\u200f\u061c\u2066x\u2069`;
const TARGET = `pgbouncer-transaction\x1b[2J\u202e`;

function hostileRun(): string {
  const runId = 'injected';
  const steps = [
    makeStep(runId, {
      scenario: SCENARIO,
      target: 'pgbouncer-transaction',
      targetName: TARGET,
      clients: 5,
      tps: 1200,
      p50: 0.3,
      p95: 6,
      errors: [{ class: 'other', count: 3, sample: SAMPLE }],
      verdict: { expected: 'succeeds', observed: `errors: other ×3 ${LINK}`, held: false },
      startSec: 5,
    }),
    makeStep(runId, {
      scenario: SCENARIO,
      target: 'direct',
      clients: 5,
      tps: 5000,
      p50: 0.2,
      p95: 1.5,
      startSec: 20,
    }),
    // a second client count, so the scenario gets its charts (their legends name the targets)
    makeStep(runId, {
      scenario: SCENARIO,
      target: 'pgbouncer-transaction',
      targetName: TARGET,
      clients: 20,
      tps: 1100,
      p50: 0.4,
      p95: 7,
      startSec: 30,
    }),
    makeStep(runId, {
      scenario: SCENARIO,
      target: 'direct',
      clients: 20,
      tps: 4000,
      p50: 0.3,
      p95: 2,
      startSec: 35,
    }),
    // a step the infrastructure failed under: its note quotes the error sample, and reaches summary.md
    {
      ...makeStep(runId, { scenario: SCENARIO, target: 'direct', clients: 10, tps: null, startSec: 40 }),
      status: 'infrastructure-error' as const,
      note: `PostgreSQL sent "${SAMPLE}"`,
    },
  ];
  const dir = writeRunDir(path.join(scratchDir('proxylab-injected-'), runId), {
    manifest: makeManifest(runId, {
      status: 'failed',
      error: `step failed: ${SAMPLE}`,
      stepIds: steps.map((s) => s.stepId),
      stepsCompleted: steps.length,
    }),
    steps,
    metrics: {},
  });
  return dir;
}

describe('the shared neutralisation', () => {
  test.each(
    [...BIDI, ...CONTROLS].map((ch) => [`U+${ch.codePointAt(0)?.toString(16).padStart(4, '0')}`, ch]),
  )('%s is shown visibly by forTerminal, escapeHtml and trustedSvg', (_name, ch) => {
    // GIVEN text with the character WHEN shown THEN it is never raw
    expect(forTerminal(`a${ch}b`)).not.toMatch(RAW);
    expect(forTerminalLine(`a${ch}b`)).not.toMatch(RAW);
    expect(escapeHtml(`a${ch}b`)).not.toMatch(RAW);
    expect(trustedSvg(`<svg><text>a${ch}b</text></svg>`).value).not.toMatch(RAW);
  });

  test.each([
    ['U+202E', '\u202e', '\\u202e'],
    ['U+200E', '\u200e', '\\u200e'],
    ['U+061C', '\u061c', '\\u061c'],
    ['ESC', '\x1b', '\\x1b'],
    ['CSI (C1)', '\u009b', '\\x9b'],
  ])('%s is written as %s, the same on the terminal and in HTML', (_name, ch, shown) => {
    expect(forTerminal(`a${ch}b`)).toBe(`a${shown}b`);
    expect(escapeHtml(`a${ch}b`)).toBe(`a${shown}b`);
  });

  test('tab and newline stay what they are', () => {
    expect(forTerminal('a\tb\nc')).toBe('a\tb\nc');
    expect(escapeHtml('a\tb\nc')).toBe('a\tb\nc');
  });

  test.each([
    [LINK, '\\[click here\\](https://evil.example/login)'],
    [IMAGE, '!\\[pixel\\](https://evil.example/track.png)'],
    ['[ref]: https://evil.example', '\\[ref\\]: https://evil.example'],
    ['<https://evil.example>', '&lt;https://evil.example&gt;'],
    ['`code` a|b \\', '\\`code\\` a\\|b \\\\'],
  ])('mdText(%j) is %j: no link, image, reference, autolink or code span opens', (input, expected) => {
    expect(mdText(input)).toBe(expected);
  });
});

describe('a run full of injected text, through writeReport and writeComparison', () => {
  const dir = hostileRun();
  const out = scratchDir('proxylab-injected-out-');
  writeReport(dir, { outDir: out, now: NOW });
  const md = fs.readFileSync(path.join(out, 'summary.md'), 'utf8');
  const page = fs.readFileSync(path.join(out, 'report.html'), 'utf8');
  const cmpOut = scratchDir('proxylab-injected-cmp-');
  const cmp = writeComparison(dir, dir, { outDir: cmpOut });
  const cmpMd = fs.readFileSync(cmp.mdPath, 'utf8');
  const cmpHtml = fs.readFileSync(cmp.htmlPath, 'utf8');

  test('summary.md: the error sample is there, as text — no live link or image', () => {
    // THEN the sample reached the file (a warning quotes it) ...
    expect(md).toContain('terminating connection');
    // ... with its brackets escaped: no `[text](url)` or `![alt](src)` left to render
    expect(md).not.toMatch(/(?<!\\)\[[^\]\n]*(?<!\\)\]\(https:\/\/evil/);
    expect(md).toContain('!\\[pixel\\](https://evil.example/track.png)');
    expect(md).toContain('\\[click here\\](https://evil.example/login)');
  });

  test.each([
    ['summary.md', () => md],
    ['report.html', () => page],
    ['compare.md', () => cmpMd],
    ['compare.html', () => cmpHtml],
  ])('%s holds no raw control or bidi character, and shows them visibly', (_file, text) => {
    expect(text()).not.toMatch(RAW);
    expect(text()).toContain('\\u202e');
    expect(text()).toContain('\\x1b');
  });

  test('report.html: the chart SVGs show the target name as the tables do', () => {
    // GIVEN the tps chart's legend names the target (echarts draws it into the SVG)
    const svgs = page.match(/<svg[\s\S]*?<\/svg>/g) ?? [];
    expect(svgs.length).toBeGreaterThan(0);
    // THEN its control and override characters are visible there too
    expect(svgs.join('')).toContain('pgbouncer-transaction\\x1b[2J\\u202e');
  });
});
