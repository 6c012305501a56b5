/**
 * One writer per run (lib/local/run-lock.ts): a second writer of the same run directory is refused
 * naming the holder; a lock whose owner died (pid gone, a zombie, the pid reused by another
 * process) is taken over with a message; a lock from another host is never judged. `proxylab local`
 * takes the lock before it reads or writes anything in the run directory.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { exitCodeFor, UsageError } from '../../lib/core/errors';
import { acquireRunLock, type LockSystem } from '../../lib/local/run-lock';
import { runLocal, validateLocalInput } from '../../lib/local/run-local';
import type { RunLockOwner } from '../../lib/results/run-lock';
import { scratchDir } from '../helpers/scratch';
import { caught } from '../helpers/caught';

/** A machine where `alive` pids run with the given start ticks. */
function machine(alive: Record<number, number>, host = 'host-a'): LockSystem {
  return {
    isAlive: (pid) => pid in alive,
    procStartTicks: (pid) => alive[pid] ?? null,
    hostname: () => host,
  };
}

function lockOf(dir: string): RunLockOwner {
  return JSON.parse(fs.readFileSync(path.join(dir, 'run.lock'), 'utf8')) as RunLockOwner;
}

describe('the run lock', () => {
  test('a second writer is refused (exit 2) naming host, pid, start and command of the holder', () => {
    const dir = path.join(scratchDir('proxylab-lock-'), 'r1');
    const sys = machine({ 100: 5000, 200: 6000 });
    const first = acquireRunLock(dir, { runId: 'r1', command: 'proxylab local --run-id r1', sys, pid: 100 });
    expect(lockOf(dir)).toMatchObject({ runId: 'r1', host: 'host-a', pid: 100, procStartTicks: 5000 });
    const err = caught(() => acquireRunLock(dir, { runId: 'r1', command: 'second', sys, pid: 200 }));
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).code).toBe('run-locked');
    expect(exitCodeFor(err)).toBe(2);
    expect((err as Error).message).toMatch(
      /run r1 is already being written: it is held by pid 100 on host-a since \S+ \(proxylab local --run-id r1\)/,
    );
    expect(lockOf(dir).pid).toBe(100);
    first.release();
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  test.each([
    ['its pid is gone', { 200: 6000 }],
    ['its pid now belongs to another process (other start time)', { 100: 9999, 200: 6000 }],
  ])('a dead owner (%s) is taken over with a message', (_why, alive) => {
    const dir = path.join(scratchDir('proxylab-lock-'), 'r1');
    acquireRunLock(dir, { runId: 'r1', command: 'killed -9', sys: machine({ 100: 5000 }), pid: 100 });
    const lines: string[] = [];
    const lock = acquireRunLock(dir, {
      runId: 'r1',
      command: 'resume',
      sys: machine(alive),
      pid: 200,
      log: (l) => lines.push(l),
    });
    expect(lockOf(dir)).toMatchObject({ pid: 200, command: 'resume' });
    expect(lines).toEqual([
      expect.stringMatching(
        /^Taking over run r1: its lock was held by pid 100 on host-a .*\(killed -9\), which is no longer running\.$/,
      ),
    ]);
    lock.release();
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  test('a lock from another host is never taken over (its pids mean nothing here)', () => {
    const dir = path.join(scratchDir('proxylab-lock-'), 'r1');
    acquireRunLock(dir, { runId: 'r1', command: 'elsewhere', sys: machine({ 100: 1 }, 'host-b'), pid: 100 });
    const err = caught(() => acquireRunLock(dir, { runId: 'r1', command: 'x', sys: machine({}), pid: 200 }));
    expect((err as Error).message).toContain('held by pid 100 on host-b');
  });

  test('release removes only its own lock', () => {
    const dir = path.join(scratchDir('proxylab-lock-'), 'r1');
    const stale = acquireRunLock(dir, { runId: 'r1', command: 'a', sys: machine({ 100: 1 }), pid: 100 });
    acquireRunLock(dir, { runId: 'r1', command: 'b', sys: machine({ 200: 2 }), pid: 200 });
    stale.release();
    expect(lockOf(dir).pid).toBe(200);
  });

  test('the real machine: this process holds it, a pid that exited does not', () => {
    const dir = path.join(scratchDir('proxylab-lock-'), 'r1');
    const mine = acquireRunLock(dir, { runId: 'r1', command: 'me' });
    expect(() => acquireRunLock(dir, { runId: 'r1', command: 'again' })).toThrow(/held by pid \d+/);
    mine.release();
    // A lock left by a process that is gone (pid beyond pid_max never runs).
    fs.writeFileSync(
      path.join(dir, 'run.lock'),
      JSON.stringify({ ...lockOfOwner(), pid: 2 ** 22 + 7, procStartTicks: 1 }),
    );
    const lines: string[] = [];
    acquireRunLock(dir, { runId: 'r1', command: 'resume', log: (l) => lines.push(l) }).release();
    expect(lines.join('\n')).toContain('no longer running');
  });
});

function lockOfOwner(): RunLockOwner {
  return {
    schemaVersion: 1,
    runId: 'r1',
    host: os.hostname(),
    pid: 1,
    procStartTicks: 1,
    command: 'gone',
    acquiredAt: '2026-11-22T00:00:00.000Z',
  };
}

describe('proxylab local takes the lock first', () => {
  test('a run whose lock is held by a live process is refused before any server starts', async () => {
    const out = scratchDir('proxylab-lock-local-');
    const opts = validateLocalInput({ suite: 'smoke', out, runId: 'busy', install: false }, out);
    const held = acquireRunLock(path.join(out, 'busy'), { runId: 'busy', command: 'the first run' });
    const logs: string[] = [];
    const run = runLocal(opts, { handleSignals: false, log: (l) => logs.push(l) });
    await expect(run).rejects.toThrow(
      /run busy is already being written: it is held by pid \d+ .*\(the first run\)/,
    );
    expect(logs).toEqual([]); // nothing started
    expect(fs.readdirSync(path.join(out, 'busy'))).toEqual(['run.lock']);
    held.release();
  });

  test('a generated run id whose directory already holds a run is refused, not resumed', async () => {
    const out = scratchDir('proxylab-lock-local-');
    const opts = validateLocalInput({ suite: 'smoke', out, install: false }, out);
    const dir = path.join(out, opts.runId);
    fs.mkdirSync(dir);
    fs.cpSync(
      path.join(__dirname, '..', 'fixtures', 'runs', 'synthetic-repeated', 'manifest.json'),
      path.join(dir, 'manifest.json'),
    );
    await expect(runLocal(opts, { handleSignals: false })).rejects.toThrow(
      /already holds run .*; pass --run-id to resume it/,
    );
    expect(fs.existsSync(path.join(dir, 'run.lock'))).toBe(false);
  });
});
