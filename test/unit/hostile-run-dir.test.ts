/**
 * A run directory (or a bucket, or a lab file) prepared by someone hostile (issue 21): links out of
 * the run directory, FIFOs and devices, huge and deep files, bad bytes, escape sequences. Every
 * reader opens run files through lib/core/read.ts (readFileIn / listDirIn); the policy for
 * partially bad runs is the same for report, compare, fetch and status (docs/report.md): a bad
 * step / metrics / interruption file is skipped and named and the result says PARTIAL; an
 * unreadable manifest.json or plan.json refuses the run (exit 2).
 *
 * Each case failed on the code before it. Later features that read a run add their cases here.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mockAws } from '../helpers/aws-calls/recorder';
import { operator } from '../helpers/aws-calls/principals';
import { fetchRun, formatListing, readListing } from '../../lib/operator/runs';
import { checkLabFile, parseLabJson } from '../../lib/config/load';
import { exitCodeFor, UsageError } from '../../lib/core/errors';
import { FileSystemBlobStore } from '../../lib/results/fs-blob-store';
import { FileSystemSink } from '../../lib/local/fs-sink';
import { runLocal, validateLocalInput } from '../../lib/local/run-local';
import { loadRun, writeComparison, writeReport } from '../../lib/report';
import { stepPaths } from '../../lib/results/run-paths';
import { runCliInProcess } from '../helpers/cli';
import { manifestWith, stepRecordWith } from '../helpers/run-files';
import { s3GetBody } from '../helpers/s3-body';
import { scratchDir } from '../helpers/scratch';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'runs', 'synthetic-repeated');
const RUN_ID = 'synthetic-repeated';
const STEP = 'quick-e1/direct/c20/simple/persistent/r1';
const SECRET = 'AKIAHOSTILESECRET0123456789';

const s3Mock = mockAws(S3Client, operator('read'));
afterEach(() => s3Mock.reset());

/** A finished run copied to a scratch directory (`H`), with a sibling directory outside it. */
function hostileCopy(): { out: string; dir: string; outside: string } {
  const out = scratchDir('proxylab-hostile-');
  const dir = path.join(out, RUN_ID);
  fs.cpSync(FIXTURE, dir, { recursive: true });
  const outside = path.join(out, 'outside');
  fs.mkdirSync(outside);
  return { out, dir, outside };
}

/** A file outside the run directory that looks like credentials. */
function secretFile(outside: string): string {
  const file = path.join(outside, 'credentials');
  fs.writeFileSync(file, `${SECRET}\n[default]\naws_secret_access_key = ${SECRET}\n`);
  return file;
}

function mkfifo(file: string): void {
  execFileSync('mkfifo', [file]);
}

function errorOf(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected an error');
}

function reportFiles(dir: string): string {
  return (
    fs.readFileSync(path.join(dir, 'report.html'), 'utf8') +
    fs.readFileSync(path.join(dir, 'summary.md'), 'utf8')
  );
}

