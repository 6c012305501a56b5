/**
 * `proxylab validate FILE...`: checks lab files before any AWS call. Prints `FILE: ok` and a
 * one-line summary per valid file, or every problem (path: message) of every invalid one.
 * Exit 0 when all are valid, 2 otherwise (missing file and invalid JSON included). Instance types
 * the price table lacks are problems too: `cost` and `deploy` refuse them. Under the summary, one
 * line per own scenario whose scripts use session features (lib/suite/script-features.ts).
 */
import type { Command } from 'commander';
import { UsageError } from '../../lib/core/errors';
import type { LabConfig } from '../../lib/config';
import { labWarnings } from '../../lib/config/warnings';
import { configModule, priceCheckModule, pricesModule, runPlanModule, scenariosModule } from './lazy';

interface ValidateFlags {
  readonly json?: boolean;
}

export function register(program: Command): void {
  program
    .command('validate')
    .description(
      // One paragraph per string: commander wraps it to the terminal's width (a `\n` inside would
      // break a wrapped line mid-sentence).
      'Check lab files (labs/*.json) against the lab format: every problem at once, each with its ' +
        'JSON path, the value received and what is allowed; an instance type with no price in the ' +
        'price table is a problem too (cost and deploy refuse it), and so is a script file a scenario ' +
        'names that cannot be read or that runs shell commands (\\shell, \\setshell). A valid lab is then ' +
        'planned with its `suites`: a warning names each target none of them measures (and why), each ' +
        'billed part (reader, proxy, pooler host) no step touches, and a suite that would outlive the lab. ' +
        "Each own scenario's scripts are read for the session features they use (session SET, advisory " +
        'locks, PREPARE, LISTEN, temporary tables, WITH HOLD cursors, DISCARD): one line per scenario. ' +
        "Prices come from the AWS Price List for the lab's region (pricing:GetProducts, cached per region and date), " +
        'else its cache, else for us-east-1 the committed table: a region without any is a problem, saying why.\n\n' +
        'Exit codes: 0 valid, 2 invalid.',
    )
    .argument('<file...>', 'lab file(s) to check, e.g. labs/default.json')
    .option(
      '--json',
      'print the valid labs as the stack sees them (every default applied, internal LabConfig form, not a lab file) ' +
        'instead of the summary lines: one file gives the lab object, several give one object keyed by file name',
    )
    .action(async (files: string[], flags: ValidateFlags) => {
      const failures: string[] = [];
      const labs: Record<string, LabConfig> = {};
      for (const file of files) {
        // The lab's region priced first, as cost and deploy price it (pricesFor): its reason, if
        // any, is the region problem below. A file that cannot be read is left to checkLabFile.
        let region: string | null = null;
        configModule().checkLabFile(file, {
          extraChecks: (raw) => {
            region = priceCheckModule().labRegionOf(raw);
            return [];
          },
        });
        const prices = region !== null ? await pricesModule().preparePrices(region) : null;
        const table = prices?.ok ? prices.table : null;
        const result = configModule().checkLabFile(file, {
          extraChecks: (raw) => priceCheckModule().unpricedProblems(raw, table),
        });
        if (result.ok) {
          if (flags.json) labs[file] = result.lab;
          else {
            process.stdout.write(`${file}: ok\n  ${configModule().summarizeLab(result.lab)}\n`);
            if (prices?.ok) process.stdout.write(`  ${pricesModule().pricesLine(prices)}\n`);
            // What each own scenario's scripts keep in the session (nothing when none does).
            const own = scenariosModule().labSuite(result.lab).scenarios;
            for (const line of runPlanModule().sessionFeaturesOf(own)) process.stdout.write(`  ${line}\n`);
          }
          // Warnings never fail validation; with --json they go to stderr, keeping stdout one document.
          const out = flags.json ? process.stderr : process.stdout;
          for (const w of runPlanModule().labSuiteWarnings(result.lab, result.lab.suites, { table }))
            out.write(`  warning: ${flags.json ? `${file}: ` : ''}${w.message}\n`);
          // Warnings never make a lab invalid; with --json stdout stays one JSON document.
          for (const w of labWarnings(result.lab))
            process.stderr.write(`${file}: warning [${w.id}] ${w.path}: ${w.message}\n`);
        } else {
          failures.push(`invalid lab file ${configModule().formatProblems(result.problems, file)}`);
        }
      }
      // One JSON document on stdout, whatever the number of files (problems go to stderr).
      if (flags.json) {
        const valid = Object.values(labs);
        const doc = files.length === 1 ? (valid[0] ?? null) : labs;
        if (doc !== null) process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
      }
      if (failures.length > 0) throw new UsageError(failures.join('\n'));
    });
}
