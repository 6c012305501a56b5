/**
 * Background load during a disruption (issue 42 item 4) and the change-board downtime table (item
 * 5), on hand-made inputs: the load named and refused (lib/suite/disruption-load.ts), its figures,
 * pgbench's output turned into a result (lib/exec/background-load.ts) and the group's loads run
 * through a fake PgbenchExecutor (the world-neutral path the local stack and the cloud runner
 * share), the schemas results are read with, the report's lanes and lines, and downtime.md/.csv
 * (lib/report/downtime.ts).
 */
import type { PgbenchExecutor, PgbenchInvocation, PgbenchOutcome, Target } from '../../lib/engine/ports';
import {
  endpointPgbenchArgs,
  loadResultOf,
  prepareGroupLoads,
  type LoadOutcome,
  type LoadStart,
} from '../../lib/exec/background-load';
import { targetProbeEndpoint } from '../../lib/exec/disruption-probe';
import type { ProbeEndpoint } from '../../lib/exec/pg-probe';
import { loadLanesOf, loadLines, timelineOption } from '../../lib/report/disruptions';
import { downtimeCsv, downtimeMarkdown, recoverySettings } from '../../lib/report/downtime';
import { disruptionProbeSchema, disruptionResultSchema } from '../../lib/results/probe-schemas';
import type { DisruptionProbe } from '../../lib/suite/disruption';
import {
  loadFigures,
  resolveLoad,
  type BackgroundLoad,
  type BackgroundLoadResult,
  type LoadSecond,
} from '../../lib/suite/disruption-load';
import { downtimeRows } from '../../lib/suite/disruption-summary';
import { expandSuite, type PlannedStep } from '../../lib/suite/expand';
import { LOCAL_DISRUPTIONS } from '../../lib/suite/experiments/disruptions';
import { validateScenario, type Scenario } from '../../lib/suite/scenario';
import { describeTarget, fallbackDescriptor } from '../../lib/suite/targets';
import type { StepRecord } from '../../lib/suite/types';
import { disruptionResult } from '../helpers/disruption-result';
import { manifestWith } from '../helpers/run-files';

const TPCB: BackgroundLoad = {
  scenario: 'tpcb-like',
  script: { parts: [{ builtin: 'tpcb-like' }] },
  scale: 1,
  clients: 4,
  jobs: 1,
};

describe('a background load named and refused', () => {
  const OWN = [
    { name: 'checkout', script: { parts: [{ file: { name: 'c.sql', sql: 'SELECT 1;' } }] }, scale: 10 },
  ];

  test.each<[string, Parameters<typeof resolveLoad>[1], unknown]>([
    [
      'a pgbench builtin',
      { scenario: 'select-only', clients: 8, jobs: 2 },
      {
        scenario: 'select-only',
        script: { parts: [{ builtin: 'select-only' }] },
        scale: 1,
        clients: 8,
        jobs: 2,
      },
    ],
    [
      "one of the lab's own scenarios, its script and scale",
      { scenario: 'checkout', clients: 3 },
      { scenario: 'checkout', script: OWN[0]?.script, scale: 10, clients: 3, jobs: 1 },
    ],
  ])('%s resolves to what pgbench runs', (_, input, expected) => {
    // GIVEN / WHEN / THEN
    expect(resolveLoad('load', input, OWN)).toEqual({ load: expected });
  });

  test.each<[string, Parameters<typeof resolveLoad>[1], string[]]>([
    [
      'an unknown scenario, naming the choices',
      { scenario: 'tpcc', clients: 4 },
      [
        'load.scenario must be a pgbench built-in script or one of the lab\'s own scenarios (tpcb-like, simple-update, select-only, checkout), got "tpcc"',
      ],
    ],
    ['no clients', { scenario: 'tpcb-like', clients: 0 }, ['load.clients must be an integer 1–200, got 0']],
    [
      'more clients than any target takes',
      { scenario: 'tpcb-like', clients: 500 },
      ['load.clients must be an integer 1–200, got 500'],
    ],
    [
      'a fraction of a client',
      { scenario: 'tpcb-like', clients: 2.5 },
      ['load.clients must be an integer 1–200, got 2.5'],
    ],
    [
      'no threads',
      { scenario: 'tpcb-like', clients: 4, jobs: 0 },
      ['load.jobs must be an integer 1–32, got 0'],
    ],
  ])('%s is refused with the field, the value and what is allowed', (_, input, problems) => {
    // GIVEN / WHEN / THEN
    expect(resolveLoad('load', input, OWN)).toEqual({ problems });
  });

  test("a scenario's bad load is one of its problems; the catalog's load scenario has none", () => {
    // GIVEN the catalog's restart under load, and the same with 0 clients
    const s = LOCAL_DISRUPTIONS.find((x) => x.name === 'disrupt-restart-under-load') as Scenario;
    const p = s.probe as DisruptionProbe;
    const bad: Scenario = { ...s, probe: { ...p, load: { ...TPCB, clients: 0 } } };
    // WHEN / THEN
    expect(p.load).toEqual(TPCB);
    expect(validateScenario(s)).toEqual([]);
    expect(validateScenario(bad)).toEqual([
      'disrupt-restart-under-load: probe.load.clients must be an integer 1–200, got 0',
    ]);
    // and plan.json's schema reads the spec with its load
    expect(disruptionProbeSchema.parse(p)).toEqual(p);
  });
});

