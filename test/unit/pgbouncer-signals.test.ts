/** The version → immediate-shutdown signal table (lib/poolers/pgbouncer/signals.ts). */
import { expect } from '@jest/globals';
import { immediateStopSignals, rollingStopSignal } from '../../lib/poolers/pgbouncer/signals';

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

/** The signal that retires a rolling restart's old process (changelog 1.23.0, pgbouncer#902). */
test.each([
  ['1.18.0', 'SIGINT', /keeps listening/],
  ['1.22.1', 'SIGINT', /keeps listening/],
  ['1.23.0', 'SIGTERM', /stops listening/],
  ['1.25.2', 'SIGTERM', /stops listening/],
  [null, 'SIGINT', /keeps listening/],
])('rolling restart of PgBouncer %s: %s', (version, signal, does) => {
  const r = rollingStopSignal(version);
  expect(r.signal).toBe(signal);
  expect(r.does).toMatch(does);
});
