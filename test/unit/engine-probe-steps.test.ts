/**
 * Probe steps through the engine (lib/suite/probes.ts, lib/engine/probe-steps.ts): a fake probe
 * runner stands in for the disruption lab; the real filesystem sink stores what it returns, so the
 * plan and the step records are read back through their schemas.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type {
  Clock,
  InfrastructureWatch,
  PgbenchExecutor,
  PoolControl,
  ProbeRun,
  ProbeRunner,
  ProbeStepOutcome,
  Target,
} from '../../lib/engine/ports';
import { runSuite, type ProgressEvent, type RunSuiteOptions } from '../../lib/engine/run-suite';
import { FileSystemSink } from '../../lib/local/fs-sink';
import { RunStopper } from '../../lib/local/run-stopper';
import { writeReport } from '../../lib/report';
import { planSchema, parseRunFile, stepRecordSchema } from '../../lib/results/schemas';
import type { Scenario, Suite } from '../../lib/suite/catalog';
import { DIRECT, SELF_HOSTED_TRANSACTION_POOL, SELECT_1 } from '../../lib/suite/experiments/common';
import { expandSuite, type PlannedStep, type TargetCapacity } from '../../lib/suite/expand';
import { buildPlan } from '../../lib/suite/plan';
import { describeTarget } from '../../lib/suite/targets';
import { stepFileName, type TargetKind } from '../../lib/suite/types';
import { disruptionResult } from '../helpers/disruption-result';
import { scratchDir } from '../helpers/scratch';

const SCENARIO: Scenario = {
  name: 'restart',
  experiment: 'E1',
  title: 'restart under probes',
  finding: 'direct clients see errors; nothing acknowledged is lost',
  script: SELECT_1,
  protocols: ['extended'],
  connects: ['persistent', 'per-transaction'],
  clients: [2],
  jobs: 1,
  durationSec: 8,
  scale: 1,
  initFlags: [],
  repetitions: 2,
  targets: [DIRECT, SELF_HOSTED_TRANSACTION_POOL],
  serverStops: 'measured',
  probe: {
    kind: 'disruption',
    disruption: { action: 'postgres-restart', shutdown: 'fast' },
    intervalMs: 100,
    warmupSec: 3,
    recoverySec: 5,
    clientTimeouts: { connectTimeoutMs: 2000, statementTimeoutMs: 2000 },
  },
  expectations: [
    { when: { target: DIRECT }, outcome: 'errors', errorClasses: ['server-stopped'] },
    { when: {}, outcome: 'any' },
  ],
};
const SUITE: Suite = { name: 'probe-test', description: 'd', scenarios: [SCENARIO] };
const KINDS: readonly TargetKind[] = ['direct', 'pgbouncer-transaction'];

function capacities(): TargetCapacity[] {
  return KINDS.map((kind) => ({
    ref: { kind, name: kind },
    descriptor: describeTarget({ kind, name: kind }, { version: kind === 'direct' ? '15.18' : '1.18.0' }),
    maxConnections: 40,
    poolSize: kind === 'direct' ? null : 10,
  }));
}

function targets(): Target[] {
  return KINDS.map((kind, i) => ({
    ref: { kind, name: kind },
    connection: () => ({ host: '127.0.0.1', port: 20000 + i, user: 'bench', dbname: 'bench' }),
    maxConnections: () => Promise.resolve(40),
    poolSize: () => Promise.resolve(kind === 'direct' ? null : 10),
  }));
}

function fakeClock(): Clock {
  let t = Date.parse('2026-11-21T10:00:00Z');
  return {
    now: () => new Date((t += 100)),
    sleep: (ms) => {
      t += ms;
      return Promise.resolve();
    },
  };
}

/** pgbench must never run for a probe step. */
const NO_PGBENCH: PgbenchExecutor = {
  run: () => Promise.reject(new Error('pgbench ran for a probe step')),
  workDir: () => Promise.reject(new Error('pgbench work dir asked for a probe step')),
};

