/**
 * Which AWS disruptions a lab's suites inject (lib/config/disruptions.ts): what the stack grants the
 * runner role and what `proxylab run` announces.
 */
import { expect } from '@jest/globals';
import { cloudDisruptionsOf, DISRUPTION_WORDS } from '../../lib/config/disruptions';
import { DISRUPTION_ACTIONS } from '../../lib/suite/disruption';

describe('cloudDisruptionsOf', () => {
  test.each([
    ['failover suite on Aurora', ['failover'], 'aurora-postgresql', ['aurora-failover']],
    ['failover suite on RDS for PostgreSQL', ['failover'], 'postgres', ['rds-reboot-failover', 'rds-reboot']],
    [
      'twice the same suite: each action once',
      ['failover', 'failover'],
      'postgres',
      ['rds-reboot-failover', 'rds-reboot'],
    ],
    ['the local disruption suite calls no AWS API', ['disruption'], 'aurora-postgresql', []],
    ['pgbench suites', ['quick', 'e1'], 'postgres', []],
    ['an unknown suite name is ignored (validate reports it)', ['nope'], 'postgres', []],
  ] as const)('%s', (_what, suites, engine, expected) => {
    expect(cloudDisruptionsOf(suites, engine)).toEqual(expected);
  });

  test('every disruption has words for `proxylab run`', () => {
    for (const a of DISRUPTION_ACTIONS) expect(DISRUPTION_WORDS[a]).toMatch(/\w/);
  });
});
