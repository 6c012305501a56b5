import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GetProductsCommandInput } from '@aws-sdk/client-pricing';
import { cachedDates, readCachedTable, writeCachedTable } from '../../lib/cost/pricelist/cache';
import { fetchProducts, MAX_ANSWER_BYTES, type PriceListClient } from '../../lib/cost/pricelist/client';
import { parsePriceListEntry, PriceListError } from '../../lib/cost/pricelist/parse';
import { pricesFor, pricesLine } from '../../lib/cost/pricelist/prices-for';
import { fetchPriceTable } from '../../lib/cost/pricelist/table';
import { PRICE_TABLES_COMMITTED, type PriceTable } from '../../lib/cost/price-table';
import { comparePriceTables } from '../../lib/cost/pricelist/compare';
import { priceListEntry, stubCatalogue, stubGetProducts, type StubProduct } from '../helpers/price-list-stub';
import { scratchDir } from '../helpers/scratch';

const NOW = new Date('2026-11-28T12:00:00Z');
const US = PRICE_TABLES_COMMITTED['us-east-1'];

/** A port over the stub, recording every input. */
function stubClient(catalogue: readonly StubProduct[], pageSize = 40, entry = priceListEntry) {
  const inputs: GetProductsCommandInput[] = [];
  const get = stubGetProducts(catalogue, pageSize, entry);
  const client: PriceListClient = {
    getProducts: (input) => {
      inputs.push(input);
      return Promise.resolve(get(input));
    },
  };
  return { client, inputs };
}

const product: StubProduct = {
  attributes: { servicecode: 'AmazonEC2', regionCode: 'eu-west-1', usagetype: 'EU-NatGateway-Hours' },
  unit: 'Hrs',
  price: '0.0480000000',
};

