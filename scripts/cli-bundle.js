/**
 * The CLI as one esbuild bundle, built once per content and reused (scripts/proxylab.js runs it):
 * starting it costs a hash of its inputs and a `require`, not tsx's TypeScript loader (≈ 0.5 CPU-s a
 * start, bench/README.md "CLI start-up").
 *
 * Plain CommonJS, so that a start loads no TypeScript machinery: this file and esbuild's JavaScript
 * API (only when it builds) are all it needs. The cache follows lib/constructs/bundle-cache.ts (the
 * synth-time bundles): the same layout under the same directory, the same recipe and content keys
 * (test/unit/cli-bundle.test.ts checks that both compute equal keys):
 *   cli-<recipe hash>.inputs.json   the absolute input paths of the latest build of this recipe
 *   cli-<key>/out/cli.js            the bundle (and cli.js.map)
 *   cli-<key>/inputs.json           the inputs that key covers
 * The recipe is esbuild's version and the options below; the inputs are every file esbuild's
 * metafile lists (scripts/cli.ts and the lib/ modules it reaches) plus tsconfig.json,
 * package-lock.json (a changed node_modules tree) and this file. A start re-hashes them: any changed,
 * renamed or deleted input is a miss, and a miss builds (about a second, silently) and files the new
 * entry. Entries are built in a temporary directory and renamed into place, so CLIs started side by
 * side never see half a bundle; two that build at once both end up running the same content.
 *
 * Packages stay outside the bundle (`packages: 'external'`): they load from node_modules as they do
 * under tsx, only when a command's code requires them (scripts/cli.ts loads commands lazily), and
 * esbuild's own binary, which `proxylab run` and `doctor` use to hash the runner bundle, keeps working.
 */
'use strict';
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const NAME = 'cli';
/** Inputs modified this long before a build started are not trusted to be what esbuild read. */
const MTIME_SLACK_MS = 2000;

/** The checkout: this file is scripts/cli-bundle.js. */
const ROOT = path.resolve(__dirname, '..');

/** Where the bundle is cached: beside the runner and Lambda bundles (lib/constructs/runner-bundle.ts). */
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'proxylab', 'bundles');

/** esbuild's options (the recipe: a change is a new cache entry). Paths are relative to ROOT. */
const BUILD_OPTIONS = {
  entryPoints: ['scripts/cli.ts'],
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  // Function and class names as in the source: nothing the CLI prints may depend on bundling.
  keepNames: true,
  sourcemap: true,
  metafile: true,
  logLevel: 'silent',
};

/** Files the bundle depends on that esbuild's metafile does not list. */
const EXTRA_INPUTS = [
  path.join(ROOT, 'tsconfig.json'),
  path.join(ROOT, 'package-lock.json'),
  path.join(ROOT, 'scripts', 'cli-bundle.js'),
];

function sha256(data) {
  return createHash('sha256').update(data).digest('hex');
}

/** As lib/constructs/bundle-cache.ts recipeHash. */
function recipeHash(name, recipe) {
  return sha256(JSON.stringify({ name, recipe })).slice(0, 16);
}

