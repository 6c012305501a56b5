/**
 * `settings` on a lab's poolers and proxies: the team's values for the product's documented settings
 * (lib/products/<product>/settings.ts), checked for the version the lab pins. The schema takes any
 * object of scalar or list values (bounded); `settingsProblems` checks names, types, ranges and
 * versions against the catalogue, each problem with its field path, the value and what is allowed.
 */
import { z } from 'zod';
import { productEntry } from '../products';
import { checkSettings } from '../products/settings';
import type { SettingValue } from '../products/types';
import type { LabProblem } from './types';

/** At most this many settings per pooler or proxy (a catalogue has fewer). */
const SETTINGS_MAX = 100;

const value = z.union([
  z.number(),
  z.boolean(),
  z.string().max(1000, { error: 'at most 1000 characters' }),
  z.array(z.string().max(63)).max(50),
]);

/** The schema of a `settings` object (names and values are checked against the catalogue later). */
export function settingsSchema(product: string) {
  return z
    .record(z.string().max(64), value, {
      error: `an object of ${product} settings, such as { "server_login_retry": 2 }`,
    })
    .refine((o) => Object.keys(o).length <= SETTINGS_MAX, { error: `at most ${SETTINGS_MAX} settings` })
    .optional();
}

/** The problems of one pooler's or proxy's `settings` (product id, the version it pins or null). */
export function settingsProblems(
  product: string,
  version: string | null,
  settings: unknown,
  path: string,
): LabProblem[] {
  const cat = productEntry(product).settings;
  if (settings === undefined) return [];
  if (cat === null)
    return [{ path, value: settings, message: `${productEntry(product).label} takes no settings` }];
  return checkSettings(cat, version, settings, path);
}

/** A validated `settings` object, typed (`{}` when absent). */
export function settingsOf(
  raw: Readonly<Record<string, SettingValue>> | undefined,
): Readonly<Record<string, SettingValue>> {
  return raw === undefined ? {} : { ...raw };
}
