/**
 * The target kinds as data (lib/products/kinds.ts): every list of kinds, poolers, pool modes and
 * self-hosted products follows from KINDS, and a lab proxy's endpoints become its targets without
 * a list of their own.
 */
import { labTargets } from '../../lib/config/targets';
import { buildRunRequest, runRequestSchema } from '../../lib/aws/run-request';
import type { RunRequestArgs } from '../../lib/aws/runner-args';
import { POOL_MODES as POOLER_POOL_MODES, POOLER_PRODUCTS } from '../../lib/poolers/products';
import {
  KINDS,
  MANAGED_PROXY_KINDS,
  POOL_MODES,
  POOLERS,
  PROXY_TARGET_KINDS,
  SELF_HOSTED_POOLERS,
  TARGET_KIND_NAMES,
} from '../../lib/products/kinds';
import {
  fallbackDescriptor,
  kindsSelected,
  managedProxyTarget,
  matchesTarget,
  poolerTarget,
  targetInstance,
} from '../../lib/suite/targets';
import { targetDescriptorSchema } from '../../lib/results/schemas';

describe('lists derived from KINDS', () => {
  test('kinds, poolers, proxy kinds and self-hosted products, in registry order', () => {
    expect(TARGET_KIND_NAMES).toEqual([
      'direct',
      'rds-proxy',
      'pgbouncer-transaction',
      'pgbouncer-session',
      'pgdoorman-transaction',
      'pgdoorman-session',
    ]);
    expect(POOLERS).toEqual(['none', 'rds-proxy', 'pgbouncer', 'pgdoorman']);
    expect(PROXY_TARGET_KINDS).toEqual([
      'rds-proxy',
      'pgbouncer-transaction',
      'pgbouncer-session',
      'pgdoorman-transaction',
      'pgdoorman-session',
    ]);
    expect(MANAGED_PROXY_KINDS).toEqual(['rds-proxy']);
    expect(SELF_HOSTED_POOLERS).toEqual(['pgbouncer', 'pgdoorman']);
  });

  test('lib/poolers reads the products and pool modes from the same lists', () => {
    expect(POOLER_PRODUCTS).toBe(SELF_HOSTED_POOLERS);
    expect(POOLER_POOL_MODES).toBe(POOL_MODES);
  });

  test('every self-hosted product has a kind per pool mode, so poolerTarget finds one', () => {
    for (const product of SELF_HOSTED_POOLERS)
      for (const mode of POOL_MODES) expect(KINDS[poolerTarget(product, 'b', mode).kind].poolMode).toBe(mode);
  });

  test('the results schema accepts every kind and pooler and nothing else', () => {
    const d = (kind: string, pooler: string) => ({
      kind,
      name: 'x',
      pooler,
      poolMode: null,
      placement: 'managed',
      version: null,
      settings: { maxPreparedStatements: null },
      capabilities: {
        pooled: false,
        multiplexes: false,
        carriesPreparedStatements: 'yes',
        resizablePool: null,
        preparedStatementsSwitch: null,
      },
    });
    for (const kind of TARGET_KIND_NAMES)
      expect(targetDescriptorSchema.safeParse(d(kind, 'none')).success).toBe(true);
    for (const pooler of POOLERS)
      expect(targetDescriptorSchema.safeParse(d('direct', pooler)).success).toBe(true);
    expect(targetDescriptorSchema.safeParse(d('rds-proxy-read-only', 'none')).success).toBe(false);
    expect(targetDescriptorSchema.safeParse(d('direct', 'odyssey')).success).toBe(false);
  });
});

describe('a proxy endpoint is a target', () => {
  test("the default endpoint's target is named as the proxy, and its instance is the proxy", () => {
    const ref = managedProxyTarget('pool100');
    expect(ref).toEqual({ kind: 'rds-proxy', name: 'pool100' });
    expect(targetInstance(ref)).toBe('pool100');
  });

  test('a proxy listing its default endpoint by kind gets no second target', () => {
    const ep = { host: 'h', port: 5432 };
    const targets = labTargets({ proxies: [{ name: 'p', endpoints: { 'rds-proxy': ep } }], poolers: [] });
    expect(targets.map((t) => t.ref)).toEqual([
      { kind: 'direct', name: 'direct' },
      { kind: 'rds-proxy', name: 'p' },
    ]);
  });
});

describe('the run request carries a proxy endpoints by kind', () => {
  const base: RunRequestArgs = {
    runId: 'r1',
    suite: 'smoke',
    bucket: 'b',
    secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:db',
    proxies: [{ name: 'p', endpoint: { host: 'p.proxy', port: 5432 }, dbProxyName: 'lab-p', lab: null }],
    poolers: [],
    poolerAdminSecretArn: null,
    writerEndpoint: { host: 'w', port: 5432 },
    region: 'us-east-1',
    startAt: '2026-11-25T00:00:00.000Z',
    collector: null,
    barrierTimeoutSec: 60,
    expectVersion: null,
  };

  test('a request without other endpoints has no `endpoints` key (its JSON is as before)', () => {
    const request = buildRunRequest(base, 1);
    expect(Object.keys(request.targets.proxies[0] ?? {})).toEqual(['name', 'endpoint', 'dbProxyName', 'lab']);
  });

  test('endpoints by a managed-proxy kind parse; any other kind is refused', () => {
    const withEndpoints = (endpoints: unknown) =>
      runRequestSchema.safeParse({
        ...buildRunRequest(base, 1),
        targets: {
          ...buildRunRequest(base, 1).targets,
          proxies: [{ ...base.proxies[0], endpoints }],
        },
      }).success;
    expect(withEndpoints({ 'rds-proxy': { host: 'p.proxy', port: 5432 } })).toBe(true);
    expect(withEndpoints({ 'pgbouncer-session': { host: 'p.proxy', port: 5432 } })).toBe(false);
  });
});

describe('read-only targets', () => {
  const all = TARGET_KIND_NAMES.map((kind) => fallbackDescriptor({ kind, name: kind }));

  test('every kind today takes writes: `readOnly: true` matches none, `readOnly: false` all', () => {
    expect(all.filter((d) => matchesTarget(d, { readOnly: true }))).toEqual([]);
    expect(all.filter((d) => matchesTarget(d, { readOnly: false }))).toEqual(all);
  });

  test("a scenario's target list selects writing targets unless it asks for read-only ones", () => {
    expect(kindsSelected([{}])).toEqual(TARGET_KIND_NAMES.filter((k) => KINDS[k].writes));
    expect(kindsSelected([{ readOnly: true }])).toEqual(TARGET_KIND_NAMES.filter((k) => !KINDS[k].writes));
  });
});
