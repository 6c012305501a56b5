/**
 * The report's Settings section: what each target ran with, as plan.json recorded it
 * (`descriptor.settings.effective`: every catalogued setting's value and whose it is — the lab's,
 * proxylab's, the product's default at the target's version). One table per product, a column per
 * target: the settings the lab set on any of them, the ones that bear on failures and timeouts, and
 * any whose value differs between its targets; then, for targets of one kind from different poolers
 * or proxies (variants), the settings that differ. A plan written before settings were recorded has
 * none: no section.
 *
 * Text from the run directory (names, values) is escaped by the renderers (`html`, `mdText`).
 */
import { productEntry } from '../products';
import { KINDS } from '../products/kinds';
import type { EffectiveSetting } from '../products/settings';
import { formatSetting, settingSpec } from '../products/settings';
import type { SettingArea, SettingsCatalogue } from '../products/types';
import type { TargetDescriptor } from '../suite/targets';
import { html, type SafeHtml } from './html';
import type { LoadedRun } from './load';
import { mdTable, mdText } from './md';

/** Besides the lab's values and the ones that differ: the areas the section always shows. */
const SHOWN_AREAS: readonly SettingArea[] = ['failure', 'timeouts'];

const MARK: Readonly<Record<EffectiveSetting['source'], string>> = { lab: ' *', proxylab: ' †', default: '' };

export interface SettingsTable {
  readonly product: string;
  readonly targets: readonly string[];
  readonly rows: ReadonlyArray<{ readonly name: string; readonly cells: readonly string[] }>;
}

export interface SettingsSection {
  readonly tables: readonly SettingsTable[];
  /** `a vs b: name x (default) vs y (lab); …` for targets of one kind from different instances. */
  readonly differences: readonly string[];
}

function cellText(cat: SettingsCatalogue | null, name: string, e: EffectiveSetting | undefined): string {
  if (e === undefined) return 'not in this version';
  const spec = cat === null ? undefined : settingSpec(cat, name);
  const text = e.value === '' ? '""' : formatSetting(spec, e.value);
  return `${text}${MARK[e.source] ?? ''}`;
}

const same = (a: EffectiveSetting | undefined, b: EffectiveSetting | undefined): boolean =>
  a !== undefined && b !== undefined && JSON.stringify(a.value) === JSON.stringify(b.value);

function table(product: string, targets: readonly TargetDescriptor[]): SettingsTable {
  const entry = productEntry(product);
  const cat = entry.settings;
  const eff = targets.map((t) => t.settings.effective ?? {});
  const names = [...new Set(eff.flatMap((e) => Object.keys(e)))];
  const area = (name: string): SettingArea | null =>
    cat === null ? null : (settingSpec(cat, name)?.area ?? null);
  const wanted = names.filter((name) => {
    const values = eff.map((e) => e[name]);
    const fromLab = values.some((v) => v?.source === 'lab');
    const differs = values.some((v) => !same(v, values[0]));
    const a = area(name);
    return fromLab || differs || (a !== null && SHOWN_AREAS.includes(a));
  });
  return {
    product: entry.label,
    targets: targets.map((t) => t.name),
    rows: wanted.map((name) => ({ name, cells: eff.map((e) => cellText(cat, name, e[name])) })),
  };
}

function differences(targets: readonly TargetDescriptor[]): string[] {
  const out: string[] = [];
  targets.forEach((a, i) =>
    targets.slice(i + 1).forEach((b) => {
      if (a.kind !== b.kind) return;
      const cat = productEntry(KINDS[a.kind].product).settings;
      const ea = a.settings.effective ?? {};
      const eb = b.settings.effective ?? {};
      const diff = [...new Set([...Object.keys(ea), ...Object.keys(eb)])]
        .filter((n) => !same(ea[n], eb[n]))
        .map((n) => {
          const side = (e: EffectiveSetting | undefined): string =>
            e === undefined
              ? 'not in its version'
              : `${cellText(cat, n, { ...e, source: 'default' })} (${e.source})`;
          return `${n} ${side(ea[n])} vs ${side(eb[n])}`;
        });
      if (diff.length > 0) out.push(`${a.name} vs ${b.name}: ${diff.join('; ')}`);
    }),
  );
  return out;
}

/** The section's content from the plan's descriptors; null when no target recorded its settings. */
export function settingsSection(run: Pick<LoadedRun, 'plan'>): SettingsSection | null {
  const recorded = (run.plan?.targets ?? []).filter((t) => t.settings.effective !== undefined);
  if (recorded.length === 0) return null;
  const products = [...new Set(recorded.map((t) => KINDS[t.kind].product))];
  return {
    tables: products.map((p) =>
      table(
        p,
        recorded.filter((t) => KINDS[t.kind].product === p),
      ),
    ),
    differences: differences(recorded),
  };
}

const LEGEND =
  "What each target ran with, from plan.json: * the lab's value (`settings`), † set by proxylab (from a lab field or for its measurement; – when only known at run time), otherwise the product's default for the target's version. Shown: the lab's values, failure and timeout settings, and any that differ between targets; plan.json has every one.";

export function settingsMarkdown(run: Pick<LoadedRun, 'plan'>): string[] {
  const s = settingsSection(run);
  if (s === null) return [];
  const out = ['## Settings', '', mdText(LEGEND), ''];
  for (const t of s.tables)
    out.push(
      `### ${mdText(t.product)}`,
      '',
      mdTable(
        ['setting', ...t.targets],
        t.rows.map((r) => [r.name, ...r.cells]),
      ),
      '',
    );
  if (s.differences.length > 0) {
    out.push('Variants:', '');
    for (const d of s.differences) out.push(`- ${mdText(d)}`);
    out.push('');
  }
  return out;
}

export function settingsHtml(run: Pick<LoadedRun, 'plan'>): SafeHtml {
  const s = settingsSection(run);
  if (s === null) return html``;
  return html`<section id="settings"><h2>Settings</h2><p class="sub">${LEGEND}</p>${s.tables.map(
    (t) =>
      html`<h3>${t.product}</h3><table><thead><tr><th>setting</th>${t.targets.map((n) => html`<th>${n}</th>`)}</tr></thead><tbody>${t.rows.map(
        (r) => html`<tr><td>${r.name}</td>${r.cells.map((c) => html`<td>${c}</td>`)}</tr>`,
      )}</tbody></table>`,
  )}${s.differences.length > 0 ? html`<p>Variants:</p><ul>${s.differences.map((d) => html`<li>${d}</li>`)}</ul>` : ''}</section>`;
}
