/**
 * The `GetProducts` wrapper: one query (service code and filters) to every product it matches,
 * page by page (`NextToken`, at most 100 products a page), each parsed by ./parse.ts.
 *
 * The Price List Query API is served from a few regions only (us-east-1, eu-central-1, ap-south-1:
 * "AWS Price List Query API endpoints", AWS Billing User Guide, using-price-list-query-api.html) and
 * prices every region: the region asked about is a filter (`regionCode`), not the endpoint.
 *
 * The client is a port (`PriceListClient`): the CLI gives a `PricingClient` of
 * `@aws-sdk/client-pricing` (./aws-client.ts), tests a mocked one. An answer is bounded: at most
 * `MAX_PAGES` pages and `MAX_ANSWER_BYTES` of PriceList text per query, else refused by name.
 */
import type { GetProductsCommandInput, GetProductsCommandOutput } from '@aws-sdk/client-pricing';
import { parsePriceListEntry, PriceListError, type PricedProduct } from './parse';

/** The regions that serve the Price List Query API (they price every region). */
export const PRICE_LIST_ENDPOINT_REGIONS = ['us-east-1', 'eu-central-1', 'ap-south-1'] as const;

/** A query's answers stop here: the kit's filters match tens of products, never thousands. */
export const MAX_PAGES = 20;
/** Tens of MB is not an answer to a filtered query: refused rather than parsed. */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** What the wrapper needs of a Price List client: `GetProducts`. */
export interface PriceListClient {
  getProducts(
    input: GetProductsCommandInput,
  ): Promise<Pick<GetProductsCommandOutput, 'PriceList' | 'NextToken'>>;
}

/** A PriceList item as text: the SDK gives strings (or its LazyJsonString, a String). */
function itemText(item: unknown): string {
  if (typeof item === 'string') return item;
  if (item instanceof String) return item.toString();
  return JSON.stringify(item) ?? '';
}

/** One query of the Price List: a service code and exact-match (or any-of) filters. */
export interface PriceQuery {
  readonly serviceCode: string;
  /** Field → value (TERM_MATCH), or field → values (ANY_OF). */
  readonly filters: Readonly<Record<string, string | readonly string[]>>;
}

/** The query as `GetProducts` takes it. */
export function getProductsInput(q: PriceQuery, nextToken?: string): GetProductsCommandInput {
  return {
    ServiceCode: q.serviceCode,
    FormatVersion: 'aws_v1',
    MaxResults: 100,
    Filters: Object.entries(q.filters).map(([Field, v]) =>
      typeof v === 'string'
        ? { Type: 'TERM_MATCH' as const, Field, Value: v }
        : { Type: 'ANY_OF' as const, Field, Value: v.join(',') },
    ),
    ...(nextToken !== undefined ? { NextToken: nextToken } : {}),
  };
}

/** Every product `q` matches, parsed; PriceListError on a hostile answer, the SDK's error on a failed call. */
export async function fetchProducts(client: PriceListClient, q: PriceQuery): Promise<PricedProduct[]> {
  const out: PricedProduct[] = [];
  let token: string | undefined;
  let bytes = 0;
  for (let page = 1; ; page++) {
    if (page > MAX_PAGES)
      throw new PriceListError(
        `${q.serviceCode}: more than ${MAX_PAGES} pages for one filtered query; refused`,
      );
    const answer = await client.getProducts(getProductsInput(q, token));
    // The SDK types PriceList items as its LazyJsonString (any): each is read as text below.
    const list = (answer.PriceList ?? []) as readonly unknown[];
    list.forEach((item, i) => {
      const text = itemText(item);
      bytes += Buffer.byteLength(text, 'utf8');
      if (bytes > MAX_ANSWER_BYTES)
        throw new PriceListError(
          `${q.serviceCode}: an answer of more than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB for one filtered query; refused`,
        );
      out.push(parsePriceListEntry(text, `${q.serviceCode} page ${page}, entry ${i + 1}`));
    });
    token = answer.NextToken ?? undefined;
    if (token === undefined || token === '') return out;
  }
}
