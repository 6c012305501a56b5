/**
 * What differs between two runs' lab files (lab.json, ./lab-record.ts), field by field: a JSON-path
 * level diff of the parsed labs (`poolers[0].poolPercent: 50 → 80`, `tags.team: added "db"`,
 * `proxies[1]: removed {…}`), for `proxylab compare` (lib/report/lab-compare.ts) and the refusal of
 * a resume whose lab changed. Arrays are compared by position, objects by key (A's order, then the
 * keys only B has). Pure: no I/O.
 */
import { UsageError } from '../core/errors';
import { type LabRecord, parseLabText, shortSha256 } from './lab-record';

export interface LabChange {
  /** `poolers[0].poolPercent`, `tags["cost center"]`, `(root)`. */
  readonly path: string;
  readonly kind: 'changed' | 'added' | 'removed';
  /** A's value (undefined when added). */
  readonly before?: unknown;
  /** B's value (undefined when removed). */
  readonly after?: unknown;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function keyPath(at: string, key: string): string {
  return IDENTIFIER.test(key) ? (at === '' ? key : `${at}.${key}`) : `${at}[${JSON.stringify(key)}]`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every leaf-level difference between two JSON values (as JSON.parse gives them), in document order. */
export function diffJson(a: unknown, b: unknown, at = ''): LabChange[] {
  const here = at === '' ? '(root)' : at;
  if (Array.isArray(a) && Array.isArray(b)) {
    const out: LabChange[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const p = `${at}[${i}]`;
      if (i >= b.length) out.push({ path: p, kind: 'removed', before: a[i] });
      else if (i >= a.length) out.push({ path: p, kind: 'added', after: b[i] });
      else out.push(...diffJson(a[i], b[i], p));
    }
    return out;
  }
  if (isObject(a) && isObject(b)) {
    const out: LabChange[] = [];
    for (const key of Object.keys(a)) {
      const p = keyPath(at, key);
      if (!Object.hasOwn(b, key)) out.push({ path: p, kind: 'removed', before: a[key] });
      else out.push(...diffJson(a[key], b[key], p));
    }
    for (const key of Object.keys(b))
      if (!Object.hasOwn(a, key)) out.push({ path: keyPath(at, key), kind: 'added', after: b[key] });
    return out;
  }
  return JSON.stringify(a) === JSON.stringify(b)
    ? []
    : [{ path: here, kind: 'changed', before: a, after: b }];
}

/** A value as one short line of JSON (`80`, `"db"`, `{"name":"bouncer",…}`). */
export function briefJson(v: unknown, max = 60): string {
  const text = JSON.stringify(v) ?? 'undefined';
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `poolers[0].poolPercent: 50 → 80`, `tags.team: added "db"`, `proxies[1]: removed (was {…})`. */
export function changeLine(c: LabChange): string {
  switch (c.kind) {
    case 'changed':
      return `${c.path}: ${briefJson(c.before)} → ${briefJson(c.after)}`;
    case 'added':
      return `${c.path}: added ${briefJson(c.after)}`;
    case 'removed':
      return `${c.path}: removed (was ${briefJson(c.before)})`;
  }
}

/**
 * The field-level differences between two lab records, or null when a text cannot be parsed (a
 * record read through its schema always can).
 */
export function diffLabRecords(a: LabRecord, b: LabRecord): LabChange[] | null {
  try {
    return diffJson(parseLabText(a, 'lab.json of A'), parseLabText(b, 'lab.json of B'));
  } catch (err) {
    if (err instanceof UsageError) return null;
    throw err;
  }
}

/** At most this many changed fields are named in a resume's refusal (compare lists them all). */
const CHANGES_NAMED = 5;

/**
 * Why a run started with lab file `stored` cannot go on with `current`, naming the fields that
 * changed (null when the text is the same). What to do about it is the caller's to say.
 */
export function labChangedProblem(stored: LabRecord, current: LabRecord): string | null {
  if (stored.sha256 === current.sha256) return null;
  const lab =
    stored.name === current.name ? `lab ${stored.name}` : `lab ${stored.name} (now ${current.name})`;
  const changes = diffLabRecords(stored, current) ?? [];
  const named =
    changes.length === 0
      ? 'the text differs, no field does (formatting or key order)'
      : changes.slice(0, CHANGES_NAMED).map(changeLine).join('; ') +
        (changes.length > CHANGES_NAMED ? `; and ${changes.length - CHANGES_NAMED} more` : '');
  return (
    `its lab file changed since it started (${lab}: ${named}): lab.json of the run holds ${stored.source} ` +
    `at sha256 ${shortSha256(stored.sha256)}…, --lab ${current.source} is now sha256 ${shortSha256(current.sha256)}…`
  );
}
