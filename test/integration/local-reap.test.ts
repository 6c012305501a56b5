/**
 * A `proxylab local` killed with SIGKILL cannot stop its servers (they run in their own process
 * group) nor remove its temp dir. The next `proxylab local` reaps that stack: it says so, the old
 * PostgreSQL and PgBouncer are gone, the old directory is removed, and the new run still passes.
 * Also: the liveness check the reaper relies on, on a real zombie process.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseProcState } from '../../lib/core/proc-stat';
import { nodeReapSystem, type StackOwner } from '../../lib/local/reap';
import {
  assertStackGone,
  exitedAs,
  parseStackLine,
  pidsMentioning,
  RUN_TO_INTERRUPT,
  spawnCli,
  type CliRun,
} from '../helpers/local-stack';

let outDir: string;
/**
 * Both runs see a private TMPDIR: the reaper scans `<tmpdir>/proxylab-local-*`, and a `proxylab local`
 * started meanwhile by another test file (jest runs two at once) would otherwise reap the orphan first.
 * World-writable and sticky like /tmp, because PostgreSQL runs as another OS user when we are root.
 */
let tmpDir: string;
const started: CliRun[] = [];

beforeAll(() => {
  outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-reap-test-'));
  fs.chmodSync(outDir, 0o755);
  tmpDir = path.join(outDir, 'tmp');
  fs.mkdirSync(tmpDir);
  fs.chmodSync(tmpDir, 0o1777);
});

afterAll(() => {
  for (const run of started) {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
  }
  fs.rmSync(outDir, { recursive: true, force: true });
});

test('a stack orphaned by SIGKILL is reaped by the next proxylab local, which then runs normally', async () => {
  // GIVEN a run whose stack is up (the test-only cheap run, short: what matters is its stack, and
  // that the next run completes, not its findings)…
  const first = spawnCli(RUN_TO_INTERRUPT.args(path.join(outDir, 'first'), undefined, { short: true }), {
    TMPDIR: tmpDir,
  });
  started.push(first);
  await first.waitForStdout(/files in \S+/, 60_000);
  const stack = parseStackLine(first.stdout());
  expect(stack).not.toBeNull();
  const owner = JSON.parse(fs.readFileSync(path.join(stack!.baseDir, 'owner.json'), 'utf8')) as StackOwner;
  expect(owner.pid).toBe(first.child.pid);
  expect(owner.kept).toBe(false);
  const serverPids = [owner.postgres?.pid, owner.pgbouncer?.pid];
  expect(serverPids.every((p) => typeof p === 'number')).toBe(true);
  expect(pidsMentioning(stack!.baseDir)).toEqual(expect.arrayContaining(serverPids));

  // …WHEN proxylab is killed with SIGKILL (no exit hook runs)
  first.child.kill('SIGKILL');
  expect(await first.exit).toBeNull();

  // THEN the servers are orphaned: still running, directory still there
  expect(pidsMentioning(stack!.baseDir)).toEqual(expect.arrayContaining(serverPids));
  expect(fs.existsSync(stack!.baseDir)).toBe(true);

  // WHEN proxylab local runs again
  const second = spawnCli(RUN_TO_INTERRUPT.args(path.join(outDir, 'second'), undefined, { short: true }), {
    TMPDIR: tmpDir,
  });
  started.push(second);
  const exit = await exitedAs(second, 0);

  // THEN it said it cleaned up the dead proxylab's stack, naming the servers it stopped
  const line = second
    .stdout()
    .split('\n')
    .find((l) => /cleaned up a stack left by proxylab pid/i.test(l) && l.includes(stack!.baseDir));
  expect(line).toBe(
    `Cleaned up a stack left by proxylab pid ${owner.pid} (dir ${stack!.baseDir}): stopped PgBouncer pid ${owner.pgbouncer!.pid}, PostgreSQL pid ${owner.postgres!.pid}`,
  );
  // the old servers, their ports and their directory are gone
  await assertStackGone(stack!);
  // and the new run passed and cleaned up after itself
  expect(exit).toEqual({ code: 0 });
  const newStack = parseStackLine(second.stdout());
  expect(newStack?.baseDir).not.toBe(stack!.baseDir);
  await assertStackGone(newStack!);
}, 150_000);

describe('nodeReapSystem().isAlive', () => {
  test('a zombie owner (exited, never waited for) counts as gone although kill(pid, 0) still succeeds', async () => {
    // GIVEN a real zombie: sh starts a short sleep in the background, then execs into a long sleep
    // that never waits for it
    const parent = spawn('sh', ['-c', 'sleep 0.05 & echo $!; exec sleep 10 >/dev/null'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const zombie = await new Promise<number>((resolve) =>
        parent.stdout.once('data', (b: Buffer) => resolve(Number(b.toString().trim()))),
      );
      let state = '';
      for (let i = 0; i < 50 && state !== 'Z'; i++) {
        await new Promise((r) => setTimeout(r, 20));
        state = parseProcState(fs.readFileSync(`/proc/${zombie}/stat`, 'utf8')) ?? '';
      }
      expect(state).toBe('Z');
      expect(() => process.kill(zombie, 0)).not.toThrow(); // what a plain liveness check sees
      // THEN
      expect(nodeReapSystem().isAlive(zombie)).toBe(false);
      expect(nodeReapSystem().isAlive(parent.pid!)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