/** Runs a group: direct steps see server-stopped errors, the others none; records each call. */
class FakeDisruptionRunner implements ProbeRunner<'disruption'> {
  readonly runs: ProbeRun<'disruption'>[] = [];
  constructor(
    private readonly answer: (step: PlannedStep) => Partial<ProbeStepOutcome<'disruption'>> = () => ({}),
    readonly unavailable?: (step: PlannedStep) => string | null,
  ) {}

  run(run: ProbeRun<'disruption'>): Promise<ProbeStepOutcome<'disruption'>[]> {
    this.runs.push(run);
    run.log(`restarting PostgreSQL for ${run.steps.length} steps`);
    return Promise.resolve(
      run.steps.map((s) => ({
        stepId: s.stepId,
        status: 'completed' as const,
        result: disruptionResult({
          mode: s.params.connect,
          errors:
            s.target.kind === 'direct'
              ? [{ class: 'server-stopped', sqlstate: '57P01', code: null, count: 3, sample: 'terminating' }]
              : [],
        }),
        startedAt: '2026-11-21T10:00:01.000Z',
        endedAt: '2026-11-21T10:00:09.000Z',
        transcript: `probe of ${s.stepId}\n`,
        ...this.answer(s),
      })),
    );
  }
}

interface Harness {
  readonly runDir: string;
  readonly sink: FileSystemSink;
  readonly steps: PlannedStep[];
  readonly events: ProgressEvent[];
  readonly resets: string[];
  options(extra?: Partial<RunSuiteOptions>): RunSuiteOptions;
}

function harness(): Harness {
  const runDir = path.join(scratchDir('proxylab-probe-steps-'), 'run');
  const sink = new FileSystemSink(runDir);
  const steps = expandSuite(SUITE, capacities());
  const events: ProgressEvent[] = [];
  const resets: string[] = [];
  const pool: PoolControl = {
    reset: (t) => {
      resets.push(t.name);
      return Promise.resolve();
    },
    setPoolPercent: () => Promise.resolve(),
    restore: () => Promise.resolve(),
  };
  return {
    runDir,
    sink,
    steps,
    events,
    resets,
    options: (extra = {}) => ({
      runId: 'p1',
      suite: SUITE,
      steps,
      targets: targets(),
      executor: NO_PGBENCH,
      pool,
      sink,
      clock: fakeClock(),
      progress: (ev) => events.push(ev),
      mode: 'local',
      environment: {
        maxConnections: 40,
        serverVersion: '15.18',
        pgbenchVersion: '15.18',
        poolerVersion: '1.18.0',
        cpus: 2,
      },
      settings: {},
      ...extra,
    }),
  };
}

function readStepFile(runDir: string, stepId: string): ReturnType<typeof stepRecordSchema.parse> {
  const file = `steps/${stepFileName(stepId)}.json`;
  return parseRunFile(stepRecordSchema, file, fs.readFileSync(path.join(runDir, file), 'utf8'));
}

