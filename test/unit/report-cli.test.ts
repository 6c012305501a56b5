/**
 * `proxylab report` and `proxylab compare` as commands (registered on a fresh commander program,
 * on the SYNTHETIC fixtures): what they print and write, and the usage error for a non-run.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { UsageError } from '../../lib/core/errors';
import { afterLocalRun } from '../../lib/report/after-local-run';
import { register as registerCompare } from '../../scripts/commands/compare';
import { register as registerReport } from '../../scripts/commands/report';

const FIXTURES = join(__dirname, '..', 'fixtures', 'runs');

function program(): Command {
  const p = new Command().exitOverride();
  registerReport(p);
  registerCompare(p);
  return p;
}

describe('report and compare commands', () => {
  let out: string;
  let written: string[];
  beforeEach(() => {
    out = mkdtempSync(join(tmpdir(), 'report-cli-'));
    written = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(out, { recursive: true, force: true });
  });

  test('report writes both files into --out and prints their paths and the warnings', async () => {
    // WHEN
    await program().parseAsync(['report', join(FIXTURES, 'synthetic-partial-hostile'), '--out', out], {
      from: 'user',
    });
    // THEN
    const text = written.join('');
    expect(text).toMatch(new RegExp(`^Report: ${join(out, 'report.html')} \\(\\d+ KiB, \\d+ ms\\)$`, 'm'));
    expect(text).toContain(`Summary: ${join(out, 'summary.md')}`);
    expect(text).toMatch(/^warning: Partial run/m);
    expect(existsSync(join(out, 'report.html'))).toBe(true);
  });

  test('compare prints Markdown and writes compare.html / compare.md', async () => {
    await program().parseAsync(
      ['compare', join(FIXTURES, 'synthetic-repeated'), join(FIXTURES, 'synthetic-repeated'), '--out', out],
      { from: 'user' },
    );
    expect(written.join('')).toMatch(/^# proxylab compare\n/);
    expect(existsSync(join(out, 'compare.html'))).toBe(true);
    expect(existsSync(join(out, 'compare.md'))).toBe(true);
  });

  test.each([
    ['report', ['report', FIXTURES]],
    ['compare', ['compare', join(FIXTURES, 'synthetic-repeated'), join(FIXTURES, 'no-such-run')]],
  ])('%s on something that is not a run directory is a usage error (exit 2)', async (_name, argv) => {
    const run = program().parseAsync(argv, { from: 'user' });
    await expect(run).rejects.toBeInstanceOf(UsageError);
    await expect(program().parseAsync(argv, { from: 'user' })).rejects.toMatchObject({ exitCode: 2 });
  });
});

describe('afterLocalRun (the hook proxylab local calls at the end of a run)', () => {
  test('writes the report into the run directory and prints where', async () => {
    // GIVEN a copy of a run directory
    const dir = mkdtempSync(join(tmpdir(), 'report-hook-'));
    try {
      cpSync(join(FIXTURES, 'synthetic-cloud'), dir, { recursive: true });
      const lines: string[] = [];
      // WHEN
      await afterLocalRun({ runDir: dir }, (l) => lines.push(l));
      // THEN
      expect(lines[0]).toMatch(new RegExp(`^Report: ${join(dir, 'report.html')} \\(\\d+ KiB, \\d+ ms\\)$`));
      expect(lines[1]).toBe(`Summary: ${join(dir, 'summary.md')}`);
      expect(existsSync(join(dir, 'summary.md'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a report that cannot be written does not fail the run: it says why and how to retry', async () => {
    const lines: string[] = [];
    await afterLocalRun({ runDir: FIXTURES }, (l) => lines.push(l));
    expect(lines).toEqual([
      `Report not written: ${FIXTURES}: no manifest.json — not a run directory (run \`proxylab report ${FIXTURES}\` to retry)`,
    ]);
  });
});
