/**
 * Times `cdk synth` of every lab the way a user runs it:
 *   npx cdk synth -q -c lab=labs/NAME.json -o <tmp>/NAME
 * one after the other, and prints seconds per lab and the total (aim: < 30 s on 2 cores; one lab
 * ≤ 3 s with a warm bundle cache).
 *
 *   npx tsx scripts/bench-synth.ts [--repeat N] [--cold] [--lint] [--keep] [labs/x.json ...]
 *   npx tsx scripts/bench-synth.ts --save-templates DIR      (before a change)
 *   npx tsx scripts/bench-synth.ts --compare-templates DIR   (after it: must print "unchanged")
 *
 * --repeat N  synthesize each lab N times and print the median (wall and CPU) and the range.
 * --cold      empty the synth-time bundle cache (node_modules/.cache/proxylab/bundles) before every
 *             synth, so each one rebuilds the runner bundle and the Lambda handlers; without it the
 *             first synth fills the cache and the rest reuse it (the warm case).
 * --lint      also run cfn-lint on each synthesized template (not timed) and fail on any output.
 * --keep      keep the output directories and print where they are.
 * --save-templates DIR / --compare-templates DIR  synthesize with the clock pinned (context
 *             proxylab:now, so TTL timestamps are equal) and save, or compare byte for byte, each
 *             lab's template and assets manifest (whose hashes cover every asset's content).
 * --ignore-asset-hashes  with --compare-templates: compare with every asset hash (64 hex digits) and
 *             every user-data hash in a logical id (`userDataCausesReplacement`: 16 hex digits after the
 *             8-digit id hash) and every asset destination id masked — "the template is unchanged but for the content of code
 *             assets" (a change to code the runner bundle ships, such as lib/config, moves its hash,
 *             and so the runners' user data and logical ids, whatever it does to the stack).
 * Exit code: 0 all synthesized (and lint-clean, and unchanged), 1 otherwise.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..');
/** The synth-time bundle cache (lib/constructs/runner-bundle.ts RUNNER_BUNDLE_CACHE; not imported: this times the CLI). */
const BUNDLE_CACHE = path.join(ROOT, 'node_modules', '.cache', 'proxylab', 'bundles');
/** Any fixed instant: templates embed the TTL computed from it. */
const PINNED_NOW = '2026-01-01T00:00:00Z';

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

function optionValue(argv: readonly string[], name: string): string | null {
  const i = argv.indexOf(name);
  if (i < 0) return null;
  const v = argv[i + 1];
  if (v === undefined || v.startsWith('--')) throw new Error(`${name} needs a value (got ${v ?? 'nothing'})`);
  return v;
}

/** The files compared: each stack's template and its assets manifest. */
function comparedFiles(outdir: string): string[] {
  return readdirSync(outdir)
    .filter((f) => f.endsWith('.template.json') || f.endsWith('.assets.json'))
    .sort();
}

/** A template or assets manifest with asset hashes and user-data hashes masked (--ignore-asset-hashes). */
function maskAssetHashes(text: string): string {
  return (
    text
      .replace(/[0-9a-f]{64}/g, '<asset-hash>')
      .replace(/([A-Za-z0-9]*[0-9A-F]{8})[0-9a-f]{16}(?![0-9a-f])/g, '$1<user-data-hash>')
      // the assets manifest's destination ids: `<account>-<region>-<8 hex of the object key>`
      .replace(/(current_account-current_region-)[0-9a-f]{8}\b/g, '$1<destination-hash>')
  );
}

interface LabTiming {
  readonly lab: string;
  readonly durationSec: number;
  /** user + sys CPU seconds of the synth and its children; null when not measurable. */
  readonly cpuSec: number | null;
  readonly ok: boolean;
  readonly lint: string | null;
}

interface Options {
  readonly lint: boolean;
  readonly keep: boolean;
  readonly cold: boolean;
  readonly ignoreHashes: boolean;
  readonly repeat: number;
  readonly saveDir: string | null;
  readonly compareDir: string | null;
  readonly labs: readonly string[];
}

