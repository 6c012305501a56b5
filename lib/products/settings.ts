/**
 * A lab's `settings` object against a product's catalogue (./types.ts SettingSpec), for the version
 * the lab pins: every problem named with the field path, the value and what is allowed; and the
 * effective settings of a target (the lab's values, the product's defaults for that version
 * otherwise), which plan.json records and the report shows.
 *
 * Values stay typed to the end: an adapter renders a checked value (`settingText`) and never pastes
 * raw text, so no value can carry a line break, a quote or a section header into a configuration
 * file or an API call.
 */
import type { SettingSpec, SettingsCatalogue, SettingValue } from './types';
import { versionAtLeast } from './version';

export interface SettingProblem {
  /** `poolers[1].settings.server_login_retry`. */
  readonly path: string;
  readonly value: unknown;
  readonly message: string;
}

/**
 * One line of printable ASCII, without the double quote and backslash that could end or escape a
 * quoted value (single quotes stay: SQL needs them, `SET timezone = 'UTC'`).
 */
const TEXT = /^[\x20-\x7e]*$/;
const TEXT_FORBIDDEN = /["\\]/;
const TEXT_MAX = 1000;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The spec of `name` in the catalogue; undefined when there is none. */
export function settingSpec(cat: SettingsCatalogue, name: string): SettingSpec | undefined {
  return cat.settings.find((s) => s.name === name);
}

/** The product's default for `version` (unknown version: the newest default). null: not set. */
export function defaultAt(spec: SettingSpec, version: string | null): SettingValue | null {
  let value: SettingValue | null = null;
  for (const d of spec.defaults)
    if (d.since === null || version === null || versionAtLeast(version, d.since)) value = d.value;
  return value;
}

/** The setting exists in `version` (unknown version: assumed). */
export function inVersion(spec: SettingSpec, version: string | null): boolean {
  return spec.since === null || version === null || versionAtLeast(version, spec.since);
}

function range(spec: SettingSpec): string {
  const unit = spec.unit === null ? '' : ` (${spec.unit})`;
  if (spec.min !== undefined && spec.max !== undefined) return `${spec.min}–${spec.max}${unit}`;
  if (spec.min !== undefined) return `≥ ${spec.min}${unit}`;
  return `a number${unit}`;
}

/** What is wrong with `value` as `spec`'s value; null when nothing. */
export function valueProblem(spec: SettingSpec, value: unknown): string | null {
  switch (spec.type) {
    case 'integer':
    case 'number': {
      const ok =
        typeof value === 'number' &&
        Number.isFinite(value) &&
        (spec.type === 'number' || Number.isInteger(value)) &&
        (spec.min === undefined || value >= spec.min) &&
        (spec.max === undefined || value <= spec.max);
      return ok ? null : `must be ${spec.type === 'integer' ? 'an integer' : 'a number'} ${range(spec)}`;
    }
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'enum':
      return typeof value === 'string' && (spec.values ?? []).includes(value)
        ? null
        : `must be one of ${(spec.values ?? []).map((v) => `"${v}"`).join(', ')}`;
    case 'text':
      if (typeof value !== 'string') return 'must be a string';
      if (value.length > TEXT_MAX) return `must be at most ${TEXT_MAX} characters`;
      if (!TEXT.test(value) || TEXT_FORBIDDEN.test(value))
        return 'must be one line of printable ASCII without double quotes or backslashes (no line break, no control character)';
      if (value !== value.trim()) return 'must not start or end with white space';
      return null;
    case 'list': {
      if (!Array.isArray(value) || value.length > 50) return 'must be a list of at most 50 names';
      const allowed = spec.values;
      for (const v of value as unknown[]) {
        if (typeof v !== 'string' || !NAME.test(v) || v.length > 63)
          return 'must be a list of names (letters, digits, _)';
        if (allowed !== undefined && !allowed.some((a) => a.toLowerCase() === v.toLowerCase()))
          return `each must be one of ${allowed.join(', ')}`;
      }
      return null;
    }
  }
}

/**
 * Every problem of a lab's `settings` object for a product at `version`: not an object, an unknown
 * name (with the nearest known ones), a setting the kit sets from a lab field, one not in this
 * version, one refused for PostgreSQL, a value of the wrong type or out of range.
 */
/** `, got 2.5` — the value as the lab gave it, cut to 80 characters. */
function got(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return `, got ${text.length > 80 ? `${text.slice(0, 77)}...` : text}`;
}

export function checkSettings(
  cat: SettingsCatalogue,
  version: string | null,
  settings: unknown,
  path: string,
): SettingProblem[] {
  if (settings === undefined) return [];
  if (settings === null || typeof settings !== 'object' || Array.isArray(settings))
    return [
      { path, value: settings, message: `must be an object of ${cat.product} settings${got(settings)}` },
    ];
  const problems: SettingProblem[] = [];
  for (const [name, value] of Object.entries(settings as Record<string, unknown>)) {
    const at = `${path}.${name}`;
    const spec = settingSpec(cat, name);
    if (spec === undefined) {
      problems.push({ path: at, value, message: unknownMessage(cat, name) + got(value) });
      continue;
    }
    if (spec.refused !== undefined) problems.push({ path: at, value, message: spec.refused + got(value) });
    else if (spec.setBy !== undefined)
      problems.push({ path: at, value, message: `is set by proxylab: ${spec.setBy}${got(value)}` });
    else if (!inVersion(spec, version))
      problems.push({
        path: at,
        value,
        message: `is not in ${cat.product} ${version ?? ''}: it appeared in ${spec.since ?? '?'}${got(value)}`,
      });
    else {
      const bad = valueProblem(spec, value);
      if (bad !== null) problems.push({ path: at, value, message: bad + got(value) });
    }
  }
  return problems;
}

function unknownMessage(cat: SettingsCatalogue, name: string): string {
  const near = cat.settings
    .filter((s) => s.setBy === undefined && s.refused === undefined)
    .map((s) => s.name)
    .filter((n) => n.includes(name) || name.includes(n) || closeEnough(n, name));
  const settable = cat.settings.filter((s) => s.setBy === undefined && s.refused === undefined).length;
  return (
    `is not a ${cat.product} setting proxylab knows` +
    (near.length > 0 ? ` (did you mean ${near.slice(0, 3).join(', ')}?)` : '') +
    `; the ${settable} it accepts are listed by \`proxylab settings ${cat.product.toLowerCase().replace(/ /g, '-')}\``
  );
}

/** Edit distance ≤ 2 (a typo). */
function closeEnough(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 2) return false;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const prev = d[i - 1] as number[];
      row[j] = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
  return ((d[a.length] as number[])[b.length] as number) <= 2;
}

