/**
 * The parser of the AWS Price List Query API's answers (`GetProducts`' `PriceList`: one JSON string
 * per product, https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_pricing_GetProducts.html).
 * Each string is a product (`product.sku`, `product.attributes`) with its terms; only the
 * `OnDemand` term's first tier is read (`priceDimensions.*.pricePerUnit.USD`, `unit`).
 *
 * Hostile answers are refused, naming the entry and what was wrong, never turned into a number:
 * a string that is not JSON or not the shape below, an entry of more than `MAX_ENTRY_BYTES`, a price
 * that is not a positive decimal (0, negative, `NaN`, empty), a price in a currency other than USD,
 * and a product with no on-demand price. An answer as a whole is bounded by the client wrapper
 * (./client.ts, `MAX_ANSWER_BYTES`).
 */
import { z } from 'zod';
import { UsageError } from '../../core/errors';

/** One product entry is a few KiB (EC2's, with all reserved terms, up to ≈ 30 KiB). */
export const MAX_ENTRY_BYTES = 256 * 1024;

/** What the kit keeps of one product: its SKU, attributes, and the on-demand price per unit. */
export interface PricedProduct {
  readonly sku: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** The Price List's unit, as written (`Hrs`, `GB-Mo`, `IOs`, `ACU-Hr`, `vCPU-Hours` …). */
  readonly unit: string;
  readonly usd: number;
  /** The dimension's own description, for messages. */
  readonly description: string;
}

/** A Price List answer the kit refuses: the message names the entry and why. */
export class PriceListError extends UsageError {
  constructor(message: string) {
    super(message, { code: 'price-list-refused' });
    this.name = 'PriceListError';
  }
}

const Dimension = z.object({
  unit: z.string().min(1),
  pricePerUnit: z.record(z.string(), z.string()),
  beginRange: z.string().optional(),
  description: z.string().optional(),
});

const Entry = z.object({
  product: z.object({
    sku: z.string().min(1),
    attributes: z.record(z.string(), z.string()),
  }),
  terms: z
    .object({
      OnDemand: z
        .record(z.string(), z.object({ priceDimensions: z.record(z.string(), Dimension) }))
        .optional(),
    })
    .passthrough(),
});

/** A positive decimal as the Price List writes prices ("0.0730000000"); anything else is null. */
function positiveDecimal(text: string): number | null {
  if (!/^\d+(\.\d+)?$/.test(text.trim())) return null;
  const n = Number(text);
  return Number.isFinite(n) && n > 0 ? n : null;
}

/**
 * One PriceList string as a priced product; `where` names it in messages (e.g.
 * `AmazonRDS answer 3, entry 12`). Throws PriceListError.
 */
export function parsePriceListEntry(text: string, where: string): PricedProduct {
  if (Buffer.byteLength(text, 'utf8') > MAX_ENTRY_BYTES)
    throw new PriceListError(
      `${where}: an entry of ${text.length} characters (at most ${MAX_ENTRY_BYTES} bytes is a product)`,
    );
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new PriceListError(`${where}: not JSON (${(e as Error).message})`);
  }
  const parsed = Entry.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PriceListError(
      `${where}: not a Price List product (${issue ? `${issue.path.join('.') || 'entry'}: ${issue.message}` : 'unknown shape'})`,
    );
  }
  const { product, terms } = parsed.data;
  const dims = Object.values(terms.OnDemand ?? {}).flatMap((t) => Object.values(t.priceDimensions));
  // Tiered prices (data processed, I/O) list a dimension per tier: the first tier (from 0) is what a lab pays.
  const first = dims.find((d) => d.beginRange === undefined || d.beginRange === '0');
  if (first === undefined)
    throw new PriceListError(
      `${where} (SKU ${product.sku}): no on-demand price (terms: ${Object.keys(terms).join(', ') || 'none'})`,
    );
  const currencies = Object.keys(first.pricePerUnit);
  const text$ = first.pricePerUnit.USD;
  if (text$ === undefined)
    throw new PriceListError(
      `${where} (SKU ${product.sku}): priced in ${currencies.join(', ') || 'no currency'}, not USD (the kit compares US dollars only)`,
    );
  const usd = positiveDecimal(text$);
  if (usd === null)
    throw new PriceListError(
      `${where} (SKU ${product.sku}): price ${JSON.stringify(text$)} USD per ${first.unit} is not a positive number (a price of 0 or below would be a wrong total)`,
    );
  return {
    sku: product.sku,
    attributes: product.attributes,
    unit: first.unit,
    usd,
    description: first.description ?? '',
  };
}
