/** What every phase of the estimate (./estimate.ts) reads: the lab, the prices, the usage assumptions, the shape. */
import type { LabConfig } from '../config/types';
import type { PriceTable } from './price-table';
import type { DeploymentShape } from './shape';

/** Usage assumptions for the storage and I/O lines. */
export interface UsageAssumptions {
  /** Aurora cluster volume, GB. @default 10 (pgbench -s 50 is ≈ 0.75 GB; room for several scales) */
  readonly auroraStorageGb: number;
  /**
   * Aurora I/O requests per hour, millions, averaged over the hours the lab exists.
   * @default 0.2 (≈ 55 I/O per second: bursts of several thousand per second during write-heavy
   * runs such as TPC-B, near zero while idle or on cached read-only runs)
   */
  readonly auroraIoMillionsPerHour: number;
  /**
   * CPU utilization of the instance a suite loads (the writer), percent of every vCPU, while a suite
   * runs: what a burstable (db.t3/db.t4g) class in Unlimited mode bills surplus credits on.
   * @default 100 — pgbench runs closed-loop (each client sends its next transaction as soon as the
   * last one returns) and every scenario runs at least 5 clients (smoke), most of them tens to
   * hundreds (up to 1.5 × max_connections), against 2 vCPUs: the database CPU is the bottleneck.
   */
  readonly suiteCpuPercent: number;
  /**
   * Data through the VPC interface endpoints (a lab without internet egress), GB per hour.
   * @default 0.05 — SSM agent polling, secrets, the collector invocation, RDS and CloudFormation
   * API calls are kilobytes; results, packages and the runner bundle go through the free S3
   * gateway endpoint instead
   */
  readonly endpointGbPerHour: number;
}

export const DEFAULT_USAGE: UsageAssumptions = {
  auroraStorageGb: 10,
  auroraIoMillionsPerHour: 0.2,
  suiteCpuPercent: 100,
  endpointGbPerHour: 0.05,
};

/** What every phase of the estimate reads: the lab, the region's prices, the usage assumptions and the stack's shape. */
export interface CostInputs {
  readonly lab: LabConfig;
  readonly table: PriceTable;
  readonly usage: UsageAssumptions;
  readonly shape: DeploymentShape;
}
