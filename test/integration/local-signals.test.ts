/**
 * `proxylab local` and the signals that end a terminal session (issue 15): SIGHUP (terminal or SSH
 * session closed) and SIGQUIT are handled like SIGTERM — servers stopped, manifest `interrupted`,
 * exit 128 + signal — and an interrupt before the first step exits 130 without claiming kept steps
 * or leaving an empty run directory. Real PostgreSQL + PgBouncer, the real CLI, real signals.
 */
import { expect } from '@jest/globals';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunManifest } from '../../lib/suite/types';
import {
  assertStackGone,
  exitedAs,
  parseStackLine,
  RUN_TO_INTERRUPT,
  spawnCli,
  type CliRun,
} from '../helpers/local-stack';
import { scratchDir } from '../helpers/scratch';

const outDir = scratchDir('proxylab-local-signals-');

// Each test runs its own CLI with its own stack and run id, and waits mostly on the servers and
// pgbench: the four run side by side (test.concurrent). The run is the test-only one made to be
// interrupted (RUN_TO_INTERRUPT): what is checked is how it stops, not a finding. Every signal here
// lands before a step or as one starts, never inside a step's window: the short one (-T 1 steps).
const SHORT = { short: true } as const;

function manifestOf(runId: string): RunManifest {
  return JSON.parse(fs.readFileSync(path.join(outDir, runId, 'manifest.json'), 'utf8')) as RunManifest;
}

describe.each([
  ['SIGHUP', 129],
  ['SIGQUIT', 131],
] as const)('proxylab local receiving %s mid-run', (signal, expectedCode) => {
  test.concurrent(
    `stops both servers, marks the manifest interrupted and exits ${expectedCode}`,
    async () => {
      // GIVEN a run that has started its third step
      const runId = `run-${signal.toLowerCase()}`;
      const run = spawnCli(RUN_TO_INTERRUPT.args(outDir, runId, SHORT));
      // mid-run: two steps measured, the third started
      await run.waitForStdout(RUN_TO_INTERRUPT.started(3), 60_000);
      const stack = parseStackLine(run.stdout());
      expect(stack).not.toBeNull();

      // WHEN the signal arrives
      run.child.kill(signal);
      const code = await run.exit;

      // THEN nothing is left running, the manifest says interrupted, and the exit code is 128 + signal
      expect(code).toBe(expectedCode);
      await assertStackGone(stack!);
      const m = manifestOf(runId);
      expect(m.status).toBe('interrupted');
      expect(m.stepsCompleted).toBeGreaterThanOrEqual(1);
      expect(run.stdout()).toContain(
        `${signal}: stopping pgbench, PostgreSQL and PgBouncer; finished steps are kept`,
      );
    },
    90_000,
  );
});

/** A Ctrl-C before the first step: exit 130, no claim of kept steps, and no run directory left. */
function expectNothingMeasured(run: CliRun, code: number | null, runId: string): void {
  expect(code).toBe(130);
  const all = run.stdout() + run.stderr();
  expect(all).not.toContain('finished steps are kept');
  expect(all).toContain('SIGINT: stopping before the first step; nothing was measured');
  expect(run.stderr()).toMatch(
    /^interrupted: interrupted by SIGINT before the first step; nothing was measured$/m,
  );
  expect(fs.existsSync(path.join(outDir, runId))).toBe(false);
}

describe('proxylab local interrupted before the first step', () => {
  test.concurrent(
    'exits 130, does not claim kept steps, and leaves no run directory',
    async () => {
      // GIVEN a run still starting its servers (initdb)
      const runId = 'run-early';
      const run = spawnCli(RUN_TO_INTERRUPT.args(outDir, runId, { ...SHORT, initdb: true }));
      await run.waitForStdout(/Starting PostgreSQL/, 30_000);

      // WHEN Ctrl-C arrives
      run.child.kill('SIGINT');
      const code = await run.exit;

      // THEN
      expectNothingMeasured(run, code, runId);
      const stack = parseStackLine(run.stdout());
      if (stack) await assertStackGone(stack);
    },
    60_000,
  );
});

describe('proxylab local interrupted while loading data (pgbench -i), before the first step', () => {
  test.concurrent(
    'exits 130, says nothing was measured, and leaves no run directory',
    async () => {
      // GIVEN a run whose servers are up and whose data load has started (the init-data event's line)
      const runId = 'run-during-init';
      const run = spawnCli(RUN_TO_INTERRUPT.args(outDir, runId, SHORT));
      await run.waitForStdout(/loading pgbench data, scale 1 \(pgbench -i on direct\)/, 60_000);
      const stack = parseStackLine(run.stdout());
      expect(stack).not.toBeNull();

      // WHEN Ctrl-C arrives
      run.child.kill('SIGINT');
      const code = await run.exit;

      // THEN the same as an interrupt during initdb: 130, nothing kept, no run directory
      expectNothingMeasured(run, code, runId);
      expect(run.stdout()).not.toMatch(RUN_TO_INTERRUPT.started(1));
      await assertStackGone(stack!);

      // AND the same run id later starts afresh (no half-made run to resume)
      const again = spawnCli(RUN_TO_INTERRUPT.args(outDir, runId, SHORT));
      expect(await exitedAs(again, 0)).toEqual({ code: 0 });
      expect(again.stdout()).not.toMatch(/Resuming run /);
    },
    150_000,
  );
});
