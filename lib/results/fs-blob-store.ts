/**
 * BlobStore on the local filesystem, rooted at a run directory. Every read and listing goes through
 * lib/core/read.ts (readFileIn / listDirIn): no symbolic link below the root is followed, special
 * files are refused by type, sizes are bounded per kind of file. Writes are atomic, never follow a
 * symlink at the destination (lib/core/atomic-write.ts) and refuse a linked directory on the way
 * (a `steps/` link would make a resume write outside the run directory); a key that would leave
 * the root is refused.
 */
import * as path from 'node:path';
import { writeFileAtomic, type WriteFileFn } from '../core/atomic-write';
import { InfrastructureError } from '../core/errors';
import { checkWritableDirIn, existsIn, listDirIn, readFileIn } from '../core/read';
import { readKindOf, type BlobStore } from './blob-store';

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
      this.file(key);
      return readFileIn(this.root, key, readKindOf(key));
    });
  }

  write(key: string, body: string): Promise<void> {
    return settle(() => {
      const file = this.file(key);
      checkWritableDirIn(this.root, path.posix.dirname(key));
      writeFileAtomic(file, body, this.writeFn);
    });
  }

  exists(key: string): Promise<boolean> {
    return settle(() => {
      this.file(key);
      return existsIn(this.root, key);
    });
  }

  /**
   * Keys under a prefix, sorted. Links and special files are listed too (as the keys they sit at),
   * so reading one refuses it by name instead of leaving it out in silence; a linked directory is
   * never descended into (listDirIn refuses it).
   */
  list(prefix: string): Promise<string[]> {
    return settle(() => {
      const out: string[] = [];
      const walk = (rel: string): void => {
        for (const entry of listDirIn(this.root, rel) ?? []) {
          const key = rel === '' ? entry.name : `${rel}/${entry.name}`;
          if (entry.type === 'directory') walk(key);
          else out.push(key);
        }
      };
      // Only the prefix's directory is walked (`steps/` need not visit raw output and metrics).
      const dir = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
      if (dir !== '') this.file(dir);
      walk(dir);
      return out.filter((k) => k.startsWith(prefix)).sort();
    });
  }
}

/** Synchronous file work as a promise: a throw becomes a rejection, as the async callers expect. */
function settle<T>(work: () => T): Promise<T> {
  return new Promise((resolve) => resolve(work()));
}
