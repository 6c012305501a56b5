/**
 * Checks an AWS SDK v3 command input against the service's published model, offline: botocore's
 * JSON models (`botocore/data/<service>/<api-version>/service-2.json.gz`, the newest api version),
 * which moto brings with it. aws-sdk-client-mock and moto accept any input; AWS does not, and a
 * wrong enum or an out-of-range number would first fail in a real account.
 *
 * What it checks, recursively: members the model does not have (a typo, or a member of another
 * operation), required members, enum values, numeric min/max, length min/max of strings, blobs,
 * lists and maps, string patterns, and the JS type the SDK expects for each model type (string,
 * boolean, integer/long (whole numbers), float/double, timestamp (Date), blob (Uint8Array, string,
 * stream), list (array), map and structure (plain objects), unions (exactly one member set)).
 *
 * Patterns: the Smithy spec makes `pattern` an ECMA-262 regular expression, not implicitly
 * anchored (https://smithy.io/2.0/spec/constraint-traits.html#pattern-trait), so a pattern is tested
 * with RegExp#test as written. A few AWS models still carry Java-isms: `\A` / `\z` / `\Z` are
 * translated to `^` / `$`, POSIX classes such as `\p{Alnum}` to their ASCII sets, leading `(?i)` /
 * `(?s)` to the `i` / `s` flags; a pattern that
 * still does not compile (possessive quantifiers, `\p{…}` names JS lacks) is skipped, never
 * guessed, and listed by `skippedPatterns()` so a test can show how many there are.
 *
 * Not checked: idempotency tokens left out (the SDK fills them in), `document` members (free JSON),
 * and members the model marks with `hostLabel` beyond their pattern.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { BOTOCORE_DATA_ENV, findBotocoreModels } from '../../../scripts/preflight';

/** A shape as botocore's service-2.json writes it (the members this checker reads). */
interface Shape {
  readonly type: string;
  readonly members?: Readonly<
    Record<string, { readonly shape: string; readonly idempotencyToken?: boolean }>
  >;
  readonly required?: readonly string[];
  readonly member?: { readonly shape: string };
  readonly key?: { readonly shape: string };
  readonly value?: { readonly shape: string };
  readonly enum?: readonly (string | number)[];
  readonly min?: number;
  readonly max?: number;
  readonly pattern?: string;
  readonly union?: boolean;
  readonly document?: boolean;
  readonly streaming?: boolean;
}

interface ServiceModel {
  readonly metadata: { readonly serviceId: string; readonly apiVersion: string };
  readonly operations: Readonly<Record<string, { readonly input?: { readonly shape: string } }>>;
  readonly shapes: Readonly<Record<string, Shape>>;
}

let dataDirCache: string | undefined;

/** botocore's `data` directory (scripts/preflight.ts finds it); throws naming what is missing. */
export function botocoreDataDir(): string {
  if (dataDirCache !== undefined) return dataDirCache;
  const dir = findBotocoreModels();
  if (dir === null)
    throw new Error(
      `the AWS model check needs botocore's service models: python3 -c 'import botocore' failed or ` +
        `${BOTOCORE_DATA_ENV}=${process.env[BOTOCORE_DATA_ENV] ?? ''} has no pi/ model; install: ` +
        `python3 -m pip install botocore (moto brings it), or set ${BOTOCORE_DATA_ENV} to botocore's data directory`,
    );
  dataDirCache = dir;
  return dir;
}

const modelCache = new Map<string, ServiceModel>();
let serviceIdIndex: Map<string, string> | undefined;

/**
 * What a checked model keeps of botocore's (below), kept on disk per model file: jest loads this
 * module afresh for every test file, and gunzip + JSON.parse of the full models cost each file that
 * makes AWS calls up to a tenth of a CPU-second (EC2's is 3.9 MB, mostly documentation and output
 * shapes). Keyed by the model file's path, size and mtime, so a botocore upgrade is a new entry.
 * Bump SLIM_FORMAT when what `slimModel` keeps changes.
 */
