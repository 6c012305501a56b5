/**
 * Harness overhead: TPS of one step run by proxylab (engine + local executor + metrics sampler +
 * database sampler, exactly what `proxylab local` does) vs the same pgbench argv spawned raw, on the same throwaway
 * server, alternated in pairs (order flipped every pair so drift cancels). Prints each pair, the
 * ratio proxylab / raw, and optionally the `quick` suite's wall time through the real CLI.
 *
 *   npx tsx bench/harness-overhead.ts [--pairs 5] [--duration 10] [--clients 10] [--jobs 2]
 *        [--target direct|pgbouncer-transaction] [--no-sampler] [--no-db-sampler] [--quick-wall] [--json]
 *
 * Aim: ratio within 3 % of 1.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command } from 'commander';
import { systemClock } from '../lib/engine/ports';
import { runSuite } from '../lib/engine/run-suite';
import { FileSystemSink } from '../lib/local/fs-sink';
import { startLocalStack, type LocalStack } from '../lib/local/stack';
import { buildPgbenchArgv, buildPgbenchEnv, buildPgbenchInitArgv } from '../lib/suite/argv';
import type { Scenario, Suite } from '../lib/suite/catalog';
import { expandSuite } from '../lib/suite/expand';
import { parsePgbench } from '../lib/suite/parser';
import type { TargetKind } from '../lib/suite/types';

interface Flags {
  pairs: string;
  duration: string;
  clients: string;
  jobs: string;
  target: string;
  sampler: boolean;
  dbSampler: boolean;
  quickWall?: boolean;
  json?: boolean;
}

interface Pair {
  readonly pair: number;
  readonly order: 'proxylab-first' | 'raw-first';
  readonly proxylabTps: number;
  readonly rawTps: number;
  readonly ratio: number;
}

const REPO = path.resolve(__dirname, '..');

function benchSuite(kind: TargetKind, clients: number, jobs: number, durationSec: number): Suite {
  const scenario: Scenario = {
    name: 'overhead',
    experiment: 'E2',
    title: 'harness overhead probe',
    finding: 'none: a measurement of the harness itself',
    script: { parts: [{ builtin: 'select-only' }] },
    protocols: ['simple'],
    connects: ['persistent'],
    clients: [clients],
    jobs,
    durationSec,
    scale: 1,
    initFlags: [],
    repetitions: 1,
    // the local stack's direct target, or its PgBouncer transaction pool
    targets: [kind === 'direct' ? { pooled: false } : { pooled: true, multiplexes: true }],
    expectations: [{ when: {}, outcome: 'succeeds' }],
  };
  return { name: 'overhead', description: 'harness overhead probe', scenarios: [scenario] };
}

function spawnRaw(
  file: string,
  argv: readonly string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ stdout: string; stderr: string; exitCode: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, [...argv], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ stdout, stderr, exitCode }));
  });
}

async function runViaProxylab(
  stack: LocalStack,
  suite: Suite,
  runRoot: string,
  i: number,
  withSampler: boolean,
  withDbSampler: boolean,
): Promise<number> {
  const capacities = stack.targets.map((t) => ({
    ref: t.ref,
    maxConnections: stack.postgres.maxConnections,
    poolSize: t.ref.kind === 'direct' ? null : stack.pgbouncer.poolSize(),
  }));
  const steps = expandSuite(suite, capacities);
  const runId = `overhead-${i}`;
  const result = await runSuite({
    runId,
    suite,
    steps,
    targets: stack.targets,
    executor: stack.executor,
    pool: stack.pool,
    sink: new FileSystemSink(path.join(runRoot, runId)),
    sampler: withSampler ? stack.createSampler() : undefined,
    // The database sampler (pg_stat_activity + pg_locks once a second, issue 40), as proxylab local runs it.
    ...(withDbSampler ? { serverConnections: stack.serverConnections } : {}),
    clock: systemClock,
    mode: 'local',
    environment: stack.environment,
    settings: {},
    initData: false,
  });
  const tps = result.records[0]?.result?.tps ?? null;
  if (tps === null || result.manifest.status !== 'completed')
    throw new Error(
      `proxylab run ${runId} gave no tps (${result.manifest.status}: ${result.manifest.error ?? ''})`,
    );
  return tps;
}

async function runRaw(stack: LocalStack, suite: Suite, workRoot: string, i: number): Promise<number> {
  const steps = expandSuite(
    suite,
    stack.targets.map((t) => ({
      ref: t.ref,
      maxConnections: stack.postgres.maxConnections,
      poolSize: t.ref.kind === 'direct' ? null : stack.pgbouncer.poolSize(),
    })),
  );
  const [step] = steps;
  if (step === undefined) throw new Error('the overhead suite planned no step');
  const target = stack.target(step.target.kind);
  const conn = target.connection();
  const dir = path.join(workRoot, `raw-${i}`);
  fs.mkdirSync(dir, { recursive: true });
  // The pool reset the engine does before a step, so both sides start from the same pool state.
  await stack.pool.reset(target.ref);
  const argv = buildPgbenchArgv(step, conn, {
    logPrefix: `${dir}/pgbench_log`,
    scriptDir: dir,
    pgbenchMajor: Number(stack.bins.pgbenchVersion.split('.')[0]),
  });
  const out = await spawnRaw(stack.bins.pgbench, argv, buildPgbenchEnv(conn), dir);
  const parsed = parsePgbench({ stdout: out.stdout, stderr: out.stderr, exitCode: out.exitCode });
  if (parsed.tps === null || !parsed.complete)
    throw new Error(`raw pgbench ${i} gave no tps: ${out.stderr.slice(-300)}`);
  return parsed.tps;
}

async function quickWallSec(): Promise<{ wallSec: number; exitCode: number | null }> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-quick-wall-'));
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [path.join(REPO, 'scripts', 'proxylab.js'), 'local', '--suite', 'quick', '--out', out, '--no-install'],
    { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
  fs.rmSync(out, { recursive: true, force: true });
  return { wallSec: (Date.now() - started) / 1000, exitCode };
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  const upper = s[m];
  const lower = s[m - 1];
  if (upper === undefined) return NaN; // no samples: no median
  return s.length % 2 || lower === undefined ? upper : (lower + upper) / 2;
}

async function main(): Promise<void> {
  const program = new Command()
    .name('harness-overhead')
    .option('--pairs <n>', 'alternated proxylab/raw pairs', '5')
    .option('--duration <sec>', 'pgbench -T per run', '10')
    .option('--clients <n>', 'pgbench -c', '10')
    .option('--jobs <n>', 'pgbench -j', '2')
    .option('--target <kind>', 'direct or pgbouncer-transaction', 'direct')
    .option('--no-sampler', 'run proxylab without the metrics sampler (isolates engine + executor)')
    .option(
      '--no-db-sampler',
      'run proxylab without the database sampler (pg_stat_activity / pg_locks each second)',
    )
    .option('--quick-wall', 'also time `proxylab local --suite quick` end to end')
    .option('--json', 'print JSON')
    .parse(process.argv);
  const f = program.opts<Flags>();
  const pairs = Number(f.pairs);
  const duration = Number(f.duration);
  const clients = Number(f.clients);
  const jobs = Number(f.jobs);
  if (![pairs, duration, clients, jobs].every((n) => Number.isInteger(n) && n >= 1))
    throw new Error('--pairs, --duration, --clients, --jobs must be integers ≥ 1');
  if (f.target !== 'direct' && f.target !== 'pgbouncer-transaction')
    throw new Error('--target must be direct or pgbouncer-transaction');

  const suite = benchSuite(f.target, clients, jobs, duration);
  const stack = await startLocalStack({ install: false });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-overhead-'));
  const results: Pair[] = [];
  try {
    const direct = stack.target('direct').connection();
    const init = await spawnRaw(
      stack.bins.pgbench,
      buildPgbenchInitArgv(1, [], direct),
      buildPgbenchEnv(direct),
      root,
    );
    if (init.exitCode !== 0) throw new Error(`pgbench -i failed: ${init.stderr}`);
    // One unrecorded warm-up so caches are equally warm for the first pair.
    await runRaw(stack, benchSuite(f.target, clients, jobs, Math.min(3, duration)), root, 0);
    for (let i = 1; i <= pairs; i++) {
      const proxylabFirst = i % 2 === 1;
      let proxylabTps: number;
      let rawTps: number;
      if (proxylabFirst) {
        proxylabTps = await runViaProxylab(stack, suite, root, i, f.sampler, f.dbSampler);
        rawTps = await runRaw(stack, suite, root, i);
      } else {
        rawTps = await runRaw(stack, suite, root, i);
        proxylabTps = await runViaProxylab(stack, suite, root, i, f.sampler, f.dbSampler);
      }
      const pair: Pair = {
        pair: i,
        order: proxylabFirst ? 'proxylab-first' : 'raw-first',
        proxylabTps,
        rawTps,
        ratio: proxylabTps / rawTps,
      };
      results.push(pair);
      if (!f.json)
        console.log(
          `pair ${i} (${pair.order}): proxylab ${proxylabTps.toFixed(1)} tps, raw ${rawTps.toFixed(1)} tps, ratio ${pair.ratio.toFixed(4)}`,
        );
    }
  } finally {
    await stack.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
  const ratioOfMeans = mean(results.map((r) => r.proxylabTps)) / mean(results.map((r) => r.rawTps));
  const medianRatio = median(results.map((r) => r.ratio));
  const summary = {
    target: f.target,
    clients,
    jobs,
    durationSec: duration,
    pairs,
    sampler: f.sampler,
    dbSampler: f.dbSampler,
    ratioOfMeans: Math.round(ratioOfMeans * 10000) / 10000,
    medianRatio: Math.round(medianRatio * 10000) / 10000,
    withinThreePercent: Math.abs(ratioOfMeans - 1) <= 0.03,
    /** 1-minute load average at the end: other work on the machine makes single pairs swing. */
    loadAverage1m: Math.round((os.loadavg()[0] ?? NaN) * 100) / 100,
    cpus: os.cpus().length,
    results,
    quickWall: f.quickWall ? await quickWallSec() : null,
  };
  if (f.json) console.log(JSON.stringify(summary, null, 2));
  else {
    console.log(
      `proxylab/raw: ratio of means ${summary.ratioOfMeans.toFixed(4)}, median ratio ${summary.medianRatio.toFixed(4)} ` +
        `(${summary.withinThreePercent ? 'within' : 'NOT within'} 3 %) — ${f.target}, -S -c ${clients} -j ${jobs} -T ${duration}, ${pairs} pairs, sampler ${f.sampler ? 'on' : 'off'}, database sampler ${f.dbSampler ? 'on' : 'off'}; ` +
        `load average ${summary.loadAverage1m} on ${summary.cpus} CPUs`,
    );
    if (summary.quickWall)
      console.log(
        `quick suite wall time (proxylab local --suite quick, incl. start/stop): ${summary.quickWall.wallSec.toFixed(1)} s, exit ${summary.quickWall.exitCode}`,
      );
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