describe('probe steps in the plan', () => {
  test('each repetition is one group, and even repetitions reverse the target order', () => {
    // GIVEN / WHEN the scenario expanded against direct and a transaction pool
    const steps = expandSuite(SUITE, capacities());
    // THEN 2 targets × 2 modes per repetition, grouped by repetition
    expect(steps.map((s) => [s.probe?.group, s.target.name, s.params.connect])).toEqual([
      ['restart/r1', 'direct', 'persistent'],
      ['restart/r1', 'pgbouncer-transaction', 'persistent'],
      ['restart/r1', 'direct', 'per-transaction'],
      ['restart/r1', 'pgbouncer-transaction', 'per-transaction'],
      ['restart/r2', 'pgbouncer-transaction', 'persistent'],
      ['restart/r2', 'direct', 'persistent'],
      ['restart/r2', 'pgbouncer-transaction', 'per-transaction'],
      ['restart/r2', 'direct', 'per-transaction'],
    ]);
    expect(steps[0]?.params.script).toBe('disruption(postgres-restart fast)');
    expect(steps[0]?.stepId).toBe('restart/direct/c2/extended/persistent/r1');
    // the timeout follows the probe's 8 s, not pgbench's
    expect(steps[0]?.timeoutSec).toBe(Math.ceil(8 * 1.5) + 60);
    // expectations by capability, as for pgbench steps
    expect(steps.map((s) => s.expectation.outcome)).toEqual([
      'errors',
      'any',
      'errors',
      'any',
      'any',
      'errors',
      'any',
      'errors',
    ]);
  });

  test('plan.json keeps each step probe and reads back through its schema', async () => {
    // GIVEN a plan with probe steps, written by the sink
    const h = harness();
    await h.sink.writePlan(
      buildPlan({
        runId: 'p1',
        suite: SUITE.name,
        mode: 'local',
        createdAt: '2026-11-21T10:00:00Z',
        environment: h.options().environment,
        targets: capacities().map((c) => c.descriptor as NonNullable<typeof c.descriptor>),
        steps: h.steps,
      }),
    );
    // WHEN read back (schema-checked) THEN the probe is there, spec and group
    const text = fs.readFileSync(path.join(h.runDir, 'plan.json'), 'utf8');
    const plan = parseRunFile(planSchema, 'plan.json', text);
    expect(plan.steps[0]?.probe).toEqual({ group: 'restart/r1', spec: SCENARIO.probe });
    expect((await h.sink.readPlan())?.steps.length).toBe(8);
  });

  test.each([
    ['an unknown kind', { kind: 'nope' }, /probe\.kind must be one of disruption, session-state, got nope/],
    [
      'an interval outside 20–1000',
      { ...SCENARIO.probe, intervalMs: 5 },
      /restart: probe\.intervalMs must be an integer 20–1000, got 5/,
    ],
    [
      'a restart without a shutdown mode',
      { ...SCENARIO.probe, disruption: { action: 'postgres-restart', shutdown: null } },
      /probe\.disruption\.shutdown must be one of fast, immediate for postgres-restart, got null/,
    ],
    [
      'a shutdown mode on another action',
      { ...SCENARIO.probe, disruption: { action: 'pooler-pause', shutdown: 'fast' } },
      /probe\.disruption\.shutdown is for postgres-restart only/,
    ],
  ])('a probe with %s is refused before anything runs, naming the field', (_what, probe, message) => {
    // GIVEN a scenario whose probe is bad
    const bad = { ...SCENARIO, probe } as unknown as Scenario;
    // WHEN / THEN
    expect(() => expandSuite({ ...SUITE, scenarios: [bad] }, capacities())).toThrow(message);
  });
});