/** As lib/constructs/bundle-cache.ts contentKey: null when an input is missing. */
function contentKey(recipeId, inputs) {
  const hash = createHash('sha256').update(`${recipeId}\n`);
  for (const file of [...new Set(inputs)].sort()) {
    let content;
    try {
      content = fs.readFileSync(file);
    } catch {
      return null;
    }
    hash.update(`${file}\0${sha256(content)}\n`);
  }
  return hash.digest('hex').slice(0, 32);
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

function isStringArray(value) {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function touchedSince(sinceMs, files) {
  return files.some((file) => {
    try {
      return fs.statSync(file).mtimeMs >= sinceMs;
    } catch {
      return true;
    }
  });
}

/** The recipe: esbuild's version (read from its package.json, without loading esbuild) and the options. */
function cliRecipe(root = ROOT) {
  const esbuildVersion =
    readJson(path.join(root, 'node_modules', 'esbuild', 'package.json'))?.version ?? null;
  return { esbuild: esbuildVersion, options: BUILD_OPTIONS };
}

/**
 * The cached bundle's file when its inputs are unchanged, else null. `spec`: { cacheDir, name,
 * recipe, extraInputs } (defaults: the CLI's).
 */
function lookup(spec) {
  const recipeId = recipeHash(spec.name, spec.recipe);
  const last = readJson(path.join(spec.cacheDir, `${spec.name}-${recipeId}.inputs.json`));
  if (!isStringArray(last)) return null;
  const key = contentKey(recipeId, [...last, ...spec.extraInputs]);
  if (key === null) return null;
  const entry = path.join(spec.cacheDir, `${spec.name}-${key}`);
  const file = path.join(entry, 'out', spec.outName);
  return fs.existsSync(path.join(entry, 'inputs.json')) && fs.existsSync(file) ? file : null;
}

/**
 * Build into a fresh temporary directory with `spec.build(outDir)` (returns the absolute input
 * paths), then file it under its content key (rename: atomic; the first of two racing builders wins,
 * the other uses the winner's, same content) and point the recipe at its inputs. Returns the file.
 */
function buildAndStore(spec) {
  const recipeId = recipeHash(spec.name, spec.recipe);
  fs.mkdirSync(spec.cacheDir, { recursive: true });
  const work = fs.mkdtempSync(path.join(spec.cacheDir, `build-${spec.name}-`));
  try {
    fs.chmodSync(work, 0o755); // mkdtemp's 0700 would keep the entry from other users of the checkout
    const out = path.join(work, 'out');
    fs.mkdirSync(out);
    const startedMs = Date.now();
    const inputs = [...new Set(spec.build(out))].sort();
    const key = contentKey(recipeId, [...inputs, ...spec.extraInputs]);
    if (key === null) throw new Error(`an input of the ${spec.name} bundle vanished during its build`);
    fs.writeFileSync(
      path.join(work, 'inputs.json'),
      `${JSON.stringify({ inputs, report: null }, null, 1)}\n`,
    );
    // An input written while esbuild ran may differ from what it read: such a bundle runs this once
    // under a one-off name and is never filed under that key (as in bundle-cache.ts).
    if (touchedSince(startedMs - MTIME_SLACK_MS, [...inputs, ...spec.extraInputs])) {
      // Removed when this process ends: the next start builds again, from settled files.
      const once = fs.mkdtempSync(path.join(spec.cacheDir, `${spec.name}-unsettled-`));
      fs.rmSync(once, { recursive: true });
      fs.renameSync(work, once);
      process.once('exit', () => fs.rmSync(once, { recursive: true, force: true }));
      return path.join(once, 'out', spec.outName);
    }
    const entry = path.join(spec.cacheDir, `${spec.name}-${key}`);
    if (!fs.existsSync(path.join(entry, 'out', spec.outName))) {
      try {
        fs.renameSync(work, entry);
      } catch (err) {
        if (!fs.existsSync(path.join(entry, 'out', spec.outName))) throw err; // else another CLI won the race
      }
    }
    const pointer = path.join(spec.cacheDir, `${spec.name}-${recipeId}.inputs.json`);
    const tmp = `${pointer}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(inputs)}\n`);
    fs.renameSync(tmp, pointer);
    return path.join(entry, 'out', spec.outName);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** esbuild's build of the CLI into `outDir`: the absolute paths of the files it read. */
function buildCli(outDir, root = ROOT) {
  const esbuild = require('esbuild');
  const result = esbuild.buildSync({
    ...BUILD_OPTIONS,
    absWorkingDir: root,
    outfile: path.join(outDir, 'cli.js'),
  });
  return Object.keys(result.metafile.inputs)
    .map((input) => path.resolve(root, input))
    .filter((file) => fs.existsSync(file));
}

/** The CLI's cache spec in the checkout at `root`; $PROXYLAB_CLI_CACHE_DIR moves the cache
 * (tests): somewhere inside the checkout, as the bundle loads packages from the node_modules above it. */
function cliSpec(root = ROOT, cacheDir = process.env.PROXYLAB_CLI_CACHE_DIR || CACHE_DIR) {
  return {
    cacheDir,
    name: NAME,
    outName: 'cli.js',
    recipe: cliRecipe(root),
    extraInputs:
      root === ROOT ? EXTRA_INPUTS : EXTRA_INPUTS.map((f) => path.join(root, path.relative(ROOT, f))),
    build: (out) => buildCli(out, root),
  };
}

/** The bundled CLI's file: from the cache when its inputs are unchanged, else built now. */
function cliBundle(spec = cliSpec()) {
  return lookup(spec) ?? buildAndStore(spec);
}

module.exports = {
  cliBundle,
  cliSpec,
  lookup,
  buildAndStore,
  contentKey,
  recipeHash,
  CACHE_DIR,
  BUILD_OPTIONS,
};
