/**
 * Shared test helpers for anything that needs a real PostgreSQL + PgBouncer (local, report and
 * cloud-adapter tests): a throwaway stack from lib/local, the proxylab CLI as a child process, and
 * checks that servers are really gone. Stop what you start (afterAll).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isPortFree } from '../../lib/local/ports-free';
import { runCommand, type RunAs, type RunResult } from '../../lib/exec/process';
import { CLI, REPO_ROOT } from './cli';
import { pgdataTemplate } from './pg-template';
import {
  startLocalStack as startStack,
  type LocalStack,
  type LocalStackOptions,
} from '../../lib/local/stack';

export type { LocalStack } from '../../lib/local/stack';

export { CLI, REPO_ROOT } from './cli';

/**
 * A throwaway PostgreSQL (max_connections 40 by default, non-superuser role `bench`, db `bench`)
 * and PgBouncer (db `bench` transaction pool, `bench_session` session pool, pools of 25 %).
 * Never installs packages. Call `stack.stop()` in afterAll. The cluster is a copy of the tests'
 * data directory template (./pg-template.ts), not a fresh initdb, unless `initdb: true`.
 */
export function startLocalStack(
  opts: Pick<
    LocalStackOptions,
    'maxConnections' | 'poolPercent' | 'superuserReservedConnections' | 'poolers'
  > & {
    readonly initdb?: boolean;
  } = {},
): Promise<LocalStack> {
  const { initdb, ...rest } = opts;
  return startStack({ ...rest, install: false, dataTemplate: initdb ? null : pgdataTemplate() });
}

export interface CliRun {
  readonly child: ChildProcess;
  /** Everything printed so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when stdout matches. */
  waitForStdout(pattern: RegExp, timeoutMs: number): Promise<void>;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exit: Promise<number | null>;
}

/** Start `node scripts/proxylab.js ARGS` from the repo root, without a TTY (plain progress lines). */
export function spawnCli(args: readonly string[], env: Readonly<Record<string, string>> = {}): CliRun {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  child.stdout?.on('data', (b: Buffer) => {
    out += b.toString('utf8');
    for (const w of [...waiters]) w();
  });
  child.stderr?.on('data', (b: Buffer) => {
    err += b.toString('utf8');
  });
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    waitForStdout: (pattern, timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(
              `stdout did not match ${pattern} within ${timeoutMs} ms; got:\n${out}\nstderr:\n${err}`,
            ),
          );
        }, timeoutMs);
        const check = (): void => {
          if (pattern.test(out)) {
            done();
            resolve();
          }
        };
        const done = (): void => {
          clearTimeout(timer);
          const i = waiters.indexOf(check);
          if (i >= 0) waiters.splice(i, 1);
        };
        waiters.push(check);
        void exit.then(() => {
          if (!pattern.test(out)) {
            done();
            reject(
              new Error(`proxylab exited before stdout matched ${pattern}; got:\n${out}\nstderr:\n${err}`),
            );
          }
        });
        check();
      }),
  };
}

/**
 * A `proxylab local` run for tests that interrupt, kill, signal, race or resume one and do not read
 * its findings (CONTRIBUTING.md "A run to interrupt"): the test-only suite `test-steps`
 * (lib/suite/test-suites.ts) through the real CLI, stack and engine — initdb, `pgbench -i` at scale
 * 1, then four `pgbench -T 3` steps of `SELECT pg_sleep(0.05)` (direct, then three through the PgBouncer transaction pool:
 * step 3 goes through PgBouncer, as smoke's does, and step 4 sees a stop that step 3 outlived). A step takes a few percent of a core where
 * a smoke step takes both. A test that reads smoke's findings runs `--suite smoke`.
 */
export const RUN_TO_INTERRUPT = {
  /** Steps in the run. */
  steps: 4,
  /**
   * The command line: `proxylab local --test-suite test-steps --out OUT [--run-id ID] --no-install
   * --no-report --test-pgdata-template DIR` — no report.html / summary.md afterwards (a second or
   * two of CPU each: the tests of the report use smoke runs), and the cluster copied from the tests'
   * data directory template (./pg-template.ts) unless `initdb: true`. `short: true` runs
   * `test-steps-short` instead: the same four steps at `-T 1` (≈ 5 s instead of ≈ 13 s), for a run
   * that only has to complete or is interrupted before a step or as one starts; a test that stops a
   * server *inside* a step's window keeps `-T 3`.
   */
  args(
    out: string,
    runId?: string,
    opts: { readonly initdb?: boolean; readonly short?: boolean } = {},
  ): string[] {
    return [
      'local',
      '--test-suite',
      opts.short ? 'test-steps-short' : 'test-steps',
      '--out',
      out,
      ...(runId === undefined ? [] : ['--run-id', runId]),
      '--no-install',
      '--no-report',
      ...(opts.initdb ? [] : ['--test-pgdata-template', pgdataTemplate()]),
    ];
  },
  /** `> [n/4] <step id>`: printed when step n starts (before its pool reset; pgbench starts after). */
  started(n: number): RegExp {
    return new RegExp(`> \\[${n}/${RUN_TO_INTERRUPT.steps}\\] (\\S+)`);
  },
  /** `✓ [n/4] <step id>  <tps> …`: printed when step n has been measured. */
  measured(n: number): RegExp {
    return new RegExp(`✓ \\[${n}/${RUN_TO_INTERRUPT.steps}\\] \\S+ +\\d`);
  },
} as const;

