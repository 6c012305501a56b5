/**
 * lab.json (lib/results/lab-record.ts): the lab file a run was started with, verbatim and checked
 * where read — its SHA-256 the text's, the text a lab's JSON of the record's name — written and read
 * by the run store, read tolerantly by the report's reader, copied by fetch only when it fits; the
 * field-level diff compare and resume use (lib/results/lab-diff.ts); and the resume of a local run
 * refused when its lab file changed (lib/local/lab-record.ts).
 */
import { expect } from '@jest/globals';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RunFileError, UsageError } from '../../lib/core/errors';
import { READ_LIMITS } from '../../lib/core/read';
import { loadLabSource } from '../../lib/config/lab-source';
import { checkLabUnchanged, recordLab } from '../../lib/local/lab-record';
import { FileSystemBlobStore } from '../../lib/results/fs-blob-store';
import { changeLine, diffJson, diffLabRecords, labChangedProblem } from '../../lib/results/lab-diff';
import { labRecordOf, labRecordSchema, type LabRecord } from '../../lib/results/lab-record';
import { readRunDir } from '../../lib/results/run-reader';
import { RUN_PATHS } from '../../lib/results/run-paths';
import { copyRun, RunStore } from '../../lib/results/run-store';
import { parseRunFile } from '../../lib/results/schemas';
import { caught } from '../helpers/caught';
import { manifestWith } from '../helpers/run-files';
import { scratchDir } from '../helpers/scratch';

const ROOT = path.join(__dirname, '..', '..');
const LAB_TEXT = fs.readFileSync(path.join(ROOT, 'labs', 'own-workload.json'), 'utf8');
/** The shipped lab with its poolers' share raised from 45 to 80 %. */
const CHANGED_TEXT = LAB_TEXT.replace('"poolPercent": 45', '"poolPercent": 80');

function record(text = LAB_TEXT, source = 'labs/own-workload.json'): LabRecord {
  return labRecordOf({ text, source, name: 'own-workload' });
}

/** lab.json's text for `fields` over a valid record (sha256 not recomputed). */
function labJson(fields: Partial<Record<keyof LabRecord, unknown>>): string {
  return JSON.stringify({ ...record(), ...fields });
}

describe('the record of a lab file', () => {
  test('holds the text verbatim, its SHA-256 (as sha256sum gives it) and the path as given', () => {
    // WHEN
    const r = record();
    // THEN
    expect(r).toEqual({
      schemaVersion: 1,
      name: 'own-workload',
      source: 'labs/own-workload.json',
      sha256: createHash('sha256')
        .update(fs.readFileSync(path.join(ROOT, 'labs', 'own-workload.json')))
        .digest('hex'),
      text: LAB_TEXT,
    });
    // AND it reads back as it was written
    expect(parseRunFile(labRecordSchema, 'lab.json', JSON.stringify(r))).toEqual(r);
  });

  test('loadLabSource validates the text it records (script files included) and keeps the path as given', () => {
    // WHEN the shipped lab is loaded as `proxylab local --lab` and `proxylab run` load it
    const source = loadLabSource(path.join(ROOT, 'labs', 'own-workload.json'), 'labs/own-workload.json');
    // THEN the lab is the validated one and the record its text
    expect(source.lab.name).toBe('own-workload');
    expect(source.lab.scenarios?.[0]?.name).toBe('checkout');
    expect(source.record).toEqual(record());
  });

  test('loadLabSource refuses an invalid lab in loadLabFile’s words, naming the field', () => {
    // GIVEN a lab whose pool share is out of range
    const dir = scratchDir('proxylab-lab-source-');
    fs.copyFileSync(path.join(ROOT, 'labs', 'own-workload.sql'), path.join(dir, 'own-workload.sql'));
    fs.writeFileSync(path.join(dir, 'lab.json'), LAB_TEXT.replace('"poolPercent": 45', '"poolPercent": 0'));
    // WHEN / THEN
    const err = caught(() => loadLabSource(path.join(dir, 'lab.json')));
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(
      /^invalid lab file .*lab\.json: 1 problem\n {2}poolers\[0\]\.poolPercent: must be an integer 1–100, got 0$/,
    );
    // AND a missing file as every command says it
    expect((caught(() => loadLabSource(path.join(dir, 'none.json'))) as Error).message).toMatch(
      /does not exist: .*none\.json/,
    );
  });

  test.each<[string, string, string]>([
    ['a SHA-256 that is not the text’s', labJson({ sha256: 'a'.repeat(64) }), 'sha256'],
    ['a SHA-256 that is not hex', labJson({ sha256: 'xyz' }), 'sha256'],
    ['a text that is not JSON', labJson({ text: '{"name": ', sha256: record('{"name": ').sha256 }), 'text'],
    [
      'a text with a key twice (JSON.parse would keep the last)',
      labJson({
        text: '{"name":"own-workload","name":"other"}',
        sha256: record('{"name":"own-workload","name":"other"}').sha256,
      }),
      'text',
    ],
    ['a name that is not the text’s', labJson({ name: 'other' }), 'name'],
    [
      'a text longer than a lab file may be',
      labJson({
        text: ' '.repeat(READ_LIMITS.lab + 1),
        sha256: record(' '.repeat(READ_LIMITS.lab + 1)).sha256,
      }),
      'text',
    ],
    ['an unknown schemaVersion', labJson({ schemaVersion: 2 }), 'schemaVersion'],
  ])('lab.json with %s is refused, naming the field', (_, text, field) => {
    // WHEN / THEN
    const err = caught(() => parseRunFile(labRecordSchema, 'runs/r1/lab.json', text));
    expect(err).toBeInstanceOf(RunFileError);
    expect((err as RunFileError).message).toMatch(new RegExp(`^runs/r1/lab\\.json: .*\\b${field}\\b`));
  });
});

