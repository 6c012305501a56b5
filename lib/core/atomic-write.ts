/**
 * Atomic file writes, shared by every writer of a run directory (the local sink, `proxylab fetch`):
 * a new temp file in the same directory, created exclusively (so it never follows a symlink planted
 * at its name), then renamed over the destination — which replaces a symlink there instead of
 * writing through it. A reader sees the old file or the new one, never half of one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

let tmpCounter = 0;

export function writeFileAtomic(file: string, content: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${Date.now()}.${tmpCounter++}.tmp`,
  );
  try {
    fs.writeFileSync(tmp, content, { flag: 'wx' });
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}
