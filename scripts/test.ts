/**
 * `npm test` after the preflight: the type-check (`tsc -p tsconfig.typecheck.json --noEmit`, as `npm
 * run typecheck`) and jest at the same time, not one after the other. The type-check is ≈ 40 CPU-s;
 * jest's integration files spend much of their time waiting on pgbench's fixed -T, servers and
 * barriers, so the type-check uses what they leave (bench/README.md "npm test time"). It runs at a
 * lower priority (nice 10), so jest's files and their timed checks go first; on a fresh clone it
 * ends about two minutes in. Jest's output streams as usual; the type-check's comes after it, and
 * the exit code is non-zero when either failed.
 *
 *   npx tsx scripts/test.ts [JEST ARGS…]      (npm test -- [JEST ARGS…])
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { cliBundle } from './cli-bundle';
import { notRunLines, PROJECTS } from './preflight';
import { testTmpdir } from './test-tmpdir';

function exitOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.on('error', () => resolve(1));
    child.on('close', (code, signal) =>
      resolve(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1)),
    );
  });
}

const TSC_BUILD_INFO = path.join(__dirname, '..', 'node_modules', '.cache', 'proxylab', 'tsc', 'tsbuildinfo');

async function main(jestArgs: readonly string[]): Promise<number> {
  const started = Date.now();
  // The CLI bundle (scripts/cli-bundle.js), built here once: on a fresh clone the first CLIs the tests
  // start side by side would each build it (≈ 0.4 CPU-s apiece). A failure is left to the launcher,
  // which then says why or falls back to tsx.
  try {
    cliBundle();
  } catch {
    // the tests' first CLI tries again
  }
  // The tests' temporary files (throwaway clusters, pgbench logs, run directories) on a RAM-backed
  // filesystem when there is one with room: the data directory copies, WAL and pgbench -i of some
  // 60 clusters cost a third of the CPU there (scripts/test-tmpdir.ts).
  const tmp = testTmpdir(process.env);
  if (tmp.note) process.stdout.write(`${tmp.note}\n`);
  // Incremental: the type-check's results per file are kept in node_modules/.cache, so a later
  // `npm test` re-checks only what changed and what depends on it (≈ 29 instead of ≈ 60 CPU-s when
  // nothing did; a fresh clone pays the whole check once).
  const tsc = spawn(
    process.execPath,
    [
      require.resolve('typescript/bin/tsc'),
      ...['-p', path.join(__dirname, '..', 'tsconfig.typecheck.json')],
      ...['--noEmit', '--incremental', '--tsBuildInfoFile', TSC_BUILD_INFO],
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  try {
    if (tsc.pid !== undefined) os.setPriority(tsc.pid, 10);
  } catch {
    // not allowed here: it runs at the same priority as jest
  }
  let tscOut = '';
  tsc.stdout?.on('data', (b: Buffer) => (tscOut += b.toString('utf8')));
  tsc.stderr?.on('data', (b: Buffer) => (tscOut += b.toString('utf8')));
  const tscExit = exitOf(tsc).then((code) => ({ code, sec: (Date.now() - started) / 1000 }));
  const jest = spawn(process.execPath, [require.resolve('jest/bin/jest'), ...jestArgs], {
    stdio: 'inherit',
    env: tmp.env,
  });
  // Ctrl-C reaches jest and the type-check from the terminal; a signal sent to this process alone
  // is passed on. Either way this process waits for jest to end, then removes the temporary files.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(sig, () => {
      for (const child of [jest, tsc]) if (child.exitCode === null) child.kill(sig);
    });
  const jestCode = await exitOf(jest);
  tmp.remove();
  // The tests that did not run for want of a product no registry here provides (PgDoorman), again
  // after jest's summary, where a reader looks.
  for (const line of notRunLines(PROJECTS)) process.stdout.write(`${line}\n`);
  const typecheck = await tscExit;
  if (typecheck.code === 0)
    process.stdout.write(`tsc --noEmit: no type errors (${typecheck.sec.toFixed(0)} s)\n`);
  else process.stdout.write(`${tscOut.trimEnd()}\ntsc --noEmit: failed (exit ${typecheck.code})\n`);
  return jestCode !== 0 ? jestCode : typecheck.code;
}

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
