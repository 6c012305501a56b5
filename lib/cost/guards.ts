/**
 * Guard rails `proxylab deploy` calls before it touches AWS:
 *  - `checkBudget`: refuse a lab whose estimate (its upper bound, for serverless) exceeds
 *    `--max-hourly`, else the lab's `budget.maxHourlyUsd`, unless forced.
 *  - `runnerCapacityWarnings`: warn when the runners are too few for the largest client count the
 *    chosen suites ask for (rule of thumb below). A warning, never a refusal.
 */
import { UsageError } from '../core/errors';
import type { LabConfig } from '../config/types';
import { databaseSection } from '../config/database';
import type { ClientsSpec } from '../suite/catalog';
import { getSuite } from '../suite/catalog';
import { resolveClients } from '../suite/expand';
import { resolveSuite } from '../config/scenarios';
import type { CostEstimate } from './estimate';
import { DEFAULT_PRICE_REGION, PRICE_TABLES_COMMITTED } from './price-table';

export interface BudgetCheck {
  /** False when deploy must stop. */
  readonly allowed: boolean;
  /** The estimate's upper bound is above the limit (true also when forced through). */
  readonly overBudget: boolean;
  readonly estimateUsdPerHour: number;
  /** The limit applied, or null when neither the flag nor the lab sets one. */
  readonly limitUsdPerHour: number | null;
  readonly limitFrom: 'flag' | 'lab' | null;
  /** One line for the user: why deploy goes on or stops. */
  readonly message: string;
}

/**
 * Compares the estimate's upper bound per hour with `maxHourlyUsd` (the `--max-hourly` flag) or,
 * when that is absent, the lab's `budget.maxHourlyUsd` (carried on the estimate). Over the limit:
 * `allowed` is false unless `force`. Never throws; see `enforceBudget` for the throwing form.
 */
export function checkBudget(estimate: CostEstimate, maxHourlyUsd?: number, force = false): BudgetCheck {
  if (maxHourlyUsd !== undefined && !(Number.isFinite(maxHourlyUsd) && maxHourlyUsd > 0)) {
    throw new UsageError(`--max-hourly must be a positive number of US dollars, got ${maxHourlyUsd}`);
  }
  const limit = maxHourlyUsd ?? estimate.labBudgetMaxHourlyUsd;
  const limitFrom: BudgetCheck['limitFrom'] =
    maxHourlyUsd !== undefined ? 'flag' : limit !== null ? 'lab' : null;
  const est = estimate.totals.perHourUsdMax;
  const estText = `$${est.toFixed(4)}/h`;
  if (limit === null) {
    return {
      allowed: true,
      overBudget: false,
      estimateUsdPerHour: est,
      limitUsdPerHour: null,
      limitFrom,
      message: `estimate ${estText}; no hourly limit set (--max-hourly or budget.maxHourlyUsd)`,
    };
  }
  const where = limitFrom === 'flag' ? '--max-hourly' : "the lab's budget.maxHourlyUsd";
  const over = est > limit;
  if (!over) {
    return {
      allowed: true,
      overBudget: false,
      estimateUsdPerHour: est,
      limitUsdPerHour: limit,
      limitFrom,
      message: `estimate ${estText} is within ${where} $${limit}/h`,
    };
  }
  const message = force
    ? `estimate ${estText} exceeds ${where} $${limit}/h; deploying anyway because --force was given`
    : `estimate ${estText} exceeds ${where} $${limit}/h for lab "${estimate.lab}"; refusing to deploy (raise the limit, shrink the lab, or pass --force)`;
  return {
    allowed: force,
    overBudget: true,
    estimateUsdPerHour: est,
    limitUsdPerHour: limit,
    limitFrom,
    message,
  };
}

/** `checkBudget`, throwing a UsageError (exit 2) with its message when deploy must stop. */
export function enforceBudget(estimate: CostEstimate, maxHourlyUsd?: number, force = false): BudgetCheck {
  const check = checkBudget(estimate, maxHourlyUsd, force);
  if (!check.allowed) throw new UsageError(check.message);
  return check;
}

// ---------------------------------------------------------------------------------------------
// Runner capacity

/**
 * Rule of thumb: one runner vCPU drives at most this many pgbench clients before the load
 * generator, not the database or the proxy, starts to be what is measured. pgbench multiplexes
 * its clients over `-j` threads; each busy client costs client-side CPU per transaction (libpq
 * round trip, TLS to RDS Proxy, a full handshake per transaction with -C), so past a few hundred
 * clients per core the client's own scheduling shows up as latency and rate-schedule lag (E1's
 * write-up: a saturated client lagging 7–16 s). 200 per vCPU puts a c7g.large (2 vCPU) at 400
 * clients. It is a warning before deploy; the engine's runner CPU guard measures the real thing.
 */
export const CLIENTS_PER_RUNNER_VCPU = 200;

/** Aurora's default: `LEAST(DBInstanceClassMemory / 9531392, 5000)`. */
const MAX_CONNECTIONS_BYTES_PER_CONNECTION = 9_531_392;
const MAX_CONNECTIONS_DEFAULT_CAP = 5000;