describe('the load figures', () => {
  test.each<[string, LoadSecond[], unknown]>([
    [
      'steady before, a dip and a gap after T0, back at the end',
      [
        [-1000, 200, 5, 0],
        [0, 210, 5, 0],
        [1000, 20, 50, 0],
        // nothing printed for (1000, 3000]: a 2 s gap
        [4000, 180, 6, 0],
        [5000, 190, 5, 0],
      ],
      {
        tps: { before: 205, during: 20, after: 185, min: 20 },
        gapMs: 2000,
        failedTransactions: 0,
      },
    ],
    [
      "a printed 0 tps second counts as a gap, and so do the window's last seconds unreported; failed unknown when one second did not say",
      [
        [0, 100, 5, null],
        [1000, 0, null, 0],
        [2000, 100, 5, 0],
      ],
      // (2000, 5000]: nothing reported (the window's last second, never printed, is not counted)
      { tps: { before: 100, during: 50, after: null, min: 0 }, gapMs: 3000, failedTransactions: null },
    ],
    [
      'no second at all: unknown, never 0',
      [],
      { tps: { before: null, during: null, after: null, min: null }, gapMs: null, failedTransactions: null },
    ],
  ])('%s', (_, series, expected) => {
    // GIVEN a 6 s recovery window WHEN / THEN
    expect(loadFigures(series, 6000)).toEqual(expected);
  });
});

/** `progress:` lines as pgbench 15 prints them with --progress-timestamp (Unix seconds). */
function progress(t0Sec: number, lines: ReadonlyArray<[number, number]>): string {
  return lines
    .map(
      ([at, tps]) =>
        `progress: ${(t0Sec + at).toFixed(3)} s, ${tps.toFixed(1)} tps, lat ${tps === 0 ? '0.000' : '12.500'} ms stddev 1.000, 0 failed`,
    )
    .join('\n');
}

const T0_SEC = 1_795_000_000;
const ABORTED =
  'pgbench: error: client 1 script 0 aborted in command 7 query 0: FATAL:  terminating connection due to administrator command\npgbench: error: Run was aborted; the above results are incomplete.';

function outcome(processes: LoadOutcome['processes'], byWindow = true): LoadOutcome {
  const start = { load: TPCB, target: 'direct', closedByWindow: () => byWindow } as unknown as LoadStart;
  return { start, processes, error: null };
}

