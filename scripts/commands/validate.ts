/**
 * `proxylab validate FILE...`: checks lab files before any AWS call. Prints `FILE: ok` and a
 * one-line summary per valid file, or every problem (path: message) of every invalid one.
 * Exit 0 when all are valid, 2 otherwise (missing file and invalid JSON included). Instance types
 * the price table lacks are problems too: `cost` and `deploy` refuse them.
 */
import type { Command } from 'commander';
import { UsageError } from '../../lib/core/errors';
import { checkLabFile, formatProblems, summarizeLab } from '../../lib/config';
import { unpricedProblems } from '../../lib/cost/price-check';

interface ValidateFlags {
  readonly json?: boolean;
}

export function register(program: Command): void {
  program
    .command('validate')
    .description(
      'Check lab files (labs/*.json) against the lab format: every problem at once, each with its\n' +
        'JSON path, the value received and what is allowed; an instance type with no price in the\n' +
        'price table is a problem too (cost and deploy refuse it). No AWS call. Exit 0 valid, 2 invalid.',
    )
    .argument('<file...>', 'lab file(s) to check, e.g. labs/default.json')
    .option(
      '--json',
      'print each valid lab as the stack sees it (every default applied, internal LabConfig form, not a lab file) instead of the summary line',
    )
    .action((files: string[], flags: ValidateFlags) => {
      const failures: string[] = [];
      for (const file of files) {
        const result = checkLabFile(file, { extraChecks: unpricedProblems });
        if (result.ok) {
          process.stdout.write(
            flags.json
              ? `${JSON.stringify(result.lab, null, 2)}\n`
              : `${file}: ok\n  ${summarizeLab(result.lab)}\n`,
          );
        } else {
          failures.push(`invalid lab file ${formatProblems(result.problems, file)}`);
        }
      }
      if (failures.length > 0) throw new UsageError(failures.join('\n'));
    });
}