const SLIM_CACHE = path.join(
  __dirname,
  '..',
  '..',
  '..',
  'node_modules',
  '.cache',
  'proxylab-test',
  'botocore',
);
const SLIM_FORMAT = 1;

/** The shape fields `checkValue` reads; every other field (documentation, …) is dropped. */
export const SHAPE_FIELDS = [
  'type',
  'members',
  'required',
  'member',
  'key',
  'value',
  'enum',
  'min',
  'max',
  'pattern',
  'union',
  'document',
  'streaming',
] as const satisfies readonly (keyof Shape)[];
// …and every field of Shape is one of them (a type error here names a field the slim model drops).
type Dropped = Exclude<keyof Shape, (typeof SHAPE_FIELDS)[number]>;
const NOTHING_DROPPED: [Dropped] extends [never] ? true : Dropped = true;
void NOTHING_DROPPED;

/** The value `make` gives, read from the cache when an entry for `key` is there, else made and stored. */
function cachedJson<T>(key: unknown, make: () => T): T {
  const name = createHash('sha256')
    .update(JSON.stringify([SLIM_FORMAT, key]))
    .digest('hex')
    .slice(0, 32);
  const file = path.join(SLIM_CACHE, `${name}.json`);
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    // not stored yet (or unreadable): made below
  }
  const value = make();
  try {
    fs.mkdirSync(SLIM_CACHE, { recursive: true });
    // written whole under another name, then renamed: a worker reading at the same time sees the
    // old state or the whole entry, never a part of it
    const part = `${file}.${process.pid}.part`;
    fs.writeFileSync(part, JSON.stringify(value));
    fs.renameSync(part, file);
  } catch {
    // a read-only node_modules: no cache, the same answers
  }
  return value;
}

/**
 * The model as the checks read it: its metadata, each operation's input shape, and the shapes
 * reachable from an input, with only the fields of SHAPE_FIELDS (members: their shape and
 * idempotencyToken). `checkValue` starts at an operation's input and follows only these fields,
 * so what it reports is the same as over the whole model.
 */
function slimModel(full: ServiceModel): ServiceModel {
  const shapes: Record<string, Shape> = {};
  const ref = (r: { readonly shape: string } | undefined): { shape: string } | undefined =>
    r === undefined ? undefined : { shape: r.shape };
  const visit = (name: string): void => {
    const shape = full.shapes[name];
    if (shape === undefined || name in shapes) return;
    const kept: Record<string, unknown> = {};
    for (const field of SHAPE_FIELDS) if (shape[field] !== undefined) kept[field] = shape[field];
    if (shape.members !== undefined)
      kept.members = Object.fromEntries(
        Object.entries(shape.members).map(([k, m]) => [
          k,
          m.idempotencyToken === true ? { shape: m.shape, idempotencyToken: true } : { shape: m.shape },
        ]),
      );
    for (const field of ['member', 'key', 'value'] as const)
      if (shape[field] !== undefined) kept[field] = ref(shape[field]);
    shapes[name] = kept as unknown as Shape;
    for (const m of Object.values(shape.members ?? {})) visit(m.shape);
    for (const r of [shape.member, shape.key, shape.value]) if (r !== undefined) visit(r.shape);
  };
  const operations: Record<string, { input?: { shape: string } }> = {};
  for (const [name, op] of Object.entries(full.operations)) {
    operations[name] = op.input === undefined ? {} : { input: { shape: op.input.shape } };
    if (op.input !== undefined) visit(op.input.shape);
  }
  return { metadata: full.metadata, operations, shapes };
}

