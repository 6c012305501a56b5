/**
 * Hostile or odd input to the CLI (issue 15): devices and FIFOs as input files, a file where a
 * directory is expected. Each case failed on the code before it (a hang, 16 GB read, a raw EEXIST).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../../lib/core/errors';
import { readOutputsFile } from '../../lib/operator/outputs';
import { runCliInProcess as run } from '../helpers/cli';
import { main as runnerMain, runnerWorkRoot } from '../../scripts/runner';
import { scratchDir } from '../helpers/scratch';
import { manifestWith } from '../helpers/run-files';

const dir = scratchDir('proxylab-hardening-');
const fifo = path.join(dir, 'input.fifo');
execFileSync('mkfifo', [fifo]);

describe('input files are regular files, read with bounds', () => {
  test.each(['/dev/zero', fifo])('--outputs %s is refused at once', (file) => {
    const t0 = Date.now();
    expect(() => readOutputsFile(file, null)).toThrow(UsageError);
    expect(() => readOutputsFile(file, null)).toThrow(/^--outputs: .* (character device|FIFO)/);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  test.each(['/dev/zero', '/dev/urandom', fifo])(
    'collect --event %s is refused at once (exit 2)',
    async (file) => {
      const t0 = Date.now();
      const { code, err } = await run(['collect', '--event', file, '--out', dir]);
      expect(code).toBe(2);
      expect(err).toMatch(
        /^error: --event: .* (character device|FIFO \(named pipe\)); expected a regular file$/m,
      );
      expect(Date.now() - t0).toBeLessThan(5000); // includes loading the collect command;
    },
  );
});

describe('--out that is a file is a usage error (exit 2), not a raw EEXIST', () => {
  const file = path.join(dir, 'a-file');
  writeFileSync(file, 'x');

  test.each([
    [['report', dir, '--out', file], `--out ${file} exists and is not a directory; give a directory`],
    [['compare', dir, dir, '--out', path.join(file, 'sub')], `--out ${file}/sub: a parent of it is a file`],
    [
      ['fetch', 'r1', '--bucket', 'some-bucket', '--out', file],
      `--out ${file} exists and is not a directory`,
    ],
    [
      ['local', '--out', path.join(file, 'runs'), '--no-install'],
      `--out ${file}/runs: a parent of it is a file`,
    ],
  ])('%j', async (args, message) => {
    const { code, err } = await run(args);
    expect(err).toContain(message);
    expect(err).not.toMatch(/EEXIST|ENOTDIR/);
    expect(code).toBe(2);
  });
});

describe('validate --json on several files', () => {
  test('prints one JSON document keyed by file, problems on stderr', async () => {
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, '{"name":"x","ttlHours":0}');
    const { code, out, err } = await run([
      'validate',
      '--json',
      'labs/default.json',
      'labs/e1-prepared-statements.json',
      bad,
    ]);
    expect(code).toBe(2);
    const doc = JSON.parse(out) as Record<string, { name: string }>;
    expect(Object.keys(doc)).toEqual(['labs/default.json', 'labs/e1-prepared-statements.json']);
    expect(doc['labs/default.json']?.name).toBe('default');
    expect(err).toContain(`invalid lab file ${bad}: 1 problem`);
  });

  test('one file still prints the lab object itself', async () => {
    const { code, out } = await run(['validate', '--json', 'labs/default.json']);
    expect(code).toBe(0);
    expect((JSON.parse(out) as { name: string }).name).toBe('default');
  });
});

describe('destroy --dry-run', () => {
  test('says what would happen, not "Destroying stack"', async () => {
    const before = process.env.AWS_REGION;
    process.env.AWS_REGION = 'eu-west-1';
    try {
      const { code, out } = await run(['destroy', '--lab', 'labs/default.json', '--dry-run']);
      expect(code).toBe(0);
      expect(out).not.toContain('Destroying stack');
      expect(out).toMatch(/^Dry run: would destroy stack proxylab-default if it is deployed \(not checked/);
      expect(out).toContain('would run: npx cdk destroy');
    } finally {
      if (before === undefined) delete process.env.AWS_REGION;
      else process.env.AWS_REGION = before;
    }
  });
});

describe('the cloud runner leaves no work directory in /tmp', () => {
  test('its work root is removed when it ends, even when it fails', async () => {
    const root = runnerWorkRoot('wd-test', 0);
    mkdirSync(path.join(root, 'step-1'), { recursive: true });
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_MAX_ATTEMPTS: '1',
    });
    const e = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const o = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const code = await runnerMain([
        '--request',
        's3://no-such-bucket/runs/wd-test/request.json',
        '--runner-index',
        '0',
        '--region',
        'us-east-1',
        '--endpoint-url',
        'http://127.0.0.1:1',
      ]);
      expect(code).not.toBe(0);
    } finally {
      e.mockRestore();
      o.mockRestore();
      process.env = saved;
    }
    expect(existsSync(root)).toBe(false);
  }, 60_000);
});

describe('strings from a run directory reach the terminal with control characters made visible', () => {
  test("local's resume refusal quotes a hostile manifest's suite as text", async () => {
    const out = path.join(dir, 'runs');
    mkdirSync(path.join(out, 'hostile'), { recursive: true });
    writeFileSync(
      path.join(out, 'hostile', 'manifest.json'),
      JSON.stringify(
        manifestWith({
          runId: 'hostile',
          suite: 'x\u001b]0;pwned\u0007\u001b[2J',
          mode: 'local',
          status: 'interrupted',
          startedAt: '2026-11-21T10:00:00.000Z',
          endedAt: null,
          stepIds: [],
          stepsCompleted: 0,
        }),
      ),
    );
    const { code, err } = await run([
      'local',
      '--suite',
      'smoke',
      '--out',
      out,
      '--run-id',
      'hostile',
      '--no-install',
    ]);
    expect(code).toBe(2);
    expect(err).toContain('it ran suite x\\x1b]0;pwned\\x07\\x1b[2J, not smoke');
    expect(err).not.toContain('\u001b');
  });
});
