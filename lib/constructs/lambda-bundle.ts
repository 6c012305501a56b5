/**
 * A Lambda handler's code, bundled by esbuild exactly as NodejsFunction's local bundling does it
 * (`esbuild --bundle <entry> --target=node24 --platform=node --format=cjs --outfile=<out>/index.js
 * --minify`, run in the project root), but through the synth-time bundle cache (bundle-cache.ts):
 * an unchanged handler is copied from the cache instead of spawning `npx esbuild` on every synth.
 *
 * The asset stays a bundled asset hashed by its output (AssetHashType.OUTPUT, the fingerprint of
 * index.js, as NodejsFunction's), so equal code gives the asset hash a fresh build would.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { buildSync, version as esbuildVersion, type BuildOptions } from 'esbuild';
import { cachedBundle, metafileInputs } from './bundle-cache';
import { RUNNER_BUNDLE_CACHE } from './runner-bundle';
import { REPO_ROOT } from '../core/repo-root';

const ROOT = REPO_ROOT;

export interface LambdaBundleOptions {
  /** esbuild's target, e.g. `node24` (NodejsFunction derives it from the runtime). */
  readonly target: string;
}

function buildOptions(entry: string, target: string) {
  return {
    bundle: true,
    // Relative to the project root, as NodejsFunction passes it.
    entryPoints: [path.relative(ROOT, entry)],
    target,
    platform: 'node',
    format: 'cjs',
    minify: true,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: ROOT,
  } as const satisfies BuildOptions;
}

/** The bundle directory (holding only index.js) for `entry`, built or reused. */
export function lambdaBundleDir(
  entry: string,
  options: LambdaBundleOptions,
  cacheRoot = RUNNER_BUNDLE_CACHE,
): string {
  const esbuildOptions = buildOptions(path.resolve(entry), options.target);
  return cachedBundle(cacheRoot, {
    // e.g. lambda/collector/index.ts → lambda-collector-index
    name: path
      .relative(ROOT, path.resolve(entry))
      .replace(/\.[cm]?[jt]s$/, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-'),
    recipe: { esbuild: esbuildVersion, options: esbuildOptions },
    extraInputs: [
      path.join(ROOT, 'tsconfig.json'),
      path.join(ROOT, 'package-lock.json'),
      path.join(ROOT, 'lib', 'constructs', 'lambda-bundle.ts'),
      path.join(ROOT, 'lib', 'constructs', 'bundle-cache.ts'),
    ],
    build: (out) => {
      const result = buildSync({ ...esbuildOptions, outfile: path.join(out, 'index.js') });
      if (result.errors.length > 0) {
        throw new Error(`esbuild ${entry}: ${result.errors.map((e) => e.text).join('; ')}`);
      }
      return { inputs: metafileInputs(result.metafile?.inputs ?? {}, ROOT), report: null };
    },
  }).dir;
}

/**
 * lambda.Code for NodejsFunction's `code` (with `handler: 'index.handler'`). Bundling runs only
 * when the asset is staged (so `--exclusively`/bundling-stacks skips it as before).
 */
export function cachedLambdaCode(entry: string, options: LambdaBundleOptions): lambda.Code {
  return lambda.Code.fromAsset(ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never used: the local bundler below always succeeds or throws.
      image: DockerImage.fromRegistry('dummy'),
      // Never run either; it names the entry in the key of CDK's in-process asset cache, which
      // would otherwise hand the second handler the first one's staged code.
      command: [
        'esbuild',
        '--bundle',
        path.relative(ROOT, path.resolve(entry)),
        `--target=${options.target}`,
      ],
      local: {
        tryBundle(outputDir: string): boolean {
          const dir = lambdaBundleDir(entry, options);
          for (const name of fs.readdirSync(dir))
            fs.copyFileSync(path.join(dir, name), path.join(outputDir, name));
          return true;
        },
      },
    },
  });
}