describe("pgbench's output as the load's result", () => {
  test('stopped when the window closed, after a pgbench whose clients the restart aborted: seconds on the timeline, honest end', () => {
    // GIVEN a first pgbench aborted at T0 and a second one stopped at the window's end
    const o = outcome([
      {
        stdout: '',
        stderr: `${progress(T0_SEC, [
          [-1, 200],
          [0, 210],
        ])}\n${ABORTED}`,
        exitCode: 2,
        timedOut: false,
        stopped: false,
      },
      {
        stdout: '',
        stderr: progress(T0_SEC, [
          [3, 150],
          [4, 190],
        ]),
        exitCode: null,
        timedOut: false,
        stopped: true,
      },
    ]);
    // WHEN
    const r = loadResultOf(o, T0_SEC * 1000, 5000);
    // THEN
    expect({ ...r, errors: r.errors.map((e) => [e.class, e.count]) }).toEqual({
      scenario: 'tpcb-like',
      script: 'tpcb-like',
      clients: 4,
      jobs: 1,
      endState: 'window-closed',
      note: null,
      exitCode: null,
      starts: 2,
      series: [
        [-1000, 200, 12.5, 0],
        [0, 210, 12.5, 0],
        [3000, 150, 12.5, 0],
        [4000, 190, 12.5, 0],
      ],
      tps: { before: 205, during: null, after: 170, min: 150 },
      gapMs: 2000,
      failedTransactions: 0,
      abortedClients: 1,
      errors: [['server-stopped', 1]],
    });
    expect(disruptionResultSchema.parse({ ...disruptionResult(), load: r }).load).toEqual(r);
  });

  test.each<[string, LoadOutcome['processes'][number], boolean, string, string | null]>([
    [
      'every client aborted too near the end to start again',
      { stdout: '', stderr: ABORTED, exitCode: 2, timedOut: false, stopped: false },
      true,
      'clients-aborted',
      null,
    ],
    [
      'ran its whole -T (the window was cut short)',
      { stdout: '', stderr: '', exitCode: 0, timedOut: false, stopped: false },
      true,
      'ended',
      null,
    ],
    [
      'stopped because the run was stopped',
      { stdout: '', stderr: '', exitCode: null, timedOut: false, stopped: true },
      false,
      'failed',
      'the run was stopped while pgbench ran',
    ],
    [
      'exited on something else',
      { stdout: '', stderr: 'pgbench: error: invalid command', exitCode: 1, timedOut: false, stopped: false },
      true,
      'failed',
      'pgbench exited 1: pgbench: error: invalid command',
    ],
  ])('%s', (_, p, byWindow, endState, note) => {
    // GIVEN / WHEN
    const r = loadResultOf(outcome([p], byWindow), T0_SEC * 1000, 5000);
    // THEN
    expect({ endState: r.endState, note: r.note }).toEqual({ endState, note });
  });

  test('a result with an end state it does not know is refused where it is read', () => {
    // GIVEN / WHEN
    const bad = {
      ...disruptionResult(),
      load: { ...loadResultOf(outcome([]), 0, 5000), endState: 'crashed' },
    };
    // THEN
    expect(disruptionResultSchema.safeParse(bad).success).toBe(false);
  });
});

/** A pgbench that answers at once: `-i` succeeds, a run prints a second and waits to be stopped. */
class FakePgbench implements PgbenchExecutor {
  readonly calls: PgbenchInvocation[] = [];
  workDir(name: string): Promise<string> {
    return Promise.resolve(`/work/${name}`);
  }
  run(inv: PgbenchInvocation): Promise<PgbenchOutcome> {
    this.calls.push(inv);
    const base = { stdout: '', stderr: '', timedOut: false, logFiles: [] };
    if (inv.argv.includes('-i')) return Promise.resolve({ ...base, exitCode: 0 });
    return new Promise((resolve) => {
      const done = (): void =>
        resolve({ ...base, stderr: progress(Date.now() / 1000, [[0, 100]]), exitCode: null, aborted: true });
      if (inv.signal?.aborted) done();
      else inv.signal?.addEventListener('abort', done, { once: true });
    });
  }
}

const ENDPOINT: ProbeEndpoint = {
  hosts: [
    { host: '127.0.0.1', port: 5432 },
    { host: '127.0.0.1', port: 5433 },
  ],
  user: 'bench',
  dbname: 'bench',
  password: 'secret-pw',
  sslmode: 'disable',
  targetSessionAttrs: 'read-write',
  label: 'direct',
};

