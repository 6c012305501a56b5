/**
 * The product registry: one entry per product (lib/products/<product>/entry.ts). A new product is a
 * folder with its entry and settings, its kinds in ./kinds.ts and one line here —
 * `Record<TargetProduct, …>` makes a product without an entry a compile error.
 */
import { PRODUCT_IDS, type TargetProduct } from './kinds';
import { PGBOUNCER } from './pgbouncer/entry';
import { PGDOORMAN } from './pgdoorman/entry';
import { POSTGRES } from './postgres/entry';
import { RDS_PROXY } from './rds-proxy/entry';
import type { ProductEntry } from './types';

export const PRODUCT_ENTRIES: Readonly<Record<TargetProduct, ProductEntry>> = {
  postgres: POSTGRES,
  'rds-proxy': RDS_PROXY,
  pgbouncer: PGBOUNCER,
  pgdoorman: PGDOORMAN,
};

/** The entry of `id`; throws naming the products there are for anything else. */
export function productEntry(id: string): ProductEntry {
  const e = (PRODUCT_ENTRIES as Readonly<Record<string, ProductEntry>>)[id];
  if (e === undefined) throw new RangeError(`no product "${id}"; one of ${PRODUCT_IDS.join(', ')}`);
  return e;
}
