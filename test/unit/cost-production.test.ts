import * as path from 'node:path';
import { loadLabFile } from '../../lib/config/load';
import type { LabConfig } from '../../lib/config/types';
import { PRICE_TABLES_COMMITTED, type PriceTable } from '../../lib/cost/price-table';
import {
  appHostsFlag,
  formatProductionBill,
  linesText,
  productionBill,
  usdPerMillionTransactions,
} from '../../lib/cost/production';
import { localTargetPrices } from '../../lib/cost/local-prices';
import { runTargetPrices } from '../../scripts/commands/run';

const US = PRICE_TABLES_COMMITTED['us-east-1'] as PriceTable;
const OWN = path.join(__dirname, '..', '..', 'labs', 'own-workload.json');
const own = (): LabConfig => loadLabFile(OWN);

describe('productionBill', () => {
  test('own-workload: RDS Proxy on the writer, and an HA PgBouncer pair behind an NLB', () => {
    // GIVEN the lab (db.r6g.large writer, one proxy, a PgBouncer on c7g.large) at us-east-1 prices
    const bill = productionBill(own(), US);
    // THEN
    expect(bill).toMatchObject({ region: 'us-east-1', pricesAsOf: US.asOf, databaseUsdPerMonth: 187.2 });
    expect(bill.options.map((o) => [o.option, o.usdPerMonth])).toEqual([
      ['RDS Proxy proxy', 21.6], // 2 vCPU × $0.015 × 720
      ['PgBouncer bouncer (HA pair)', 123.16], // 2 × $0.0725 × 720 + 2 × 16 GB × $0.08 + $0.0225 × 720
    ]);
    expect(formatProductionBill(bill)).toContain(
      `Production, per 720-hour month (us-east-1 on-demand prices as of ${US.asOf}):`,
    );
  });

  test('RDS Proxy bills the vCPUs of the writer and every reader, and at least the minimum', () => {
    const lab = own();
    if (lab.database.engine !== 'aurora-postgresql') throw new Error('own-workload is Aurora');
    const withReaders = { ...lab, database: { ...lab.database, readers: 2 } } as LabConfig;
    expect(productionBill(withReaders, US).options[0]?.usdPerMonth).toBe(64.8); // 6 vCPU
    expect(productionBill(withReaders, US).options[0]?.lines[0]?.note).toMatch(
      /^6 vCPU \(3 × db\.r6g\.large, minimum 2\)/,
    );
  });

  test('Aurora Serverless v2: the proxy bills the maximum ACUs, at least 8', () => {
    const lab = own();
    if (lab.database.engine !== 'aurora-postgresql') throw new Error('own-workload is Aurora');
    const serverless = {
      ...lab,
      database: { ...lab.database, capacity: { kind: 'serverless', minCapacityAcu: 0.5, maxCapacityAcu: 2 } },
    } as LabConfig;
    expect(productionBill(serverless, US).options[0]?.usdPerMonth).toBe(86.4); // 8 ACU (minimum) × $0.015 × 720
  });

  test('without an NLB price the pair is unknown, never a total without it', () => {
    const { nlbPerHour: _gone, ...noNlb } = US;
    const pair = productionBill(own(), noNlb).options[1];
    expect(pair?.usdPerMonth).toBeNull();
    expect(pair?.lines[2]?.note).toBe(`no NLB price in the us-east-1 prices as of ${US.asOf}`);
    expect(formatProductionBill(productionBill(own(), noNlb))).toContain(
      'PgBouncer bouncer (HA pair): unknown',
    );
  });

  test('--app-hosts: the pooler on each application host adds no host and no load balancer', () => {
    const pooler = productionBill(own(), US, { appHosts: 4 }).options[1];
    expect(pooler).toMatchObject({ option: 'PgBouncer bouncer (per app host)', usdPerMonth: 0 });
    expect(pooler?.lines[0]?.note).toMatch(/4 pools, each holding its own server connections/);
  });
});

