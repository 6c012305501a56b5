/** The version → immediate-shutdown signal table (lib/poolers/pgbouncer/signals.ts). */
import { expect } from '@jest/globals';
import { immediateStopSignals } from '../../lib/poolers/pgbouncer/signals';

test.each([
  ['1.18.0', ['SIGTERM']],
  ['1.22.1', ['SIGTERM']],
  ['1.23.0', ['SIGQUIT']],
  ['1.25.2', ['SIGQUIT']],
  ['2.0.0', ['SIGQUIT']],
  ['PgBouncer 1.25.2', ['SIGQUIT']], // as `pgbouncer --version` prints it
  ['PgBouncer 1.18.0', ['SIGTERM']],
  [null, ['SIGQUIT', 'SIGTERM']],
  ['unknown', ['SIGQUIT', 'SIGTERM']],
])('PgBouncer %s: %j', (version, expected) => {
  expect(immediateStopSignals(version)).toEqual(expected);
});
