/**
 * One rule for every command (issue 41): validate, plan, cost, deploy and run price a region through
 * `preparePrices` (lib/cost/pricelist/command.ts → pricesFor), against a Price List stub whose every
 * request is checked against botocore's pricing model and the operator's `read` policy.
 */
import * as path from 'node:path';
import { GetProductsCommand, PricingClient } from '@aws-sdk/client-pricing';
import { loadLabFile } from '../../lib/config/load';
import type { LabConfig } from '../../lib/config/types';
import { UsageError } from '../../lib/core/errors';
import { estimateCost } from '../../lib/cost/estimate';
import { deployPreflight } from '../../lib/cost/preflight';
import { unpricedProblems, unpricedRegionMessage } from '../../lib/cost/price-check';
import { commandPrices, noClientReason, preparePrices } from '../../lib/cost/pricelist/command';
import { pricesLine } from '../../lib/cost/pricelist/prices-for';
import { PRICE_TABLES_COMMITTED } from '../../lib/cost/price-table';
import { formatRunPlan, previewRun } from '../../lib/cost/run-plan';
import { mockAws } from '../helpers/aws-calls/recorder';
import { operator } from '../helpers/aws-calls/principals';
import { stubCatalogue, stubGetProducts } from '../helpers/price-list-stub';
import { scratchDir } from '../helpers/scratch';

const NOW = new Date('2026-11-28T12:00:00Z');
const DEFAULT_LAB = path.join(__dirname, '..', '..', 'labs', 'default.json');
const inEuWest1 = (): LabConfig => ({ ...loadLabFile(DEFAULT_LAB), region: 'eu-west-1' });
const rawEuWest1 = (): Record<string, unknown> => ({ name: 'default', region: 'eu-west-1' });

describe('a lab in eu-west-1, priced from the Price List', () => {
  test('validate, plan, cost and deploy --dry-run all accept it and show eu-west-1 prices with their date', async () => {
    // GIVEN the Price List answering for eu-west-1, as the operator's read policy allows
    const pricing = mockAws(PricingClient, operator('read'));
    pricing.on(GetProductsCommand).callsFake(stubGetProducts(stubCatalogue('eu-west-1', 1.1)));
    const env = { PROXYLAB_PRICE_CACHE: scratchDir('prices-') };
    // WHEN a command prepares the region's prices
    const prices = await preparePrices('eu-west-1', {
      sdk: new PricingClient({ region: 'eu-central-1' }),
      env,
      now: NOW,
    });
    // THEN they are read, dated, and every command's check reads them
    expect(prices).toMatchObject({ ok: true, from: 'price-list', asOf: '2026-11-28' });
    expect(pricing.commandCalls(GetProductsCommand).length).toBeGreaterThan(5);
    if (prices.ok)
      expect(pricesLine(prices)).toBe('eu-west-1 prices as of 2026-11-28 (AWS Price List, read now)');
    if (!prices.ok) throw new Error('unreachable');
    // Each command passes the table it resolved down: nothing process-wide is left behind.
    const table = prices.table;
    expect(unpricedProblems(rawEuWest1(), table)).toEqual([]); // validate
    expect(unpricedProblems(rawEuWest1())[0]?.path).toBe('region'); // without the table: not priced
    const estimate = estimateCost(inEuWest1(), { table }); // cost
    expect([estimate.region, estimate.priceTableAsOf]).toEqual(['eu-west-1', '2026-11-28']);
    const usEast = estimateCost({ ...inEuWest1(), region: 'us-east-1' }, { table });
    expect(usEast.priceTableAsOf).toBe(PRICE_TABLES_COMMITTED['us-east-1']?.asOf); // another region's table is not used
    expect(estimate.totals.perHourUsdMax).toBeGreaterThan(usEast.totals.perHourUsdMax);
    const plan = formatRunPlan(previewRun(inEuWest1(), 'smoke', { table })); // plan
    expect(plan).toMatch(/\(eu-west-1, prices as of 2026-11-28\)/);
    const deploy = deployPreflight(inEuWest1(), { region: 'eu-west-1', regionFrom: 'deploy', table }); // deploy --dry-run
    expect(deploy.table).toMatch(/prices as of 2026-11-28/);
    expect(deploy.estimate.region).toBe('eu-west-1');
  });
});

describe('without credentials and without a cache', () => {
  test('validate, plan, cost and deploy say the same one-line reason', async () => {
    // GIVEN no AWS credentials in the environment and an empty cache
    const env = { PROXYLAB_PRICE_CACHE: scratchDir('prices-'), HOME: scratchDir('home-') };
    // WHEN
    const prices = await preparePrices('eu-west-1', { env, now: NOW });
    // THEN
    expect(prices.ok).toBe(false);
    const reason = prices.ok ? '' : prices.reason;
    expect(reason).toMatch(
      /^no prices for region eu-west-1: the AWS Price List was not asked: no AWS credentials configured/,
    );
    expect(reason).not.toMatch(/\n/);
    const message = unpricedRegionMessage('eu-west-1');
    expect(message).toContain(reason);
    expect(unpricedProblems(rawEuWest1())).toEqual([{ path: 'region', value: 'eu-west-1', message }]); // validate
    let costError: unknown = null;
    try {
      estimateCost(inEuWest1()); // cost, and deploy's preflight
    } catch (e) {
      costError = e;
    }
    expect(costError).toBeInstanceOf(UsageError);
    expect((costError as Error).message).toBe(`region eu-west-1 ${message}`);
    const plan = formatRunPlan(previewRun(inEuWest1(), 'smoke')); // plan
    expect(plan).toContain(message);
    expect(PRICE_TABLES_COMMITTED['eu-west-1']).toBeUndefined();
  });

  test.each([
    [{}, 'eu-west-1', /^no AWS credentials configured/],
    [
      { AWS_SHARED_CREDENTIALS_FILE: '/dev/null', AWS_CONFIG_FILE: '/dev/null' },
      'eu-west-1',
      /^no AWS credentials configured/,
    ],
    [{ AWS_PROFILE: 'lab' }, 'eu-west-1', null],
    [{ AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE' }, 'eu-west-1', null],
    [{ AWS_PROFILE: 'lab', PROXYLAB_PRICES: 'offline' }, 'eu-west-1', /^PROXYLAB_PRICES=offline$/],
    [{ AWS_PROFILE: 'lab' }, 'us-east-1', /^us-east-1 has the committed table/],
    [{ AWS_PROFILE: 'lab', PROXYLAB_PRICES: 'live' }, 'us-east-1', null],
  ])('env %j, region %s: the Price List is asked unless %s', (env, region, why) => {
    const got = noClientReason(region, env, scratchDir('home-'));
    if (why === null) expect(got).toBeNull();
    else expect(got).toMatch(why);
  });

  test('us-east-1 is priced from the committed table without a call, and says so without a note', async () => {
    const prices = await commandPrices('us-east-1', {
      env: { PROXYLAB_PRICE_CACHE: scratchDir('prices-') },
      now: NOW,
    });
    expect(prices).toMatchObject({ ok: true, from: 'committed', note: null });
  });
});
