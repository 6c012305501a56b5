/**
 * The suite engine through fake ports: a fake pgbench executor that answers with real pgbench
 * captures (test/fixtures/pgbench/pg15-local), a recording pool control, a fake clock, and the
 * real filesystem sink in a temporary directory (so "on disk" means on disk).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { exitCodeFor, UsageError } from '../../lib/core/errors';
import type {
  InfrastructureWatch,
  Clock,
  PgbenchExecutor,
  PgbenchInvocation,
  PgbenchOutcome,
  PoolControl,
  ServerConnectionsProbe,
  Target,
} from '../../lib/engine/ports';
import { runSuite, type ProgressEvent, type RunSuiteOptions } from '../../lib/engine/run-suite';
import { FileSystemSink } from '../../lib/local/fs-sink';
import { getSuite, type Suite } from '../../lib/suite/catalog';
import { expandSuite, type PlannedStep, type TargetCapacity } from '../../lib/suite/expand';
import { describeTarget } from '../../lib/suite/targets';
import {
  stepFileName,
  type RunManifest,
  type StepRecord,
  type TargetKind,
  type TargetRef,
} from '../../lib/suite/types';
import { defined } from '../helpers/defined';
import { scratchDir } from '../helpers/scratch';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'pgbench', 'pg15-local');
const MAX_CONNECTIONS = 40;
const POOL_SIZE = 10;

interface Capture {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
}

function capture(name: string): Capture {
  const meta = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.meta.json`), 'utf8')) as {
    exitCode: number | null;
  };
  return {
    stdout: fs.readFileSync(path.join(FIXTURES, `${name}.stdout`), 'utf8'),
    stderr: fs.readFileSync(path.join(FIXTURES, `${name}.stderr`), 'utf8'),
    exitCode: meta.exitCode,
  };
}

/** Which real capture answers a smoke step (same target kind, clients, protocol and connect mode). */
const SMOKE_CAPTURES: Record<string, string> = {
  'smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-off/r1': 'pgb_sel1_prepared_c5',
  'smoke-prepared/pgbouncer-transaction/c5/simple/persistent/ps-off/r1': 'pgb_sel1_simple_c5',
  'smoke-max-connections/direct/c60/simple/persistent/r1': 'direct_sel1_simple_c60_bench',
  'smoke-max-connections/pgbouncer-transaction/c60/simple/persistent/r1': 'pgb_S_simple_c60',
  'smoke-churn/direct/c5/simple/per-transaction/r1': 'direct_C_sel1_c5_trust',
  'smoke-churn/pgbouncer-transaction/c5/simple/per-transaction/r1': 'pgbtx_C_sel1_c5',
};

function capacities(kinds: readonly TargetKind[]): TargetCapacity[] {
  return kinds.map((kind) => ({
    ref: { kind, name: kind },
    maxConnections: MAX_CONNECTIONS,
    poolSize: kind === 'direct' ? null : POOL_SIZE,
  }));
}

function fakeTargets(kinds: readonly TargetKind[]): Target[] {
  return kinds.map((kind, i) => ({
    ref: { kind, name: kind },
    connection: () => ({
      host: '127.0.0.1',
      port: 20000 + i,
      user: 'bench',
      dbname: kind === 'pgbouncer-session' ? 'bench_session' : 'bench',
    }),
    maxConnections: () => Promise.resolve(MAX_CONNECTIONS),
    poolSize: () => Promise.resolve(kind === 'direct' ? null : POOL_SIZE),
  }));
}

type Answer = (inv: PgbenchInvocation, stepId: string | null) => Promise<PgbenchOutcome> | PgbenchOutcome;

/** Records every port call in one ordered list: `init`, `run:<stepId>`, `reset:<target>`, `pool%:<target>:<n>`, `restore`. */
class Recorder {
  readonly calls: string[] = [];
}

class FakeExecutor implements PgbenchExecutor {
  private dirs = 0;
  constructor(
    private readonly rec: Recorder,
    private readonly stepsByDir: Map<string, string>,
    private readonly answer: Answer,
    private readonly root: string,
  ) {}

  workDir(name: string): Promise<string> {
    const dir = path.join(this.root, `${name}-${this.dirs++}`);
    fs.mkdirSync(dir, { recursive: true });
    this.stepsByDir.set(dir, name);
    return Promise.resolve(dir);
  }

  async run(inv: PgbenchInvocation): Promise<PgbenchOutcome> {
    const isInit = inv.argv.includes('-i');
    const name = this.stepsByDir.get(inv.logDir) ?? null;
    this.rec.calls.push(isInit ? 'init' : `run:${name}`);
    if (isInit) return { stdout: '', stderr: 'done.\n', exitCode: 0, timedOut: false, logFiles: [] };
    return this.answer(inv, name);
  }
}

function smokeAnswer(stepsByFile: Map<string, PlannedStep>): Answer {
  return (_inv, name) => {
    const step = name === null ? undefined : stepsByFile.get(name);
    if (!step) throw new Error(`no step for work dir ${name}`);
    const c = capture(defined(SMOKE_CAPTURES[step.stepId], `a capture for ${step.stepId}`));
    return { ...c, timedOut: false, logFiles: [], cpuMaxPercent: 40 };
  };
}

function recordingPool(rec: Recorder): PoolControl {
  return {
    reset: (t: TargetRef) => {
      rec.calls.push(`reset:${t.name}`);
      return Promise.resolve();
    },
    setPoolPercent: (t: TargetRef, percent: number) => {
      rec.calls.push(`pool%:${t.name}:${percent}`);
      return Promise.resolve();
    },
    restore: () => {
      rec.calls.push('restore');
      return Promise.resolve();
    },
  };
}

function fakeClock(): Clock {
  let t = Date.parse('2026-11-21T10:00:00Z');
  return {
    now: () => new Date((t += 250)),
    sleep: (ms: number) => {
      t += ms;
      return Promise.resolve();
    },
  };
}

interface Harness {
  readonly dir: string;
  readonly sink: FileSystemSink;
  readonly rec: Recorder;
  readonly steps: PlannedStep[];
  readonly events: ProgressEvent[];
  options(answer?: Answer, extra?: Partial<RunSuiteOptions>): RunSuiteOptions;
}

