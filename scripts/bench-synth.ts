/**
 * Times `cdk synth` of every lab the way a user runs it:
 *   npx cdk synth -q -c lab=labs/NAME.json -o <tmp>/NAME
 * one after the other, and prints seconds per lab and the total (aim: < 30 s on 2 cores).
 *
 *   npx tsx scripts/bench-synth.ts [--lint] [--keep] [labs/x.json ...]
 *
 * --lint  also runs cfn-lint on each synthesized template (not timed) and fails on any output.
 * --keep  keep the output directories and print where they are.
 * Exit code: 0 all synthesized (and lint-clean with --lint), 1 otherwise.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..');

interface LabTiming {
  readonly lab: string;
  readonly durationSec: number;
  /** user + sys CPU seconds of the synth and its children; null when not measurable. */
  readonly cpuSec: number | null;
  readonly ok: boolean;
  readonly lint: string | null;
}

function main(argv: string[]): number {
  const lint = argv.includes('--lint');
  const keep = argv.includes('--keep');
  const explicit = argv.filter((a) => !a.startsWith('--'));
  const labs =
    explicit.length > 0
      ? explicit
      : readdirSync(path.join(ROOT, 'labs'))
          .filter((f) => f.endsWith('.json'))
          .sort()
          .map((f) => path.join('labs', f));
  const outRoot = mkdtempSync(path.join(tmpdir(), 'proxylab-synth-'));
  const results: LabTiming[] = [];
  const loadBefore = loadavg()[0] ?? 0;
  const started = process.hrtime.bigint();
  for (const lab of labs) {
    const name = path.basename(lab, '.json');
    const outdir = path.join(outRoot, name);
    const t0 = process.hrtime.bigint();
    // bash's `time -p` adds the CPU seconds of npx, the cdk CLI and the app (children included):
    // a figure that, unlike wall time, does not stretch when other work shares the cores.
    const run = spawnSync(
      'bash',
      ['-c', 'time -p npx cdk synth -q -c "lab=$1" -o "$2"', 'synth', lab, outdir],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    );
    const durationSec = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpuSec = ['user', 'sys']
      .map((k) => Number(new RegExp(`^${k} ([0-9.]+)$`, 'm').exec(run.stderr)?.[1] ?? NaN))
      .reduce((a, b) => a + b, 0);
    const ok = run.status === 0;
    if (!ok) process.stderr.write(`--- ${lab} failed (exit ${run.status}):\n${run.stderr}\n`);
    let lintOut: string | null = null;
    if (lint && ok) {
      const templates = readdirSync(outdir)
        .filter((f) => f.endsWith('.template.json'))
        .map((f) => path.join(outdir, f));
      const res = spawnSync('cfn-lint', templates, { encoding: 'utf8' });
      lintOut = `${res.stdout}${res.stderr}`.trim();
    }
    results.push({ lab, durationSec, cpuSec: Number.isNaN(cpuSec) ? null : cpuSec, ok, lint: lintOut });
    process.stdout.write(
      `${lab.padEnd(40)} ${durationSec.toFixed(1).padStart(6)} s  (cpu ${Number.isNaN(cpuSec) ? '?' : cpuSec.toFixed(1)} s)  ${ok ? 'ok' : 'FAILED'}` +
        (lint && ok ? `  cfn-lint: ${lintOut === '' ? 'clean' : 'FINDINGS'}` : '') +
        '\n',
    );
    if (lintOut) process.stdout.write(`${lintOut}\n`);
  }
  const totalSec = Number(process.hrtime.bigint() - started) / 1e9;
  const synthSec = results.reduce((s, r) => s + r.durationSec, 0);
  const cpuKnown = results.every((r) => r.cpuSec !== null);
  const cpuTotal = results.reduce((s, r) => s + (r.cpuSec ?? 0), 0);
  process.stdout.write(
    `${'total synth'.padEnd(40)} ${synthSec.toFixed(1).padStart(6)} s  (cpu ${cpuKnown ? cpuTotal.toFixed(1) : '?'} s; ${results.length} labs, wall incl. lint ${totalSec.toFixed(1)} s)\n`,
  );
  // Other work on the machine stretches wall time: print the load so the figure can be judged.
  process.stdout.write(
    `machine: ${cpus().length} cores, 1-min load average ${loadBefore.toFixed(1)} before, ${(loadavg()[0] ?? 0).toFixed(1)} after\n`,
  );
  if (keep) process.stdout.write(`outputs kept in ${outRoot}\n`);
  else rmSync(outRoot, { recursive: true, force: true });
  const failed = results.some((r) => !r.ok || (r.lint !== null && r.lint !== ''));
  return failed ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