/**
 * Aurora PostgreSQL's default max_connections for a class, from its memory in the price table.
 * Uses the class's nominal memory, so it reads a little high: DBInstanceClassMemory is what is
 * left after the OS and RDS processes (db.t4g.medium: formula on 4 GiB gives 450; AWS's table
 * says 405; E1 read 394). Always read `SHOW max_connections` at run time; this is for warnings.
 * Returns null for a class the price table does not know.
 */
export function defaultMaxConnections(
  instanceClass: string,
  region: string = DEFAULT_PRICE_REGION,
): number | null {
  return classMaxConnections('auroraInstances', instanceClass, region);
}

/** Aurora Serverless v2 at max capacity: 2 GiB per ACU into the same formula. */
function serverlessMaxConnections(maxAcu: number): number {
  return maxConnectionsForMemory(maxAcu * 2);
}

/** `LEAST(DBInstanceClassMemory / 9531392, 5000)` with `memoryGiB` as the class memory. */
function maxConnectionsForMemory(memoryGiB: number): number {
  return Math.min(
    Math.floor((memoryGiB * 1024 ** 3) / MAX_CONNECTIONS_BYTES_PER_CONNECTION),
    MAX_CONNECTIONS_DEFAULT_CAP,
  );
}

/** The formula on a class's memory from `list` of the region's price table (else the default region's); null when neither has it. */
function classMaxConnections(
  list: 'auroraInstances' | 'rdsPostgresInstances',
  instanceClass: string,
  region: string,
): number | null {
  // A class's memory is the class's, not the region's: the committed table knows every class the kit
  // prices (the Price List is asked for the same ones).
  const spec =
    PRICE_TABLES_COMMITTED[region]?.[list][instanceClass] ??
    PRICE_TABLES_COMMITTED[DEFAULT_PRICE_REGION]?.[list][instanceClass];
  return spec ? maxConnectionsForMemory(spec.memoryGiB) : null;
}

/**
 * RDS for PostgreSQL's default: LEAST({DBInstanceClassMemory/9531392}, 5000), the same formula as
 * Aurora PostgreSQL's ("Maximum number of database connections", RDS user guide,
 * https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Limits.html#RDS_Limits.MaxConnections).
 * Class memory stands in for DBInstanceClassMemory (which subtracts what the OS and RDS reserve),
 * so this is an upper bound; null when the class has no price-table entry (memory unknown).
 */
export function defaultRdsPostgresMaxConnections(
  instanceClass: string,
  region: string = DEFAULT_PRICE_REGION,
): number | null {
  return classMaxConnections('rdsPostgresInstances', instanceClass, region);
}

/** max_connections as a lab's plan assumes it before a run measures it, and why. */
export interface MaxConnectionsAssumption {
  /** null when neither the lab nor the price table's class memory says. */
  readonly value: number | null;
  /** `lab`: the lab sets it; `formula`: the engine's default formula on the class memory; `unknown`. */
  readonly basis: 'lab' | 'formula' | 'unknown';
  /** In words, for `proxylab plan` and warnings. */
  readonly text: string;
}

/**
 * THE max_connections every estimate before a run assumes — `proxylab plan` and `run`'s duration
 * check (lib/cost/run-plan.ts), `deploy`'s runner-capacity warning, relative client counts — so
 * they never disagree: the lab's own `maxConnections`, else the engine's default formula on the
 * class memory in the price table (an upper bound: DBInstanceClassMemory is a little less than the
 * class memory). A run always reads `SHOW max_connections` and plans against that.
 */
export function maxConnectionsAssumption(lab: LabConfig): MaxConnectionsAssumption {
  const db = lab.database;
  const section = databaseSection(db);
  if (db.maxConnections !== null)
    return {
      value: db.maxConnections,
      basis: 'lab',
      text: `${db.maxConnections} (${section}.maxConnections)`,
    };
  const region = lab.region ?? DEFAULT_PRICE_REGION;
  const formula = 'LEAST(DBInstanceClassMemory/9531392, 5000)';
  let value: number | null;
  let on: string;
  if (db.engine === 'postgres') {
    value = defaultRdsPostgresMaxConnections(db.instanceClass, region);
    on = db.instanceClass;
  } else if (db.capacity.kind === 'serverless') {
    value = serverlessMaxConnections(db.capacity.maxCapacityAcu);
    on = `${db.capacity.maxCapacityAcu} ACU (2 GiB each)`;
  } else {
    value = defaultMaxConnections(db.capacity.instanceClass, region);
    on = db.capacity.instanceClass;
  }
  return value === null
    ? {
        value,
        basis: 'unknown',
        text: `unknown: ${on} has no memory figure in lib/cost/price-table.ts (set ${section}.maxConnections)`,
      }
    : {
        value,
        basis: 'formula',
        text: `${value} (the default ${formula} on ${on}'s memory, an upper bound)`,
      };
}

/** The lab's max_connections: the override, else the class default (null when unknown). */
export function labMaxConnections(lab: LabConfig): number | null {
  return maxConnectionsAssumption(lab).value;
}

