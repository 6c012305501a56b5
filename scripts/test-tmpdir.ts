/**
 * Where `npm test` puts the tests' temporary files (scripts/test.ts sets TMPDIR for jest to it).
 *
 * The integration tests start some 60 throwaway PostgreSQL clusters (each a copy of a 40 MB data
 * directory, WAL, `pgbench -i`, pgbench's per-transaction logs) and write run directories. On an ext4
 * disk that is system time spent on block allocation and journalling; on a tmpfs (RAM) the same files
 * cost a fraction of it (bench/README.md "npm test time": the data directory copy 0.63 → 0.07 s).
 * Nothing the tests check depends on the disk: PostgreSQL behaves the same, only cheaper.
 *
 * So: a fresh directory under /dev/shm when it is a tmpfs with at least MIN_FREE_BYTES free,
 * world-writable with the sticky bit like /tmp (the clusters run as the `postgres` OS user when
 * the tests run as root), removed when jest ends. Otherwise — another OS, a small /dev/shm (Docker's
 * default is 64 MiB), or PROXYLAB_TEST_TMPDIR=keep — the usual os.tmpdir(), unchanged.
 * PROXYLAB_TEST_TMPDIR=DIR uses DIR (made if missing) and leaves it in place afterwards.
 *
 * A run killed before it could clean up leaves its directory behind; the next run removes every
 * such directory whose owning process (its name carries the pid) is gone.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isAlive } from '../lib/exec/process';

/** statfs f_type of a tmpfs (linux/magic.h TMPFS_MAGIC). */
const TMPFS_MAGIC = 0x01021994;
/** What the tests write at most at once (three workers, ≈ 15 clusters of ≈ 60 MB, logs, run dirs), with room to spare. */
export const MIN_FREE_BYTES = 4 * 1024 ** 3;
const SHM = '/dev/shm';
/**
 * Short on purpose: Unix-domain socket paths end at 107 bytes, and tests nest the stacks' socket
 * directories a few levels down (/dev/shm/plt-XXXXXX is 15 bytes longer than /tmp, which leaves
 * the deepest one, pooler-bootstrap's relay socket, at 94).
 */
const PREFIX = 'plt-';
/** In each directory made here: the pid of the `npm test` that made it. */
const OWNER_FILE = '.owner-pid';

export interface TestTmpdir {
  /** The environment jest runs in: TMPDIR set when the tests get their own directory. */
  readonly env: NodeJS.ProcessEnv;
  /** One line for the user: where the temporary files go and why; null when nothing changed. */
  readonly note: string | null;
  /** Removes the directory made for this run (nothing for a kept or chosen one). */
  remove(): void;
}

/** The filesystem facts the choice depends on (a seam for the unit test). */
export interface TmpdirFs {
  statfs(dir: string): { type: number; bavail: number; bsize: number } | null;
  pidAlive(pid: number): boolean;
}

const realFs: TmpdirFs = {
  statfs(dir) {
    try {
      const s = fs.statfsSync(dir);
      return { type: s.type, bavail: s.bavail, bsize: s.bsize };
    } catch {
      return null;
    }
  },
  pidAlive: isAlive,
};

/** Whether `dir` is a tmpfs with at least MIN_FREE_BYTES available, or why not. */
export function ramDirProblem(dir: string, fsys: TmpdirFs = realFs): string | null {
  const s = fsys.statfs(dir);
  if (s === null) return `${dir} does not exist`;
  if (s.type !== TMPFS_MAGIC) return `${dir} is not a tmpfs`;
  const free = s.bavail * s.bsize;
  if (free < MIN_FREE_BYTES)
    return `${dir} has ${(free / 1024 ** 3).toFixed(1)} GiB free, below ${MIN_FREE_BYTES / 1024 ** 3} GiB`;
  return null;
}

/** Directories under `root` left by test runs whose process is gone (owner: its OWNER_FILE's pid, or null when unreadable). */
export function staleDirs(
  root: string,
  owners: ReadonlyMap<string, number | null>,
  fsys: Pick<TmpdirFs, 'pidAlive'> = realFs,
): string[] {
  return [...owners]
    .filter(([, pid]) => pid !== null && Number.isInteger(pid) && pid > 0 && !fsys.pidAlive(pid))
    .map(([name]) => path.join(root, name));
}

/** The proxylab-made directories under `root` and the pid each names as its owner. */
function ownersIn(root: string): Map<string, number | null> {
  const out = new Map<string, number | null>();
  let names: string[];
  try {
    names = fs
      .readdirSync(root)
      .filter((n) => n.startsWith(PREFIX) && /^[A-Za-z0-9]{6}$/.test(n.slice(PREFIX.length)));
  } catch {
    return out;
  }
  for (const name of names) {
    const dir = path.join(root, name);
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    // only directories this user made (another user's are theirs to clean)
    if (st === undefined || !st.isDirectory() || st.uid !== process.getuid?.()) continue;
    out.set(name, ownerPid(path.join(dir, OWNER_FILE)));
  }
  return out;
}

function ownerPid(file: string): number | null {
  try {
    return Number(fs.readFileSync(file, 'utf8').trim());
  } catch {
    return null;
  }
}

export function testTmpdir(env: NodeJS.ProcessEnv, fsys: TmpdirFs = realFs): TestTmpdir {
  const unchanged: TestTmpdir = { env, note: null, remove: () => undefined };
  const chosen = env.PROXYLAB_TEST_TMPDIR;
  if (chosen === 'keep') return unchanged;
  if (chosen) {
    fs.mkdirSync(chosen, { recursive: true, mode: 0o1777 });
    return {
      env: { ...env, TMPDIR: chosen },
      note: `tests' temporary files: ${chosen}`,
      remove: () => undefined,
    };
  }
  const problem = ramDirProblem(SHM, fsys);
  if (problem !== null) return unchanged;
  for (const dir of staleDirs(SHM, ownersIn(SHM), fsys)) fs.rmSync(dir, { recursive: true, force: true });
  const dir = fs.mkdtempSync(path.join(SHM, PREFIX));
  fs.writeFileSync(path.join(dir, OWNER_FILE), `${process.pid}\n`);
  // like /tmp: the servers' OS user (postgres, when the tests run as root) makes its own dirs here
  fs.chmodSync(dir, 0o1777);
  return {
    env: { ...env, TMPDIR: dir },
    note: `tests' temporary files: ${dir} (tmpfs; PROXYLAB_TEST_TMPDIR=keep uses ${env.TMPDIR ?? '/tmp'})`,
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