function parseOptions(argv: readonly string[]): Options {
  const repeatArg = optionValue(argv, '--repeat');
  const repeat = repeatArg === null ? 1 : Number(repeatArg);
  if (!Number.isInteger(repeat) || repeat < 1) {
    throw new Error(`--repeat ${repeatArg}: must be a whole number ≥ 1`);
  }
  const saveDir = optionValue(argv, '--save-templates');
  const compareDir = optionValue(argv, '--compare-templates');
  const valued = new Set([repeatArg, saveDir, compareDir].filter((v): v is string => v !== null));
  const explicit = argv.filter((a) => !a.startsWith('--') && !valued.has(a));
  const labs =
    explicit.length > 0
      ? explicit
      : readdirSync(path.join(ROOT, 'labs'))
          .filter((f) => f.endsWith('.json'))
          .sort()
          .map((f) => path.join('labs', f));
  return {
    lint: argv.includes('--lint'),
    keep: argv.includes('--keep'),
    cold: argv.includes('--cold'),
    ignoreHashes: argv.includes('--ignore-asset-hashes'),
    repeat,
    saveDir,
    compareDir,
    labs,
  };
}

/** cfn-lint's output on every template in `outdir` ('' when clean). */
function lintTemplates(outdir: string): string {
  const templates = readdirSync(outdir)
    .filter((f) => f.endsWith('.template.json'))
    .map((f) => path.join(outdir, f));
  const linted = spawnSync('cfn-lint', templates, { encoding: 'utf8' });
  return `${linted.stdout}${linted.stderr}`.trim();
}

/** The compared files of lab `name` in `outdir` that differ from (or are missing in) `compareDir`, as `name/file`. */
function changedAgainst(compareDir: string, name: string, outdir: string, ignoreHashes: boolean): string[] {
  const changed: string[] = [];
  const before = path.join(compareDir, name);
  const names = new Set([...(existsSync(before) ? comparedFiles(before) : []), ...comparedFiles(outdir)]);
  for (const f of names) {
    const a = path.join(before, f);
    const b = path.join(outdir, f);
    const same = (x: Buffer, y: Buffer): boolean =>
      ignoreHashes
        ? maskAssetHashes(x.toString('utf8')) === maskAssetHashes(y.toString('utf8'))
        : x.equals(y);
    if (!existsSync(a) || !existsSync(b) || !same(readFileSync(a), readFileSync(b))) {
      changed.push(`${name}/${f}`);
    }
  }
  return changed;
}

/**
 * Synthesizes `lab` `opts.repeat` times (stopping at the first failure), lints, saves or compares
 * the first synth's output, prints the lab's line and returns its timing; changed files go to `changed`.
 */
