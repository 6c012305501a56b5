/** Cost estimate and guard rails. See docs/cost.md. */
export {
  estimateCost,
  priceTableFor,
  auroraInstancePrice,
  ec2InstancePrice,
  DEFAULT_USAGE,
  HOURS_PER_DAY,
  HOURS_PER_MONTH,
} from './estimate';
export type {
  CostEstimate,
  CostLine,
  CostTotals,
  CostCategory,
  EstimateOptions,
  UsageAssumptions,
} from './estimate';
export { formatCostTable, formatUsdRange } from './format';
export {
  checkBudget,
  enforceBudget,
  runnerCapacityWarnings,
  runnerCapacityWarningsFor,
  suiteClientDemands,
  labMaxConnections,
  defaultMaxConnections,
  CLIENTS_PER_RUNNER_VCPU,
} from './guards';
export type { BudgetCheck, RunnerCapacityWarning, SuiteClientDemand } from './guards';
export { PRICE_TABLES_COMMITTED, SOURCES, DEFAULT_PRICE_REGION } from './price-table';
export type { PriceTable, PriceSource, InstancePrice, SourceId } from './price-table';
export { LAB_DEPLOYMENT_SHAPE } from './shape';
export type { DeploymentShape } from './shape';
export { deployPreflight } from './preflight';
export type { DeployPreflight, DeployPreflightOptions } from './preflight';
