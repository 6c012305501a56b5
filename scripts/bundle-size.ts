/**
 * Measure the collector Lambda bundle: esbuild with the options the MetricsCollector construct
 * bundles with (lib/constructs/lambda-bundle.ts, NodejsFunction's local-esbuild options: minify,
 * no source map, target node24, CJS, every module bundled including the SDK v3 clients), write the metafile, print the size and
 * the biggest contributors by package, and the size the same code would have if it relied on the
 * Lambda runtime's own SDK (`@aws-sdk/*` and `@smithy/*` external).
 *
 * Then, unless --no-synth-check, synthesize the real construct and compare its asset's index.js
 * with ours, so a change to the construct's bundling options cannot silently invalidate the figure.
 *
 *   npx tsx scripts/bundle-size.ts [--out DIR] [--top N] [--no-synth-check] [--json]
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { App, Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { MetricsCollector } from '../lib/constructs/metrics-collector';

const REPO = path.resolve(__dirname, '..');
const ENTRY = path.join(REPO, 'lambda', 'collect-metrics', 'index.ts');

/** Mirror of the construct's `bundling` (checked against a synth below). */
export const COLLECTOR_ESBUILD_OPTIONS: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  minify: true,
  sourcemap: false,
  external: [],
};

export interface Contributor {
  readonly name: string;
  readonly bytes: number;
}

export interface BundleMeasure {
  readonly bytes: number;
  readonly gzipBytes: number;
  readonly contributors: readonly Contributor[];
  readonly metafile: Metafile;
}

/** `node_modules/@aws-sdk/client-s3/dist-cjs/x.js` → `@aws-sdk/client-s3`; project files → their top folder. */
export function packageOf(inputPath: string): string {
  const parts = inputPath.split(/[\\/]/);
  const nm = parts.lastIndexOf('node_modules');
  if (nm >= 0) {
    const first = parts[nm + 1] ?? '?';
    return first.startsWith('@') ? `${first}/${parts[nm + 2] ?? '?'}` : first;
  }
  return `(project) ${parts.slice(0, 2).join('/')}`;
}

export async function measureBundle(outfile: string, options: BuildOptions): Promise<BundleMeasure> {
  const result = await build({
    ...options,
    entryPoints: [ENTRY],
    outfile,
    metafile: true,
    logLevel: 'warning',
    absWorkingDir: REPO,
  });
  const metafile = result.metafile;
  const output = Object.entries(metafile.outputs).find(([file]) => path.resolve(REPO, file) === outfile)?.[1];
  if (!output) throw new Error(`esbuild wrote no ${outfile}`);
  const byPackage = new Map<string, number>();
  for (const [input, info] of Object.entries(output.inputs)) {
    const name = packageOf(input);
    byPackage.set(name, (byPackage.get(name) ?? 0) + info.bytesInOutput);
  }
  const contributors = [...byPackage.entries()]
    .map(([name, bytes]) => ({ name, bytes }))
    .sort((a, b) => b.bytes - a.bytes);
  const code = readFileSync(outfile);
  return { bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, contributors, metafile };
}

/** Synthesize the real MetricsCollector and return its asset's index.js size (bytes). */
function synthAssetBytes(): number {
  const outdir = mkdtempSync(path.join(tmpdir(), 'proxylab-bundle-synth-'));
  try {
    const app = new App({ outdir });
    const stack = new Stack(app, 'BundleSizeCheck');
    new MetricsCollector(stack, 'Collector', {
      bucket: new s3.Bucket(stack, 'Results'),
      dbInstanceResourceIds: ['db-EXAMPLE'],
    });
    app.synth();
    const assets = readdirSync(outdir).filter(
      (d) => d.startsWith('asset.') && existsSync(path.join(outdir, d, 'index.js')),
    );
    const [asset] = assets;
    if (assets.length !== 1 || asset === undefined)
      throw new Error(`expected one bundled asset in ${outdir}, found ${assets.length}`);
    return statSync(path.join(outdir, asset, 'index.js')).size;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;

async function main(argv: string[]): Promise<void> {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const outDir = path.resolve(arg('--out') ?? path.join(REPO, 'bench', 'out', 'collector-bundle'));
  const top = Number(arg('--top') ?? 12);
  mkdirSync(outDir, { recursive: true });

  const bundled = await measureBundle(path.join(outDir, 'index.js'), COLLECTOR_ESBUILD_OPTIONS);
  writeFileSync(path.join(outDir, 'index.meta.json'), JSON.stringify(bundled.metafile));
  const runtimeSdk = await measureBundle(path.join(outDir, 'runtime-sdk', 'index.js'), {
    ...COLLECTOR_ESBUILD_OPTIONS,
    external: ['@aws-sdk/*', '@smithy/*'],
  });
  writeFileSync(path.join(outDir, 'runtime-sdk', 'index.meta.json'), JSON.stringify(runtimeSdk.metafile));
  const synthBytes = argv.includes('--no-synth-check') ? null : synthAssetBytes();

  if (argv.includes('--json')) {
    const { metafile: _m1, ...b } = bundled;
    const { metafile: _m2, ...r } = runtimeSdk;
    process.stdout.write(
      JSON.stringify({ bundled: b, runtimeSdk: r, synthAssetBytes: synthBytes, outDir }, null, 2) + '\n',
    );
  } else {
    const lines = [
      `collector bundle (construct options: minify, node24, cjs, SDK bundled): ${bundled.bytes} bytes (${kib(bundled.bytes)}), gzip ${kib(bundled.gzipBytes)}`,
      `metafile: ${path.join(outDir, 'index.meta.json')} (inspect at https://esbuild.github.io/analyze/)`,
      `top contributors:`,
      ...bundled.contributors
        .slice(0, top)
        .map(
          (c) =>
            `  ${kib(c.bytes).padStart(10)}  ${((100 * c.bytes) / bundled.bytes).toFixed(1).padStart(5)}%  ${c.name}`,
        ),
      `same code with the runtime's SDK (@aws-sdk/*, @smithy/* external): ${runtimeSdk.bytes} bytes (${kib(runtimeSdk.bytes)}), gzip ${kib(runtimeSdk.gzipBytes)}`,
      synthBytes === null
        ? 'synth check skipped'
        : synthBytes === bundled.bytes
          ? `synth check: the MetricsCollector asset's index.js is ${synthBytes} bytes — identical`
          : `synth check: MISMATCH — the MetricsCollector asset's index.js is ${synthBytes} bytes; the construct's bundling options changed, update COLLECTOR_ESBUILD_OPTIONS`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  }
  if (synthBytes !== null && synthBytes !== bundled.bytes) process.exitCode = 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(
      `bundle-size failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exitCode = 1;
  });
}
