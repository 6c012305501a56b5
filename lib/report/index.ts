/**
 * Public API of the report: `writeReport` (run dir → report.html + summary.md), `writeComparison`
 * (two run dirs → compare.html + compare.md). `proxylab local` / `fetch` call writeReport at the
 * end of a run; the CLI commands are thin wrappers.
 */
import { mkdirSync } from 'node:fs';
import { writeFileAtomic } from '../core/atomic-write';
import { join, resolve } from 'node:path';
import { catalogLookup, runLookup } from './catalog-lookup';
import { downtimeFiles } from './downtime';
import { loadRun } from './load';
import { forTerminal } from '../core/terminal-text';
import { renderReportHtml } from './render-html';
import { renderMarkdown } from './render-md';
import { buildModel, type ReportWarning, type ScenarioLookup } from './shape';

export { loadRun } from './load';
export type { LoadedRun } from './load';
export { buildModel } from './shape';
export { writeComparison } from './compare';
export type { ComparisonResult } from './compare';

export interface ReportOptions {
  /** Directory for report.html and summary.md. @default the run directory */
  readonly outDir?: string;
  /** Scenario → published experiment. @default the run's plan, then the suite catalog */
  readonly lookup?: ScenarioLookup;
  /** "Generated at" time. @default now */
  readonly now?: Date;
}

export interface ReportResult {
  readonly htmlPath: string;
  readonly mdPath: string;
  /** downtime.md and downtime.csv, when the run disrupted anything (./downtime.ts); else empty. */
  readonly downtimePaths: readonly string[];
  /** Size of report.html. */
  readonly bytes: number;
  /** Wall time to load, shape, render and write both files. */
  readonly ms: number;
  readonly warnings: readonly ReportWarning[];
}

export function writeReport(runDir: string, opts: ReportOptions = {}): ReportResult {
  const t0 = performance.now();
  const run = loadRun(runDir);
  const lookup = opts.lookup ?? runLookup(run.plan, catalogLookup());
  const shaped = buildModel(run, lookup);
  const { page, chartWarnings } = renderReportHtml(shaped, { lookup, generatedAt: opts.now ?? new Date() });
  const model = { ...shaped, warnings: [...shaped.warnings, ...chartWarnings] };
  // Data fields are not terminal commands: `cat summary.md` must not retitle the terminal, so
  // control characters (ESC, OSC, C0/C1) are shown as \xNN (our own text has none but \n and \t).
  const md = forTerminal(renderMarkdown(model, lookup));
  const outDir = resolve(opts.outDir ?? run.dir);
  mkdirSync(outDir, { recursive: true });
  const htmlPath = join(outDir, 'report.html');
  const mdPath = join(outDir, 'summary.md');
  // Atomic and symlink-safe: a full disk keeps the old report, a planted link's target is untouched.
  writeFileAtomic(htmlPath, page);
  writeFileAtomic(mdPath, md);
  // The change-board downtime table beside summary.md (./downtime.ts), as shown in a terminal too.
  const downtimePaths = downtimeFiles(run).map(([name, text]) => {
    writeFileAtomic(join(outDir, name), forTerminal(text));
    return join(outDir, name);
  });
  return {
    htmlPath,
    mdPath,
    downtimePaths,
    bytes: Buffer.byteLength(page),
    ms: performance.now() - t0,
    warnings: model.warnings,
  };
}
