/**
 * The synth-time bundle cache (lib/constructs/bundle-cache.ts) with an injected build: a hit on the
 * same content, a miss on a changed, deleted or extra input, on changed options, and no entry
 * filed for a build whose inputs changed while it ran.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  cachedBundle,
  contentKey,
  metafileInputs,
  type BundleRecipe,
} from '../../lib/constructs/bundle-cache';
import { scratchDir } from '../helpers/scratch';

/** Well before any build in this file: inputs written "long ago" are settled. */
const PAST = new Date('2026-01-01T00:00:00Z');

function write(file: string, text: string): void {
  fs.writeFileSync(file, text);
  fs.utimesSync(file, PAST, PAST);
}

interface Fixture {
  readonly root: string;
  readonly src: string;
  readonly a: string;
  readonly b: string;
  readonly extra: string;
  /** Calls of the build so far. */
  builds: number;
  recipe(options?: unknown, during?: () => void): BundleRecipe<{ readonly lines: number }>;
}

function fixture(): Fixture {
  const base = scratchDir('proxylab-bundle-cache-');
  const src = path.join(base, 'src');
  fs.mkdirSync(src);
  const f: Fixture = {
    root: path.join(base, 'cache'),
    src,
    a: path.join(src, 'a.ts'),
    b: path.join(src, 'b.ts'),
    extra: path.join(src, 'tsconfig.json'),
    builds: 0,
    recipe(options = { minify: true }, during) {
      return {
        name: 'demo',
        recipe: { options },
        extraInputs: [f.extra],
        build: (out) => {
          f.builds += 1;
          // A "bundle": the concatenated inputs, as esbuild would read them.
          const text = [f.a, f.b].map((file) => fs.readFileSync(file, 'utf8')).join('\n');
          fs.writeFileSync(path.join(out, 'bundle.js'), text);
          during?.();
          return { inputs: [f.b, f.a], report: { lines: text.split('\n').length } };
        },
      };
    },
  };
  write(f.a, 'export const a = 1;');
  write(f.b, 'export const b = 2;');
  write(f.extra, '{}');
  return f;
}

test('the second lookup of unchanged content is a hit: same key, same directory, no build', () => {
  // GIVEN
  const f = fixture();
  // WHEN
  const first = cachedBundle(f.root, f.recipe());
  const second = cachedBundle(f.root, f.recipe());
  // THEN
  expect(f.builds).toBe(1);
  expect([first.hit, second.hit]).toEqual([false, true]);
  expect(second.key).toBe(first.key);
  expect(second.dir).toBe(first.dir);
  expect(second.report).toEqual({ lines: 2 });
  // … and the bundle directory holds only what the build wrote (what a CDK asset fingerprints)
  expect(fs.readdirSync(second.dir)).toEqual(['bundle.js']);
});

test.each([
  ['an input file’s content', (f: Fixture) => write(f.b, 'export const b = 3;')],
  ['a file esbuild does not list (tsconfig.json)', (f: Fixture) => write(f.extra, '{"compilerOptions":{}}')],
])('a change to %s is a miss with a new key; changing it back finds the old entry', (_what, change) => {
  // GIVEN a cached bundle
  const f = fixture();
  const before = cachedBundle(f.root, f.recipe());
  // WHEN an input changes
  change(f);
  const after = cachedBundle(f.root, f.recipe());
  // THEN it is rebuilt, under another key and directory
  expect(after.hit).toBe(false);
  expect(f.builds).toBe(2);
  expect(after.key).not.toBe(before.key);
  expect(after.dir).not.toBe(before.dir);
  expect(fs.readFileSync(path.join(before.dir, 'bundle.js'), 'utf8')).toContain('b = 2');
  // WHEN every input is as it was: the first entry again, content-addressed, without a build
  write(f.b, 'export const b = 2;');
  write(f.extra, '{}');
  const again = cachedBundle(f.root, f.recipe());
  expect({ hit: again.hit, key: again.key, builds: f.builds }).toEqual({
    hit: true,
    key: before.key,
    builds: 2,
  });
});

test('changed esbuild options (the recipe) are a miss even with the same files', () => {
  // GIVEN
  const f = fixture();
  const minified = cachedBundle(f.root, f.recipe({ minify: true }));
  // WHEN
  const plain = cachedBundle(f.root, f.recipe({ minify: false }));
  // THEN
  expect(plain.hit).toBe(false);
  expect(plain.key).not.toBe(minified.key);
  expect(f.builds).toBe(2);
  // … and each recipe keeps its own entry
  expect(cachedBundle(f.root, f.recipe({ minify: true })).hit).toBe(true);
  expect(f.builds).toBe(2);
});

test('a deleted input is a miss (and the build, not the cache, reports it)', () => {
  // GIVEN
  const f = fixture();
  cachedBundle(f.root, f.recipe());
  // WHEN
  fs.rmSync(f.b);
  // THEN the lookup does not trust the entry: it builds, and this build fails on the missing file
  expect(() => cachedBundle(f.root, f.recipe())).toThrow(/b\.ts/);
  expect(f.builds).toBe(2);
});

test('a build whose input changed while it ran is used once and never filed under a key', () => {
  // GIVEN a build during which b.ts is saved (mtime now)
  const f = fixture();
  const racy = cachedBundle(
    f.root,
    f.recipe(undefined, () => fs.writeFileSync(f.b, 'export const b = 4;')),
  );
  // THEN its bundle is there for this synth, in a one-off directory
  expect(racy.hit).toBe(false);
  expect(path.basename(path.dirname(racy.dir))).toMatch(/^demo-unsettled-/);
  expect(fs.readFileSync(path.join(racy.dir, 'bundle.js'), 'utf8')).toContain('b = 2');
  // … and the next lookup builds again (from what is on disk now) instead of reusing it
  write(f.b, 'export const b = 4;');
  const next = cachedBundle(f.root, f.recipe());
  expect(next.hit).toBe(false);
  expect(f.builds).toBe(2);
  expect(fs.readFileSync(path.join(next.dir, 'bundle.js'), 'utf8')).toContain('b = 4');
});

test('contentKey: order-independent, path-sensitive, null for a missing file', () => {
  const f = fixture();
  expect(contentKey('r', [f.a, f.b])).toBe(contentKey('r', [f.b, f.a]));
  expect(contentKey('r', [f.a, f.b])).not.toBe(contentKey('other', [f.a, f.b]));
  const copy = path.join(f.src, 'c.ts');
  write(copy, fs.readFileSync(f.a, 'utf8'));
  expect(contentKey('r', [copy, f.b])).not.toBe(contentKey('r', [f.a, f.b]));
  expect(contentKey('r', [f.a, path.join(f.src, 'gone.ts')])).toBeNull();
});

test('metafileInputs resolves against the working directory and drops esbuild’s virtual inputs', () => {
  const f = fixture();
  expect(
    metafileInputs({ 'a.ts': {}, '<define:process.env>': {}, '(disabled):fs': {}, 'b.ts': {} }, f.src),
  ).toEqual([f.a, f.b]);
});

test('a name that is not a plain directory name is refused, naming it', () => {
  const f = fixture();
  expect(() => cachedBundle(f.root, { ...f.recipe(), name: '../up' })).toThrow(
    /name "\.\.\/up" is not allowed \(letters a-z, digits, '-'\)/,
  );
});
