/**
 * `proxylab settings [product] [--version V] [--json]` (scripts/commands/settings.ts,
 * lib/cli/settings-catalogue.ts): the products with a catalogue, one product's catalogue at a pinned
 * release (defaults by version, settings the release lacks, proxylab's own and refused ones marked),
 * and usage errors that name what is allowed.
 */
import { catalogueAt, type CatalogueAt, type PinnedVersions } from '../../lib/cli/settings-catalogue';
import { PGBOUNCER_RELEASES } from '../../lib/poolers/pgbouncer/releases';
import { runCliInProcess } from '../helpers/cli';

const PGBOUNCER_PINS = PGBOUNCER_RELEASES.map((r) => r.version);

test('no product: the three products with settings, their counts and pinned releases', async () => {
  // WHEN
  const r = await runCliInProcess(['settings']);
  // THEN
  expect(r.code).toBe(0);
  const lines = r.out.split('\n').filter((l) => /^ {2}\S/.test(l));
  expect(lines.map((l) => l.trim().split(/\s+/)[0])).toEqual(['rds-proxy', 'pgbouncer', 'pgdoorman']);
  expect(lines[0]).toMatch(/RDS Proxy +10 settings, 2 a lab may set +no versions$/);
  expect(lines[1]).toContain(`versions ${PGBOUNCER_PINS.join(', ')}`);
});

test('--json without a product: one object per product with its count', async () => {
  const r = await runCliInProcess(['settings', '--json']);
  const list = JSON.parse(r.out) as Array<{ product: string; settings: number; versions: string[] }>;
  expect(list.map((p) => p.product)).toEqual(['rds-proxy', 'pgbouncer', 'pgdoorman']);
  expect(list.find((p) => p.product === 'pgbouncer')?.versions).toEqual(PGBOUNCER_PINS);
  expect(list.every((p) => p.settings > 0)).toBe(true);
});

describe('one product at a version', () => {
  test('PgBouncer 1.24.1: defaults of that release, later settings listed as absent', async () => {
    // WHEN
    const r = await runCliInProcess(['settings', 'pgbouncer', '--version', '1.24.1', '--json']);
    // THEN
    expect(r.code).toBe(0);
    const c = JSON.parse(r.out) as CatalogueAt;
    expect(c.version).toBe('1.24.1');
    const row = (name: string) => c.settings.find((s) => s.name === name);
    expect(row('server_login_retry')).toMatchObject({ default: 15, defaultText: '15 s', area: 'failure' });
    // server_check_query's default changed in 1.25: 1.24.1 has the old one
    expect(row('server_check_query')?.default).toBe('select 1');
    expect(row('transaction_timeout')).toBeUndefined();
    expect(c.notInVersion).toContainEqual({ name: 'transaction_timeout', since: '1.25' });
    expect(row('default_pool_size')?.setBy).toMatch(/poolPercent/);
  });

  test('PgBouncer 1.25.2 as text: the new default, proxylab-set ones marked', async () => {
    const r = await runCliInProcess(['settings', 'pgbouncer', '--version', '1.25.2']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^PgBouncer 1\.25\.2 settings/);
    expect(r.out).toMatch(/\n {2}server_check_query {2}one line of text[^\n]*; default ""\n/);
    expect(r.out).toMatch(/\n {2}transaction_timeout {2}number 0–86400 seconds; default 0 s, since 1\.25\n/);
    expect(r.out).toMatch(
      /\n {2}default_pool_size [^\n]*\n[^\n]*\n {6}set by proxylab: from the pooler's `poolPercent`/,
    );
  });

  test('RDS Proxy: the refused SessionPinningFilters says why', async () => {
    const r = await runCliInProcess(['settings', 'rds-proxy']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^RDS Proxy settings \(10; no versions\)/);
    expect(r.out).toMatch(
      /SessionPinningFilters [^\n]*\n[^\n]*\n {6}refused: is not available for PostgreSQL/,
    );
    expect(r.out).toMatch(/IdleClientTimeout {2}integer 1–28800 seconds; default 1800 s\n/);
  });
});

test.each([
  [
    ['settings', 'pgbouncer', '--version', '1.18.0'],
    new RegExp(`"1\\.18\\.0" is not a PgBouncer release proxylab pins; one of ${PGBOUNCER_PINS.join(', ')}`),
  ],
  [['settings', 'rds-proxy', '--version', '1'], /RDS Proxy has no versions/],
  [
    ['settings', 'pgbounce'],
    /no product "pgbounce"; the products with settings are rds-proxy, pgbouncer, pgdoorman/,
  ],
  [['settings', 'postgres'], /PostgreSQL takes no settings/],
  [['settings', '--version', '1.25.2'], /--version needs a product/],
])('%j is a usage error naming what is allowed (exit 2)', async (argv, message) => {
  const r = await runCliInProcess(argv);
  expect(r.code).toBe(2);
  expect(r.err).toMatch(message);
  expect(r.out).toBe('');
});

test('catalogueAt with no version takes the default release', () => {
  const pins = (p: string): PinnedVersions | null =>
    p === 'pgdoorman' ? { versions: ['3.10.7'], defaultVersion: '3.10.7' } : null;
  expect(catalogueAt('pgdoorman', undefined, pins).version).toBe('3.10.7');
  expect(catalogueAt('rds-proxy', undefined, pins).version).toBeNull();
});
