/**
 * One call for `proxylab deploy` before it touches AWS: the estimate and its table (printed
 * first), the budget decision, and the runner-capacity warnings for the suites the lab will run;
 * and every warning line it prints (`deployWarningLines`).
 */
import type { LabConfig } from '../config/types';
import { labWarnings } from '../config/warnings';
import { estimateCost } from './estimate';
import type { CostEstimate } from './estimate';
import { formatCostTable } from './format';
import { checkBudget, runnerCapacityWarnings } from './guards';
import type { BudgetCheck, RunnerCapacityWarning } from './guards';
import { labSuiteWarnings } from './run-plan';
import type { PriceTable } from './price-table';

export interface DeployPreflightOptions {
  /** Price region (`--region`); @default the lab's region, else us-east-1. */
  readonly region?: string;
  /** How to label `region`; @default 'flag' */
  readonly regionFrom?: 'flag' | 'deploy' | 'lab' | 'default';
  /** `--max-hourly`; @default the lab's budget.maxHourlyUsd */
  readonly maxHourlyUsd?: number;
  /** `--force`: deploy even over the limit. @default false */
  readonly force?: boolean;
  /** Suites the deploy is for; @default lab.suites */
  readonly suites?: readonly string[];
  /** The region's prices as the command resolved them (`preparePrices`); @default the committed table */
  readonly table?: PriceTable | null;
}

export interface DeployPreflight {
  readonly estimate: CostEstimate;
  /** `formatCostTable(estimate)`: print it before deploying. */
  readonly table: string;
  /** `budget.allowed === false`: stop (exit 2) with `budget.message`. */
  readonly budget: BudgetCheck;
  /** Print each `message` as a warning; they never stop a deploy. */
  readonly warnings: readonly RunnerCapacityWarning[];
}

/**
 * Throws a UsageError for what cannot be estimated (unknown instance type, region without prices,
 * unknown suite, bad --max-hourly); otherwise returns the decision for the caller to act on.
 */
export function deployPreflight(lab: LabConfig, opts: DeployPreflightOptions = {}): DeployPreflight {
  const estimate = estimateCost(lab, {
    ...(opts.region
      ? { region: opts.region, ...(opts.regionFrom ? { regionFrom: opts.regionFrom } : {}) }
      : {}),
    table: opts.table ?? null,
  });
  return {
    estimate,
    table: formatCostTable(estimate),
    budget: checkBudget(estimate, opts.maxHourlyUsd, opts.force ?? false),
    warnings: runnerCapacityWarnings(lab, opts.suites ?? lab.suites),
  };
}

/**
 * The warning lines `proxylab deploy` prints, `--dry-run` included: everything `proxylab validate`
 * warns about a valid lab — its suites' plan (a target or billed part none of them measures, a suite
 * that would outlive the lab or need more runners: labSuiteWarnings) and the lab's own
 * (lib/config/warnings.ts) — and the preflight's runner-capacity warnings, each once (the plan
 * repeats the capacity warnings word for word). `warning [id]: message`, lab warnings with their path.
 */
export function deployWarningLines(
  lab: LabConfig,
  preflight: readonly { readonly id: string; readonly message: string }[] = [],
  table: PriceTable | null = null,
): string[] {
  const lines = [
    ...preflight.map((w) => `warning [${w.id}]: ${w.message}`),
    ...labSuiteWarnings(lab, lab.suites, { table }).map((w) => `warning [${w.id}]: ${w.message}`),
    ...labWarnings(lab).map((w) => `warning [${w.id}]: ${w.path}: ${w.message}`),
  ];
  return [...new Set(lines)];
}