describe('proxylab run --app-hosts N: what the run records for the production column', () => {
  test("each pooler target records the pooler on N application hosts, the same lines as cost's bill", () => {
    // GIVEN own-workload (RDS Proxy + a dedicated PgBouncer with transaction and session pools) at us-east-1
    const prices = runTargetPrices(own(), 'us-east-1', US, 4);
    const bill = productionBill(own(), US, { appHosts: 4 });
    const pooler = bill.options.find((o) => o.instance === 'bouncer');
    // THEN both pool targets record the per-app-host option, marked with its shape
    for (const target of ['bouncer-transaction', 'bouncer-session']) {
      const p = prices.find((x) => x.target === target)?.production;
      expect(p).toMatchObject({ appHosts: 4, usdPerMonth: 0, usdPerHour: 0, hostChoices: null });
      expect(p?.basis).toBe(linesText(pooler?.lines ?? []));
      expect(p?.basis).toMatch(/^PgBouncer on 4 application host\(s\) adds no host or load balancer/);
    }
    // AND RDS Proxy and direct are priced as without the flag (it shapes the self-hosted poolers only)
    const plain = runTargetPrices(own(), 'us-east-1', US);
    expect(prices.find((x) => x.target === 'proxy')?.production).toEqual(
      plain.find((x) => x.target === 'proxy')?.production,
    );
    expect(prices.find((x) => x.target === 'proxy')?.production?.appHosts).toBeNull();
    // AND the default stays the HA pair
    expect(plain.find((x) => x.target === 'bouncer-transaction')?.production).toMatchObject({
      appHosts: null,
      usdPerMonth: 123.16,
    });
  });
});

describe('usdPerMillionTransactions', () => {
  test.each([
    [21.6, 100, 21.6 / 259.2],
    [21.6, null, null],
    [null, 100, null],
    [21.6, 0, null],
  ])('$%s a month at %s tps → %s per million', (usd, tps, want) => {
    const got = usdPerMillionTransactions(usd, tps);
    if (want === null) expect(got).toBeNull();
    else expect(got).toBeCloseTo(want, 10);
  });
});

describe('--app-hosts', () => {
  test.each(['0', '-1', '1.5', 'two', ''])('%j is refused naming the flag', (text) => {
    expect(() => appHostsFlag(text)).toThrow(
      `--app-hosts must be a whole number of application hosts ≥ 1, got "${text}"`,
    );
  });
  test('a whole number is taken', () => expect(appHostsFlag('3')).toBe(3));
});

describe('localTargetPrices (--price-region for local runs)', () => {
  test('direct adds $0; a PgBouncer target is its HA pair per hour, marked local throughput at cloud prices', () => {
    const prices = localTargetPrices(
      [
        { name: 'direct', product: null },
        { name: 'pgbouncer-transaction', product: 'PgBouncer' },
      ],
      US,
      'c7g.large',
    );
    expect(prices.map((p) => [p.target, p.usdPerHour])).toEqual([
      ['direct', 0],
      ['pgbouncer-transaction', 0.171056], // $123.16 a month / 720
    ]);
    expect(prices[1]?.basis).toMatch(
      /^local throughput, cloud prices \(us-east-1 as of \d{4}-\d{2}-\d{2}\): PgBouncer as an HA pair/,
    );
    expect(usdPerMillionTransactions(123.16, 1000)).toBeCloseTo(123.16 / 2592, 10);
  });

  test('a host type the region does not price leaves the target unknown', () => {
    const [, p] = localTargetPrices(
      [
        { name: 'direct', product: null },
        { name: 'pgbouncer-session', product: 'PgBouncer' },
      ],
      US,
      'z9.large',
    );
    expect(p?.usdPerHour).toBeNull();
    expect(p?.basis).toContain('z9.large: no us-east-1 price');
  });
});
