/**
 * What each target of a lab adds to the hourly bill, for the report's decision table ($/h and $ per
 * million transactions). Priced by the operator from the lab and the region's prices with their
 * date (lib/cost/pricelist: the Price List, its cache, or us-east-1's committed table; `proxylab run` carries the result in the run request; the runner writes it into the run's
 * environment), never on the runners.
 *
 * - `direct` adds nothing: the database is billed whichever target is measured.
 * - An RDS Proxy target adds its proxy's line (vCPU- or ACU-hours of the instances behind it; a
 *   serverless range is priced at its upper end and says so).
 * - A self-hosted pooler target adds its dedicated host: the instance, its root volume and, when the
 *   stack gives the host one, its public IPv4 address. A pooler's pool modes share that host: each of
 *   its targets carries the whole host (choosing either mode means paying for the host) and says so.
 *   A pooler on the runners adds nothing (it shares the runners' CPU with pgbench).
 *
 * Each target also carries its production option (`production`, lib/cost/production.ts): what
 * choosing it costs per month in production, for the table's production column: a self-hosted
 * pooler as its HA pair, or with `appHosts` (`proxylab run --app-hosts N`) on N application hosts,
 * as `cost --app-hosts N` prices it (the same bill, lib/cost/production.ts).
 */
import type { LabConfig } from '../config/types';
import { labTargets } from '../config/targets';
import type { TargetPrice, TargetProduction } from '../suite/types';
import { estimateCost, HOURS_PER_MONTH, type CostEstimate, type EstimateOptions } from './estimate';
import { priceTableFor } from './instance-prices';
import type { PriceTable } from './price-table';
import { hostChoices, productionBill, targetProduction, type ProductionOptions } from './production';
import { LAB_DEPLOYMENT_SHAPE } from './shape';

/** Every target of the lab with the USD per hour it adds, in the order runs list them. */
export function targetPrices(lab: LabConfig, opts: EstimateOptions & ProductionOptions = {}): TargetPrice[] {
  const estimate = estimateCost(lab, opts);
  const production = productionOf(
    lab,
    priceTableFor(estimate.region, opts.table),
    opts.appHosts !== undefined ? { appHosts: opts.appHosts } : {},
  );
  return labHourlyPrices(lab, estimate, opts).map((p) => ({ ...p, production: production(p.target) }));
}

/**
 * Each target's production option (lib/cost/production.ts) at `table`'s prices: direct adds nothing,
 * an RDS Proxy its vCPUs on the writer and readers, a pooler its HA pair — on the lab's host type,
 * or, for a pooler without one (on the runners), on the type the report picks from the measured CPU;
 * with `opts.appHosts`, a pooler on that many application hosts.
 */
function productionOf(
  lab: LabConfig,
  table: PriceTable,
  opts: ProductionOptions,
): (target: string) => TargetProduction | null {
  const bill = productionBill(lab, table, opts);
  const pricedAs = `${table.region} on-demand prices as of ${table.asOf}`;
  const byTarget = new Map<string, TargetProduction>();
  for (const t of labTargets(lab)) {
    if (t.role === 'writer') {
      const db = bill.databaseUsdPerMonth === null ? 'unknown' : `$${bill.databaseUsdPerMonth.toFixed(2)}`;
      byTarget.set(
        t.ref.name,
        targetProduction(
          {
            lines: [
              {
                part: 'nothing',
                usdPerMonth: 0,
                note: `added: the database (${db}/month) is every option's`,
              },
            ],
            usdPerMonth: 0,
          },
          { pricedAs, hostChoices: null, poolerProcesses: 1, hourlyIsProduction: false },
        ),
      );
      continue;
    }
    const instance = t.role === 'proxy' ? t.proxy.name : t.pooler.name;
    const option = bill.options.find((o) => o.instance === instance);
    if (!option) continue;
    const pooler = lab.poolers.find((p) => p.name === instance);
    byTarget.set(
      t.ref.name,
      targetProduction(option, {
        pricedAs,
        hostChoices: option.hostTypeFromLab ? null : hostChoices(table, lab.runners.instanceType),
        poolerProcesses: pooler?.processes ?? 1,
        hourlyIsProduction: false,
        ...(pooler && opts.appHosts !== undefined ? { appHosts: opts.appHosts } : {}),
      }),
    );
  }
  return (target) => byTarget.get(target) ?? null;
}

/** What each target adds to the lab's hourly bill. */
function labHourlyPrices(lab: LabConfig, estimate: CostEstimate, opts: EstimateOptions): TargetPrice[] {
  const shape = opts.shape ?? LAB_DEPLOYMENT_SHAPE;
  const line = (part: string) => estimate.lines.find((l) => l.part === part);
  const round = (x: number) => Math.round(x * 1e6) / 1e6;
  return labTargets(lab).map((t): TargetPrice => {
    if (t.role === 'writer')
      return {
        target: t.ref.name,
        usdPerHour: 0,
        basis: 'the database itself: billed whichever target is measured',
      };
    if (t.role === 'proxy') {
      const l = line(`RDS Proxy ${t.proxy.name}`);
      if (!l)
        return { target: t.ref.name, usdPerHour: null, basis: `no cost line for RDS Proxy ${t.proxy.name}` };
      const range = l.usdPerHourMin !== l.usdPerHourMax;
      return {
        target: t.ref.name,
        usdPerHour: l.usdPerHourMax,
        basis: `RDS Proxy ${t.proxy.name}: ${l.note}${range ? ' (upper end of the range)' : ''}`,
      };
    }
    const pooler = lab.poolers.find((p) => p.name === t.pooler.name);
    if (!pooler || pooler.placement !== 'dedicated' || pooler.instanceType === null)
      return {
        target: t.ref.name,
        usdPerHour: 0,
        basis: `pooler ${t.pooler.name} runs on the runners: no host of its own (it shares their CPU with pgbench)`,
      };
    const host = estimate.lines.find(
      (l) => l.category === 'pooler' && l.part.endsWith(` host ${pooler.name} ${pooler.instanceType}`),
    );
    const ebs = estimate.lines.find((l) => l.part.startsWith('Pooler host EBS'));
    const ipv4 = estimate.lines.find((l) => l.part.startsWith('Public IPv4'));
    if (!host)
      return { target: t.ref.name, usdPerHour: null, basis: `no cost line for pooler host ${pooler.name}` };
    const volume = ebs ? (shape.poolerHostRootVolumeGb * ebs.unitPriceUsd) / HOURS_PER_MONTH : 0;
    const address = ipv4 && shape.poolerHostsHavePublicIpv4 ? ipv4.unitPriceUsd : 0;
    const shared =
      pooler.poolModes.length > 1 ? `; shared by its ${pooler.poolModes.join(' and ')} pools` : '';
    return {
      target: t.ref.name,
      usdPerHour: round(host.usdPerHourMax + volume + address),
      basis:
        `pooler host ${pooler.name}: ${pooler.instanceType} $${host.unitPriceUsd}/h` +
        (volume > 0 ? ` + ${shape.poolerHostRootVolumeGb} GB gp3 $${round(volume)}/h` : '') +
        (address > 0 ? ` + public IPv4 $${address}/h` : '') +
        shared,
    };
  });
}
