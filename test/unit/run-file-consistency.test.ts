/**
 * The files of a run must be one run's (issue 38, items 5 and 6): a step file holds the step it is
 * named after, of this run and of its plan; plan.json and manifest.json name the same run, suite,
 * mode and steps; and no run file says a key twice (JSON.parse would keep the last). The report
 * leaves such a file out, named, and says PARTIAL (plan.json against its manifest refuses the run);
 * a resume stops with the error naming the file, before a server starts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  type GetObjectCommandInput,
  type PutObjectCommandInput,
} from '@aws-sdk/client-s3';
import { RunFileError, UsageError } from '../../lib/core/errors';
import { openRun, type RunSuiteOptions } from '../../lib/engine/run-suite';
import { FileSystemSink } from '../../lib/local/fs-sink';
import { runLocal, validateLocalInput } from '../../lib/local/run-local';
import { loadRun, writeReport } from '../../lib/report';
import { FileSystemBlobStore } from '../../lib/results/fs-blob-store';
import { parseLockOwner } from '../../lib/results/run-lock';
import { stepPaths } from '../../lib/results/run-paths';
import { copyRun } from '../../lib/results/run-store';
import type { PlannedStep } from '../../lib/suite/expand';
import { buildPlan, type RunPlan } from '../../lib/suite/plan';
import { fallbackDescriptor } from '../../lib/suite/targets';
import type { RunManifest, StepRecord } from '../../lib/suite/types';
import { FleetCoordinator } from '../../lib/runner/fleet-coordinator';
import { RUNNER } from '../helpers/aws-calls/principals';
import { mockAws } from '../helpers/aws-calls/recorder';
import { s3BodyText, s3GetBody } from '../helpers/s3-body';
import { scratchDir } from '../helpers/scratch';

const s3Mock = mockAws(S3Client, RUNNER);
afterEach(() => s3Mock.reset());

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'runs', 'synthetic-repeated');
const R1 = 'quick-e1/direct/c20/simple/persistent/r1';
const R2 = 'quick-e1/direct/c20/simple/persistent/r2';
const R3 = 'quick-e1/direct/c20/simple/persistent/r3';
/** A step of no plan: named like the others, its file consistent with its id. */
const FOREIGN = 'quick-e1/direct/c20/simple/persistent/r9';

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}

/** A copy of the fixture run (complete, local, suite quick; no plan.json) that a test may change. */
function copyFixture(): { out: string; dir: string } {
  const out = scratchDir('proxylab-consistency-');
  const dir = path.join(out, 'synthetic-repeated');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  return { out, dir };
}

/** plan.json for the run in `dir`: one planned step per manifest step id, made from its record. */
function planOf(dir: string, change: (p: RunPlan) => RunPlan = (p) => p): RunPlan {
  const manifest = readJson<RunManifest>(path.join(dir, 'manifest.json'));
  const steps = manifest.stepIds.map((stepId): PlannedStep => {
    const rec = readJson<StepRecord>(path.join(dir, stepPaths(stepId).json));
    return {
      stepId,
      scenario: rec.scenario,
      experiment: 'E1',
      target: rec.target,
      descriptor: fallbackDescriptor(rec.target),
      unavailable: null,
      params: rec.params,
      expectation: { outcome: 'succeeds', errorClasses: [], published: null, note: null },
      script: { parts: [{ builtin: 'select-only' }] },
      initFlags: [],
      timeoutSec: 120,
      logSamplingRate: null,
      maxConnections: 40,
      poolSize: null,
      maxConnectionsBand: 'below',
    };
  });
  const plan = buildPlan({
    runId: manifest.runId,
    suite: manifest.suite,
    mode: manifest.mode,
    createdAt: manifest.startedAt,
    environment: manifest.environment,
    targets: [],
    steps,
  });
  const changed = change(plan);
  fs.writeFileSync(path.join(dir, 'plan.json'), JSON.stringify(changed, null, 2));
  return changed;
}

/** Rewrite a step file with `fields` changed (its name kept). */
function editStep(dir: string, stepId: string, fields: Partial<StepRecord>): void {
  const file = path.join(dir, stepPaths(stepId).json);
  fs.writeFileSync(file, JSON.stringify({ ...readJson<StepRecord>(file), ...fields }, null, 2));
}

/** Plant `steps/<FOREIGN>.json`: R1's record under another step id, its file named after it. */
function plantForeignStep(dir: string): string {
  const rec = readJson<StepRecord>(path.join(dir, stepPaths(R1).json));
  const file = path.join(dir, stepPaths(FOREIGN).json);
  fs.writeFileSync(file, JSON.stringify({ ...rec, stepId: FOREIGN }, null, 2));
  return file;
}