describe('what differs between two labs, field by field', () => {
  test.each<[string, unknown, unknown, string[]]>([
    ['the same', { a: 1 }, { a: 1 }, []],
    [
      'a nested number',
      { poolers: [{ poolPercent: 50 }] },
      { poolers: [{ poolPercent: 80 }] },
      ['poolers[0].poolPercent: 50 → 80'],
    ],
    ['a key added', { tags: {} }, { tags: { team: 'db' } }, ['tags.team: added "db"']],
    ['a key removed', { ttlHours: 4, name: 'x' }, { name: 'x' }, ['ttlHours: removed (was 4)']],
    ['an entry added', { p: [1] }, { p: [1, 2] }, ['p[1]: added 2']],
    [
      'an entry removed',
      { p: [{ name: 'a' }, { name: 'b' }] },
      { p: [{ name: 'a' }] },
      ['p[1]: removed (was {"name":"b"})'],
    ],
    [
      'a key that is no identifier',
      { tags: { 'cost center': 'a' } },
      { tags: { 'cost center': 'b' } },
      ['tags["cost center"]: "a" → "b"'],
    ],
    ['a type change', { clients: [1] }, { clients: 'all' }, ['clients: [1] → "all"']],
    ['the root', [1], 1, ['(root): [1] → 1']],
    ['a long value, shortened', { d: 'x'.repeat(100) }, { d: 'y' }, [`d: "${'x'.repeat(58)}… → "y"`]],
  ])('%s', (_, a, b, lines) => {
    expect(diffJson(a, b).map(changeLine)).toEqual(lines);
  });

  test('two records: the shipped lab and its copy with another pool share', () => {
    expect(diffLabRecords(record(), record(CHANGED_TEXT))?.map(changeLine)).toEqual([
      'poolers[0].poolPercent: 45 → 80',
    ]);
  });

  test('a resume of a changed lab is told which fields changed and both hashes', () => {
    // GIVEN the stored record and the lab file as it is now
    const now = record(CHANGED_TEXT, 'own.json');
    // WHEN / THEN
    expect(labChangedProblem(record(), record())).toBeNull();
    expect(labChangedProblem(record(), now)).toBe(
      `its lab file changed since it started (lab own-workload: poolers[0].poolPercent: 45 → 80): lab.json of the run holds labs/own-workload.json at sha256 ${record().sha256.slice(0, 12)}…, --lab own.json is now sha256 ${now.sha256.slice(0, 12)}…`,
    );
    // AND a change of formatting only is a change of the text, said as such
    expect(labChangedProblem(record(), record(JSON.stringify(JSON.parse(LAB_TEXT))))).toMatch(
      /\(lab own-workload: the text differs, no field does \(formatting or key order\)\)/,
    );
  });
});

