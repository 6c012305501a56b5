/**
 * Reading input the user or a run directory hands us, with bounds: regular files only (a device,
 * FIFO or socket is refused before anything is read, so `/dev/zero` cannot fill memory and a FIFO
 * cannot hang the CLI), a size limit per kind of file checked before reading, UTF-8 checked (a bad
 * byte named by offset), a byte order mark accepted, and JSON parsed by lib/core/json-text.ts
 * (grammar with line and column, depth, duplicate keys, number range).
 *
 * Files of a run directory are read through `readFileIn` / `listDirIn` only (an eslint rule forbids
 * readFileSync, readdirSync and createReadStream in the readers of runs): no symbolic link below
 * the run directory is followed, in the file's directories or at the file itself.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from './errors';
import { parseJsonText, stripBom, type ParseJsonOptions } from './json-text';

export {
  JSON_MAX_DEPTH,
  JsonInputError,
  JsonSyntaxError,
  lineColumnOf,
  parseJsonText,
  stripBom,
  type ParseJsonOptions,
} from './json-text';

/** Size limits per kind of file (bytes). Generous for real files, small enough to refuse garbage. */
export const READ_LIMITS = {
  /** A lab file is a few KiB. */
  lab: 1024 * 1024,
  /**
   * A pgbench script file a lab names (its own workload): a few statements. It travels in the run
   * request and in plan.json (once, by its SHA-256: lib/results/plan-file.ts), so it stays small.
   */
  script: 64 * 1024,
  /** manifest.json, plan.json: a plan of thousands of steps stays well below this. */
  runFile: 64 * 1024 * 1024,
  /** One step record with its per-second series. */
  stepRecord: 64 * 1024 * 1024,
  /** Metrics files (CloudWatch/PI series for a long run). */
  metrics: 256 * 1024 * 1024,
  /** Captured pgbench stdout/stderr/logs for `proxylab parse`. */
  capture: 512 * 1024 * 1024,
} as const;

export type ReadKind = keyof typeof READ_LIMITS;

