/**
 * The settings catalogues (lib/products/<product>/settings.ts) as `proxylab settings` prints them and
 * docs/settings.md lists them: per setting its type and unit, range or values, the default at a
 * version, the release it appeared in, what it bears on, what it does and where the facts are; the
 * ones proxylab sets from a lab field say which field, the refused ones why.
 *
 * Versions are the releases the kit pins (a pooler driver's `releases`, lib/poolers/<product>/
 * releases.ts): the caller passes them in (`PinnedVersions`), so this presentation layer needs no
 * driver. A product without versions (RDS Proxy) has `null`.
 */
import { UsageError } from '../core/errors';
import { PRODUCT_ENTRIES } from '../products';
import type { TargetProduct } from '../products/kinds';
import { defaultAt, formatSetting, inVersion } from '../products/settings';
import {
  SETTING_AREAS,
  type SettingSpec,
  type SettingsCatalogue,
  type SettingValue,
} from '../products/types';

/** The releases a product's lab entries may pin, newest first, and the one a lab gets by default. */
export interface PinnedVersions {
  readonly versions: readonly string[];
  readonly defaultVersion: string;
}

/** What a pooler driver registry gives (structurally: `POOLER_DRIVERS` of lib/poolers/registry.ts). */
export type DriverReleases = Readonly<
  Record<
    string,
    { readonly releases: readonly { readonly version: string }[]; readonly defaultVersion: string }
  >
>;

/** The pinned versions of `product`: its driver's releases; null for a product without a driver (RDS Proxy). */
export function pinnedVersions(drivers: DriverReleases, product: string): PinnedVersions | null {
  const d = drivers[product];
  return d === undefined
    ? null
    : { versions: d.releases.map((r) => r.version), defaultVersion: d.defaultVersion };
}

/** The products that have a settings catalogue, in registry order (rds-proxy, pgbouncer, pgdoorman). */
export function cataloguedProducts(): Array<{
  id: TargetProduct;
  label: string;
  catalogue: SettingsCatalogue;
}> {
  return Object.values(PRODUCT_ENTRIES).flatMap((e) =>
    e.settings === null ? [] : [{ id: e.id, label: e.label, catalogue: e.settings }],
  );
}

/** One setting as `proxylab settings --json` gives it. */
export interface SettingRow {
  readonly name: string;
  readonly type: SettingSpec['type'];
  readonly unit: SettingSpec['unit'];
  /** `0–86400 seconds`, `"NONE", "IAM_AUTH"`, `one line of text`. */
  readonly allowed: string;
  /** The default at the version (null: not set, the product's built-in behaviour). */
  readonly default: SettingValue | null;
  /** The default as text (`15 s`, `on`, `–`). */
  readonly defaultText: string;
  readonly since: string | null;
  readonly area: SettingSpec['area'];
  readonly summary: string;
  readonly source: string;
  /** The lab field (or reason) proxylab sets it from: a lab's `settings` may not. */
  readonly setBy: string | null;
  /** Why it is refused for PostgreSQL. */
  readonly refused: string | null;
  /** The configuration section (PgDoorman: `general` or `pool`). */
  readonly section: string | null;
}

/** What values a setting takes, in words. */
export function allowedText(spec: SettingSpec): string {
  const unit = spec.unit === null ? '' : ` ${spec.unit}`;
  switch (spec.type) {
    case 'integer':
    case 'number': {
      const what = spec.type === 'integer' ? 'integer' : 'number';
      if (spec.min !== undefined && spec.max !== undefined) return `${what} ${spec.min}–${spec.max}${unit}`;
      if (spec.min !== undefined) return `${what} ≥ ${spec.min}${unit}`;
      return `${what}${unit}`;
    }
    case 'boolean':
      return 'true or false';
    case 'enum':
      return `one of ${(spec.values ?? []).join(', ')}`;
    case 'text':
      return 'one line of text (printable ASCII, no double quote or backslash)';
    case 'list':
      return spec.values !== undefined ? `a list of ${spec.values.join(', ')}` : 'a list of names';
  }
}

export function settingRow(spec: SettingSpec, version: string | null): SettingRow {
  const def = defaultAt(spec, version);
  return {
    name: spec.name,
    type: spec.type,
    unit: spec.unit,
    allowed: allowedText(spec),
    default: def,
    defaultText: def === '' ? '""' : formatSetting(spec, def),
    since: spec.since,
    area: spec.area,
    summary: spec.summary,
    source: spec.source,
    setBy: spec.setBy ?? null,
    refused: spec.refused ?? null,
    section: spec.section ?? null,
  };
}

/** A product's catalogue at a version: the settings it has, and the names of later ones it lacks. */
export interface CatalogueAt {
  readonly product: TargetProduct;
  readonly label: string;
  /** null: the product has no versions (RDS Proxy). */
  readonly version: string | null;
  /** The releases the kit pins (empty: no versions). */
  readonly versions: readonly string[];
  readonly settings: readonly SettingRow[];
  /** Settings of later releases this version lacks: name and the release they appeared in. */
  readonly notInVersion: ReadonlyArray<{ readonly name: string; readonly since: string | null }>;
}

const productIds = (): string =>
  cataloguedProducts()
    .map((p) => p.id)
    .join(', ');

/**
 * The catalogue of `product` at `version` (absent: the version a lab gets by default). A product
 * without a catalogue, an unknown product, a version the kit does not pin or a version for a product
 * that has none is a usage error naming what is allowed.
 */
