/**
 * Builders of catalogue entries (./types.ts SettingSpec) shared by the products' settings files: a
 * catalogue binds its source (and section) once and writes one line per setting.
 */
import type { SettingArea, SettingSpec, SettingValue } from './types';

type Extra = Partial<SettingSpec>;

/** The builders of one catalogue, every entry citing `source` (and placed in `section`, if any). */
export function settingBuilders(base: { readonly source: string; readonly section?: string }) {
  const make = (
    name: string,
    type: SettingSpec['type'],
    unit: SettingSpec['unit'],
    def: SettingValue | null,
    area: SettingArea,
    summary: string,
    extra: Extra,
  ): SettingSpec => ({
    name,
    type,
    unit,
    defaults: [{ since: null, value: def }],
    since: null,
    area,
    summary,
    ...base,
    ...extra,
  });
  return {
    /** A number of `unit` in [0, max] (a float where the product reads one). */
    number: (
      name: string,
      unit: SettingSpec['unit'],
      max: number,
      def: number | null,
      area: SettingArea,
      summary: string,
      extra: Extra = {},
    ) => make(name, 'number', unit, def, area, summary, { min: 0, max, ...extra }),
    /** An integer of `unit` in [0, max]. */
    integer: (
      name: string,
      unit: SettingSpec['unit'],
      max: number,
      def: number | null,
      area: SettingArea,
      summary: string,
      extra: Extra = {},
    ) => make(name, 'integer', unit, def, area, summary, { min: 0, max, ...extra }),
    flag: (name: string, def: boolean, area: SettingArea, summary: string, extra: Extra = {}) =>
      make(name, 'boolean', null, def, area, summary, extra),
    choice: (
      name: string,
      values: readonly string[],
      def: string,
      area: SettingArea,
      summary: string,
      extra: Extra = {},
    ) => make(name, 'enum', null, def, area, summary, { values, ...extra }),
    text: (name: string, def: string | null, area: SettingArea, summary: string, extra: Extra = {}) =>
      make(name, 'text', null, def, area, summary, extra),
    list: (
      name: string,
      def: readonly string[] | null,
      area: SettingArea,
      summary: string,
      extra: Extra = {},
    ) => make(name, 'list', null, def, area, summary, extra),
  };
}
