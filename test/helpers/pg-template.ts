/**
 * A template data directory for the tests' throwaway PostgreSQL clusters (CONTRIBUTING.md "Test
 * time"): `initdb` runs once per machine, PostgreSQL version and initdb arguments, into
 * node_modules/.cache/proxylab-test/, and each stack copies it (`cp -a`) instead of running initdb
 * — about half the CPU of an initdb and a second or two less per stack. The copy is the same
 * cluster initdb would make (same binaries, same arguments: lib/local/postgres.ts INITDB_ARGS); a
 * server started from it is as real as any.
 *
 *   startLocalStack() (test/helpers/local-stack.ts) and RUN_TO_INTERRUPT use it;
 *   `proxylab local --test-pgdata-template DIR` (hidden) is how a CLI run gets it.
 *
 * Tests of the initdb path itself start stacks without it (local-smoke's smoke runs, the
 * interrupt during initdb in local-signals, local-stack.test.ts's own stack).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveRunAs } from '../../lib/exec/process';
import { findBinaries } from '../../lib/local/binaries';
import { dataTemplateProblem, INITDB_ARGS } from '../../lib/local/postgres';
import { REPO_ROOT } from './cli';

const CACHE_DIR = path.join(REPO_ROOT, 'node_modules', '.cache', 'proxylab-test');

let made: string | null = null;

/**
 * The template's path, made now if this machine has none for this PostgreSQL yet. Safe when
 * several test files (jest workers) ask at once: each makes its own and renames it into place; the
 * first rename wins, the others remove theirs.
 */
export function pgdataTemplate(): string {
  if (made !== null) return made;
  const bins = findBinaries({ install: false });
  const key = createHash('sha256')
    .update(JSON.stringify([bins.initdb, bins.serverVersion, INITDB_ARGS]))
    .digest('hex')
    .slice(0, 16);
  const dir = path.join(CACHE_DIR, `pgdata-${bins.serverVersion}-${key}`);
  if (dataTemplateProblem(dir, bins.serverVersion) !== null) {
    // every directory on the way must be reachable by the server's OS user, who copies it
    fs.mkdirSync(CACHE_DIR, { recursive: true, mode: 0o755 });
    const work = fs.mkdtempSync(path.join(CACHE_DIR, 'making-'));
    fs.chmodSync(work, 0o755);
    try {
      const runAs = resolveRunAs();
      if (runAs) fs.chownSync(work, runAs.uid, runAs.gid);
      const data = path.join(work, 'data');
      const res = spawnSync(bins.initdb, ['-D', data, ...INITDB_ARGS], {
        cwd: work,
        encoding: 'utf8',
        timeout: 120_000,
        ...(runAs ? { uid: runAs.uid, gid: runAs.gid, env: { ...process.env, HOME: runAs.home } } : {}),
      });
      if (res.status !== 0)
        throw new Error(`initdb for the test data directory template failed: ${res.stderr || res.stdout}`);
      try {
        fs.renameSync(data, dir);
      } catch (e) {
        // another worker was first: use its template
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
      }
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
    const problem = dataTemplateProblem(dir, bins.serverVersion);
    if (problem !== null) throw new Error(`test data directory template: ${problem}`);
  }
  made = dir;
  return dir;
}