let tmpRoots: string[] = [];

function harness(
  suite: Suite = getSuite('smoke'),
  kinds: readonly TargetKind[] = ['direct', 'pgbouncer-transaction', 'pgbouncer-session'],
): Harness {
  const dir = scratchDir('proxylab-engine-test-');
  tmpRoots.push(dir);
  const runDir = path.join(dir, 'run');
  const sink = new FileSystemSink(runDir);
  const rec = new Recorder();
  // Cells the (unknown-version) pooler cannot run are covered by their own test below.
  const steps = expandSuite(suite, capacities(kinds)).filter((s) => s.unavailable === null);
  const stepsByFile = new Map(steps.map((s) => [stepFileName(s.stepId), s]));
  const events: ProgressEvent[] = [];
  return {
    dir: runDir,
    sink,
    rec,
    steps,
    events,
    options: (answer = smokeAnswer(stepsByFile), extra = {}) => {
      const stepsByDir = new Map<string, string>();
      const executor = new FakeExecutor(rec, stepsByDir, answer, path.join(dir, 'work'));
      return {
        runId: 'r1',
        suite,
        steps,
        targets: fakeTargets(kinds),
        executor,
        pool: recordingPool(rec),
        sink,
        clock: fakeClock(),
        progress: (ev) => events.push(ev),
        mode: 'local',
        environment: {
          maxConnections: MAX_CONNECTIONS,
          serverVersion: '15.18',
          pgbenchVersion: '15.18',
          poolerVersion: '1.18.0',
          cpus: 2,
        },
        settings: { maxConnections: MAX_CONNECTIONS },
        ...extra,
      };
    },
  };
}

function readManifest(runDir: string): RunManifest {
  return JSON.parse(fs.readFileSync(path.join(runDir, 'manifest.json'), 'utf8')) as RunManifest;
}

function readStep(runDir: string, stepId: string): StepRecord {
  return JSON.parse(
    fs.readFileSync(path.join(runDir, 'steps', `${stepFileName(stepId)}.json`), 'utf8'),
  ) as StepRecord;
}

afterEach(() => {
  for (const d of tmpRoots) fs.rmSync(d, { recursive: true, force: true });
  tmpRoots = [];
});

