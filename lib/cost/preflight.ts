/**
 * One call for `proxylab deploy` before it touches AWS: the estimate and its table (printed
 * first), the budget decision, and the runner-capacity warnings for the suites the lab will run.
 */
import type { LabConfig } from '../config/types';
import { estimateCost } from './estimate';
import type { CostEstimate } from './estimate';
import { formatCostTable } from './format';
import { checkBudget, runnerCapacityWarnings } from './guards';
import type { BudgetCheck, RunnerCapacityWarning } from './guards';

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
  const estimate = estimateCost(
    lab,
    opts.region ? { region: opts.region, ...(opts.regionFrom ? { regionFrom: opts.regionFrom } : {}) } : {},
  );
  return {
    estimate,
    table: formatCostTable(estimate),
    budget: checkBudget(estimate, opts.maxHourlyUsd, opts.force ?? false),
    warnings: runnerCapacityWarnings(lab, opts.suites ?? lab.suites),
  };
}
