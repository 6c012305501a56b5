/**
 * The CLI's bundle cache (scripts/cli-bundle.js, what scripts/proxylab.js runs) with an injected
 * build on a temporary file set: a hit on unchanged content, a rebuild when an input changes or
 * disappears, racing builders that both end up with a bundle, nothing filed for inputs that changed
 * during the build — and the same keys as the synth-time cache it copies (lib/constructs/bundle-cache.ts).
 * test/integration/cli-launcher.test.ts runs the real launcher and esbuild.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  buildAndStore,
  cliBundle,
  cliSpec,
  contentKey,
  lookup,
  recipeHash,
  type BundleSpec,
} from '../../scripts/cli-bundle.js';
import * as synthCache from '../../lib/constructs/bundle-cache';
import { scratchDir } from '../helpers/scratch';

/** Well before any build in this file: inputs written "long ago" are settled. */
const PAST = new Date('2026-01-01T00:00:00Z');

function write(file: string, text: string): void {
  fs.writeFileSync(file, text);
  fs.utimesSync(file, PAST, PAST);
}

interface Fixture {
  readonly src: string;
  readonly a: string;
  readonly b: string;
  readonly extra: string;
  builds: number;
  spec(during?: () => void): BundleSpec;
}

function fixture(cacheDir = path.join(scratchDir('proxylab-cli-bundle-'), 'cache')): Fixture {
  const src = scratchDir('proxylab-cli-bundle-src-');
  const f: Fixture = {
    src,
    a: path.join(src, 'cli.ts'),
    b: path.join(src, 'lib.ts'),
    extra: path.join(src, 'package-lock.json'),
    builds: 0,
    spec: (during) => ({
      cacheDir,
      name: 'cli',
      outName: 'cli.js',
      recipe: { esbuild: '0.0.0', options: { bundle: true } },
      extraInputs: [f.extra],
      build: (out) => {
        f.builds += 1;
        const text = [f.a, f.b].map((file) => fs.readFileSync(file, 'utf8')).join('\n');
        fs.writeFileSync(path.join(out, 'cli.js'), text);
        during?.();
        return [f.b, f.a];
      },
    }),
  };
  write(f.a, 'main();');
  write(f.b, 'export const b = 1;');
  write(f.extra, '{}');
  return f;
}

test("the key is the synth-time cache's: one algorithm for every bundle proxylab caches", () => {
  // GIVEN a recipe and a file set
  const f = fixture();
  const recipe = { esbuild: '0.28.2', options: { format: 'cjs' } };
  // WHEN both caches compute the recipe hash and the content key
  const id = recipeHash('cli', recipe);
  // THEN they agree (the entry names, and so the layout of node_modules/.cache/proxylab/bundles)
  expect(id).toBe(synthCache.recipeHash('cli', recipe));
  expect(contentKey(id, [f.a, f.b, f.extra])).toBe(synthCache.contentKey(id, [f.extra, f.b, f.a]));
  expect(contentKey(id, [f.a, path.join(f.src, 'missing.ts')])).toBeNull();
});

test('built once, then found: the second start only hashes', () => {
  // GIVEN an empty cache
  const f = fixture();
  expect(lookup(f.spec())).toBeNull();
  // WHEN the CLI starts twice
  const first = cliBundle(f.spec());
  const second = cliBundle(f.spec());
  // THEN one build, one entry, the same file
  expect(f.builds).toBe(1);
  expect(second).toBe(first);
  expect(fs.readFileSync(first, 'utf8')).toBe('main();\nexport const b = 1;');
  // … and the cache holds the recipe's input list and one entry, nothing half-built
  const entries = fs.readdirSync(f.spec().cacheDir);
  expect(entries).toHaveLength(2);
  expect(entries).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^cli-[0-9a-f]{16}\.inputs\.json$/),
      expect.stringMatching(/^cli-[0-9a-f]{32}$/),
    ]),
  );
});

