/**
 * JSON text from outside (a lab file, a run file from disk or a bucket) parsed with the checks
 * JSON.parse lacks: the grammar checked first without recursion, so a problem is named by line and
 * column without quoting the text around it (JSON.parse's messages do, which would copy a planted
 * credentials file into a report); nesting depth bounded (a 5000-deep array cannot overflow a
 * stack later); duplicate keys refused where asked; numbers a double cannot hold named as such
 * (`1e400` would become Infinity, then "null"). A leading UTF-8 byte order mark is accepted. Pure:
 * no I/O, so lib/suite's schemas use it too.
 */
import { UsageError } from './errors';

/** Nesting deeper than this is not a lab file or a result, and would exhaust the parser's stack. */
export const JSON_MAX_DEPTH = 64;

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
 * JSON.parse with the checks it lacks, as one UsageError per problem found first: the grammar, with
 * line and column (JsonSyntaxError), depth beyond `maxDepth`, duplicate keys (when asked), and numbers
 * a double cannot hold. A leading byte order mark is accepted (editors write one). The scan is
 * iterative, so a hostile 5000-deep file is refused instead of overflowing the stack.
 */
export function parseJsonText(text: string, options: ParseJsonOptions): unknown {
  const body = stripBom(text);
  scanJson(body, options);
  // The scan accepted the grammar, so JSON.parse cannot fail on it (and its messages, which quote
  // the text, are never shown).
  return JSON.parse(body) as unknown;
}

interface Frame {
  readonly kind: 'object' | 'array';
  readonly keys: Set<string>;
  index: number;
  key: string | null;
}

/** A key longer than this is cut in a path (`["aaaa…"]`): a key of the file must not fill the message. */
const PATH_KEY_MAX = 40;
/** A shortened path keeps at most this many segments: the first ones, `…`, the last. */
const PATH_SHORT_SEGMENTS = 4;

/** The segments of the path to the current value: `[0]`, `.name`, `["a b"]`. */
function segmentsOf(stack: readonly Frame[]): string[] {
  return stack.flatMap((f) => {
    if (f.kind === 'array') return [`[${f.index}]`];
    if (f.key === null) return [];
    const key = f.key.length > PATH_KEY_MAX ? `${f.key.slice(0, PATH_KEY_MAX)}…` : f.key;
    return [/^[A-Za-z_$][\w$]*$/.test(f.key) ? `.${key}` : `[${JSON.stringify(key)}]`];
  });
}

/**
 * The path of the current value (`tags.owner`, `(top level)`). `short`: more than PATH_SHORT_SEGMENTS
 * segments become the first three, `…` and the last (`note[0][0]…[0]`), so a too-deep file's
 * error is one short line, not 64 levels of path.
 */
function pathOf(stack: readonly Frame[], short = false): string {
  const segs = segmentsOf(stack);
  const shown =
    short && segs.length > PATH_SHORT_SEGMENTS
      ? [...segs.slice(0, PATH_SHORT_SEGMENTS - 1), '…', ...segs.slice(-1)]
      : segs;
  const out = shown.join('');
  return out.startsWith('.') ? out.slice(1) : out || '(top level)';
}

