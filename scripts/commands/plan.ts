/**
 * `proxylab plan --lab FILE [--suite NAME]`: what a run of the suite on this lab would do, from the
 * lab file alone (no AWS call): steps per scenario and target, every target left out and why, the
 * duration against the lab's ttlHours (and what `--extend` would cost), the run's cost, each proxy's
 * and pooler's effective settings with what differs between variants of one product
 * (lib/cost/plan-settings.ts; `--settings all` for every one), and the warnings `validate` and `run`
 * print. `run --dry-run` prints the same plan.
 */
import type { Command } from 'commander';
import { UsageError } from '../../lib/core/errors';
import { loadModule, pricesModule, runPlanModule, scenariosModule } from './lazy';
import { DEFAULT_PRICE_REGION } from '../../lib/cost/price-table';

interface PlanFlags {
  readonly lab: string;
  readonly suite?: string;
  readonly json?: boolean;
  readonly settings?: string;
}

export function register(program: Command): void {
  program
    .command('plan')
    .description(
      "Preview a run without AWS: the suite expanded against the lab's targets (the steps a run plans), " +
        "steps per target with the reason for any target left out, the duration against the lab's ttlHours " +
        '(and what --extend would cost), the cost of the run, and warnings for targets and billed parts ' +
        '(readers, proxies, pooler hosts) no step measures, and the effective settings of each proxy and pooler ' +
        "(the lab's values marked *, then the failure, timeout and pool defaults) with what differs between two of one product. " +
        'max_connections is the one figure deploy assumes ' +
        "too (the lab's, else the class default). Exit 0, 2 for usage errors.",
    )
    .requiredOption('--lab <file>', 'lab file (JSON)')
    .option(
      '--suite <name>',
      "suite to plan: a catalog suite (e1…e5, quick, smoke, all-published) or `lab` for the lab's own scenarios (default: each of the lab's `suites`)",
    )
    .option(
      '--json',
      'print the plans as a JSON array (steps per target, scenarios with skip reasons, duration, cost, settings, warnings)',
    )
    .option(
      '--settings <which>',
      "the effective settings of each proxy and pooler: `shown` (the lab's values, then the failure, timeout and pool settings) or `all` (every catalogued one)",
      'shown',
    )
    .action(async (flags: PlanFlags) => {
      if (flags.settings !== 'shown' && flags.settings !== 'all')
        throw new UsageError(`--settings: one of shown, all; got ${JSON.stringify(flags.settings)}`);
      const allSettings = flags.settings === 'all';
      const lab = loadModule().loadLabFile(flags.lab);
      // The lab's region priced as every command prices it (lib/cost/pricelist/prices-for.ts);
      // without prices, the plan's cost line says why (the same words as cost and deploy).
      const prices = await pricesModule().preparePrices(lab.region ?? DEFAULT_PRICE_REGION);
      const table = prices.ok ? prices.table : null;
      // The lab file's suites are checked when it loads; --suite here, naming the flag.
      const names =
        flags.suite !== undefined ? [scenariosModule().resolveSuiteFlag(flags.suite, lab).name] : lab.suites;
      // Every suite is planned before anything is printed: an unknown name is a usage error naming the choices.
      const previews = names.map((name) => runPlanModule().previewRun(lab, name, { table }));
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(previews, null, 2)}\n`);
        return;
      }
      const text = previews.map((p) => runPlanModule().formatRunPlan(p, { allSettings }));
      process.stdout.write(`${text.join('\n\n')}\n`);
    });
}
