/**
 * Which AWS disruptions a lab's suites inject (lib/config/disruptions.ts): what the stack grants the
 * runner role and what `proxylab run` announces.
 */
import { expect } from '@jest/globals';
import * as path from 'node:path';
import {
  checkDisruptionGrants,
  cloudDisruptionsOf,
  disruptionNotice,
  DISRUPTION_WORDS,
} from '../../lib/config/disruptions';
import { labSuite } from '../../lib/config/scenarios';
import { loadLabFile } from '../../lib/config/load';
import { cloudUnavailable } from '../../lib/runner/disruptions';
import { getSuite } from '../../lib/suite/catalog';
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

describe('what `proxylab run` says and refuses before it starts', () => {
  const AURORA = {
    engine: 'aurora-postgresql',
    clusterId: 'proxylab-failover-aurora-cluster',
    instanceIds: ['writer-1', 'reader-1'],
  } as const;
  const RDS = { engine: 'postgres', clusterId: null, instanceIds: ['db-1'] } as const;

  test('the failover suite on Aurora: the failover on the cluster; the RDS reboots and the pooler restart not injected', () => {
    expect(disruptionNotice(getSuite('failover'), AURORA, 1)).toEqual([
      '  failover-aurora: fail the Aurora cluster over to a reader (FailoverDBCluster) on cluster proxylab-failover-aurora-cluster (instances writer-1, reader-1), 3 time(s), each after a 20 s warm-up, probed for 120 s',
      '  failover-rds: reboot the RDS instance with a Multi-AZ failover (RebootDBInstance ForceFailover) — not injected: rds-reboot-failover needs RDS for PostgreSQL; this lab runs Aurora PostgreSQL (recorded not available)',
      '  reboot-rds: reboot the RDS instance in place (RebootDBInstance) — not injected: rds-reboot needs RDS for PostgreSQL; this lab runs Aurora PostgreSQL (recorded not available)',
      '  pooler-restart-cloud: restart the pooler process by process — not injected: pooler-restart restarts a self-hosted pooler, and this lab has none (poolers: add a PgBouncer or PgDoorman pooler to the lab file) (recorded not available)',
    ]);
  });

  test('the failover suite on RDS for PostgreSQL: the Multi-AZ failover and the reboot on its instance', () => {
    const lines = disruptionNotice(getSuite('failover'), RDS, 1);
    expect(lines[1]).toMatch(
      /^ {2}failover-rds: reboot the RDS instance with a Multi-AZ failover .* on instance db-1, 3 time/,
    );
    expect(lines[2]).toMatch(
      /^ {2}reboot-rds: reboot the RDS instance in place \(RebootDBInstance\) on instance db-1/,
    );
  });

  test('with a pooler host the pooler restart is injected on it, process by process; a host deployed before the control channel says so', () => {
    const bouncer = { name: 'bouncer', controlPort: 6438 };
    expect(disruptionNotice(getSuite('failover'), AURORA, 1, [bouncer])[3]).toBe(
      '  pooler-restart-cloud: restart the pooler process by process on the pooler host(s) bouncer, process by process, 3 time(s), each after a 10 s warm-up, probed for 30 s',
    );
    expect(disruptionNotice(getSuite('failover'), AURORA, 1, [{ name: 'bouncer' }])[3]).toMatch(
      /not injected: the pooler host\(s\) bouncer were deployed before the agent's control channel \(PoolerEndpoints has no controlPort\): deploy the lab again/,
    );
  });

  test('a pgbench suite disrupts nothing', () => {
    expect(disruptionNotice(getSuite('quick'), AURORA, 1)).toEqual([]);
  });

  test("a lab's own scenarios (suite lab) disrupt nothing: no catalog lookup of a suite named lab", () => {
    // GIVEN the suite `run --lab labs/own-workload.json --suite lab` resolves: the lab file's scenarios
    const lab = loadLabFile(path.join(__dirname, '..', '..', 'labs', 'own-workload.json'));
    // WHEN run says what it disrupts / THEN nothing, and no `unknown suite "lab"`
    expect(disruptionNotice(labSuite(lab), AURORA, 2)).toEqual([]);
  });

  test('with two runners no failover is promised: each disruption is not injected, in the words the runner records', () => {
    // GIVEN the failover suite on an Aurora lab with a reader, run by 2 runners
    const lines = disruptionNotice(getSuite('failover'), AURORA, 2);
    // THEN the failover is announced as not injected, with the runner's own reason
    const why = cloudUnavailable('aurora-failover', { database: AURORA, runnerCount: 2 });
    expect(why).toMatch(/injected once, by one runner: this run has 2/);
    expect(lines[0]).toBe(
      `  failover-aurora: fail the Aurora cluster over to a reader (FailoverDBCluster) — not injected: ${why ?? ''} (recorded not available)`,
    );
    expect(lines.some((l) => / \d+ time\(s\)/.test(l))).toBe(false);
  });

  test('a suite whose disruptions the runner role was not granted is refused, naming the lab field', () => {
    expect(() => checkDisruptionGrants('failover', ['quick'], 'aurora-postgresql', 'labs/x.json')).toThrow(
      /suite failover injects aurora-failover, which the runners of this lab may not: .*\(labs\/x\.json: suites \["quick"\]\)\. Add "failover" to suites, deploy again/,
    );
    expect(() =>
      checkDisruptionGrants('failover', ['failover'], 'aurora-postgresql', 'labs/x.json'),
    ).not.toThrow();
    // the local disruption suite and pgbench suites need no grant
    expect(() => checkDisruptionGrants('quick', [], 'postgres', 'labs/x.json')).not.toThrow();
  });
});
