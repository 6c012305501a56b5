/**
 * Bundle the runner (scripts/runner.ts and everything it imports, AWS SDK clients included) into
 * ONE JavaScript file with esbuild: platform node, target node20, CommonJS. The lab stack ships
 * it as an S3 asset; user data installs it to /opt/proxylab/runner.js. Used by
 * scripts/build-runner.ts and at synth time by the runner-fleet construct.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildSync, type Metafile } from 'esbuild';
import { softwareVersionOf } from '../config/stack-outputs';

/** scripts/runner.ts, resolved from this file (never from the working directory). */
const RUNNER_ENTRY = path.resolve(__dirname, '..', '..', 'scripts', 'runner.ts');

export interface RunnerBundle {
  /** Absolute path of the bundled file. */
  readonly file: string;
  /** Directory holding only that file (what a CDK asset should point at). */
  readonly dir: string;
  readonly bytes: number;
  /** Input bytes by top-level package (for reporting what the bundle is made of). */
  readonly inputsByPackage: Readonly<Record<string, number>>;
}

export function bundleRunner(outDir?: string): RunnerBundle {
  const dir = outDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-runner-'));
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'runner.js');
  const result = buildSync({
    entryPoints: [RUNNER_ENTRY],
    outfile: file,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minify: true,
    keepNames: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
    // The CDK and the report/collector code are never reached from the runner; keep them out loudly.
    external: ['aws-cdk-lib', 'constructs', 'cdk-nag'],
  });
  if (result.errors.length > 0) throw new Error(`esbuild: ${result.errors.map((e) => e.text).join('; ')}`);
  return { file, dir, bytes: fs.statSync(file).size, inputsByPackage: inputsByPackage(result.metafile) };
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
    if (!fs.existsSync(file)) {
      try {
        fs.renameSync(work, dir);
      } catch (err) {
        if (!fs.existsSync(file)) throw err; // another process won the race: same content
      }
    }
    bundled = { ...made, dir, file };
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
