#!/usr/bin/env node
// Thin launcher: registers tsx (esbuild transpile, no type-check) and runs the TypeScript CLI.
'use strict';
require('tsx/cjs');
require('./cli.ts').main(process.argv.slice(2));
