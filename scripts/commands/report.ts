/**
 * `proxylab report RUN_DIR`: run directory → report.html (self-contained: charts as inline SVG,
 * no network) + summary.md. Thin: the work is lib/report.
 */
import type { Command } from 'commander';
import { checkOutDir } from '../../lib/core/out-dir';
import { forTerminalLine } from '../../lib/core/terminal-text';
import { reportModule } from './lazy';

interface ReportFlags {
  readonly out?: string;
}

export function register(program: Command): void {
  program
    .command('report')
    .argument('<runDir>', 'a run directory (runs/<runId>) written by `proxylab local` or `proxylab fetch`')
    .description(
      'Write report.html (one self-contained file: TPS and latency vs clients per target, error matrix with ' +
        'sample lines, churn with/without -C, metrics over time with step boundaries, warnings, which published ' +
        'findings the run reproduced) and summary.md (Markdown for pull requests and chat). Works on partial runs; a step or metrics file that cannot be read is skipped, named, and the report says PARTIAL.\n\n' +
        'Exit codes: 0 written, 1 report.html or summary.md could not be written (a read-only directory: give --out DIR; ' +
        'a full disk), 2 not a run directory.',
    )
    .option('--out <dir>', 'directory for report.html and summary.md (default: the run directory)')
    .action((runDir: string, flags: ReportFlags) => {
      if (flags.out !== undefined) checkOutDir(flags.out);
      const r = reportModule().writeReport(runDir, { outDir: flags.out });
      process.stdout.write(
        `Report: ${r.htmlPath} (${(r.bytes / 1024).toFixed(0)} KiB, ${Math.round(r.ms)} ms)\n`,
      );
      process.stdout.write(`Summary: ${r.mdPath}\n`);
      if (r.downtimePaths.length > 0) process.stdout.write(`Downtime: ${r.downtimePaths.join(', ')}\n`);
      // Warnings quote the run directory's contents: control characters are shown, not obeyed.
      for (const w of r.warnings) process.stdout.write(`warning: ${forTerminalLine(w.message)}\n`);
    });
}
