/**
 * Atomic, symlink-safe file writes, shared by every writer of a run directory (the local sink,
 * `proxylab report` / `compare`, `proxylab fetch`): a new temp file in the same directory, created
 * exclusively (`wx`, so it never follows a symlink planted at its name), then renamed over the
 * destination. A reader sees the old file or the new one, never half of one.
 *
 * A symlink at the destination is *replaced*, not refused: rename(2) swaps the directory entry and
 * never opens the link, so the link's target is left untouched while the run directory keeps
 * working (refusing would make a tarball with one planted link unreportable). A failed write (a full
 * disk, a read-only directory) removes the temporary and throws FileWriteError naming the file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InfrastructureError } from './errors';

/** Writes the temporary file; tests inject a failing one to simulate ENOSPC. */
export type WriteFileFn = (tmp: string, content: string | Uint8Array) => void;

const defaultWrite: WriteFileFn = (tmp, content) => fs.writeFileSync(tmp, content, { flag: 'wx' });

/** A file of a run (or report) could not be written: names the file; exit 1, code `file-write-failed`. */
export class FileWriteError extends InfrastructureError {
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`cannot write ${file}: ${why}`, { code: 'file-write-failed', cause });
    this.name = 'FileWriteError';
  }
}

let tmpCounter = 0;

export function writeFileAtomic(
  file: string,
  content: string | Uint8Array,
  write: WriteFileFn = defaultWrite,
): void {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${Date.now()}.${tmpCounter++}.tmp`);
  try {
    fs.mkdirSync(dir, { recursive: true });
    write(tmp, content);
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw new FileWriteError(file, e);
  }
}