describe('runSuite', () => {
  test('resets the pool before every step, loads data once per scale, restores pools at the end', async () => {
    // GIVEN the smoke plan (6 steps, one scale)
    const h = harness();
    // WHEN
    const result = await runSuite(h.options());
    // THEN init once, then reset → run per step, in plan order, then restore
    const expected = [
      'init',
      ...h.steps.flatMap((s) => [`reset:${s.target.name}`, `run:${stepFileName(s.stepId)}`]),
      'restore',
    ];
    expect(h.rec.calls).toEqual(expected);
    expect(result.manifest.status).toBe('completed');
    expect(result.records.map((r) => r.stepId)).toEqual(h.steps.map((s) => s.stepId));
  });

  test('isolates each step’s target first, and records the connections held around every measured step', async () => {
    // GIVEN a pool control that can isolate targets, and a probe whose counts are scripted:
    // before = 3, one sample of 9 while pgbench runs, after = 4 (per step)
    const h = harness();
    const base = h.options();
    const pool: PoolControl = {
      ...base.pool,
      isolate: (t: TargetRef) => {
        h.rec.calls.push(`isolate:${t.name}`);
        return Promise.resolve();
      },
    };
    let watched = 0;
    const serverConnections: ServerConnectionsProbe = {
      watch: () => {
        watched++;
        h.rec.calls.push('watch');
        return Promise.resolve({
          stop: () => Promise.resolve({ before: 3, peak: 9, after: 4 }),
        });
      },
    };
    // WHEN
    await runSuite({ ...base, pool, serverConnections });
    // THEN before each step: isolate its target, reset, watch, run; and every record carries the figures
    expect(h.rec.calls).toEqual([
      ...h.steps.flatMap((s, i) => [
        `isolate:${s.target.name}`,
        ...(i === 0 ? ['init'] : []),
        `reset:${s.target.name}`,
        'watch',
        `run:${stepFileName(s.stepId)}`,
      ]),
      'restore',
    ]);
    expect(watched).toBe(h.steps.length);
    for (const s of h.steps)
      expect(readStep(h.dir, s.stepId).serverConnections).toEqual({ before: 3, peak: 9, after: 4 });
  });

  test('without a probe the step records leave serverConnections out (old readers see no change)', async () => {
    const h = harness();
    await runSuite(h.options());
    const first = defined(h.steps[0], 'a step');
    expect('serverConnections' in readStep(h.dir, first.stepId)).toBe(false);
  });

  test('loads data again when the scale or the init flags change, not otherwise', async () => {
    // GIVEN quick-e2 (scale 1, no flags), e2 at scale 1 (--unlogged-tables --foreign-keys), e2 again, quick-e3 (scale 1, no flags)
    const quick = getSuite('quick');
    const e2 = defined(getSuite('e2').scenarios[0], 'e2 scenario');
    const suite: Suite = {
      name: 'mixed',
      description: 'd',
      scenarios: [
        defined(quick.scenarios[1], 'quick scenario 1'),
        { ...e2, clients: [5], scale: 1 },
        { ...e2, name: 'e2-again', clients: [5], scale: 1 },
        defined(quick.scenarios[2], 'quick scenario 2'),
      ],
    };
    const h = harness(suite, ['direct']);
    const inits: string[] = [];
    const base = h.options(() => ({ ...capture('pgb_S_simple_c5'), timedOut: false, logFiles: [] }));
    const executor: PgbenchExecutor = {
      workDir: (n) => base.executor.workDir(n),
      run: async (inv) => {
        if (inv.argv.includes('-i')) inits.push(inv.argv.slice(1, inv.argv.indexOf('--quiet')).join(' '));
        return base.executor.run(inv);
      },
    };
    // WHEN
    await runSuite({ ...base, executor });
    // THEN three loads: plain, with the flags (same scale), plain again; e2-again reuses the data
    expect(inits).toEqual(['-i -s 1', '-i -s 1 --unlogged-tables --foreign-keys', '-i -s 1']);
  });

  test('writes the manifest first with every step id and status running', async () => {
    // GIVEN an executor that looks at the manifest on disk when the first step runs
    const h = harness();
    let seen: RunManifest | null = null;
    const answer: Answer = (_inv, name) => {
      seen ??= readManifest(h.dir);
      return smokeAnswerFor(h, name);
    };
    // WHEN
    await runSuite(h.options(answer));
    // THEN
    expect(seen).not.toBeNull();
    expect(seen!.status).toBe('running');
    expect(seen!.stepIds).toEqual(h.steps.map((s) => s.stepId));
    expect(seen!.stepsCompleted).toBe(0);
    expect(seen!.environment).toEqual({
      maxConnections: 40,
      serverVersion: '15.18',
      pgbenchVersion: '15.18',
      poolerVersion: '1.18.0',
      cpus: 2,
    });
  });

  test('holds the expected refusal of direct above max_connections and notes the pre-check', async () => {
    // GIVEN / WHEN
    const h = harness();
    await runSuite(h.options());
    // THEN the refused step is recorded as measured, with a held verdict
    const r = readStep(h.dir, 'smoke-max-connections/direct/c60/simple/persistent/r1');
    expect(r.status).toBe('completed');
    expect(r.result?.errors.map((e) => e.class)).toContain('too-many-connections');
    expect(r.result?.complete).toBe(false);
    expect(r.verdict.held).toBe(true);
    expect(r.note).toMatch(/60 clients > max_connections 40/);
    // and the pooled step with the same clients succeeded
    const pooled = readStep(h.dir, 'smoke-max-connections/pgbouncer-transaction/c60/simple/persistent/r1');
    expect(pooled.verdict.held).toBe(true);
    expect(pooled.result?.tps).toBeGreaterThan(0);
  });

  test('judges scenario comparisons after the scenario and keeps them in the manifest', async () => {
    // GIVEN / WHEN
    const h = harness();
    const result = await runSuite(h.options());
    // THEN -C through the pooler vs direct, from the two real captures (≈ 7 ×)
    const churn = result.scenarioVerdicts.filter((v) => v.scenario === 'smoke-churn');
    expect(churn).toHaveLength(1);
    expect(churn[0]?.held).toBe(true);
    expect(churn[0]?.observed).toMatch(/= \d+\.\d+ ×/);
    expect(readManifest(h.dir).scenarioVerdicts).toEqual(result.scenarioVerdicts);
    expect(result.allHeld).toBe(true);
  });

  test('a failure at step 3 leaves steps 1–2 on disk and marks the run failed', async () => {
    // GIVEN an executor that dies on the third step
    const h = harness();
    let n = 0;
    const answer: Answer = (inv, name) => {
      n++;
      if (n === 3) throw new Error('pgbench: spawn ENOENT');
      return smokeAnswerFor(h, name);
    };
    // WHEN
    const result = await runSuite(h.options(answer));
    // THEN
    const m = readManifest(h.dir);
    expect(m.status).toBe('failed');
    expect(m.error).toMatch(/ENOENT/);
    expect(m.stepsCompleted).toBe(2);
    for (const s of h.steps.slice(0, 2)) {
      const base = path.join(h.dir, 'steps', stepFileName(s.stepId));
      expect(fs.existsSync(`${base}.json`)).toBe(true);
      expect(fs.readFileSync(`${base}.stdout`, 'utf8')).toMatch(/pgbench \(15\.18/);
      expect(fs.existsSync(`${base}.stderr`)).toBe(true);
    }
    expect(
      fs.existsSync(
        path.join(h.dir, 'steps', `${stepFileName(defined(h.steps[2], 'planned step 2').stepId)}.json`),
      ),
    ).toBe(false);
    expect(result.allHeld).toBe(false);
    expect(h.rec.calls[h.rec.calls.length - 1]).toBe('restore');
  });

  test('a full disk at step 2: the run ends failed naming the file and the resume command, no .tmp left', async () => {
    // GIVEN a sink whose disk fills up when step 2's stdout is written (manifests still fit)
    const h = harness();
    const step2 = defined(h.steps[1], 'planned step 2');
    const full = `${stepFileName(step2.stepId)}.stdout`;
    const sink = new FileSystemSink(h.dir, (tmp, content) => {
      if (path.basename(tmp).startsWith(`.${full}.`)) {
        fs.writeFileSync(tmp, 'half');
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      fs.writeFileSync(tmp, content, { flag: 'wx' });
    });
    const resume = 'proxylab local --suite smoke --out /r --run-id r1';
    // WHEN
    const result = await runSuite(h.options(undefined, { sink, resumeCommand: resume }));
    // THEN failed (not running), the file and the way to go on named; step 1 kept; no temporaries
    const m = readManifest(h.dir);
    expect(m.status).toBe('failed');
    expect(m.error).toContain(`cannot write ${path.join(h.dir, 'steps', full)}: ENOSPC`);
    expect(m.error).toContain(`resume with ${resume}`);
    expect(m.stepsCompleted).toBe(1);
    expect(result.allHeld).toBe(false);
    const leftovers = fs
      .readdirSync(h.dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.tmp'));
    expect(leftovers).toEqual([]);
  });

  test('a full disk for the final manifest: an error naming the resume command, not a silent "running"', async () => {
    const h = harness();
    // GIVEN a disk that fills up just before the run's last manifest (the one that ends it)
    const sink = new FileSystemSink(h.dir, (tmp, content) => {
      if (path.basename(tmp).startsWith('.manifest.json.') && String(content).includes('"endedAt": "'))
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      fs.writeFileSync(tmp, content, { flag: 'wx' });
    });
    const run = runSuite(h.options(undefined, { sink, resumeCommand: 'proxylab local --run-id r1' }));
    await expect(run).rejects.toThrow(
      /run r1 completed, and its manifest could not be updated: cannot write .*manifest\.json: ENOSPC.*; resume with proxylab local --run-id r1/,
    );
  });

  test.each([
    [
      'another suite',
      { suite: getSuite('quick') },
      /cannot resume run r1: it ran suite smoke, not quick; use a new run id/,
    ],
    [
      'another run id',
      { runId: 'r2' },
      /cannot resume run r2: the run directory holds run r1; use a new run id/,
    ],
    ['another mode', { mode: 'cloud' as const }, /cannot resume run r1: it is a local run, not cloud/],
  ])('resuming with %s is a usage error (exit 2) that writes nothing', async (_what, extra, message) => {
    // GIVEN a finished smoke run r1
    const h = harness();
    await runSuite(h.options());
    const before = fs.readFileSync(path.join(h.dir, 'manifest.json'), 'utf8');
    h.rec.calls.length = 0;
    // WHEN the same directory is run with a different suite / run id / mode
    const run = runSuite(h.options(undefined, extra));
    // THEN a UsageError, no pgbench, the manifest untouched
    await expect(run).rejects.toThrow(message);
    await expect(run).rejects.toBeInstanceOf(UsageError);
    await run.catch((err: unknown) => expect(exitCodeFor(err)).toBe(2));
    expect(h.rec.calls.filter((c) => c.startsWith('run:'))).toEqual([]);
    expect(fs.readFileSync(path.join(h.dir, 'manifest.json'), 'utf8')).toBe(before);
  });

  test('resuming the same run id skips finished steps and completes the rest', async () => {
    // GIVEN a run that failed at step 3
    const h = harness();
    let n = 0;
    await runSuite(
      h.options((inv, name) => {
        if (++n === 3) throw new Error('boom');
        return smokeAnswerFor(h, name);
      }),
    );
    const firstStartedAt = readManifest(h.dir).startedAt;
    h.rec.calls.length = 0;
    // WHEN the same run id runs again
    const result = await runSuite(h.options());
    // THEN only steps 3..6 ran, the manifest is complete and all 6 records are returned
    const ran = h.rec.calls.filter((c) => c.startsWith('run:'));
    expect(ran).toEqual(h.steps.slice(2).map((s) => `run:${stepFileName(s.stepId)}`));
    expect(h.events.filter((e) => e.type === 'step-skip')).toHaveLength(2);
    const m = readManifest(h.dir);
    expect(m.status).toBe('completed');
    expect(m.stepsCompleted).toBe(6);
    expect(m.startedAt).toBe(firstStartedAt);
    expect(result.records).toHaveLength(6);
    expect(result.scenarioVerdicts.some((v) => v.scenario === 'smoke-churn')).toBe(true);
  });

  test('refuses a run directory that belongs to another run id', async () => {
    // GIVEN a finished run r1
    const h = harness();
    await runSuite(h.options());
    // WHEN the same directory is used with another id THEN
    await expect(runSuite(h.options(undefined, { runId: 'other' }))).rejects.toThrow(/holds run r1/);
  });

  test('a pgbench killed by the timeout is hung: every client counted as an unfinished attempt, never a success', async () => {
    // GIVEN pgbench hangs on the pooled simple step (partial progress output, killed)
    const h = harness();
    const answer: Answer = (inv, name) => {
      if (name === stepFileName('smoke-prepared/pgbouncer-transaction/c5/simple/persistent/ps-off/r1')) {
        return {
          stdout: '',
          stderr: 'progress: 1.0 s, 100.0 tps, lat 1.0 ms stddev 0.1, 0 failed\n',
          exitCode: null,
          timedOut: true,
          logFiles: [],
        };
      }
      return smokeAnswerFor(h, name);
    };
    // WHEN
    await runSuite(h.options(answer));
    // THEN
    const r = readStep(h.dir, 'smoke-prepared/pgbouncer-transaction/c5/simple/persistent/ps-off/r1');
    expect(r.status).toBe('hung');
    // 5 clients: each one's attempt in flight is counted, once (the parser's own timeout line replaced)
    expect(r.result?.errors.filter((e) => e.class === 'timeout').map((e) => e.count)).toEqual([5]);
    expect(r.note).toMatch(/^hung: still running at the step timeout of \d+ s/);
    expect(r.verdict.observed).toMatch(/^hung: stopped by the harness/);
    expect(r.result?.complete).toBe(false);
    expect(r.verdict.held).toBe(false); // expected to succeed
    // and the timeout reached the executor from the step
    expect(readManifest(h.dir).status).toBe('completed');
  });

  test('passes the step timeout, env and scripts to the executor; no password in the recorded command', async () => {
    // GIVEN a target whose password travels in env
    const h = harness();
    const seen: PgbenchInvocation[] = [];
    const base = h.options((inv, name) => {
      seen.push(inv);
      return smokeAnswerFor(h, name);
    });
    const targets = base.targets.map((t) => ({
      ...t,
      connection: () => ({ ...t.connection(), env: { PGPASSWORD: 's3cret-pw' } }),
    }));
    // WHEN
    await runSuite({ ...base, targets });
    // THEN
    const first = defined(seen[0], 'the first pgbench invocation');
    expect(first.timeoutMs).toBe(defined(h.steps[0], 'planned step 0').timeoutSec * 1000);
    expect(first.env.PGPASSWORD).toBe('s3cret-pw');
    expect(first.argv[0]).toBe('pgbench');
    expect(first.files?.map((f) => path.basename(f.path))).toEqual(['select-1.sql']);
    const all = fs
      .readdirSync(path.join(h.dir, 'steps'))
      .map((f) => fs.readFileSync(path.join(h.dir, 'steps', f), 'utf8'));
    expect(all.join('\n')).not.toContain('s3cret-pw');
    expect(fs.readFileSync(path.join(h.dir, 'manifest.json'), 'utf8')).not.toContain('s3cret-pw');
    expect(readStep(h.dir, defined(h.steps[0], 'planned step 0').stepId).command.join(' ')).toContain(
      '<workdir>/select-1.sql',
    );
  });

  test('an abort stops the run as interrupted; the step in flight is not recorded', async () => {
    // GIVEN an abort during the second step
    const h = harness();
    const abort = new AbortController();
    let n = 0;
    const answer: Answer = (inv, name) => {
      if (++n === 2) {
        abort.abort();
        return { stdout: '', stderr: '', exitCode: null, timedOut: false, logFiles: [], aborted: true };
      }
      return smokeAnswerFor(h, name);
    };
    // WHEN
    const result = await runSuite(h.options(answer, { signal: abort.signal }));
    // THEN
    const m = readManifest(h.dir);
    expect(m.status).toBe('interrupted');
    expect(m.stepsCompleted).toBe(1);
    expect(
      fs.existsSync(
        path.join(h.dir, 'steps', `${stepFileName(defined(h.steps[0], 'planned step 0').stepId)}.json`),
      ),
    ).toBe(true);
    expect(
      fs.existsSync(
        path.join(h.dir, 'steps', `${stepFileName(defined(h.steps[1], 'planned step 1').stepId)}.json`),
      ),
    ).toBe(false);
    expect(result.allHeld).toBe(false);
  });

  test('a pool-percent sweep sets the percent before the reset of each pooled step', async () => {
    // GIVEN E4 (25/50/75/100 %) on the transaction pool only
    const h = harness(getSuite('e4'), ['pgbouncer-transaction']);
    // WHEN
    await runSuite(h.options(() => ({ ...capture('pgb_S_simple_c60'), timedOut: false, logFiles: [] })));
    // THEN
    const relevant = h.rec.calls.filter(
      (c) => c.startsWith('pool%') || c.startsWith('reset') || c.startsWith('run'),
    );
    expect(relevant).toEqual(
      h.steps.flatMap((s) => [
        `pool%:pgbouncer-transaction:${s.params.poolPercent}`,
        'reset:pgbouncer-transaction',
        `run:${stepFileName(s.stepId)}`,
      ]),
    );
    expect(h.steps.map((s) => s.params.poolPercent)).toEqual([25, 50, 75, 100]);
    expect(h.rec.calls[h.rec.calls.length - 1]).toBe('restore');
  });

  test("a sweep over two pooled targets resizes each target to the step's percent before it runs", async () => {
    // GIVEN E4 on two pooled targets (on a lab: two proxies)
    const h = harness(getSuite('e4'), ['pgbouncer-transaction', 'rds-proxy']);
    // WHEN
    await runSuite(h.options(() => ({ ...capture('pgb_S_simple_c60'), timedOut: false, logFiles: [] })));
    // THEN replaying the calls, every run finds its own target at the step's percent
    const current = new Map<string, number>();
    const seen: string[] = [];
    for (const call of h.rec.calls) {
      const resize = /^pool%:(.+):(\d+)$/.exec(call);
      const [, resizedTarget, resizedPercent] = resize ?? [];
      if (resizedTarget !== undefined) current.set(resizedTarget, Number(resizedPercent));
      const ranStep = /^run:(.+)$/.exec(call)?.[1];
      if (ranStep !== undefined) {
        const step = h.steps.find((st) => stepFileName(st.stepId) === ranStep);
        expect(step && current.get(step.target.name)).toBe(step?.params.poolPercent);
        seen.push(ranStep);
      }
    }
    expect(seen).toHaveLength(8);
    expect(new Set(h.steps.map((st) => st.target.name))).toEqual(
      new Set(['pgbouncer-transaction', 'rds-proxy']),
    );
  });

  test('turns per-transaction logs into percentiles, a series and a merged per-second log', async () => {
    // GIVEN pgbench wrote two per-transaction log files (two threads) for the first step
    const h = harness();
    const thread0 =
      ['0 1 1000 0 1795255364 100', '0 2 2000 0 1795255364 200', '0 3 3000 0 1795255365 100'].join('\n') +
      '\n';
    const thread1 = ['1 1 4000 0 1795255364 300', '1 2 5000 0 1795255365 200'].join('\n') + '\n';
    const answer: Answer = (inv, name) => {
      const base = smokeAnswerFor(h, name);
      return name === stepFileName(defined(h.steps[1], 'planned step 1').stepId)
        ? { ...base, logFiles: [thread0, thread1] }
        : base;
    };
    // WHEN
    await runSuite(h.options(answer));
    // THEN
    const r = readStep(h.dir, defined(h.steps[1], 'planned step 1').stepId);
    expect(r.result?.latencyP50Ms).toBe(3);
    expect(r.result?.latencyP99Ms).toBe(5);
    expect(r.result?.series?.map((p) => [p.t, p.transactions])).toEqual([
      [1795255364, 3],
      [1795255365, 2],
    ]);
    expect(r.files.log).toBe(`steps/${stepFileName(defined(h.steps[1], 'planned step 1').stepId)}.log`);
    expect(fs.readFileSync(path.join(h.dir, r.files.log!), 'utf8')).toBe(
      '1795255364 3 7000 21000000 1000 4000\n1795255365 2 8000 34000000 3000 5000\n',
    );
    // a step without logs keeps none
    expect(readStep(h.dir, defined(h.steps[0], 'planned step 0').stepId).files.log).toBeNull();
  });

  test('reports progress: run-start, step-start with ETA, step-end per step, run-end', async () => {
    const h = harness();
    await runSuite(h.options());
    const types = h.events.map((e) => e.type);
    expect(types[0]).toBe('run-start');
    expect(types[types.length - 1]).toBe('run-end');
    expect(types.filter((t) => t === 'step-start')).toHaveLength(6);
    expect(types.filter((t) => t === 'step-end')).toHaveLength(6);
    const starts = h.events.filter(
      (e): e is Extract<ProgressEvent, { type: 'step-start' }> => e.type === 'step-start',
    );
    expect(starts.map((e) => e.index)).toEqual([1, 2, 3, 4, 5, 6]);
    const firstEta = starts[0]?.etaSec;
    expect(firstEta).toEqual(expect.any(Number));
    expect(starts[5]?.etaSec).toBeLessThan(firstEta ?? NaN);
  });

  test('a step that ends early (refused, aborted) does not shrink the ETA of the steps that still run', async () => {
    // GIVEN steps that each take about 1 s of (fake) time against a plan of 3 s + 1 s overhead
    const h = harness();
    await runSuite(h.options());
    // THEN the ETA stays the planned remainder: 6 steps × 4 s, then 5 × 4 s, …
    const starts = h.events.filter(
      (e): e is Extract<ProgressEvent, { type: 'step-start' }> => e.type === 'step-start',
    );
    expect(starts.map((e) => e.etaSec)).toEqual([24, 20, 16, 12, 8, 4]);
  });
});

function smokeAnswerFor(h: Harness, name: string | null): PgbenchOutcome {
  const step = h.steps.find((s) => name !== null && name.startsWith(stepFileName(s.stepId)));
  if (!step) throw new Error(`no step for ${name}`);
  return {
    ...capture(defined(SMOKE_CAPTURES[step.stepId], `a capture for ${step.stepId}`)),
    timedOut: false,
    logFiles: [],
  };
}

/** A watch whose server "dies" when `kill` is called: failure() names it and the signal aborts. */
function fakeWatch(): { watch: InfrastructureWatch; kill: (cause: string) => void } {
  const ctl = new AbortController();
  let failure: string | null = null;
  return {
    watch: { failure: () => failure, signal: ctl.signal },
    kill: (cause) => {
      failure = cause;
      ctl.abort();
    },
  };
}

describe('infrastructure failures are not measurements', () => {
  const KILLED = 'PostgreSQL (pid 4242) was killed by SIGKILL';

  /** pgbench of step 2 waits until the server dies, then returns what an aborted pgbench returns. */
  function dieAtStep2(h: Harness, kill: (cause: string) => void): Answer {
    let n = 0;
    return (inv, name) => {
      if (++n !== 2) return smokeAnswerFor(h, name);
      kill(KILLED);
      expect(inv.signal?.aborted).toBe(true); // the watch's abort reaches pgbench
      return {
        stdout: '',
        stderr: 'pgbench: error: connection to server failed\n',
        exitCode: null,
        timedOut: false,
        logFiles: [],
        aborted: true,
      };
    };
  }

  test('a server dying during step 2: the step is an unjudged infrastructure-error, the run failed with the cause', async () => {
    const h = harness();
    const w = fakeWatch();
    const result = await runSuite(h.options(dieAtStep2(h, w.kill), { infrastructure: w.watch }));
    const m = readManifest(h.dir);
    expect(m.status).toBe('failed');
    expect(m.error).toContain(KILLED);
    expect(m.stepsCompleted).toBe(1);
    const step2 = readStep(h.dir, defined(h.steps[1], 'step 2').stepId);
    expect(step2.status).toBe('infrastructure-error');
    expect(step2.verdict.held).toBeNull();
    expect(step2.note).toContain(KILLED);
    // nothing after step 2 ran, no scenario comparison was judged on the missing measurement
    expect(h.rec.calls.filter((c) => c.startsWith('run:'))).toHaveLength(2);
    expect(result.records.map((r) => r.stepId)).toEqual([defined(h.steps[0], 'step 1').stepId]);
    expect(result.scenarioVerdicts).toEqual([]);
    expect(result.allHeld).toBe(false);
  });

  test('resume measures the infrastructure-error step again and completes', async () => {
    const h = harness();
    const w = fakeWatch();
    await runSuite(h.options(dieAtStep2(h, w.kill), { infrastructure: w.watch }));
    h.rec.calls.length = 0;
    const result = await runSuite(h.options(undefined, { infrastructure: fakeWatch().watch }));
    const ran = h.rec.calls.filter((c) => c.startsWith('run:')).map((c) => c.slice(4));
    expect(ran[0]).toBe(stepFileName(defined(h.steps[1], 'step 2').stepId));
    expect(ran).toHaveLength(h.steps.length - 1);
    expect(result.manifest.status).toBe('completed');
    expect(readStep(h.dir, defined(h.steps[1], 'step 2').stepId).status).toBe('completed');
    expect(result.allHeld).toBe(true);
  });

  test("a server whose death ends pgbench before the watch's exit event: the active look makes it an infrastructure-error", async () => {
    // GIVEN step 2's pgbench ending with every client aborted (the server closed the connections)
    // while failure() has not seen the death yet, but the active look (confirm) finds the server gone
    const h = harness();
    const w = fakeWatch();
    const confirms: string[] = [];
    let dying = false;
    const watch: InfrastructureWatch = {
      ...w.watch,
      confirm: () => {
        confirms.push(dying ? 'dead' : 'up');
        return Promise.resolve(dying ? KILLED : null);
      },
    };
    let n = 0;
    const answer: Answer = (_inv, name) => {
      if (++n !== 2) return smokeAnswerFor(h, name);
      dying = true;
      return {
        stdout: '',
        stderr:
          'pgbench: error: client 0 aborted in command 1 (SQL) of script 0; perhaps the backend died while processing\n',
        exitCode: 2,
        timedOut: false,
        logFiles: [],
      };
    };
    // WHEN the suite runs
    await runSuite(h.options(answer, { infrastructure: watch }));
    // THEN step 2 is not a measurement: infrastructure-error, unjudged, the run failed with the cause
    const step2 = readStep(h.dir, defined(h.steps[1], 'step 2').stepId);
    expect(step2.status).toBe('infrastructure-error');
    expect(step2.verdict.held).toBeNull();
    expect(readManifest(h.dir).error).toContain(KILLED);
    // AND only failed pgbench runs were looked at (step 1 has expected errors: 'up'; step 2: 'dead')
    expect(confirms).toEqual(['up', 'dead']);
  });

  test('a failed pgbench with a healthy server is a measurement', async () => {
    // GIVEN a step whose clients fail on their own (a refusal), the active look finding the servers up
    const h = harness();
    let n = 0;
    const answer: Answer = (_inv, name) =>
      ++n === 1
        ? {
            stdout: '',
            stderr: 'pgbench: error: too many clients already\n',
            exitCode: 2,
            timedOut: false,
            logFiles: [],
          }
        : smokeAnswerFor(h, name);
    const w = fakeWatch();
    await runSuite(
      h.options(answer, { infrastructure: { ...w.watch, confirm: () => Promise.resolve(null) } }),
    );
    // THEN it is recorded as measured (completed), not as an infrastructure failure
    expect(readStep(h.dir, defined(h.steps[0], 'step 1').stepId).status).toBe('completed');
  });

  test('pgbench killed by a signal the harness did not send is an infrastructure-error too', async () => {
    const h = harness();
    let n = 0;
    const answer: Answer = (_inv, name) =>
      ++n === 1
        ? { stdout: '', stderr: '', exitCode: null, signal: 'SIGABRT', timedOut: false, logFiles: [] }
        : smokeAnswerFor(h, name);
    await runSuite(h.options(answer));
    const m = readManifest(h.dir);
    expect(m.status).toBe('failed');
    // the signal is named: SIGABRT (pgbench crashed) reads differently from SIGKILL (killed from outside)
    expect(m.error).toMatch(/pgbench \(the load generator\) was killed by SIGABRT before it finished/);
    expect(readStep(h.dir, defined(h.steps[0], 'step 1').stepId).status).toBe('infrastructure-error');
    expect(m.stepsCompleted).toBe(0);
  });

  test('a server already dead before a step: nothing more runs, the run failed at once', async () => {
    const h = harness();
    const w = fakeWatch();
    let n = 0;
    const answer: Answer = (_inv, name) => {
      if (++n === 1) w.kill('PgBouncer (pid 7) was killed by SIGKILL'); // dies right after step 1 finished
      return smokeAnswerFor(h, name);
    };
    await runSuite(h.options(answer, { infrastructure: w.watch }));
    const m = readManifest(h.dir);
    expect(m.status).toBe('failed');
    expect(m.error).toContain('PgBouncer (pid 7) was killed by SIGKILL');
    expect(h.rec.calls.filter((c) => c.startsWith('run:'))).toHaveLength(1);
    // step 1's pgbench returned after the server died: not trusted as a measurement either
    expect(readStep(h.dir, defined(h.steps[0], 'step 1').stepId).status).toBe('infrastructure-error');
  });
});

/** A real pgbench capture of a server stopping under it (test/unit/suite/captures). */
function stopCapture(name: string, exitCode: number): PgbenchOutcome {
  const dir = path.join(__dirname, 'suite', 'captures');
  const stdout = path.join(dir, `${name}.stdout`);
  return {
    stdout: fs.existsSync(stdout) ? fs.readFileSync(stdout, 'utf8') : '',
    stderr: fs.readFileSync(path.join(dir, `${name}.stderr`), 'utf8'),
    exitCode,
    timedOut: false,
    logFiles: [],
  };
}

describe('a server or pooler stopped under a step is infrastructure, never a finding', () => {
  /** Step 2's pgbench gets the capture; no process death is seen (the local watch has nothing, the cloud has no watch). */
  function stopAtStep2(h: Harness, capture: PgbenchOutcome): Answer {
    let n = 0;
    return (_inv, name) => (++n === 2 ? capture : smokeAnswerFor(h, name));
  }

  test.each([
    ['pg15-fast-shutdown-via-pgbouncer', 2, '57P01'],
    ['pg15-immediate-shutdown-via-pgbouncer', 2, '57P01'],
    ['pg15-shutting-down-at-connect', 1, '57P03'],
    ['pg15-crash-of-another-backend', 2, '57P02'],
    ['pgbouncer125-sigint-server-shutting-down', 2, '08P01'],
    ['pgbouncer125-sigterm-pooler-shutting-down', 2, '08P01'],
  ] as const)(
    '%s: the step is not measured, the run failed (resumable), no verdict broke',
    async (name, exitCode, sqlstate) => {
      // GIVEN step 2's pgbench printing what a stopped server makes it print
      const h = harness();
      // WHEN the suite runs
      const result = await runSuite(h.options(stopAtStep2(h, stopCapture(name, exitCode))));
      // THEN step 2 is an unjudged infrastructure-error whose note names the class and the SQLSTATE
      const step2 = readStep(h.dir, defined(h.steps[1], 'step 2').stepId);
      expect(step2.status).toBe('infrastructure-error');
      expect(step2.verdict.held).toBeNull();
      expect(step2.note).toMatch(/^infrastructure: server-stopped ×\d+: /);
      expect(step2.note).toContain(`SQLSTATE ${sqlstate}`);
      expect(step2.result?.errors.map((e) => e.class)).toContain('server-stopped');
      // AND the run failed at once with that cause: nothing after step 2 ran, nothing was judged on it
      const m = readManifest(h.dir);
      expect(m.status).toBe('failed');
      expect(m.error).toMatch(
        /^infrastructure failure: step \S+ was not measured: infrastructure: server-stopped/,
      );
      expect(m.stepsCompleted).toBe(1);
      expect(h.rec.calls.filter((c) => c.startsWith('run:'))).toHaveLength(2);
      expect(result.records.map((r) => r.verdict.held)).toEqual([true]);
      expect(result.allHeld).toBe(false);
    },
  );

  test('a resume measures the stopped step again and completes', async () => {
    const h = harness();
    await runSuite(h.options(stopAtStep2(h, stopCapture('pg15-fast-shutdown-via-pgbouncer', 2))));
    h.rec.calls.length = 0;
    const result = await runSuite(h.options());
    const ran = h.rec.calls.filter((c) => c.startsWith('run:')).map((c) => c.slice(4));
    expect(ran[0]).toBe(stepFileName(defined(h.steps[1], 'step 2').stepId));
    expect(ran).toHaveLength(h.steps.length - 1);
    expect(result.manifest.status).toBe('completed');
    expect(readStep(h.dir, defined(h.steps[1], 'step 2').stepId).status).toBe('completed');
    expect(result.allHeld).toBe(true);
  });

  test("a scenario that measures server stops (serverStops: 'measured') judges the same output", async () => {
    // GIVEN the smoke suite with every scenario declaring that server stops are its measurement
    const smoke = getSuite('smoke');
    const measuring: Suite = {
      ...smoke,
      scenarios: smoke.scenarios.map((s) => ({ ...s, serverStops: 'measured' as const })),
    };
    const h = harness(measuring);
    // WHEN step 2 sees the fast shutdown
    await runSuite(h.options(stopAtStep2(h, stopCapture('pg15-fast-shutdown-via-pgbouncer', 2))));
    // THEN it is a measurement: completed and judged (its `succeeds` expectation broke), the run went on
    const step2 = readStep(h.dir, defined(h.steps[1], 'step 2').stepId);
    expect(step2.status).toBe('completed');
    expect(step2.verdict.held).toBe(false);
    expect(step2.result?.errors.map((e) => e.class)).toEqual(['server-stopped']);
    expect(readManifest(h.dir).status).toBe('completed');
    expect(h.rec.calls.filter((c) => c.startsWith('run:'))).toHaveLength(h.steps.length);
  });

  test('pgbench -i refused by a server shutting down: the run failed as an infrastructure failure', async () => {
    // GIVEN the data load getting 57P03
    const h = harness();
    const o = h.options();
    const executor: PgbenchExecutor = {
      workDir: (n) => o.executor.workDir(n),
      run: (inv) =>
        inv.argv.includes('-i')
          ? Promise.resolve({
              stdout: '',
              stderr:
                'pgbench: error: connection to server at "127.0.0.1", port 5432 failed: FATAL:  the database system is shutting down\n',
              exitCode: 1,
              timedOut: false,
              logFiles: [],
            })
          : o.executor.run(inv),
    };
    // WHEN the suite runs
    await runSuite({ ...o, executor });
    // THEN no step ran or was recorded, and the manifest says why, naming the class and the SQLSTATE
    const m = readManifest(h.dir);
    expect(m.status).toBe('failed');
    expect(m.error).toMatch(
      /^infrastructure failure: pgbench -i -s 1 on direct failed \(exit 1\): .*; infrastructure: server-stopped: .*SQLSTATE 57P03/,
    );
    expect(m.stepsCompleted).toBe(0);
    expect(fs.existsSync(path.join(h.dir, 'steps'))).toBe(false);
  });

  test('a pool reset refused by a PgBouncer shutting down: the error says infrastructure failure', async () => {
    const h = harness();
    const o = h.options();
    let resets = 0;
    const pool: PoolControl = {
      ...o.pool,
      reset: (t) =>
        ++resets === 2
          ? Promise.reject(new Error('psql (admin console) failed: ERROR:  pooler is shutting down'))
          : o.pool.reset(t),
    };
    await runSuite({ ...o, pool });
    const m = readManifest(h.dir);
    expect(m.status).toBe('failed');
    expect(m.error).toBe(
      'infrastructure failure (server-stopped): psql (admin console) failed: ERROR:  pooler is shutting down',
    );
    expect(m.stepsCompleted).toBe(1);
  });
});

describe('prepared-statement support as a pool dimension', () => {
  function described(version: string, mps: number | null): TargetCapacity[] {
    return capacities(['pgbouncer-transaction']).map((c) => ({
      ...c,
      descriptor: describeTarget(c.ref, { version, maxPreparedStatements: mps, placement: 'local' }),
    }));
  }
  const prepared = getSuite('smoke').scenarios.filter((s) => s.name === 'smoke-prepared');
  const suite: Suite = { name: 'smoke', description: 'smoke-prepared only', scenarios: prepared };

  test('PgBouncer 1.18: the `on` cells are recorded as not available, never run, never judged', async () => {
    const h = harness(suite, ['pgbouncer-transaction']);
    const steps = expandSuite(suite, described('1.18.0', null));
    const byFile = new Map(steps.map((s) => [stepFileName(s.stepId), s]));
    const result = await runSuite(h.options(smokeAnswer(byFile), { steps }));
    expect(result.manifest.status).toBe('completed');
    const on = result.records.filter((r) => r.params.preparedStatements === 'on');
    expect(on.map((r) => [r.status, r.verdict.held, r.verdict.observed])).toEqual([
      ['not-available', null, 'not available on PgBouncer 1.18.0 (needs ≥ 1.21)'],
      ['not-available', null, 'not available on PgBouncer 1.18.0 (needs ≥ 1.21)'],
    ]);
    expect(h.rec.calls.filter((c) => c.startsWith('run:'))).toEqual([
      'run:smoke-prepared_pgbouncer-transaction_c5_prepared_persistent_ps-off_r1',
      'run:smoke-prepared_pgbouncer-transaction_c5_simple_persistent_ps-off_r1',
    ]);
    expect(result.allHeld).toBe(true);
  });

  test('PgBouncer 1.25: each cell runs with its max_prepared_statements set first; `on` expects success', async () => {
    const h = harness(suite, ['pgbouncer-transaction']);
    const steps = expandSuite(suite, described('1.25.2', 200));
    expect(
      steps.map(
        (s) =>
          `${s.params.preparedStatements} ${s.descriptor.settings.maxPreparedStatements} ${s.expectation.outcome}`,
      ),
    ).toEqual(['off 0 errors', 'on 200 succeeds', 'off 0 succeeds', 'on 200 succeeds']);
    const set: string[] = [];
    const pool: PoolControl = {
      ...recordingPool(h.rec),
      setMaxPreparedStatements: (t, n) => {
        set.push(`${t.name}=${n}`);
        return Promise.resolve();
      },
    };
    const byFile = new Map(steps.map((s) => [stepFileName(s.stepId), s]));
    const answer: Answer = (inv, name) => {
      const step = name === null ? undefined : byFile.get(name);
      const c = capture(
        step?.params.preparedStatements === 'off' && step.params.protocol === 'prepared'
          ? 'pgb_sel1_prepared_c5'
          : 'pgb_sel1_simple_c5',
      );
      return { ...c, timedOut: false, logFiles: [] };
    };
    const result = await runSuite(h.options(answer, { steps, pool }));
    expect(set).toEqual([
      'pgbouncer-transaction=0',
      'pgbouncer-transaction=200',
      'pgbouncer-transaction=0',
      'pgbouncer-transaction=200',
    ]);
    expect(result.records.map((r) => r.verdict.held)).toEqual([true, true, true, true]);
  });
});
