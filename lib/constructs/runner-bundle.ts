/**
 * Bundle the runner (scripts/runner.ts and everything it imports, AWS SDK clients included) into
 * ONE JavaScript file with esbuild: platform node, target node20, CommonJS; and beside it the
 * self-hosted pooler's on-host entry (scripts/pooler.ts → pooler.js) the same way. The lab stack
 * ships the directory holding both as one S3 asset (a zip); user data unpacks it to /opt/proxylab
 * (runner.js, pooler.js). Used by scripts/build-runner.ts and at synth time by the lab stack.
 *
 * The runner software version (softwareVersionOf runner.js, what `proxylab run` and `doctor`
 * compare) must change when pooler.js does: runner.js starts with a banner comment naming
 * pooler.js's SHA-256, so a new pooler is a new runner version.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildSync, type Metafile } from 'esbuild';
import { softwareVersionOf } from '../config/stack-outputs';

/** scripts/runner.ts, resolved from this file (never from the working directory). */
const RUNNER_ENTRY = path.resolve(__dirname, '..', '..', 'scripts', 'runner.ts');
/** scripts/pooler.ts: the pooler bootstrap and agent (installed as /opt/proxylab/pooler.js). */
const POOLER_ENTRY = path.resolve(__dirname, '..', '..', 'scripts', 'pooler.ts');

export interface RunnerBundle {
  /** Absolute path of the bundled runner (runner.js). */
  readonly file: string;
  /** Absolute path of the bundled pooler entry (pooler.js), beside `file`. */
  readonly poolerFile: string;
  /** Directory holding only those two files (what the CDK asset points at). */
  readonly dir: string;
  readonly bytes: number;
  /** Input bytes by top-level package (for reporting what the bundle is made of). */
  readonly inputsByPackage: Readonly<Record<string, number>>;
}

export function bundleRunner(outDir?: string): RunnerBundle {
  const dir = outDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-runner-'));
  fs.mkdirSync(dir, { recursive: true });
  const poolerFile = path.join(dir, 'pooler.js');
  build(POOLER_ENTRY, poolerFile);
  const poolerSha256 = createHash('sha256').update(fs.readFileSync(poolerFile)).digest('hex');
  const file = path.join(dir, 'runner.js');
  const meta = build(RUNNER_ENTRY, file, `/* proxylab pooler.js sha256:${poolerSha256} */`);
  return { file, poolerFile, dir, bytes: fs.statSync(file).size, inputsByPackage: inputsByPackage(meta) };
}

function build(entry: string, outfile: string, banner?: string): Metafile | undefined {
  const result = buildSync({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minify: true,
    keepNames: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
    ...(banner ? { banner: { js: banner } } : {}),
    // The CDK and the report/collector code are never reached from the runner; keep them out loudly.
    external: ['aws-cdk-lib', 'constructs', 'cdk-nag'],
  });
  if (result.errors.length > 0) throw new Error(`esbuild: ${result.errors.map((e) => e.text).join('; ')}`);
  return result.metafile;
}

let bundled: RunnerBundle | null = null;

/** Where built runner bundles are kept, one directory per content hash (reused across synths). */
export const RUNNER_BUNDLE_CACHE = path.resolve(__dirname, '..', '..', 'node_modules', '.cache', 'proxylab');

/**
 * The bundle, built on first use in this process. It lands in `runner-<content hash>/` under
 * RUNNER_BUNDLE_CACHE (built beside it, then renamed: atomic, so parallel synths never see half a
 * file), never in /tmp: every `cdk synth` used to leave a megabyte there.
 */
export function runnerBundleOnce(): RunnerBundle {
  if (bundled) return bundled;
  fs.mkdirSync(RUNNER_BUNDLE_CACHE, { recursive: true });
  const work = fs.mkdtempSync(path.join(RUNNER_BUNDLE_CACHE, 'build-'));
  try {
    const made = bundleRunner(work);
    const hash = softwareVersionOf(fs.readFileSync(made.file));
    const dir = path.join(RUNNER_BUNDLE_CACHE, `runner-${hash}`);
    const file = path.join(dir, 'runner.js');
    const poolerFile = path.join(dir, 'pooler.js');
    if (!fs.existsSync(file) || !fs.existsSync(poolerFile)) {
      try {
        fs.renameSync(work, dir);
      } catch (err) {
        if (!fs.existsSync(poolerFile)) throw err; // another process won the race: same content
      }
    }
    bundled = { ...made, dir, file, poolerFile };
    return bundled;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The version of the runner software this checkout deploys (the bundle's content hash, see
 * softwareVersionOf). `proxylab run` passes it as --expect-version; `proxylab doctor` compares
 * it with each runner's installed runner.js.
 */
export function runnerSoftwareVersion(): string {
  return softwareVersionOf(fs.readFileSync(runnerBundleOnce().file));
}

function inputsByPackage(meta: Metafile | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [input, info] of Object.entries(meta?.inputs ?? {})) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
    const key = m ? (m[1] as string) : '(proxylab)';
    out[key] = (out[key] ?? 0) + info.bytes;
  }
  return out;
}