describe('lab.json in a run directory', () => {
  function runDir(): { dir: string; store: RunStore } {
    const dir = scratchDir('proxylab-lab-json-');
    const store = new RunStore(new FileSystemBlobStore(dir));
    fs.writeFileSync(
      path.join(dir, RUN_PATHS.manifest),
      JSON.stringify(manifestWith({ runId: 'r1', settings: { lab: 'own-workload' } })),
    );
    return { dir, store };
  }

  test('the run store writes it and reads it back, checked; none is null', async () => {
    const { dir, store } = runDir();
    expect(await store.readLabRecord()).toBeNull();
    // WHEN
    await store.writeLabRecord(record());
    // THEN
    expect(await store.readLabRecord()).toEqual(record());
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'lab.json'), 'utf8'))).toEqual(record());
    // AND an edited text is refused where read, naming the file and the field
    fs.writeFileSync(path.join(dir, 'lab.json'), labJson({ text: CHANGED_TEXT }));
    await expect(store.readLabRecord()).rejects.toThrow(/lab\.json: .*sha256: is not the SHA-256 of `text`/);
  });

  test('the tolerant reader gives it to the report; a bad one, or one of another lab, is a named warning', () => {
    const { dir } = runDir();
    fs.writeFileSync(path.join(dir, 'lab.json'), JSON.stringify(record()));
    expect(readRunDir(dir).lab).toEqual(record());
    // GIVEN an edited text
    fs.writeFileSync(path.join(dir, 'lab.json'), labJson({ text: CHANGED_TEXT }));
    const edited = readRunDir(dir);
    expect(edited.lab).toBeNull();
    expect(edited.warnings).toEqual([
      {
        code: 'file-invalid',
        file: 'lab.json',
        reason: expect.stringMatching(/^sha256: is not the SHA-256/),
      },
    ]);
    // GIVEN the file of another lab than the manifest's
    const other = labRecordOf({ text: '{"name":"other"}', source: 'other.json', name: 'other' });
    fs.writeFileSync(path.join(dir, 'lab.json'), JSON.stringify(other));
    expect(readRunDir(dir).warnings).toEqual([
      {
        code: 'file-invalid',
        file: 'lab.json',
        reason: 'it is the file of lab other, manifest.json says the run is of lab own-workload',
      },
    ]);
  });

  test('fetch (copyRun) copies it when it fits, and skips and names one that does not', async () => {
    // GIVEN a run with a good lab.json, and one with an edited text
    const good = runDir();
    await good.store.writeLabRecord(record());
    const bad = runDir();
    fs.writeFileSync(path.join(bad.dir, 'lab.json'), labJson({ text: CHANGED_TEXT }));
    // WHEN both are copied
    const to = scratchDir('proxylab-lab-copy-');
    const copied = await copyRun(good.store.blobs, new FileSystemBlobStore(path.join(to, 'good')));
    const skipped = await copyRun(bad.store.blobs, new FileSystemBlobStore(path.join(to, 'bad')));
    // THEN
    expect(copied.skipped).toEqual([]);
    expect(fs.readFileSync(path.join(to, 'good', 'lab.json'), 'utf8')).toBe(
      fs.readFileSync(path.join(good.dir, 'lab.json'), 'utf8'),
    );
    expect(skipped.skipped).toEqual([
      { key: path.join(bad.dir, 'lab.json'), reason: expect.stringMatching(/sha256: is not the SHA-256/) },
    ]);
    expect(fs.existsSync(path.join(to, 'bad', 'lab.json'))).toBe(false);
  });
});

describe('the resume of a local run and its lab file', () => {
  const prevOf = (lab?: string) =>
    manifestWith({ runId: 'r1', mode: 'local', settings: lab === undefined ? {} : { lab } });
  const storeWith = (stored: LabRecord | null) => ({ readLabRecord: () => Promise.resolve(stored) });

  test('the same text resumes; a run of an earlier release (no lab.json) is checked by its name only', async () => {
    await expect(
      checkLabUnchanged(storeWith(record()), prevOf('own-workload'), record()),
    ).resolves.toBeUndefined();
    await expect(
      checkLabUnchanged(storeWith(null), prevOf('own-workload'), record()),
    ).resolves.toBeUndefined();
    // (without --lab, the manifest's settings refuse a lab run: run-local's checkResumable)
    await expect(
      checkLabUnchanged(storeWith(record()), prevOf('own-workload'), null),
    ).resolves.toBeUndefined();
  });

  test('a changed text is refused, naming the lab, the field and what to do', async () => {
    const err = await checkLabUnchanged(
      storeWith(record()),
      prevOf('own-workload'),
      record(CHANGED_TEXT),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).code).toBe('run-lab-changed');
    expect((err as Error).message).toMatch(
      /^cannot resume run r1: its lab file changed since it started \(lab own-workload: poolers\[0\]\.poolPercent: 45 → 80\): .* A changed lab is another run: pass a new --run-id \(or put back the text in the run's lab\.json to resume this one\)\.$/,
    );
  });

  test('a lab given to resume a run that ran without one is refused', async () => {
    const err = await checkLabUnchanged(storeWith(null), prevOf(), record()).catch((e: unknown) => e);
    expect((err as UsageError).code).toBe('run-lab-added');
    expect((err as Error).message).toMatch(
      /^cannot resume run r1: it ran without a lab, and --lab labs\/own-workload\.json is given now\./,
    );
  });

  test('recordLab writes lab.json for a lab run, nothing for a run without one', async () => {
    const written: LabRecord[] = [];
    const store = { writeLabRecord: (r: LabRecord) => Promise.resolve(void written.push(r)) };
    await recordLab(store, null);
    expect(written).toEqual([]);
    await recordLab(store, record());
    expect(written).toEqual([record()]);
  });
});