describe("a group's loads, through the world's pgbench", () => {
  const direct = describeTarget({ kind: 'direct', name: 'direct' }, { version: '15' });
  const pool = describeTarget(
    { kind: 'pgbouncer-transaction', name: 'pgbouncer-transaction' },
    { version: '1.24.1' },
  );
  const suite = {
    name: 't',
    description: 't',
    scenarios: [LOCAL_DISRUPTIONS.find((x) => x.name === 'disrupt-restart-under-load') as Scenario],
  };
  const steps: PlannedStep[] = expandSuite(suite, [
    { ref: { kind: 'direct', name: 'direct' }, descriptor: direct, maxConnections: 40, poolSize: null },
    {
      ref: { kind: 'pgbouncer-transaction', name: 'pgbouncer-transaction' },
      descriptor: pool,
      maxConnections: 40,
      poolSize: 10,
    },
  ]).filter((s) => s.params.repetition === 1);
  const target = (name: string, descriptor: Target['descriptor'], max: number): Target => ({
    ref: { kind: descriptor?.kind ?? 'direct', name },
    ...(descriptor ? { descriptor } : {}),
    connection: () => ({ host: '127.0.0.1', port: 5432, user: 'bench', dbname: 'bench' }),
    maxConnections: () => Promise.resolve(max),
    poolSize: () => Promise.resolve(null),
  });
  const clock = {
    now: () => performance.now(),
    sleepUntil: (ms: number, signal: AbortSignal) =>
      new Promise<void>((r) => {
        const t = setTimeout(r, Math.max(0, ms - performance.now()));
        signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
      }),
  };

  test('tables loaded once per run and scale, one pgbench per target on its probe endpoint, stopped at the window end; a target that cannot take it says why', async () => {
    // GIVEN direct with room for only 8 clients (max_connections 15 less 3 reserved, 4 probe clients) — and then none
    const pgbench = new FakePgbench();
    const loaded = new Set<number>();
    const log: string[] = [];
    const group = (maxDirect: number) =>
      prepareGroupLoads({
        load: TPCB,
        executor: pgbench,
        steps,
        targets: new Map([
          ['direct', target('direct', direct, maxDirect)],
          ['pgbouncer-transaction', target('pgbouncer-transaction', pool, 40)],
        ]),
        endpoint: () => ENDPOINT,
        ledger: ENDPOINT,
        clock,
        signal: new AbortController().signal,
        loadedScales: loaded,
        log: (l) => log.push(l),
      });
    // WHEN two groups run, the second on a server too small for the load
    const results: Array<ReadonlyMap<string, BackgroundLoadResult>> = [];
    for (const max of [15, 10]) {
      const g = await group(max);
      const endMs = clock.now() + 50;
      g.start(endMs);
      results.push(await g.results(Date.now(), 5000));
    }
    // THEN pgbench -i ran once; each run named the probes' hosts, never the password
    const init = pgbench.calls.filter((c) => c.argv.includes('-i'));
    const runs = pgbench.calls.filter((c) => !c.argv.includes('-i'));
    expect(init).toHaveLength(1);
    expect(runs).toHaveLength(3);
    expect(runs[0]?.argv).toEqual(
      expect.arrayContaining(['-c', '4', '-b', 'tpcb-like', '-h', '127.0.0.1,127.0.0.1', '-p', '5432,5433']),
    );
    expect(runs.every((c) => !c.argv.join(' ').includes('secret-pw'))).toBe(true);
    expect(runs[0]?.env).toMatchObject({ PGPASSWORD: 'secret-pw', PGTARGETSESSIONATTRS: 'read-write' });
    expect([...(results[0]?.values() ?? [])].map((r) => [r.endState, r.starts])).toEqual([
      ['window-closed', 1],
      ['window-closed', 1],
    ]);
    expect(results[1]?.get('direct')).toMatchObject({
      endState: 'not-run',
      note: 'probe.load.clients 4 is more than direct can take beside its 4 probe client(s): max_connections 10 less 3 reserved allows at most 3',
    });
    expect(results[1]?.get('pgbouncer-transaction')?.endState).toBe('window-closed');
    expect(log).toContain(
      'background load on direct not run: probe.load.clients 4 is more than direct can take beside its 4 probe client(s): max_connections 10 less 3 reserved allows at most 3',
    );
  });

  test('without a pgbench the load is recorded not run, with why', async () => {
    // GIVEN / WHEN
    const g = await prepareGroupLoads({
      load: TPCB,
      executor: undefined,
      steps,
      targets: new Map([['direct', target('direct', direct, 40)]]),
      endpoint: () => ENDPOINT,
      ledger: ENDPOINT,
      clock,
      signal: new AbortController().signal,
      loadedScales: new Set(),
      log: () => undefined,
    });
    g.start(clock.now());
    // THEN
    expect((await g.results(0, 5000)).get('direct')).toMatchObject({
      endState: 'not-run',
      note: 'this run has no pgbench to run a background load with',
      abortedClients: null,
    });
  });

  test('on the cloud runner, pgbench reaches a target as its probes do: TLS required, the password only in the environment', () => {
    // GIVEN an RDS Proxy target as the runner sees it
    const proxy = target('proxy', undefined, 100);
    const cloud: Target = {
      ...proxy,
      connection: () => ({
        host: 'lab-proxy.proxy-abc.us-east-1.rds.amazonaws.com',
        port: 5432,
        user: 'bench',
        dbname: 'bench',
        sslmode: 'require',
        env: { PGPASSWORD: 'from-secrets-manager' },
      }),
    };
    // WHEN
    const { args, env } = endpointPgbenchArgs(targetProbeEndpoint(cloud));
    // THEN
    expect(args).toEqual([
      '-h',
      'lab-proxy.proxy-abc.us-east-1.rds.amazonaws.com',
      '-p',
      '5432',
      '-U',
      'bench',
    ]);
    expect(env).toEqual({
      PGGSSENCMODE: 'disable',
      PGSSLMODE: 'require',
      PGTARGETSESSIONATTRS: 'any',
      PGPASSWORD: 'from-secrets-manager',
    });
  });

  test('the connection options are the endpoint, every host', () => {
    // GIVEN / WHEN / THEN
    expect(endpointPgbenchArgs(ENDPOINT).args).toEqual([
      '-h',
      '127.0.0.1,127.0.0.1',
      '-p',
      '5432,5433',
      '-U',
      'bench',
    ]);
  });
});

