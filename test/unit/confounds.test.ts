/**
 * Measurements nothing else in the lab can confound (issue 25 item 5): before a target's steps the
 * other RDS Proxies release their idle server connections (MaxIdleConnectionsPercent 0, the one knob
 * AWS offers) and get their values back before their own; the connections held on the database are
 * watched around each step; every component's zone travels from the stack outputs through the run
 * request into the run, with the runner's own zone from IMDS.
 */
import {
  DescribeDBProxyTargetGroupsCommand,
  ModifyDBProxyTargetGroupCommand,
  RDSClient,
  type ModifyDBProxyTargetGroupCommandInput,
} from '@aws-sdk/client-rds';
import { mockAws } from '../helpers/aws-calls/recorder';
import { RUNNER } from '../helpers/aws-calls/principals';
import { RdsProxyPoolControl } from '../../lib/runner/proxy-pool';
import { runZones } from '../../lib/runner/runner';
import { componentZonesOf } from '../../lib/operator/operator';
import { parseComponentZones } from '../../lib/config/stack-outputs';
import { SampledServerConnections } from '../../lib/exec/server-connections';
import type { Clock } from '../../lib/engine/ports';

const rdsMock = mockAws(RDSClient, RUNNER);
afterEach(() => rdsMock.reset());

const clock: Clock = { now: () => new Date('2026-11-26T10:00:00Z'), sleep: () => Promise.resolve() };

/** Two proxies whose target groups apply every change at once; `log` lists each change in order. */
function twoProxies(): { state: Record<string, { max: number; idle: number }>; log: string[] } {
  const state: Record<string, { max: number; idle: number }> = {
    'lab-half': { max: 50, idle: 25 },
    'lab-full': { max: 100, idle: 50 },
  };
  const log: string[] = [];
  rdsMock.on(ModifyDBProxyTargetGroupCommand).callsFake((input: ModifyDBProxyTargetGroupCommandInput) => {
    const name = input.DBProxyName ?? '?';
    const cfg = input.ConnectionPoolConfig ?? {};
    state[name] = { max: cfg.MaxConnectionsPercent ?? 0, idle: cfg.MaxIdleConnectionsPercent ?? 0 };
    log.push(`${name} ${state[name]?.max}/${state[name]?.idle}`);
    return {};
  });
  rdsMock.on(DescribeDBProxyTargetGroupsCommand).callsFake((input: { DBProxyName?: string }) => {
    const s = state[input.DBProxyName ?? ''];
    return {
      TargetGroups: [
        {
          TargetGroupName: 'default',
          Status: 'available',
          ConnectionPoolConfig: { MaxConnectionsPercent: s?.max, MaxIdleConnectionsPercent: s?.idle },
        },
      ],
    };
  });
  return { state, log };
}

function control(): RdsProxyPoolControl {
  return new RdsProxyPoolControl(new RDSClient({ region: 'us-east-1' }), {
    proxyNames: { half: 'lab-half', full: 'lab-full' },
    labValues: {
      half: { maxConnectionsPercent: 50, maxIdleConnectionsPercent: 25 },
      full: { maxConnectionsPercent: 100, maxIdleConnectionsPercent: 50 },
    },
    clock,
    pollIntervalMs: 1,
  });
}

describe('RDS Proxy: the proxies not being measured release their idle server connections', () => {
  test('direct, then half, then full, then direct again: each proxy idles at 0 % except for its own steps', async () => {
    // GIVEN the two proxies at their lab values
    const { state, log } = twoProxies();
    const pool = control();
    // WHEN the engine isolates four steps' targets in turn, then restores
    await pool.isolate({ kind: 'direct', name: 'direct' });
    const afterDirect = structuredClone(state);
    await pool.isolate({ kind: 'rds-proxy', name: 'half' });
    const duringHalf = structuredClone(state);
    await pool.isolate({ kind: 'rds-proxy', name: 'full' });
    const duringFull = structuredClone(state);
    await pool.isolate({ kind: 'direct', name: 'direct' });
    await pool.restore();
    // THEN both drained for direct; half given back (50/25) for its step while full stays drained;
    // then the reverse; MaxConnectionsPercent never touched; the lab values back at the end
    expect(afterDirect).toEqual({ 'lab-half': { max: 50, idle: 0 }, 'lab-full': { max: 100, idle: 0 } });
    expect(duringHalf).toEqual({ 'lab-half': { max: 50, idle: 25 }, 'lab-full': { max: 100, idle: 0 } });
    expect(duringFull).toEqual({ 'lab-half': { max: 50, idle: 0 }, 'lab-full': { max: 100, idle: 50 } });
    expect(state).toEqual({ 'lab-half': { max: 50, idle: 25 }, 'lab-full': { max: 100, idle: 50 } });
    expect(log).toEqual([
      'lab-half 50/0',
      'lab-full 100/0',
      'lab-half 50/25',
      'lab-half 50/0',
      'lab-full 100/50',
      'lab-full 100/0',
      'lab-half 50/25',
      'lab-full 100/50',
    ]);
  });

  test('consecutive steps on the same target change nothing after the first', async () => {
    const { log } = twoProxies();
    const pool = control();
    for (let i = 0; i < 3; i++) await pool.isolate({ kind: 'rds-proxy', name: 'half' });
    expect(log).toEqual(['lab-full 100/0']);
  });
});

