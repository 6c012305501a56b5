/**
 * The real `PriceListClient`: a `PricingClient` of `@aws-sdk/client-pricing` in one of the regions
 * that serve the Price List Query API (the operator's credentials; `pricing:GetProducts` is in the
 * `read` policy of `proxylab iam-policy`). Loaded only by the commands that price (`lazy.ts`).
 */
import { GetProductsCommand, PricingClient } from '@aws-sdk/client-pricing';
import type { PriceListClient } from './client';
import { PRICE_LIST_ENDPOINT_REGIONS } from './client';

/** The Price List endpoint nearest to `region` (eu-* → eu-central-1, ap-* → ap-south-1, else us-east-1). */
export function priceListEndpointRegion(region: string): (typeof PRICE_LIST_ENDPOINT_REGIONS)[number] {
  if (region.startsWith('eu-')) return 'eu-central-1';
  if (region.startsWith('ap-')) return 'ap-south-1';
  return 'us-east-1';
}

/** A port over `client` (a new PricingClient for `region`'s nearest endpoint when not given). */
export function awsPriceListClient(
  region: string,
  client?: PricingClient,
  profile?: string,
): PriceListClient {
  const sdk =
    client ?? new PricingClient({ region: priceListEndpointRegion(region), ...(profile ? { profile } : {}) });
  return { getProducts: (input) => sdk.send(new GetProductsCommand(input)) };
}
