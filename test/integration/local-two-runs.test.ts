/**
 * Two `proxylab local` on one run directory never write into the same run, end to end against real
 * PostgreSQL and PgBouncer through the real CLI: the same --run-id is refused while the first holds
 * it, and two default run ids started together make two intact runs. (Split from
 * local-infra-failure.test.ts so its timed kill tests run without these beside them.) Each test
 * starts its own stacks and waits mostly on pgbench's fixed -T: the two run side by side
 * (test.concurrent), each in its own run id or directory.
 */
import { expect } from '@jest/globals';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunManifest, StepRecord } from '../../lib/suite/types';
import { exitedAs, spawnCli } from '../helpers/local-stack';
import { scratchDir } from '../helpers/scratch';

const outDir = scratchDir('proxylab-two-runs-');
let attempt = 0;

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}

function allSteps(runDir: string): StepRecord[] {
  return fs
    .readdirSync(path.join(runDir, 'steps'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => readJson<StepRecord>(path.join(runDir, 'steps', f)));
}

describe('two proxylab local on one --out', () => {
  test.concurrent(
    'the same --run-id: the second is refused naming the holder, the first completes intact',
    async () => {
      const runId = `twice-${++attempt}`;
      const args = ['local', '--suite', 'smoke', '--out', outDir, '--run-id', runId, '--no-install'];
      const first = spawnCli(args);
      await first.waitForStdout(/> \[1\/8\]/, 60_000);
      const second = spawnCli(args);
      expect(await exitedAs(second, 2)).toEqual({ code: 2 });
      expect(second.stderr()).toMatch(
        new RegExp(
          `run ${runId} is already being written: it is held by pid ${first.child.pid} on \\S+ since`,
        ),
      );
      expect(second.stdout()).not.toMatch(/Starting PostgreSQL|Resuming/);
      expect(await exitedAs(first, 0)).toEqual({ code: 0 });
      const m = readJson<RunManifest>(path.join(outDir, runId, 'manifest.json'));
      expect(m.status).toBe('completed');
      expect(m.stepsCompleted).toBe(8);
    },
    150_000,
  );

  test.concurrent(
    'default run ids, started together: two runs intact in two directories',
    async () => {
      // A directory per attempt: a retry must not count the first attempt's runs.
      const out = path.join(outDir, `defaults-${++attempt}`);
      const args = ['local', '--suite', 'smoke', '--out', out, '--no-install'];
      const [a, b] = [spawnCli(args), spawnCli(args)];
      expect(await Promise.all([exitedAs(a, 0), exitedAs(b, 0)])).toEqual([{ code: 0 }, { code: 0 }]);
      const runs = fs.readdirSync(out).sort();
      expect(runs).toHaveLength(2);
      for (const id of runs) {
        expect(id).toMatch(/^local-\d{8}-\d{6}-[0-9a-f]{4}$/);
        const m = readJson<RunManifest>(path.join(out, id, 'manifest.json'));
        expect(m).toMatchObject({ runId: id, status: 'completed', stepsCompleted: 8 });
        expect(allSteps(path.join(out, id))).toHaveLength(8);
        expect(fs.existsSync(path.join(out, id, 'metrics', 'local.json'))).toBe(true);
      }
    },
    240_000,
  );
});