export function catalogueAt(
  product: string,
  version: string | undefined,
  pinned: (product: string) => PinnedVersions | null,
): CatalogueAt {
  const found = cataloguedProducts().find((p) => p.id === product);
  if (found === undefined) {
    const entry = (PRODUCT_ENTRIES as Readonly<Record<string, { label: string }>>)[product];
    const why =
      entry !== undefined
        ? `${entry.label} takes no settings (its server settings are the database's)`
        : `no product "${product}"`;
    throw new UsageError(`settings: ${why}; the products with settings are ${productIds()}`);
  }
  const pins = pinned(found.id);
  if (pins === null && version !== undefined)
    throw new UsageError(
      `settings: --version ${JSON.stringify(version)}: ${found.label} has no versions (AWS runs one RDS Proxy); leave --version out`,
    );
  if (pins !== null && version !== undefined && !pins.versions.includes(version))
    throw new UsageError(
      `settings: --version ${JSON.stringify(version)} is not a ${found.label} release proxylab pins; one of ${pins.versions.join(', ')} (lib/poolers/${found.id}/releases.ts)`,
    );
  const at = pins === null ? null : (version ?? pins.defaultVersion);
  const specs = found.catalogue.settings;
  return {
    product: found.id,
    label: found.label,
    version: at,
    versions: pins?.versions ?? [],
    settings: specs.filter((s) => inVersion(s, at)).map((s) => settingRow(s, at)),
    notInVersion: specs.filter((s) => !inVersion(s, at)).map((s) => ({ name: s.name, since: s.since })),
  };
}

/** `rds-proxy   RDS Proxy   10 settings (6 a lab may set)   versions: –` per product. */
export function formatProductList(pinned: (product: string) => PinnedVersions | null): string {
  const rows = cataloguedProducts().map((p) => {
    const settable = p.catalogue.settings.filter((s) => s.setBy === undefined && s.refused === undefined);
    const pins = pinned(p.id);
    const versions =
      pins === null ? 'no versions' : `versions ${pins.versions.join(', ')} (default ${pins.defaultVersion})`;
    return [
      p.id,
      p.label,
      `${p.catalogue.settings.length} settings, ${settable.length} a lab may set`,
      versions,
    ];
  });
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => (r[i] as string).length)));
  return [
    'Products with settings (a lab sets them in `settings` on its proxies and poolers):',
    ...rows.map((r) => `  ${r.map((c, i) => (i < 3 ? c.padEnd(widths[i] as number) : c)).join('   ')}`),
    '',
    'proxylab settings <product> [--version V] lists one of them.',
  ].join('\n');
}

/** One product's catalogue as text, grouped by area. */
export function formatCatalogue(c: CatalogueAt): string {
  const head =
    c.version === null
      ? `${c.label} settings (${c.settings.length}; no versions)`
      : `${c.label} ${c.version} settings (${c.settings.length}; pinned releases: ${c.versions.join(', ')})`;
  const out: string[] = [
    head,
    'A lab sets them by name in `settings` on the pooler or proxy; the rest run at the default.',
  ];
  for (const area of SETTING_AREAS) {
    const rows = c.settings.filter((s) => s.area === area);
    if (rows.length === 0) continue;
    out.push('', `[${area}]`);
    for (const s of rows) {
      const since = s.since === null ? '' : `, since ${s.since}`;
      const section = s.section === null ? '' : `, in [${s.section}]`;
      out.push(`  ${s.name}  ${s.allowed}; default ${s.defaultText}${since}${section}`);
      out.push(`      ${s.summary}`);
      if (s.setBy !== null) out.push(`      set by proxylab: ${s.setBy}`);
      if (s.refused !== null) out.push(`      refused: ${s.refused}`);
      out.push(`      source: ${s.source}`);
    }
  }
  if (c.notInVersion.length > 0)
    out.push(
      '',
      `Not in ${c.label} ${c.version ?? ''}: ${c.notInVersion.map((n) => `${n.name} (since ${n.since ?? '?'})`).join(', ')}`,
    );
  return out.join('\n');
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A default by version in words: `select 1; "" from 1.25`. */
function defaultsText(spec: SettingSpec): string {
  return spec.defaults
    .map((d, i) => {
      const v = d.value === '' ? '""' : formatSetting(spec, d.value);
      return i === 0 && d.since === null ? v : `${v} from ${d.since ?? '?'}`;
    })
    .join('; ');
}

/** docs/settings.md's generated block: one table per product, every setting with its defaults by version. */
export function catalogueMarkdown(pinned: (product: string) => PinnedVersions | null): string {
  const out: string[] = [];
  for (const p of cataloguedProducts()) {
    const pins = pinned(p.id);
    out.push(
      `### ${p.label} (\`${p.id}\`)`,
      '',
      pins === null
        ? 'No versions: AWS runs it.'
        : `Pinned releases: ${pins.versions.join(', ')} (default ${pins.defaultVersion}). \`proxylab settings ${p.id} --version V\` lists one release's.`,
      '',
      '| setting | type | allowed | default | since | area | what it does | source |',
      '|---|---|---|---|---|---|---|---|',
    );
    for (const s of p.catalogue.settings) {
      const what = [
        `${s.summary}.`,
        ...(s.setBy !== undefined ? [`**Set by proxylab:** ${s.setBy}.`] : []),
        ...(s.refused !== undefined ? [`**Refused:** ${s.refused}.`] : []),
        ...(s.section !== undefined ? [`In \`[${s.section}]\`.`] : []),
      ].join(' ');
      out.push(
        `| \`${s.name}\` | ${s.type} | ${cell(allowedText(s))} | ${cell(defaultsText(s))} | ${s.since ?? 'all'} | ${s.area} | ${cell(what)} | ${cell(s.source)} |`,
      );
    }
    out.push('');
  }
  return out.join('\n').trimEnd();
}
