/**
 * Lab problems in words: a JSON path (`proxies[1].name`), a value as the file gave it, what was
 * allowed; a zod issue turned into problems; a did-you-mean for an unknown key. Shared by validate.ts
 * and its checks (./checks-database.ts, ./checks-targets.ts).
 */
import { z } from 'zod';
import { labFileSchema } from './schema';
import type { LabProblem } from './types';

export type PathSegment = PropertyKey;

/** `['proxies', 1, 'name']` → `proxies[1].name`; `[]` → `(root)`. */
export function formatPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else {
      const key = String(seg);
      const plain = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key);
      out += plain ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out || '(root)';
}

/** Short rendering of a received value for messages. */
export function formatValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    // undefined for functions and symbols
    text = JSON.stringify(value) ?? notJson(value);
  } catch {
    // a BigInt, or a circular object
    text = notJson(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Rendering of a value JSON.stringify cannot render. */
export function notJson(value: unknown): string {
  switch (typeof value) {
    case 'function':
      return 'a function';
    case 'object':
      return value === null ? 'null' : 'an object that is not JSON (circular?)';
    case 'symbol':
      return value.toString();
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
    case 'undefined':
      return 'nothing';
  }
}

export function mustBe(allowed: string, value: unknown): string {
  return value === undefined
    ? `is required: must be ${allowed}`
    : `must be ${allowed}, got ${formatValue(value)}`;
}

// ---------------------------------------------------------------------------------------------
// did-you-mean for unknown keys

/** Optimal-string-alignment distance: insertions, deletions, substitutions, adjacent swaps. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The known key closest to `key`, if close enough to be a typo. */
export function suggestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const c = candidate.toLowerCase();
    const distance = c === lower ? 0 : editDistance(lower, c);
    const limit = Math.max(1, Math.min(3, Math.floor(candidate.length / 3)));
    if (distance <= limit && (!best || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}

/** The keys the schema allows for the object at `path` (walking through optional/array wrappers). */
export function knownKeysAt(path: readonly PathSegment[]): string[] {
  let schema: z.ZodType = labFileSchema;
  const unwrap = (s: z.ZodType): z.ZodType => {
    let cur = s;
    for (;;) {
      if (cur instanceof z.ZodOptional || cur instanceof z.ZodDefault || cur instanceof z.ZodNullable) {
        cur = cur.unwrap() as z.ZodType;
      } else return cur;
    }
  };
  // A union of a literal and an object (`network`): its keys are the object option's.
  const objectOf = (s: z.ZodType): z.ZodType =>
    s instanceof z.ZodUnion
      ? ((s.options as readonly z.ZodType[]).find((o) => o instanceof z.ZodObject) ?? s)
      : s;
  for (const seg of path) {
    schema = objectOf(unwrap(schema));
    if (schema instanceof z.ZodArray && typeof seg === 'number') schema = schema.element as z.ZodType;
    else if (schema instanceof z.ZodObject && typeof seg === 'string') {
      const next = (schema.shape as Record<string, z.ZodType | undefined>)[seg];
      if (!next) return [];
      schema = next;
    } else return [];
  }
  schema = objectOf(unwrap(schema));
  // `$schema` is for editors; listing it among the lab's fields would only distract.
  return schema instanceof z.ZodObject ? Object.keys(schema.shape).filter((k) => k !== '$schema') : [];
}

// ---------------------------------------------------------------------------------------------
// pass 1: schema issues → problems

/**
 * A union (`network`: "create" or an object) that failed: when the input has the type of exactly
 * one option (an object given where the other option is a string), that option's issues are the
 * ones that name fields; the union's own message only says what the whole may be.
 */
export function matchedUnionOption(issue: z.core.$ZodIssue): z.core.$ZodIssue[] | null {
  if (issue.code !== 'invalid_union') return null;
  const typeMismatch = (i: z.core.$ZodIssue): boolean =>
    i.path.length === 0 && (i.code === 'invalid_type' || i.code === 'invalid_value');
  const matched = issue.errors.filter((branch) => !(branch.length === 1 && branch.every(typeMismatch)));
  if (matched.length !== 1) return null;
  return (matched[0] ?? []).map((i) => ({ ...i, path: [...issue.path, ...i.path] }));
}

export function issueToProblems(issue: z.core.$ZodIssue): LabProblem[] {
  const inner = matchedUnionOption(issue);
  if (inner) return inner.flatMap(issueToProblems);
  const input: unknown = (issue as { input?: unknown }).input;
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeysAt(issue.path);
    const obj = (input && typeof input === 'object' ? input : {}) as Record<string, unknown>;
    return issue.keys.map((key) => {
      const hint = suggestKey(key, known);
      const message =
        `unknown key` +
        (hint ? ` (did you mean "${hint}"?)` : '') +
        (known.length ? `; allowed keys here: ${known.join(', ')}` : '');
      return { path: formatPath([...issue.path, key]), value: obj[key], message };
    });
  }
  if (issue.code === 'invalid_key') {
    const inner = issue.issues[0]?.message ?? 'a valid key';
    return [{ path: formatPath(issue.path), value: input, message: `key ${mustBe(inner, input)}` }];
  }
  return [{ path: formatPath(issue.path), value: input, message: mustBe(issue.message, input) }];
}

// ---------------------------------------------------------------------------------------------
// pass 2: rules between fields, on the raw input

export function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
