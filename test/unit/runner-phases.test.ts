/**
 * runCloudRunnerInner's phases on their own (lib/runner/runner.ts): probing the targets the plan is
 * made against (a writer, proxy or pooler that does not answer ends the run before anything is
 * planned; an unknown server version does not), and the runner's answer from the run's end.
 */
import { InfrastructureError } from '../../lib/core/errors';
import type { Target } from '../../lib/engine/ports';
import { probeTargets, runnerAllHeld } from '../../lib/runner/runner';
import { describeTarget } from '../../lib/suite/targets';
import type { TargetRef } from '../../lib/suite/types';
import { manifestWith } from '../helpers/run-files';

const DIRECT: TargetRef = { kind: 'direct', name: 'direct' };
const PROXY: TargetRef = { kind: 'rds-proxy', name: 'proxy-a' };
const PGB: TargetRef = { kind: 'pgbouncer-transaction', name: 'pgbouncer-transaction' };

/** A target whose pool size answers `pool` (or fails with it), recording that it was asked. */
function target(ref: TargetRef, pool: number | null | Error, asked: string[]): Target {
  return {
    ref,
    descriptor: describeTarget(ref, { version: null }),
    connection: () => {
      throw new Error('not used');
    },
    maxConnections: () => Promise.resolve(100),
    poolSize: () => {
      asked.push(ref.name);
      return pool instanceof Error ? Promise.reject(pool) : Promise.resolve(pool);
    },
  };
}

function logger() {
  const lines: string[] = [];
  return { lines, log: { info: (l: string) => lines.push(l), warn: (l: string) => lines.push(l) } };
}

const writer = (maxConnections: number | Error, version: string | Error) => ({
  maxConnections: () =>
    maxConnections instanceof Error ? Promise.reject(maxConnections) : Promise.resolve(maxConnections),
  serverVersion: () => (version instanceof Error ? Promise.reject(version) : Promise.resolve(version)),
});

describe('probeTargets', () => {
  test("each target's capacity against the writer's max_connections, in target order", async () => {
    // GIVEN direct, a proxy with a pool of 45 and a PgBouncer with 20
    const asked: string[] = [];
    const { lines, log } = logger();
    const targets = [target(DIRECT, null, asked), target(PROXY, 45, asked), target(PGB, 20, asked)];
    // WHEN
    const probed = await probeTargets(targets, writer(90, '16.4'), log, 'runner 0 (of 1)');
    // THEN
    expect(probed.maxConnections).toBe(90);
    expect(probed.serverVersion).toBe('16.4');
    expect(probed.capacities.map((c) => [c.ref.name, c.maxConnections, c.poolSize])).toEqual([
      ['direct', 90, null],
      ['proxy-a', 90, 45],
      ['pgbouncer-transaction', 90, 20],
    ]);
    expect(probed.capacities[1]?.descriptor).toBe(targets[1]?.descriptor);
    expect(lines).toEqual(['runner 0 (of 1): max_connections 90, server 16.4']);
  });

  test('a server version that cannot be read is recorded as unknown, and the run goes on', async () => {
    const { lines, log } = logger();
    const probed = await probeTargets([], writer(90, new Error('timeout')), log, 'runner 1 (of 2)');
    expect(probed.serverVersion).toBeNull();
    expect(lines).toEqual(['runner 1 (of 2): max_connections 90, server unknown']);
  });

  test('a writer that does not answer ends the probe before any pool is asked', async () => {
    // GIVEN SHOW max_connections fails
    const asked: string[] = [];
    const down = new Error('connection to writer.example:5432 refused');
    // WHEN / THEN
    await expect(
      probeTargets([target(PROXY, 45, asked)], writer(down, '16.4'), logger().log, 'runner 0 (of 1)'),
    ).rejects.toBe(down);
    expect(asked).toEqual([]);
  });

  test.each([
    ['a proxy', PROXY],
    ['a pooler', PGB],
  ])('%s whose pool size cannot be read ends the probe with its error', async (_what, ref) => {
    // GIVEN the unreachable target after a healthy direct one
    const asked: string[] = [];
    const down = new Error(`${ref.name}: connection refused`);
    const targets = [target(DIRECT, null, asked), target(ref, down, asked), target(PGB, 20, asked)];
    // WHEN / THEN: nothing after it is asked
    await expect(probeTargets(targets, writer(90, '16.4'), logger().log, 'r')).rejects.toBe(down);
    expect(asked).toEqual(['direct', ref.name]);
  });
});

describe("runnerAllHeld (the runner's answer)", () => {
  const args = (runnerIndex: number, runnerCount: number) => ({
    runId: 'r1',
    bucket: 'lab-bucket',
    runnerIndex,
    runnerCount,
  });

  test('a failed run throws, naming the cause and where the finished steps are', () => {
    const result = {
      manifest: manifestWith({ status: 'failed', error: 'infrastructure failure: x' }),
      allHeld: false,
    };
    expect(() => runnerAllHeld(args(0, 1), result)).toThrow(InfrastructureError);
    expect(() => runnerAllHeld(args(1, 2), result)).toThrow(
      'run r1 failed: infrastructure failure: x (finished steps are in s3://lab-bucket/runs/r1/)',
    );
  });

  test.each([
    // runner 0 (alone or leading) answers with the verdicts
    [0, 1, 'completed', false, false],
    [0, 2, 'completed', true, true],
    [0, 1, 'interrupted', false, false],
    // another runner of a fleet: whether its part completed, whatever its (unjudged) verdicts
    [1, 2, 'completed', false, true],
    [1, 2, 'interrupted', true, false],
  ] as const)('runner %i of %i, run %s, engine allHeld %s → %s', (index, count, status, held, expected) => {
    expect(runnerAllHeld(args(index, count), { manifest: manifestWith({ status }), allHeld: held })).toBe(
      expected,
    );
  });
});
