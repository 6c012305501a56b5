/**
 * The pooler drivers by product: the one place a new product is registered (its folder
 * lib/poolers/<product>/ and its name in POOLER_PRODUCTS). `Record<PoolerProduct, …>` makes a
 * product without a driver a compile error.
 */
import type { PoolerDriver } from './driver';
import { pgbouncerDriver } from './pgbouncer/driver';
import { pgdoormanDriver } from './pgdoorman/driver';
import { POOLER_PRODUCTS, type PoolerProduct } from './products';

export const POOLER_DRIVERS: Readonly<Record<PoolerProduct, PoolerDriver>> = {
  pgbouncer: pgbouncerDriver,
  pgdoorman: pgdoormanDriver,
};

/** The driver of `product`; throws naming the products there are for anything else. */
export function poolerDriver(product: string): PoolerDriver {
  const d = (POOLER_DRIVERS as Readonly<Record<string, PoolerDriver>>)[product];
  if (d === undefined)
    throw new Error(`pooler product "${product}" has no driver; one of ${POOLER_PRODUCTS.join(', ')}`);
  return d;
}
