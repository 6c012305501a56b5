/**
 * One record per disruption action (lib/suite/disruption-actions.ts): the tables that used to list
 * each action's words, engine, needs and grants in three files now read the records.
 */
import {
  CLOUD_DISRUPTION_ENGINES,
  DISRUPTION_WORDS,
  runnerDisruptionGrants,
} from '../../lib/config/disruptions';
import { DISRUPTION_ACTIONS } from '../../lib/suite/disruption';
import { DISRUPTION_ACTION_RECORDS, disruptionGrants } from '../../lib/suite/disruption-actions';
import { validateLab } from '../../lib/config';

test('every action has a record; cloud ones name an engine and their grants, local ones neither', () => {
  expect([...DISRUPTION_ACTIONS].sort()).toEqual(Object.keys(DISRUPTION_ACTION_RECORDS).sort());
  for (const a of DISRUPTION_ACTIONS) {
    const r = DISRUPTION_ACTION_RECORDS[a];
    expect(DISRUPTION_WORDS[a]).toBe(r.does);
    if (r.world === 'cloud') {
      expect([a, r.engines.length > 0, r.grants.length > 0]).toEqual([a, true, true]);
      expect(CLOUD_DISRUPTION_ENGINES[a]).toBe(r.engines);
    } else {
      expect([a, r.engines.length, r.grants.length]).toEqual([a, 0, 0]);
      expect(CLOUD_DISRUPTION_ENGINES[a]).toBeUndefined();
    }
  }
});

test('grants of several actions are merged, each statement once, in record order', () => {
  expect(disruptionGrants(['rds-reboot', 'rds-reboot-failover']).map((g) => g.actions.join())).toEqual([
    'rds:RebootDBInstance',
    'rds:DescribeDBInstances',
    'rds:DescribeEvents',
  ]);
  expect(runnerDisruptionGrants(['aurora-failover', 'not-an-action']).map((g) => g.actions.join())).toEqual([
    'rds:FailoverDBCluster',
    'rds:DescribeDBClusters',
    'rds:DescribeDBInstances',
    'rds:DescribeEvents',
  ]);
});

test("validate reads an action's needs from its record", () => {
  const r = validateLab({ name: 'x', aurora: { readers: 0 }, suites: ['failover'] });
  expect(r.ok).toBe(false);
  expect(!r.ok && r.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
    expect.stringMatching(
      /^aurora\.readers: must be an integer ≥ 1: an Aurora failover \(FailoverDBCluster\) promotes a reader/,
    ),
  ]);
});