/** 1-based line and column (in characters) of an offset in `text`. */
export function lineColumnOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text.charCodeAt(k) === 10) {
      line += 1;
      lineStart = k + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * JSON text that does not follow the grammar: where (line and column) and what was expected. The
 * message never quotes the text around the error (JSON.parse's does: a credentials file planted as
 * a run file would be copied into the report through it); at most the one offending character.
 */
export class JsonSyntaxError extends UsageError {
  constructor(
    readonly source: string,
    readonly line: number,
    readonly column: number,
    readonly detail: string,
  ) {
    super(`${source} is not valid JSON: ${detail} (line ${line}, column ${column})`, {
      code: 'invalid-json',
    });
    this.name = 'JsonSyntaxError';
  }
}

/** One character for a message: printable ASCII as itself, anything else by code point (and name). */
function describeChar(ch: string | undefined): string {
  if (ch === undefined) return 'the end of the text';
  const code = ch.codePointAt(0) ?? 0;
  if (code === 0xfeff) return 'a UTF-8 byte order mark (U+FEFF)';
  if (code > 0x20 && code < 0x7f) return `'${ch}'`;
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const LITERALS = ['true', 'false', 'null'] as const;
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/** Where the scan is: value: a value must come; key: a quoted key must come; colon: ':' must come; after: ',' or a close. */
type ScanState = 'value' | 'key' | 'colon' | 'after';

/** The scanner's state: the text, the open containers and what must come next at `i`. */
interface Scan {
  readonly text: string;
  readonly options: ParseJsonOptions;
  readonly maxDepth: number;
  readonly stack: Frame[];
  i: number;
  state: ScanState;
  /** In `value` right after '[' / `key` right after '{', the close is allowed too. */
  emptyOk: boolean;
}

function fail(scan: Scan, at: number, what: string): never {
  const { line, column } = lineColumnOf(scan.text, at);
  throw new JsonSyntaxError(scan.options.source, line, column, what);
}

/** The offset just after the string that starts (with its '"') at `from`. */
function scanString(scan: Scan, from: number): number {
  const { text } = scan;
  const n = text.length;
  let j = from + 1;
  for (;;) {
    if (j >= n) fail(scan, from, 'a string that never ends (no closing ")');
    const c = text.charCodeAt(j);
    if (c === 0x22) return j + 1;
    if (c < 0x20)
      fail(scan, j, `${describeChar(text[j])} inside a string (write control characters as \\u00XX)`);
    if (c === 0x5c) {
      const e = text[j + 1];
      if (e === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(j + 2, j + 6)))
          fail(scan, j, 'a \\u escape without 4 hex digits');
        j += 6;
      } else if (e !== undefined && ESCAPES.has(e)) j += 2;
      else fail(scan, j, `an unknown escape \\${e === undefined ? '' : describeChar(e)} in a string`);
    } else j += 1;
  }
}

/** '{' or '[' at `i`: a new frame, unless that is one level too deep. */
function openContainer(scan: Scan, c: '{' | '['): void {
  const { stack, maxDepth } = scan;
  if (stack.length >= maxDepth) {
    throw new JsonInputError(
      scan.options.source,
      pathOf(stack, true),
      `nested deeper than ${maxDepth} levels (${stack.length + 1} levels at ${
        segmentsOf(stack).length > PATH_SHORT_SEGMENTS ? 'the path shown, shortened' : 'this path'
      }); not a file proxylab writes or reads`,
      'json-too-deep',
    );
  }
  stack.push({ kind: c === '{' ? 'object' : 'array', keys: new Set(), index: 0, key: null });
  scan.state = c === '{' ? 'key' : 'value';
  scan.emptyOk = true;
  scan.i += 1;
}

/** A number at `i`: in JSON's format, and one a double can hold. */
function scanNumber(scan: Scan): void {
  NUMBER.lastIndex = scan.i;
  const m = NUMBER.exec(scan.text);
  if (!m) fail(scan, scan.i, `a number that does not follow JSON's number format`);
  const literal = m[0];
  if (!Number.isFinite(Number(literal))) {
    throw new JsonInputError(
      scan.options.source,
      pathOf(scan.stack),
      `the number ${literal} is out of JSON's range (a double holds up to ±1.8e308)`,
      'number-out-of-range',
      literal,
    );
  }
  scan.i += literal.length;
  scan.state = 'after';
}

