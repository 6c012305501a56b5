/**
 * The run store: plan.json round-trips through its schema, and a hand-corrupted manifest, step or
 * plan file is an error naming the file and the field — for resume (the local sink, `proxylab
 * local`) and for the report — never a crash or a silently skipped file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NotFound,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockAws } from '../helpers/aws-calls/recorder';
import { RUNNER } from '../helpers/aws-calls/principals';
import { fetchRun } from '../../lib/operator/runs';
import { S3BlobStore, S3ResultSink } from '../../lib/aws/s3-sink';
import { RunStore } from '../../lib/results/run-store';
import { RunFileError, UsageError } from '../../lib/core/errors';
import { FileSystemBlobStore } from '../../lib/results/fs-blob-store';
import { FileWriteError } from '../../lib/core/atomic-write';
import { FileSystemSink, writeFileAtomic } from '../../lib/local/fs-sink';
import { writeReport } from '../../lib/report';
import { catalogLookup } from '../../lib/report/catalog-lookup';
import { writeComparison } from '../../lib/report/compare';
import { renderMarkdown } from '../../lib/report/render-md';
import { buildModel } from '../../lib/report/shape';
import { formatStepLine, formatSummary } from '../../lib/cli/terminal';
import { runLocal, validateLocalInput } from '../../lib/local/run-local';
import { loadRun } from '../../lib/report/load';
import { getSuite } from '../../lib/suite/catalog';
import { expandSuite } from '../../lib/suite/expand';
import { buildPlan, plannedSteps } from '../../lib/suite/plan';
import { stepPaths } from '../../lib/results/run-paths';
import { metricsFileSchema, parseRunFile, planSchema, stepRecordSchema } from '../../lib/results/schemas';
import { LocalRunWriter } from '../../lib/collector/writer';
import { describeTarget } from '../../lib/suite/targets';
import type { MetricsFile, TargetKind } from '../../lib/suite/types';
import { manifestWith, stepRecordWith } from '../helpers/run-files';
import { s3GetBody } from '../helpers/s3-body';
import { scratchDir } from '../helpers/scratch';

const s3Mock = mockAws(S3Client, RUNNER);
afterEach(() => s3Mock.reset());

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'runs', 'synthetic-repeated');

/** A copy of a run of the current release (no plan.json) that a test may corrupt. */
function copyRun(): { out: string; dir: string } {
  const out = scratchDir('proxylab-run-store-');
  const dir = path.join(out, 'synthetic-repeated');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  return { out, dir };
}

function corruptJson(file: string, change: (data: Record<string, unknown>) => void): void {
  const data = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  change(data);
  fs.writeFileSync(file, JSON.stringify(data));
}

const STEP = 'quick-e1/direct/c20/simple/persistent/r1';

function descriptors(pgbouncer: string, mps: number | null) {
  return (['direct', 'pgbouncer-transaction', 'pgbouncer-session'] as TargetKind[]).map((kind) =>
    describeTarget(
      { kind, name: kind },
      { version: kind === 'direct' ? '15.18' : pgbouncer, maxPreparedStatements: mps, placement: 'local' },
    ),
  );
}

describe('plan.json', () => {
  test.each([
    ['1.18.0', null, ['no', 'no'], ['not available on PgBouncer 1.18.0 (needs ≥ 1.21)']],
    ['1.25.2', 200, ['no', 'yes'], []],
  ] as const)(
    'PgBouncer %s: every step with its descriptor, schema-valid, round-trips',
    (version, mps, carries, reasons) => {
      const targets = descriptors(version, mps);
      const steps = expandSuite(
        getSuite('smoke'),
        targets.map((d) => ({
          ref: { kind: d.kind, name: d.name },
          descriptor: d,
          maxConnections: 40,
          poolSize: d.capabilities.pooled ? 10 : null,
        })),
      );
      const plan = buildPlan({
        runId: 'r',
        suite: 'smoke',
        mode: 'local',
        createdAt: '2026-11-22T00:00:00.000Z',
        environment: {
          maxConnections: 40,
          serverVersion: '15.18',
          pgbenchVersion: '15.18',
          poolerVersion: version,
          cpus: 2,
          maxPreparedStatements: mps,
        },
        targets,
        steps,
        runnerCount: 2,
      });
      const parsed = planSchema.parse(JSON.parse(JSON.stringify(plan)));
      expect(plannedSteps(parsed)).toEqual(JSON.parse(JSON.stringify(steps)));
      const prepared = parsed.steps.filter(
        (s) => s.scenario === 'smoke-prepared' && s.params.protocol === 'prepared',
      );
      expect(prepared.map((s) => s.descriptor.capabilities.carriesPreparedStatements)).toEqual(carries);
      expect(prepared.map((s) => s.unavailable).filter((r) => r !== null)).toEqual(reasons);
      // shares of two runners add up to the step's clients
      for (const s of parsed.steps)
        expect(s.shares.reduce((sum, x) => sum + x.clients, 0)).toBe(s.params.clients);
    },
  );
});

