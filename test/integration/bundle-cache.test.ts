/**
 * The bundle cache with the real esbuild (lib/constructs/lambda-bundle.ts): a second bundle of the
 * same handler is the cached one, and a changed import or changed esbuild options rebuild it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { lambdaBundleDir } from '../../lib/constructs/lambda-bundle';
import { scratchDir } from '../helpers/scratch';

const PAST = new Date('2026-01-01T00:00:00Z');

function write(file: string, text: string): void {
  fs.writeFileSync(file, text);
  fs.utimesSync(file, PAST, PAST);
}

test('same handler → same cached bundle; a changed import or target → a new one', () => {
  // GIVEN a handler importing a second file, and an empty cache
  const base = scratchDir('proxylab-lambda-cache-');
  const cache = path.join(base, 'cache');
  const entry = path.join(base, 'handler.ts');
  write(entry, "import { word } from './word';\nexport const handler = async () => word;\n");
  write(path.join(base, 'word.ts'), "export const word = 'first';\n");
  // WHEN bundled twice
  const first = lambdaBundleDir(entry, { target: 'node24' }, cache);
  const firstMtime = fs.statSync(path.join(first, 'index.js')).mtimeMs;
  const second = lambdaBundleDir(entry, { target: 'node24' }, cache);
  // THEN the second is the first directory, untouched, holding only index.js
  expect(second).toBe(first);
  expect(fs.readdirSync(first)).toEqual(['index.js']);
  expect(fs.statSync(path.join(second, 'index.js')).mtimeMs).toBe(firstMtime);
  expect(fs.readFileSync(path.join(first, 'index.js'), 'utf8')).toContain('first');

  // WHEN the imported file (not the entry) changes
  write(path.join(base, 'word.ts'), "export const word = 'second';\n");
  const changed = lambdaBundleDir(entry, { target: 'node24' }, cache);
  // THEN a new bundle with the new content
  expect(changed).not.toBe(first);
  expect(fs.readFileSync(path.join(changed, 'index.js'), 'utf8')).toContain('second');

  // WHEN only esbuild's options change
  const older = lambdaBundleDir(entry, { target: 'node18' }, cache);
  // THEN another entry again
  expect(older).not.toBe(changed);
  expect(new Set([first, changed, older]).size).toBe(3);
});
