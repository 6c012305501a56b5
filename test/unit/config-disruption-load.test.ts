/**
 * A lab's background load for its disruption scenarios (lab file `disruptionLoad`, issue 42 item 4):
 * refused with the field, the value and what is allowed; resolved against the lab's own scenarios;
 * put on every disruption scenario of the suite a lab runs (locally and in the plan through
 * resolveSuite, on the runners through the run request), never on a scenario that names its own or
 * on pgbench scenarios.
 */
import { disruptionNotice } from '../../lib/config/disruptions';
import { labSuite, resolveSuite, withDisruptionLoad } from '../../lib/config/scenarios';
import { validateLab } from '../../lib/config/validate';
import { buildRunRequest, runnerArgsFromRequest } from '../../lib/aws/run-request';
import type { RunRequestArgs } from '../../lib/aws/runner-args';
import { runnerSuite } from '../../lib/runner/runner';
import type { DisruptionProbe } from '../../lib/suite/disruption';
import type { BackgroundLoad } from '../../lib/suite/disruption-load';

const SQL = 'SELECT 1;\n';
const LAB = {
  name: 'loaded',
  scenarios: [{ name: 'checkout', workload: [{ file: 'c.sql' }], clients: [2], scale: 10 }],
  suites: ['disruption', 'lab'],
};

function validate(extra: Record<string, unknown>) {
  return validateLab({ ...LAB, ...extra }, { readScript: () => ({ text: SQL }) });
}

describe('lab file disruptionLoad', () => {
  test.each<[string, unknown, Array<{ path: string; message: RegExp }>]>([
    [
      'a scenario that is neither a builtin nor the lab’s',
      { scenario: 'orders', clients: 4 },
      [
        {
          path: 'disruptionLoad.scenario',
          message:
            /^must be a pgbench built-in script or one of the lab's own scenarios \(tpcb-like, simple-update, select-only, checkout\), got "orders"$/,
        },
      ],
    ],
    [
      'no clients',
      { scenario: 'tpcb-like', clients: 0 },
      [{ path: 'disruptionLoad.clients', message: /at least 1 client/ }],
    ],
    [
      'too many clients',
      { scenario: 'tpcb-like', clients: 201 },
      [{ path: 'disruptionLoad.clients', message: /at most 200 clients/ }],
    ],
    [
      'a key it does not know',
      { scenario: 'tpcb-like', clients: 4, rate: 10 },
      [{ path: 'disruptionLoad.rate', message: /^unknown key; allowed keys here: scenario, clients, jobs$/ }],
    ],
  ])('%s is refused, naming the field', (_, disruptionLoad, expected) => {
    // GIVEN / WHEN
    const v = validate({ disruptionLoad });
    // THEN
    expect(v.ok).toBe(false);
    const problems = v.ok ? [] : v.problems.map((p) => ({ path: p.path, message: p.message }));
    expect(problems).toEqual(
      expected.map((e): { path: string; message: unknown } => ({
        path: e.path,
        message: expect.stringMatching(e.message) as unknown,
      })),
    );
  });

  test("one of the lab's scenarios resolves to its script and scale; every disruption scenario of a suite gets it, pgbench scenarios do not", () => {
    // GIVEN
    const v = validate({ disruptionLoad: { scenario: 'checkout', clients: 3, jobs: 2 } });
    if (!v.ok) throw new Error(JSON.stringify(v.problems));
    // WHEN
    const disruption = resolveSuite('disruption', v.lab);
    const own = resolveSuite('lab', v.lab);
    // THEN
    expect(v.lab.disruptionLoad).toEqual({
      scenario: 'checkout',
      script: { parts: [{ file: { name: 'c.sql', sql: SQL } }] },
      scale: 10,
      clients: 3,
      jobs: 2,
    });
    const loads = disruption.scenarios.map((s) => (s.probe as DisruptionProbe).load?.scenario);
    // the catalog's restart under load keeps its own (tpcb-like); the others take the lab's
    expect(loads).toEqual([
      'checkout',
      'checkout',
      'checkout',
      'checkout',
      'checkout',
      'checkout',
      'tpcb-like',
    ]);
    expect(own.scenarios.map((s) => s.probe)).toEqual([undefined]);
    // a lab without one changes nothing
    const plain = validate({});
    if (!plain.ok) throw new Error('plain lab invalid');
    expect(plain.lab.disruptionLoad).toBeNull();
    expect(resolveSuite('disruption', plain.lab)).toEqual(
      withDisruptionLoad(resolveSuite('disruption', plain.lab), null),
    );
    expect(labSuite(plain.lab).scenarios).toHaveLength(1);
  });

  test('what `proxylab run` says a disruption will do names its background load', () => {
    // GIVEN the failover suite with a lab's load
    const v = validate({ disruptionLoad: { scenario: 'tpcb-like', clients: 8 }, suites: ['failover'] });
    if (!v.ok) throw new Error(JSON.stringify(v.problems));
    const db = { engine: 'aurora-postgresql' as const, clusterId: 'c', instanceIds: ['w', 'r'] };
    // WHEN
    const lines = disruptionNotice(resolveSuite('failover', v.lab), db, 1);
    // THEN
    expect(lines[0]).toMatch(
      /^ {2}failover-aurora: .*, 3 time\(s\), each after a 20 s warm-up, probed for 120 s, under a background load of tpcb-like × 8 clients per target$/,
    );
  });

  test('the load travels in the run request to the runners, which put it on the suite they run', () => {
    // GIVEN a request for the catalog's disruption suite from a lab with a load
    const load: BackgroundLoad = {
      scenario: 'select-only',
      script: { parts: [{ builtin: 'select-only' }] },
      scale: 1,
      clients: 6,
      jobs: 1,
    };
    const base = {
      runId: 'r-1',
      suite: 'disruption',
      bucket: 'b',
      secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:x',
      proxies: [],
      poolers: [],
      poolerAdminSecretArn: null,
      writerEndpoint: { host: 'w', port: 5432 },
      region: 'us-east-1',
      startAt: null,
      collector: null,
      barrierTimeoutSec: 900,
      expectVersion: null,
      disruptionLoad: load,
    } as unknown as RunRequestArgs;
    // WHEN
    const request = buildRunRequest(base, 1);
    const args = runnerArgsFromRequest(request, 0);
    const suite = runnerSuite(args, {});
    // THEN
    expect(request.disruptionLoad).toEqual(load);
    expect(suite.scenarios.map((s) => (s.probe as DisruptionProbe).load?.clients)).toEqual([
      6, 6, 6, 6, 6, 6, 4,
    ]);
    // a request from an older CLI has none
    const older = runnerArgsFromRequest(buildRunRequest({ ...base, disruptionLoad: undefined }, 1), 0);
    expect(runnerSuite(older, {}).scenarios.map((s) => (s.probe as DisruptionProbe).load?.clients)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      4,
    ]);
  });
});
