/**
 * Output directories given on the command line (`--out DIR`): a path that is a file, or that has a
 * file where a parent directory should be, is the user's mistake (exit 2 with what is wrong), not
 * a raw EEXIST / ENOTDIR from mkdir deep inside a command.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from './errors';

/** Throws a UsageError unless `dir` is a directory or can be created as one. Creates nothing. */
export function checkOutDir(dir: string, flag = '--out'): void {
  let current = path.resolve(dir);
  for (;;) {
    let st: fs.Stats | null = null;
    try {
      st = fs.statSync(current);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR')
        throw new UsageError(`${flag} ${dir}: a parent of it is a file, not a directory`, {
          code: 'out-not-a-directory',
        });
      if (code !== 'ENOENT') throw new UsageError(`${flag} ${dir}: ${(err as Error).message}`);
    }
    if (st !== null) {
      if (st.isDirectory()) return;
      throw new UsageError(
        current === path.resolve(dir)
          ? `${flag} ${dir} exists and is not a directory; give a directory`
          : `${flag} ${dir}: ${current} is a file, not a directory`,
        { code: 'out-not-a-directory' },
      );
    }
    const parent = path.dirname(current);
    if (parent === current) return;
    current = parent;
  }
}
