/**
 * Build the runner bundle: `npx tsx scripts/build-runner.ts [--out DIR]` → DIR/runner.js
 * (default `cdk.out/runner/`). Prints the size and what it is made of. The stack builds the same
 * bundle itself at synth time; this script is for inspecting it or copying it to a host by hand.
 */
import * as path from 'node:path';
import { bundleRunner } from '../lib/constructs/runner-bundle';

function main(argv: readonly string[]): number {
  const i = argv.indexOf('--out');
  if (argv.includes('--help')) {
    process.stdout.write('usage: tsx scripts/build-runner.ts [--out DIR]   (default cdk.out/runner)\n');
    return 0;
  }
  const outDir =
    i >= 0 && argv[i + 1]
      ? path.resolve(argv[i + 1] as string)
      : path.resolve(__dirname, '..', 'cdk.out', 'runner');
  const t0 = Date.now();
  const bundle = bundleRunner(outDir);
  const kib = (n: number): string => `${(n / 1024).toFixed(0)} KiB`;
  process.stdout.write(`${bundle.file}: ${kib(bundle.bytes)} in ${Date.now() - t0} ms\n`);
  const top = Object.entries(bundle.inputsByPackage)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12);
  for (const [pkg, bytes] of top) process.stdout.write(`  ${pkg.padEnd(40)} ${kib(bytes)} (input)\n`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
