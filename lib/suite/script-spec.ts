/**
 * What pgbench runs (pure): its built-in scripts and a scenario's script — one or more parts, a
 * builtin or an SQL file whose text travels with the catalog. Its own module so that the scenario
 * model (./scenario.ts) and a disruption's background load (./disruption-load.ts) share it without
 * an import cycle (./scenario.ts reads ./probes.ts, which reads the disruption kind).
 */

/** pgbench's built-in scripts (`-b NAME`). */
export const BUILTIN_SCRIPTS = ['tpcb-like', 'simple-update', 'select-only'] as const;
export type BuiltinScript = (typeof BUILTIN_SCRIPTS)[number];

/** One script of a scenario: a pgbench builtin or an SQL file whose text travels with the catalog. */
export type ScriptPart =
  | { readonly builtin: BuiltinScript; readonly weight?: number }
  | { readonly file: { readonly name: string; readonly sql: string }; readonly weight?: number };

/** One or more scripts; more than one is a weighted mix (`-b select-only@8 -b tpcb-like@2`). */
export interface ScriptSpec {
  readonly parts: readonly ScriptPart[];
}

/** A label for StepParams.script: `select-only`, `select-1.sql`, `mixed(select-only@8,tpcb-like@2)`. */
export function scriptLabel(script: ScriptSpec): string {
  const names = script.parts.map((p) => ('builtin' in p ? p.builtin : p.file.name));
  if (script.parts.length === 1) return names[0] ?? '';
  return `mixed(${script.parts.map((p, i) => `${names[i]}@${p.weight ?? 1}`).join(',')})`;
}