/** The resume of the fixture run by `proxylab local --run-id` (complete: it starts no server). */
function resume(out: string): ReturnType<typeof runLocal> {
  return runLocal(validateLocalInput({ suite: 'quick', runId: 'synthetic-repeated', out }, out), {
    handleSignals: false,
  });
}

describe('a step file whose stepId is not its file name', () => {
  test('report: the file is left out, named with the field, the run PARTIAL; no measurement counted twice', () => {
    // GIVEN R3 was never measured (its file gone) and R1's file edited to say it is R3
    const { dir } = copyFixture();
    fs.rmSync(path.join(dir, stepPaths(R3).json));
    editStep(dir, R1, { stepId: R3 });
    // WHEN the report reads the run
    const run = loadRun(dir);
    // THEN R1's file is named, neither R1 nor R3 counts as measured, R2 stays
    expect(run.problems).toEqual([
      `steps/quick-e1_direct_c20_simple_persistent_r1.json: stepId: "${R3}" is the step of steps/quick-e1_direct_c20_simple_persistent_r3.json, not of this file (a step file is named after its step id); skipped`,
    ]);
    expect(run.missingStepIds).toEqual(expect.arrayContaining([R1, R3]));
    expect(run.steps.map((s) => s.stepId)).toContain(R2);
    expect(run.steps.filter((s) => s.stepId === R3)).toEqual([]);
    expect(fs.readFileSync(writeReport(dir).mdPath, 'utf8')).toMatch(/PARTIAL/);
  });

  test('resume: reading the steps stops with the error naming the file (never re-measures one step, skips another)', async () => {
    const { dir } = copyFixture();
    editStep(dir, R1, { stepId: R3 });
    const file = path.join(dir, stepPaths(R1).json);
    await expect(new FileSystemSink(dir).readSteps()).rejects.toMatchObject({
      code: 'run-file-invalid',
      file,
      field: 'stepId',
    });
    await expect(new FileSystemSink(dir).completedStepIds()).rejects.toBeInstanceOf(RunFileError);
  });

  test('fetch: the object is skipped and named, the rest copied', async () => {
    const { dir } = copyFixture();
    editStep(dir, R1, { stepId: R3 });
    const to = path.join(scratchDir('proxylab-consistency-copy-'), 'r');
    const res = await copyRun(new FileSystemBlobStore(dir), new FileSystemBlobStore(to));
    expect(res.skipped).toEqual([
      { key: path.join(dir, stepPaths(R1).json), reason: expect.stringContaining('stepId: ') as unknown },
    ]);
    expect(res.identityUnreadable).toEqual([]);
    expect(fs.existsSync(path.join(to, stepPaths(R1).json))).toBe(false);
    expect(fs.existsSync(path.join(to, stepPaths(R2).json))).toBe(true);
  });
});