describe('probe steps in the engine', () => {
  test('one runner call per group; every step recorded with its probe result, judged, never pgbench', async () => {
    // GIVEN a runner for disruptions
    const h = harness();
    const runner = new FakeDisruptionRunner();
    // WHEN
    const result = await runSuite(h.options({ probes: { disruption: runner } }));
    // THEN two executions (one per repetition), each with its four steps in plan order
    expect(runner.runs.map((r) => r.steps.map((s) => s.stepId))).toEqual([
      h.steps.slice(0, 4).map((s) => s.stepId),
      h.steps.slice(4).map((s) => s.stepId),
    ]);
    expect([...(runner.runs[0]?.targets.keys() ?? [])].sort()).toEqual(['direct', 'pgbouncer-transaction']);
    expect(result.manifest.status).toBe('completed');
    expect(result.manifest.stepsCompleted).toBe(8);
    // each pool reset once per group
    expect(h.resets).toEqual(['direct', 'pgbouncer-transaction', 'pgbouncer-transaction', 'direct']);
    // on disk: schema-checked, the probe result beside a null pgbench result, the transcript as stdout
    const direct = readStepFile(h.runDir, 'restart/direct/c2/extended/persistent/r1');
    expect(direct.result).toBeNull();
    expect(direct.probe?.kind).toBe('disruption');
    expect(direct.probe?.kind === 'disruption' ? direct.probe.errors[0]?.sqlstate : null).toBe('57P01');
    expect(direct.command).toEqual(['proxylab-probe', 'disruption', 'disruption(postgres-restart fast)']);
    expect(direct.verdict.held).toBe(true);
    expect(direct.verdict.expected).toBe('errors: server-stopped (disruption)');
    const stdout = fs.readFileSync(path.join(h.runDir, direct.files.stdout), 'utf8');
    expect(stdout).toBe('probe of restart/direct/c2/extended/persistent/r1\n');
    const pooled = readStepFile(h.runDir, 'restart/pgbouncer-transaction/c2/extended/persistent/r1');
    expect(pooled.verdict.held).toBeNull();
    // the report reads a run of probe steps without a pgbench result
    const report = writeReport(h.runDir, { now: new Date('2026-11-21T11:00:00Z') });
    const page = fs.readFileSync(report.htmlPath, 'utf8');
    // the disruption's own section (timeline, downtime table), not pgbench's tps panels
    expect(page).toContain('data-chart="timeline"');
    expect(page).toMatch(/<li>direct \(persistent, reconnecting\), a PostgreSQL restart: errors in 2 of 2/);
    expect(page).not.toContain('data-chart="tps"');
    expect(fs.readFileSync(report.mdPath, 'utf8')).toMatch(/^## restart$/m);
    // progress: one start per group, one end per step, the runner's lines passed on
    expect(h.events.filter((e) => e.type === 'step-start')).toHaveLength(2);
    expect(h.events.filter((e) => e.type === 'step-end')).toHaveLength(8);
    expect(
      h.events.filter((e) => e.type === 'probe-log').map((e) => e.type === 'probe-log' && e.line),
    ).toEqual(['restarting PostgreSQL for 4 steps', 'restarting PostgreSQL for 4 steps']);
  });

  test('a run without a runner for the kind records every probe step not-available, saying why', async () => {
    // GIVEN no probe runners at all
    const h = harness();
    // WHEN
    const result = await runSuite(h.options());
    // THEN nothing dropped: 8 records, not judged, the reason in the note
    expect(result.records).toHaveLength(8);
    expect(result.records.every((r) => r.status === 'not-available' && r.verdict.held === null)).toBe(true);
    expect(result.records[0]?.note).toMatch(/it has no disruption probe runner/);
    expect(result.manifest.status).toBe('completed');
  });

  test('steps the runner cannot measure are recorded not-available, the rest of the group runs', async () => {
    // GIVEN a runner that cannot disrupt through the pooler
    const h = harness();
    const runner = new FakeDisruptionRunner(undefined, (s) =>
      s.target.kind === 'direct' ? null : 'this stack has no standby',
    );
    // WHEN
    const result = await runSuite(h.options({ probes: { disruption: runner } }));
    // THEN only the direct steps reached the runner
    expect(runner.runs.flatMap((r) => r.steps.map((s) => s.target.name))).toEqual([
      'direct',
      'direct',
      'direct',
      'direct',
    ]);
    const pooled = result.records.filter((r) => r.target.kind !== 'direct');
    expect(pooled.map((r) => [r.status, r.note])).toEqual(
      pooled.map(() => ['not-available', 'this stack has no standby']),
    );
  });

  test('an infrastructure error in a group stores every step of it, then fails the run; a resume reruns only what is missing', async () => {
    // GIVEN a runner whose first execution loses the server for the pooled persistent step
    const h = harness();
    const broken = 'restart/pgbouncer-transaction/c2/extended/persistent/r1';
    const first = new FakeDisruptionRunner((s) =>
      s.stepId === broken
        ? { status: 'infrastructure-error', result: null, note: 'PostgreSQL stayed down' }
        : {},
    );
    // WHEN
    const failed = await runSuite(h.options({ probes: { disruption: first } }));
    // THEN the run failed after storing the group; the broken step is on disk but not finished
    expect(failed.manifest.status).toBe('failed');
    expect(failed.manifest.error).toMatch(/PostgreSQL stayed down/);
    expect(first.runs).toHaveLength(1);
    expect(failed.manifest.stepsCompleted).toBe(3);
    expect(readStepFile(h.runDir, broken).status).toBe('infrastructure-error');
    // WHEN resumed with a healthy runner
    const second = new FakeDisruptionRunner();
    const resumed = await runSuite(h.options({ probes: { disruption: second } }));
    // THEN the first group reruns only the missing step, the second group runs whole
    expect(second.runs.map((r) => r.steps.map((s) => s.stepId))).toEqual([
      [broken],
      h.steps.slice(4).map((s) => s.stepId),
    ]);
    expect(resumed.manifest.status).toBe('completed');
    expect(resumed.manifest.stepsCompleted).toBe(8);
  });

  test('a server the watch sees die under a group makes each of its steps an infrastructure error', async () => {
    // GIVEN a watch that reports a death once the runner has run
    const h = harness();
    let dead: string | null = null;
    const watch: InfrastructureWatch = { failure: () => dead, signal: new AbortController().signal };
    const runner = new FakeDisruptionRunner((s) => {
      dead = 'PostgreSQL (pid 42) was killed by SIGKILL';
      return { stepId: s.stepId };
    });
    // WHEN
    const result = await runSuite(h.options({ probes: { disruption: runner }, infrastructure: watch }));
    // THEN
    expect(result.manifest.status).toBe('failed');
    expect(readStepFile(h.runDir, h.steps[0]?.stepId ?? '').status).toBe('infrastructure-error');
    expect(readStepFile(h.runDir, h.steps[0]?.stepId ?? '').verdict.held).toBeNull();
    expect(result.manifest.error).toMatch(/SIGKILL/);
  });

  test('a lost acknowledged write breaks the step whatever else was expected', async () => {
    // GIVEN a runner whose pooled per-transaction clients lost a write
    const h = harness();
    const runner = new FakeDisruptionRunner((s) =>
      s.target.kind === 'direct'
        ? {}
        : { result: disruptionResult({ mode: s.params.connect, writes: { acknowledgedMissing: 1 } }) },
    );
    // WHEN
    const result = await runSuite(h.options({ probes: { disruption: runner } }));
    // THEN informational steps become broken ones, and the run says not all held
    const pooled = result.records.filter((r) => r.target.kind !== 'direct');
    expect(
      pooled.every(
        (r) => r.verdict.held === false && /1 acknowledged write\(s\) LOST/.test(r.verdict.observed),
      ),
    ).toBe(true);
    expect(result.allHeld).toBe(false);
  });

  test('Ctrl-C during the first group: nothing recorded, but the local run keeps its directory', async () => {
    // GIVEN proxylab local's stopper (lib/local/run-stopper.ts) on the engine's progress and signal,
    // and a group whose disruption is under way when SIGINT arrives
    const h = harness();
    const lines: string[] = [];
    const stopper = new RunStopper('p1', false, (l) => lines.push(l));
    const runner: ProbeRunner<'disruption'> = {
      run: (run) => {
        stopper.onSignal('SIGINT');
        return new FakeDisruptionRunner().run(run);
      },
    };
    // WHEN
    const result = await runSuite(
      h.options({
        probes: { disruption: runner },
        progress: stopper.progress((ev) => h.events.push(ev)),
        signal: stopper.abort.signal,
      }),
    );
    // THEN the run is interrupted with no step recorded (the group runs again on resume) ...
    expect(result.manifest.status).toBe('interrupted');
    expect(result.records).toEqual([]);
    // ... and runLocal keeps the run directory (no removeUnmeasuredRun): the group had started
    expect(stopper.nothingMeasured(result.manifest.status, null)).toBe(false);
    expect(lines[0]).toMatch(/the step is not recorded, the run directory is kept/);
  });

  test('a missing outcome from the runner is an infrastructure error naming the runner', async () => {
    // GIVEN a runner that forgets a step
    const h = harness();
    const runner: ProbeRunner<'disruption'> = {
      run: async (run) => (await new FakeDisruptionRunner().run(run)).slice(1),
    };
    // WHEN
    const result = await runSuite(h.options({ probes: { disruption: runner } }));
    // THEN
    expect(result.manifest.status).toBe('failed');
    expect(readStepFile(h.runDir, h.steps[0]?.stepId ?? '').note).toMatch(
      /disruption probe runner returned no outcome/,
    );
  });
});
