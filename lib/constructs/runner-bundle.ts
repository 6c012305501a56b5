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
import { buildSync, version as esbuildVersion, type BuildOptions, type Metafile } from 'esbuild';
import { cachedBundle, metafileInputs } from './bundle-cache';
import { softwareVersionOf } from '../config/stack-outputs';
import { REPO_ROOT } from '../core/repo-root';

/** scripts/runner.ts, resolved from the checkout (never from the working directory). */
const RUNNER_ENTRY = path.join(REPO_ROOT, 'scripts', 'runner.ts');
/** scripts/pooler.ts: the pooler bootstrap and agent (installed as /opt/proxylab/pooler.js). */
const POOLER_ENTRY = path.join(REPO_ROOT, 'scripts', 'pooler.ts');

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

/** The repository root: esbuild's working directory, so its output never depends on the caller's. */
const ROOT = REPO_ROOT;

/** The esbuild options of both entries (the cache key covers them, with esbuild's version). */
const BUILD_OPTIONS = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: true,
  keepNames: true,
  legalComments: 'none',
  metafile: true,
  logLevel: 'silent',
  absWorkingDir: ROOT,
  // The CDK and the report/collector code are never reached from the runner; keep them out loudly.
  // pg-native: node-postgres's optional libpq binding, required only inside a try (`pg.native`):
  // never shipped; the server-connections watch and the probes use the pure-JavaScript client.
  external: ['aws-cdk-lib', 'constructs', 'cdk-nag', 'pg-native'],
} as const satisfies BuildOptions;

export function bundleRunner(outDir?: string): RunnerBundle {
  return buildRunnerInto(outDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-runner-'))).bundle;
}

function buildRunnerInto(dir: string): { bundle: RunnerBundle; inputs: string[] } {
  fs.mkdirSync(dir, { recursive: true });
  const poolerFile = path.join(dir, 'pooler.js');
  const poolerMeta = build(POOLER_ENTRY, poolerFile);
  const poolerSha256 = createHash('sha256').update(fs.readFileSync(poolerFile)).digest('hex');
  const file = path.join(dir, 'runner.js');
  const meta = build(RUNNER_ENTRY, file, `/* proxylab pooler.js sha256:${poolerSha256} */`);
  const inputs = [poolerMeta, meta].flatMap((m) => metafileInputs(m?.inputs ?? {}, ROOT));
  const bundle = {
    file,
    poolerFile,
    dir,
    bytes: fs.statSync(file).size,
    inputsByPackage: inputsByPackage(meta),
  };
  return { bundle, inputs };
}

function build(entry: string, outfile: string, banner?: string): Metafile | undefined {
  const result = buildSync({
    ...BUILD_OPTIONS,
    entryPoints: [entry],
    outfile,
    ...(banner ? { banner: { js: banner } } : {}),
  });
  if (result.errors.length > 0) throw new Error(`esbuild: ${result.errors.map((e) => e.text).join('; ')}`);
  return result.metafile;
}

let bundled: RunnerBundle | null = null;

/** Where synth-time bundles are kept, one directory per content key (reused across synths). */
export const RUNNER_BUNDLE_CACHE = path.join(ROOT, 'node_modules', '.cache', 'proxylab', 'bundles');

/**
 * Files the runner bundle depends on besides esbuild's metafile inputs: how TypeScript is read,
 * the installed dependency tree, and this bundler code itself (the banner, the two-entry layout).
 */
const RUNNER_EXTRA_INPUTS = [
  path.join(ROOT, 'tsconfig.json'),
  path.join(ROOT, 'package-lock.json'),
  // By path in the checkout, not __filename: bundled into the CLI (scripts/proxylab.js) this code
  // runs from the CLI bundle, whose content is not what shapes the runner bundle.
  path.join(ROOT, 'lib', 'constructs', 'runner-bundle.ts'),
  path.join(ROOT, 'lib', 'constructs', 'bundle-cache.ts'),
];

/**
 * The bundle, looked up once per process in RUNNER_BUNDLE_CACHE (see bundle-cache.ts): built only
 * when a file it was built from, esbuild's version or the options changed; otherwise the directory
 * of the last build with the same content, so the asset hash (a fingerprint of runner.js and
 * pooler.js) is the same as a fresh build's. Never in /tmp: every `cdk synth` used to leave a
 * megabyte there.
 */
export function runnerBundleOnce(): RunnerBundle {
  if (bundled) return bundled;
  const cached = cachedBundle(RUNNER_BUNDLE_CACHE, {
    name: 'runner',
    recipe: { esbuild: esbuildVersion, options: BUILD_OPTIONS, entries: [POOLER_ENTRY, RUNNER_ENTRY] },
    extraInputs: RUNNER_EXTRA_INPUTS,
    build: (out) => {
      const made = buildRunnerInto(out);
      return { inputs: made.inputs, report: { inputsByPackage: made.bundle.inputsByPackage } };
    },
  });
  const file = path.join(cached.dir, 'runner.js');
  bundled = {
    file,
    poolerFile: path.join(cached.dir, 'pooler.js'),
    dir: cached.dir,
    bytes: fs.statSync(file).size,
    inputsByPackage: cached.report.inputsByPackage,
  };
  return bundled;
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
