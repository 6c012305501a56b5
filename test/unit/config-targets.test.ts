/**
 * labTargets (lib/config/targets.ts): the one list of a lab's targets, which the run-window
 * estimate and the runner's targets both use.
 */
import { labTargets, poolerProduct, poolerTargets } from '../../lib/config/targets';

const LAB = {
  proxies: [{ name: 'pool100' }, { name: 'pool25' }],
  poolers: [
    { name: 'bouncer', kind: 'pgbouncer', poolModes: ['transaction', 'session'] } as const,
    { name: 'tx', product: 'pgbouncer', poolModes: ['transaction'] } as const,
  ],
};

describe('labTargets', () => {
  test('direct, then every proxy, then every pooler × pool mode, with their kinds', () => {
    // WHEN
    const targets = labTargets(LAB);
    // THEN
    expect(targets.map((t) => [t.role, t.ref.kind, t.ref.name])).toEqual([
      ['writer', 'direct', 'direct'],
      ['proxy', 'rds-proxy', 'pool100'],
      ['proxy', 'rds-proxy', 'pool25'],
      ['pooler', 'pgbouncer-transaction', 'bouncer-transaction'],
      ['pooler', 'pgbouncer-session', 'bouncer-session'],
      ['pooler', 'pgbouncer-transaction', 'tx-transaction'],
    ]);
  });

  test('each target carries the proxy or pooler it stands for', () => {
    const targets = labTargets(LAB);
    const proxy = targets.find((t) => t.ref.name === 'pool25');
    const pooler = targets.find((t) => t.ref.name === 'bouncer-session');
    expect(proxy?.role === 'proxy' && proxy.proxy).toBe(LAB.proxies[1]);
    expect(pooler?.role === 'pooler' && [pooler.pooler, pooler.mode]).toEqual([LAB.poolers[0], 'session']);
  });

  test('the proxies stand for another kind when told (a test standing PgBouncer in for a proxy)', () => {
    const kinds = labTargets({ proxies: [{ name: 'p' }], poolers: [] }, 'pgbouncer-transaction');
    expect(kinds.map((t) => t.ref.kind)).toEqual(['direct', 'pgbouncer-transaction']);
  });

  test('a lab with neither proxies nor poolers has the writer only', () => {
    expect(labTargets({ proxies: [], poolers: [] }).map((t) => t.ref.name)).toEqual(['direct']);
  });
});

test.each([
  ['transaction', 'pgbouncer-transaction'],
  ['session', 'pgbouncer-session'],
] as const)('a PgBouncer %s pool is kind %s (from the target registry)', (mode, kind) => {
  expect(poolerTargets({ name: 'b', product: 'pgbouncer', poolModes: [mode] }).map((t) => t.ref)).toEqual([
    { kind, name: `b-${mode}` },
  ]);
});

test('a pooler of the lab file (`kind`) and its stack output (`product`) have the same targets', () => {
  expect(poolerProduct({ name: 'b', kind: 'pgbouncer', poolModes: ['session'] })).toBe('pgbouncer');
  expect(poolerProduct({ name: 'b', product: 'pgbouncer', poolModes: ['session'] })).toBe('pgbouncer');
  expect(poolerTargets({ name: 'b', kind: 'pgbouncer', poolModes: ['session'] })[0]?.ref).toEqual(
    poolerTargets({ name: 'b', product: 'pgbouncer', poolModes: ['session'] })[0]?.ref,
  );
});