describe('zones', () => {
  test('the stack output names every component; proxies span zones (null); absent output: not said', () => {
    // GIVEN the ComponentZones output of a deployed lab
    const zones = parseComponentZones(
      JSON.stringify({ writer: 'us-east-1a', 'runner-0': 'us-east-1a', 'pooler:bouncer': 'us-east-1a' }),
    );
    // WHEN the operator lists them for the run request
    const listed = componentZonesOf({ componentZones: zones }, [{ name: 'half' }]);
    // THEN every component with its zone, proxies unknown
    expect(listed).toEqual([
      { component: 'writer', zone: 'us-east-1a' },
      { component: 'runner-0', zone: 'us-east-1a' },
      { component: 'pooler:bouncer', zone: 'us-east-1a' },
      { component: 'proxy:half', zone: null },
    ]);
    expect(componentZonesOf({ componentZones: parseComponentZones(undefined) }, [])).toBeNull();
  });

  test.each([
    ['{"writer": "nowhere"}', /ComponentZones\.writer is not an Availability Zone name/],
    ['[1]', /ComponentZones is not a JSON object/],
  ])('a malformed ComponentZones output %s is refused, naming it', (text, message) => {
    expect(() => parseComponentZones(text)).toThrow(message);
  });

  test.each([
    ['IMDS answers: the runner’s own zone replaces the outputs’', 'us-east-1b', 'us-east-1b'],
    ['IMDS silent: the outputs’ zone stays', null, 'us-east-1a'],
  ])('%s', (_what, own, expected) => {
    const args = {
      runnerIndex: 0,
      zones: [
        { component: 'writer', zone: 'us-east-1a' },
        { component: 'runner-0', zone: 'us-east-1a' },
      ],
    };
    expect(runZones(args, own)).toEqual([
      { component: 'writer', zone: 'us-east-1a' },
      { component: 'runner-0', zone: expected },
    ]);
  });

  test('no zones from the request and none from IMDS: unknown (null), never an empty guess', () => {
    expect(runZones({ runnerIndex: 1, zones: null }, null)).toBeNull();
    expect(runZones({ runnerIndex: 1, zones: null }, 'us-east-1c')).toEqual([
      { component: 'runner-1', zone: 'us-east-1c' },
    ]);
  });
});

describe('the connections held on the database around a step', () => {
  test('before, the peak of the samples and after; a failed count is unknown, never 0', async () => {
    // GIVEN a counter answering 2 (before), then samples 7 and null (a failed count), then 3 (after)
    jest.useFakeTimers();
    try {
      const answers: Array<number | null> = [2, 7, null, 3];
      const probe = new SampledServerConnections(() => Promise.resolve(answers.shift() ?? null), 100);
      // WHEN a step is watched for two sample periods
      const watch = await probe.watch();
      await jest.advanceTimersByTimeAsync(100);
      await jest.advanceTimersByTimeAsync(100);
      const held = await watch.stop();
      // THEN the peak is the most seen, the failed sample changed nothing
      expect(held).toEqual({ before: 2, peak: 7, after: 3 });
      // and stopping twice gives the same answer without counting again
      expect(await watch.stop()).toBe(held);
    } finally {
      jest.useRealTimers();
    }
  });

  test('nothing could be counted: every figure is null', async () => {
    const probe = new SampledServerConnections(() => Promise.resolve(null), 1000);
    const watch = await probe.watch();
    expect(await watch.stop()).toEqual({ before: null, peak: null, after: null });
  });
});
