/** The estimate's RDS Proxy phase (./estimate.ts): one line per proxy, priced on what it targets. */
import type { AuroraDatabaseConfig, LabConfig } from '../config/types';
import type { PriceTable } from './price-table';
import { fixed, range, withResource, type CostLine } from './cost-line';
import type { CostInputs } from './inputs';
import { auroraInstancePrice, rdsPostgresInstancePrice } from './instance-prices';

/**
 * RDS Proxy, one line per proxy: it bills the vCPUs (provisioned) or ACUs (serverless) of the
 * instances it targets, at least rdsProxyMinVcpus / rdsProxyMinAcus.
 */
export function proxyLines({ lab, table }: CostInputs): CostLine[] {
  const db = lab.database;
  if (db.engine === 'aurora-postgresql') return auroraProxyLines(lab, db, table);
  // A Multi-AZ standby is not a proxy target (it takes over the primary's endpoint on failover)
  // and is not counted.
  const p = rdsPostgresInstancePrice(table, db.instanceClass);
  return lab.proxies.map((proxy) => {
    const billed = Math.max(table.rdsProxyMinVcpus, p.vcpus);
    const price = table.rdsProxyPerVcpuHour;
    return withResource(
      fixed(
        'proxy',
        `RDS Proxy ${proxy.name}`,
        billed,
        'vCPU-hour',
        price.usd,
        price.source,
        `1 instance × ${p.vcpus} vCPU (minimum ${table.rdsProxyMinVcpus}) × $${price.usd}/vCPU-hour`,
      ),
      `proxy:${proxy.name}`,
    );
  });
}

/** Aurora's RDS Proxy lines: per vCPU-hour (provisioned) or ACU-hour (serverless) of every instance behind it. */
function auroraProxyLines(lab: LabConfig, db: AuroraDatabaseConfig, table: PriceTable): CostLine[] {
  const instances = 1 + db.readers;
  const cap = db.capacity;
  return lab.proxies.map((proxy) =>
    withResource(auroraProxyLine(proxy.name, instances, cap, table), `proxy:${proxy.name}`),
  );
}

/** One RDS Proxy's line: it bills the vCPUs (provisioned) or ACUs (serverless) of every instance behind it. */
function auroraProxyLine(
  name: string,
  instances: number,
  cap: AuroraDatabaseConfig['capacity'],
  table: PriceTable,
): CostLine {
  const part = `RDS Proxy ${name}`;
  if (cap.kind === 'provisioned') {
    const p = auroraInstancePrice(table, cap.instanceClass);
    const vcpus = p.vcpus * instances;
    const billed = Math.max(table.rdsProxyMinVcpus, vcpus);
    const price = table.rdsProxyPerVcpuHour;
    return fixed(
      'proxy',
      part,
      billed,
      'vCPU-hour',
      price.usd,
      price.source,
      `${instances} instance(s) × ${p.vcpus} vCPU = ${vcpus} vCPU (minimum ${table.rdsProxyMinVcpus}) × $${price.usd}/vCPU-hour`,
    );
  }
  const price = table.rdsProxyPerAcuHour;
  const lo = Math.max(table.rdsProxyMinAcus, cap.minCapacityAcu * instances);
  const hi = Math.max(table.rdsProxyMinAcus, cap.maxCapacityAcu * instances);
  return range(
    'proxy',
    part,
    lo,
    hi,
    'ACU-hour',
    price.usd,
    price.source,
    `${instances} instance(s) × ${cap.minCapacityAcu}–${cap.maxCapacityAcu} ACU (minimum ${table.rdsProxyMinAcus} ACU) × $${price.usd}/ACU-hour`,
  );
}