/** One setting as a target runs it: its value and whose it is. */
export interface EffectiveSetting {
  readonly value: SettingValue | null;
  /** `lab`: the team's value; `default`: the product's default for the version; `proxylab`: set by the kit. */
  readonly source: 'lab' | 'default' | 'proxylab';
}

/**
 * The effective settings of a target of a product at `version`: every catalogued setting the version
 * has, with the lab's value where it gives one, the kit's where it sets one (`kit`), the default otherwise.
 */
export function effectiveSettings(
  cat: SettingsCatalogue,
  version: string | null,
  lab: Readonly<Record<string, SettingValue>>,
  kit: Readonly<Record<string, SettingValue | null>> = {},
): Record<string, EffectiveSetting> {
  const out: Record<string, EffectiveSetting> = {};
  for (const spec of cat.settings) {
    if (spec.refused !== undefined || !inVersion(spec, version)) continue;
    if (Object.hasOwn(lab, spec.name))
      out[spec.name] = { value: lab[spec.name] as SettingValue, source: 'lab' };
    else if (Object.hasOwn(kit, spec.name))
      out[spec.name] = { value: kit[spec.name] ?? null, source: 'proxylab' };
    else out[spec.name] = { value: defaultAt(spec, version), source: 'default' };
  }
  return out;
}

/** A checked value as configuration text: `15`, `1`/`0` for booleans, `a,b` for lists. */
export function settingText(spec: SettingSpec, value: SettingValue): string {
  const bad = valueProblem(spec, value);
  if (bad !== null) throw new Error(`setting ${spec.name} ${bad}`);
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (Array.isArray(value)) return value.join(',');
  return String(value);
}

/** `15 s`, `on`, `DISCARD ALL`, `–` (not set). */
export function formatSetting(spec: SettingSpec | undefined, value: SettingValue | null): string {
  if (value === null) return '–';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.join(', ');
  if (typeof value === 'number' && spec?.unit === 'seconds') return `${value} s`;
  if (typeof value === 'number' && spec?.unit === 'milliseconds') return `${value} ms`;
  if (typeof value === 'number' && spec?.unit === 'percent') return `${value} %`;
  return String(value);
}
