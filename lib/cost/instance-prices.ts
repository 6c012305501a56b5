/** The region's price table and its instance prices, or a UsageError naming what the table does not have. */
import { UsageError } from '../core/errors';
import { PRICE_TABLES_COMMITTED } from './price-table';
import type { InstancePrice, PriceTable, RdsInstancePrice } from './price-table';
import { unpricedRegionMessage } from './price-check';

/**
 * The price table for `region`: `given` when it is that region's (the table a command resolved,
 * `preparePrices`), else the committed one; or a UsageError saying why the region has no prices.
 */
export function priceTableFor(region: string, given?: PriceTable | null): PriceTable {
  if (given && given.region === region) return given;
  const table = PRICE_TABLES_COMMITTED[region];
  if (!table) {
    throw new UsageError(`region ${region} ${unpricedRegionMessage(region)}`, { code: 'unpriced-region' });
  }
  return table;
}

/** A price from one of the table's instance maps, or a UsageError naming the type and the known ones. */
function instancePrice<P extends InstancePrice>(
  table: PriceTable,
  known: Readonly<Record<string, P>>,
  what: string,
  type: string,
): P {
  const p = known[type];
  if (!p) {
    throw new UsageError(
      `unknown ${what} ${type}: no ${table.region} price in lib/cost/price-table.ts ` +
        `(known: ${Object.keys(known).join(', ')}); add it with its source rather than guess`,
    );
  }
  return p;
}

/** The Aurora class price, or a UsageError naming the class and the region's known classes. */
export function auroraInstancePrice(table: PriceTable, instanceClass: string): InstancePrice {
  return instancePrice(table, table.auroraInstances, 'Aurora instance class', instanceClass);
}

/** The RDS for PostgreSQL class price, or a UsageError naming the class and the region's known classes. */
export function rdsPostgresInstancePrice(table: PriceTable, instanceClass: string): RdsInstancePrice {
  const p = table.rdsPostgresInstances[instanceClass];
  if (!p)
    instancePrice(table, table.rdsPostgresInstances, 'RDS for PostgreSQL instance class', instanceClass);
  return p as RdsInstancePrice;
}

/** The EC2 instance type price, or a UsageError naming the type and the region's known types. */
export function ec2InstancePrice(
  table: PriceTable,
  instanceType: string,
  what = 'runner instance type',
): InstancePrice {
  return instancePrice(table, table.ec2Instances, what, instanceType);
}
