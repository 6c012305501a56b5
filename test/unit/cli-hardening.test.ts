/**
 * Hostile or odd input to the CLI (issue 15): devices and FIFOs as input files, a file where a
 * directory is expected. Each case failed on the code before it (a hang, 16 GB read, a raw EEXIST).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../../lib/core/errors';
import { readOutputsFile } from '../../lib/cloud/outputs';
import { main } from '../../scripts/cli';
import { scratchDir } from '../helpers/scratch';

async function run(args: string[]): Promise<{ out: string; err: string; code: number }> {
  let out = '';
  let err = '';
  const o = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  const e = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err += String(chunk);
    return true;
  });
  process.exitCode = undefined;
  try {
    await main(args);
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  const code = typeof process.exitCode === 'number' ? process.exitCode : 0;
  process.exitCode = undefined;
  return { out, err, code };
}

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