describe('a corrupted run file names the file and the field', () => {
  test('resume: a step record with a string where a number belongs', async () => {
    const { out, dir } = copyRun();
    const file = path.join(dir, stepPaths(STEP).json);
    corruptJson(file, (d) => {
      (d.params as Record<string, unknown>).clients = 'twenty';
    });
    const err = await new FileSystemSink(dir).completedStepIds().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunFileError);
    expect(err).toMatchObject({ code: 'run-file-invalid', file, field: 'params.clients' });
    expect((err as Error).message).toMatch(/params\.clients: .*expected number, received string/);
    // `proxylab local --run-id` on that directory stops before starting any server, with that error
    const opts = validateLocalInput({ suite: 'quick', runId: 'synthetic-repeated', out }, out);
    await expect(runLocal(opts, { handleSignals: false })).rejects.toMatchObject({
      code: 'run-file-invalid',
      field: 'params.clients',
    });
  });

  test('resume: a manifest without stepsCompleted', async () => {
    const { dir } = copyRun();
    corruptJson(path.join(dir, 'manifest.json'), (d) => {
      delete d.stepsCompleted;
    });
    await expect(new FileSystemSink(dir).readManifest()).rejects.toMatchObject({
      code: 'run-file-invalid',
      field: 'stepsCompleted',
      message: expect.stringMatching(/manifest\.json: stepsCompleted: .*expected number/) as unknown,
    });
  });

  test('report: a manifest with a wrong status names manifest.json and the field', () => {
    const { dir } = copyRun();
    corruptJson(path.join(dir, 'manifest.json'), (d) => {
      d.status = 'finished';
    });
    expect(() => loadRun(dir)).toThrow(UsageError);
    expect(() => loadRun(dir)).toThrow(/manifest\.json: status: Invalid option/);
  });

  test('report: a corrupt step is listed with its file and field; the rest of the run still loads', () => {
    const { dir } = copyRun();
    corruptJson(path.join(dir, stepPaths(STEP).json), (d) => {
      d.verdict = { expected: 'x', observed: 'y', held: 'yes' };
    });
    const run = loadRun(dir);
    expect(run.problems).toEqual([
      expect.stringMatching(/^steps\/quick-e1_direct_c20_simple_persistent_r1\.json: .*verdict\.held/),
    ]);
    expect(run.missingStepIds).toEqual([STEP]);
  });

  test('report: a malformed plan.json is an error naming plan.json and the field', () => {
    const { dir } = copyRun();
    fs.writeFileSync(path.join(dir, 'plan.json'), JSON.stringify({ schemaVersion: 1, runId: 'x' }));
    expect(() => loadRun(dir)).toThrow(RunFileError);
    expect(() => loadRun(dir)).toThrow(/plan\.json: suite: /);
  });
});

