/**
 * BlobStore on the local filesystem, rooted at a run directory. Writes are atomic and never follow
 * a symlink at the destination (lib/core/atomic-write.ts); a key that would leave the root is refused.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic, type WriteFileFn } from '../core/atomic-write';
import { InfrastructureError } from '../core/errors';
import type { BlobStore } from '../engine/blob-store';

export class FileSystemBlobStore implements BlobStore {
  readonly root: string;

  /** @param writeFn writes a temporary file (tests inject a failing one to simulate a full disk). */
  constructor(
    root: string,
    private readonly writeFn?: WriteFileFn,
  ) {
    this.root = path.resolve(root);
  }

  private file(key: string): string {
    const file = path.resolve(this.root, key);
    if (!file.startsWith(this.root + path.sep))
      throw new InfrastructureError(`refusing ${key}: it escapes ${this.root}`);
    return file;
  }

  where(key: string): string {
    return path.join(this.root, key);
  }

  read(key: string): Promise<string | null> {
    return settle(() => {
      const file = this.file(key);
      return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
    });
  }

  write(key: string, body: string): Promise<void> {
    return settle(() => writeFileAtomic(this.file(key), body, this.writeFn));
  }

  exists(key: string): Promise<boolean> {
    return settle(() => fs.existsSync(this.file(key)));
  }

  list(prefix: string): Promise<string[]> {
    return settle(() => {
      const out: string[] = [];
      const walk = (dir: string, rel: string): void => {
        if (!fs.existsSync(dir)) return;
        for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
          const key = rel === '' ? entry.name : `${rel}/${entry.name}`;
          if (entry.isDirectory()) walk(path.join(dir, entry.name), key);
          else if (entry.isFile()) out.push(key);
        }
      };
      // Only the prefix's directory is walked (`steps/` need not visit raw output and metrics).
      const dir = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
      walk(dir === '' ? this.root : this.file(dir), dir);
      return out.filter((k) => k.startsWith(prefix)).sort();
    });
  }
}

/** Synchronous file work as a promise: a throw becomes a rejection, as the async callers expect. */
function settle<T>(work: () => T): Promise<T> {
  return new Promise((resolve) => resolve(work()));
}
