/**
 * The checkout's root (lib/core/repo-root.ts): found by its package.json's name from wherever the code
 * runs — lib/core as TypeScript, or the CLI bundle under node_modules/.cache/proxylab/ (the launcher,
 * scripts/proxylab.js; test/integration/cli-launcher.test.ts runs that bundle).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findRepoRoot, REPO_ROOT } from '../../lib/core/repo-root';
import { scratchDir } from '../helpers/scratch';

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value));
}

/** A fake checkout: package.json "proxylab" at the top, another package and the CLI's cache below. */
function fakeCheckout(): string {
  const root = scratchDir('proxylab-repo-root-');
  writeJson(path.join(root, 'package.json'), { name: 'proxylab' });
  writeJson(path.join(root, 'node_modules', 'pg', 'package.json'), { name: 'pg' });
  fs.mkdirSync(path.join(root, 'node_modules', '.cache', 'proxylab', 'cli-0123', 'out'), { recursive: true });
  fs.mkdirSync(path.join(root, 'lib', 'core'), { recursive: true });
  fs.writeFileSync(path.join(root, 'node_modules', '.cache', 'package.json'), '{ not json');
  return root;
}

test('REPO_ROOT is this checkout: the directory holding package.json and lib/core', () => {
  // GIVEN this test file in test/unit WHEN REPO_ROOT is read THEN it is two levels up
  expect(REPO_ROOT).toBe(path.resolve(__dirname, '..', '..'));
  expect(fs.existsSync(path.join(REPO_ROOT, 'lib', 'core', 'repo-root.ts'))).toBe(true);
});

test.each([
  ['lib/core (TypeScript)', ['lib', 'core']],
  [
    'the CLI bundle in the cache (past an unreadable package.json)',
    ['node_modules', '.cache', 'proxylab', 'cli-0123', 'out'],
  ],
  ['inside another package (its package.json has another name)', ['node_modules', 'pg']],
  ['the root itself', []],
])('from %s the root is the package.json named "proxylab"', (_, parts) => {
  // GIVEN a checkout with the CLI cache and another package in node_modules
  const root = fakeCheckout();
  // WHEN the root is looked up from below
  // THEN it is the checkout's top
  expect(findRepoRoot(path.join(root, ...parts))).toBe(root);
});

test('outside any checkout: an error naming where it looked', () => {
  // GIVEN a directory with no proxylab package.json above it
  const dir = scratchDir('proxylab-repo-root-none-');
  writeJson(path.join(dir, 'package.json'), { name: 'something-else' });
  // WHEN the root is looked up THEN the error says from where and what was missing
  expect(() => findRepoRoot(dir)).toThrow(`no package.json named "proxylab" at or above ${dir}`);
});
