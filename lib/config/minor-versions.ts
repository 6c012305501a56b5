/**
 * The next minor version of an engine version among the versions the kit accepts (pure; no AWS
 * call): what `validate` and `plan` can say about a minor upgrade before a run. The versions AWS
 * really offers are confirmed at run time by DescribeDBEngineVersions (its ValidUpgradeTarget with
 * IsMajorVersionUpgrade false), which may list a version newer than any the kit knows.
 */
import type { DatabaseEngine } from '../suite/engines';
import { ACCEPTED_ENGINE_VERSIONS, DEFAULT_ENGINE_VERSION } from './engine-versions';
import { DEFAULT_RDS_POSTGRES_VERSION, RDS_POSTGRES_VERSIONS } from './rds-postgres';

function parse(version: string): [number, number] | null {
  const m = /^(\d+)\.(\d+)$/.exec(version);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/** The versions the kit accepts for `engine`. */
export function knownVersions(engine: DatabaseEngine): readonly string[] {
  return (engine === 'aurora-postgresql' ? ACCEPTED_ENGINE_VERSIONS : RDS_POSTGRES_VERSIONS).map(
    (e) => e.version,
  );
}

/** The version a lab of `engine` gets when its file names none. */
export function defaultVersion(engine: DatabaseEngine): string {
  return engine === 'aurora-postgresql' ? DEFAULT_ENGINE_VERSION : DEFAULT_RDS_POSTGRES_VERSION;
}

/**
 * The lowest version the kit accepts of the same major as `version` and a higher minor, or null
 * (none, or `version` is not `major.minor`).
 */
export function nextKnownMinor(engine: DatabaseEngine, version: string): string | null {
  const v = parse(version);
  if (v === null) return null;
  const above = knownVersions(engine)
    .map((k) => [k, parse(k)] as const)
    .filter((e): e is readonly [string, [number, number]] => e[1] !== null)
    .filter(([, [maj, min]]) => maj === v[0] && min > v[1])
    .sort((a, b) => a[1][1] - b[1][1]);
  return above[0]?.[0] ?? null;
}

/** The engine a lab file's database section stands for. */
function engineOf(section: 'aurora' | 'postgres'): DatabaseEngine {
  return section === 'aurora' ? 'aurora-postgresql' : 'postgres';
}

/**
 * The next minor version the kit knows for the version a lab file's `section` gives (`value`; its
 * default when absent), or null: what validate asks of a lab whose suites upgrade its minor version.
 */
export function newerMinorOf(section: 'aurora' | 'postgres', value: unknown): string | null {
  const engine = engineOf(section);
  const version = value === undefined ? defaultVersion(engine) : value;
  return typeof version === 'string' ? nextKnownMinor(engine, version) : null;
}

/** What validate says after the version it refuses: what the kit knows, and what the run confirms. */
export function newerMinorHint(section: 'aurora' | 'postgres'): string {
  return ` — no newer minor of its major among the versions the kit knows (${knownVersions(engineOf(section)).join(', ')}); choose an older minor of it. The kit cannot ask AWS here: the real target list is confirmed at run time by DescribeDBEngineVersions (ValidUpgradeTarget, IsMajorVersionUpgrade false)`;
}

/** What a need's field is when a lab file leaves it out (validate's "absent (… by default)"). */
export function needDefault(need: {
  readonly section: 'aurora' | 'postgres';
  readonly field: string;
  readonly newerMinor?: true;
}): string | number | boolean {
  if (need.newerMinor === true) return defaultVersion(engineOf(need.section));
  return need.field === 'readers' ? 0 : false;
}
