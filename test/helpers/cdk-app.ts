/**
 * The CDK App every test synthesizes in: the settings `cdk synth` uses (bin/proxylab.ts), so a test
 * checks the template users deploy, with Lambda bundling skipped (asset content does not change a
 * template's shape; scripts/bench-synth.ts bundles for real) and its output under a scratch
 * directory removed after the test file.
 *
 * aws-cdk-lib's built-in WASM CloudFormation validator is off, as in `cdk synth`
 * (`CDK_VALIDATION=true` turns it on there): the project's template checks are cdk-nag and cfn-lint,
 * and every template shape a test synthesizes is cfn-linted in test/cdk/labs.test.ts (the shipped
 * labs, the fixtures and EXTRA_SHAPES). Left on, the validator starts a WASM engine in each test
 * file (≈ 6.5 CPU-s) and adds ≈ 1.5 CPU-s to every synth (bench/README.md "npm test time").
 *
 * Creation stack traces are not recorded (`aws:cdk:disable-creation-stack-traces`): `cdk synth`
 * records one per CloudFormation element, but only into `<stack>.metadata.json` (where an element
 * was made, for debugging); the template, manifest, assets and tree are byte for byte the same, and
 * no test reads them. Under jest each trace goes through source-map-support: a warm lab synth takes
 * 0.14 CPU-s without them, 0.19 with. Likewise no tree.json (`treeMetadata: false`): the construct
 * tree for the console, with every resource's properties resolved again (≈ 0.02 CPU-s a lab); the
 * assembly differs only by that file and its manifest entry.
 *
 * Use this (or test/cdk/helpers.ts newTestApp, built on it) for any new `App` in a test.
 */
import { App, type AppProps } from 'aws-cdk-lib';
import { scratchDir } from './scratch';

export function testApp(props: Omit<AppProps, 'builtinCloudFormationValidation'> = {}): App {
  return new App({
    outdir: scratchDir('proxylab-cdk-test-'),
    treeMetadata: false,
    ...props,
    builtinCloudFormationValidation: false,
    context: {
      'aws:cdk:bundling-stacks': [],
      'aws:cdk:disable-creation-stack-traces': true,
      ...props.context,
    },
  });
}