/** A CLI run's exit code; its output only when the code was not the expected one. */
export interface CliExit {
  readonly code: number | null;
  readonly stdout?: string;
  readonly stderr?: string;
}

/**
 * The run's exit code, with everything it printed attached when the code is not `expected`, so a
 * failing `expect(await exitedAs(run, 0)).toEqual({ code: 0 })` shows why (a broken verdict is on
 * stdout, an error on stderr) instead of only "Received: 1".
 */
export async function exitedAs(run: CliRun, expected: number | null): Promise<CliExit> {
  const code = await run.exit;
  return code === expected ? { code } : { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** What `proxylab local` printed about the stack it started (ports, temp dir). */
export interface StackLine {
  readonly postgresPort: number;
  readonly pgbouncerPort: number;
  readonly baseDir: string;
}

export function parseStackLine(stdout: string): StackLine | null {
  const m = /PostgreSQL \S+ on 127\.0\.0\.1:(\d+), PgBouncer \S+ on 127\.0\.0\.1:(\d+).*files in (\S+)/.exec(
    stdout,
  );
  const [, postgresPort, pgbouncerPort, baseDir] = m ?? [];
  if (postgresPort === undefined || pgbouncerPort === undefined || baseDir === undefined) return null;
  return { postgresPort: Number(postgresPort), pgbouncerPort: Number(pgbouncerPort), baseDir };
}

/** PIDs of processes whose command line mentions `needle` (Linux /proc). */
export function pidsMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(needle)) pids.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return pids;
}

/**
 * The server process of a stack `proxylab local` started: the postmaster from its pid file (a
 * backend that has just been forked still carries the postmaster's command line for a moment, so a
 * look at command lines can see several), PgBouncer by its command line (its `.ini`). Throws unless
 * exactly one.
 */
export function stackServerPid(baseDir: string, part: 'pg' | 'pgbouncer'): number {
  if (part === 'pg') {
    const pid = Number(
      fs.readFileSync(path.join(baseDir, 'pg', 'data', 'postmaster.pid'), 'utf8').split('\n')[0],
    );
    if (!Number.isInteger(pid) || pid <= 0)
      throw new Error(`no postmaster pid in ${baseDir}/pg/data/postmaster.pid`);
    return pid;
  }
  const pids = pidsMentioning(path.join(baseDir, part)).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('.ini');
    } catch {
      return false; // gone meanwhile
    }
  });
  if (pids.length !== 1)
    throw new Error(`expected one ${part} server under ${baseDir}, got ${pids.join(',')}`);
  return pids[0] as number;
}

/** Throws unless the stack is fully gone: no process mentions its directory, both ports are free, the directory is removed. */
export async function assertStackGone(s: StackLine): Promise<void> {
  const left = pidsMentioning(s.baseDir);
  if (left.length > 0) throw new Error(`processes still running from ${s.baseDir}: ${left.join(', ')}`);
  for (const port of [s.postgresPort, s.pgbouncerPort]) {
    if (!(await isPortFree(port))) throw new Error(`port ${port} is still in use`);
  }
  if (fs.existsSync(s.baseDir)) throw new Error(`${s.baseDir} was not removed`);
}

/**
 * `pg_ctl restart -m fast` of a stack's data directory, as an operator would (the tests that restart
 * the server under a run or under a stack): waits up to 60 s for the new server; its log goes beside
 * the data directory.
 */
export function pgCtlRestart(pgCtl: string, dataDir: string, runAs: RunAs | null): Promise<RunResult> {
  const dir = path.dirname(dataDir);
  return runCommand(
    pgCtl,
    ['restart', '-D', dataDir, '-m', 'fast', '-w', '-t', '60', '-l', path.join(dir, 'restart.log')],
    { runAs, cwd: dir, timeoutMs: 90_000 },
  );
}
