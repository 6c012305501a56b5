/**
 * What the database sampler (issue 40: pg_stat_activity + pg_locks once a second, on the superuser
 * session that counts server connections, lib/exec/server-connections.ts) costs pgbench. On one
 * throwaway PostgreSQL, the same raw pgbench command runs alternately alone and with the stack's
 * sampler watching it exactly as the engine watches a step (order flipped every pair so drift
 * cancels); prints each pair and the ratio sampled / alone. Beside it, the sampler statement's own
 * time (client round trip, timed separately while pgbench runs): its share of one core at one
 * sample a second is that time ÷ 1000 ms.
 *
 *   npx tsx bench/db-sampler-cost.ts [--pairs 5] [--duration 10] [--clients 10] [--jobs 2] [--json]
 *
 * Aim: ratio within 3 % of 1 (bench/README.md).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command } from 'commander';
import { Client } from 'pg';
import { DB_ACTIVITY_SQL } from '../lib/exec/db-activity-sql';
import { BENCH_DB } from '../lib/local/postgres';
import { startLocalStack, type LocalStack } from '../lib/local/stack';
import { buildPgbenchEnv, buildPgbenchInitArgv } from '../lib/suite/argv';
import { parsePgbench } from '../lib/suite/parser';

interface Flags {
  pairs: string;
  duration: string;
  clients: string;
  jobs: string;
  json?: boolean;
}

/** pgbench's tps (0 for `pgbench -i`, `init`, which prints none). */
function runPgbench(stack: LocalStack, argv: readonly string[], cwd: string, init = false): Promise<number> {
  const conn = stack.target('direct').connection();
  return new Promise((resolve, reject) => {
    const child = spawn(stack.bins.pgbench, [...argv], {
      cwd,
      env: { ...process.env, ...buildPgbenchEnv(conn) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (exitCode) => {
      if (init) return exitCode === 0 ? resolve(0) : reject(new Error(`pgbench -i failed: ${stderr}`));
      const parsed = parsePgbench({ stdout, stderr, exitCode });
      if (parsed.tps === null || !parsed.complete)
        reject(new Error(`pgbench gave no tps: ${stderr.slice(-300)}`));
      else resolve(parsed.tps);
    });
  });
}

/** pgbench with the stack's sampler watching, as the engine watches a step. */
async function sampled(stack: LocalStack, argv: readonly string[], cwd: string): Promise<number> {
  const watch = await stack.serverConnections.watch();
  try {
    return await runPgbench(stack, argv, cwd);
  } finally {
    await watch.stop();
  }
}

/** The sampler statement's round trip, timed every 100 ms on its own session while pgbench runs. */
async function statementMs(stack: LocalStack, argv: readonly string[], cwd: string): Promise<number[]> {
  const su = stack.postgres.superuserTarget(BENCH_DB);
  const client = new Client({ host: su.host, port: su.port, user: su.user, database: su.dbname });
  await client.connect();
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = process.hrtime.bigint();
      await client.query(DB_ACTIVITY_SQL);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    await runPgbench(stack, argv, cwd);
  } finally {
    running = false;
    await loop;
    await client.end();
  }
  return times;
}

const mean = (v: readonly number[]): number => v.reduce((a, b) => a + b, 0) / v.length;
function median(v: readonly number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

async function main(): Promise<void> {
  const f = new Command()
    .option('--pairs <n>', 'alternated sampled/alone pairs', '5')
    .option('--duration <sec>', 'pgbench -T per run', '10')
    .option('--clients <n>', 'pgbench -c', '10')
    .option('--jobs <n>', 'pgbench -j', '2')
    .option('--json', 'print JSON')
    .parse(process.argv)
    .opts<Flags>();
  const [pairs, duration, clients, jobs] = [f.pairs, f.duration, f.clients, f.jobs].map(Number) as [
    number,
    number,
    number,
    number,
  ];
  if (![pairs, duration, clients, jobs].every((n) => Number.isInteger(n) && n >= 1))
    throw new Error('--pairs, --duration, --clients, --jobs must be integers ≥ 1');
  const stack = await startLocalStack({ install: false });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-db-sampler-'));
  const conn = stack.target('direct').connection();
  const argv = ['-h', conn.host, '-p', String(conn.port), '-U', conn.user, '-S', '-M', 'simple'];
  const run = [...argv, '-c', String(clients), '-j', String(jobs), '-T', String(duration), conn.dbname];
  const results: Array<{ pair: number; sampledTps: number; aloneTps: number; ratio: number }> = [];
  let times: readonly number[];
  try {
    await runPgbench(stack, [...buildPgbenchInitArgv(1, [], conn)], root, true);
    await runPgbench(
      stack,
      [...argv, '-c', String(clients), '-j', String(jobs), '-T', '2', conn.dbname],
      root,
    );
    for (let i = 1; i <= pairs; i++) {
      const sampledFirst = i % 2 === 1;
      const first = await (sampledFirst ? sampled(stack, run, root) : runPgbench(stack, run, root));
      const second = await (sampledFirst ? runPgbench(stack, run, root) : sampled(stack, run, root));
      const [sampledTps, aloneTps] = sampledFirst ? [first, second] : [second, first];
      results.push({ pair: i, sampledTps, aloneTps, ratio: sampledTps / aloneTps });
      if (!f.json)
        console.log(
          `pair ${i} (${sampledFirst ? 'sampled-first' : 'alone-first'}): sampled ${sampledTps.toFixed(1)} tps, alone ${aloneTps.toFixed(1)} tps, ratio ${(sampledTps / aloneTps).toFixed(4)}`,
        );
    }
    times = await statementMs(stack, run, root);
  } finally {
    await stack.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
  const summary = {
    clients,
    jobs,
    durationSec: duration,
    pairs,
    ratioOfMeans:
      Math.round((mean(results.map((r) => r.sampledTps)) / mean(results.map((r) => r.aloneTps))) * 1e4) / 1e4,
    medianRatio: Math.round(median(results.map((r) => r.ratio)) * 1e4) / 1e4,
    statementMsMedian: Math.round(median(times) * 100) / 100,
    statementMsP95:
      Math.round(([...times].sort((a, b) => a - b)[Math.floor(times.length * 0.95)] ?? NaN) * 100) / 100,
    statementSamples: times.length,
    loadAverage1m: Math.round((os.loadavg()[0] ?? 0) * 100) / 100,
    cpus: os.cpus().length,
  };
  if (f.json) console.log(JSON.stringify({ pairs: results, summary }, null, 2));
  else
    console.log(
      `sampled/alone: ratio of means ${summary.ratioOfMeans}, median ratio ${summary.medianRatio} — direct, -S -c ${clients} -j ${jobs} -T ${duration}, ${pairs} pairs; ` +
        `sampler statement ${summary.statementMsMedian} ms median (p95 ${summary.statementMsP95} ms, ${summary.statementSamples} timed under load) = ` +
        `${((summary.statementMsMedian / 1000) * 100).toFixed(3)} % of one core at 1 sample/s; load average ${summary.loadAverage1m} on ${summary.cpus} CPUs`,
    );
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