describe('atomic writes', () => {
  test('a symlink at the destination is replaced, not written through', () => {
    const dir = scratchDir('proxylab-atomic-');
    const outside = path.join(dir, 'outside.txt');
    fs.writeFileSync(outside, 'keep');
    fs.symlinkSync(outside, path.join(dir, 'manifest.json'));
    writeFileAtomic(path.join(dir, 'manifest.json'), 'new');
    expect(fs.readFileSync(outside, 'utf8')).toBe('keep');
    expect(fs.lstatSync(path.join(dir, 'manifest.json')).isSymbolicLink()).toBe(false);
    expect(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')).toBe('new');
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

/** An ENOSPC from the write of the temporary file, as a full disk gives it. */
function noSpace(): never {
  throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
}

/** Plants `name` in `dir` as a symlink to a file outside it; returns the link target. */
function plantLink(dir: string, name: string): string {
  const outside = path.join(scratchDir('proxylab-outside-'), `${name}.target`);
  fs.writeFileSync(outside, 'not yours');
  fs.rmSync(path.join(dir, name), { force: true });
  fs.symlinkSync(outside, path.join(dir, name));
  return outside;
}

describe('report and compare never write through a symlink', () => {
  test.each(['summary.md', 'report.html'])('a symlinked %s: the link target is untouched', (name) => {
    const { dir } = copyRun();
    const outside = plantLink(dir, name);
    const r = writeReport(dir);
    expect(fs.readFileSync(outside, 'utf8')).toBe('not yours');
    expect(fs.lstatSync(path.join(dir, name)).isSymbolicLink()).toBe(false);
    expect(fs.statSync(r.htmlPath).size).toBeGreaterThan(1000);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  test.each(['compare.md', 'compare.html'])('a symlinked %s: the link target is untouched', (name) => {
    const a = copyRun().dir;
    const b = copyRun().dir;
    const outside = plantLink(b, name);
    const r = writeComparison(a, b);
    expect(fs.readFileSync(outside, 'utf8')).toBe('not yours');
    expect(fs.lstatSync(path.join(b, name)).isSymbolicLink()).toBe(false);
    expect(r.markdown.length).toBeGreaterThan(100);
  });
});

describe('a failed write (full disk)', () => {
  test('names the file, keeps the old content and leaves no temporary', () => {
    const dir = scratchDir('proxylab-enospc-');
    const file = path.join(dir, 'report.html');
    fs.writeFileSync(file, 'old report');
    let err: unknown;
    try {
      writeFileAtomic(file, 'new report', (tmp, content) => {
        fs.writeFileSync(tmp, String(content).slice(0, 3)); // half a file, then the disk is full
        noSpace();
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FileWriteError);
    expect((err as FileWriteError).code).toBe('file-write-failed');
    expect((err as FileWriteError).message).toBe(
      `cannot write ${file}: ENOSPC: no space left on device, write`,
    );
    expect(fs.readFileSync(file, 'utf8')).toBe('old report');
    expect(fs.readdirSync(dir)).toEqual(['report.html']);
  });

  test('the sink passes its write function to every file it writes', async () => {
    const dir = scratchDir('proxylab-enospc-sink-');
    const sink = new FileSystemSink(dir, noSpace);
    await expect(sink.writeManifest(manifestWith({}))).rejects.toThrow(
      `cannot write ${path.join(dir, 'manifest.json')}: ENOSPC`,
    );
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe('an infrastructure-error step in the report and on the terminal', () => {
  const CAUSE = 'PostgreSQL (pid 4242) was killed by SIGKILL';

  /** The fixture run as a server crash during STEP leaves it: that step unmeasured, the run failed. */
  function crashedRun(): string {
    const { dir } = copyRun();
    corruptJson(path.join(dir, stepPaths(STEP).json), (d) => {
      d.status = 'infrastructure-error';
      d.note = CAUSE;
      (d.verdict as Record<string, unknown>).held = null;
      (d.result as Record<string, unknown>).complete = false;
      (d.result as Record<string, unknown>).errors = [
        { class: 'connection-failed', count: 20, sample: 'connection to server failed' },
      ];
    });
    corruptJson(path.join(dir, 'manifest.json'), (d) => {
      d.status = 'failed';
      d.error = `infrastructure failure: step ${STEP} was not measured: ${CAUSE}`;
    });
    return dir;
  }

  test('never a contradicted finding: the step is listed as not measured, with its cause', () => {
    const run = loadRun(crashedRun());
    const model = buildModel(run, catalogLookup());
    expect(model.findings.map((f) => f.state)).not.toContain('contradicted');
    expect(run.steps.map((s) => s.stepId)).not.toContain(STEP);
    expect(run.missingStepIds).toContain(STEP);
    const warning = model.warnings.find((w) => w.id === 'infrastructure-error');
    expect(warning?.message).toContain(`${STEP} (${CAUSE})`);
    expect(warning?.stepIds).toEqual([STEP]);
    const md = renderMarkdown(model, catalogLookup());
    expect(md).not.toMatch(/✗ contradicted/);
    expect(md).toContain('were not measured because the infrastructure failed');
  });

  test('the terminal says NOT MEASURED and counts no verdict for it', () => {
    const dir = crashedRun();
    const rec = parseRunFile(
      stepRecordSchema,
      'x',
      fs.readFileSync(path.join(dir, stepPaths(STEP).json), 'utf8'),
    );
    expect(formatStepLine(2, 6, rec)).toBe(`! [2/6] ${STEP}  NOT MEASURED, infrastructure failure: ${CAUSE}`);
    const m = manifestWith({ status: 'failed', stepsCompleted: 0, stepIds: [STEP] });
    expect(formatSummary(m, [rec], dir, 1)).toMatch(/^Run failed: 0 held, 0 broke, 0 informational/);
  });
});

describe('fetch validates what it copies out of S3', () => {
  function serve(objects: Record<string, string>): void {
    s3Mock.on(ListObjectsV2Command).resolves({ Contents: Object.keys(objects).map((Key) => ({ Key })) });
    for (const [Key, text] of Object.entries(objects))
      s3Mock.on(GetObjectCommand, { Key }).resolves({
        Body: s3GetBody(text),
      } as never);
  }

  test('a valid run lands in <out>/<runId>/; a malformed step record is skipped (not written), naming the object and field', async () => {
    const out = scratchDir('proxylab-fetch-');
    const manifest = JSON.stringify(manifestWith({ runId: 'r1', mode: 'cloud' }));
    const rec = stepRecordWith({ runId: 'r1' });
    serve({
      'runs/r1/manifest.json': manifest,
      [`runs/r1/${stepPaths(rec.stepId).json}`]: JSON.stringify(rec),
    });
    const s3 = new S3Client({ region: 'us-east-1' });
    const res = await fetchRun(s3, 'b', 'r1', new FileSystemBlobStore(path.join(out, 'r1')));
    expect(res.files).toBe(2);
    expect(fs.existsSync(path.join(out, 'r1', stepPaths(rec.stepId).json))).toBe(true);

    s3Mock.reset();
    serve({
      'runs/r1/manifest.json': manifest,
      [`runs/r1/${stepPaths(rec.stepId).json}`]: JSON.stringify({
        ...rec,
        params: { ...rec.params, jobs: 'two' },
      }),
    });
    const other = path.join(scratchDir('proxylab-fetch-'), 'r1');
    const partial = await fetchRun(s3, 'b', 'r1', new FileSystemBlobStore(other));
    // The policy for partially bad runs (docs/report.md): skipped and named, the rest copied.
    expect(partial.files).toBe(1);
    expect(partial.skipped).toEqual([
      {
        key: `s3://b/runs/r1/${stepPaths(rec.stepId).json}`,
        reason: expect.stringMatching(/^s3:\/\/b\/runs\/r1\/steps\/\S+\.json: params\.jobs: /) as unknown,
      },
    ]);
    expect(partial.identityUnreadable).toEqual([]);
    expect(fs.existsSync(path.join(other, stepPaths(rec.stepId).json))).toBe(false);
  });

  test("a live runner's writer lock is not copied (it would lock the local copy)", async () => {
    const out = scratchDir('proxylab-fetch-');
    serve({
      'runs/r1/manifest.json': JSON.stringify(manifestWith({ runId: 'r1', mode: 'cloud' })),
      'runs/r1/locks/runner-0.lock': '{"pid": 1}',
    });
    const res = await fetchRun(
      new S3Client({ region: 'us-east-1' }),
      'b',
      'r1',
      new FileSystemBlobStore(path.join(out, 'r1')),
    );
    expect(res.files).toBe(1);
    expect(fs.readdirSync(path.join(out, 'r1'))).toEqual(['manifest.json']);
  });
});

describe('one run store over two blob stores', () => {
  async function writeSome(store: RunStore): Promise<void> {
    const rec = stepRecordWith({ runId: 'r1' });
    await store.writeManifest(manifestWith({ runId: 'r1' }));
    await store.writeStep(
      { ...rec, files: { ...stepPaths(rec.stepId), log: stepPaths(rec.stepId).log } },
      { stdout: 'OUT pw=hunter2', stderr: '', log: 'LOG' },
    );
    await store.writeMetrics('local', 'r1', { start: 'a', end: 'b' }, []);
    await store.writeStepWindows('r1', [
      { stepId: rec.stepId, scenario: rec.scenario, target: rec.target.name, start: 'a', end: 'b' },
    ]);
  }

  test('the filesystem and S3 get the same keys in the same order, each body scrubbed', async () => {
    // GIVEN
    s3Mock.on(GetObjectCommand).rejects(new NotFound({ message: 'no', $metadata: {} }));
    s3Mock.on(PutObjectCommand).resolves({});
    const dir = path.join(scratchDir('proxylab-blobs-'), 'r1');
    const scrub = (t: string): string => t.replaceAll('hunter2', '***');
    // WHEN
    await writeSome(new RunStore(new FileSystemBlobStore(dir), scrub));
    await writeSome(new S3ResultSink(new S3Client({ region: 'us-east-1' }), 'b', 'r1', scrub));
    // THEN
    const s3Keys = s3Mock.commandCalls(PutObjectCommand).map((c) => c.args[0].input.Key ?? '');
    expect(s3Keys.every((k) => k.startsWith('runs/r1/'))).toBe(true);
    const relative = s3Keys.map((k) => k.slice('runs/r1/'.length));
    expect([...relative].sort()).toEqual(await new FileSystemBlobStore(dir).list(''));
    expect(relative.indexOf(stepPaths(stepRecordWith({}).stepId).json)).toBe(relative.length - 3);
    const stdout = fs.readFileSync(path.join(dir, stepPaths(stepRecordWith({}).stepId).stdout), 'utf8');
    expect(stdout).toBe('OUT pw=***');
    const s3Stdout = s3Mock
      .commandCalls(PutObjectCommand)
      .find((c) => c.args[0].input.Key?.endsWith('.stdout'))?.args[0].input.Body;
    expect(s3Stdout).toBe('OUT pw=***');
  });

  test('S3BlobStore: exists through HeadObject (NotFound → false), list relative to its prefix', async () => {
    s3Mock
      .on(HeadObjectCommand, { Key: 'runs/r1/plan.json' })
      .resolves({})
      .on(HeadObjectCommand, { Key: 'runs/r1/request.json' })
      .rejects(new NotFound({ message: 'no', $metadata: {} }));
    s3Mock.on(ListObjectsV2Command, { Prefix: 'runs/r1/steps/' }).resolves({
      Contents: [{ Key: 'runs/r1/steps/b.json' }, { Key: 'runs/r1/steps/a.json' }],
    });
    const blobs = new S3BlobStore(new S3Client({ region: 'us-east-1' }), 'b', 'runs/r1/');
    await expect(blobs.exists('plan.json')).resolves.toBe(true);
    await expect(blobs.exists('request.json')).resolves.toBe(false);
    await expect(blobs.list('steps/')).resolves.toEqual(['steps/a.json', 'steps/b.json']);
    expect(blobs.where('plan.json')).toBe('s3://b/runs/r1/plan.json');
  });

  test('FileSystemBlobStore refuses a key that leaves its root', async () => {
    const blobs = new FileSystemBlobStore(scratchDir('proxylab-blobs-'));
    await expect(blobs.write('../escape.json', '{}')).rejects.toThrow(/escapes/);
    await expect(blobs.exists('x.json')).resolves.toBe(false);
  });
});

describe('metrics and step windows through lib/results', () => {
  const metrics = (status: string): unknown => ({
    schemaVersion: 1,
    runId: 'r1',
    window: { start: '2026-11-21T10:00:00.000Z', end: '2026-11-21T11:00:00.000Z' },
    collectedAt: '2026-11-21T11:05:00.000Z',
    series: [
      { source: 'cloudwatch', name: 'CPU', stat: 'Average', unit: null, dimensions: {}, points: [], status },
    ],
    completeness: {
      complete: false,
      lastPointAt: null,
      windowEnd: '2026-11-21T11:00:00.000Z',
      periodSec: 60,
    },
  });

  test('the collector writes a metrics file through the run paths and blob store, as given', async () => {
    // GIVEN
    const dir = path.join(scratchDir('proxylab-metrics-'), 'r1');
    // WHEN
    const where = await new LocalRunWriter(dir).writeMetricsFile(
      'cloudwatch',
      metrics('no-data') as MetricsFile,
    );
    // THEN it is where every reader looks, and fits the schema they read it with (completeness kept)
    expect(where).toBe(path.join(dir, 'metrics', 'cloudwatch.json'));
    const text = fs.readFileSync(where, 'utf8');
    expect(JSON.parse(text)).toEqual(metrics('no-data'));
    expect(parseRunFile(metricsFileSchema, where, text)).toEqual(metrics('no-data'));
  });

  test('step windows already stored are read through their schema and merged by step id', async () => {
    // GIVEN a steps.json with one window of this run, and one that does not fit its schema
    const dir = path.join(scratchDir('proxylab-windows-'), 'r1');
    const store = new RunStore(new FileSystemBlobStore(dir));
    const w = (stepId: string, second: number) => ({
      stepId,
      scenario: 's',
      target: 'direct',
      start: `2026-11-21T10:00:0${second}.000Z`,
      end: '2026-11-21T10:00:09.000Z',
    });
    await store.writeStepWindows('r1', [w('b', 2)]);
    // WHEN a later flush adds another
    await store.writeStepWindows('r1', [w('a', 1)]);
    // THEN both are there, in time order
    const file = path.join(dir, 'metrics', 'steps.json');
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({
      schemaVersion: 1,
      runId: 'r1',
      steps: [w('a', 1), w('b', 2)],
    });
    // AND a file that does not fit its schema is replaced, not merged
    fs.writeFileSync(file, JSON.stringify({ schemaVersion: 1, runId: 'r1', steps: [{ stepId: 'x' }] }));
    await store.writeStepWindows('r1', [w('c', 3)]);
    expect((JSON.parse(fs.readFileSync(file, 'utf8')) as { steps: unknown }).steps).toEqual([w('c', 3)]);
  });
});
