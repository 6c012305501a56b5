/**
 * scripts/test-tmpdir.ts: where `npm test` puts the tests' temporary files — a tmpfs with room, or
 * the usual temporary directory — and which leftovers of killed runs it removes.
 */
import { expect } from '@jest/globals';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  MIN_FREE_BYTES,
  ramDirProblem,
  staleDirs,
  testTmpdir,
  type TmpdirFs,
} from '../../scripts/test-tmpdir';
import { scratchDir } from '../helpers/scratch';

const TMPFS = 0x01021994;
const EXT4 = 0xef53;

function fakeFs(statfs: ReturnType<TmpdirFs['statfs']>, alive: readonly number[] = []): TmpdirFs {
  return { statfs: () => statfs, pidAlive: (pid) => alive.includes(pid) };
}

describe('ramDirProblem', () => {
  test.each([
    ['a tmpfs with 4 GiB free', { type: TMPFS, bavail: MIN_FREE_BYTES / 4096, bsize: 4096 }, null],
    [
      "Docker's 64 MiB /dev/shm",
      { type: TMPFS, bavail: (64 * 1024 ** 2) / 4096, bsize: 4096 },
      '/dev/shm has 0.1 GiB free, below 4 GiB',
    ],
    ['a disk', { type: EXT4, bavail: 1e9, bsize: 4096 }, '/dev/shm is not a tmpfs'],
    ['nothing there', null, '/dev/shm does not exist'],
  ])('%s', (_name, statfs, problem) => {
    expect(ramDirProblem('/dev/shm', fakeFs(statfs))).toBe(problem);
  });
});

test('staleDirs: only the directories whose owning run is gone (an unreadable owner is left alone)', () => {
  // GIVEN three leftovers: one of a live run, one of a dead run, one whose owner file was unreadable
  const owners = new Map<string, number | null>([
    ['plt-aaaaaa', 100],
    ['plt-bbbbbb', 200],
    ['plt-cccccc', null],
  ]);
  // WHEN / THEN
  expect(staleDirs('/dev/shm', owners, { pidAlive: (pid) => pid === 100 })).toEqual(['/dev/shm/plt-bbbbbb']);
});

describe('testTmpdir', () => {
  test('PROXYLAB_TEST_TMPDIR=keep leaves the environment as it is', () => {
    const env = { TMPDIR: '/var/tmp', PROXYLAB_TEST_TMPDIR: 'keep' };
    const t = testTmpdir(env, fakeFs({ type: TMPFS, bavail: 1e9, bsize: 4096 }));
    expect(t.env).toBe(env);
    expect(t.note).toBeNull();
  });

  test('PROXYLAB_TEST_TMPDIR=DIR: TMPDIR is DIR, made if missing, and left in place afterwards', () => {
    // GIVEN a directory that does not exist yet
    const dir = path.join(scratchDir('proxylab-tmpdir-'), 'chosen');
    // WHEN
    const t = testTmpdir({ PROXYLAB_TEST_TMPDIR: dir }, fakeFs(null));
    t.remove();
    // THEN
    expect(t.env.TMPDIR).toBe(dir);
    expect(fs.statSync(dir).isDirectory()).toBe(true);
  });

  test('no tmpfs with room: the environment as it is', () => {
    const env = { TMPDIR: '/var/tmp' };
    expect(testTmpdir(env, fakeFs({ type: EXT4, bavail: 1e9, bsize: 4096 })).env).toBe(env);
  });
});
