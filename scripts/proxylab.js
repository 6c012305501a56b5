#!/usr/bin/env node
// Launcher: runs the TypeScript CLI (scripts/cli.ts) from an esbuild bundle built once per content and
// cached under node_modules/.cache/proxylab/bundles (scripts/cli-bundle.js): the first start after a
// change builds it, later starts only hash its inputs and load it. PROXYLAB_NO_BUNDLE=1 runs the
// sources through tsx instead (esbuild transpile, no type-check), as does a bundle that cannot be
// built or stored (PROXYLAB_DEBUG=1 says why).
'use strict';
const args = process.argv.slice(2);
let cli = null;
if (!process.env.PROXYLAB_NO_BUNDLE) {
  try {
    cli = require('./cli-bundle.js').cliBundle();
  } catch (err) {
    if (process.env.PROXYLAB_DEBUG)
      process.stderr.write(`proxylab: running without the bundle: ${err.stack}\n`);
  }
}
if (cli !== null) {
  // Stack traces (PROXYLAB_DEBUG) name the TypeScript sources, through the bundle's source map.
  if (process.env.PROXYLAB_DEBUG) process.setSourceMapsEnabled(true);
  require(cli).main(args);
} else {
  require('tsx/cjs');
  require('./cli.ts').main(args);
}
