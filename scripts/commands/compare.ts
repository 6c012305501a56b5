/**
 * `proxylab compare A B`: two run directories side by side. Thin: the work is lib/report/compare.
 */
import type { Command } from 'commander';
import { checkOutDir } from '../../lib/core/out-dir';
import { forTerminal } from '../../lib/core/terminal-text';
import { reportModule } from './lazy';

interface CompareFlags {
  readonly out?: string;
}

export function register(program: Command): void {
  program
    .command('compare')
    .argument('<runA>', 'the baseline run directory')
    .argument('<runB>', 'the run directory to compare with it')
    .description(
      "Compare two runs: first what differs between their lab files (each run's lab.json, field by field: " +
        'poolers[0].poolPercent: 45 → 80), or that a run kept none; then cell by cell ' +
        '(scenario × target × clients × protocol × connect): median tps of each, ' +
        'the ratio B/A, and a ⚠ marker where the difference exceeds the spread between repetitions (without ' +
        'repetitions the spread is unknown and the difference is not judged). Cells found in only one run are listed. ' +
        'Prints Markdown on stdout and writes compare.md and compare.html.\n\n' +
        'Exit codes: 0 written, 1 compare.html or compare.md could not be written (a read-only directory: give --out DIR; ' +
        'a full disk), 2 not a run directory.',
    )
    .option('--out <dir>', 'directory for compare.html and compare.md (default: the directory of runB)')
    .action((runA: string, runB: string, flags: CompareFlags) => {
      if (flags.out !== undefined) checkOutDir(flags.out);
      const r = reportModule().writeComparison(runA, runB, { outDir: flags.out });
      // The Markdown quotes both run directories (run ids, suites, error samples): on a terminal,
      // control characters are shown, not obeyed.
      process.stdout.write(forTerminal(r.markdown) + '\n');
      process.stderr.write(`Comparison: ${r.htmlPath}\n           ${r.mdPath}\n`);
    });
}