describe('symbolic links are never followed out of the run directory', () => {
  test('a step file linked to a credentials file: skipped with a named warning, its content nowhere', () => {
    // GIVEN H/steps/zz.json -> a file outside
    const { dir, outside } = hostileCopy();
    fs.symlinkSync(secretFile(outside), path.join(dir, 'steps', 'zz.json'));
    // WHEN
    const r = writeReport(dir);
    // THEN
    const text = reportFiles(dir) + r.warnings.map((w) => w.message).join('\n');
    expect(text).not.toContain(SECRET.slice(0, 8)); // JSON.parse's message quoted the first 10 characters
    expect(text).not.toContain('aws_secret');
    expect(r.warnings.find((w) => w.id === 'unreadable-files')?.message).toMatch(
      /^PARTIAL report: 1 file\(s\).*steps\/zz\.json is a symbolic link; links in a run directory are not followed/,
    );
  });

  test('a step file with credentials in it (a regular file): the parse error quotes none of it', () => {
    const { dir, outside } = hostileCopy();
    fs.copyFileSync(secretFile(outside), path.join(dir, 'steps', 'zz.json'));
    const r = writeReport(dir);
    expect(reportFiles(dir)).not.toContain(SECRET.slice(0, 8));
    expect(r.warnings.find((w) => w.id === 'unreadable-files')?.message).toContain(
      "steps/zz.json: not valid JSON: 'A' where a value was expected (line 1, column 1); skipped",
    );
  });

  test('steps/ linked to a directory outside: report and resume refuse it, nothing is written outside', async () => {
    // GIVEN H/steps -> outside/ (with the run's steps moved there)
    const { out, dir, outside } = hostileCopy();
    const elsewhere = path.join(outside, 'steps');
    fs.renameSync(path.join(dir, 'steps'), elsewhere);
    fs.symlinkSync(elsewhere, path.join(dir, 'steps'));
    const before = fs.readdirSync(elsewhere).sort();
    // WHEN / THEN report: a usage error naming steps (exit 2)
    const err = errorOf(() => loadRun(dir));
    expect(err).toBeInstanceOf(UsageError);
    expect(err.code).toBe('symlink-refused');
    expect(err.message).toBe(
      `${path.join(dir, 'steps')} is a symbolic link; links in a run directory are not followed (proxylab never writes one)`,
    );
    // resume: neither the store's writes nor `proxylab local --run-id` go through the link
    const rec = stepRecordWith({ stepId: 'new/step/r1' });
    await expect(
      new FileSystemSink(dir).writeStep(rec, { stdout: 'x', stderr: '', log: null }),
    ).rejects.toMatchObject({ code: 'symlink-refused' });
    const opts = validateLocalInput({ suite: 'quick', runId: RUN_ID, out }, out);
    await expect(runLocal(opts, { handleSignals: false })).rejects.toMatchObject({ code: 'symlink-refused' });
    expect(fs.readdirSync(elsewhere).sort()).toEqual(before);
  });

  test.each(['steps', 'metrics'])('/dev/zero linked as a %s file is refused before reading', (folder) => {
    const { dir } = hostileCopy();
    fs.symlinkSync('/dev/zero', path.join(dir, folder, 'zero.json'));
    const t0 = Date.now();
    const run = loadRun(dir);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(run.problems).toEqual([
      `${folder}/zero.json is a symbolic link; links in a run directory are not followed (proxylab never writes one); skipped`,
    ]);
    expect(run.warnings).toEqual([
      {
        code: 'file-unreadable',
        file: `${folder}/zero.json`,
        reason: 'is a symbolic link; links in a run directory are not followed (proxylab never writes one)',
      },
    ]);
  });

  test('a step file that does not fit its schema is a named file-invalid warning, the rest of the run is read', () => {
    // GIVEN a step record whose status is not one the schema allows
    const { dir } = hostileCopy();
    fs.writeFileSync(
      path.join(dir, 'steps', 'bad.json'),
      JSON.stringify({ ...stepRecordWith({ stepId: 'bad' }), status: 'exploded' }),
    );
    // WHEN
    const run = loadRun(dir);
    // THEN
    expect(run.warnings).toEqual([
      { code: 'file-invalid', file: 'steps/bad.json', reason: expect.stringMatching(/^status: /) as unknown },
    ]);
    expect(run.problems).toEqual([`steps/bad.json: ${run.warnings[0]?.reason}; skipped`]);
    expect(run.steps.length).toBeGreaterThan(0);
  });

  test('/dev/zero linked as plan.json: the run is refused (exit 2) before reading', async () => {
    const { dir } = hostileCopy();
    fs.symlinkSync('/dev/zero', path.join(dir, 'plan.json'));
    expect(errorOf(() => loadRun(dir)).code).toBe('symlink-refused');
    // and by the store a resume reads it through
    await expect(new FileSystemSink(dir).readPlan()).rejects.toMatchObject({ code: 'symlink-refused' });
  });
});

