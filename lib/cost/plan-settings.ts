/**
 * The effective settings `proxylab plan` previews for a lab, before anything is deployed: per proxy
 * and pooler, every catalogued setting of its product at the version it pins (lib/products/settings.ts
 * `effectiveSettings`) — the lab's values (`settings`), proxylab's own (lib/config/kit-settings.ts),
 * the product's defaults — and, for two or more of one product (variants: `bouncer-default` and
 * `bouncer-fast-retry`), the settings whose values differ between them.
 *
 * The text shows the lab's values, then the ones that bear on failures, timeouts and the pool
 * (`SHOWN_AREAS`); `--settings all` shows every one. A figure only known at run time (a pooler's pool
 * size, from max_connections) is `–`, set by proxylab.
 */
import type { LabConfig } from '../config/types';
import { poolerKitSettings, proxyKitSettings, type KitSettings } from '../config/kit-settings';
import { productEntry } from '../products';
import { effectiveSettings, formatSetting, settingSpec } from '../products/settings';
import type { SettingArea, SettingsCatalogue, SettingValue } from '../products/types';

/** The areas the plan shows besides the lab's own values (all of them with `--settings all`). */
export const SHOWN_AREAS: readonly SettingArea[] = ['failure', 'timeouts', 'pool'];

export interface PreviewSetting {
  readonly name: string;
  readonly value: SettingValue | null;
  /** `15 s`, `on`, `–` (not set, or known only at run time). */
  readonly text: string;
  readonly source: 'lab' | 'default' | 'proxylab';
  readonly area: SettingArea;
}

/** One proxy or pooler of the lab: its product, version and every effective setting. */
export interface InstanceSettings {
  /** The lab's proxy or pooler name. */
  readonly name: string;
  /** The product id (`rds-proxy`, `pgbouncer`). */
  readonly product: string;
  readonly label: string;
  /** The pinned version; null: the product has none (RDS Proxy). */
  readonly version: string | null;
  /** Its targets (`bouncer-transaction`, `bouncer-session`; a proxy's is its name). */
  readonly targets: readonly string[];
  readonly settings: readonly PreviewSetting[];
}

/** What differs between two instances of one product. */
export interface SettingsDifference {
  readonly a: string;
  readonly b: string;
  readonly product: string;
  readonly differences: ReadonlyArray<{
    readonly name: string;
    /** null: the setting is not in that one's version. */
    readonly a: PreviewSetting | null;
    readonly b: PreviewSetting | null;
  }>;
}

export interface LabSettingsPreview {
  readonly instances: readonly InstanceSettings[];
  readonly variants: readonly SettingsDifference[];
}

function rows(
  cat: SettingsCatalogue,
  version: string | null,
  lab: Readonly<Record<string, SettingValue>>,
  kit: KitSettings,
): PreviewSetting[] {
  const effective = effectiveSettings(cat, version, lab, kit);
  return Object.entries(effective).map(([name, e]) => {
    const spec = settingSpec(cat, name);
    return {
      name,
      value: e.value,
      text: e.value === '' ? '""' : formatSetting(spec, e.value),
      source: e.source,
      area: spec?.area ?? 'pool',
    };
  });
}

function instances(lab: LabConfig): InstanceSettings[] {
  const out: InstanceSettings[] = [];
  const proxyCat = productEntry('rds-proxy').settings;
  if (proxyCat !== null)
    for (const p of lab.proxies)
      out.push({
        name: p.name,
        product: 'rds-proxy',
        label: proxyCat.product,
        version: null,
        targets: [p.name],
        settings: rows(proxyCat, null, p.settings, proxyKitSettings(p)),
      });
  for (const p of lab.poolers) {
    const entry = productEntry(p.kind);
    if (entry.settings === null) continue;
    const first = p.poolModes[0];
    const kit =
      first === undefined
        ? {}
        : {
            ...poolerKitSettings({ ...p, product: p.kind }, first, p.maxPreparedStatements),
            // one pool per mode: the list of them, each target gets its own
            pool_mode: p.poolModes.length === 1 ? first : [...p.poolModes],
          };
    out.push({
      name: p.name,
      product: p.kind,
      label: entry.label,
      version: p.version,
      targets: p.poolModes.map((m) => `${p.name}-${m}`),
      settings: rows(entry.settings, p.version, p.settings, kit),
    });
  }
  return out;
}

const sameValue = (x: PreviewSetting | null, y: PreviewSetting | null): boolean =>
  x !== null && y !== null && JSON.stringify(x.value) === JSON.stringify(y.value);

/** Every pair of instances of one product, with the settings whose values differ (none listed: none differ). */
function variants(all: readonly InstanceSettings[]): SettingsDifference[] {
  const out: SettingsDifference[] = [];
  all.forEach((a, i) =>
    all.slice(i + 1).forEach((b) => {
      if (a.product !== b.product) return;
      const names = [...new Set([...a.settings, ...b.settings].map((s) => s.name))];
      const differences = names.flatMap((name) => {
        const x = a.settings.find((s) => s.name === name) ?? null;
        const y = b.settings.find((s) => s.name === name) ?? null;
        return sameValue(x, y) ? [] : [{ name, a: x, b: y }];
      });
      out.push({ a: a.name, b: b.name, product: a.product, differences });
    }),
  );
  return out;
}

/** The effective settings of every proxy and pooler of `lab`, and what differs between variants of one product. */
export function labSettingsPreview(lab: LabConfig): LabSettingsPreview {
  const all = instances(lab);
  return { instances: all, variants: variants(all) };
}

const shown = (s: PreviewSetting, every: boolean): boolean =>
  every || s.source === 'lab' || SHOWN_AREAS.includes(s.area);

function valueText(s: PreviewSetting | null, version: string | null): string {
  return s === null ? `(not in ${version ?? 'this version'})` : `${s.text} (${s.source})`;
}

/** The plan's settings section: per instance, the lab's values first, then the defaults shown; then the variants. */
export function formatSettingsPreview(p: LabSettingsPreview, every = false): string[] {
  if (p.instances.length === 0) return [];
  const lines = [
    '',
    `  settings (${every ? 'every catalogued setting' : `the lab's, then ${SHOWN_AREAS.join(', ')}; --settings all for every one`}):`,
  ];
  for (const inst of p.instances) {
    const at = inst.version === null ? inst.label : `${inst.label} ${inst.version}`;
    lines.push(`    ${inst.name} (${at}; ${inst.targets.join(', ')}):`);
    const list = inst.settings.filter((s) => shown(s, every));
    const ordered = [...list.filter((s) => s.source === 'lab'), ...list.filter((s) => s.source !== 'lab')];
    const width = Math.max(0, ...ordered.map((s) => s.name.length)) + 2;
    for (const s of ordered)
      lines.push(`      ${s.source === 'lab' ? '*' : ' '} ${s.name.padEnd(width)}${s.text}  (${s.source})`);
    const hidden = inst.settings.length - list.length;
    if (hidden > 0) lines.push(`        … ${hidden} more at their defaults (--settings all)`);
  }
  for (const v of p.variants) {
    const versions = new Map(p.instances.map((i) => [i.name, i.version]));
    const diff =
      v.differences.length === 0
        ? 'no setting differs'
        : v.differences
            .map(
              (d) =>
                `${d.name} ${valueText(d.a, versions.get(v.a) ?? null)} vs ${valueText(d.b, versions.get(v.b) ?? null)}`,
            )
            .join('; ');
    lines.push(`    ${v.a} vs ${v.b}: ${diff}`);
  }
  return lines;
}