describe('a step file of a step the plan does not have, or of another run', () => {
  test('report: left out, named, PARTIAL', () => {
    // GIVEN a run with plan.json, and a step file no planned step has
    const { dir } = copyFixture();
    planOf(dir);
    plantForeignStep(dir);
    // WHEN
    const run = loadRun(dir);
    // THEN
    expect(run.problems).toEqual([
      `steps/quick-e1_direct_c20_simple_persistent_r9.json: stepId: "${FOREIGN}" is not a step of this run's plan (plan.json); skipped`,
    ]);
    expect(run.steps.map((s) => s.stepId)).not.toContain(FOREIGN);
  });

  test('report: a step record of another run is left out, named by its runId', () => {
    const { dir } = copyFixture();
    editStep(dir, R2, { runId: 'another-run' });
    expect(loadRun(dir).problems).toEqual([
      expect.stringMatching(
        /^steps\/quick-e1_direct_c20_simple_persistent_r2\.json: runId: "another-run" is another run's/,
      ),
    ]);
  });

  test('resume (local): refused naming the file, before any server starts', async () => {
    // GIVEN a complete run (its resume starts nothing) with a step file its plan lacks
    const { out, dir } = copyFixture();
    planOf(dir);
    const file = plantForeignStep(dir);
    // WHEN / THEN
    await expect(resume(out)).rejects.toMatchObject({ code: 'run-file-invalid', file, field: 'stepId' });
  });

  test('resume (engine, local and cloud): a stored step file of another step or run is refused, never counted done', async () => {
    // GIVEN the engine resuming the plan's steps R1, R2 over a run directory holding FOREIGN too
    const { dir } = copyFixture();
    const file = plantForeignStep(dir);
    const manifest = readJson<RunManifest>(path.join(dir, 'manifest.json'));
    const steps = planOf(dir).steps.filter((s) => s.stepId === R1 || s.stepId === R2);
    const opts = {
      runId: manifest.runId,
      suite: { name: manifest.suite },
      steps,
      sink: new FileSystemSink(dir),
      mode: manifest.mode,
      settings: manifest.settings,
      environment: manifest.environment,
    } as unknown as RunSuiteOptions;
    // WHEN / THEN: the first stored file that is not one of the plan's steps stops it
    await expect(openRun(opts, new Date('2026-11-21T10:00:00Z'))).rejects.toMatchObject({
      code: 'run-file-invalid',
      field: 'stepId',
    });
    // AND with only the plan's steps and a file of another run among them
    fs.rmSync(file);
    for (const f of fs.readdirSync(path.join(dir, 'steps')))
      if (
        f.endsWith('.json') &&
        !f.includes('c20_simple_persistent_r1') &&
        !f.includes('c20_simple_persistent_r2')
      )
        fs.rmSync(path.join(dir, 'steps', f));
    editStep(dir, R2, { runId: 'another-run' });
    await expect(openRun(opts, new Date('2026-11-21T10:00:00Z'))).rejects.toMatchObject({
      code: 'run-file-invalid',
      file: path.join(dir, stepPaths(R2).json),
      field: 'runId',
    });
  });
});

describe('plan.json against manifest.json', () => {
  test.each([
    [
      'runId',
      (p: RunPlan): RunPlan => ({ ...p, runId: 'another-run' }),
      /^runId: "another-run", but manifest\.json says "synthetic-repeated"$/,
    ],
    [
      'suite',
      (p: RunPlan): RunPlan => ({ ...p, suite: 'e5' }),
      /^suite: "e5", but manifest\.json says "quick"$/,
    ],
    [
      'mode',
      (p: RunPlan): RunPlan => ({ ...p, mode: 'cloud' }),
      /^mode: "cloud", but manifest\.json says "local"$/,
    ],
    [
      'steps.36.stepId',
      (p: RunPlan): RunPlan => ({ ...p, steps: p.steps.slice(0, -1) }),
      /^steps: the plan's 36 steps are not the 37 manifest\.json lists \(step 37: null in the plan, ".+" in manifest\.json\)$/,
    ],
    [
      'steps.0.stepId',
      (p: RunPlan): RunPlan => ({ ...p, steps: [...p.steps.slice(1), ...p.steps.slice(0, 1)] }),
      /^steps: the plan's 37 steps are not the 37 manifest\.json lists \(step 1: /,
    ],
  ])('%s differs: the report refuses the run naming plan.json and the field', (field, change, problem) => {
    // GIVEN
    const { dir } = copyFixture();
    planOf(dir, change);
    // WHEN
    let err: unknown;
    try {
      loadRun(dir);
    } catch (e) {
      err = e;
    }
    // THEN
    expect(err).toBeInstanceOf(RunFileError);
    expect(err).toMatchObject({ file: path.join(dir, 'plan.json'), field });
    expect((err as RunFileError).problem).toMatch(problem);
  });

  test('the same plan: the run reads, with nothing left out', () => {
    const { dir } = copyFixture();
    planOf(dir);
    const run = loadRun(dir);
    expect(run.problems).toEqual([]);
    expect(run.steps).toHaveLength(37);
  });

  test('resume (local): refused naming plan.json, before any server starts', async () => {
    const { out, dir } = copyFixture();
    planOf(dir, (p) => ({ ...p, runId: 'another-run' }));
    await expect(resume(out)).rejects.toMatchObject({
      code: 'run-file-invalid',
      file: path.join(dir, 'plan.json'),
      field: 'runId',
    });
  });

  test('fetch: plan.json is not copied and the copy is not a run', async () => {
    const { dir } = copyFixture();
    planOf(dir, (p) => ({ ...p, suite: 'e5' }));
    const res = await copyRun(
      new FileSystemBlobStore(dir),
      new FileSystemBlobStore(path.join(scratchDir('proxylab-consistency-copy-'), 'r')),
    );
    expect(res.identityUnreadable).toEqual([path.join(dir, 'plan.json')]);
  });
});

