/**
 * Temporary directories for tests that are removed when the test file ends (registered by
 * test/helpers/cleanup.ts through jest's setupFilesAfterEnv), so a test run leaves /tmp as it
 * found it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const made: string[] = [];

/** `fs.mkdtempSync(<tmpdir>/<prefix>)`, removed after the current test file. */
export function scratchDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Remove every directory scratchDir made in this test file (jest runs each file in its own module registry). */
export function removeScratchDirs(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}