describe('parsePriceListEntry', () => {
  test('reads the on-demand price, its unit and the attributes', () => {
    // GIVEN / WHEN
    const p = parsePriceListEntry(priceListEntry(product, 'SKU1'), 'e');
    // THEN
    expect(p).toEqual({
      sku: 'SKU1',
      attributes: product.attributes,
      unit: 'Hrs',
      usd: 0.048,
      description: 'stub Hrs',
    });
  });

  test.each([
    ['not JSON', '{"product":', /not JSON/],
    ['not a product', JSON.stringify({ terms: {} }), /not a Price List product \(product: /],
    [
      'a price of 0',
      priceListEntry({ ...product, price: '0.0000000000' }, 'S'),
      /"0.0000000000" USD per Hrs is not a positive number/,
    ],
    [
      'a negative price',
      priceListEntry({ ...product, price: '-0.01' }, 'S'),
      /"-0.01" USD .*not a positive number/,
    ],
    ['an empty price', priceListEntry({ ...product, price: '' }, 'S'), /"" USD .*not a positive number/],
    ['another currency', priceListEntry({ ...product, currency: 'CNY' }, 'S'), /priced in CNY, not USD/],
    [
      'no on-demand term',
      JSON.stringify({ product: { sku: 'S', attributes: {} }, terms: { Reserved: {} } }),
      /no on-demand price \(terms: Reserved\)/,
    ],
    ['a huge entry', 'x'.repeat(300 * 1024), /an entry of 307200 characters/],
  ])('%s is refused, naming the entry', (_what, text, why) => {
    expect(() => parsePriceListEntry(text, 'AmazonEC2 page 1, entry 3')).toThrow(PriceListError);
    expect(() => parsePriceListEntry(text, 'AmazonEC2 page 1, entry 3')).toThrow(why);
  });
});

describe('fetchProducts', () => {
  test('follows NextToken through every page with the filters as GetProducts takes them', async () => {
    // GIVEN pages of one product over the EC2 NAT gateway products
    const { client, inputs } = stubClient(stubCatalogue('eu-west-1'), 1);
    // WHEN
    const got = await fetchProducts(client, {
      serviceCode: 'AmazonEC2',
      filters: { regionCode: 'eu-west-1', productFamily: 'NAT Gateway' },
    });
    // THEN two products over two pages, the second asked with the first's token
    expect(got.map((p) => p.attributes.usagetype)).toEqual(['EU-NatGateway-Hours', 'EU-NatGateway-Bytes']);
    expect(inputs.map((i) => i.NextToken)).toEqual([undefined, '1']);
    expect(inputs[0]?.Filters).toEqual([
      { Type: 'TERM_MATCH', Field: 'regionCode', Value: 'eu-west-1' },
      { Type: 'TERM_MATCH', Field: 'productFamily', Value: 'NAT Gateway' },
    ]);
  });

  test('an answer of tens of MB is refused before it is priced', async () => {
    // GIVEN entries of ≈ 200 KiB, endlessly paged
    const big = priceListEntry(
      { ...product, attributes: { ...product.attributes, pad: 'x'.repeat(200 * 1024) } },
      'S',
    );
    const client: PriceListClient = {
      getProducts: () => Promise.resolve({ PriceList: Array(10).fill(big) as string[], NextToken: 'more' }),
    };
    // WHEN / THEN
    await expect(fetchProducts(client, { serviceCode: 'AmazonEC2', filters: {} })).rejects.toThrow(
      `AmazonEC2: an answer of more than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB for one filtered query; refused`,
    );
  });
});

describe('fetchPriceTable', () => {
  test('prices every line of the committed table for eu-west-1, dated the day it was read', async () => {
    // GIVEN eu-west-1 at 1.1 × us-east-1
    const { client } = stubClient(stubCatalogue('eu-west-1', 1.1));
    // WHEN
    const t = await fetchPriceTable('eu-west-1', client, NOW);
    // THEN
    expect(t.region).toBe('eu-west-1');
    expect(t.asOf).toBe('2026-11-28');
    expect(Object.keys(t.auroraInstances).sort()).toEqual(Object.keys(US?.auroraInstances ?? {}).sort());
    expect(t.auroraInstances['db.r6g.large']).toEqual({
      usdPerHour: 0.286,
      vcpus: 2,
      memoryGiB: 16,
      source: 'aws-price-list-api',
    });
    expect(t.auroraInstances['db.t4g.medium']?.baselineCpuPercent).toBe(20);
    expect(t.rdsPostgresInstances['db.t4g.micro']?.usdPerHourMultiAz).toBeCloseTo(0.0352, 10);
    expect(t.ec2Instances['c7g.large']?.usdPerHour).toBeCloseTo(0.07975, 10);
    expect(t.auroraIoPerMillionRequests.usd).toBeCloseTo(0.22, 10);
    expect(t.auroraIoOptimized.computeMultiplier).toBe(1.3);
    expect(t.rdsProxyPerVcpuHour.usd).toBeCloseTo(0.0165, 10);
    expect(t.rdsProxyPerAcuHour.usd).toBeCloseTo(0.0165, 10);
    expect(t.publicIpv4PerHour.usd).toBeCloseTo(0.0055, 10);
    expect(t.nlbPerHour?.usd).toBeCloseTo(0.02475, 10);
  });

  test('a class the region does not sell is absent, not guessed', async () => {
    const { client } = stubClient(
      stubCatalogue('eu-west-1').filter((p) => p.attributes.instanceType !== 'db.r8g.large'),
    );
    const t = await fetchPriceTable('eu-west-1', client, NOW);
    expect(t.auroraInstances['db.r8g.large']).toBeUndefined();
    expect(t.auroraInstances['db.r8g.xlarge']).toBeDefined();
  });

  test.each([
    [
      'a line the region does not sell',
      (c: StubProduct[]) => c.filter((p) => p.attributes.productFamily !== 'RDS Proxy'),
      /rdsProxyPerVcpuHour: the Price List has no AmazonRDS product for it in eu-west-1/,
    ],
    [
      'two prices for one line',
      (c: StubProduct[]) => [
        ...c,
        { ...c.find((p) => p.attributes.usagetype === 'EU-NatGateway-Hours')!, price: '9.0' },
      ],
      /natGatewayPerHour: 2 products in eu-west-1 at different prices/,
    ],
    [
      "a unit other than the line's",
      (c: StubProduct[]) =>
        c.map((p) => (p.attributes.usagetype === 'EU-VpcEndpoint-Bytes' ? { ...p, unit: 'Hrs' } : p)),
      /interfaceEndpointPerGb: SKU \S+ is priced per "Hrs"/,
    ],
    ['an empty answer', () => [], /the Price List has no \S+ product for it in eu-west-1/],
  ])('%s is refused by name', async (_what, edit, why) => {
    const { client } = stubClient(edit(stubCatalogue('eu-west-1')));
    await expect(fetchPriceTable('eu-west-1', client, NOW)).rejects.toThrow(why);
  });
});

describe('the disk cache', () => {
  test('writes one file per region and date and reads it back; a tampered file is refused by name', async () => {
    // GIVEN
    const root = scratchDir('prices-');
    const { client } = stubClient(stubCatalogue('eu-west-1'));
    const t = await fetchPriceTable('eu-west-1', client, NOW);
    // WHEN
    const file = writeCachedTable(root, t);
    // THEN
    expect(path.relative(root, file)).toBe(path.join('eu-west-1', '2026-11-28.json'));
    expect(readCachedTable(root, 'eu-west-1', '2026-11-28')).toEqual(t);
    expect(readCachedTable(root, 'eu-west-1', '2026-11-27')).toBeNull();
    expect(cachedDates(root, 'eu-west-1')).toEqual(['2026-11-28']);
    // a price set to 0 by hand
    fs.writeFileSync(
      file,
      JSON.stringify({ ...t, natGatewayPerHour: { usd: 0, source: 'aws-price-list-api' } }),
    );
    expect(() => readCachedTable(root, 'eu-west-1', '2026-11-28')).toThrow(
      /cached prices .*2026-11-28\.json: natGatewayPerHour\.usd: .*delete the file/,
    );
  });
});

describe('pricesFor', () => {
  test('reads the Price List once, then answers from the cache of the day', async () => {
    const root = scratchDir('prices-');
    const { client, inputs } = stubClient(stubCatalogue('eu-west-1'));
    const first = await pricesFor('eu-west-1', { cache: root, client, now: NOW });
    const asked = inputs.length;
    const second = await pricesFor('eu-west-1', { cache: root, client, now: NOW });
    expect(first).toMatchObject({ ok: true, from: 'price-list', asOf: '2026-11-28' });
    expect(second).toMatchObject({ ok: true, from: 'cache', asOf: '2026-11-28' });
    expect(asked).toBeGreaterThan(0);
    expect(inputs).toHaveLength(asked);
    if (second.ok)
      expect(pricesLine(second)).toBe('eu-west-1 prices as of 2026-11-28 (AWS Price List, cached today)');
  });

  test('without credentials: an older cache with its date, else us-east-1 the committed table, else one reason', async () => {
    const root = scratchDir('prices-');
    const { client } = stubClient(stubCatalogue('eu-west-1'));
    await pricesFor('eu-west-1', { cache: root, client, now: new Date('2026-11-20T00:00:00Z') });
    const noCreds: PriceListClient = {
      getProducts: () =>
        Promise.reject(
          Object.assign(new Error('Could not load credentials from any providers'), {
            name: 'CredentialsProviderError',
          }),
        ),
    };
    const older = await pricesFor('eu-west-1', { cache: root, client: noCreds, now: NOW });
    expect(older).toMatchObject({ ok: true, from: 'older-cache', asOf: '2026-11-20' });
    const committed = await pricesFor('us-east-1', { cache: root, client: noCreds, now: NOW });
    expect(committed).toMatchObject({ ok: true, from: 'committed', asOf: US?.asOf });
    const none = await pricesFor('eu-south-2', { cache: root, client: noCreds, now: NOW });
    expect(none.ok).toBe(false);
    if (!none.ok)
      expect(none.reason).toBe(
        'no prices for region eu-south-2: the AWS Price List could not be read: no AWS credentials ' +
          `(Could not load credentials from any providers); no cached prices under ${root}/eu-south-2; the committed ` +
          'table covers only us-east-1 (give AWS credentials allowed pricing:GetProducts, as `proxylab iam-policy` ' +
          'prints, and run again to read and cache them)',
      );
  });

  test.each(['us-gov-west-1', 'cn-north-1', 'mars-1'])('%s is not a commercial region', async (region) => {
    const got = await pricesFor(region, { cache: null, client: null, now: NOW });
    expect(got).toMatchObject({ ok: false });
    if (!got.ok) expect(got.reason).toMatch(/is not a commercial AWS region/);
  });

  test('a hostile answer is never priced from: us-east-1 falls back to the committed table and says why', async () => {
    const zero = (p: StubProduct, sku: string) =>
      priceListEntry(p.attributes.usagetype === 'EU-LoadBalancerUsage' ? { ...p, price: '0' } : p, sku);
    const { client } = stubClient(stubCatalogue('us-east-1'), 40, zero);
    const got = await pricesFor('us-east-1', { cache: null, client, now: NOW });
    expect(got).toMatchObject({ ok: true, from: 'committed' });
    if (got.ok)
      expect(got.note).toMatch(
        /AWSELB page 1, entry \d+ \(SKU \S+\): price "0" USD per Hrs is not a positive number/,
      );
  });
});

describe('comparePriceTables (scripts/cost-table.ts --prices)', () => {
  test('names each price that differs, is missing or is new', async () => {
    // GIVEN the Price List answering us-east-1 at the committed prices, but for one class and NAT
    const catalogue = stubCatalogue('us-east-1', 1)
      .filter((p) => p.attributes.instanceType !== 'c7g.16xlarge')
      .map((p) => (p.attributes.usagetype === 'EU-NatGateway-Hours' ? { ...p, price: '0.0500000000' } : p));
    const fetched = await fetchPriceTable('us-east-1', stubClient(catalogue).client, NOW);
    // WHEN
    const diff = comparePriceTables(US as PriceTable, fetched);
    // THEN
    expect(diff).toContain('natGatewayPerHour.usd: committed 0.045 → Price List 0.05');
    expect(diff).toContain(
      'ec2Instances.c7g.16xlarge.usdPerHour: committed 2.32 → not in the Price List answer',
    );
    expect(
      diff.filter(
        (l) =>
          !/^(natGatewayPerHour|ec2Instances\.c7g\.16xlarge|auroraIoOptimized\.computeMultiplier)/.test(l),
      ),
    ).toEqual([]);
  });
});