function benchLab(lab: string, opts: Options, outRoot: string, changed: string[]): LabTiming {
  const { lint, cold, repeat, saveDir, compareDir } = opts;
  const name = path.basename(lab, '.json');
  const walls: number[] = [];
  const cpuRuns: number[] = [];
  let ok = true;
  let lintOut: string | null = null;
  for (let run = 0; run < repeat && ok; run++) {
    const outdir = path.join(outRoot, `${name}-${run}`);
    if (cold) rmSync(BUNDLE_CACHE, { recursive: true, force: true });
    const pin = saveDir !== null || compareDir !== null ? `-c "proxylab:now=${PINNED_NOW}"` : '';
    const t0 = process.hrtime.bigint();
    // bash's `time -p` adds the CPU seconds of npx, the cdk CLI and the app (children it waited
    // for; esbuild's service process is not among them, so CPU undercounts esbuild's share).
    const res = spawnSync(
      'bash',
      ['-c', `time -p npx cdk synth -q -c "lab=$1" ${pin} -o "$2"`, 'synth', lab, outdir],
      { cwd: ROOT, encoding: 'utf8' },
    );
    walls.push(Number(process.hrtime.bigint() - t0) / 1e9);
    const cpuSec = ['user', 'sys']
      .map((k) => Number(new RegExp(`^${k} ([0-9.]+)$`, 'm').exec(res.stderr)?.[1] ?? NaN))
      .reduce((a, b) => a + b, 0);
    if (!Number.isNaN(cpuSec)) cpuRuns.push(cpuSec);
    ok = res.status === 0;
    if (!ok) {
      process.stderr.write(`--- ${lab} failed (exit ${res.status}):\n${res.stderr}\n`);
      break;
    }
    if (run > 0) continue;
    if (lint) lintOut = lintTemplates(outdir);
    if (saveDir !== null) {
      mkdirSync(path.join(saveDir, name), { recursive: true });
      for (const f of comparedFiles(outdir)) copyFileSync(path.join(outdir, f), path.join(saveDir, name, f));
    }
    if (compareDir !== null) changed.push(...changedAgainst(compareDir, name, outdir, opts.ignoreHashes));
  }
  const durationSec = median(walls);
  const cpuSec = cpuRuns.length === walls.length && walls.length > 0 ? median(cpuRuns) : null;
  const range =
    walls.length > 1
      ? `  [wall ${Math.min(...walls).toFixed(1)}–${Math.max(...walls).toFixed(1)} s, median of ${walls.length}]`
      : '';
  process.stdout.write(
    `${lab.padEnd(40)} ${durationSec.toFixed(1).padStart(6)} s  (cpu ${cpuSec === null ? '?' : cpuSec.toFixed(1)} s)  ${ok ? 'ok' : 'FAILED'}` +
      range +
      (lint && ok ? `  cfn-lint: ${lintOut === '' ? 'clean' : 'FINDINGS'}` : '') +
      '\n',
  );
  if (lintOut) process.stdout.write(`${lintOut}\n`);
  return { lab, durationSec, cpuSec, ok, lint: lintOut };
}

function main(argv: string[]): number {
  const opts = parseOptions(argv);
  const { keep, cold, ignoreHashes, repeat, saveDir, compareDir } = opts;
  const outRoot = mkdtempSync(path.join(tmpdir(), 'proxylab-synth-'));
  const results: LabTiming[] = [];
  const loadBefore = loadavg()[0] ?? 0;
  const started = process.hrtime.bigint();
  const changed: string[] = [];
  for (const lab of opts.labs) results.push(benchLab(lab, opts, outRoot, changed));
  const totalSec = Number(process.hrtime.bigint() - started) / 1e9;
  const synthSec = results.reduce((s, r) => s + r.durationSec, 0);
  const cpuKnown = results.every((r) => r.cpuSec !== null);
  const cpuTotal = results.reduce((s, r) => s + (r.cpuSec ?? 0), 0);
  process.stdout.write(
    `${'total synth'.padEnd(40)} ${synthSec.toFixed(1).padStart(6)} s  (cpu ${cpuKnown ? cpuTotal.toFixed(1) : '?'} s; ${results.length} labs${repeat > 1 ? ', sum of medians' : ''}, wall of the whole script ${totalSec.toFixed(1)} s)\n`,
  );
  // Other work on the machine stretches wall time: print the load so the figure can be judged.
  process.stdout.write(
    `machine: ${cpus().length} cores, 1-min load average ${loadBefore.toFixed(1)} before, ${(loadavg()[0] ?? 0).toFixed(1)} after\n`,
  );
  process.stdout.write(
    `bundle cache: ${cold ? 'emptied before every synth (cold)' : 'kept (warm after the first synth)'}\n`,
  );
  if (saveDir !== null) process.stdout.write(`templates saved in ${saveDir}\n`);
  if (compareDir !== null) {
    process.stdout.write(
      changed.length === 0
        ? `templates and assets manifests unchanged against ${compareDir}${ignoreHashes ? ' (asset and user-data hashes masked)' : ''}\n`
        : `CHANGED against ${compareDir}: ${changed.join(', ')}\n`,
    );
  }
  if (keep) process.stdout.write(`outputs kept in ${outRoot}\n`);
  else rmSync(outRoot, { recursive: true, force: true });
  const failed = results.some((r) => !r.ok || (r.lint !== null && r.lint !== '')) || changed.length > 0;
  return failed ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