/** The text of a step file with `"key": <first>` followed by a second `"key": <second>` in the same object. */
function withDuplicate(text: string, key: string, second: string): string {
  const at = text.indexOf(`"${key}": `);
  if (at < 0) throw new Error(`no "${key}" in the text`);
  return `${text.slice(0, at)}"${key}": ${second},\n${text.slice(at)}`;
}

describe('a key given twice in a run file', () => {
  test.each([
    ['tps', '999999', 'result'],
    ['held', 'false', 'verdict'],
    ['stepId', JSON.stringify(R3), '(top level)'],
  ])(
    '"%s" twice in a step file: refused at its path (JSON.parse would keep the last)',
    (key, second, where) => {
      // GIVEN R1's file with `key` said twice, the planted value first
      const { dir } = copyFixture();
      const file = path.join(dir, stepPaths(R1).json);
      fs.writeFileSync(file, withDuplicate(fs.readFileSync(file, 'utf8'), key, second));
      // WHEN / THEN the report leaves it out, naming the key
      const run = loadRun(dir);
      expect(run.problems).toEqual([
        `steps/quick-e1_direct_c20_simple_persistent_r1.json: ${where === '(top level)' ? '' : `${where}.`}${key}: duplicate key "${key}" (JSON keeps only the last; say it once); skipped`,
      ]);
      expect(run.steps.some((s) => s.result?.tps === 999999)).toBe(false);
      // AND a resume refuses it
      return expect(new FileSystemSink(dir).readSteps()).rejects.toMatchObject({
        code: 'run-file-invalid',
        file,
      });
    },
  );

  test('manifest.json and plan.json: the run is refused, naming the file', () => {
    const { dir } = copyFixture();
    const manifest = path.join(dir, 'manifest.json');
    fs.writeFileSync(manifest, withDuplicate(fs.readFileSync(manifest, 'utf8'), 'status', '"running"'));
    expect(() => loadRun(dir)).toThrow(UsageError);
    expect(() => loadRun(dir)).toThrow(/manifest\.json: status: duplicate key "status"/);

    const other = copyFixture().dir;
    planOf(other);
    const plan = path.join(other, 'plan.json');
    fs.writeFileSync(plan, withDuplicate(fs.readFileSync(plan, 'utf8'), 'suite', '"e5"'));
    expect(() => loadRun(other)).toThrow(/plan\.json: suite: duplicate key "suite"/);
  });

  test('run.lock: an owner record with a key twice is no owner (never judged, never taken over)', () => {
    const owner = {
      schemaVersion: 1,
      runId: 'r1',
      host: 'h',
      pid: 4242,
      procStartTicks: null,
      command: 'proxylab local',
      acquiredAt: '2026-11-21T10:00:00.000Z',
    };
    const text = JSON.stringify(owner, null, 2);
    expect(parseLockOwner(text)).toEqual(owner);
    expect(parseLockOwner(withDuplicate(text, 'pid', '1'))).toBeNull();
  });

  test("a fleet's start plan (fleet/<attempt>/<step>/plan.json) with startAt twice: the runner refuses it", async () => {
    // GIVEN runner 1 of 2, and runner 0's start plan for the step saying startAt twice
    const store = new Map<string, string>();
    s3Mock.on(PutObjectCommand).callsFake((input: PutObjectCommandInput) => {
      store.set(input.Key as string, s3BodyText(input.Body));
      return {};
    });
    s3Mock.on(GetObjectCommand).callsFake((input: GetObjectCommandInput) => {
      const text = store.get(input.Key as string);
      if (text === undefined) throw new NoSuchKey({ message: 'no such key', $metadata: {} });
      return { Body: s3GetBody(text) };
    });
    const key = 'runs/r1/fleet/a1/step_r1/plan.json';
    store.set(
      key,
      '{"startAt": "2026-11-21T10:00:05.000Z", "runnerCount": 2, "startAt": "2027-01-01T00:00:00.000Z"}',
    );
    const fleet = new FleetCoordinator({
      s3: new S3Client({ region: 'us-east-1' }),
      bucket: 'b',
      runId: 'r1',
      runnerIndex: 1,
      runnerCount: 2,
      attempt: 'a1',
      clock: { now: () => new Date('2026-11-21T10:00:00Z'), sleep: () => Promise.resolve() },
    });
    // WHEN / THEN
    await expect(fleet.barrier('step_r1')).rejects.toMatchObject({
      code: 'run-file-invalid',
      file: `s3://b/${key}`,
      field: 'startAt',
    });
  });
});
