/**
 * Reading input the user or a run directory hands us, with bounds: regular files only (a device,
 * FIFO or socket is refused before anything is read, so `/dev/zero` cannot fill memory and a FIFO
 * cannot hang the CLI), a size limit per kind of file, a UTF-8 byte order mark accepted, and JSON
 * parsed with a depth limit, duplicate keys refused where asked, and numbers outside the range a
 * double can hold named as such (JSON.parse turns `1e400` into Infinity, which JSON cannot write
 * back and zod reports as "null").
 */
import * as fs from 'node:fs';
import { UsageError } from './errors';

/** Size limits per kind of file (bytes). Generous for real files, small enough to refuse garbage. */
export const READ_LIMITS = {
  /** A lab file is a few KiB. */
  lab: 1024 * 1024,
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

/** Nesting deeper than this is not a lab file or a result, and would exhaust the parser's stack. */
export const JSON_MAX_DEPTH = 64;

function describeType(st: fs.Stats): string {
  if (st.isDirectory()) return 'a directory';
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
 * The text of a regular file, at most `READ_LIMITS[kind]` bytes (or `maxBytes`), as UTF-8 without a
 * leading byte order mark. Opened non-blocking so that a FIFO swapped in after the check still
 * cannot block; the type is checked on the open descriptor.
 */
export function readTextFile(file: string, kind: ReadKind, maxBytes: number = READ_LIMITS[kind]): string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UsageError(`${file} does not exist`, { code: 'file-missing' });
    if (code === 'EISDIR') throw new UsageError(`${file} is a directory, not a file`, { code: 'not-a-file' });
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`, { code: 'file-unreadable' });
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) {
      throw new UsageError(`${file} is ${describeType(st)}; expected a regular file`, { code: 'not-a-file' });
    }
    if (st.size > maxBytes) {
      throw new UsageError(`${file} is ${mib(st.size)}; a ${kind} file may be at most ${mib(maxBytes)}`, {
        code: 'file-too-large',
      });
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
      throw new UsageError(`${file} is larger than the ${mib(maxBytes)} a ${kind} file may be`, {
        code: 'file-too-large',
      });
    }
    return stripBom(buf.subarray(0, total).toString('utf8'));
  } finally {
    fs.closeSync(fd);
  }
}

export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** A problem found in JSON text, with where it is (`tags.owner`, `(top level)`) and what it is. */
export class JsonInputError extends UsageError {
  constructor(
    source: string,
    readonly jsonPath: string,
    readonly detail: string,
    code: string,
    /** The offending key or number literal, when there is one. */
    readonly offending?: string,
  ) {
    super(`${source}: ${jsonPath}: ${detail}`, { code });
  }
}

export interface ParseJsonOptions {
  /** Named in every error. */
  readonly source: string;
  /** @default JSON_MAX_DEPTH */
  readonly maxDepth?: number;
  /** Refuse `{"a":1,"a":2}` (JSON.parse keeps the last silently). @default false */
  readonly rejectDuplicateKeys?: boolean;
}

/**
 * JSON.parse with the checks it lacks, as one UsageError per problem found first: depth beyond
 * `maxDepth`, duplicate keys (when asked), and numbers a double cannot hold. The scan is iterative,
 * so a hostile 5000-deep file is refused instead of overflowing the stack.
 */
export function parseJsonText(text: string, options: ParseJsonOptions): unknown {
  const body = stripBom(text);
  scanJson(body, options);
  try {
    return JSON.parse(body) as unknown;
  } catch (err) {
    throw new UsageError(`${options.source} is not valid JSON: ${(err as Error).message}`, {
      code: 'invalid-json',
      cause: err,
    });
  }
}

interface Frame {
  readonly kind: 'object' | 'array';
  readonly keys: Set<string>;
  index: number;
  key: string | null;
  /** In an object: the next string is a key. */
  expectKey: boolean;
}

function pathOf(stack: readonly Frame[]): string {
  let out = '';
  for (const f of stack) {
    if (f.kind === 'array') out += `[${f.index}]`;
    else if (f.key !== null)
      out += /^[A-Za-z_$][\w$]*$/.test(f.key) ? `.${f.key}` : `[${JSON.stringify(f.key)}]`;
  }
  return out.startsWith('.') ? out.slice(1) : out || '(top level)';
}

function scanJson(text: string, options: ParseJsonOptions): void {
  const maxDepth = options.maxDepth ?? JSON_MAX_DEPTH;
  const stack: Frame[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      // A string: find its end, honouring escapes.
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = stack[stack.length - 1];
      if (top && top.kind === 'object' && top.expectKey) {
        let key: string;
        try {
          key = JSON.parse(text.slice(i, j + 1)) as string;
        } catch {
          return; // malformed: JSON.parse reports it with a position
        }
        if (options.rejectDuplicateKeys && top.keys.has(key)) {
          top.key = key;
          throw new JsonInputError(
            options.source,
            pathOf(stack),
            `duplicate key ${JSON.stringify(key)} (JSON keeps only the last; say it once)`,
            'duplicate-key',
            key,
          );
        }
        top.keys.add(key);
        top.key = key;
        top.expectKey = false;
      }
      i = j + 1;
      continue;
    }
    if (c === '{' || c === '[') {
      if (stack.length >= maxDepth) {
        throw new JsonInputError(
          options.source,
          pathOf(stack),
          `nested deeper than ${maxDepth} levels; not a file proxylab writes or reads`,
          'json-too-deep',
        );
      }
      stack.push({
        kind: c === '{' ? 'object' : 'array',
        keys: new Set(),
        index: 0,
        key: null,
        expectKey: c === '{',
      });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      const top = stack[stack.length - 1];
      if (top?.kind === 'object') top.expectKey = true;
      else if (top) top.index += 1;
    } else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      let j = i + 1;
      while (j < n && /[0-9eE+.-]/.test(text[j] ?? '')) j += 1;
      const literal = text.slice(i, j);
      const value = Number(literal);
      if (!Number.isFinite(value)) {
        throw new JsonInputError(
          options.source,
          pathOf(stack),
          `the number ${literal} is out of JSON's range (a double holds up to ±1.8e308)`,
          'number-out-of-range',
          literal,
        );
      }
      i = j;
      continue;
    }
    i += 1;
  }
}

/** Read and parse a JSON file with both sets of bounds. */
export function readJsonFile(
  file: string,
  kind: ReadKind,
  options: Omit<ParseJsonOptions, 'source'> = {},
): unknown {
  return parseJsonText(readTextFile(file, kind), { ...options, source: file });
}