/** A step of the restart under load, with its load result. */
function loadStep(
  target: string,
  mode: 'persistent' | 'per-transaction',
  load: BackgroundLoadResult,
): StepRecord {
  return {
    schemaVersion: 1,
    runId: 'r',
    stepId: `restart/${target}/c2/extended/${mode}/r1`,
    scenario: 'restart',
    target: { kind: target === 'direct' ? 'direct' : 'pgbouncer-transaction', name: target },
    params: {
      clients: 2,
      jobs: 1,
      protocol: 'extended',
      connect: mode,
      script: 'disruption(postgres-restart fast, load tpcb-like×4)',
      durationSec: 7,
      transactionsPerClient: null,
      rate: null,
      scale: 1,
      poolPercent: null,
      repetition: 1,
    },
    startedAt: '2026-11-21T10:00:00Z',
    endedAt: '2026-11-21T10:00:07Z',
    status: 'completed',
    result: null,
    probe: { ...disruptionResult({ mode }), load },
    verdict: { expected: 'any', observed: 'seen', held: null },
    loadGeneratorSaturated: false,
    saturationReason: null,
    command: [],
    files: { stdout: 'a', stderr: 'b', log: null },
  };
}

const LOAD_RESULT = loadResultOf(
  outcome([
    {
      stdout: '',
      stderr: `${progress(T0_SEC, [
        [-1, 200],
        [0, 210],
      ])}\n${ABORTED}`,
      exitCode: 2,
      timedOut: false,
      stopped: false,
    },
    {
      stdout: '',
      stderr: progress(T0_SEC, [
        [3, 150],
        [4, 190],
      ]),
      exitCode: null,
      timedOut: false,
      stopped: true,
    },
  ]),
  T0_SEC * 1000,
  5000,
);
const STEPS = [
  loadStep('direct', 'persistent', LOAD_RESULT),
  loadStep('direct', 'per-transaction', LOAD_RESULT),
];

