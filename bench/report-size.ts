/**
 * Report size and build time for a `quick`-sized run (issue: < 1 MB and < 5 s).
 *
 *   npx tsx bench/report-size.ts [RUN_DIR] [--runs 5] [--json]
 *
 * Without RUN_DIR it makes a REAL quick run first (`proxylab local --suite quick`, ≈ 3 min) in a
 * temporary directory. It then measures, per repetition:
 *   - in-process: writeReport(dir) wall time (load + shape + render + write; echarts loaded once);
 *   - cold CLI: `node scripts/proxylab.js report DIR` end to end (process start, tsx, echarts load),
 *     which is what a user waits for;
 * and prints report.html's size in bytes. Wall times depend on what else the machine runs, so CPU
 * time (user + system) is printed beside them, and the load average.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { loadRun, writeReport } from '../lib/report';
import { orderStats } from '../lib/core/stats';

const REPO_ROOT = resolve(__dirname, '..');
const CLI = join(REPO_ROOT, 'scripts', 'proxylab.js');

interface Flags {
  runs: string;
  json?: boolean;
}

function median(values: readonly number[]): number {
  return orderStats(values)?.median ?? NaN;
}

function main(): void {
  const program = new Command()
    .argument('[runDir]', 'a run directory; default: make a real quick run first')
    .option('--runs <n>', 'repetitions of each measurement', '5')
    .option('--json', 'print one JSON object')
    .parse(process.argv);
  const flags = program.opts<Flags>();
  const runs = Number(flags.runs);
  let runDir = program.args[0] ? resolve(program.args[0]) : null;
  const work = mkdtempSync(join(tmpdir(), 'report-size-'));
  try {
    if (!runDir) {
      process.stderr.write('making a real quick run (proxylab local --suite quick)…\n');
      execFileSync(
        process.execPath,
        [
          CLI,
          'local',
          '--suite',
          'quick',
          '--out',
          join(work, 'runs'),
          '--run-id',
          'quick-bench',
          '--no-install',
        ],
        {
          cwd: REPO_ROOT,
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
      runDir = join(work, 'runs', 'quick-bench');
    }
    const inProcessMs: number[] = [];
    const inProcessCpuMs: number[] = [];
    let bytes = 0;
    for (let i = 0; i < runs; i++) {
      const cpu0 = process.cpuUsage();
      const r = writeReport(runDir, { outDir: join(work, 'out') });
      const cpu = process.cpuUsage(cpu0);
      inProcessMs.push(r.ms);
      inProcessCpuMs.push((cpu.user + cpu.system) / 1000);
      bytes = r.bytes;
    }
    const cliMs: number[] = [];
    const cliCpuMs: number[] = [];
    const timeBin = '/usr/bin/time';
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      if (existsSync(timeBin)) {
        // GNU time prints user and system seconds of the child on stderr.
        const res = spawnSync(
          timeBin,
          ['-f', 'CPU %U %S', process.execPath, CLI, 'report', runDir, '--out', join(work, 'cli')],
          { cwd: REPO_ROOT, encoding: 'utf8' },
        );
        if (res.status !== 0) throw new Error(`proxylab report failed: ${res.stderr}`);
        const m = /CPU ([\d.]+) ([\d.]+)/.exec(res.stderr);
        if (m) cliCpuMs.push((Number(m[1]) + Number(m[2])) * 1000);
      } else {
        execFileSync(process.execPath, [CLI, 'report', runDir, '--out', join(work, 'cli')], {
          cwd: REPO_ROOT,
          stdio: 'ignore',
        });
      }
      cliMs.push(performance.now() - t0);
    }
    const result = {
      runDir,
      steps: loadRun(runDir).steps.length,
      reportBytes: bytes,
      reportKiB: Math.round(bytes / 102.4) / 10,
      inProcessMs: {
        median: Math.round(median(inProcessMs)),
        max: Math.round(Math.max(...inProcessMs)),
        first: Math.round(inProcessMs[0] ?? NaN),
      },
      inProcessCpuMs: { median: Math.round(median(inProcessCpuMs)) },
      cliMs: { median: Math.round(median(cliMs)), max: Math.round(Math.max(...cliMs)) },
      cliCpuMs: cliCpuMs.length > 0 ? { median: Math.round(median(cliCpuMs)) } : null,
      loadAverage1m: Math.round((loadavg()[0] ?? NaN) * 10) / 10,
      cpus: os.cpus().length,
      limits: { bytes: 1_000_000, ms: 5000 },
    };
    if (flags.json) {
      process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    } else {
      process.stdout.write(`run directory: ${runDir} (${result.steps} steps)\n`);
      process.stdout.write(`report.html: ${bytes} bytes (${result.reportKiB} KiB; limit 1 MB)\n`);
      process.stdout.write(
        `build, in process (writeReport): median ${result.inProcessMs.median} ms wall (${result.inProcessCpuMs.median} ms CPU), max ${result.inProcessMs.max} ms, first ${result.inProcessMs.first} ms over ${runs}\n`,
      );
      process.stdout.write(
        `build, cold CLI (proxylab report): median ${result.cliMs.median} ms wall${result.cliCpuMs ? ` (${result.cliCpuMs.median} ms CPU)` : ''}, max ${result.cliMs.max} ms over ${runs} (limit 5 s)\n`,
      );
      process.stdout.write(
        `machine: ${result.cpus} CPUs, load average ${result.loadAverage1m} (wall times grow with it)\n`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main();
