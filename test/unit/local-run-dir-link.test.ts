/**
 * `runs/<id>` that is itself a symbolic link (issue 38): a local run, fresh or resumed, refuses it
 * before anything is written through it — as a linked `steps/` below it is already refused
 * (test/unit/hostile-run-dir.test.ts) — instead of writing its lock, plan and results wherever the
 * link points. Refused at the lock (lib/local/run-lock.ts), the first write of every local run.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acquireRunLock } from '../../lib/local/run-lock';
import { runLocal, validateLocalInput } from '../../lib/local/run-local';
import { scratchDir } from '../helpers/scratch';
import { caught } from '../helpers/caught';

const RUN_ID = 'local-linked';

/** `out/` with `out/<RUN_ID>` linked to `target` (a directory outside `out/` holding one file). */
function linkedRunDir(): { out: string; runDir: string; target: string } {
  const root = scratchDir('proxylab-linked-run-');
  const out = path.join(root, 'runs');
  fs.mkdirSync(out);
  const target = path.join(root, 'elsewhere');
  fs.mkdirSync(target);
  fs.writeFileSync(path.join(target, 'notes.txt'), 'not a run\n');
  const runDir = path.join(out, RUN_ID);
  fs.symlinkSync(target, runDir);
  return { out, runDir, target };
}

const MESSAGE = (runDir: string): string =>
  `${runDir} is a symbolic link; links in a run directory are not followed (proxylab never writes one)`;

describe('a run directory that is a symbolic link', () => {
  test('proxylab local --run-id: refused (exit 2) naming it; nothing written where it points', async () => {
    // GIVEN runs/<id> -> a directory elsewhere
    const { out, runDir, target } = linkedRunDir();
    const opts = validateLocalInput({ suite: 'smoke', runId: RUN_ID, out }, out);
    // WHEN / THEN
    await expect(runLocal(opts, { handleSignals: false })).rejects.toMatchObject({
      code: 'symlink-refused',
      exitCode: 2,
      message: MESSAGE(runDir),
    });
    expect(fs.readdirSync(target)).toEqual(['notes.txt']);
    expect(fs.lstatSync(runDir).isSymbolicLink()).toBe(true); // the link is left as it was
  });

  test('a dangling link (to where a new directory would be made): refused, nothing created', () => {
    const { runDir, target } = linkedRunDir();
    fs.rmSync(target, { recursive: true });
    expect(caught(() => acquireRunLock(runDir, { runId: RUN_ID, command: 'proxylab local' }))).toMatchObject({
      code: 'symlink-refused',
      message: MESSAGE(runDir),
    });
    expect(fs.existsSync(target)).toBe(false);
  });

  test('a real run directory, new or existing, is locked as before', () => {
    const out = scratchDir('proxylab-linked-run-');
    const runDir = path.join(out, RUN_ID);
    const lock = acquireRunLock(runDir, { runId: RUN_ID, command: 'proxylab local' });
    expect(fs.existsSync(lock.file)).toBe(true);
    lock.release();
    expect(fs.readdirSync(runDir)).toEqual([]);
  });
});
