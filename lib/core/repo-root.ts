/**
 * The proxylab checkout's root directory (package.json, cdk.json, lib/, scripts/), found the same way
 * wherever this code runs from: as TypeScript (tsx, jest: lib/core/) or bundled into the CLI under
 * node_modules/.cache/proxylab/ (scripts/proxylab.js). Never the working directory: the CLI runs
 * from anywhere inside or outside the checkout.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** package.json's `name` that marks the root. */
export const PACKAGE_NAME = 'proxylab';

/**
 * The nearest directory at or above `from` whose package.json is named "proxylab"; an Error naming
 * `from` when there is none (a copy of the code outside a checkout).
 */
export function findRepoRoot(from: string): string {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    if (packageName(path.join(dir, 'package.json')) === PACKAGE_NAME) return dir;
    if (path.dirname(dir) === dir)
      throw new Error(
        `no package.json named "${PACKAGE_NAME}" at or above ${from}: not inside a proxylab checkout`,
      );
  }
}

function packageName(file: string): unknown {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
    return typeof parsed === 'object' && parsed !== null && 'name' in parsed ? parsed.name : undefined;
  } catch {
    return undefined; // missing or not JSON: not the root
  }
}

/** The repository root of the code now running. */
export const REPO_ROOT = findRepoRoot(__dirname);
