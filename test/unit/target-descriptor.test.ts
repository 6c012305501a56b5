/**
 * A target descriptor records what the run measured through: for PgBouncer, the processes sharing
 * its port (a single process tops out on one core, so 1 and 4 are different poolers). Plans written
 * before the count was recorded still read.
 */
import { expect } from '@jest/globals';
import { targetDescriptorSchema } from '../../lib/results/schemas';
import { describeTarget, withPreparedStatements } from '../../lib/suite/targets';

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