test.each([
  ['an input is edited', (f: Fixture) => write(f.b, 'export const b = 2;'), 'main();\nexport const b = 2;'],
  [
    'an input the build did not report changes (package-lock.json)',
    (f: Fixture) => write(f.extra, '{"x":1}'),
    'main();\nexport const b = 1;',
  ],
])('rebuilt when %s', (_, change, expected) => {
  // GIVEN a cached bundle
  const f = fixture();
  const before = cliBundle(f.spec());
  // WHEN an input changes and the CLI starts
  change(f);
  const after = cliBundle(f.spec());
  // THEN it is a new build in a new entry, with the new content
  expect(f.builds).toBe(2);
  expect(after).not.toBe(before);
  expect(fs.readFileSync(after, 'utf8')).toBe(expected);
  // … and the first entry is left as it was (stale entries go with `rm -rf node_modules/.cache`)
  expect(fs.existsSync(before)).toBe(true);
});

test('a deleted input is a miss (the build then fails as esbuild would, and nothing is filed)', () => {
  // GIVEN a cached bundle
  const f = fixture();
  cliBundle(f.spec());
  // WHEN an input it was built from is deleted
  fs.rmSync(f.b);
  // THEN the cache does not answer, and a build that cannot read it stores nothing
  expect(lookup(f.spec())).toBeNull();
  expect(() => cliBundle(f.spec())).toThrow(/ENOENT/);
  expect(fs.readdirSync(f.spec().cacheDir).filter((e) => e.startsWith('build-'))).toEqual([]);
});

test('two CLIs that build at once both get a working bundle, filed once', () => {
  // GIVEN an empty cache and a build that, while it runs, lets a second CLI build and file the same content
  const f = fixture();
  let inner = '';
  const outer = buildAndStore(f.spec(() => (inner = buildAndStore(f.spec()))));
  // THEN both bundles exist with the same content: the second to finish took the first's entry
  expect(f.builds).toBe(2);
  expect(outer).toBe(inner);
  expect(fs.readFileSync(outer, 'utf8')).toBe('main();\nexport const b = 1;');
  expect(fs.readdirSync(f.spec().cacheDir).filter((e) => /^cli-[0-9a-f]{32}$/.test(e))).toHaveLength(1);
  expect(fs.readdirSync(f.spec().cacheDir).filter((e) => e.startsWith('build-'))).toEqual([]);
});

test('inputs edited while the build ran: the bundle runs once and is not filed', () => {
  // GIVEN a build during which an input is saved again (an editor, a git checkout)
  const f = fixture();
  const file = buildAndStore(f.spec(() => fs.writeFileSync(f.b, 'export const b = 3;')));
  // THEN this start has a bundle, but under a one-off name the next start does not find
  expect(fs.existsSync(file)).toBe(true);
  expect(path.basename(path.dirname(path.dirname(file)))).toMatch(/^cli-unsettled-/);
  expect(lookup(f.spec())).toBeNull();
});

test("the CLI's own spec: scripts/cli.ts, tsconfig, package-lock and the bundler code, esbuild's version", () => {
  // GIVEN this checkout WHEN the CLI's spec is made
  const root = path.resolve(__dirname, '..', '..');
  const spec = cliSpec(root, '/nonexistent-cache');
  // THEN its recipe names the installed esbuild and the entry, and its extra inputs are the files esbuild does not list
  const esbuild = JSON.parse(
    fs.readFileSync(path.join(root, 'node_modules', 'esbuild', 'package.json'), 'utf8'),
  ) as { version: string };
  expect(spec.recipe).toMatchObject({
    esbuild: esbuild.version,
    options: { entryPoints: ['scripts/cli.ts'], packages: 'external' },
  });
  expect(spec.extraInputs.map((f) => path.relative(root, f)).sort()).toEqual([
    'package-lock.json',
    'scripts/cli-bundle.js',
    'tsconfig.json',
  ]);
  expect(lookup(spec)).toBeNull();
});