/** State `value`: a value (or, right after '[', the ']' of an empty array). */
function stepValue(scan: Scan, c: string, emptyOk: boolean): void {
  const { stack, text } = scan;
  const top = stack[stack.length - 1];
  if (emptyOk && c === ']') {
    stack.pop();
    scan.state = 'after';
    scan.i += 1;
  } else if (c === ']' && top?.kind === 'array') {
    fail(scan, scan.i, "']' after ',' (JSON allows no trailing comma)");
  } else if (c === '{' || c === '[') {
    openContainer(scan, c);
  } else if (c === '"') {
    scan.i = scanString(scan, scan.i);
    scan.state = 'after';
  } else if (c === '-' || (c >= '0' && c <= '9')) {
    scanNumber(scan);
  } else {
    const lit = LITERALS.find((l) => text.startsWith(l, scan.i));
    if (lit === undefined) fail(scan, scan.i, `${describeChar(c)} where a value was expected`);
    scan.i += (lit as string).length;
    scan.state = 'after';
  }
}

/** State `key`: a quoted key (or, right after '{', the '}' of an empty object). */
function stepKey(scan: Scan, c: string, emptyOk: boolean): void {
  const { stack, options } = scan;
  if (emptyOk && c === '}') {
    stack.pop();
    scan.state = 'after';
    scan.i += 1;
  } else if (c === '"') {
    const end = scanString(scan, scan.i);
    const key = JSON.parse(scan.text.slice(scan.i, end)) as string;
    const frame = stack[stack.length - 1] as Frame;
    if (options.rejectDuplicateKeys && frame.keys.has(key)) {
      frame.key = key;
      throw new JsonInputError(
        options.source,
        pathOf(stack),
        `duplicate key ${JSON.stringify(key)} (JSON keeps only the last; say it once)`,
        'duplicate-key',
        key,
      );
    }
    frame.keys.add(key);
    frame.key = key;
    scan.i = end;
    scan.state = 'colon';
  } else if (c === '}') fail(scan, scan.i, "'}' after ',' (JSON allows no trailing comma)");
  else fail(scan, scan.i, `${describeChar(c)} where a quoted key was expected`);
}

/** State `after` inside a container: ',' or the container's close. */
function stepAfter(scan: Scan, c: string): void {
  const frame = scan.stack[scan.stack.length - 1] as Frame;
  const close = frame.kind === 'array' ? ']' : '}';
  if (c === ',') {
    if (frame.kind === 'array') frame.index += 1;
    scan.state = frame.kind === 'array' ? 'value' : 'key';
    scan.i += 1;
  } else if (c === close) {
    scan.stack.pop();
    scan.i += 1;
  } else fail(scan, scan.i, `${describeChar(c)} where ',' or '${close}' was expected`);
}

/**
 * Checks `text` against the JSON grammar (RFC 8259) without recursion, so JSON.parse only ever sees
 * text it accepts: the first problem is thrown with its line and column (JsonSyntaxError), or at
 * its JSON path for depth, duplicate keys and numbers a double cannot hold (JsonInputError).
 */
function scanJson(text: string, options: ParseJsonOptions): void {
  const scan: Scan = {
    text,
    options,
    maxDepth: options.maxDepth ?? JSON_MAX_DEPTH,
    stack: [],
    i: 0,
    state: 'value',
    emptyOk: false,
  };
  const n = text.length;
  for (;;) {
    let i = scan.i;
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i += 1;
    scan.i = i;
    const c = text[i];
    if (scan.state === 'after' && scan.stack.length === 0) {
      if (c === undefined) return;
      fail(scan, i, `${describeChar(c)} after the end of the JSON value`);
    }
    if (c === undefined)
      return fail(
        scan,
        i,
        scan.stack.length === 0 && scan.state === 'value'
          ? 'there is no JSON value (the text is empty)'
          : 'the text ends before the JSON value is complete',
      );
    // Only the step right after an open may take the close of an empty container.
    const emptyOk = scan.emptyOk;
    scan.emptyOk = false;
    if (scan.state === 'value') stepValue(scan, c, emptyOk);
    else if (scan.state === 'key') stepKey(scan, c, emptyOk);
    else if (scan.state === 'colon') {
      if (c !== ':') fail(scan, i, `${describeChar(c)} where ':' after a key was expected`);
      scan.i += 1;
      scan.state = 'value';
    } else stepAfter(scan, c);
  }
}
