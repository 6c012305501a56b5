/**
 * `proxylab plan`'s settings section (lib/cost/plan-settings.ts): each proxy's and pooler's effective
 * settings — the lab's values first and marked, then the failure, timeout and pool ones (`--settings
 * all`: every one) — and, for two of one product, the settings that differ between them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { validateLab } from '../../lib/config';
import type { LabConfig } from '../../lib/config/types';
import { formatSettingsPreview, labSettingsPreview } from '../../lib/cost/plan-settings';
import { previewRun } from '../../lib/cost/run-plan';
import { runCliInProcess } from '../helpers/cli';
import { scratchDir } from '../helpers/scratch';

const RAW = {
  name: 'variants',
  proxies: [{ name: 'pool50', maxConnectionsPercent: 50, settings: { IdleClientTimeout: 600 } }],
  poolers: [
    { name: 'bouncer-default', kind: 'pgbouncer', placement: 'dedicated', instanceType: 'c7g.large' },
    {
      name: 'bouncer-fast-retry',
      kind: 'pgbouncer',
      placement: 'dedicated',
      instanceType: 'c7g.large',
      settings: { server_login_retry: 2 },
    },
    {
      name: 'bouncer-old',
      kind: 'pgbouncer',
      placement: 'dedicated',
      instanceType: 'c7g.large',
      version: '1.24.1',
    },
  ],
};

function lab(raw: unknown = RAW): LabConfig {
  const v = validateLab(raw);
  if (!v.ok) throw new Error(JSON.stringify(v.problems));
  return v.lab;
}

test("each instance's effective settings: the lab's, proxylab's from lab fields, the defaults of its version", () => {
  // WHEN
  const p = labSettingsPreview(lab());
  // THEN
  const of = (name: string, setting: string) =>
    p.instances.find((i) => i.name === name)?.settings.find((s) => s.name === setting);
  expect(p.instances.map((i) => [i.name, i.product, i.version])).toEqual([
    ['pool50', 'rds-proxy', null],
    ['bouncer-default', 'pgbouncer', '1.25.2'],
    ['bouncer-fast-retry', 'pgbouncer', '1.25.2'],
    ['bouncer-old', 'pgbouncer', '1.24.1'],
  ]);
  expect(of('pool50', 'IdleClientTimeout')).toMatchObject({ value: 600, text: '600 s', source: 'lab' });
  expect(of('pool50', 'MaxConnectionsPercent')).toMatchObject({ value: 50, source: 'proxylab' });
  expect(of('bouncer-fast-retry', 'server_login_retry')).toMatchObject({ text: '2 s', source: 'lab' });
  expect(of('bouncer-default', 'server_login_retry')).toMatchObject({ text: '15 s', source: 'default' });
  expect(of('bouncer-default', 'server_check_query')).toMatchObject({ text: '""', source: 'default' });
  expect(of('bouncer-old', 'server_check_query')).toMatchObject({ text: 'select 1', source: 'default' });
  expect(of('bouncer-old', 'transaction_timeout')).toBeUndefined();
  expect(of('bouncer-default', 'default_pool_size')).toMatchObject({
    value: null,
    text: '–',
    source: 'proxylab',
  });
});

test('variants of one product: what differs, whose each value is, and a setting one version lacks', () => {
  const p = labSettingsPreview(lab());
  // THEN pairs are within a product only (the proxy is alone)
  expect(p.variants.map((v) => `${v.a}|${v.b}`)).toEqual([
    'bouncer-default|bouncer-fast-retry',
    'bouncer-default|bouncer-old',
    'bouncer-fast-retry|bouncer-old',
  ]);
  const text = formatSettingsPreview(p).join('\n');
  expect(text).toContain(
    '    bouncer-default vs bouncer-fast-retry: server_login_retry 15 s (default) vs 2 s (lab)\n',
  );
  // 1.24.1 lacks 1.25's settings and had another server_check_query default
  expect(text).toMatch(
    /bouncer-default vs bouncer-old: [^\n]*server_check_query "" \(default\) vs select 1 \(default\)[^\n]*transaction_timeout 0 s \(default\) vs \(not in 1\.24\.1\)/,
  );
});

test("the text: the lab's values first and marked, the shown areas, a count of the rest; --settings all shows them", () => {
  const p = labSettingsPreview(lab());
  const shown = formatSettingsPreview(p);
  const block = shown.slice(shown.findIndex((l) => l.startsWith('    bouncer-fast-retry (')));
  expect(block[0]).toBe(
    '    bouncer-fast-retry (PgBouncer 1.25.2; bouncer-fast-retry-transaction, bouncer-fast-retry-session):',
  );
  expect(block[1]).toMatch(/^ {6}\* server_login_retry +2 s {2}\(lab\)$/);
  expect(shown.join('\n')).not.toMatch(/\bserver_tls_sslmode\b/); // area auth: not shown by default
  expect(shown.join('\n')).toMatch(/… \d+ more at their defaults \(--settings all\)/);
  const all = formatSettingsPreview(p, true).join('\n');
  expect(all).toMatch(/ {8}server_tls_sslmode +require {2}\(proxylab\)/);
  expect(all).not.toMatch(/more at their defaults/);
});

test('a lab without proxies or poolers has no settings section', () => {
  const p = labSettingsPreview(lab({ name: 'bare', proxies: [] }));
  expect(p).toEqual({ instances: [], variants: [] });
  expect(formatSettingsPreview(p)).toEqual([]);
});

describe('proxylab plan', () => {
  const dir = scratchDir('plan-settings-');
  const file = path.join(dir, 'variants.json');
  fs.writeFileSync(file, JSON.stringify(RAW));

  test('prints the settings section; --json carries it; --settings all widens it', async () => {
    const text = await runCliInProcess(['plan', '--lab', file, '--suite', 'quick']);
    expect(text.code).toBe(0);
    expect(text.out).toContain(
      'bouncer-default vs bouncer-fast-retry: server_login_retry 15 s (default) vs 2 s (lab)',
    );
    const json = await runCliInProcess(['plan', '--lab', file, '--suite', 'quick', '--json']);
    const [preview] = JSON.parse(json.out) as Array<ReturnType<typeof previewRun>>;
    expect(preview?.settings.instances.map((i) => i.name)).toEqual([
      'pool50',
      'bouncer-default',
      'bouncer-fast-retry',
      'bouncer-old',
    ]);
    const all = await runCliInProcess(['plan', '--lab', file, '--suite', 'quick', '--settings', 'all']);
    expect(all.out).toMatch(/server_tls_sslmode +require {2}\(proxylab\)/);
  });

  test('--settings with anything else is a usage error naming the choices', async () => {
    const r = await runCliInProcess(['plan', '--lab', file, '--settings', 'some']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--settings: one of shown, all; got "some"/);
  });
});
