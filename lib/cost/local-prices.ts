/**
 * `proxylab local --price-region R` (issue 41): a local run's targets priced at a cloud region's
 * prices, so its decision table shows $ per hour and $ per million transactions at the throughput
 * measured on this machine, marked "local throughput, cloud prices (R as of DATE)".
 *
 * - `direct` adds nothing (the database is billed whichever target is measured);
 * - a self-hosted pooler target (PgBouncer, PgDoorman) is priced as its production HA pair: two
 *   hosts in two zones with their root volumes behind an NLB (lib/cost/production.ts), per hour;
 *   unknown (null) when a part has no price. The host type is the lab's (`--lab` with a dedicated
 *   pooler's `instanceType`); otherwise the report picks the smallest type of `hostType`'s family
 *   whose vCPUs cover the pooler CPU the run measured (`hostChoices`), and without a CPU figure
 *   prices `hostType` and says so. With `--app-hosts N` (`ProductionOptions.appHosts`) it is priced
 *   instead as the pooler on each of N application hosts, the lines `cost --app-hosts N` prints
 *   (`appHostLines`): no host type to pick.
 *
 * `proxylab local` (scripts/commands/local.ts) resolves the region with `preparePrices` and puts
 * the result in the run environment's `targetPrices` (lib/local/stack.ts).
 */
import { DEFAULTS } from '../config/defaults';
import type { LabConfig } from '../config/types';
import { poolerDriver } from '../poolers/registry';
import { targetInstance } from '../suite/targets';
import type { TargetPrice, TargetRef } from '../suite/types';
import type { PriceTable } from './price-table';
import {
  appHostLines,
  haPairLines,
  hostChoices,
  linesText,
  productionTotal,
  targetProduction,
  type ProductionOptions,
} from './production';

/** A local target: its name, the pooler product behind it (null for `direct`) and its host. */
export interface LocalTarget {
  readonly name: string;
  /** The product's display name (`PgBouncer`), or null for direct. */
  readonly product: string | null;
  /** The lab's host type for this pooler (a dedicated pooler in `--lab`), else null: the report picks it. */
  readonly hostType?: string | null;
  /** Processes of the pooler (PgBouncer with so_reuseport); 1 for a multithreaded product. @default 1 */
  readonly processes?: number;
}

export const LOCAL_PRICES_MARK = 'local throughput, cloud prices';

/**
 * Each local target's USD per hour at `table`'s prices, marked as local throughput at cloud prices;
 * `hostType` is the type priced when the lab gives none and the CPU turns out unknown;
 * `opts.appHosts` prices each pooler on that many application hosts instead of as an HA pair.
 */
export function localTargetPrices(
  targets: readonly LocalTarget[],
  table: PriceTable,
  hostType: string,
  opts: ProductionOptions = {},
): TargetPrice[] {
  const pricedAs = `${LOCAL_PRICES_MARK} (${table.region} as of ${table.asOf})`;
  return targets.map((t): TargetPrice => {
    if (t.product === null) {
      const basis = `${pricedAs}: the database itself, billed whichever target is measured`;
      return {
        target: t.name,
        usdPerHour: 0,
        basis,
        production: targetProduction(
          {
            lines: [{ part: 'nothing', usdPerMonth: 0, note: "added: the database is every option's" }],
            usdPerMonth: 0,
          },
          { pricedAs, hostChoices: null, poolerProcesses: 1, hourlyIsProduction: true },
        ),
      };
    }
    if (opts.appHosts !== undefined) {
      const lines = appHostLines(t.product, opts.appHosts);
      const production = targetProduction(
        { lines, usdPerMonth: productionTotal(lines) },
        {
          pricedAs,
          hostChoices: null,
          poolerProcesses: t.processes ?? 1,
          hourlyIsProduction: true,
          appHosts: opts.appHosts,
        },
      );
      return {
        target: t.name,
        usdPerHour: production.usdPerHour,
        basis: `${pricedAs}: ${linesText(lines)}`,
        production,
      };
    }
    const type = t.hostType ?? hostType;
    const lines = haPairLines(table, type);
    const month = productionTotal(lines);
    const production = targetProduction(
      { lines, usdPerMonth: month },
      {
        pricedAs,
        hostChoices: t.hostType ? null : hostChoices(table, hostType),
        poolerProcesses: t.processes ?? 1,
        hourlyIsProduction: true,
      },
    );
    return {
      target: t.name,
      usdPerHour: production.usdPerHour,
      basis: `${pricedAs}: ${t.product} as an HA pair — ${production.basis}`,
      production,
    };
  });
}

/** A local pooler as the local run starts it (lib/local/pooler.ts `LocalPoolerSpec`). */
export interface LocalPoolerLike {
  readonly product: string;
  readonly processes: number;
  /** Its name: a lab pooler's, else the product's. */
  readonly instance: string;
}

/**
 * A local run's targets priced at `table` (`proxylab local --price-region`): `refs` are the run's
 * targets (lib/local/run-local.ts `localTargetsOf`), `poolers` the local poolers behind them. With
 * `--lab`, a lab pooler on a dedicated host keeps its `instanceType`; every other pooler's host type
 * is left to the report (the smallest of the lab runners' family — the default runners' without a
 * lab — whose vCPUs cover the measured CPU); with `opts.appHosts`, every pooler on that many
 * application hosts.
 */
export function localRunPrices(
  table: PriceTable,
  refs: readonly TargetRef[],
  poolers: readonly LocalPoolerLike[],
  lab: LabConfig | null,
  opts: ProductionOptions = {},
): TargetPrice[] {
  const targets = refs.map((ref): LocalTarget => {
    const pooler = poolers.find((p) => p.instance === targetInstance(ref));
    if (pooler === undefined) return { name: ref.name, product: null };
    const inLab = lab?.poolers.find((p) => p.name === pooler.instance);
    return {
      name: ref.name,
      product: poolerDriver(pooler.product).displayName,
      hostType: inLab?.placement === 'dedicated' ? inLab.instanceType : null,
      processes: pooler.processes,
    };
  });
  return localTargetPrices(targets, table, lab?.runners.instanceType ?? DEFAULTS.runners.instanceType, opts);
}