describe('the load in the report', () => {
  test('one pgbench lane per target under the probe lanes, broken where pgbench printed no second', () => {
    // GIVEN / WHEN
    const opt = timelineOption(STEPS as Parameters<typeof timelineOption>[0], 't');
    const series = opt.series as Array<{ type: string; name: string; data: unknown[] }>;
    const line = series.find((s) => s.type === 'line');
    // THEN two probe lanes and one load lane
    expect(loadLanesOf(STEPS as Parameters<typeof loadLanesOf>[0]).map((l) => l.label)).toEqual([
      'direct · pgbench tps, 1 aborted',
    ]);
    expect((opt.grid as unknown[]).length).toBe(3);
    expect(line?.data).toEqual([
      [-1, 200],
      [0, 210],
      [1.5, null],
      [3, 150],
      [4, 190],
    ]);
  });

  test("summary.md's line: the load per target, before, during and after, its gap and aborted clients", () => {
    // GIVEN / WHEN / THEN
    expect(loadLines(downtimeRows(STEPS))).toEqual([
      'background load through direct: tpcb-like × 4 clients: 205 tps before, ? during, 170 after; longest gap without a transaction 2.00 s; 1 client(s) aborted, 1 error line(s), failed transactions 0',
    ]);
  });
});

describe('downtime.md and downtime.csv', () => {
  const descriptor = {
    ...fallbackDescriptor({ kind: 'pgbouncer-transaction', name: 'pgbouncer-transaction' }),
    version: '1.24.1',
  };
  const withSettings = {
    ...descriptor,
    settings: {
      ...descriptor.settings,
      effective: {
        server_login_retry: { value: 2, source: 'lab' as const },
        query_wait_timeout: { value: 120, source: 'default' as const },
        max_client_conn: { value: 100, source: 'default' as const },
      },
    },
  };
  const pooled = [loadStep('pgbouncer-transaction', 'persistent', LOAD_RESULT)];
  const run = {
    manifest: manifestWith({
      runId: 'local-1',
      environment: {
        maxConnections: 40,
        serverVersion: '17.2',
        pgbenchVersion: '15.8',
        poolerVersion: '1.24.1',
        cpus: 2,
      },
    }),
    plan: null,
    steps: [...STEPS, ...pooled],
  };

  test("the target's recovery settings: its failure and timeout settings, whose value each is", () => {
    // GIVEN / WHEN / THEN
    expect(recoverySettings(withSettings)).toMatch(
      /^server_login_retry 2 s \(lab\); .*query_wait_timeout 120 s/,
    );
    expect(recoverySettings(withSettings)).not.toContain('max_client_conn');
    expect(recoverySettings(undefined)).toBe('not recorded');
    expect(recoverySettings(fallbackDescriptor({ kind: 'direct', name: 'direct' }))).toBe('no pooler');
  });

  test('a row per target × client mode saying what was disrupted, the windows, writes lost, versions and the load', () => {
    // GIVEN / WHEN
    const md = downtimeMarkdown(run) ?? '';
    const csv = downtimeCsv(run) ?? '';
    const [header, ...rows] = csv.trimEnd().split('\n');
    // THEN
    expect(md).toContain('# Downtime: local-1');
    expect(md).toContain(
      '| restart | postgres-restart (fast): a PostgreSQL restart | direct | PostgreSQL 17.2 | persistent | 1 | none | none | 25 | 0 of 200 | not recorded | tpcb-like × 4 clients: 205 → ? → 170 tps; gap 2.00 s; 1 aborted |',
    );
    expect(header?.split(',')).toEqual(
      expect.arrayContaining([
        'error_window_ms_median',
        'acknowledged_writes_lost',
        'load_tps_before',
        'load_aborted_clients',
      ]),
    );
    expect(rows).toHaveLength(3);
    // without a plan, the versions are the run's: the server's for direct, the pooler's for a pooler
    expect(md).toContain('| pgbouncer-transaction | PgBouncer 1.24.1 | persistent |');
    // unknown is empty, never 0: the during tps was not measured
    expect(rows[0]).toBe(
      'restart,postgres-restart,fast,direct,PostgreSQL 17.2,persistent,1,0,0,0,0,0,25,200,0,not recorded,tpcb-like × 4 clients,205,,170,2000,1',
    );
  });

  test('a run that disrupted nothing has no downtime table', () => {
    // GIVEN / WHEN / THEN
    expect(downtimeMarkdown({ ...run, steps: [] })).toBeNull();
    expect(downtimeCsv({ ...run, steps: [] })).toBeNull();
  });
});