/** The newest api version's model file in botocore's `serviceDir`, or null when there is none. */
export function newestModelFile(serviceDir: string): string | null {
  const base = path.join(botocoreDataDir(), serviceDir);
  let versions: string[];
  try {
    versions = fs
      .readdirSync(base)
      .filter((v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && fs.existsSync(path.join(base, v, 'service-2.json.gz')))
      .sort();
  } catch {
    return null;
  }
  const newest = versions.at(-1);
  return newest === undefined ? null : path.join(base, newest, 'service-2.json.gz');
}

/** A botocore model file as published (not slimmed). */
export function readFullModel(file: string): ServiceModel {
  return JSON.parse(gunzipSync(fs.readFileSync(file)).toString('utf8')) as ServiceModel;
}

/** The newest api version's model in botocore's `serviceDir` (slim), or null when there is none. */
function loadModel(serviceDir: string): ServiceModel | null {
  const file = newestModelFile(serviceDir);
  if (file === null) return null;
  const { size, mtimeMs } = fs.statSync(file);
  return cachedJson(['model', file, size, mtimeMs], () => slimModel(readFullModel(file)));
}

function readModel(serviceDir: string): ServiceModel | null {
  const cached = modelCache.get(serviceDir);
  if (cached) return cached;
  const model = loadModel(serviceDir);
  if (model) modelCache.set(serviceDir, model);
  return model;
}

/**
 * botocore's serviceId → directory map, from every service's newest model (read whole the first
 * time: about 2 s for botocore's ~400 services; stored like the slim models, keyed by every model
 * file's path, size and mtime).
 */
function buildServiceIdIndex(): Map<string, string> {
  const files: [string, string, number, number][] = [];
  for (const dir of fs.readdirSync(botocoreDataDir()).sort()) {
    if (!fs.statSync(path.join(botocoreDataDir(), dir)).isDirectory()) continue;
    const file = newestModelFile(dir);
    if (file === null) continue;
    const { size, mtimeMs } = fs.statSync(file);
    files.push([dir, file, size, mtimeMs]);
  }
  const entries = cachedJson(['serviceIds', files], () =>
    files.flatMap(([dir, file]): [string, string][] => {
      const id = (modelCache.get(dir) ?? readFullModel(file)).metadata.serviceId as string | undefined;
      return id === undefined ? [] : [[id, dir]];
    }),
  );
  return new Map(entries);
}

/**
 * The model whose metadata.serviceId is `serviceId` (the SDK v3 client's `config.serviceId`). The
 * directory is guessed first (serviceId lower-cased without spaces: "Secrets Manager" →
 * secretsmanager) and accepted only when its own metadata says that serviceId; otherwise every
 * service directory is looked at once to build the serviceId → directory map.
 */
export function serviceModel(serviceId: string): ServiceModel | null {
  const guess = serviceId.toLowerCase().replace(/\s+/g, '');
  const guessed = readModel(guess);
  if (guessed?.metadata.serviceId === serviceId) return guessed;
  serviceIdIndex ??= buildServiceIdIndex();
  const dir = serviceIdIndex.get(serviceId);
  return dir === undefined ? null : readModel(dir);
}

// POSIX classes Java writes as \p{Name}; JS has no such names, so they become ASCII sets.
const POSIX_CLASSES: Readonly<Record<string, string>> = {
  Lower: 'a-z',
  Upper: 'A-Z',
  ASCII: '\\x00-\\x7F',
  Alpha: 'a-zA-Z',
  Digit: '0-9',
  Alnum: 'a-zA-Z0-9',
  Punct: '!-\\/:-@\\[-`{-~',
  Graph: '!-~',
  Print: ' -~',
  Blank: ' \\t',
  Cntrl: '\\x00-\\x1F\\x7F',
  XDigit: '0-9a-fA-F',
  Space: ' \\t\\n\\x0B\\f\\r',
};

const patternCache = new Map<string, RegExp | null>();
const skipped = new Set<string>();

/** The JS RegExp for a model pattern, or null when it cannot be compiled faithfully (then skipped). */
export function compilePattern(pattern: string): RegExp | null {
  if (patternCache.has(pattern)) return patternCache.get(pattern) ?? null;
  const translated = pattern
    .replace(/\\A/g, '^')
    .replace(/\\[zZ]/g, '$')
    .replace(/\\p\{(?:Is)?(\w+)\}/g, (whole, name: string) => {
      const set = POSIX_CLASSES[name];
      if (set === undefined) return whole;
      // Inside a character class the set is spliced in; outside it needs its own brackets.
      return `\u0000${set}\u0001`;
    });
  // Java's leading inline flags (?i) (case-insensitive) and (?s) (dot matches newlines) are JS flags.
  const inline = /^\(\?([is]+)\)/.exec(translated);
  const spliced = spliceClasses(inline ? translated.slice(inline[0].length) : translated);
  const flags = inline?.[1] ?? '';
  let re: RegExp | null = null;
  try {
    re = new RegExp(spliced, `u${flags}`);
  } catch {
    // Without the u flag \p{L} would silently mean the letters "p{L}": only patterns without \p
    // may fall back to the legacy syntax (which accepts identity escapes such as \_ ).
    if (!/\\[pP]\{/.test(spliced)) {
      try {
        re = new RegExp(spliced, flags);
      } catch {
        re = null;
      }
    }
  }
  if (re === null) skipped.add(pattern);
  patternCache.set(pattern, re);
  return re;
}

/** Replace the \u0000set\u0001 markers: bare inside a [...] class, bracketed outside one. */
function spliceClasses(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i] ?? '';
    if (c === '\\') {
      out += c + (source[i + 1] ?? '');
      i++;
    } else if (c === '\u0000') {
      const end = source.indexOf('\u0001', i);
      const set = source.slice(i + 1, end);
      out += inClass ? set : `[${set}]`;
      i = end;
    } else {
      if (c === '[' && !inClass) inClass = true;
      else if (c === ']' && inClass) inClass = false;
      out += c;
    }
  }
  return out;
}

