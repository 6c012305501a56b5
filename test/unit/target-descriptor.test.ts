/**
 * A target descriptor records what the run measured through: for PgBouncer, the processes sharing
 * its port (a single process tops out on one core, so 1 and 4 are different poolers). Plans written
 * before the count was recorded still read.
 */
import { expect } from '@jest/globals';
import { targetDescriptorSchema } from '../../lib/results/schemas';
import { poolerTargetName } from '../../lib/poolers/pgbouncer/layout';
import {
  describeTarget,
  directTarget,
  fallbackDescriptor,
  kindsSelected,
  managedProxyTarget,
  matchesTarget,
  poolerTarget,
  productVersionLabel,
  PROXY_TARGET_KINDS,
  selectTargets,
  TARGET_KIND_NAMES,
  targetInstance,
  targetProduct,
  withPreparedStatements,
  type Placement,
  type TargetMatch,
} from '../../lib/suite/targets';
import type { TargetRef } from '../../lib/suite/types';

describe('describeTarget: PgBouncer processes', () => {
  test('a PgBouncer target carries the count it was given, through the prepared-statement switch too', () => {
    const d = describeTarget(
      { kind: 'pgbouncer-transaction', name: 'bouncer-transaction' },
      { version: '1.25.2', maxPreparedStatements: 200, placement: 'dedicated-host', processes: 4 },
    );
    expect(d.settings).toEqual({ maxPreparedStatements: 200, processes: 4 });
    expect(withPreparedStatements(d, 'off').descriptor.settings).toEqual({
      maxPreparedStatements: 0,
      processes: 4,
    });
  });

  test('direct and RDS Proxy never carry one; an adapter that did not say leaves it out', () => {
    expect(
      describeTarget({ kind: 'direct', name: 'direct' }, { version: '15.18', processes: 2 }).settings,
    ).toEqual({ maxPreparedStatements: null });
    expect(
      describeTarget({ kind: 'rds-proxy', name: 'pool100' }, { version: null, processes: 2 }).settings,
    ).toEqual({ maxPreparedStatements: null });
    expect(
      describeTarget({ kind: 'pgbouncer-session', name: 'pgbouncer-session' }, { version: '1.18.0' })
        .settings,
    ).toEqual({ maxPreparedStatements: null });
  });
});

describe('targetDescriptorSchema: processes', () => {
  const d = describeTarget(
    { kind: 'pgbouncer-session', name: 'bouncer-session' },
    { version: '1.25.2', maxPreparedStatements: 200, processes: 2 },
  );

  test('kept when read back (not stripped as an unknown key)', () => {
    expect(targetDescriptorSchema.parse(JSON.parse(JSON.stringify(d))).settings).toEqual({
      maxPreparedStatements: 200,
      processes: 2,
    });
  });

  test('a plan from before the count was recorded still reads; a count that is not a positive integer does not', () => {
    const { processes: _omitted, ...older } = d.settings;
    expect(targetDescriptorSchema.safeParse({ ...d, settings: older }).success).toBe(true);
    for (const bad of [0, 1.5, -2, '2'])
      expect(
        targetDescriptorSchema.safeParse({ ...d, settings: { ...d.settings, processes: bad } }).success,
      ).toBe(false);
  });
});

describe('product and instance: from the kind and name alone (nothing new in plan.json)', () => {
  test.each([
    [directTarget(), 'postgres', 'PostgreSQL', 'direct'],
    [managedProxyTarget('pool50'), 'rds-proxy', 'RDS Proxy', 'pool50'],
    [poolerTarget('pgbouncer', 'bouncer', 'transaction'), 'pgbouncer', 'PgBouncer', 'bouncer'],
    [poolerTarget('pgbouncer', 'bouncer', 'session'), 'pgbouncer', 'PgBouncer', 'bouncer'],
    // the local stand-in's targets
    [poolerTarget('pgbouncer', 'pgbouncer', 'session'), 'pgbouncer', 'PgBouncer', 'pgbouncer'],
    // a name outside the `<instance>-<mode>` convention is its own instance
    [{ kind: 'pgbouncer-session' as const, name: 'odd' }, 'pgbouncer', 'PgBouncer', 'odd'],
  ])('%j is %s (%s), instance %s', (ref, product, label, instance) => {
    expect(targetProduct(ref).id).toBe(product);
    expect(targetProduct(ref).label).toBe(label);
    expect(targetInstance(ref)).toBe(instance);
  });

  test('a pooler target is named as the lab layout names it, with the kind of its pool mode', () => {
    for (const mode of ['transaction', 'session'] as const) {
      const ref = poolerTarget('pgbouncer', 'bouncer', mode);
      expect(ref.name).toBe(poolerTargetName('bouncer', mode));
      expect(describeTarget(ref, { version: '1.25.2' }).poolMode).toBe(mode);
    }
  });

  test('the version label says which products have none', () => {
    expect(productVersionLabel({ kind: 'rds-proxy', version: null })).toBe('RDS Proxy (managed, no version)');
    expect(productVersionLabel({ kind: 'pgbouncer-session', version: '1.25.2' })).toBe('PgBouncer 1.25.2');
    expect(productVersionLabel({ kind: 'pgbouncer-transaction', version: null })).toBe('PgBouncer unknown');
  });

  test('the proxy kinds a run request may name are every kind but direct', () => {
    expect([...PROXY_TARGET_KINDS].sort()).toEqual(
      TARGET_KIND_NAMES.filter((k) => fallbackDescriptor({ kind: k, name: k }).capabilities.pooled).sort(),
    );
    expect(PROXY_TARGET_KINDS).not.toContain(directTarget().kind);
  });
});

