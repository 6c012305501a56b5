/**
 * `proxylab local --lab FILE`: which suite runs, which local target stands in for which lab target
 * (and which has none), and the pool share — all decided before anything starts.
 */
import * as path from 'node:path';
import {
  describeCounterparts,
  localCapacities,
  planLocal,
  resumeCommand,
  validateLocalInput,
} from '../../lib/local/run-local';

const ROOT = path.resolve(__dirname, '..', '..');
const NOW = new Date('2026-11-26T12:00:00Z');

describe('local --lab', () => {
  test("the own-workload lab: its own scenarios, its PgBouncer pools' counterparts, its pool share", () => {
    // WHEN
    const opts = validateLocalInput({ lab: 'labs/own-workload.json' }, ROOT, NOW);
    // THEN
    expect(opts.suite.name).toBe('lab');
    expect(opts.poolPercent).toBe(45);
    expect(opts.lab?.counterparts.map((c) => [c.lab.name, c.what, c.local?.name ?? null])).toEqual([
      ['direct', 'the database itself', 'direct'],
      ['proxy', 'RDS Proxy', null],
      ['bouncer-transaction', 'PgBouncer 1.25.2 transaction pool', 'bouncer-transaction'],
      ['bouncer-session', 'PgBouncer 1.25.2 session pool', 'bouncer-session'],
    ]);
    expect(describeCounterparts(opts.lab!)).toEqual([
      expect.stringMatching(
        /^Lab own-workload on the local stack: direct → direct, bouncer-transaction → bouncer-transaction, bouncer-session → bouncer-session /,
      ),
      '  no local counterpart, not measured here: proxy (RDS Proxy)',
    ]);
    // 3 client counts × 3 repetitions × 3 local targets, relative to the local max_connections 40
    const steps = planLocal(opts);
    expect(steps).toHaveLength(27);
    expect([...new Set(steps.map((s) => s.params.clients))]).toEqual([4, 8, 16]);
    expect(resumeCommand(opts)).toMatch(/^proxylab local --lab labs\/own-workload\.json --suite lab /);
  });

  test('a lab without poolers: direct only locally, its proxy named as not measured; its suites, not quick', () => {
    const opts = validateLocalInput({ lab: 'labs/e3-connection-churn.json' }, ROOT, NOW);
    expect(opts.suite.name).toBe('e3');
    expect(opts.poolPercent).toBe(25);
    expect(localCapacities(opts).map((c) => c.ref.name)).toEqual(['direct']);
    expect(describeCounterparts(opts.lab!)[1]).toBe(
      '  no local counterpart, not measured here: pool100 (RDS Proxy)',
    );
  });

  test.each([
    [
      { lab: 'labs/default.json', suite: 'lab' },
      /--suite must be one of quick, smoke, .*all-published; got "lab"/,
    ],
    [{ lab: 'labs/own-workload.json', suite: 'e9' }, /--suite must be one of .*all-published, lab; got "e9"/],
    [{ suite: 'lab' }, /--suite must be one of quick, smoke, .*all-published; got "lab"/],
    [{ lab: 'labs/missing.json' }, /does not exist/],
  ])('%j is refused before anything starts', (input, message) => {
    expect(() => validateLocalInput(input, ROOT, NOW)).toThrow(message);
  });
});