/** What the capacity check needs of a suite: its name and every client count its scenarios run. */
export interface SuiteClientDemand {
  readonly suite: string;
  /** As the catalog states them: absolute, or a multiple of max_connections / the pool size. */
  readonly clients: readonly ClientsSpec[];
}

/**
 * The client counts of suites by name: the catalog's, and with `lab` given, `lab` for its own
 * scenarios (an unknown name is a UsageError listing the valid ones).
 */
export function suiteClientDemands(
  suiteNames: readonly string[],
  lab?: Pick<LabConfig, 'name' | 'scenarios'>,
): SuiteClientDemand[] {
  return suiteNames.map((name) => ({
    suite: name,
    clients: (lab ? resolveSuite(name, lab) : getSuite(name)).scenarios.flatMap((sc) => sc.clients),
  }));
}

export interface RunnerCapacityWarning {
  /** Stable id, e.g. for tests and filtering. */
  readonly id: 'proxylab:runners-too-few' | 'proxylab:client-count-unknown';
  readonly message: string;
  readonly suite: string;
  readonly clients: number | null;
  readonly runnerVcpus: number | null;
  /** Runners of this type the rule of thumb asks for (null when unknown). */
  readonly runnersNeeded: number | null;
}

/**
 * Warnings when `lab.runners` are too few for the largest client count of the chosen suites
 * (clients ≤ CLIENTS_PER_RUNNER_VCPU × runner vCPUs). `suites` are catalog suite names
 * (lib/suite/catalog.ts), e.g. `lab.suites`. Relative counts resolve as the engine does
 * (`resolveClients`): against the lab's max_connections (override, else the class default) and,
 * for pool-relative counts, the largest proxy pool. An empty list means no concern.
 */
export function runnerCapacityWarnings(lab: LabConfig, suites: readonly string[]): RunnerCapacityWarning[] {
  return runnerCapacityWarningsFor(lab, suiteClientDemands(suites, lab));
}

/** `runnerCapacityWarnings` on explicit client demands (no catalog lookup). */
export function runnerCapacityWarningsFor(
  lab: LabConfig,
  demands: readonly SuiteClientDemand[],
): RunnerCapacityWarning[] {
  // vCPUs are the type's, not the region's: the committed table knows every type the kit prices.
  const table =
    PRICE_TABLES_COMMITTED[lab.region ?? DEFAULT_PRICE_REGION] ??
    PRICE_TABLES_COMMITTED[DEFAULT_PRICE_REGION];
  const runnerSpec = table?.ec2Instances[lab.runners.instanceType] ?? null;
  const maxConn = labMaxConnections(lab);
  const largestPercent = lab.proxies.reduce((m, p) => Math.max(m, p.maxConnectionsPercent), 0);
  const poolSize =
    maxConn !== null && largestPercent > 0 ? Math.max(1, Math.round((largestPercent / 100) * maxConn)) : null;
  const warnings: RunnerCapacityWarning[] = [];
  let worst: { suite: string; clients: number } | null = null;
  for (const d of demands) {
    for (const spec of d.clients) {
      if (typeof spec !== 'number' && maxConn === null) {
        warnings.push({
          id: 'proxylab:client-count-unknown',
          suite: d.suite,
          clients: null,
          runnerVcpus: runnerSpec?.vcpus ?? null,
          runnersNeeded: null,
          message: `suite ${d.suite}: ${spec.times} × ${spec.of} cannot be sized: this lab's max_connections is unknown (set ${databaseSection(lab.database)}.maxConnections)`,
        });
        continue;
      }
      const clients = resolveClients(spec, { maxConnections: maxConn ?? 0, poolSize });
      if (worst === null || clients > worst.clients) worst = { suite: d.suite, clients };
    }
  }
  if (worst === null) return warnings;
  if (runnerSpec === null) {
    warnings.push({
      id: 'proxylab:runners-too-few',
      suite: worst.suite,
      clients: worst.clients,
      runnerVcpus: null,
      runnersNeeded: null,
      message: `suite ${worst.suite} runs up to ${worst.clients} clients; runner type ${lab.runners.instanceType} has no vCPU count in the price table, so the runner fleet cannot be checked`,
    });
    return warnings;
  }
  const vcpus = runnerSpec.vcpus * lab.runners.count;
  const capacity = vcpus * CLIENTS_PER_RUNNER_VCPU;
  if (worst.clients > capacity) {
    const needed = Math.ceil(worst.clients / (runnerSpec.vcpus * CLIENTS_PER_RUNNER_VCPU));
    warnings.push({
      id: 'proxylab:runners-too-few',
      suite: worst.suite,
      clients: worst.clients,
      runnerVcpus: vcpus,
      runnersNeeded: needed,
      message:
        `suite ${worst.suite} runs up to ${worst.clients} clients but ${lab.runners.count} × ${lab.runners.instanceType} ` +
        `(${vcpus} vCPU) drive about ${capacity} (rule of thumb: ${CLIENTS_PER_RUNNER_VCPU} clients per runner vCPU); ` +
        `the load generator may be what gets measured. Use runners.count ≥ ${needed} or a larger instance type.`,
    });
  }
  return warnings;
}