describe('matchesTarget / selectTargets: by capability', () => {
  const at = (ref: TargetRef, placement?: Placement) => ({
    ref,
    descriptor: describeTarget(ref, { version: '1.25.2', maxPreparedStatements: 200, placement }),
  });
  const direct = at(directTarget());
  const proxyA = at(managedProxyTarget('a'));
  const proxyB = at(managedProxyTarget('b'));
  const dedicated = at(poolerTarget('pgbouncer', 'host', 'transaction'), 'dedicated-host');
  const colocated = at(poolerTarget('pgbouncer', 'beside', 'transaction'), 'co-located');
  const session = at(poolerTarget('pgbouncer', 'host', 'session'), 'dedicated-host');

  test.each<[string, TargetMatch, string[]]>([
    ['managed pools: every RDS Proxy', { pooled: true, managed: true }, ['a', 'b']],
    [
      'self-hosted pools',
      { pooled: true, managed: false },
      ['host-transaction', 'beside-transaction', 'host-session'],
    ],
    ['on a dedicated host', { dedicatedHost: true }, ['host-transaction', 'host-session']],
    ['beside the load', { pooled: true, managed: false, dedicatedHost: false }, ['beside-transaction']],
    ['multiplexing', { multiplexes: true }, ['a', 'b', 'host-transaction', 'beside-transaction']],
    ['not pooled', { pooled: false }, ['direct']],
  ])('%s', (_what, match, names) => {
    const present = [direct, proxyA, proxyB, dedicated, colocated, session];
    expect(present.filter((t) => matchesTarget(t.descriptor, match)).map((t) => t.ref.name)).toEqual(names);
  });

  test('in the order of the matches, each target once (at its first match)', () => {
    const present = [direct, proxyA, dedicated, session, proxyB];
    const picked = selectTargets(
      [{ pooled: true, multiplexes: false }, { pooled: true }, { pooled: false }],
      present,
    );
    expect(picked.map((t) => t.ref.name)).toEqual(['host-session', 'a', 'host-transaction', 'b', 'direct']);
  });

  test('kindsSelected lists the kinds a target list would select, in its order', () => {
    expect(kindsSelected([{ pooled: true, multiplexes: false }, { pooled: false }])).toEqual([
      'pgbouncer-session',
      'pgdoorman-session',
      'direct',
    ]);
    expect(kindsSelected([{ dedicatedHost: true }])).toEqual([]);
  });
});

describe('describeTarget: how a rolling restart retires the old process', () => {
  test.each<[TargetRef, string | null, string | null]>([
    [{ kind: 'pgbouncer-transaction', name: 'p' }, '1.25.2', 'stops-listening'],
    [{ kind: 'pgbouncer-session', name: 'p' }, '1.23.0', 'stops-listening'],
    [{ kind: 'pgbouncer-transaction', name: 'p' }, '1.22.1', 'keeps-listening'],
    [{ kind: 'pgbouncer-session', name: 'p' }, '1.18.0', 'keeps-listening'],
    [{ kind: 'pgbouncer-transaction', name: 'p' }, null, null],
    [{ kind: 'rds-proxy', name: 'pool' }, null, null],
    [{ kind: 'direct', name: 'direct' }, '15.18', null],
  ])('%j at version %s: %s', (ref, version, expected) => {
    // GIVEN / WHEN
    const d = describeTarget(ref, { version });
    // THEN the capability, and a match on it
    expect(d.capabilities.rollingRestart).toBe(expected);
    expect(matchesTarget(d, { rollingRestart: ['stops-listening'] })).toBe(expected === 'stops-listening');
  });
});