/** Model patterns met so far that could not be compiled as JS regular expressions (not checked). */
export function skippedPatterns(): readonly string[] {
  return [...skipped].sort();
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

function isStreamLike(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.pipe === 'function' || typeof o.getReader === 'function' || typeof o.stream === 'function';
}

const show = (v: unknown): string => {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();
  if (typeof v === 'string') return JSON.stringify(v.length > 80 ? `${v.slice(0, 77)}...` : v);
  if (typeof v === 'object' && v !== null) return Array.isArray(v) ? `an array` : 'an object';
  return String(v);
};

function checkValue(model: ServiceModel, shapeName: string, value: unknown, at: string, out: string[]): void {
  const shape = model.shapes[shapeName];
  if (shape === undefined) {
    out.push(`${at}: the model has no shape ${shapeName}`);
    return;
  }
  const where = at === '' ? '(input)' : at;
  const bounds = (size: number, what: string): void => {
    if (shape.min !== undefined && size < shape.min)
      out.push(`${where} ${what} ${size} below the model's min ${shape.min}`);
    if (shape.max !== undefined && size > shape.max)
      out.push(`${where} ${what} ${size} above the model's max ${shape.max}`);
  };
  switch (shape.type) {
    case 'structure': {
      if (shape.document) return;
      if (!isPlainObject(value)) {
        out.push(`${where} = ${show(value)}: the model wants a structure (${shapeName})`);
        return;
      }
      const members = shape.members ?? {};
      const set = Object.keys(value).filter((k) => value[k] !== undefined && value[k] !== null);
      for (const key of set) {
        if (!(key in members))
          out.push(
            `${at === '' ? '' : `${at}.`}${key}: not a member of ${shapeName} (members: ${Object.keys(members).join(', ') || 'none'})`,
          );
      }
      for (const req of shape.required ?? []) {
        if (!set.includes(req) && members[req]?.idempotencyToken !== true)
          out.push(`${at === '' ? '' : `${at}.`}${req}: required by the model (${shapeName}) but missing`);
      }
      if (shape.union && set.length !== 1)
        out.push(`${where}: ${shapeName} is a union, exactly one member must be set, got ${set.length}`);
      for (const key of set) {
        const member = members[key];
        if (member) checkValue(model, member.shape, value[key], at === '' ? key : `${at}.${key}`, out);
      }
      return;
    }
    case 'list': {
      if (!Array.isArray(value)) {
        out.push(`${where} = ${show(value)}: the model wants a list (${shapeName})`);
        return;
      }
      bounds(value.length, 'has length');
      value.forEach((item, i) => {
        if (shape.member) checkValue(model, shape.member.shape, item, `${at}[${i}]`, out);
      });
      return;
    }
    case 'map': {
      if (!isPlainObject(value)) {
        out.push(`${where} = ${show(value)}: the model wants a map (${shapeName})`);
        return;
      }
      bounds(Object.keys(value).length, 'has entry count');
      for (const [k, v] of Object.entries(value)) {
        if (shape.key) checkValue(model, shape.key.shape, k, `${at}{key ${JSON.stringify(k)}}`, out);
        if (shape.value) checkValue(model, shape.value.shape, v, `${at}[${JSON.stringify(k)}]`, out);
      }
      return;
    }
    case 'string': {
      if (typeof value !== 'string') {
        out.push(`${where} = ${show(value)}: the model wants a string (${shapeName})`);
        return;
      }
      if (shape.enum && !shape.enum.includes(value)) {
        out.push(
          `${where} = ${show(value)} is not one of the model's ${shapeName} values: ${shape.enum.join(', ')}`,
        );
        return;
      }
      // Smithy lengths count Unicode code points.
      bounds([...value].length, `= ${show(value)} has length`);
      if (shape.pattern !== undefined) {
        const re = compilePattern(shape.pattern);
        if (re !== null && !re.test(value))
          out.push(
            `${where} = ${show(value)} does not match the model's ${shapeName} pattern ${shape.pattern}`,
          );
      }
      return;
    }
    case 'integer':
    case 'long':
    case 'short':
    case 'byte':
    case 'float':
    case 'double': {
      const whole = shape.type !== 'float' && shape.type !== 'double';
      if (typeof value !== 'number' || !Number.isFinite(value) || (whole && !Number.isInteger(value))) {
        out.push(
          `${where} = ${show(value)}: the model wants ${whole ? 'a whole number' : 'a number'} (${shape.type} ${shapeName})`,
        );
        return;
      }
      if (shape.enum && !shape.enum.includes(value)) {
        out.push(
          `${where} = ${value} is not one of the model's ${shapeName} values: ${shape.enum.join(', ')}`,
        );
        return;
      }
      if (shape.min !== undefined && value < shape.min)
        out.push(`${where} = ${value} below the model's min ${shape.min}`);
      if (shape.max !== undefined && value > shape.max)
        out.push(`${where} = ${value} above the model's max ${shape.max}`);
      return;
    }
    case 'boolean':
      if (typeof value !== 'boolean') out.push(`${where} = ${show(value)}: the model wants a boolean`);
      return;
    case 'timestamp':
      if (!(value instanceof Date) || Number.isNaN(value.getTime()))
        out.push(`${where} = ${show(value)}: the model wants a timestamp (a valid Date)`);
      return;
    case 'blob': {
      if (typeof value === 'string') bounds(Buffer.byteLength(value), 'has byte length');
      else if (value instanceof Uint8Array) bounds(value.byteLength, 'has byte length');
      else if (!(value instanceof ArrayBuffer) && !isStreamLike(value))
        out.push(`${where} = ${show(value)}: the model wants a blob (Uint8Array, string or stream)`);
      return;
    }
    default:
      out.push(`${where}: shape ${shapeName} has a type this checker does not know (${shape.type})`);
  }
}

/**
 * Problems with an SDK v3 command input according to the service's model; empty when it is valid.
 * `service` is the client's `config.serviceId` ("S3", "Secrets Manager"), `operation` the command
 * name without "Command" ("GetMetricData").
 */
export function modelProblems(service: string, operation: string, input: unknown): string[] {
  const model = serviceModel(service);
  if (model === null) return [`${service}: botocore has no model with serviceId ${JSON.stringify(service)}`];
  const op = model.operations[operation];
  if (op === undefined)
    return [`${service} ${operation}: not an operation of the model (${model.metadata.apiVersion})`];
  const out: string[] = [];
  if (op.input === undefined) {
    if (isPlainObject(input) && Object.values(input).some((v) => v !== undefined))
      out.push(`(input): ${operation} takes no input, got members ${Object.keys(input).join(', ')}`);
  } else checkValue(model, op.input.shape, input ?? {}, '', out);
  return out.map((p) => `${service} ${operation}: ${p}`);
}