function describeType(st: fs.Stats | fs.Dirent): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a directory';
  if (st.isFile()) return 'a regular file';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(bytes < 1024 * 1024 ? 2 : 0)} MiB`;
}

/**
 * A file that cannot be read as what it should be: `file` is its path, `reason` says why in words
 * that follow the path ("is a symbolic link; …"), `code` is stable (`file-missing`, `not-a-file`,
 * `symlink-refused`, `not-a-directory`, `file-too-large`, `invalid-utf8`, `file-unreadable`).
 * Exit 2: the input is wrong, not the machine.
 */
export class FileReadError extends UsageError {
  constructor(
    readonly file: string,
    readonly reason: string,
    code: string,
    cause?: unknown,
  ) {
    super(`${file} ${reason}`, { code, cause });
    this.name = 'FileReadError';
  }
}

/** Offset of the first byte that is not part of well-formed UTF-8 (RFC 3629), or -1 when all are. */
export function invalidUtf8Offset(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i] as number;
    if (c < 0x80) {
      i += 1;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lo = 0xa0; // overlong
      if (c === 0xed) hi = 0x9f; // surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lo = 0x90; // overlong
      if (c === 0xf4) hi = 0x8f; // beyond U+10FFFF
    } else return i;
    for (let k = 1; k <= need; k++) {
      const d = b[i + k];
      if (d === undefined) return i;
      if (k === 1 ? d < lo || d > hi : d < 0x80 || d > 0xbf) return i + k;
    }
    i += need + 1;
  }
  return -1;
}

/**
 * UTF-8 bytes as text without a leading byte order mark (accepted, as editors write one). With
 * `strict`, a byte that is not UTF-8 is refused by offset and line instead of becoming U+FFFD in
 * silence; captured program output (`capture`) is decoded leniently.
 */
export function decodeUtf8(bytes: Uint8Array, file: string, strict = true): string {
  if (strict) {
    const bad = invalidUtf8Offset(bytes);
    if (bad >= 0) {
      let line = 1;
      for (let k = 0; k < bad; k++) if (bytes[k] === 10) line += 1;
      const hex = (bytes[bad] as number).toString(16).toUpperCase().padStart(2, '0');
      throw new FileReadError(
        file,
        `is not valid UTF-8: byte 0x${hex} at byte offset ${bad} (line ${line}); save it as UTF-8`,
        'invalid-utf8',
      );
    }
  }
  return stripBom(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
}

function openError(file: string, err: unknown): FileReadError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new FileReadError(file, 'does not exist', 'file-missing', err);
  if (code === 'EISDIR') return new FileReadError(file, 'is a directory, not a file', 'not-a-file', err);
  if (code === 'ELOOP')
    return new FileReadError(
      file,
      'is a symbolic link; links in a run directory are not followed (proxylab never writes one)',
      'symlink-refused',
      err,
    );
  if (code === 'ENOTDIR')
    return new FileReadError(file, 'is below something that is not a directory', 'not-a-directory', err);
  return new FileReadError(file, `cannot be read: ${(err as Error).message}`, 'file-unreadable', err);
}

/** Reads an open descriptor: regular files only, the size checked before a byte is read. */
function readOpen(fd: number, file: string, kind: ReadKind, maxBytes: number): string {
  const st = fs.fstatSync(fd);
  if (!st.isFile()) {
    throw new FileReadError(file, `is ${describeType(st)}; expected a regular file`, 'not-a-file');
  }
  if (st.size > maxBytes) {
    throw new FileReadError(
      file,
      `is ${mib(st.size)}; a ${kind} file may be at most ${mib(maxBytes)}`,
      'file-too-large',
    );
  }
  // Read up to one byte past the limit: files whose size stat does not report (procfs) stop there.
  const buf = Buffer.alloc(Math.min(maxBytes + 1, Math.max(st.size, 0) + 1));
  let total = 0;
  for (;;) {
    if (total === buf.length) break;
    const n = fs.readSync(fd, buf, total, buf.length - total, null);
    if (n === 0) break;
    total += n;
  }
  if (total > maxBytes) {
    throw new FileReadError(
      file,
      `is larger than the ${mib(maxBytes)} a ${kind} file may be`,
      'file-too-large',
    );
  }
  return decodeUtf8(buf.subarray(0, total), file, kind !== 'capture');
}

function readWithFlags(file: string, kind: ReadKind, maxBytes: number, extraFlags: number): string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | extraFlags);
  } catch (err) {
    throw openError(file, err);
  }
  try {
    return readOpen(fd, file, kind, maxBytes);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The text of a regular file, at most `READ_LIMITS[kind]` bytes (or `maxBytes`), as UTF-8 (checked,
 * except for captures) without a leading byte order mark. Opened non-blocking so that a FIFO swapped
 * in after the check still cannot block; the type is checked on the open descriptor. For a file the
 * user names (a lab file, `--event`): a symlink there is the user's own choice and is followed.
 * Files inside a run directory go through `readFileIn`, which follows none.
 */
export function readTextFile(file: string, kind: ReadKind, maxBytes: number = READ_LIMITS[kind]): string {
  return readWithFlags(file, kind, maxBytes, 0);
}

// ---------------------------------------------------------------------------------------------
// Files inside a run directory (or any directory proxylab wrote and reads back): the one way in.
// ---------------------------------------------------------------------------------------------

/** `rel` split into segments; a path that could leave `root` is refused before touching the disk. */
function segmentsOf(root: string, rel: string): string[] {
  const segs = rel.split('/');
  if (
    rel.includes('\0') ||
    rel.includes('\\') ||
    rel.startsWith('/') ||
    segs.some((s) => s === '' || s === '.' || s === '..')
  ) {
    throw new FileReadError(
      path.join(root, rel),
      'is not a path inside the run directory (an absolute path, or a "..", "." or empty segment)',
      'path-escapes',
    );
  }
  return segs;
}

/**
 * Checks that the first `count` segments of `segs` below `root` are real directories — not
 * symbolic links, not files. Returns false when one does not exist (nothing below it can).
 */
function checkDirs(root: string, segs: readonly string[], count: number): boolean {
  let dir = root;
  for (let k = 0; k < count; k++) {
    dir = path.join(dir, segs[k] as string);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw openError(dir, err);
    }
    if (st.isSymbolicLink())
      throw new FileReadError(
        dir,
        'is a symbolic link; links in a run directory are not followed (proxylab never writes one)',
        'symlink-refused',
      );
    if (!st.isDirectory())
      throw new FileReadError(dir, `is ${describeType(st)}, not a directory`, 'not-a-directory');
  }
  return true;
}

/**
 * THE way to read a file of a run directory (or a lab's generated files): `rel` (`/`-separated)
 * under `root`, never following a symbolic link below `root` — not in the directories on the way
 * (checked with lstat) nor at the file itself (O_NOFOLLOW) — regular files only (a FIFO cannot hang
 * the reader, `/dev/zero` cannot fill memory), at most `READ_LIMITS[kind]` bytes checked before
 * reading, UTF-8 checked by byte offset. `root` itself may be a link: the user named it.
 *
 * Every problem is a FileReadError (exit 2) naming the file. Returns null when the file (or a
 * directory on its way) does not exist.
 */
export function readFileIn(root: string, rel: string, kind: ReadKind): string | null {
  const segs = segmentsOf(root, rel);
  if (!checkDirs(root, segs, segs.length - 1)) return null;
  const file = path.join(root, ...segs);
  try {
    return readWithFlags(file, kind, READ_LIMITS[kind], fs.constants.O_NOFOLLOW);
  } catch (err) {
    if (err instanceof FileReadError && err.code === 'file-missing') return null;
    throw err;
  }
}

/** `readFileIn`, then `parseJsonText` (depth, grammar with line and column, number range). */
export function readJsonIn(
  root: string,
  rel: string,
  kind: ReadKind,
  options: Omit<ParseJsonOptions, 'source'> = {},
): unknown {
  const text = readFileIn(root, rel, kind);
  return text === null ? null : parseJsonText(text, { ...options, source: path.join(root, rel) });
}

/** One entry of a listed directory, by its own type (a link is a link, whatever it points to). */
export interface DirEntry {
  readonly name: string;
  readonly type: 'file' | 'directory' | 'symlink' | 'other';
  /** In words, for messages: `a FIFO (named pipe)`, `a symbolic link`. */
  readonly described: string;
}

/**
 * THE way to list a directory of a run: `rel` ('' for the root) under `root`, which must be a real
 * directory (a symbolic link or a plain file there is a FileReadError naming it, exit 2 — never a
 * raw ENOTDIR). Entries are sorted by name and typed without following links. Null when missing.
 */
export function listDirIn(root: string, rel: string): DirEntry[] | null {
  if (rel !== '') {
    const segs = segmentsOf(root, rel);
    if (!checkDirs(root, segs, segs.length)) return null;
  }
  const dir = rel === '' ? root : path.join(root, rel);
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw openError(dir, err);
  }
  return entries
    .map((e) => ({
      name: e.name,
      type: e.isSymbolicLink()
        ? ('symlink' as const)
        : e.isDirectory()
          ? ('directory' as const)
          : e.isFile()
            ? ('file' as const)
            : ('other' as const),
      described: describeType(e),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Whether `rel` exists under `root` (as anything: a link counts, and is refused when read), its
 * directories checked like readFileIn's (a linked directory on the way is a FileReadError).
 */
export function existsIn(root: string, rel: string): boolean {
  const segs = segmentsOf(root, rel);
  if (!checkDirs(root, segs, segs.length - 1)) return false;
  try {
    fs.lstatSync(path.join(root, ...segs));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw openError(path.join(root, ...segs), err);
  }
}

/**
 * For writers: every directory from `root` down to `relDir` that exists is a real directory, not a
 * symbolic link (a `steps/` link would make a resume write outside the run directory). Missing
 * ones are fine: the writer creates them. Throws FileReadError (`symlink-refused`, exit 2).
 */
export function checkWritableDirIn(root: string, relDir: string): void {
  if (relDir === '' || relDir === '.') return;
  const segs = segmentsOf(root, relDir);
  checkDirs(root, segs, segs.length);
}

/** Read and parse a JSON file with both sets of bounds. */
export function readJsonFile(
  file: string,
  kind: ReadKind,
  options: Omit<ParseJsonOptions, 'source'> = {},
): unknown {
  return parseJsonText(readTextFile(file, kind), { ...options, source: file });
}