describe('special files neither hang nor exhaust memory', () => {
  test('a FIFO as manifest.json: report, compare and local --run-id refuse it at once (exit 2)', async () => {
    const { out, dir } = hostileCopy();
    fs.rmSync(path.join(dir, 'manifest.json'));
    mkfifo(path.join(dir, 'manifest.json'));
    const t0 = Date.now();
    const err = errorOf(() => writeReport(dir));
    expect(err.message).toBe(
      `${path.join(dir, 'manifest.json')} is a FIFO (named pipe); expected a regular file`,
    );
    expect(exitCodeFor(err)).toBe(2);
    expect(errorOf(() => writeComparison(FIXTURE, dir, { outDir: out })).code).toBe('not-a-file');
    const opts = validateLocalInput({ suite: 'quick', runId: RUN_ID, out }, out);
    await expect(runLocal(opts, { handleSignals: false })).rejects.toMatchObject({ code: 'not-a-file' });
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  test('a FIFO as a step file: skipped and named by the report, refused by the resume', async () => {
    const { dir } = hostileCopy();
    mkfifo(path.join(dir, 'steps', 'fifo.json'));
    expect(loadRun(dir).problems).toEqual([
      'steps/fifo.json is a FIFO (named pipe); expected a regular file; skipped',
    ]);
    await expect(new FileSystemSink(dir).readSteps()).rejects.toMatchObject({ code: 'not-a-file' });
  });

  test.each<[string, (file: string, outside: string) => void, string]>([
    [
      'linked to a credentials file',
      (file, outside) => fs.symlinkSync(secretFile(outside), file),
      'lab.json is a symbolic link; links in a run directory are not followed (proxylab never writes one); skipped',
    ],
    ['a FIFO', (file) => mkfifo(file), 'lab.json is a FIFO (named pipe); expected a regular file; skipped'],
  ])(
    'lab.json %s: skipped and named by report and compare, refused by the resume',
    async (_, plant, problem) => {
      // GIVEN
      const { out, dir, outside } = hostileCopy();
      plant(path.join(dir, 'lab.json'), outside);
      const t0 = Date.now();
      // WHEN / THEN the report's reader leaves it out, named, and reads the rest
      const run = loadRun(dir);
      expect([run.problems, run.lab, run.steps.length > 0]).toEqual([[problem], null, true]);
      const compared = writeComparison(FIXTURE, dir, { outDir: out });
      expect(compared.markdown).toContain('- B: its lab.json could not be read (see the warnings)');
      expect(compared.markdown).not.toContain(SECRET.slice(0, 8));
      // AND the store a resume reads it through refuses it
      await expect(new FileSystemSink(dir).readLabRecord()).rejects.toBeInstanceOf(UsageError);
      expect(Date.now() - t0).toBeLessThan(3000);
    },
  );

  test('a 1 GB manifest (sparse) is refused by its size before reading', () => {
    const { dir } = hostileCopy();
    const fd = fs.openSync(path.join(dir, 'manifest.json'), 'r+');
    fs.ftruncateSync(fd, 1024 * 1024 * 1024);
    fs.closeSync(fd);
    const err = errorOf(() => loadRun(dir));
    expect(err.code).toBe('file-too-large');
    expect(err.message).toMatch(/manifest\.json is 1024 MiB; a runFile file may be at most 64 MiB$/);
  });
});

describe('the directory layout itself', () => {
  test('steps as a plain file: an error naming it, exit 2 (not ENOTDIR from scandir)', async () => {
    const { dir } = hostileCopy();
    fs.rmSync(path.join(dir, 'steps'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'steps'), 'not a directory');
    const { code, err } = await runCliInProcess(['report', dir]);
    expect(code).toBe(2);
    expect(err).toContain(`${path.join(dir, 'steps')} is a regular file, not a directory`);
    expect(err).not.toContain('ENOTDIR');
  });
});

describe('content', () => {
  test('a 5000-deep array inside manifest.settings: refused by depth, naming the file (no stack overflow)', () => {
    const { dir } = hostileCopy();
    const file = path.join(dir, 'manifest.json');
    const text = fs.readFileSync(file, 'utf8');
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    fs.writeFileSync(file, text.replace('"settings": {', `"settings": {"deep": ${deep},`));
    const err = errorOf(() => writeReport(dir));
    expect(err).toBeInstanceOf(UsageError);
    // the path shortened to its first levels and the last one (not 64 levels of `[0]`)
    expect(err.message).toMatch(
      /manifest\.json: settings\.deep\[0\]…\[0\]: nested deeper than 64 levels \(65 levels/,
    );
  });

  test('a UTF-8 byte order mark in a manifest is accepted, as in a lab file', () => {
    const { dir } = hostileCopy();
    const file = path.join(dir, 'manifest.json');
    fs.writeFileSync(file, '\ufeff' + fs.readFileSync(file, 'utf8'));
    expect(loadRun(dir).manifest.runId).toBe(RUN_ID);
    expect(parseLabJson('\ufeff{"name":"x"}')).toEqual({ ok: true, value: { name: 'x' } });
  });

  test('a byte order mark anywhere else is named, not shown as an invisible character', () => {
    const r = parseLabJson('{"name":\ufeff"x"}');
    expect(!r.ok && r.problem.message).toBe(
      'is not valid JSON: a UTF-8 byte order mark (U+FEFF) where a value was expected (line 1, column 9)',
    );
  });

  test('a step file with a byte that is not UTF-8 is skipped, naming the byte offset', () => {
    const { dir } = hostileCopy();
    const file = path.join(dir, stepPaths(STEP).json);
    const bytes = fs.readFileSync(file);
    fs.writeFileSync(file, Buffer.concat([bytes.subarray(0, 10), Buffer.from([0xff]), bytes.subarray(10)]));
    expect(loadRun(dir).problems).toEqual([
      `${stepPaths(STEP).json} is not valid UTF-8: byte 0xFF at byte offset 10 (line 2); save it as UTF-8; skipped`,
    ]);
  });

  test('hostile escape sequences reach neither summary.md nor compare.md as control characters', () => {
    const { out, dir } = hostileCopy();
    const file = path.join(dir, 'manifest.json');
    const m = JSON.parse(fs.readFileSync(file, 'utf8')) as ReturnType<typeof manifestWith>;
    fs.writeFileSync(
      file,
      JSON.stringify({
        ...m,
        status: 'failed',
        error: 'boom\u001b]0;pwned\u0007\u009b2J',
        environment: { ...m.environment, serverVersion: '15\u001b[2J' },
      }),
    );
    writeReport(dir);
    const cmp = writeComparison(FIXTURE, dir, { outDir: out });
    for (const text of [fs.readFileSync(path.join(dir, 'summary.md'), 'utf8'), cmp.markdown]) {
      // eslint-disable-next-line no-control-regex -- asserting there are none
      expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    }
    // the `]` escaped too: Markdown text, where a bracket could open a link (lib/report/md.ts)
    expect(fs.readFileSync(path.join(dir, 'summary.md'), 'utf8')).toContain(
      'boom\\x1b\\]0;pwned\\x07\\x9b2J',
    );
  });

  test('a tps of 1.7e308: the step is refused by its schema (PARTIAL, named), never drawn; nothing on stderr', () => {
    // GIVEN a step record whose tps no server can reach (issue 38: it was rendered as data)
    const { dir } = hostileCopy();
    const file = path.join(dir, stepPaths(STEP).json);
    const rec = JSON.parse(fs.readFileSync(file, 'utf8')) as ReturnType<typeof stepRecordWith>;
    fs.writeFileSync(file, JSON.stringify({ ...rec, result: { ...rec.result, tps: 1.7e308 } }));
    const spyErr = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const spyWarn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      // WHEN the report is written
      const r = writeReport(dir);
      // THEN the step is left out, named with its field, and the report says so
      expect(spyErr).not.toHaveBeenCalled();
      expect(spyWarn).not.toHaveBeenCalled();
      expect(r.warnings.filter((w) => w.id === 'chart-data')).toEqual([]);
      expect(loadRun(dir).problems).toEqual([
        expect.stringMatching(
          /^steps\/quick-e1_direct_c20_simple_persistent_r1\.json: result\.tps: expected at most/,
        ),
      ]);
      expect(fs.readFileSync(path.join(dir, 'summary.md'), 'utf8')).toMatch(/PARTIAL/);
    } finally {
      spyErr.mockRestore();
      spyWarn.mockRestore();
    }
  });
});

describe('lab files: messages', () => {
  const lab = fs.readFileSync(path.join(__dirname, '..', '..', 'labs', 'default.json'));

  test('1.2.3 as a number is invalid JSON at its line and column, not "out of JSON\'s range"', () => {
    const r = parseLabJson('{\n  "ttlHours": 1.2.3\n}');
    expect(!r.ok && r.problem).toEqual({
      path: '(file)',
      value: undefined,
      message: "is not valid JSON: '.' where ',' or '}' was expected (line 2, column 18)",
    });
  });

  test('a byte that is not UTF-8 is refused naming its offset (not turned into U+FFFD)', () => {
    const dir = scratchDir('proxylab-hostile-lab-');
    const file = path.join(dir, 'lab.json');
    const at = lab.indexOf('"description": "') + '"description": "'.length;
    fs.writeFileSync(file, Buffer.concat([lab.subarray(0, at), Buffer.from([0xc3, 0x28]), lab.subarray(at)]));
    const r = checkLabFile(file);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problems[0]?.message).toBe(
      `${file} is not valid UTF-8: byte 0x28 at byte offset ${at + 1} (line ${
        lab.subarray(0, at).toString('utf8').split('\n').length
      }); save it as UTF-8`,
    );
  });
});

describe('one policy for partially bad runs: fetch and status skip and name the bad file', () => {
  function serve(objects: Record<string, string>): void {
    s3Mock.on(ListObjectsV2Command).resolves({ Contents: Object.keys(objects).map((Key) => ({ Key })) });
    for (const [Key, text] of Object.entries(objects))
      s3Mock.on(GetObjectCommand, { Key }).resolves({
        Body: s3GetBody(text),
      } as never);
  }
  const manifest = JSON.stringify(
    manifestWith({ runId: 'r1', mode: 'cloud', status: 'running', endedAt: null }),
  );
  const rec = stepRecordWith({ runId: 'r1' });

  test('fetch: one schema-invalid object is skipped and named, the rest copied; a bad manifest is flagged', async () => {
    serve({
      'runs/r1/manifest.json': manifest,
      [`runs/r1/${stepPaths(rec.stepId).json}`]: JSON.stringify({ ...rec, status: 'finished' }),
      'runs/r1/metrics/local.json': fs.readFileSync(path.join(FIXTURE, 'metrics', 'local.json'), 'utf8'),
    });
    const dest = path.join(scratchDir('proxylab-hostile-fetch-'), 'r1');
    const s3 = new S3Client({ region: 'us-east-1' });
    const res = await fetchRun(s3, 'b', 'r1', new FileSystemBlobStore(dest));
    expect(res.files).toBe(2);
    expect(res.skipped.map((s) => s.key)).toEqual([`s3://b/runs/r1/${stepPaths(rec.stepId).json}`]);
    expect(res.identityUnreadable).toEqual([]);
    // the copy reports like any partial run
    expect(loadRun(dest).manifest.runId).toBe('r1');

    s3Mock.reset();
    serve({ 'runs/r1/manifest.json': '{"runId": ' });
    const bad = await fetchRun(s3, 'b', 'r1', new FileSystemBlobStore(`${dest}-2`));
    expect(bad.identityUnreadable).toEqual(['s3://b/runs/r1/manifest.json']);
  });

  test('status: an invalid interruptions/runner-0.json is named, the progress still shown (PARTIAL)', async () => {
    serve({
      'runs/r1/manifest.json': manifest,
      'runs/r1/interruptions/runner-0.json': '{"runnerIndex": "zero"}',
    });
    const row = await readListing(new S3Client({ region: 'us-east-1' }), 'b', 'r1', new Date());
    expect(row.unreadable).toBeNull();
    expect(formatListing(row)).toMatch(
      /\n {2}PARTIAL status: skipped s3:\/\/b\/runs\/r1\/interruptions\/runner-0\.json: runnerIndex: /,
    );
  });

  test('status: an unreadable manifest is listed as unreadable, naming the file', async () => {
    serve({ 'runs/r1/manifest.json': '{"runId": 1.2.3}' });
    const row = await readListing(new S3Client({ region: 'us-east-1' }), 'b', 'r1', new Date());
    expect(formatListing(row)).toBe(
      "r1: unreadable — s3://b/runs/r1/manifest.json: not valid JSON: '.' where ',' or '}' was expected (line 1, column 14)",
    );
  });
});
