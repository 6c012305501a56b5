/**
 * What the CLI says, from issue 38's messages: the exit codes `report` and `compare` document are
 * the ones they give (a read-only directory is exit 1), `validate --help` does not break a line
 * mid-sentence, a too-deep JSON file's error is one short line, and `status` lists only prefixes
 * that are run ids.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { parseJsonText } from '../../lib/core/json-text';
import { formatIgnoredPrefixes, listRuns } from '../../lib/operator/runs';
import { mockAws } from '../helpers/aws-calls/recorder';
import { operator } from '../helpers/aws-calls/principals';
import { runCliInProcess } from '../helpers/cli';
import { scratchDir } from '../helpers/scratch';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'runs', 'synthetic-repeated');

const s3Mock = mockAws(S3Client, operator('read'));
afterEach(() => s3Mock.reset());

/** The exit codes a command's `--help` lists after "Exit codes:". */
async function documentedExitCodes(command: string): Promise<number[]> {
  const { out } = await runCliInProcess([command, '--help']);
  const from = out.indexOf('Exit codes:');
  expect(from).toBeGreaterThanOrEqual(0);
  const text = out
    .slice(from + 'Exit codes:'.length)
    .split('\n\n')[0]
    ?.replace(/\s+/g, ' ');
  return [...(text ?? '').matchAll(/(?:^ |, )(\d+) /g)].map((m) => Number(m[1]));
}

/**
 * A directory this process cannot write, even as root (the tests run as root here, where a chmod'd
 * directory stops nothing): sysfs's root refuses every new file (EACCES; EROFS where it is mounted
 * read-only).
 */
const READ_ONLY_DIR = '/sys';

describe('report and compare give only the exit codes their help lists', () => {
  test('report into a read-only directory: exit 1 naming the file, and 1 is documented', async () => {
    // GIVEN a run, and an output directory that cannot be written
    const dir = path.join(scratchDir('proxylab-ro-'), 'run');
    fs.cpSync(FIXTURE, dir, { recursive: true });
    // WHEN
    const r = await runCliInProcess(['report', dir, '--out', READ_ONLY_DIR]);
    // THEN
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^proxylab failed: cannot write \/sys\/report\.html: /);
    expect(await documentedExitCodes('report')).toEqual([0, 1, 2]);
    expect(await documentedExitCodes('report')).toContain(r.code);
  });

  test('compare into a read-only directory: the same', async () => {
    const root = scratchDir('proxylab-ro-');
    fs.cpSync(FIXTURE, path.join(root, 'a'), { recursive: true });
    fs.cpSync(FIXTURE, path.join(root, 'b'), { recursive: true });
    const r = await runCliInProcess([
      'compare',
      path.join(root, 'a'),
      path.join(root, 'b'),
      '--out',
      READ_ONLY_DIR,
    ]);
    expect(r.err).toMatch(/^proxylab failed: cannot write \/sys\/compare\.html: /);
    expect(r.code).toBe(1);
    expect(await documentedExitCodes('compare')).toContain(r.code);
  });

  test('not a run directory is still 2', async () => {
    const r = await runCliInProcess(['report', scratchDir('proxylab-ro-')]);
    expect(r.code).toBe(2);
    expect(await documentedExitCodes('report')).toContain(2);
  });
});

describe('validate --help', () => {
  test('no line of a paragraph ends mid-sentence: commander wraps the whole paragraph', async () => {
    // GIVEN the help at commander's width (80 columns when not a terminal)
    const { out } = await runCliInProcess(['validate', '--help']);
    const description = out.split('\n\n').slice(1, -2); // between "Usage:" and "Arguments:"
    expect(description.join('\n')).toMatch(/^Check lab files/);
    // THEN every line but a paragraph's last fills most of the width
    for (const paragraph of description) {
      const lines = paragraph.split('\n');
      for (const line of lines.slice(0, -1)) expect(`${line.length} ${line}`).toMatch(/^(6\d|7\d|80) /);
    }
  });
});

describe('a too-deep JSON file: one short line, with the depth', () => {
  test.each([
    ['an array 300 deep', `{"name":"a","note":${'['.repeat(300)}${']'.repeat(300)}}`, 'note[0][0]…[0]'],
    ['objects 300 deep', `${'{"note":'.repeat(300)}1${'}'.repeat(300)}`, 'note.note.note….note'],
    [
      'keys of 10 000 characters',
      `${`{"${'k'.repeat(10_000)}":`.repeat(70)}1${'}'.repeat(70)}`,
      `${'k'.repeat(40)}….${'k'.repeat(40)}….${'k'.repeat(40)}……`,
    ],
  ])('%s', (_what, text, path) => {
    // WHEN
    let message = '';
    try {
      parseJsonText(text, { source: 'lab.json' });
    } catch (err) {
      message = (err as Error).message;
    }
    // THEN
    expect(message.length).toBeLessThan(300);
    expect(message).toContain(`lab.json: ${path}`);
    expect(message).toMatch(/: nested deeper than 64 levels \(65 levels at the path shown, shortened\)/);
  });
});

describe('status lists only run ids', () => {
  test('prefixes that are not run ids (`..`, `..%2f..%2fx`) are not runs, and are noted', async () => {
    // GIVEN a bucket whose runs/ holds prefixes someone wrote by hand
    s3Mock.on(ListObjectsV2Command).resolves({
      CommonPrefixes: [
        { Prefix: 'runs/../' },
        { Prefix: 'runs/..%2f..%2fx/' },
        { Prefix: 'runs/a..b/' },
        { Prefix: 'runs/-x/' },
        { Prefix: 'runs/local-20260105-100000/' },
        { Prefix: 'runs/cloud-20260106-090000/' },
      ],
    });
    // WHEN
    const runs = await listRuns(new S3Client({ region: 'us-east-1' }), 'b');
    // THEN
    expect(runs.ids).toEqual(['local-20260105-100000', 'cloud-20260106-090000']);
    expect(runs.ignored).toEqual(['..', '..%2f..%2fx', 'a..b', '-x']);
    expect(formatIgnoredPrefixes(runs.ignored)).toBe(
      'note: 4 prefix(es) under runs/ are not run ids and are not listed: "..", "..%2f..%2fx", "a..b" and 1 more',
    );
    expect(formatIgnoredPrefixes([])).toBeNull();
  });
});
