/** The estimate's EC2 phases (./estimate.ts): the runners, the self-hosted poolers, and their root volumes. */
import type { LabConfig } from '../config/types';
import { poolerDriver } from '../poolers/registry';
import type { PriceTable } from './price-table';
import { fixed, HOURS_PER_MONTH, type CostLine, withResource } from './cost-line';
import type { CostInputs } from './inputs';
import { ec2InstancePrice } from './instance-prices';

/**
 * What the estimate says of spot runners. No Spot price is assumed: it moves with supply and demand
 * per zone and type, and a lab without a MaxPrice pays "the current Spot price", never more than
 * on-demand (EC2 API SpotMarketOptions.MaxPrice: "If you do not specify this parameter, you will pay
 * the current Spot price"; its default ceiling is the on-demand price).
 */
export const SPOT_CEILING_NOTE =
  'priced at the on-demand rate as a ceiling; the Spot price actually billed is usually well below it (it varies by zone and hour, so no Spot price is assumed)';

/** The runners (on-demand price, the ceiling for spot) and their root volumes. */
export function runnerLines({ lab, table, shape }: CostInputs): CostLine[] {
  const runner = ec2InstancePrice(table, lab.runners.instanceType);
  const ebsGb = shape.runnerRootVolumeGb * lab.runners.count;
  return [
    fixed(
      'runner',
      `Runners ${lab.runners.count} × ${lab.runners.instanceType}${lab.runners.spot ? ' (spot: on-demand as ceiling)' : ''}`,
      lab.runners.count,
      'instance-hour',
      runner.usdPerHour,
      runner.source,
      `${lab.runners.count} × $${runner.usdPerHour}/h on-demand Linux (${runner.vcpus} vCPU each)` +
        (lab.runners.spot ? `; ${SPOT_CEILING_NOTE}` : ''),
    ),
    ebsGp3Line(`Runner EBS gp3 ${lab.runners.count} × ${shape.runnerRootVolumeGb} GB`, ebsGb, table),
  ];
}

/** `gb` of EC2 root volumes (gp3), billed per GB-month, as a per-hour line. */
function ebsGp3Line(part: string, gb: number, table: PriceTable): CostLine {
  const price = table.ebsGp3PerGbMonth;
  return fixed(
    'storage',
    part,
    gb / HOURS_PER_MONTH,
    'GB-month',
    price.usd,
    price.source,
    `${gb} GB × $${price.usd}/GB-month ÷ ${HOURS_PER_MONTH} h`,
  );
}

/** The lab's poolers on a host of their own (each bills like a runner). */
export function poolerHosts(lab: LabConfig): LabConfig['poolers'] {
  return lab.poolers.filter((p) => p.placement === 'dedicated');
}

/**
 * Self-hosted poolers: a dedicated host bills like a runner (EC2 + root volume here, its public
 * IPv4 in networkLines); one on the runners adds nothing but competes for their CPU.
 */
export function poolerLines({ lab, table, shape }: CostInputs): CostLine[] {
  const lines = lab.poolers.map((pooler) => poolerHostLine(pooler, lab, table));
  const hosts = poolerHosts(lab);
  if (hosts.length > 0) {
    const gb = shape.poolerHostRootVolumeGb * hosts.length;
    lines.push(
      ebsGp3Line(`Pooler host EBS gp3 ${hosts.length} × ${shape.poolerHostRootVolumeGb} GB`, gb, table),
    );
  }
  return lines;
}

/** One pooler's compute: its dedicated host's instance-hour, or $0 on the runners. */
export function poolerHostLine(
  pooler: LabConfig['poolers'][number],
  lab: LabConfig,
  table: PriceTable,
): CostLine {
  const driver = poolerDriver(pooler.kind);
  if (pooler.placement === 'dedicated' && pooler.instanceType !== null) {
    const p = ec2InstancePrice(table, pooler.instanceType, 'pooler host instance type');
    return withResource(
      fixed(
        'pooler',
        `${driver.displayName} host ${pooler.name} ${pooler.instanceType}`,
        1,
        'instance-hour',
        p.usdPerHour,
        p.source,
        `1 × $${p.usdPerHour}/h on-demand Linux (${p.vcpus} vCPU; ${pooler.processes} ${driver.costLabel}${pooler.processes === 1 ? '' : 'es'})`,
      ),
      `pooler:${pooler.name}`,
    );
  }
  return fixed(
    'pooler',
    `${driver.displayName} ${pooler.name} on the runners`,
    lab.runners.count,
    'runner (shared)',
    0,
    ec2InstancePrice(table, lab.runners.instanceType).source,
    'no extra cost: it runs on the runners (billed above) and shares their CPU with pgbench',
  );
}
